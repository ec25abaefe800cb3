#include "switch/cni/cni_request.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "switch/cni/cni_error.h"

namespace hvswitch::cni {
namespace {

using nlohmann::json;

absl::Status BadConfig(absl::string_view msg) { return Error(kInvalidNetworkConfig, msg); }
absl::Status BadEnvironment(absl::string_view msg) { return Error(kInvalidEnvironment, msg); }

// Port keys the plugin writes itself from its own configuration keys, or refuses: the path
// is the plugin's to choose, and a zero-copy memif peer reads all of hvswitch's packet
// memory (README, "Security model"), which a pod must never get by asking.
constexpr absl::string_view kReservedPortKeys[] = {"name", "type", "path", "vlan",
                                                   "mtu",  "mac",  "zero_copy"};

// What a value may hold on hvswitch's request line: one word of the --port grammar, so no
// space, no ',' (the spec's separator) and no '=' (key=value).
bool IsSpecWord(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           absl::StrContains("._:/+-", c);
  });
}

// An absolute path the plugin may put into a port spec: a spec word, no "." or ".."
// component (the per-pod folders must stay inside it), not the root itself.
bool IsCleanAbsolutePath(absl::string_view path) {
  if (path.size() < 2 || path[0] != '/' || !IsSpecWord(path)) return false;
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

absl::StatusOr<std::string> OptionalString(const json& conf, const char* key) {
  if (!conf.contains(key)) return std::string();
  if (!conf[key].is_string()) return BadConfig(absl::StrCat("\"", key, "\" must be a string"));
  return conf[key].get<std::string>();
}

absl::StatusOr<uint32_t> BoundedInteger(const json& value, const char* key, uint32_t min,
                                        uint32_t max) {
  if (!value.is_number_integer() || value.get<int64_t>() < min || value.get<int64_t>() > max) {
    return BadConfig(absl::StrCat("\"", key, "\" must be an integer ", min, "-", max));
  }
  return static_cast<uint32_t>(value.get<int64_t>());
}

absl::Status ParsePortKeys(const json& keys, NetConf& conf) {
  if (!keys.is_object()) return BadConfig("\"portKeys\" must be an object");
  for (const auto& [key, value] : keys.items()) {
    if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) {
          return absl::ascii_islower(static_cast<unsigned char>(c)) ||
                 absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '_';
        })) {
      return BadConfig(absl::StrCat("portKeys: '", key, "' is not an hvswitch port key"));
    }
    if (std::find(std::begin(kReservedPortKeys), std::end(kReservedPortKeys), key) !=
        std::end(kReservedPortKeys)) {
      return BadConfig(absl::StrCat("portKeys: '", key, "' is not allowed here",
                                    key == "zero_copy" ? " (a pod is no trusted memif peer)"
                                                       : " (set by the plugin)"));
    }
    std::string text;
    if (value.is_boolean()) {
      text.assign(1, value.get<bool>() ? '1' : '0');  // not "1"/"0": g++ 12 -Wrestrict
    } else if (value.is_number_integer()) {
      text = absl::StrCat(value.get<int64_t>());
    } else if (value.is_string()) {
      text = value.get<std::string>();
    }
    if (!IsSpecWord(text)) {
      return BadConfig(absl::StrCat("portKeys: '", key,
                                    "' must be a boolean, an integer or one word without "
                                    "spaces, commas or '='"));
    }
    conf.port_keys.emplace_back(key, text);
  }
  return absl::OkStatus();
}

absl::Status ParseVersion(const json& conf, NetConf& out) {
  if (!conf.contains("cniVersion") || !conf["cniVersion"].is_string()) {
    return Error(kIncompatibleVersion, "the network configuration has no cniVersion",
                 absl::StrCat("supported versions: ", absl::StrJoin(kSupportedVersions, ", ")));
  }
  out.cni_version = conf["cniVersion"].get<std::string>();
  if (!IsSupportedVersion(out.cni_version)) {
    return Error(kIncompatibleVersion,
                 absl::StrCat("incompatible CNI version ", out.cni_version),
                 absl::StrCat("supported versions: ", absl::StrJoin(kSupportedVersions, ", ")));
  }
  return absl::OkStatus();
}

