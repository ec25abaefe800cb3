#include "switch/control/port_json.h"

#include <cmath>
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

// A histogram of nanosecond samples: count, sum, the p50/p90/p99 estimates and the
// buckets that hold samples, by upper bound ("le_ns"; the last: "gt_ns", beyond the
// highest).
json HistogramJson(const HistogramTotals& h) {
  json buckets = json::array();
  for (size_t b = 0; b < kHistogramBuckets; ++b) {
    if (h.buckets[b] == 0) continue;
    buckets.push_back(b < kHistogramBounds
                          ? json{{"le_ns", kHistogramBoundsNs[b]}, {"count", h.buckets[b]}}
                          : json{{"gt_ns", kHistogramBoundsNs.back()},
                                 {"count", h.buckets[b]}});
  }
  auto quantile = [&](double q) { return std::llround(HistogramQuantileNs(h, q)); };
  return {{"samples", HistogramCount(h)}, {"sum_ns", h.sum_ns},      {"p50_ns", quantile(0.5)},
          {"p90_ns", quantile(0.9)},       {"p99_ns", quantile(0.99)}, {"buckets", buckets}};
}

}  // namespace

json BondJson(const BondState& bond) {
  json members = json::array();
  for (const BondMemberState& m : bond.members) {
    json row = {{"device", m.device}, {"up", m.up}, {"active", m.active}};
    if (m.lacp) {
      row["lacp"] = {{"selected", m.lacp->selected},
                     {"actor_state", m.lacp->actor_state},
                     {"partner_state", m.lacp->partner_state},
                     {"partner_system", m.lacp->partner_system}};
    }
    members.push_back(row);
  }
  json j = {{"mode", bond.mode}, {"members", members}};
  if (!bond.hash.empty()) j["hash"] = bond.hash;
  return j;
}

json PortJson(const PortSnapshot& port, bool detail) {
  json j = {{"name", port.name}, {"type", port.type}, {"up", port.up}, {"shut", port.shut},
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
  if (!port.ip_bindings.empty()) j["ip_bindings"] = port.ip_bindings;
  if (!port.ip_learned.empty()) {
    json learned = json::array();
    for (const PortSnapshot::Learned& l : port.ip_learned) {
      learned.push_back({{"address", l.address}, {"source", l.source}, {"expires", l.expires_in}});
    }
    j["ip_learned"] = learned;
  }
  if (!port.analyser_of.empty()) j["analyser_of"] = port.analyser_of;
  if (port.bond) j["bond"] = BondJson(*port.bond);
  if (port.quota != 0) {
    j["buffer_quota"] = port.quota;
    j["buffers_in_use"] = port.buffers_in_use;
  }
  j["rx_drops"] = Drops(kRxDropInfo, port.totals.rx_drops);
  j["tx_drops"] = Drops(kTxDropInfo, port.totals.tx_drops);
  j["offload"] = offload;
  for (size_t h = 0; h < kPortHistograms; ++h) {
    const HistogramInfo& info = kPortHistogramInfo[h];
    if (info.shown & kJsonDetail) {
      j[std::string(info.key)] = HistogramJson(port.totals.histograms[h]);
    }
  }
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
