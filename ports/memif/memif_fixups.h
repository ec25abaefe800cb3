// What the data path does for DPDK 22.11's memif PMD, asked by the memif driver's
// DatapathFlags (ports/memif/memif_driver.cc):
//   - recount_chains: RecountChains below, on every received burst of a zero-copy port;
//   - tx_each_round: a zero-copy port frees the frames it sent only when its transmit is
//     called again, so workers call it empty every round (Forwarder::TxEachRound).
// The PMD's control-path races have guards of their own beside this file: unmap_guard.h
// (munmap) and memseg_fd_guard.h (close).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

namespace hvswitch {

// DPDK 22.11's memif zero-copy receive leaves a chain's pkt_len at its first segment's
// length (it adds each next segment before setting that segment's length).
inline void RecountChains(rte_mbuf** pkts, uint16_t n) {
  for (uint16_t i = 0; i < n; ++i) {
    if (pkts[i]->nb_segs == 1) continue;
    uint32_t len = 0;
    for (const rte_mbuf* seg = pkts[i]; seg != nullptr; seg = seg->next) len += seg->data_len;
    pkts[i]->pkt_len = len;
  }
}

}  // namespace hvswitch
