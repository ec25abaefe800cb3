#include "switch/metrics.h"

#include <limits>
#include <string>

namespace hvswitch {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily Family(std::string name, std::string help, MetricType type) {
  return MetricFamily{std::move(name), std::move(help), type, {}};
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

// A family with one unlabelled sample.
MetricFamily Single(std::string name, std::string help, MetricType type, uint64_t value) {
  MetricFamily family = Family(std::move(name), std::move(help), type);
  AddSample(family, {}, static_cast<double>(value));
  return family;
}

// One family with one sample per port, the value taken from each port by `get`.
template <typename Get>
MetricFamily PerPort(const BridgeSnapshot& snap, std::string name, std::string help,
                     MetricType type, Get get) {
  MetricFamily family = Family(std::move(name), std::move(help), type);
  for (const PortSnapshot& port : snap.ports) {
    AddSample(family, {{"port", port.name}}, static_cast<double>(get(port)));
  }
  return family;
}

}  // namespace

std::vector<MetricFamily> RenderMetrics(const BridgeSnapshot& snap) {
  std::vector<MetricFamily> out;
  out.push_back(PerPort(snap, "hvswitch_port_receive_packets_total",
                        "Frames received from the port (before any drop).",
                        MetricType::Counter, [](auto& p) { return p.totals.rx_packets; }));
  out.push_back(PerPort(snap, "hvswitch_port_receive_bytes_total",
                        "Bytes received from the port.", MetricType::Counter,
                        [](auto& p) { return p.totals.rx_bytes; }));
  out.push_back(PerPort(snap, "hvswitch_port_transmit_packets_total",
                        "Frames sent to the port.", MetricType::Counter,
                        [](auto& p) { return p.totals.tx_packets; }));
  out.push_back(PerPort(snap, "hvswitch_port_transmit_bytes_total",
                        "Bytes sent to the port.", MetricType::Counter,
                        [](auto& p) { return p.totals.tx_bytes; }));

  MetricFamily rx_drop = Family(
      "hvswitch_port_receive_drop_total",
      "Frames dropped after receive, by reason. no_mbuf: the buffer pool ran dry (raise it "
      "or find who holds buffers); quota: the port's own buffers (quota=) ran out, so its "
      "frames were dropped by the device instead of drawing on the shared pool; malformed: runt or group-source frames from the port; "
      "vlan: tagged frames on an access port, or frames in a VLAN the port does not carry "
      "(a guest or trunk misconfigured); bad_offload: a partial checksum on a frame whose "
      "TCP/UDP headers are missing or inconsistent (a broken or hostile guest); "
      "hairpin: destination learned on the ingress port itself (a loop or a confused peer); "
      "spoofed: a source MAC the port may not use (port security: mac= or lock=1); "
      "no_destination: flooded, but no other port is up in the frame's VLAN (nobody to "
      "hear it); missed / rx_error: the device itself dropped frames before hvswitch saw "
      "them (missed: its receive queue was full, hvswitch polling too slowly; rx_error: "
      "erroneous frames). no_mbuf, quota, missed and rx_error are not in "
      "receive_packets_total; every other frame received is forwarded or counted here.",
      MetricType::Counter);
  for (const PortSnapshot& port : snap.ports) {
    // A port with a quota draws on its own pool: running dry there is the quota.
    AddSample(rx_drop, {{"port", port.name}, {"reason", "no_mbuf"}},
              static_cast<double>(port.quota == 0 ? port.rx_no_mbuf : 0));
    AddSample(rx_drop, {{"port", port.name}, {"reason", "quota"}},
              static_cast<double>(port.quota == 0 ? 0 : port.rx_no_mbuf));
    for (size_t r = 0; r < kRxDropNames.size(); ++r) {
      AddSample(rx_drop, {{"port", port.name}, {"reason", std::string(kRxDropNames[r])}},
                static_cast<double>(port.totals.rx_drops[r]));
    }
  }
  out.push_back(std::move(rx_drop));

  MetricFamily tx_drop = Family(
      "hvswitch_port_transmit_drop_total",
      "Frames for the port that were not sent, by reason. queue_full: the guest or device "
      "is not draining its ring fast enough; link_down: the guest is not connected; mtu: "
      "the frame is larger than the port's MTU (raise mtu= or fix the sender's MTU); "
      "no_mbuf: no buffer for a copy or a segment of the frame (pool exhausted); "
      "offload_refused: the NIC refused the frame's checksum/TSO request (its limits); "
      "vlan: a frame with two tags that would leave the port with its outer tag removed "
      "(hvswitch carries one tag: sending it would move it into the inner tag's VLAN; "
      "someone attempts VLAN hopping or stacks tags on an access/native VLAN).",
      MetricType::Counter);
  for (const PortSnapshot& port : snap.ports) {
    for (size_t r = 0; r < kTxDropNames.size(); ++r) {
      AddSample(tx_drop, {{"port", port.name}, {"reason", std::string(kTxDropNames[r])}},
                static_cast<double>(port.totals.tx_drops[r]));
    }
  }
  out.push_back(std::move(tx_drop));

  out.push_back(PerPort(snap, "hvswitch_port_transmit_bursts_total",
                        "Transmit bursts to the port that sent frames; transmit packets / "
                        "bursts is the mean burst size (small bursts to an interrupt-driven "
                        "guest mean many notifications: consider --tx_flush_us).",
                        MetricType::Counter, [](auto& p) { return p.totals.tx_bursts; }));
  MetricFamily offload = Family(
      "hvswitch_port_offload_total",
      "Offload work for frames sent to the port. kind=csum: partial L4 checksums (a "
      "guest left them to the device); how=hw: passed on for the port to complete, "
      "how=sw: completed by hvswitch because the port cannot (CPU spent per frame). "
      "kind=tso: TCP super-frames from a guest's GSO; how=hw: passed whole for the port "
      "to segment, how=sw: cut into MTU-sized segments by hvswitch (costly: a guest "
      "peer without GUEST_TSO4/6, memif, or a NIC without TSO).",
      MetricType::Counter);
  for (const PortSnapshot& port : snap.ports) {
    AddSample(offload, {{"port", port.name}, {"kind", "csum"}, {"how", "hw"}},
              static_cast<double>(port.totals.csum_hw));
    AddSample(offload, {{"port", port.name}, {"kind", "csum"}, {"how", "sw"}},
              static_cast<double>(port.totals.csum_sw));
    AddSample(offload, {{"port", port.name}, {"kind", "tso"}, {"how", "hw"}},
              static_cast<double>(port.totals.tso_hw));
    AddSample(offload, {{"port", port.name}, {"kind", "tso"}, {"how", "sw"}},
              static_cast<double>(port.totals.tso_sw));
  }
  out.push_back(std::move(offload));
  out.push_back(PerPort(snap, "hvswitch_port_learn_limited_total",
                        "Frames forwarded without learning their source because the port "
                        "has as many MACs as its learn limit allows (learn_limit=, 1024 by "
                        "default on guest ports): a guest spraying source MACs, or a limit "
                        "set too low.",
                        MetricType::Counter, [](auto& p) { return p.totals.learn_limited; }));
  out.push_back(PerPort(snap, "hvswitch_port_learn_table_full_total",
                        "Frames forwarded without learning their source because the MAC "
                        "table is full for the port: it uses all of its reserved entries "
                        "and the table's shared rest is taken. Non-zero means the table is "
                        "too small for this port's MACs (--fdb_capacity) or the port sprays "
                        "source MACs (set learn_limit= on it); other ports keep their "
                        "reserve.",
                        MetricType::Counter, [](auto& p) { return p.totals.learn_table_full; }));
  out.push_back(PerPort(snap, "hvswitch_port_fdb_entries",
                        "MACs currently learned on the port (static entries excluded); "
                        "compare with its learn_limit.",
                        MetricType::Gauge, [](auto& p) { return p.fdb_learned; }));
  out.push_back(PerPort(snap, "hvswitch_port_up",
                        "1 while the port's link is up (guest connected); 0 means frames "
                        "for it are dropped as link_down.",
                        MetricType::Gauge, [](auto& p) { return p.up ? 1 : 0; }));
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

  MetricFamily busy = Family("hvswitch_core_busy_cycles_total",
                             "TSC cycles a worker core spent in poll rounds that received "
                             "frames; busy / (busy + idle) near 1 means the core is saturated.",
                             MetricType::Counter);
  MetricFamily idle = Family("hvswitch_core_idle_cycles_total",
                             "TSC cycles a worker core spent polling without receiving.",
                             MetricType::Counter);
  for (const CoreSnapshot& core : snap.cores) {
    AddSample(busy, {{"core", std::to_string(core.cpu)}}, static_cast<double>(core.busy_cycles));
    AddSample(idle, {{"core", std::to_string(core.cpu)}}, static_cast<double>(core.idle_cycles));
  }
  out.push_back(std::move(busy));
  out.push_back(std::move(idle));
  MetricFamily packets = Family("hvswitch_core_packets_total",
                                "Frames a worker core received; busy cycles / packets is its "
                                "cost per frame.",
                                MetricType::Counter);
  MetricFamily bursts = Family(
      "hvswitch_core_rx_burst_size",
      "Frames per receive call that returned any, per worker core. Mostly 1-4 with a busy "
      "core means small bursts from the peers; at --burst the core is behind.",
      MetricType::Histogram);
  for (const CoreSnapshot& core : snap.cores) {
    const std::string label = std::to_string(core.cpu);
    AddSample(packets, {{"core", label}}, static_cast<double>(core.rx_packets));
    ClientMetric metric;
    metric.label = {{"core", label}};
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBurstBuckets.size(); ++b) {
      cumulative += core.rx_bursts[b];
      metric.histogram.bucket.push_back({cumulative, static_cast<double>(kBurstBuckets[b])});
    }
    metric.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    metric.histogram.sample_count = cumulative;
    metric.histogram.sample_sum = static_cast<double>(core.rx_packets);
    bursts.metric.push_back(std::move(metric));
  }
  out.push_back(std::move(packets));
  out.push_back(std::move(bursts));
  MetricFamily learn_drops = Family(
      "hvswitch_core_learn_queue_drops_total",
      "Learn requests a worker core dropped because its queue to the control thread was "
      "full; the source is asked for again a millisecond later. Non-zero means sources "
      "arrive faster than the control thread learns them (many new MACs at once) or the "
      "control thread is stalled: learning lags meanwhile and unicast to new MACs floods.",
      MetricType::Counter);
  for (const CoreSnapshot& core : snap.cores) {
    AddSample(learn_drops, {{"core", std::to_string(core.cpu)}},
              static_cast<double>(core.learn_queue_drops));
  }
  out.push_back(std::move(learn_drops));

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