absl::Status ParseSwitchKeys(const json& conf, NetConf& out) {
  absl::StatusOr<std::string> port_type = OptionalString(conf, "portType");
  if (!port_type.ok()) return port_type.status();
  if (*port_type != "vhost-user" && *port_type != "memif") {
    return BadConfig("\"portType\" must be \"vhost-user\" or \"memif\"");
  }
  out.port_type = *port_type;
  if (conf.contains("socketDir")) {
    absl::StatusOr<std::string> dir = OptionalString(conf, "socketDir");
    if (!dir.ok()) return dir.status();
    while (dir->size() > 1 && dir->back() == '/') dir->pop_back();
    if (!IsCleanAbsolutePath(*dir)) {
      return BadConfig("\"socketDir\" must be an absolute path of [A-Za-z0-9._:/+-], "
                       "without '.' or '..'");
    }
    out.socket_dir = *dir;
  }
  absl::StatusOr<std::string> control = OptionalString(conf, "controlSocket");
  if (!control.ok()) return control.status();
  if (!control->empty() && (*control)[0] != '/') {
    return BadConfig("\"controlSocket\" must be an absolute path");
  }
  out.control_socket = *control;
  if (conf.contains("vlan")) {
    absl::StatusOr<uint32_t> vlan = BoundedInteger(conf["vlan"], "vlan", 0, 4094);
    if (!vlan.ok()) return vlan.status();
    out.vlan = static_cast<uint16_t>(*vlan);
  }
  if (conf.contains("mtu")) {
    // hvswitch's own range (ports/port_spec.h): IPv4's minimum to jumbo frames.
    absl::StatusOr<uint32_t> mtu = BoundedInteger(conf["mtu"], "mtu", 68, 9000);
    if (!mtu.ok()) return mtu.status();
    out.mtu = static_cast<uint16_t>(*mtu);
  }
  absl::StatusOr<std::string> mac = OptionalString(conf, "mac");
  if (!mac.ok()) return mac.status();
  if (!mac->empty()) {
    std::optional<std::string> normal = NormalizeUnicastMac(*mac);
    if (!normal) return BadConfig(absl::StrCat("\"mac\": '", *mac, "' is not a unicast MAC"));
    out.mac = *normal;
  }
  // The runtime's MAC (capability "mac", e.g. Multus from the pod's network annotation)
  // wins over the configuration's, as it does for the reference plugins.
  if (conf.contains("runtimeConfig") && conf["runtimeConfig"].is_object() &&
      conf["runtimeConfig"].contains("mac")) {
    const json& runtime_mac = conf["runtimeConfig"]["mac"];
    std::optional<std::string> normal =
        runtime_mac.is_string() ? NormalizeUnicastMac(runtime_mac.get<std::string>())
                                : std::nullopt;
    if (!normal) return BadConfig("runtimeConfig \"mac\" is not a unicast MAC");
    out.mac = *normal;
    out.mac_from_runtime = true;
  }
  if (conf.contains("portKeys")) {
    if (absl::Status status = ParsePortKeys(conf["portKeys"], out); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace

bool IsSupportedVersion(absl::string_view version) {
  return std::find(std::begin(kSupportedVersions), std::end(kSupportedVersions), version) !=
         std::end(kSupportedVersions);
}

absl::StatusOr<Command> ParseCommand(const Environment& env) {
  const std::optional<std::string> command = env("CNI_COMMAND");
  if (!command || command->empty()) return BadEnvironment("CNI_COMMAND is not set");
  if (*command == "ADD") return Command::kAdd;
  if (*command == "DEL") return Command::kDel;
  if (*command == "CHECK") return Command::kCheck;
  if (*command == "VERSION") return Command::kVersion;
  return BadEnvironment(absl::StrCat("unknown CNI_COMMAND '", *command, "'"));
}

std::string VersionOf(absl::string_view stdin_text) {
  const json conf = json::parse(stdin_text, nullptr, false);
  if (conf.is_object() && conf.contains("cniVersion") && conf["cniVersion"].is_string()) {
    return conf["cniVersion"].get<std::string>();
  }
  return "";
}

bool IsValidContainerId(absl::string_view id) {
  if (id.empty() || !absl::ascii_isalnum(static_cast<unsigned char>(id[0]))) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
           c == '-';
  });
}

bool IsValidInterfaceName(absl::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == ':' || absl::ascii_isspace(static_cast<unsigned char>(c)) ||
           absl::ascii_iscntrl(static_cast<unsigned char>(c));
  });
}

std::optional<std::string> NormalizeUnicastMac(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() != 6) return std::nullopt;
  for (absl::string_view part : parts) {
    if (part.size() != 2 || !absl::ascii_isxdigit(static_cast<unsigned char>(part[0])) ||
        !absl::ascii_isxdigit(static_cast<unsigned char>(part[1]))) {
      return std::nullopt;
    }
  }
  std::string mac = absl::AsciiStrToLower(text);
  const int first = std::stoi(mac.substr(0, 2), nullptr, 16);
  if (first & 1) return std::nullopt;  // group bit: multicast or broadcast
  if (mac == "00:00:00:00:00:00") return std::nullopt;
  return mac;
}

