// ADD, DEL and CHECK of one attachment: a vhost-user or memif port in hvswitch for the
// pod's interface, its socket in the pod's folder.
#pragma once

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "switch/cni/cni_request.h"

namespace hvswitch::cni {

// Makes the pod's folder and the port; the result to print. A port hvswitch refuses
// leaves no folder behind that ADD made.
absl::StatusOr<nlohmann::json> Add(const Request& request);

// Removes the port, its socket and the pod's folder once it is empty. Whatever is already
// gone is fine (the spec: DEL of what does not exist succeeds); only a daemon that cannot
// be asked fails it (kTryAgainLater), since a port it still has would come back.
absl::Status Del(const Request& request);

// The port is there, of the type, path, VLAN and MTU ADD gave it, its socket too when
// hvswitch owns it, and prevResult lists the interface with that socket.
absl::Status Check(const Request& request);

}  // namespace hvswitch::cni