  MetricFamily quota = Family("hvswitch_port_buffer_quota",
                              "Packet buffers a port with quota= may hold at once.",
                              MetricType::Gauge);
  MetricFamily in_use = Family(
      "hvswitch_port_buffers_in_use",
      "Packet buffers of a port with quota= out of its pool now (its frames in flight, "
      "queued, or copied for floods); at the quota its further frames wait or drop.",
      MetricType::Gauge);
  for (const PortSnapshot& port : snap.ports) {
    if (port.quota == 0) continue;
    AddSample(quota, {{"port", port.name}}, static_cast<double>(port.quota));
    AddSample(in_use, {{"port", port.name}}, static_cast<double>(port.buffers_in_use));
  }
  out.push_back(std::move(quota));
  out.push_back(std::move(in_use));
  out.push_back(Single("hvswitch_mbufs", "Packet buffers in the shared pool.",
                       MetricType::Gauge, snap.mbufs));
  out.push_back(Single("hvswitch_mbufs_in_use",
                       "Packet buffers out of the pool now: in device rings, transmit "
                       "queues or in flight. Rising while traffic is steady means a leak.",
                       MetricType::Gauge, snap.mbufs_in_use));
  out.push_back(Single("hvswitch_capture_missed_total",
                       "Frames a running hvswitchctl capture could not copy (no buffer, or "
                       "the control thread behind); the capture file lacks them, forwarding "
                       "does not.",
                       MetricType::Counter, snap.capture_missed));
  out.push_back(Single("hvswitch_fdb_entries",
                       "MAC addresses in the forwarding table, learned and static.",
                       MetricType::Gauge, snap.fdb_entries));
  out.push_back(Single("hvswitch_fdb_static_entries",
                       "Static MAC entries (configured; never aged or moved).",
                       MetricType::Gauge, snap.fdb_static));
  out.push_back(Single("hvswitch_fdb_static_move_refused_total",
                       "Frames whose source is a static MAC of another port; non-zero means "
                       "a guest is using an address it does not own, or the entry is wrong.",
                       MetricType::Counter, snap.fdb_static_refused));
  out.push_back(Single("hvswitch_fdb_locked_move_refused_total",
                       "Learn requests refused because the MAC belongs to a connected guest "
                       "port with port security (mac= or lock=1); non-zero means another "
                       "port sends with that guest's address.",
                       MetricType::Counter, snap.fdb_locked_refused));
  out.push_back(Single("hvswitch_fdb_learned_total", "MAC addresses learned (new table entries).",
                       MetricType::Counter, snap.fdb_learned));
  out.push_back(Single("hvswitch_fdb_moves_total",
                       "Learned MACs seen on another port than before; a steady rate means a "
                       "loop or a MAC shared by two guests.",
                       MetricType::Counter, snap.fdb_moves));
  out.push_back(Single("hvswitch_fdb_aged_total",
                       "MAC entries removed because they were not seen for the ageing time.",
                       MetricType::Counter, snap.fdb_aged));
  out.push_back(Single("hvswitch_fdb_flushed_total",
                       "MAC entries removed because their port went down.",
                       MetricType::Counter, snap.fdb_flushed));
  return out;
}

}  // namespace hvswitch
