// What the plugin prints on success: VERSION's supported versions and ADD's result
// (CNI 1.0.0, "Section 5: Result Types"), written in the configuration's cniVersion.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "switch/cni/cni_request.h"

namespace hvswitch::cni {

// {"cniVersion": "1.0.0", "supportedVersions": [...]}.
nlohmann::json VersionJson();

// The pod's interface: its name, the MAC it must use (when one is configured), its
// sandbox (the network namespace it was asked for) and "socketPath", the vhost-user or
// memif socket its userspace stack attaches to (the field CNI 1.1.0 defines for exactly
// that; older runtimes pass it through or drop it).
nlohmann::json InterfaceJson(const Request& request, absl::string_view socket_path);

// ADD's result: the previous plugin's result (chaining) with this interface appended, or
// a result of this interface alone; in `request.conf.cni_version`'s format.
nlohmann::json AddResult(const Request& request, absl::string_view socket_path);

// `result` in `version`'s format: before 1.0.0 every IP carries "version" ("4" or "6"),
// from 1.0.0 none does.
nlohmann::json ConvertResult(nlohmann::json result, absl::string_view version);

// The interface named `ifname` in `sandbox` in a result's interfaces, if any.
std::optional<nlohmann::json> FindInterface(const nlohmann::json& result,
                                            absl::string_view ifname, absl::string_view sandbox);

}  // namespace hvswitch::cni
