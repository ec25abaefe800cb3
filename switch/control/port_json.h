// The control protocol's JSON of what a snapshot counts: a port (port list, port show,
// stats) and the FDB's totals (stats). Keys come from the counter lists in
// switch/datapath/counters.h; nlohmann's json sorts them, so their order is not the lists'.
#pragma once

#include <nlohmann/json.hpp>

#include "switch/control/bridge_snapshot.h"

namespace hvswitch {

// `detail` (port show, stats) adds the spec, every counter, drops by reason, offload
// work, the buffer quota and the histograms (residence: samples, sum_ns, p50/p90/p99_ns
// estimated from the buckets, and the buckets that hold samples).
nlohmann::json PortJson(const PortSnapshot& port, bool detail);
// A bond port's mode, hash and members (`bond show`, `port show`).
nlohmann::json BondJson(const BondState& bond);

// stats' "fdb" object: table sizes and learning totals.
nlohmann::json FdbStatsJson(const BridgeSnapshot& snap);

}  // namespace hvswitch
