// TelemetryCommands: hvswitch's commands on DPDK's telemetry socket, for
// dpdk-telemetry.py and anything else that speaks it (/var/run/dpdk/PREFIX/
// dpdk_telemetry.v2):
//   /hvswitch/ports         every port: counters, drops, link, MACs learned
//   /hvswitch/port,NAME     one port, drops by reason and offload counters
//   /hvswitch/pmd           every worker core: cycles, frames, burst sizes
//   /hvswitch/fdb           forwarding table sizes and activity
// The telemetry thread answers them from a BridgeSnapshot, like the metrics endpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "switch/control/bridge_snapshot.h"

namespace hvswitch::telemetry_commands {

// Registers the commands (once per process) and makes them answer from `snapshot`; an
// empty function (at shutdown) makes them answer with an error.
void Serve(std::function<BridgeSnapshot()> snapshot);

// A port's numbers in /hvswitch/ports (counters, drop sums, link) or, with `detail`,
// /hvswitch/port (drops by reason, offload work, buffer quota too).
std::vector<std::pair<std::string, uint64_t>> PortFields(const PortSnapshot& port, bool detail);

}  // namespace hvswitch::telemetry_commands
