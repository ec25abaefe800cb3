// Mirror tap: copies of what a mirrored port receives and is sent, for the analysers of
// its mirror sessions (PortTable::mirrors). A copy is made from the mirror pool and queued
// for the analyser like any frame; the analyser is never retried or waited for
// (PortTable::SealMirrors), so a slow or absent analyser costs the mirrored ports the
// copies at most, and its drops are counted on it.
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "switch/datapath/forwarder.h"
#include "switch/datapath/port_mask.h"

namespace hvswitch {
namespace {

// The bytes of a copy's leading VLAN tags (two at most are looked at): beyond its
// Ethernet header, what may come on top of a payload as large as the analyser's MTU.
uint32_t TagBytes(const rte_mbuf* m) {
  uint32_t bytes = 0;
  const auto* eth = rte_pktmbuf_mtod(m, const uint8_t*);
  while (bytes < 2 * RTE_VLAN_HLEN &&
         m->data_len >= RTE_ETHER_HDR_LEN + bytes + RTE_VLAN_HLEN) {
    const uint16_t type = static_cast<uint16_t>(eth[12 + bytes] << 8 | eth[13 + bytes]);
    if (type != RTE_ETHER_TYPE_VLAN && type != RTE_ETHER_TYPE_QINQ &&
        type != RTE_ETHER_TYPE_QINQ1) {
      break;
    }
    bytes += RTE_VLAN_HLEN;
  }
  return bytes;
}

}  // namespace

void Forwarder::MirrorReceived(uint8_t sessions, rte_mbuf* const* pkts, uint16_t n) {
  ForEachBit(sessions, [&](uint16_t s) {
    rte_mbuf* copies[kMaxBurst];
    const uint16_t copied = CopyForMirror(s, pkts, n, copies);
    CountMirrored(s, n, copied);
    if (copied == kAnalyserDown) return;
    counters_.mirrors[s].rx.Add(copied);
    EnqueueMirrored(s, copies, n);
    mirrored_ = true;
  });
}

void Forwarder::CopyForMirrors(uint8_t sessions, rte_mbuf* const* pkts, uint16_t n) {
  ForEachBit(sessions, [&](uint16_t s) {
    const uint16_t copied = CopyForMirror(s, pkts, n, mirror_copies_[s].data());
    mirror_copied_[s] = copied == kAnalyserDown ? kAnalyserDown : n;  // their places
  });
}

void Forwarder::MirrorSent(uint8_t sessions, uint16_t sent) {
  ForEachBit(sessions, [&](uint16_t s) {
    rte_mbuf** copies = mirror_copies_[s].data();
    const uint16_t places = mirror_copied_[s];
    mirror_copied_[s] = 0;
    if (places == kAnalyserDown) return CountMirrored(s, sent, kAnalyserDown);
    // Only what the port took counts, and only its copies go: the rest was not sent
    // (dropped, or parked to be sent, and copied, later).
    const uint16_t taken = sent < places ? sent : places;
    uint16_t kept = 0;
    for (uint16_t i = 0; i < places; ++i) {
      if (copies[i] == nullptr) continue;
      if (i < taken) {
        ++kept;
      } else {
        rte_pktmbuf_free(copies[i]);
      }
    }
    CountMirrored(s, sent, kept);
    counters_.mirrors[s].tx.Add(kept);
    EnqueueMirrored(s, copies, taken);
    mirrored_ = true;
  });
}

void Forwarder::CountMirrored(uint16_t slot, uint16_t frames, uint16_t copied) {
  if (copied == kAnalyserDown) {
    counters_.ports[table_->mirrors[slot].to].Drop(TxDrop::kLinkDown, frames);
  } else if (copied < frames) {
    counters_.mirrors[slot].failed.Add(frames - copied);
  }
}

uint16_t Forwarder::CopyForMirror(uint16_t slot, rte_mbuf* const* pkts, uint16_t n,
                                  rte_mbuf** copies) {
  const MirrorSession& session = table_->mirrors[slot];
  // An analyser that is down would only drop them: not copied at all.
  if (!((LoadUpMask() >> session.to) & 1)) return kAnalyserDown;
  uint16_t copied = 0;
  for (uint16_t i = 0; i < n; ++i) {
    // A frame that cannot be copied (the pool dry; empty, or too short for the tag) is
    // that frame's failure only: those after it are copied all the same, or a guest could
    // hide a burst behind one runt.
    copies[i] = nullptr;
    rte_mbuf* copy = rte_pktmbuf_copy(pkts[i], datapath_.mirror_pool, 0, UINT32_MAX);
    if (copy == nullptr) continue;
    // The bytes as they crossed the port, nothing asked of the analyser's device: a
    // partial checksum stays partial, as a capture shows it.
    copy->ol_flags = 0;
    copy->tx_offload = 0;
    // Not any port's own frame: never parked for backpressure as one.
    copy->port = RTE_MBUF_PORT_INVALID;
    if (session.vlan != 0) {
      copy->vlan_tci = session.vlan;
      if (rte_vlan_insert(&copy) != 0) {
        rte_pktmbuf_free(copy);
        continue;
      }
    }
    copies[i] = copy;
    ++copied;
  }
  return copied;
}

void Forwarder::EnqueueMirrored(uint16_t slot, rte_mbuf** copies, uint16_t n) {
  const uint16_t to = table_->mirrors[slot].to;
  const uint32_t mtu = table_->ports[to].mtu;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* copy = copies[i];
    if (copy == nullptr) continue;  // not copied (counted)
    if (copy->pkt_len > RTE_ETHER_HDR_LEN + TagBytes(copy) + mtu) {
      counters_.ports[to].Drop(TxDrop::kMtu, 1);
      rte_pktmbuf_free(copy);
      continue;
    }
    Enqueue(to, copy);
  }
}

void Forwarder::SendMirrorCopies() {
  mirrored_ = false;
  up_mask_ = LoadUpMask();  // the flushes read it; this burst ended before it was read
  LoadTxTaps();
  ForEachBit(pending_ & table_->analysers, [&](uint16_t p) { FlushPort(p); });
}

}  // namespace hvswitch
