// Snapshot values for tests that pin rendered output: distinct, non-zero, recognisable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "switch/control/bridge_snapshot.h"

namespace hvswitch {

// Counters added after the outputs were pinned: they take values 700 above the port's
// first (not from the count), so that pinned outputs keep their numbers.
inline constexpr PortCounter kLaterCounters[] = {PortCounter::kTxRetries,
                                                 PortCounter::kTxRetryCycles,
                                                 PortCounter::kRxPauses,
                                                 PortCounter::kRxPauseCycles,
                                                 PortCounter::kCpuCycles,
                                                 PortCounter::kSnoopLimited,
                                                 PortCounter::kAnnouncements};

// Receive drop reasons added after the outputs were pinned: 800 above the port's first.
inline constexpr RxDrop kLaterRxDrops[] = {RxDrop::kSpoofedIp, RxDrop::kMirrorPort};

// Histograms added after the outputs were pinned: a few non-empty buckets (the overflow
// among them) and a sum, from the port's first value.
inline void FillHistograms(PortSnapshot& port, uint64_t first) {
  for (HistogramTotals& h : port.totals.histograms) {
    h = {};
    h.buckets[3] = 10;               // <= 1 us
    h.buckets[4] = 80 + first % 7;   // <= 2 us
    h.buckets[8] = 9;                // <= 50 us
    h.buckets[kHistogramBounds] = 1;  // > 10 ms
    h.sum_ns = 100 * first;
  }
}

// Gives every counter cell of `port` and its fdb_learned a distinct value, counting up
// from `v`. The device's no_mbuf comes after the tx drops: where it was before it became
// a reason, so that pinned outputs keep their numbers; so do kLaterCounters.
inline void FillDistinct(PortSnapshot& port, uint64_t& v) {
  PortTotals& t = port.totals;
  const uint64_t first = v;
  for (size_t c = 0; c < t.counts.size(); ++c) {
    bool later = false;
    for (size_t l = 0; l < std::size(kLaterCounters); ++l) {
      if (c == static_cast<size_t>(kLaterCounters[l])) {
        t.counts[c] = first + 700 + l;
        later = true;
      }
    }
    if (!later) t.counts[c] = v++;
  }
  for (size_t r = 0; r < t.rx_drops.size(); ++r) {
    bool later = false;
    for (size_t l = 0; l < std::size(kLaterRxDrops); ++l) {
      if (r == static_cast<size_t>(kLaterRxDrops[l])) {
        t.rx_drops[r] = first + 800 + l;
        later = true;
      }
    }
    if (!later && r != static_cast<size_t>(RxDrop::kNoMbuf)) t.rx_drops[r] = v++;
  }
  for (uint64_t& cell : t.tx_drops) cell = v++;
  t[RxDrop::kNoMbuf] = v++;
  port.fdb_learned = v++;
  FillHistograms(port, first);
}

// The switch-wide statistics the metrics tests expect.
inline void FillSwitchStats(BridgeSnapshot& snap) {
  snap[SwitchStat::kFdbEntries] = 4;
  snap[SwitchStat::kFdbLearned] = 6;
  snap[SwitchStat::kFdbMoves] = 2;
  snap[SwitchStat::kFdbAged] = 8;
  snap[SwitchStat::kFdbFlushed] = 9;
  snap[SwitchStat::kFdbStatic] = 15;
  snap[SwitchStat::kFdbStaticRefused] = 16;
  snap[SwitchStat::kFdbLockedRefused] = 21;
  snap[SwitchStat::kMbufs] = 4096;
  snap[SwitchStat::kMbufsInUse] = 1234;
}

}  // namespace hvswitch
