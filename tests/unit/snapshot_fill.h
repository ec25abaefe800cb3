// Snapshot values for tests that pin rendered output: distinct, non-zero, recognisable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "switch/control/bridge_snapshot.h"

namespace hvswitch {

// Gives every counter cell of `port` and its fdb_learned a distinct value, counting up
// from `v`. The device's no_mbuf comes after the tx drops: where it was before it became
// a reason, so that pinned outputs keep their numbers.
inline void FillDistinct(PortSnapshot& port, uint64_t& v) {
  PortTotals& t = port.totals;
  for (uint64_t& cell : t.counts) cell = v++;
  for (size_t r = 0; r < t.rx_drops.size(); ++r) {
    if (r != static_cast<size_t>(RxDrop::kNoMbuf)) t.rx_drops[r] = v++;
  }
  for (uint64_t& cell : t.tx_drops) cell = v++;
  t[RxDrop::kNoMbuf] = v++;
  port.fdb_learned = v++;
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
