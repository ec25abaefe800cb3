// Parsing a spec key's value, for the shared grammar (port_spec.cc) and the drivers' own
// keys: errors name the port and the problem in one line, as every spec error does.
// Also the keys several drivers share.
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

// Parse and store a driver's key in spec.driver_keys (DriverKeys::Number / Flag read it);
// a value equal to the key's default (`fallback`, 0) is stored as not given.
absl::Status StoreSpecNumber(PortSpec& spec, absl::string_view key, absl::string_view value,
                             absl::string_view what, uint32_t min, uint32_t max,
                             uint32_t fallback);
absl::Status StoreSpecFlag(PortSpec& spec, absl::string_view key, absl::string_view value);

// path=SOCKET (vhost-user, memif), client=0|1 (vhost-user, memif: connect to a socket the
// guest created — QEMU's server=on, a memif server — instead of creating it), queues=N
// (vhost-user queue pairs, a device's rx queues).
absl::Status ApplyPath(absl::string_view value, PortSpec& spec);
absl::Status ApplyClient(absl::string_view value, PortSpec& spec);
absl::Status ApplyQueues(absl::string_view value, PortSpec& spec);
inline absl::string_view SocketPath(const PortSpec& spec) {
  return spec.driver_keys.Text("path");
}
inline bool IsClient(const PortSpec& spec) { return spec.driver_keys.Flag("client"); }
inline constexpr uint32_t kDefaultQueues = 1;
inline uint16_t QueueCount(const PortSpec& spec) {
  return static_cast<uint16_t>(spec.driver_keys.Number("queues", kDefaultQueues));
}

}  // namespace hvswitch
