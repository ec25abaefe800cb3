#include "ports/vxlan/uplink_demux.h"

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "absl/strings/str_cat.h"

namespace hvswitch {

struct UplinkDemux::Table {
  LocalVteps local;
  std::vector<Tunnel> tunnels;
};

// One per uplink receive queue: written by the worker polling it.
struct alignas(64) UplinkDemux::Queue {
  const UplinkDemux* demux = nullptr;
  QueueCounter counters[kNbDecapCounters] = {};
  void Add(DecapCounter which, uint64_t by) { counters[static_cast<size_t>(which)].Add(by); }
};

namespace {

constexpr uint16_t kBatch = 64;

// Inner frames of one tunnel collected from a burst, handed over together.
struct Batch {
  const UplinkDemux::Tunnel* tunnel = nullptr;
  rte_mbuf* pkts[kBatch];
  uint16_t n = 0;
};

void Hand(UplinkDemux::Queue& q, uint16_t queue, Batch& batch) {
  if (batch.n == 0) return;
  const uint16_t taken = batch.tunnel->device.Deliver(queue, batch.pkts, batch.n);
  if (taken < batch.n) {
    q.Add(DecapCounter::k_ring_full, batch.n - taken);
    rte_pktmbuf_free_bulk(batch.pkts + taken, batch.n - taken);
  }
  batch.n = 0;
}

const UplinkDemux::Tunnel* FindTunnel(const std::vector<UplinkDemux::Tunnel>& tunnels,
                                      const OuterInfo& info) {
  for (const UplinkDemux::Tunnel& t : tunnels) {
    if (t.vni == info.vni && t.local_ip == info.dst_ip) return &t;
  }
  return nullptr;
}

}  // namespace

// The receive callback: worker thread, inside rte_eth_rx_burst.
uint16_t DemuxBurst(uint16_t, uint16_t queue, rte_mbuf** pkts, uint16_t nb_pkts, uint16_t,
                    void* param) {
  auto& q = *static_cast<UplinkDemux::Queue*>(param);
  const UplinkDemux::Table* table = q.demux->LoadTable();
  if (table == nullptr || nb_pkts == 0) return nb_pkts;
  uint16_t kept = 0;
  uint64_t packets = 0, bytes = 0;
  Batch batch;
  for (uint16_t i = 0; i < nb_pkts; ++i) {
    rte_mbuf* m = pkts[i];
    OuterInfo info;
    const OuterVerdict verdict = ParseOuter(m, table->local, info);
    if (verdict == OuterVerdict::kNotVxlan) {
      pkts[kept++] = m;
      continue;
    }
    DecapCounter drop = DecapCounter::kCount;
    const UplinkDemux::Tunnel* tunnel = nullptr;
    switch (verdict) {
      case OuterVerdict::kShort: drop = DecapCounter::k_short_frame; break;
      case OuterVerdict::kBadIpHeader: drop = DecapCounter::k_bad_ip; break;
      case OuterVerdict::kFragment: drop = DecapCounter::k_fragment; break;
      case OuterVerdict::kBadUdp: drop = DecapCounter::k_bad_udp; break;
      case OuterVerdict::kBadFlags: drop = DecapCounter::k_bad_flags; break;
      default:
        tunnel = FindTunnel(table->tunnels, info);
        if (tunnel == nullptr) drop = DecapCounter::k_unknown_vni;
    }
    if (drop != DecapCounter::kCount) {
      q.Add(drop, 1);
      rte_pktmbuf_free(m);
      continue;
    }
    ++packets;
    bytes += m->pkt_len;
    rte_pktmbuf_adj(m, info.inner_offset);
    // The outer frame's receive state says nothing of the inner one; the outer source
    // goes with it to the tunnel (VxlanDevice::Deliver).
    m->ol_flags = 0;
    m->packet_type = 0;
    m->vlan_tci = 0;
    m->hash.usr = info.src_ip;
    if (tunnel != batch.tunnel || batch.n == kBatch) {
      Hand(q, queue, batch);
      batch.tunnel = tunnel;
    }
    batch.pkts[batch.n++] = m;
  }
  Hand(q, queue, batch);
  if (packets != 0) {
    q.Add(DecapCounter::k_packets, packets);
    q.Add(DecapCounter::k_bytes, bytes);
  }
  return kept;
}

UplinkDemux::UplinkDemux(uint16_t eth_port, ReaderGrace& grace)
    : eth_port_(eth_port), grace_(grace) {}

absl::StatusOr<std::unique_ptr<UplinkDemux>> UplinkDemux::Install(uint16_t eth_port,
                                                                  uint16_t nb_rxq,
                                                                  ReaderGrace& grace) {
  std::unique_ptr<UplinkDemux> demux(new UplinkDemux(eth_port, grace));
  for (uint16_t q = 0; q < nb_rxq; ++q) {
    demux->queues_.push_back(std::make_unique<Queue>());
    demux->queues_.back()->demux = demux.get();
    const rte_eth_rxtx_callback* cb =
        rte_eth_add_rx_callback(eth_port, q, DemuxBurst, demux->queues_.back().get());
    if (cb == nullptr) {
      return absl::InternalError(absl::StrCat("cannot install the VXLAN receive callback on "
                                              "ethdev ", eth_port, " queue ", q, ": ",
                                              rte_strerror(rte_errno)));
    }
    demux->callbacks_.push_back(cb);
  }
  return demux;
}

UplinkDemux::~UplinkDemux() {
  for (size_t q = 0; q < callbacks_.size(); ++q) {
    rte_eth_remove_rx_callback(eth_port_, static_cast<uint16_t>(q), callbacks_[q]);
  }
  grace_.WaitForReaders();
  // DPDK leaves a removed callback's memory to the application (rte_free).
  for (const rte_eth_rxtx_callback* cb : callbacks_) rte_free(const_cast<rte_eth_rxtx_callback*>(cb));
  delete table_.load(std::memory_order_relaxed);
}

void UplinkDemux::Publish(const std::vector<Tunnel>& tunnels) {
  auto* next = new Table;
  next->tunnels = tunnels;
  for (const Tunnel& t : tunnels) {
    const rte_be16_t port = rte_cpu_to_be_16(t.udp_port);
    if (next->local.Has(t.local_ip, port) || next->local.n == LocalVteps::kMax) continue;
    next->local.ip[next->local.n] = t.local_ip;
    next->local.port[next->local.n] = port;
    ++next->local.n;
  }
  const Table* old = table_.exchange(next, std::memory_order_acq_rel);
  if (old != nullptr) {
    grace_.WaitForReaders();
    delete old;
  }
}

DecapTotals UplinkDemux::Sums() const {
  DecapTotals sums{};
  for (const auto& q : queues_) {
    for (size_t c = 0; c < kNbDecapCounters; ++c) sums[c] += q->counters[c].Get();
  }
  return sums;
}

}  // namespace hvswitch
