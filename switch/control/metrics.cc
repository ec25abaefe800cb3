#include "switch/control/metrics.h"

#include <limits>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

void AddBondFamilies(const BridgeSnapshot& snap,
                     std::vector<prometheus::MetricFamily>& out);

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricType TypeOf(MetricKind kind) {
  return kind == MetricKind::kGauge ? MetricType::Gauge : MetricType::Counter;
}

// `first` (port=P or core=C) followed by the cell's own labels.
std::vector<ClientMetric::Label> LabelsOf(ClientMetric::Label first, const MetricLabels& extra) {
  std::vector<ClientMetric::Label> labels = {std::move(first)};
  for (const MetricLabel& label : extra) {
    if (!label.name.empty()) labels.push_back({std::string(label.name), std::string(label.value)});
  }
  return labels;
}

// One family per run of cells with the same family name in `table`; a sample per cell
// and owner (port or core), the value taken by `value(owner, cell index)`.
template <size_t N, typename Owners, typename Label, typename Value>
void AddFamilies(const std::array<CounterInfo, N>& table, const Owners& owners, Label label,
                 Value value, uint64_t tsc_hz, std::vector<MetricFamily>& out) {
  for (size_t first = 0; first < N;) {
    size_t end = first + 1;
    while (end < N && table[end].family == table[first].family) ++end;
    MetricFamily family = Family(table[first].family, table[first].help,
                                 TypeOf(table[first].kind));
    for (const auto& owner : owners) {
      for (size_t i = first; i < end; ++i) {
        double sample = static_cast<double>(value(owner, i));
        if (table[i].tsc_seconds) sample = tsc_hz == 0 ? 0 : sample / static_cast<double>(tsc_hz);
        AddSample(family, LabelsOf(label(owner), table[i].labels), sample);
      }
    }
    out.push_back(std::move(family));
    first = end;
  }
}

// A port's samples of hvswitch_port_{receive,transmit}_drop_total: one per reason.
template <size_t N>
void AddDrops(MetricFamily& family, const PortSnapshot& port,
              const std::array<DropInfo, N>& reasons, const std::array<uint64_t, N>& values) {
  for (size_t r = 0; r < N; ++r) {
    AddSample(family, {{"port", port.name}, {"reason", std::string(reasons[r].key)}},
              static_cast<double>(values[r]));
  }
}

// One family with one sample per port (with `quota_only`: per port with a buffer quota),
// the value taken from each port by `get`.
template <typename Get>
MetricFamily PerPort(const BridgeSnapshot& snap, std::string name, std::string help,
                     MetricType type, Get get, bool quota_only = false) {
  MetricFamily family = Family(name, help, type);
  for (const PortSnapshot& port : snap.ports) {
    if (quota_only && port.quota == 0) continue;
    AddSample(family, {{"port", port.name}}, static_cast<double>(get(port)));
  }
  return family;
}

ClientMetric::Label PortLabel(const PortSnapshot& port) { return {"port", port.name}; }
ClientMetric::Label CoreLabel(const CoreSnapshot& core) {
  return {"core", std::to_string(core.cpu)};
}

void AddPortCounters(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  AddFamilies(kPortCounterInfo, snap.ports, PortLabel,
              [](const PortSnapshot& p, size_t i) { return p.totals.counts[i]; }, snap.tsc_hz,
              out);
  MetricFamily rx_drop = Family(kRxDropFamily, kRxDropHelp, MetricType::Counter);
  MetricFamily tx_drop = Family(kTxDropFamily, kTxDropHelp, MetricType::Counter);
  for (const PortSnapshot& port : snap.ports) {
    // The one special case: a port with a quota draws on its own pool, so its device's
    // no_mbuf drops are the quota running out. They are exported as reason="quota" (and
    // no_mbuf 0); every port has both samples.
    std::array<uint64_t, kRxDrops> rx = port.totals.rx_drops;
    const uint64_t quota =
        port.quota == 0 ? 0 : std::exchange(rx[static_cast<size_t>(RxDrop::kNoMbuf)], 0);
    AddDrops(rx_drop, port, kRxDropInfo, rx);
    AddSample(rx_drop, {{"port", port.name}, {"reason", "quota"}}, static_cast<double>(quota));
    AddDrops(tx_drop, port, kTxDropInfo, port.totals.tx_drops);
  }
  out.push_back(std::move(rx_drop));
  out.push_back(std::move(tx_drop));
}

