// Transmit buffers: frames wait per port (this worker's own) until FlushPort sends them,
// at once after each burst or when they fill or expire (ForwarderOptions::flush_cycles).
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <algorithm>
#include <cstring>

#include "switch/datapath/forwarder.h"
#include "switch/datapath/port_mask.h"

namespace hvswitch {
namespace {

// A sampled transmit's residence (hvswitch_port_residence_seconds): from the receive of
// its oldest frame to now, just after the transmit call. Out of line: 31 transmits in
// 32 pay only for the countdown.
[[gnu::noinline, gnu::cold]] void SampleResidence(uint64_t oldest_rx, PortCounters& out) {
  const uint64_t now = rte_rdtsc();
  const uint64_t cycles = now > oldest_rx ? now - oldest_rx : 0;
  const double ns = static_cast<double>(cycles) * 1e9 / static_cast<double>(rte_get_tsc_hz());
  out.Sample(PortHistogram::kResidence, static_cast<uint64_t>(ns));
}

}  // namespace

void Forwarder::Enqueue(uint16_t port, rte_mbuf* m) {
  TxBuffer& buffer = tx_[port];
  if (buffer.n == kMaxBurst) [[unlikely]] return EnqueueFull(port, &m, 1, m->pkt_len);
  if (buffer.n == 0) {
    buffer.deadline = now_ + options_.flush_cycles;
    buffer.oldest_rx = received_;
  }
  buffer.pkts[buffer.n++] = m;
  buffer.bytes += m->pkt_len;
  pending_ |= uint64_t{1} << port;
}

void Forwarder::FlushExpired(uint64_t now) {
  up_mask_ = LoadUpMask();
  LoadTxTaps();
  uint64_t due = 0;
  ForEachBit(pending_, [&](uint16_t p) {
    if (now >= tx_[p].deadline) due |= uint64_t{1} << p;
  });
  ForEachBit(due, [&](uint16_t p) { FlushPort(p); });
  FlushMirrorCopies();  // what those flushes copied for analysers
}

void Forwarder::TxEachRound() {
  ForEachBit(table_->tx_each_round & LoadUpMask(), [&](uint16_t p) {
    const DatapathPort& dp = table_->ports[p];
    const uint16_t queue = TxQueue(dp);
    rte_spinlock_t* lock = TxLock(p, dp, queue);
    if (lock != nullptr) rte_spinlock_lock(lock);
    rte_eth_tx_burst(dp.eth_port, queue, nullptr, 0);
    if (lock != nullptr) rte_spinlock_unlock(lock);
  });
}

void Forwarder::FlushAll() {
  ForEachBit(pending_, [&](uint16_t p) { FlushPort(p); });
  // Mirror copies of what those flushes sent, queued for their analysers meanwhile.
  if (mirrored_) [[unlikely]] {
    mirrored_ = false;
    ForEachBit(pending_ & table_->analysers, [&](uint16_t p) { FlushPort(p); });
  }
}

void Forwarder::DropPending(uint64_t ports) { DropWaiting(ports, TxDrop::kLinkDown); }

void Forwarder::DropWaiting(uint64_t ports, TxDrop why) {
  ForEachBit(ports, [&](uint16_t p) {
    TxBuffer& buffer = tx_[p];
    rte_pktmbuf_free_bulk(buffer.pkts, buffer.n);
    counters_.ports[p].Drop(why, buffer.n);
    buffer.n = 0;
    buffer.bytes = 0;
  });
  pending_ &= ~ports;
  if ((parked_ & ports) != 0) {
    const uint64_t now = rte_rdtsc();
    ForEachBit(parked_ & ports, [&](uint16_t p) { EndPark(p, now); });
  }
}

void Forwarder::FlushPort(uint16_t port) {
  TxBuffer& buffer = tx_[port];
  PortCounters& out = counters_.ports[port];
  uint16_t n = buffer.n;
  uint64_t bytes = buffer.bytes;
  buffer.n = 0;
  buffer.bytes = 0;
  pending_ &= ~(uint64_t{1} << port);
  if (!((up_mask_ >> port) & 1)) {
    rte_pktmbuf_free_bulk(buffer.pkts, n);
    out.Drop(TxDrop::kLinkDown, n);
    return;  // a park there ends at the next OfferParked (nothing left)
  }
  const DatapathPort& dp = table_->ports[port];
  const uint16_t queue = TxQueue(dp);
  rte_spinlock_t* lock = TxLock(port, dp, queue);
  if (dp.tx_prepare) {
    // The device refuses what it cannot offload (its limits on segments, sizes). Parked
    // frames pass again at every offer: it recomputes the same pseudo-header sums.
    uint16_t ok = rte_eth_tx_prepare(dp.eth_port, queue, buffer.pkts, n);
    while (ok < n) {
      bytes -= buffer.pkts[ok]->pkt_len;
      rte_pktmbuf_free(buffer.pkts[ok]);
      out.Drop(TxDrop::kOffload, 1);
      std::memmove(buffer.pkts + ok, buffer.pkts + ok + 1, (n - ok - 1) * sizeof(rte_mbuf*));
      --n;
      ok = static_cast<uint16_t>(ok + rte_eth_tx_prepare(dp.eth_port, queue, buffer.pkts + ok,
                                                         n - ok));
    }
  }
  // Copied before sending: a device may free a frame as soon as it has it.
  rte_mbuf* captured[kMaxBurst];
  uint16_t nb_captured = 0;
  const bool tapped = (tx_taps_ >> port) & 1;
  if (tapped) [[unlikely]] nb_captured = TapSending(port, dp, buffer.pkts, n, captured);
  if (lock != nullptr) rte_spinlock_lock(lock);
  uint16_t sent = rte_eth_tx_burst(dp.eth_port, queue, buffer.pkts, n);
  // Taken in part: the queue is draining, offer the rest again. Taken not at all: the
  // queue is full (a stalled guest), and retrying would only cost the other ports.
  if (sent < n && sent != 0 && dp.tx_retries != 0) {
    sent = static_cast<uint16_t>(sent + RetryTx(dp, queue, buffer.pkts + sent, n - sent, out));
  }
  if (lock != nullptr) rte_spinlock_unlock(lock);
  // The first frame went (a transmit takes frames in order): the port's first transmit,
  // then one in kResidenceSampleEvery, has its residence sampled. Taken from the count of
  // transmits the worker keeps anyway (a countdown of its own cost 9 instructions).
  if (sent != 0 &&
      out[PortCounter::kTxBursts].Increment() % kResidenceSampleEvery == 1) [[unlikely]] {
    SampleResidence(buffer.oldest_rx, out);
  }
  if (sent < n) bytes -= Refused(port, sent, n);
  out.Add(PortCounter::kTxPackets, sent);
  out.Add(PortCounter::kTxBytes, bytes);
  if (tapped) [[unlikely]] TapSent(dp, sent, captured, nb_captured);
}

uint16_t Forwarder::TapSending(uint16_t port, const DatapathPort& dp, rte_mbuf* const* pkts,
                               uint16_t n, rte_mbuf** captured) {
  if (dp.mirror_tx != 0) CopyForMirrors(dp.mirror_tx, pkts, n);
  // An analyser is sent copies: what they carry was sent to the mirrored ports.
  if ((dp.guards & (kGuardIpLearn | kGuardMirrorPort)) == kGuardIpLearn) {
    OfferDhcpReplies(port, pkts, n);
  }
  return (capture_tx_ >> port) & 1 ? CopyForCapture(port, pkts, n, captured, false) : 0;
}

void Forwarder::TapSent(const DatapathPort& dp, uint16_t sent, rte_mbuf** captured,
                        uint16_t nb_captured) {
  if (dp.mirror_tx != 0) MirrorSent(dp.mirror_tx, sent);
  if (nb_captured != 0) {
    // Only what the port took; copies failed from the end of the burst.
    const uint16_t keep = std::min(nb_captured, sent);
    if (nb_captured > keep) rte_pktmbuf_free_bulk(captured + keep, nb_captured - keep);
    EnqueueCaptured(captured, keep);
  }
}

// Retries: out of line, so a burst that fits at once, the common case, pays for none of
// it. A retry is a call that takes frames, or the window that ends them: a ring that took
// part of a burst is asked again until it takes more or the window passes. Bounded by
// attempts and time both: at most tx_retries windows a burst, and a stalled ring (nothing
// taken at the first call) never gets here.
uint16_t Forwarder::RetryTx(const DatapathPort& dp, uint16_t queue, rte_mbuf** pkts,
                            uint16_t n, PortCounters& out) {
  const uint64_t start = rte_rdtsc();
  uint64_t last_taken = start;
  uint16_t sent = 0, retries = 0;
  while (sent < n && retries < dp.tx_retries) {
    const uint16_t more = rte_eth_tx_burst(dp.eth_port, queue, pkts + sent, n - sent);
    if (more != 0) {
      sent = static_cast<uint16_t>(sent + more);
      ++retries;
      last_taken = rte_rdtsc();
    } else if (rte_rdtsc() - last_taken >= options_.retry_window_cycles) {
      ++retries;  // the window passed without the ring taking a frame
      break;
    } else {
      rte_pause();
    }
  }
  out.Add(PortCounter::kTxRetries, retries);
  out.Add(PortCounter::kTxRetryCycles, rte_rdtsc() - start);
  return sent;
}

void Forwarder::EnqueueFull(uint16_t port, rte_mbuf** frames, uint16_t n, uint64_t bytes) {
  FlushPort(port);
  if (tx_[port].n + n <= kMaxBurst) return EnqueueRun(port, frames, n, bytes);
  rte_pktmbuf_free_bulk(frames, n);  // behind parked frames that fill the buffer
  counters_.ports[port].Drop(TxDrop::kQueueFull, n);
}

}  // namespace hvswitch
