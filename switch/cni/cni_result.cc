#include "switch/cni/cni_result.h"

#include "absl/strings/match.h"

namespace hvswitch::cni {

using nlohmann::json;

json VersionJson() {
  json versions = json::array();
  for (const char* version : kSupportedVersions) versions.push_back(version);
  return {{"cniVersion", std::string(kLatestVersion)}, {"supportedVersions", versions}};
}

json InterfaceJson(const Request& request, absl::string_view socket_path) {
  json interface = {{"name", request.ifname}};
  if (!request.conf.mac.empty()) interface["mac"] = request.conf.mac;
  interface["sandbox"] = request.netns;
  interface["socketPath"] = std::string(socket_path);
  return interface;
}

json ConvertResult(json result, absl::string_view version) {
  result["cniVersion"] = std::string(version);
  if (result.contains("ips") && result["ips"].is_array()) {
    const bool versioned = absl::StartsWith(version, "0.");
    for (json& ip : result["ips"]) {
      if (!ip.is_object()) continue;
      if (!versioned) {
        ip.erase("version");
      } else if (!ip.contains("version") && ip.contains("address") && ip["address"].is_string()) {
        ip["version"] = absl::StrContains(ip["address"].get<std::string>(), ':') ? "6" : "4";
      }
    }
  }
  return result;
}

json AddResult(const Request& request, absl::string_view socket_path) {
  json result = request.conf.prev_result.value_or(json::object());
  if (!result.contains("interfaces") || !result["interfaces"].is_array()) {
    result["interfaces"] = json::array();
  }
  // The previous plugins' ips keep their "interface" indexes: ours goes last.
  result["interfaces"].push_back(InterfaceJson(request, socket_path));
  return ConvertResult(std::move(result), request.conf.cni_version);
}

std::optional<json> FindInterface(const json& result, absl::string_view ifname,
                                  absl::string_view sandbox) {
  if (!result.is_object() || !result.contains("interfaces") || !result["interfaces"].is_array()) {
    return std::nullopt;
  }
  for (const json& interface : result["interfaces"]) {
    if (interface.is_object() && interface.value("name", "") == ifname &&
        interface.value("sandbox", "") == sandbox) {
      return interface;
    }
  }
  return std::nullopt;
}

}  // namespace hvswitch::cni