// A Prometheus histogram of nanosecond samples, exported in seconds.
ClientMetric HistogramMetric(std::vector<ClientMetric::Label> labels, const HistogramTotals& h) {
  ClientMetric metric;
  metric.label = std::move(labels);
  uint64_t cumulative = 0;
  for (size_t b = 0; b < kHistogramBuckets; ++b) {
    cumulative += h.buckets[b];
    const double le = b < kHistogramBounds ? static_cast<double>(kHistogramBoundsNs[b]) / 1e9
                                           : std::numeric_limits<double>::infinity();
    metric.histogram.bucket.push_back({cumulative, le});
  }
  metric.histogram.sample_count = cumulative;
  metric.histogram.sample_sum = static_cast<double>(h.sum_ns) / 1e9;
  return metric;
}

// One histogram family per row of HVS_PORT_HISTOGRAMS, a metric per port.
void AddPortHistograms(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  for (size_t h = 0; h < kPortHistograms; ++h) {
    const HistogramInfo& info = kPortHistogramInfo[h];
    MetricFamily family = Family(info.family, info.help, MetricType::Histogram);
    for (const PortSnapshot& port : snap.ports) {
      family.metric.push_back(HistogramMetric({PortLabel(port)}, port.totals.histograms[h]));
    }
    out.push_back(std::move(family));
  }
}

// What the bridge knows of a port besides its counters.
void AddPortGauges(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  out.push_back(PerPort(snap, "hvswitch_port_fdb_entries",
                        "MACs currently learned on the port (static entries excluded); "
                        "compare with its learn_limit.",
                        MetricType::Gauge, [](auto& p) { return p.fdb_learned; }));
  out.push_back(PerPort(snap, "hvswitch_port_up",
                        "1 while the port's link is up (guest connected); 0 means frames "
                        "for it are dropped as link_down.",
                        MetricType::Gauge, [](auto& p) { return p.up ? 1 : 0; }));
  out.push_back(PerPort(snap, "hvswitch_port_shut",
                        "1 while the port is shut because it sent a BPDU with bpdu_guard=1: "
                        "its frames are dropped (reason shut) and none are sent to it until "
                        "hvswitchctl port enable.",
                        MetricType::Gauge, [](auto& p) { return p.shut ? 1 : 0; }));
  MetricFamily info = Family("hvswitch_port_info",
                             "What the port is (always 1): type, MAC and socket or devargs.",
                             MetricType::Gauge);
  for (const PortSnapshot& port : snap.ports) {
    AddSample(info,
              {{"port", port.name}, {"type", port.type}, {"mac", port.mac}, {"path", port.path}},
              1);
  }
  out.push_back(std::move(info));
  out.push_back(PerPort(snap, "hvswitch_port_mtu_bytes", "The port's MTU in bytes.",
                        MetricType::Gauge, [](auto& p) { return p.mtu; }));
  MetricFamily queue_stats = Family(
      "hvswitch_port_queue_stat_total",
      "The port device's own per-queue statistics (DPDK xstats); direction=rx: from the "
      "peer, tx: to it. vhost-user: good_packets, good_bytes, multicast/broadcast_packets, "
      "size bins, and guest_notifications: interrupts hvswitch raised in the guest (a "
      "polling guest suppresses them; per frame they are the signalling cost).",
      MetricType::Counter);
  for (const PortSnapshot& port : snap.ports) {
    for (const QueueStat& q : port.queue_stats) {
      AddSample(queue_stats,
                {{"port", port.name}, {"direction", q.rx ? "rx" : "tx"},
                 {"queue", std::to_string(q.queue)}, {"stat", q.name}},
                static_cast<double>(q.value));
    }
  }
  out.push_back(std::move(queue_stats));
  MetricFamily bindings = Family(
      "hvswitch_port_ip_binding",
      "An address or prefix the port may send IP from, ARP for and advertise as a neighbour "
      "(always 1); source=static: ip=; dhcp, arp, nd: learned (ip_learn=1) from a DHCP "
      "server's lease, or claimed first by the port's ARP or neighbour discovery. Its "
      "other IP, ARP and neighbour advertisements are dropped as spoofed_ip.",
      MetricType::Gauge);
  for (const PortSnapshot& port : snap.ports) {
    for (const std::string& address : port.ip_bindings) {
      AddSample(bindings, {{"port", port.name}, {"address", address}, {"source", "static"}}, 1);
    }
    for (const PortSnapshot::Learned& l : port.ip_learned) {
      AddSample(bindings, {{"port", port.name}, {"address", l.address}, {"source", l.source}},
                1);
    }
  }
  if (!bindings.metric.empty()) out.push_back(std::move(bindings));
  AddBondFamilies(snap, out);
  out.push_back(PerPort(snap, "hvswitch_port_buffer_quota",
                        "Packet buffers a port with quota= may hold at once.", MetricType::Gauge,
                        [](auto& p) { return p.quota; }, true));
  out.push_back(PerPort(snap, "hvswitch_port_buffers_in_use",
                        "Packet buffers of a port with quota= out of its pool now (its frames "
                        "in flight, queued, or copied for floods); at the quota its further "
                        "frames wait or drop.",
                        MetricType::Gauge, [](auto& p) { return p.buffers_in_use; }, true));
}

