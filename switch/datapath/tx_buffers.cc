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

// TSC cycles from `then` to `now`, 0 if `then` is later: the worker's round time is read
// before the flushes that follow it, which read the clock themselves.
uint64_t Since(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }

}  // namespace

void Forwarder::Enqueue(uint16_t port, rte_mbuf* m) {
  TxBuffer& buffer = tx_[port];
  if (buffer.n == kMaxBurst) [[unlikely]] return EnqueueFull(port, &m, 1, m->pkt_len);
  if (buffer.n == 0) buffer.deadline = now_ + options_.flush_cycles;
  buffer.pkts[buffer.n++] = m;
  buffer.bytes += m->pkt_len;
  pending_ |= uint64_t{1} << port;
}

void Forwarder::EnqueueRun(uint16_t port, rte_mbuf** frames, uint16_t n, uint64_t bytes) {
  TxBuffer& buffer = tx_[port];
  if (buffer.n + n > kMaxBurst) [[unlikely]] return EnqueueFull(port, frames, n, bytes);
  if (buffer.n == 0) buffer.deadline = now_ + options_.flush_cycles;
  for (uint16_t i = 0; i < n; ++i) buffer.pkts[buffer.n + i] = frames[i];  // mostly 1-4
  buffer.n = static_cast<uint16_t>(buffer.n + n);
  buffer.bytes += bytes;
  pending_ |= uint64_t{1} << port;
}

void Forwarder::FlushExpired(uint64_t now) {
  up_mask_ = LoadUpMask();
  capture_tx_ = datapath_.capture_tx_mask.load(std::memory_order_relaxed);
  uint64_t due = 0;
  ForEachBit(pending_, [&](uint16_t p) {
    if (now >= tx_[p].deadline) due |= uint64_t{1} << p;
  });
  ForEachBit(due, [&](uint16_t p) { FlushPort(p); });
}

