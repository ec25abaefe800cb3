// Backpressure for kernel and NIC ports (Forwarder::PausedSources): what a destination
// refuses from them is parked at the front of its transmit buffer and their polling
// paused, within bounds. Cold: FlushPort reaches it only for frames a destination
// refused; kept apart from tx_buffers.cc so that FlushPort's common path is compiled
// without sight of it.
#include <rte_cycles.h>
#include <rte_mbuf.h>

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
uint64_t Forwarder::Refused(uint16_t port, uint16_t sent, uint16_t n) {
  const uint64_t bit = uint64_t{1} << port;
  TxBuffer& buffer = tx_[port];
  Park& park = parks_[port];
  uint64_t bytes = 0;
  for (uint16_t i = sent; i < n; ++i) bytes += buffer.pkts[i]->pkt_len;
  if (sent != 0) stalled_ &= ~bit;  // it takes frames: alive, if slow
  const bool may_park = table_->rx_backpressure != 0 && table_->ports[port].tx_retries != 0 &&
                        !(stalled_ & bit);
  if (!may_park && !(parked_ & bit)) {  // as without backpressure: a stalled guest's case
    rte_pktmbuf_free_bulk(buffer.pkts + sent, n - sent);
    counters_.ports[port].Drop(TxDrop::kQueueFull, n - sent);
    return bytes;
  }
  // The port's count of sent frames once this call's are counted.
  const uint64_t tx_packets = counters_.ports[port][PortCounter::kTxPackets].Read() + sent;
  // Parked frames were first in the buffer: some are among the refused ones.
  const bool parked_left = (parked_ & bit) && tx_packets < park.done_at;
  if (parked_left && sent == 0 && park.done_at - tx_packets == n) {
    buffer.n = n;  // the parked frames again, alone and untouched: the common case here
    buffer.bytes = bytes;
    pending_ |= bit;
    return bytes;
  }
  const uint64_t now = rte_rdtsc();
  if ((parked_ & bit) && !parked_left) EndPark(port, now);  // its frames went meanwhile
  uint64_t sources = 0, kept_bytes = 0, refused_sources = 0;
  uint16_t kept = 0, dropped = 0;
  rte_mbuf* drop[kMaxBurst];
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
      drop[dropped++] = m;
    }
  }
  if (dropped != 0) {
    rte_pktmbuf_free_bulk(drop, dropped);
    counters_.ports[port].Drop(TxDrop::kQueueFull, dropped);
  }
  if (kept == 0) {
    if (parked_ & bit) EndPark(port, now);
    return bytes;
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
  return bytes;
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

void Forwarder::OfferParked(uint64_t now) {
  up_mask_ = LoadUpMask();
  LoadTxTaps();
  // A port beyond its budget is polled again. Its parked frames stay first in line while
  // offered alone (Refused's common case) until they go or their window passes; a refusal
  // that also holds later frames drops every frame of the port in it (MayPause).
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
  // The transmit taps of what went made copies for analysers: they go now, not after the
  // next burst.
  FlushMirrorCopies();
}

void Forwarder::DropParked() { DropWaiting(parked_, TxDrop::kQueueFull); }

}  // namespace hvswitch