// What each core does between rounds that find nothing (--idle) now.
void AddCoreIdle(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  MetricFamily mode = Family(
      "hvswitch_core_idle_mode",
      "What a worker core does between rounds that find nothing: 1 for its mode now (poll: "
      "spins; sleep: sleeps up to hvswitch_core_sleep_max_seconds; interrupt: sleeps, then "
      "blocks until a receive interrupt), 0 for the others. --idle=interrupt shows sleep "
      "on a core polling a device without receive interrupts.",
      MetricType::Gauge);
  for (const CoreSnapshot& core : snap.cores) {
    for (IdleMode m : kIdleModes) {
      AddSample(mode, {CoreLabel(core), {"mode", std::string(IdleModeName(m))}},
                core.mode == m ? 1.0 : 0.0);
    }
  }
  out.push_back(std::move(mode));
  MetricFamily max_sleep = Family(
      "hvswitch_core_sleep_max_seconds",
      "A worker core's longest sleep: --idle_max_us, or less where a device receive ring it "
      "polls would fill sooner at line rate; 0 while it polls.",
      MetricType::Gauge);
  for (const CoreSnapshot& core : snap.cores) {
    AddSample(max_sleep, {CoreLabel(core)}, core.max_sleep_ns / 1e9);
  }
  out.push_back(std::move(max_sleep));
}

// The cores' counters and their receive burst sizes (a histogram of its own: sizes, not
// durations).
void AddCores(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  AddFamilies(kCoreCounterInfo, snap.cores, CoreLabel,
              [](const CoreSnapshot& core, size_t i) { return core.counts[i]; }, snap.tsc_hz,
              out);
  MetricFamily bursts = Family(
      "hvswitch_core_rx_burst_size",
      "Frames per receive call that returned any, per worker core. Mostly 1-4 with a busy "
      "core means small bursts from the peers; at --burst the core is behind.",
      MetricType::Histogram);
  for (const CoreSnapshot& core : snap.cores) {
    ClientMetric metric;
    metric.label = {CoreLabel(core)};
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBurstBuckets.size(); ++b) {
      cumulative += core.rx_bursts[b];
      metric.histogram.bucket.push_back({cumulative, static_cast<double>(kBurstBuckets[b])});
    }
    metric.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    metric.histogram.sample_count = cumulative;
    metric.histogram.sample_sum = static_cast<double>(core[CoreCounter::kPackets]);
    bursts.metric.push_back(std::move(metric));
  }
  out.push_back(std::move(bursts));
  AddCoreIdle(snap, out);
}

// Switch-wide values: one unlabelled sample each.
void AddSwitchStats(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  for (size_t i = 0; i < kSwitchStats; ++i) {
    const CounterInfo& info = kSwitchStatInfo[i];
    MetricFamily family = Family(info.family, info.help, TypeOf(info.kind));
    AddSample(family, {}, static_cast<double>(snap.stats[i]));
    out.push_back(std::move(family));
  }
}

