// BridgeSnapshot: a reader's copy of everything the bridge counts, summed over workers.
// Plain data, so metric rendering and the CLI can be tested without DPDK.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ports/port.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/idle_backoff.h"
#include "switch/control/ip_learning.h"
#include "switch/control/mcast_snooping.h"
#include "switch/control/mirror_spec.h"
#include "switch/control/vxlan_snapshot.h"

namespace hvswitch {

struct PortSnapshot {
  uint16_t index = 0;  // bridge port (FDB entries name it)
  std::string name, type, mac, path;
  std::string spec;  // as the port was given, in the --port grammar
  std::vector<std::string> ip_bindings;  // ip=, as written back: "10.0.0.5", "2001:db8::/64"
  // ip_learn=1: what it learned, from where ("dhcp", "arp", "nd"), and the seconds left of
  // a lease (0: until the port goes).
  struct Learned {
    std::string address, source;
    uint32_t expires_in;
  };
  std::vector<Learned> ip_learned;
  bool up = false;
  bool shut = false;  // bpdu_guard=1 shut it (Datapath::shut_mask)
  // The mirror sessions whose copies it takes (it takes nothing else); empty: none.
  std::vector<std::string> analyser_of;
  uint32_t mtu = 0;
  // Counted by the workers, except the device's rx drops (kMissed, kRxError, kNoMbuf).
  PortTotals totals;
  uint64_t quota = 0;           // buffers in the port's own pool (0: the shared pool)
  uint64_t buffers_in_use = 0;  // of them, out of the pool now
  uint64_t fdb_learned = 0;  // current learned MACs on the port
  std::vector<QueueStat> queue_stats;  // the device's own, per queue
  std::optional<BondState> bond;       // type=bond: its mode and members
};

struct CoreSnapshot {
  unsigned cpu = 0;
  std::array<uint64_t, kCoreCounters> counts{};             // by CoreCounter
  std::array<uint64_t, kBurstBuckets.size()> rx_bursts{};  // by size (kBurstBuckets)
  // Its longest sleep between rounds that find nothing (PortTable::max_sleep_ns); 0: it
  // polls (--idle=poll, or a receive ring too small to sleep on at all).
  uint32_t max_sleep_ns = 0;
  // What it does when quiet (PortTable::WorkerIdle): interrupt only where every queue it
  // polls can wake it.
  IdleMode mode = IdleMode::kPoll;

  uint64_t& operator[](CoreCounter c) { return counts[static_cast<size_t>(c)]; }
  uint64_t operator[](CoreCounter c) const { return counts[static_cast<size_t>(c)]; }
};

// A mirror session's counts, summed over the workers (WorkerCounters::mirrors): copies of
// received and of sent frames handed to its analyser, and frames it could not copy.
struct MirrorTotals {
  uint64_t rx = 0, tx = 0, failed = 0;
  MirrorTotals& operator-=(const MirrorTotals& base) {
    rx -= base.rx;
    tx -= base.tx;
    failed -= base.failed;
    return *this;
  }
};

struct MirrorSnapshot {
  MirrorSpec spec;
  MirrorTotals counts;
};

struct BridgeSnapshot {
  std::vector<PortSnapshot> ports;
  std::vector<CoreSnapshot> cores;  // one per worker
  std::array<uint64_t, kSwitchStats> stats{};  // by SwitchStat: FDB, buffers, capture
  uint64_t tsc_hz = 0;  // for counters in TSC cycles exported as seconds
  VxlanTunnelsSnapshot vxlan;  // the VXLAN tunnels (type=vxlan ports), if any
  std::vector<MirrorSnapshot> mirrors;  // in slot order
  McastSnapshot mcast;  // IGMP/MLD snooping (enabled false: off)
  // ip_learn=1: what became of what learning ports claimed and were leased, by LearnEvent.
  std::array<uint64_t, kLearnEvents> ip_learn_events{};

  uint64_t& operator[](SwitchStat s) { return stats[static_cast<size_t>(s)]; }
  uint64_t operator[](SwitchStat s) const { return stats[static_cast<size_t>(s)]; }
};

}  // namespace hvswitch
