// Parsing a spec key's value, for the shared grammar (port_spec.cc) and the drivers' own
// keys: errors name the port and the problem in one line, as every spec error does.
// Also the keys several drivers share (their PortSpec fields are shared until the drivers
// own their keys).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ports/port_spec.h"

namespace hvswitch {

// "port 'NAME': PROBLEM".
absl::Status SpecError(absl::string_view port_name, absl::string_view problem);
// `value` as a number from min to max; the error reads "KEY must be WHAT from MIN to MAX".
absl::Status ParseSpecNumber(const PortSpec& spec, absl::string_view key, absl::string_view value,
                             absl::string_view what, uint32_t min, uint32_t max, uint32_t& out);
// 0 or 1; the error reads "KEY must be 0 or 1".
absl::Status ParseSpecFlag(const PortSpec& spec, absl::string_view key, absl::string_view value,
                           bool& out);

// path=SOCKET (vhost-user, memif), client=0|1 (vhost-user, memif), queues=N (vhost-user
// queue pairs, a device's rx queues).
absl::Status ApplyPath(absl::string_view value, PortSpec& spec);
absl::Status ApplyClient(absl::string_view value, PortSpec& spec);
absl::Status ApplyQueues(absl::string_view value, PortSpec& spec);

}  // namespace hvswitch