// Per mirror session (none without one): the copies it made, and those it could not.
// What its analyser dropped of them is the analyser's hvswitch_port_transmit_drop_total.
void AddMirrors(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  if (snap.mirrors.empty()) return;
  MetricFamily copies = Family(
      "hvswitch_mirror_copies_total",
      "Copies a mirror session made of frames its ports received (direction=rx) and were "
      "sent (tx), handed to its analyser port (whose transmit counters and drops say what "
      "became of them: it takes nothing but copies).",
      MetricType::Counter);
  MetricFamily failures = Family(
      "hvswitch_mirror_copy_failures_total",
      "Frames a mirror session could not copy: the mirror's buffer pool was empty (an "
      "analyser holding copies, or more mirrored traffic than the pool holds) or a copy "
      "had no room for the session's tag. The frames themselves were forwarded.",
      MetricType::Counter);
  for (const MirrorSnapshot& m : snap.mirrors) {
    AddSample(copies, {{"mirror", m.spec.name}, {"direction", "rx"}},
              static_cast<double>(m.counts.rx));
    AddSample(copies, {{"mirror", m.spec.name}, {"direction", "tx"}},
              static_cast<double>(m.counts.tx));
    AddSample(failures, {{"mirror", m.spec.name}}, static_cast<double>(m.counts.failed));
  }
  out.push_back(std::move(copies));
  out.push_back(std::move(failures));
}

// IGMP/MLD snooping (none while it is off): groups and memberships per VLAN, router ports,
// messages read.
void AddMcast(const McastSnapshot& m, std::vector<MetricFamily>& out) {
  if (!m.enabled) return;
  std::map<uint16_t, std::pair<uint64_t, uint64_t>> per_vlan;  // groups, memberships
  for (const McastSnapshot::Group& g : m.groups) {
    ++per_vlan[g.vlan].first;
    per_vlan[g.vlan].second += g.members.size();
  }
  MetricFamily groups = Family(
      "hvswitch_mcast_groups",
      "Multicast groups IGMP/MLD snooping knows members of, per VLAN: their frames go to "
      "those members and the router ports only (other groups flood).",
      MetricType::Gauge);
  MetricFamily memberships = Family(
      "hvswitch_mcast_memberships",
      "Ports that joined a snooped group, per VLAN (a port and a group counted once).",
      MetricType::Gauge);
  for (const auto& [vlan, counts] : per_vlan) {
    AddSample(groups, {{"vlan", std::to_string(vlan)}}, static_cast<double>(counts.first));
    AddSample(memberships, {{"vlan", std::to_string(vlan)}}, static_cast<double>(counts.second));
  }
  out.push_back(std::move(groups));
  out.push_back(std::move(memberships));
  MetricFamily routers = Family(
      "hvswitch_mcast_router_ports",
      "Multicast router ports: where a querier was seen (learned, per VLAN) or mrouter=1 "
      "(static, every VLAN the port carries); every snooped group's frames and the "
      "membership reports go there.",
      MetricType::Gauge);
  AddSample(routers, {{"source", "learned"}}, static_cast<double>(m.routers.size()));
  AddSample(routers, {{"source", "static"}},
            static_cast<double>(__builtin_popcountll(m.static_routers)));
  out.push_back(std::move(routers));
  MetricFamily messages = Family(
      "hvswitch_mcast_messages_total",
      "IGMP and MLD messages snooping read: queries, reports (joins and leaves), and "
      "copies that were no well-formed message (ignored: a bad checksum, a cut frame, an MLD "
      "message from an address other than link-local).",
      MetricType::Counter);
  AddSample(messages, {{"type", "query"}}, static_cast<double>(m.queries));
  AddSample(messages, {{"type", "report"}}, static_cast<double>(m.reports));
  AddSample(messages, {{"type", "invalid"}}, static_cast<double>(m.invalid));
  out.push_back(std::move(messages));
  MetricFamily refused = Family(
      "hvswitch_mcast_refused_total",
      absl::StrCat(
          "What IGMP/MLD snooping did not take from a message. table_full: joins of a new "
          "group with ", kMaxMcastGroups, " groups snooped (it floods); port_limit: joins "
          "by a port that is a member of ", kMaxMcastPortMemberships, " groups already "
          "(the group reaches it only as an unknown group does); guest_querier: queries "
          "from a guest port without mrouter=1, which make it no router port (a guest "
          "asking for every group's frames). Rising: a guest flooding joins or queries, or "
          "a host needing more groups than snooping keeps."),
      MetricType::Counter);
  AddSample(refused, {{"reason", "table_full"}}, static_cast<double>(m.table_full));
  AddSample(refused, {{"reason", "port_limit"}}, static_cast<double>(m.port_limit));
  AddSample(refused, {{"reason", "guest_querier"}}, static_cast<double>(m.guest_querier));
  out.push_back(std::move(refused));
}

