// Forwarder: one worker's bridge pipeline. A received burst is classified as a whole
// (source learning requests, bulk destination lookup, verdicts), then transmitted grouped
// by destination port, one tx burst per port. Worker thread only: no locks, no
// allocation, no exceptions; counters are the worker's own.
#pragma once

#include <array>
#include <cstdint>

#include "switch/counters.h"
#include "switch/datapath.h"
#include "switch/learn_queue.h"

struct rte_mbuf;

namespace hvswitch {

class Forwarder {
 public:
  Forwarder(const Datapath& datapath, uint16_t txq, WorkerCounters& counters,
            LearnQueue& learn)
      : datapath_(datapath), txq_(txq), counters_(counters), learn_(learn) {}

  // Takes ownership of n <= kMaxBurst mbufs received on bridge port `in_port`.
  void HandleBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n);

 private:
  void Enqueue(uint16_t port, rte_mbuf* m) {
    TxBuffer& buffer = tx_[port];
    buffer.pkts[buffer.n++] = m;
    pending_ |= uint64_t{1} << port;
  }
  // Looks up keys[0..n), asking the FDB once per run of equal consecutive keys (a burst
  // from one guest mostly carries one or two conversations). Same contract as
  // Fdb::LookupBulk.
  uint64_t LookupRuns(const uint64_t* keys, uint16_t n, uint16_t* ports,
                      int32_t* positions = nullptr) const;
  void Flood(uint16_t in_port, uint64_t up_mask, rte_mbuf* m);
  void FlushPending(uint64_t up_mask);

  struct TxBuffer {
    uint16_t n = 0;
    rte_mbuf* pkts[kMaxBurst];
  };

  const Datapath& datapath_;
  const uint16_t txq_;
  WorkerCounters& counters_;
  LearnQueue& learn_;
  uint64_t pending_ = 0;  // ports with frames in tx_
  std::array<TxBuffer, kMaxPorts> tx_;
};

}  // namespace hvswitch