absl::StatusOr<std::map<std::string, std::string>> ParseCniArgs(absl::string_view text) {
  std::map<std::string, std::string> args;
  for (absl::string_view pair : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first.empty() || !absl::StrContains(pair, '=')) {
      return BadEnvironment(absl::StrCat("CNI_ARGS: '", pair, "' is not KEY=VALUE"));
    }
    args[std::string(kv.first)] = std::string(kv.second);
  }
  return args;
}

absl::StatusOr<NetConf> ParseNetConf(absl::string_view stdin_text) {
  const json conf = json::parse(stdin_text, nullptr, false);
  if (conf.is_discarded() || !conf.is_object()) {
    return Error(kDecodingFailure, "the network configuration on stdin is not a JSON object");
  }
  NetConf out;
  if (absl::Status status = ParseVersion(conf, out); !status.ok()) return status;
  absl::StatusOr<std::string> name = OptionalString(conf, "name");
  if (!name.ok()) return name.status();
  if (name->empty()) return BadConfig("the network configuration has no \"name\"");
  out.name = *name;
  absl::StatusOr<std::string> type = OptionalString(conf, "type");
  if (!type.ok()) return type.status();
  out.type = *type;
  // Addresses would be handed to the pod for its own stack: not done (yet), and silently
  // dropping them would leave the pod without the addresses it was configured with.
  if (conf.contains("ipam") && !conf["ipam"].is_null() &&
      !(conf["ipam"].is_object() && conf["ipam"].empty())) {
    return Error(kUnsupportedField, "\"ipam\" is not supported by hvswitch-cni",
                 "the pod's userspace stack configures its own addresses");
  }
  if (absl::Status status = ParseSwitchKeys(conf, out); !status.ok()) return status;
  if (conf.contains("prevResult") && !conf["prevResult"].is_null()) {
    if (!conf["prevResult"].is_object()) return BadConfig("\"prevResult\" must be an object");
    out.prev_result = conf["prevResult"];
  }
  return out;
}

absl::StatusOr<Request> ParseRequest(const Environment& env, absl::string_view stdin_text) {
  Request request;
  absl::StatusOr<Command> command = ParseCommand(env);
  if (!command.ok()) return command.status();
  request.command = *command;
  absl::StatusOr<NetConf> conf = ParseNetConf(stdin_text);
  if (!conf.ok()) return conf.status();
  request.conf = *std::move(conf);
  if (request.command == Command::kCheck && absl::StartsWith(request.conf.cni_version, "0.3.")) {
    return Error(kIncompatibleVersion,
                 absl::StrCat("CHECK is not part of CNI ", request.conf.cni_version),
                 "CHECK needs cniVersion 0.4.0 or later");
  }
  request.container_id = env("CNI_CONTAINERID").value_or("");
  if (!IsValidContainerId(request.container_id)) {
    return BadEnvironment(request.container_id.empty()
                              ? "CNI_CONTAINERID is not set"
                              : "CNI_CONTAINERID must be [A-Za-z0-9][A-Za-z0-9_.-]*");
  }
  request.ifname = env("CNI_IFNAME").value_or("");
  if (!IsValidInterfaceName(request.ifname)) {
    return BadEnvironment(request.ifname.empty()
                              ? "CNI_IFNAME is not set"
                              : absl::StrCat("CNI_IFNAME '", request.ifname,
                                             "' is not a valid interface name"));
  }
  // DEL may come after the namespace is gone: the spec lets the runtime leave it out.
  request.netns = env("CNI_NETNS").value_or("");
  if (request.netns.empty() && request.command != Command::kDel) {
    return BadEnvironment("CNI_NETNS is not set");
  }
  absl::StatusOr<std::map<std::string, std::string>> args =
      ParseCniArgs(env("CNI_ARGS").value_or(""));
  if (!args.ok()) return args.status();
  request.args = *std::move(args);
  // CNI_ARGS MAC= (the reference plugins' convention) under the runtime's capability MAC.
  if (auto mac = request.args.find("MAC"); mac != request.args.end()) {
    std::optional<std::string> normal = NormalizeUnicastMac(mac->second);
    if (!normal) {
      return BadEnvironment(absl::StrCat("CNI_ARGS MAC '", mac->second, "' is not a unicast MAC"));
    }
    if (!request.conf.mac_from_runtime) request.conf.mac = *normal;
  }
  return request;
}

}  // namespace hvswitch::cni