// ip_learn=1's outcomes (none before a port learns anything).
void AddIpLearning(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  uint64_t any = 0;
  for (uint64_t n : snap.ip_learn_events) any |= n;
  if (any == 0) return;
  MetricFamily events = Family(
      "hvswitch_ip_learn_events_total",
      "What ip_learn=1 ports' DHCP leases and address claims came to: bound (or renewed); "
      "taken (another port sharing a VLAN has the address: a guest claiming another's); "
      "limit (as many learned addresses as a port may have); foreign_mac (claimed from or "
      "for, or leased to, a MAC the port may not use); untrusted (a DHCP reply from a "
      "learning port); no_lease (a DHCP ACK without a lease time).",
      MetricType::Counter);
  for (size_t e = 0; e < kLearnEvents; ++e) {
    AddSample(events, {{"event", kLearnEventNames[e]}},
              static_cast<double>(snap.ip_learn_events[e]));
  }
  out.push_back(std::move(events));
}

// type=bond ports: per member (the DPDK device) its link, whether it carries traffic and,
// in 802.3ad, the LACP state bytes of both ends.
void AddBondFamilies(const BridgeSnapshot& snap, std::vector<MetricFamily>& out) {
  MetricFamily up = Family("hvswitch_bond_member_up",
                           "1 while the bond member's link is up.", MetricType::Gauge);
  MetricFamily active = Family(
      "hvswitch_bond_member_active",
      "1 while the member carries the bond's traffic: the current primary (active-backup), "
      "distributing (802.3ad), link up (balance-xor).",
      MetricType::Gauge);
  MetricFamily actor = Family(
      "hvswitch_bond_member_lacp_actor_state",
      "802.3ad: the LACP state hvswitch sends for the member (IEEE 802.1AX bits: 0x01 "
      "active, 0x02 short timeout, 0x04 aggregatable, 0x08 in sync, 0x10 collecting, 0x20 "
      "distributing, 0x40 defaulted, 0x80 expired).",
      MetricType::Gauge);
  MetricFamily partner = Family(
      "hvswitch_bond_member_lacp_partner_state",
      "802.3ad: the LACP state the partner sends for its end of the member's link (bits as "
      "hvswitch_bond_member_lacp_actor_state; 0x3d or 0x3f: aggregated).",
      MetricType::Gauge);
  for (const PortSnapshot& port : snap.ports) {
    if (!port.bond) continue;
    for (const BondMemberState& m : port.bond->members) {
      const std::vector<prometheus::ClientMetric::Label> labels = {{"port", port.name},
                                                                   {"member", m.device}};
      AddSample(up, labels, m.up ? 1 : 0);
      AddSample(active, labels, m.active ? 1 : 0);
      if (m.lacp) {
        AddSample(actor, labels, m.lacp->actor_state);
        AddSample(partner, labels, m.lacp->partner_state);
      }
    }
  }
  for (MetricFamily* family : {&up, &active, &actor, &partner}) {
    if (!family->metric.empty()) out.push_back(std::move(*family));
  }
}

}  // namespace

MetricFamily Family(std::string_view name, std::string_view help, MetricType type) {
  return MetricFamily{std::string(name), std::string(help), type, {}};
}

void AddSample(MetricFamily& family, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric metric;
  metric.label = std::move(labels);
  if (family.type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

std::vector<MetricFamily> RenderMetrics(const BridgeSnapshot& snap) {
  std::vector<MetricFamily> out;
  AddPortCounters(snap, out);
  AddPortHistograms(snap, out);
  AddPortGauges(snap, out);
  AddCores(snap, out);
  AddSwitchStats(snap, out);
  AddVxlanMetrics(snap.vxlan, out);
  AddMirrors(snap, out);
  AddMcast(snap.mcast, out);
  AddIpLearning(snap, out);
  return out;
}

}  // namespace hvswitch
