// Per-worker packet counters. Each worker writes only its own block with plain relaxed
// load+store (a mov/add/mov, no locked instruction); readers on other threads sum the
// blocks of all workers. Counters are never reset.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include "absl/strings/string_view.h"

#include "switch/datapath_limits.h"

namespace hvswitch {

class Counter {
 public:
  // Owner thread only.
  void Add(uint64_t n) { value_.store(value_.load(std::memory_order_relaxed) + n,
                                      std::memory_order_relaxed); }
  // Any thread.
  uint64_t Read() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// Why a received frame went nowhere. Workers count the reasons before kMissed; the
// device counts kMissed and kRxError itself (frames it dropped before a worker saw them,
// read from rte_eth_stats when a snapshot is taken).
enum class RxDrop : uint8_t {
  kMalformed, kVlan, kHairpin, kBadOffload, kSpoofed, kNoDestination,
  kMissed, kRxError, kCount
};
inline constexpr size_t kWorkerRxDrops = static_cast<size_t>(RxDrop::kMissed);
// Why a frame meant for a port was not sent.
enum class TxDrop : uint8_t { kQueueFull, kLinkDown, kMtu, kNoMbuf, kOffload, kVlan, kCount };

inline constexpr std::array<absl::string_view, static_cast<size_t>(RxDrop::kCount)>
    kRxDropNames = {"malformed", "vlan",           "hairpin", "bad_offload",
                    "spoofed",   "no_destination", "missed",  "rx_error"};
inline constexpr std::array<absl::string_view, static_cast<size_t>(TxDrop::kCount)>
    kTxDropNames = {"queue_full", "link_down", "mtu", "no_mbuf", "offload_refused", "vlan"};

struct alignas(64) PortCounters {
  Counter rx_packets, rx_bytes, tx_packets, tx_bytes;
  // Frames forwarded but not learned: their source was new and the port at its learn
  // limit / beyond its FDB reserve while the table's shared rest is full.
  Counter learn_limited, learn_table_full;
  // Transmit calls that sent something: packets / bursts is the mean tx burst size, and
  // for an interrupt-driven guest each burst may cost one notification.
  Counter tx_bursts;
  // Partial L4 checksums of frames sent to the port: left to it (hw) or completed here;
  // TCP super-frames sent to it: passed whole (hw) or segmented here.
  Counter csum_hw, csum_sw, tso_hw, tso_sw;
  std::array<Counter, kWorkerRxDrops> rx_drops;
  std::array<Counter, static_cast<size_t>(TxDrop::kCount)> tx_drops;

  void Drop(RxDrop reason, uint64_t n) { rx_drops[static_cast<size_t>(reason)].Add(n); }
  void Drop(TxDrop reason, uint64_t n) { tx_drops[static_cast<size_t>(reason)].Add(n); }
};

// Receive bursts by size: bucket b counts bursts of up to kBurstBuckets[b] frames (and
// more than the bucket before).
inline constexpr std::array<uint16_t, 9> kBurstBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256};

// The bucket of a burst of n (1 <= n <= 256) frames.
inline size_t BurstBucket(uint16_t n) {
  return n <= 1 ? 0 : static_cast<size_t>(32 - __builtin_clz(static_cast<unsigned>(n - 1)));
}

struct WorkerCounters {
  std::array<PortCounters, kMaxPorts> ports;
  // TSC cycles of poll rounds that received something (busy) or nothing (idle).
  alignas(64) Counter busy_cycles;
  Counter idle_cycles;
  // Frames received, and receive calls that returned frames, by size.
  Counter rx_packets;
  std::array<Counter, kBurstBuckets.size()> rx_bursts;
  // Frames a capture missed: no buffer for the copy, or its ring full.
  Counter capture_missed;
  // Learn requests lost because the worker's learn ring was full (the source asks again).
  Counter learn_queue_drops;
};

// A plain sum over workers, taken by a reader.
struct PortTotals {
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0, learn_limited = 0,
           learn_table_full = 0, tx_bursts = 0, csum_hw = 0, csum_sw = 0, tso_hw = 0,
           tso_sw = 0;
  std::array<uint64_t, static_cast<size_t>(RxDrop::kCount)> rx_drops{};
  std::array<uint64_t, static_cast<size_t>(TxDrop::kCount)> tx_drops{};

  void AddFrom(const PortCounters& c) {
    rx_packets += c.rx_packets.Read();
    rx_bytes += c.rx_bytes.Read();
    tx_packets += c.tx_packets.Read();
    tx_bytes += c.tx_bytes.Read();
    learn_limited += c.learn_limited.Read();
    learn_table_full += c.learn_table_full.Read();
    tx_bursts += c.tx_bursts.Read();
    csum_hw += c.csum_hw.Read();
    csum_sw += c.csum_sw.Read();
    tso_hw += c.tso_hw.Read();
    tso_sw += c.tso_sw.Read();
    for (size_t i = 0; i < c.rx_drops.size(); ++i) rx_drops[i] += c.rx_drops[i].Read();
    for (size_t i = 0; i < tx_drops.size(); ++i) tx_drops[i] += c.tx_drops[i].Read();
  }

  // What was counted since `base` was taken.
  PortTotals& operator-=(const PortTotals& base) {
    rx_packets -= base.rx_packets;
    rx_bytes -= base.rx_bytes;
    tx_packets -= base.tx_packets;
    tx_bytes -= base.tx_bytes;
    learn_limited -= base.learn_limited;
    learn_table_full -= base.learn_table_full;
    tx_bursts -= base.tx_bursts;
    csum_hw -= base.csum_hw;
    csum_sw -= base.csum_sw;
    tso_hw -= base.tso_hw;
    tso_sw -= base.tso_sw;
    for (size_t i = 0; i < rx_drops.size(); ++i) rx_drops[i] -= base.rx_drops[i];
    for (size_t i = 0; i < tx_drops.size(); ++i) tx_drops[i] -= base.tx_drops[i];
    return *this;
  }
};

}  // namespace hvswitch
