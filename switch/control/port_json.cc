#include "switch/control/port_json.h"

#include <string>

namespace hvswitch {
namespace {

using nlohmann::json;

template <size_t N>
json Drops(const std::array<DropInfo, N>& reasons, const std::array<uint64_t, N>& values) {
  json drops = json::object();
  for (size_t r = 0; r < N; ++r) drops[std::string(reasons[r].key)] = values[r];
  return drops;
}

}  // namespace

json PortJson(const PortSnapshot& port, bool detail) {
  json j = {{"name", port.name}, {"type", port.type}, {"up", port.up},
            {"mac", port.mac},   {"mtu", port.mtu},   {"fdb_learned", port.fdb_learned}};
  const uint8_t shown = detail ? kJsonList | kJsonDetail : kJsonList;
  json offload = json::object();
  for (size_t i = 0; i < kPortCounters; ++i) {
    const CounterInfo& info = kPortCounterInfo[i];
    if (info.shown & shown) j[std::string(info.key)] = port.totals.counts[i];
    if (detail && (info.shown & kJsonOffload)) {
      offload[std::string(info.key)] = port.totals.counts[i];
    }
  }
  if (!detail) return j;
  j["spec"] = port.spec;
  if (port.quota != 0) {
    j["buffer_quota"] = port.quota;
    j["buffers_in_use"] = port.buffers_in_use;
  }
  j["rx_drops"] = Drops(kRxDropInfo, port.totals.rx_drops);
  j["tx_drops"] = Drops(kTxDropInfo, port.totals.tx_drops);
  j["offload"] = offload;
  return j;
}

json FdbStatsJson(const BridgeSnapshot& snap) {
  json fdb = json::object();
  for (size_t i = 0; i < kSwitchStats; ++i) {
    const CounterInfo& info = kSwitchStatInfo[i];
    if (info.shown & kJsonStats) fdb[std::string(info.key)] = snap.stats[i];
  }
  return fdb;
}

}  // namespace hvswitch
