#include "switch/cni/port_naming.h"

#include <sys/un.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "switch/cni/cni_error.h"

namespace hvswitch::cni {
namespace {

// FNV-1a: fixed by its definition, so the name is the same in every build and on every
// host (absl::Hash is seeded per process and would not find ADD's port at DEL).
uint32_t Fnv1a32(absl::string_view bytes) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

bool IsPodUid(absl::string_view uid) {
  return !uid.empty() && uid.size() <= 64 && std::all_of(uid.begin(), uid.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-';
  });
}

}  // namespace

std::string PortName(absl::string_view container_id, absl::string_view ifname) {
  // The NUL cannot occur in either part: ("ab", "c") and ("a", "bc") hash apart.
  const std::string key = absl::StrCat(container_id, std::string(1, '\0'), ifname);
  return absl::StrFormat("cni-%s-%08x", container_id.substr(0, 12), Fnv1a32(key));
}

std::string PodDir(const Request& request) {
  auto uid = request.args.find("K8S_POD_UID");
  const std::string& leaf =
      uid != request.args.end() && IsPodUid(uid->second) ? uid->second : request.container_id;
  return absl::StrCat(request.conf.socket_dir, "/", leaf);
}

absl::StatusOr<std::string> SocketPath(const Request& request) {
  std::string path = absl::StrCat(PodDir(request), "/", request.ifname, ".sock");
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Error(kInvalidNetworkConfig,
                 absl::StrCat("socket path ", path, " is too long for a UNIX socket"),
                 absl::StrCat("at most ", sizeof(sockaddr_un{}.sun_path) - 1,
                              " bytes: shorten \"socketDir\""));
  }
  return path;
}

std::string PortSpecText(const NetConf& conf, absl::string_view name, absl::string_view path) {
  std::string spec = absl::StrCat(name, ",type=", conf.port_type, ",path=", path);
  if (conf.vlan != 0) absl::StrAppend(&spec, ",vlan=", conf.vlan);
  if (conf.mtu) absl::StrAppend(&spec, ",mtu=", *conf.mtu);
  if (!conf.mac.empty()) absl::StrAppend(&spec, ",mac=", conf.mac);
  for (const auto& [key, value] : conf.port_keys) absl::StrAppend(&spec, ",", key, "=", value);
  return spec;
}

}  // namespace hvswitch::cni
