// BridgeSnapshot: a reader's copy of everything the bridge counts, summed over workers.
// Plain data, so metric rendering and the CLI can be tested without DPDK.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ports/port.h"
#include "switch/counters.h"

namespace hvswitch {

struct PortSnapshot {
  uint16_t index = 0;  // bridge port (FDB entries name it)
  std::string name, type, mac, path;
  std::string spec;  // as the port was given, in the --port grammar
  bool up = false;
  uint32_t mtu = 0;
  // Counted by the workers, except rx_drops kMissed and kRxError: the device's.
  PortTotals totals;
  uint64_t rx_no_mbuf = 0;  // reported by the device
  uint64_t quota = 0;           // buffers in the port's own pool (0: the shared pool)
  uint64_t buffers_in_use = 0;  // of them, out of the pool now
  uint64_t fdb_learned = 0;  // current learned MACs on the port
  std::vector<QueueStat> queue_stats;  // the device's own, per queue
};

struct CoreSnapshot {
  unsigned cpu = 0;
  uint64_t busy_cycles = 0, idle_cycles = 0;
  uint64_t rx_packets = 0;
  std::array<uint64_t, kBurstBuckets.size()> rx_bursts{};  // by size (kBurstBuckets)
  uint64_t learn_queue_drops = 0;  // learn requests lost to a full learn ring
};

struct BridgeSnapshot {
  std::vector<PortSnapshot> ports;
  std::vector<CoreSnapshot> cores;  // one per worker
  uint64_t fdb_entries = 0;
  uint64_t fdb_learned = 0;
  uint64_t fdb_moves = 0;
  uint64_t fdb_aged = 0;
  uint64_t fdb_flushed = 0;
  uint64_t fdb_static = 0;
  uint64_t fdb_static_refused = 0;
  uint64_t fdb_locked_refused = 0;  // moves refused for a connected secured guest's MAC
  uint64_t mbufs = 0, mbufs_in_use = 0;  // the shared packet buffer pool
  uint64_t capture_missed = 0;  // frames a capture could not copy
};

}  // namespace hvswitch
