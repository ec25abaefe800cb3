// Egress: how a run's frames reach their ports' transmit buffers (tx_buffers.cc) once
// the pipeline (forwarder.cc) has decided where they go: MTU checks, tag changes, offload
// requests settled, flood copies shared. Out of line: called per run or per frame.
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <array>

#include "offload/egress_offload.h"
#include "switch/datapath/forwarder.h"
#include "switch/datapath/port_mask.h"

namespace hvswitch {
namespace {

// Gives an unshared frame the other encapsulation: strips its tag or inserts one for
// `vlan`. False when there is no room for the tag.
bool Retag(rte_mbuf*& m, bool tagged, uint16_t vlan) {
  if (tagged) {
    rte_vlan_strip(m);
    m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED);
    // rte_vlan_insert grows l2_len for a checksum request; stripping must shrink it.
    if (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) m->l2_len -= RTE_VLAN_HLEN;
    return true;
  }
  m->vlan_tci = vlan;
  return rte_vlan_insert(&m) == 0;
}

// A super-frame left to the destination to segment is not bound by the MTU: its
// segments are (tso_segsz was set for the smallest destination MTU).
bool OverMtu(const rte_mbuf* m, uint32_t payload, uint16_t mtu) {
  return payload > mtu && !(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
}

}  // namespace

// A run's frames to `port` when a tag changes or a frame may be over its MTU.
void Forwarder::UnicastFrames(uint16_t port, const Run& run, rte_mbuf** frames, bool retag) {
  for (uint16_t i = 0; i < run.len; ++i) UnicastFrame(port, frames[i], run, retag);
}

void Forwarder::UnicastFrame(uint16_t port, rte_mbuf* m, const Run& run, bool retag) {
  PortCounters& out = counters_.ports[port];
  if (OverMtu(m, m->pkt_len - run.header(), table_->ports[port].mtu)) {
    out.Drop(TxDrop::kMtu, 1);
    rte_pktmbuf_free(m);
  } else if (retag && run.double_tagged) {  // its tag would be removed: VLAN hopping
    out.Drop(TxDrop::kVlan, 1);
    rte_pktmbuf_free(m);
  } else if (retag && !Retag(m, run.tagged, run.vlan)) {
    out.Drop(TxDrop::kNoMbuf, 1);
    rte_pktmbuf_free(m);
  } else {
    Enqueue(port, m);
  }
}

uint16_t Forwarder::ResolveOffload(uint64_t targets, rte_mbuf* m, PortCounters& in,
                                   rte_mbuf** out) {
  EgressCaps caps;
  const uint64_t csum = datapath_.csum_capable_mask.load(std::memory_order_relaxed);
  const uint64_t tso4 = datapath_.tso4_capable_mask.load(std::memory_order_relaxed);
  const uint64_t tso6 = datapath_.tso6_capable_mask.load(std::memory_order_relaxed);
  caps.csum = (targets & ~csum) == 0;
  caps.tso4 = (targets & ~tso4) == 0;
  caps.tso6 = (targets & ~tso6) == 0;
  caps.mtu = UINT16_MAX;
  ForEachBit(targets, [&](uint16_t p) { caps.mtu = std::min(caps.mtu, table_->ports[p].mtu); });
  const EgressOutcome outcome = ResolveEgressOffload(m, caps, out);
  switch (outcome.result) {
    case EgressOutcome::Result::kSent:
      break;
    case EgressOutcome::Result::kBadFrame:
      in.Drop<RxDrop::kBadOffload>(1);
      rte_pktmbuf_free(m);
      return 0;
    case EgressOutcome::Result::kNoMbuf:
    case EgressOutcome::Result::kTooSmall: {
      const TxDrop why =
          outcome.result == EgressOutcome::Result::kNoMbuf ? TxDrop::kNoMbuf : TxDrop::kMtu;
      ForEachBit(targets, [&](uint16_t p) { counters_.ports[p].Drop(why, 1); });
      rte_pktmbuf_free(m);
      return 0;
    }
  }
  // Offload work, counted on each destination (kCount: none).
  static constexpr std::array<PortCounter, static_cast<size_t>(OffloadAction::kDrop) + 1>
      kOffloadCounter = {PortCounter::kCount,   // kAsIs
                         PortCounter::kCsumHw,  // kPassPartial
                         PortCounter::kCsumSw,  // kCompleteChecksum
                         PortCounter::kTsoHw,   // kPassSuperFrame
                         PortCounter::kTsoSw,   // kSegment
                         PortCounter::kCount};  // kDrop
  const PortCounter how = kOffloadCounter[static_cast<size_t>(outcome.action)];
  if (how != PortCounter::kCount) {
    ForEachBit(targets, [&](uint16_t p) { counters_.ports[p].Add(how, 1); });
  }
  return outcome.nb;
}

// Copies of a flooded frame share one mbuf (reference count raised), except that ports
// wanting the other encapsulation (tag added or removed) share one modified copy; a
// double-tagged frame is not sent where its tag would be removed.
void Forwarder::Flood(uint64_t targets, const Run& run, rte_mbuf* m) {
  const uint16_t vlan = run.vlan;
  const bool tagged = run.tagged;
  const uint32_t payload = m->pkt_len - run.header();
  if (payload > table_->min_mtu) {
    ForEachBit(targets, [&](uint16_t p) {
      if (!OverMtu(m, payload, table_->ports[p].mtu)) return;
      counters_.ports[p].Drop(TxDrop::kMtu, 1);
      targets &= ~(uint64_t{1} << p);
    });
  }
  uint64_t untagged = targets & table_->vlans.untagged[vlan];
  uint64_t same = tagged ? targets & ~untagged : untagged;
  uint64_t other = targets & ~same;
  if (other != 0 && run.double_tagged) {
    ForEachBit(other, [&](uint16_t p) { counters_.ports[p].Drop(TxDrop::kVlan, 1); });
  } else if (other != 0) {
    rte_mbuf* copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
    if (copy != nullptr && !Retag(copy, tagged, vlan)) {
      rte_pktmbuf_free(copy);
      copy = nullptr;
    }
    if (copy == nullptr) {
      ForEachBit(other, [&](uint16_t p) { counters_.ports[p].Drop(TxDrop::kNoMbuf, 1); });
    } else {
      Share(other, copy);
    }
  }
  Share(same, m);
}

void Forwarder::Share(uint64_t targets, rte_mbuf* m) {
  int copies = __builtin_popcountll(targets);
  if (copies == 0) {
    rte_pktmbuf_free(m);
    return;
  }
  if (copies > 1) {
    // Freeing a chain drops every segment's count, so every segment must carry the raise.
    for (rte_mbuf* seg = m; seg != nullptr; seg = seg->next) {
      rte_mbuf_refcnt_update(seg, static_cast<int16_t>(copies - 1));
    }
  }
  ForEachBit(targets, [&](uint16_t port) { Enqueue(port, m); });
}

}  // namespace hvswitch