void Forwarder::ReclaimTx() {
  ForEachBit(table_->reclaim_tx & LoadUpMask(), [&](uint16_t p) {
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
  const uint16_t nb_captured =
      (capture_tx_ >> port) & 1 ? CopyForCapture(port, buffer.pkts, n, captured, false) : 0;
  if (lock != nullptr) rte_spinlock_lock(lock);
  uint16_t sent = rte_eth_tx_burst(dp.eth_port, queue, buffer.pkts, n);
  // Taken in part: the queue is draining, offer the rest again. Taken not at all: the
  // queue is full (a stalled guest), and retrying would only cost the other ports.
  if (sent < n && sent != 0 && dp.tx_retries != 0) {
    sent = static_cast<uint16_t>(sent + RetryTx(dp, queue, buffer.pkts + sent, n - sent, out));
  }
  if (lock != nullptr) rte_spinlock_unlock(lock);
  if (sent < n) {
    uint64_t refused = 0;
    for (uint16_t i = sent; i < n; ++i) refused += buffer.pkts[i]->pkt_len;
    bytes -= refused;
    Refused(port, sent, n, refused);
  }
  out.Add(PortCounter::kTxPackets, sent);
  out.Add(PortCounter::kTxBytes, bytes);
  if (sent != 0) out.Add(PortCounter::kTxBursts, 1);
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

// What a destination refuses after its retries. From a guest (vhost-user, memif) it is
// dropped: the guest's ring is the guest's, and the retries already waited for the
// destination as long as it kept taking frames. From a kernel or NIC port it is parked
// and the port paused (PausedSources), so that its next frames wait in the kernel's
// queue or the NIC's ring, which hold more than a guest's ring and far more than the
// retries can wait for: ethdev has no peek, so frames already received can only wait
// here, at the front of the destination's buffer (what comes later queues behind them,
// nothing overtakes). The source's frames for other destinations wait in its queue too
// (head of line): hence the bounds — one window without the destination taking a parked
// frame, a buffer's worth parked per destination, no parking for a destination that took
// none of its last parked frames (stalled) or one with tx_retries=0. A tap's queue drops
// what does not fit (its tx_dropped; this kernel's tun does not stop the sender's
// queue), a NIC's ring counts `missed`: the loss is not gone, it moves to a queue that
// holds more, in front of the sender.
void Forwarder::Refused(uint16_t port, uint16_t sent, uint16_t n, uint64_t bytes) {
  const uint64_t bit = uint64_t{1} << port;
  TxBuffer& buffer = tx_[port];
  Park& park = parks_[port];
  if (sent != 0) stalled_ &= ~bit;  // it takes frames: alive, if slow
  // The port's count of sent frames once this call's are counted.
  const uint64_t tx_packets = counters_.ports[port][PortCounter::kTxPackets].Read() + sent;
  // Parked frames were first in the buffer: some are among the refused ones.
  const bool parked_left = (parked_ & bit) && tx_packets < park.done_at;
  if (parked_left && sent == 0 && park.done_at - tx_packets == n) {
    buffer.n = n;  // the parked frames again, alone and untouched: the common case here
    buffer.bytes = bytes;
    pending_ |= bit;
    return;
  }
  const uint64_t now = rte_rdtsc();
  if ((parked_ & bit) && !parked_left) EndPark(port, now);  // its frames went meanwhile
  const bool may_park = table_->rx_backpressure != 0 && table_->ports[port].tx_retries != 0 &&
                        !(stalled_ & bit);
  uint64_t sources = 0, kept_bytes = 0, refused_sources = 0;
  uint16_t kept = 0, dropped = 0;
  for (uint16_t i = sent; i < n; ++i) {
    rte_mbuf* m = buffer.pkts[i];
    uint16_t source = may_park ? BackpressureSource(m->port) : kNoSource;
    if (source != kNoSource && !((sources >> source) & 1)) {
      if ((refused_sources >> source) & 1 || !MayPause(source, now)) {
        refused_sources |= uint64_t{1} << source;  // beyond its budget: dropped
        source = kNoSource;
      }
    }
    if (source != kNoSource) {
      buffer.pkts[kept++] = m;  // to the front, in order
      kept_bytes += m->pkt_len;
      sources |= uint64_t{1} << source;
    } else {
      rte_pktmbuf_free(m);
      ++dropped;
    }
  }
  if (dropped != 0) counters_.ports[port].Drop(TxDrop::kQueueFull, dropped);
  if (kept == 0) {
    if (parked_ & bit) EndPark(port, now);
    return;
  }
  buffer.n = kept;
  buffer.bytes = kept_bytes;
  pending_ |= bit;
  if (!(parked_ & bit)) {
    park = {sent != 0, 0, now, 0};
    parked_ |= bit;
  } else if (sent != 0) {
    park.took = true;  // it took parked frames
    park.last_taken = now;
  }
  park.done_at = tx_packets + kept;
  park.sources |= sources;
  ForEachBit(sources & ~paused_, [&](uint16_t s) {
    counters_.ports[s].Add(PortCounter::kRxPauses, 1);
    pauses_[s].since = now;
  });
  paused_ |= sources;
}

bool Forwarder::MayPause(uint16_t source, uint64_t now) {
  if (options_.pause_period_cycles == 0) return true;
  PauseBudget& budget = pauses_[source];
  const bool paused = (paused_ >> source) & 1;
  if (Since(now, budget.period_start) >= options_.pause_period_cycles) {
    budget.period_start = now;  // a new period: what the current pause used is the old one's
    budget.used = 0;
    if (paused) {
      counters_.ports[source].Add(PortCounter::kRxPauseCycles, Since(now, budget.since));
      budget.since = now;
    }
  }
  const uint64_t using_now = paused ? Since(now, budget.since) : 0;
  return budget.used + using_now < options_.pause_budget_cycles;
}

void Forwarder::Resume(uint64_t sources, uint64_t now) {
  ForEachBit(sources, [&](uint16_t s) {
    const uint64_t paused = Since(now, pauses_[s].since);
    counters_.ports[s].Add(PortCounter::kRxPauseCycles, paused);
    pauses_[s].used += paused;
  });
  paused_ &= ~sources;
}

uint16_t Forwarder::BackpressureSource(uint16_t eth_port) const {
  uint16_t source = kNoSource;
  ForEachBit(table_->rx_backpressure, [&](uint16_t p) {
    if (table_->ports[p].eth_port == eth_port) source = p;
  });
  return source;
}

void Forwarder::EndPark(uint16_t port, uint64_t now) {
  parks_[port].sources = 0;
  parked_ &= ~(uint64_t{1} << port);
  uint64_t still = 0;
  ForEachBit(parked_, [&](uint16_t p) { still |= parks_[p].sources; });
  Resume(paused_ & ~still, now);
}

void Forwarder::EnqueueFull(uint16_t port, rte_mbuf** frames, uint16_t n, uint64_t bytes) {
  FlushPort(port);
  if (tx_[port].n + n <= kMaxBurst) return EnqueueRun(port, frames, n, bytes);
  rte_pktmbuf_free_bulk(frames, n);  // behind parked frames that fill the buffer
  counters_.ports[port].Drop(TxDrop::kQueueFull, n);
}

void Forwarder::OfferParked(uint64_t now) {
  up_mask_ = LoadUpMask();
  capture_tx_ = datapath_.capture_tx_mask.load(std::memory_order_relaxed);
  // A port beyond its budget is polled again; its parked frames stay first in line, and
  // what is refused of them from now on is dropped.
  uint64_t spent = 0;
  ForEachBit(paused_, [&](uint16_t s) {
    if (!MayPause(s, now)) spent |= uint64_t{1} << s;
  });
  if (spent != 0) Resume(spent, now);
  ForEachBit(parked_, [&](uint16_t p) {
    const uint64_t bit = uint64_t{1} << p;
    TxBuffer& buffer = tx_[p];
    Park& park = parks_[p];
    const Counter& tx_packets = counters_.ports[p][PortCounter::kTxPackets];
    // Offered again (Refused keeps the park up to date), unless they went meanwhile.
    if (buffer.n != 0 && tx_packets.Read() < park.done_at) FlushPort(p);
    if (!(parked_ & bit)) return;
    if (buffer.n == 0 || tx_packets.Read() >= park.done_at) return EndPark(p, now);
    if (now < park.last_taken + options_.park_window_cycles) return;
    // A window without taking any: the parked frames (the buffer's first) are dropped.
    const uint16_t left =
        static_cast<uint16_t>(std::min<uint64_t>(park.done_at - tx_packets.Read(), buffer.n));
    for (uint16_t i = 0; i < left; ++i) buffer.bytes -= buffer.pkts[i]->pkt_len;
    rte_pktmbuf_free_bulk(buffer.pkts, left);
    counters_.ports[p].Drop(TxDrop::kQueueFull, left);
    buffer.n = static_cast<uint16_t>(buffer.n - left);
    std::memmove(buffer.pkts, buffer.pkts + left, buffer.n * sizeof(rte_mbuf*));
    if (buffer.n == 0) pending_ &= ~bit;
    if (!park.took) stalled_ |= bit;
    EndPark(p, now);
  });
}

void Forwarder::DropParked() { DropWaiting(parked_, TxDrop::kQueueFull); }

}  // namespace hvswitch
