// The VXLAN tunnels' Prometheus families: per tunnel and remote VTEP, per uplink's
// decapsulation. Counter names and help from the lists in ports/vxlan/.
#include <array>
#include <string>

#include "switch/control/metrics.h"

namespace hvswitch {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct Named {
  const char* name;
  const char* help;
};
constexpr Named kVtepCounters[] = {
#define X(name, help) {#name, help},
    VXLAN_VTEP_COUNTERS(X)
#undef X
};
constexpr Named kTunnelCounters[] = {
#define X(name, help) {#name, help},
    VXLAN_TUNNEL_COUNTERS(X)
#undef X
};
constexpr Named kDecapCounters[] = {
#define X(name, help) {#name, help},
    VXLAN_DECAP_COUNTERS(X)
#undef X
};
constexpr size_t kVtepDropsFrom = static_cast<size_t>(VtepCounter::k_unresolved);
constexpr size_t kDecapDropsFrom = static_cast<size_t>(DecapCounter::k_short_frame);

std::vector<ClientMetric::Label> TunnelLabels(const VxlanSnapshot& t) {
  return {{"port", t.port}, {"vni", std::to_string(t.vni)}};
}

std::vector<ClientMetric::Label> With(std::vector<ClientMetric::Label> labels,
                                      std::string name, std::string value) {
  labels.push_back({std::move(name), std::move(value)});
  return labels;
}

void AddVtep(const VxlanSnapshot& t, const std::string& vtep, const VtepTotals& c,
             MetricFamily& packets, MetricFamily& bytes, MetricFamily& drops) {
  const auto labels = With(TunnelLabels(t), "vtep", vtep);
  using enum VtepCounter;
  AddSample(packets, With(labels, "direction", "tx"), c[size_t(k_tx_packets)]);
  AddSample(packets, With(labels, "direction", "rx"), c[size_t(k_rx_packets)]);
  AddSample(bytes, With(labels, "direction", "tx"), c[size_t(k_tx_bytes)]);
  AddSample(bytes, With(labels, "direction", "rx"), c[size_t(k_rx_bytes)]);
  for (size_t i = kVtepDropsFrom; i < kNbVtepCounters; ++i) {
    AddSample(drops, With(labels, "reason", kVtepCounters[i].name), c[i]);
  }
}

}  // namespace

void AddVxlanMetrics(const VxlanTunnelsSnapshot& snap, std::vector<MetricFamily>& out) {
  if (snap.tunnels.empty()) return;
  MetricFamily packets = Family("hvswitch_vxlan_vtep_packets_total",
                                "Frames a VXLAN tunnel sent to (tx, encapsulated) or received "
                                "from (rx, decapsulated) a remote VTEP; vtep=\"unknown\": from "
                                "an address that is none of its VTEPs",
                                MetricType::Counter);
  MetricFamily bytes = Family("hvswitch_vxlan_vtep_bytes_total",
                              "Bytes of those frames (tx: with the outer headers, rx: inner)",
                              MetricType::Counter);
  MetricFamily vtep_drops = Family("hvswitch_vxlan_vtep_drops_total",
                                   "Frames for a remote VTEP the tunnel dropped, by reason",
                                   MetricType::Counter);
  MetricFamily resolved = Family("hvswitch_vxlan_vtep_resolved",
                                 "1 while the remote VTEP's next hop has a known MAC",
                                 MetricType::Gauge);
  MetricFamily drops = Family("hvswitch_vxlan_drops_total",
                              "Frames a VXLAN tunnel dropped before choosing a VTEP, by reason",
                              MetricType::Counter);
  MetricFamily flooded = Family("hvswitch_vxlan_flooded_total",
                                std::string(kTunnelCounters[0].help), MetricType::Counter);
  MetricFamily flood_vteps = Family("hvswitch_vxlan_flood_vteps",
                                    "Remote VTEPs in the tunnel's flood list (head-end "
                                    "replication)", MetricType::Gauge);
  MetricFamily remote_macs = Family("hvswitch_vxlan_remote_macs",
                                    "MACs the tunnel knows behind a remote VTEP",
                                    MetricType::Gauge);
  for (const VxlanSnapshot& t : snap.tunnels) {
    size_t nb_flood = 0;
    for (const VtepSnapshot& v : t.vteps) {
      AddVtep(t, v.ip, v.totals, packets, bytes, vtep_drops);
      AddSample(resolved, With(TunnelLabels(t), "vtep", v.ip), v.resolved ? 1 : 0);
      nb_flood += v.flood;
    }
    AddVtep(t, "unknown", t.unknown_source, packets, bytes, vtep_drops);
    AddSample(flooded, TunnelLabels(t), t.totals[size_t(TunnelCounter::k_flooded)]);
    for (size_t i = 1; i < kNbTunnelCounters; ++i) {
      AddSample(drops, With(TunnelLabels(t), "reason", kTunnelCounters[i].name), t.totals[i]);
    }
    AddSample(flood_vteps, TunnelLabels(t), static_cast<double>(nb_flood));
    AddSample(remote_macs, TunnelLabels(t), static_cast<double>(t.remote_macs));
  }
  MetricFamily decap = Family("hvswitch_vxlan_decap_packets_total",
                              kDecapCounters[0].help, MetricType::Counter);
  MetricFamily decap_bytes = Family("hvswitch_vxlan_decap_bytes_total",
                                    kDecapCounters[1].help, MetricType::Counter);
  MetricFamily decap_drops = Family("hvswitch_vxlan_decap_drops_total",
                                    "VXLAN frames to a local VTEP that an uplink dropped "
                                    "instead of decapsulating, by reason", MetricType::Counter);
  for (const UplinkDecapSnapshot& u : snap.uplinks) {
    AddSample(decap, {{"uplink", u.uplink}}, u.totals[0]);
    AddSample(decap_bytes, {{"uplink", u.uplink}}, u.totals[1]);
    for (size_t i = kDecapDropsFrom; i < kNbDecapCounters; ++i) {
      AddSample(decap_drops, {{"uplink", u.uplink}, {"reason", kDecapCounters[i].name}},
                u.totals[i]);
    }
  }
  for (MetricFamily* f : {&packets, &bytes, &vtep_drops, &resolved, &drops, &flooded,
                          &flood_vteps, &remote_macs, &decap, &decap_bytes, &decap_drops}) {
    out.push_back(std::move(*f));
  }
}

}  // namespace hvswitch
