// What a container runtime hands the plugin (CNI 1.0.0, "Section 2: Execution Protocol"):
// the command and the attachment's identity in environment variables, the network
// configuration as JSON on stdin. Parsed and checked here, before anything is touched, so
// that every bad input is answered with the spec's code and no half-made port.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hvswitch::cni {

enum class Command { kAdd, kDel, kCheck, kVersion };

// The versions whose configuration and result formats this plugin reads and writes.
// 1.1.0 is left out: it adds the GC and STATUS commands, which the plugin does not have.
inline constexpr const char* kSupportedVersions[] = {"0.3.0", "0.3.1", "0.4.0", "1.0.0"};
inline constexpr absl::string_view kLatestVersion = "1.0.0";
bool IsSupportedVersion(absl::string_view version);

inline constexpr absl::string_view kDefaultSocketDir = "/run/hvswitch/cni";

// The plugin's own keys of the network configuration, with the spec's "name", "type" and
// "cniVersion".
struct NetConf {
  std::string cni_version;
  std::string name;
  std::string type;
  std::string port_type;                  // "portType": vhost-user | memif
  std::string socket_dir{kDefaultSocketDir};  // "socketDir": per-pod folders go there
  std::string control_socket;             // "controlSocket": hvswitch's; default its own
  uint16_t vlan = 0;                      // "vlan": access VLAN, 0 none
  std::optional<uint16_t> mtu;            // "mtu"
  // "mac", or the runtime's: the only source MAC the port accepts (hvswitch's mac=), and
  // the MAC the result tells the pod to use.
  std::string mac;
  bool mac_from_runtime = false;  // runtimeConfig's: CNI_ARGS MAC= does not replace it
  // "portKeys": further hvswitch port keys (lock, quota, police_pps, ...), as written.
  std::vector<std::pair<std::string, std::string>> port_keys;
  std::optional<nlohmann::json> prev_result;  // "prevResult": the chain's result so far
};

struct Request {
  Command command = Command::kVersion;
  std::string container_id;  // CNI_CONTAINERID
  std::string netns;         // CNI_NETNS
  std::string ifname;        // CNI_IFNAME
  std::map<std::string, std::string> args;  // CNI_ARGS, K=V;K=V
  NetConf conf;
};

// Environment variables by name; std::nullopt when unset. getenv in the plugin, a map in
// tests.
using Environment = std::function<std::optional<std::string>(const char* name)>;

// CNI_COMMAND alone: VERSION needs nothing else.
absl::StatusOr<Command> ParseCommand(const Environment& env);

// The configuration's "cniVersion" if stdin is a JSON object that has one, else "": the
// version an error answer is written in.
std::string VersionOf(absl::string_view stdin_text);

// The whole request of an ADD, DEL or CHECK.
absl::StatusOr<Request> ParseRequest(const Environment& env, absl::string_view stdin_text);

// The parts, for tests.
absl::StatusOr<std::map<std::string, std::string>> ParseCniArgs(absl::string_view text);
absl::StatusOr<NetConf> ParseNetConf(absl::string_view stdin_text);
// A container id as the spec has it: an alphanumeric, then alphanumerics, '_', '.', '-'.
bool IsValidContainerId(absl::string_view id);
// An interface name as libcni checks it: 1-15 bytes, not "." or "..", no '/', ':' or
// whitespace.
bool IsValidInterfaceName(absl::string_view name);
// "02:00:00:00:00:01" with six hex pairs and the multicast bit clear, lowercased.
std::optional<std::string> NormalizeUnicastMac(absl::string_view text);

}  // namespace hvswitch::cni
