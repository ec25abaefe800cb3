#include "switch/cni/cni_commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "switch/cni/cni_error.h"
#include "switch/cni/cni_result.h"
#include "switch/cni/port_naming.h"
#include "switch/cni/switch_client.h"

namespace hvswitch::cni {
namespace {

using nlohmann::json;

// Each missing component of `dir` (mode `mode`); true in `*created` when the last one was
// made here.
absl::Status MakeDirs(const std::string& dir, mode_t mode, bool* created) {
  *created = false;
  std::string sofar;
  for (absl::string_view part : absl::StrSplit(dir, '/', absl::SkipEmpty())) {
    absl::StrAppend(&sofar, "/", part);
    if (mkdir(sofar.c_str(), mode) == 0) {
      *created = sofar == dir;
      continue;
    }
    struct stat st{};
    if (errno != EEXIST || stat(sofar.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Error(kIoFailure, absl::StrCat("cannot make folder ", sofar, ": ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

// A socket left behind (a pod's own, for a client=1 port, which hvswitch never removes);
// anything that is not a socket stays.
void RemoveSocket(const std::string& path) {
  struct stat st{};
  if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path.c_str());
}

// The pod folder a socket path is in, if it is one: directly below `socket_dir`, so that
// DEL never removes anything else, whatever a port's path says.
std::optional<std::string> PodDirOf(const std::string& path, const std::string& socket_dir) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string dir = path.substr(0, slash);
  if (!absl::StartsWith(dir, socket_dir + "/")) return std::nullopt;
  const std::string leaf = dir.substr(socket_dir.size() + 1);
  if (leaf.empty() || leaf == "." || leaf == ".." || absl::StrContains(leaf, '/')) {
    return std::nullopt;
  }
  return dir;
}

// key=value of a port spec as hvswitch writes it back; words without '=' (the rest of a
// mac= or trunk= list) are skipped.
std::optional<std::string> SpecValue(absl::string_view spec, absl::string_view key) {
  for (absl::string_view word : absl::StrSplit(spec, ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(word, absl::MaxSplits('=', 1));
    if (kv.first == key && absl::StrContains(word, '=')) return std::string(kv.second);
  }
  return std::nullopt;
}

bool PodServesSocket(const NetConf& conf) {
  for (const auto& [key, value] : conf.port_keys) {
    if (key == "client") return value == "1";
  }
  return false;
}

absl::Status Differs(absl::string_view what, const json& port) {
  return Error(kPortDiffers, absl::StrCat("hvswitch's port is not the one ADD made: ", what),
               port.value("spec", ""));
}

}  // namespace

absl::StatusOr<json> Add(const Request& request) {
  if (request.conf.prev_result &&
      FindInterface(*request.conf.prev_result, request.ifname, request.netns)) {
    return Error(kInvalidNetworkConfig,
                 absl::StrCat("prevResult already has interface ", request.ifname));
  }
  absl::StatusOr<std::string> path = SocketPath(request);
  if (!path.ok()) return path.status();
  // The parent 0755 as /run/hvswitch is; the pod's own folder 0750: other local users
  // have no business listing, let alone connecting to, a pod's sockets.
  bool created = false;
  if (absl::Status status = MakeDirs(request.conf.socket_dir, 0755, &created); !status.ok()) {
    return status;
  }
  const std::string dir = PodDir(request);
  if (absl::Status status = MakeDirs(dir, 0750, &created); !status.ok()) return status;
  SwitchClient client(request.conf.control_socket);
  const std::string name = PortName(request.container_id, request.ifname);
  absl::StatusOr<std::string> added = client.AddPort(PortSpecText(request.conf, name, *path));
  if (!added.ok()) {
    if (created) rmdir(dir.c_str());
    return added.status();
  }
  return AddResult(request, *path);
}

absl::Status Del(const Request& request) {
  SwitchClient client(request.conf.control_socket);
  const std::string name = PortName(request.container_id, request.ifname);
  // The port's own path first: the folder ADD chose may not be the one this request's
  // CNI_ARGS would choose (a runtime that gave K8S_POD_UID to ADD only).
  std::set<std::string> sockets;
  absl::StatusOr<json> port = client.ShowPort(name);
  if (port.ok()) {
    if (std::optional<std::string> path = SpecValue(port->value("spec", ""), "path")) {
      sockets.insert(*path);
    }
    if (absl::Status status = client.DeletePort(name);
        !status.ok() && CodeOf(status) != kPortMissing) {
      return status;
    }
  } else if (CodeOf(port.status()) != kPortMissing) {
    return port.status();
  }
  if (absl::StatusOr<std::string> path = SocketPath(request); path.ok()) sockets.insert(*path);
  for (const std::string& socket : sockets) {
    std::optional<std::string> dir = PodDirOf(socket, request.conf.socket_dir);
    if (!dir) continue;
    RemoveSocket(socket);
    rmdir(dir->c_str());  // only when empty: the pod's other interfaces keep theirs
  }
  return absl::OkStatus();
}

absl::Status Check(const Request& request) {
  absl::StatusOr<std::string> path = SocketPath(request);
  if (!path.ok()) return path.status();
  if (request.conf.prev_result) {
    std::optional<json> interface =
        FindInterface(*request.conf.prev_result, request.ifname, request.netns);
    if (!interface) {
      return Error(kInvalidNetworkConfig,
                   absl::StrCat("prevResult has no interface ", request.ifname, " in ",
                                request.netns));
    }
    // No socketPath is no contradiction: plugins built with libcni before 1.2 (Debian
    // 12's containernetworking-plugins among them) drop the field from the result they
    // pass on down a chain.
    if (interface->contains("socketPath") && interface->value("socketPath", "") != *path) {
      return Error(kInvalidNetworkConfig,
                   absl::StrCat("prevResult's interface ", request.ifname, " has socketPath '",
                                interface->value("socketPath", ""), "', not ", *path));
    }
  }
  SwitchClient client(request.conf.control_socket);
  const std::string name = PortName(request.container_id, request.ifname);
  absl::StatusOr<json> port = client.ShowPort(name);
  if (!port.ok()) {
    if (CodeOf(port.status()) == kPortMissing) {
      return Error(kPortMissing, absl::StrCat("hvswitch has no port ", name, " for ",
                                              request.ifname, " of ", request.container_id));
    }
    return port.status();
  }
  const std::string spec = port->value("spec", "");
  if (port->value("type", "") != request.conf.port_type) {
    return Differs(absl::StrCat("type ", port->value("type", ""), ", not ",
                                request.conf.port_type), *port);
  }
  if (SpecValue(spec, "path") != *path) return Differs("another socket path", *port);
  if (SpecValue(spec, "vlan").value_or("0") != absl::StrCat(request.conf.vlan)) {
    return Differs("another VLAN", *port);
  }
  if (request.conf.mtu && port->value("mtu", 0) != *request.conf.mtu) {
    return Differs("another MTU", *port);
  }
  struct stat st{};
  if (!PodServesSocket(request.conf) && (lstat(path->c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))) {
    return Error(kPortDiffers, absl::StrCat("the port's socket ", *path, " is missing"));
  }
  return absl::OkStatus();
}

}  // namespace hvswitch::cni
