// Datapath: what the workers read about the bridge. The port set (ethdev ids, queues,
// VLANs, MTUs, which worker polls what) is a PortTable the control thread publishes whole
// and replaces under RCU when a port is added or removed; link state, offload
// capabilities, learn limits and the FDB change in place. Written by the control thread;
// read by workers.
#pragma once

#include <rte_spinlock.h>

struct rte_mempool;
struct rte_ring;

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "ports/port_spec.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/idle_backoff.h"
#include "switch/datapath/ip_guard.h"
#include "switch/datapath/mcast_table.h"
#include "switch/datapath/port_guards.h"
#include "switch/datapath/vlan_table.h"

namespace hvswitch {

class SnoopQueue;

inline constexpr uint16_t kMaxBurst = 64;     // frames per Forwarder::HandleBurst call
inline constexpr uint16_t kMaxRxBurst = 256;  // frames per rx poll (the --burst limit)

struct DatapathPort {
  uint16_t eth_port = 0;
  uint16_t nb_txq = 1;
  // Fewer tx queues than workers: workers share queue (worker % nb_txq) under tx_locks.
  bool shared_tx = false;
  uint16_t mtu = 1500;            // largest frame payload (after the Ethernet/VLAN header)
  // Frames from the port may carry offload requests: a partial L4 checksum
  // (RTE_MBUF_F_RX_L4_CKSUM_NONE: a vhost-user guest's NEEDS_CSUM, left so by the PMD) or
  // a TCP super-frame (RTE_MBUF_F_RX_LRO: the guest's GSO).
  bool rx_offload = false;
  // A NIC with Tx offloads on: frames go through rte_eth_tx_prepare first.
  bool tx_prepare = false;
  // Received chains need their pkt_len summed again (ports/memif/memif_fixups.h).
  bool recount_chains = false;
  // It needs a transmit call every round (see tx_each_round below).
  bool tx_each_round = false;
  // Its frames can wait in a kernel's or NIC's queue (see rx_backpressure below).
  bool rx_backpressure = false;
  // It reports no link change: workers read its link while it is down (link_polled below).
  bool link_polled = false;
  // A burst the queue took only in part is offered again up to this often, while each
  // call sends something (PortSpec::tx_retries; Forwarder::FlushPort).
  uint16_t tx_retries = kDefaultTxRetries;
  // How long its receive rings hold frames arriving at line rate, in ns: a worker polling
  // it sleeps no longer (kRingWaits: the ring is a guest's, whose sender waits for room).
  uint32_t rx_hold_ns = kRingWaits;
  static constexpr uint32_t kRingWaits = ~uint32_t{0};
  // Its receive queues can wake a blocked worker (Port::rx_interrupts: configured so for
  // --idle=interrupt, and the device has receive interrupts).
  bool rx_interrupts = false;
  // Guard work its frames need (kGuardPolice, kGuardStorm, kGuardBpdu, kGuardIp,
  // kGuardMirrorPort; port_guards.h); its meters are PortTable::guards[port], its
  // bindings PortTable::ips.
  uint8_t guards = 0;
  // Bit s: mirror session s (PortTable::mirrors) copies the frames the port receives /
  // is sent. Derived by PortTable::Seal.
  uint8_t mirror_rx = 0, mirror_tx = 0;
};

// A mirror session (hvswitchctl mirror add), as the control thread sets it in the table:
// copies of what the `rx` ports receive and what the `tx` ports are sent go to port `to`
// (the analyser), which takes nothing else. Copies are the frames' bytes as they crossed
// the mirrored port (a guest's partial checksums stay partial), with an 802.1Q tag of
// `vlan` pushed in front when it is not 0.
struct MirrorSession {
  uint64_t rx = 0, tx = 0;  // 0 and 0: the slot is free
  uint16_t to = 0;
  uint16_t vlan = 0;
  bool active() const { return (rx | tx) != 0; }
  bool operator==(const MirrorSession&) const = default;
};

// The source MACs a secured port may use. mac=: the control thread writes the entries,
// then the count (release); workers read the count once per burst (acquire). A count of 0:
// any source. lock=1: until the port has a MAC its count is kUnclaimed, and the first
// source a worker sees claims the port with one compare-and-swap on `claim` (several
// workers may poll the port's queues: exactly one source wins), so that no frame from any
// other source passes from that moment. The control thread then publishes the claimed
// MAC as an ordinary allowed MAC, and arms the lock again when the guest goes.
struct PortMacs {
  static constexpr uint32_t kUnclaimed = ~uint32_t{0};
  static constexpr uint64_t kClaimed = uint64_t{1} << 63;  // set in `claim` once claimed

  std::atomic<uint32_t> count{0};
  std::array<std::atomic<uint64_t>, kMaxPortMacs> macs{};
  mutable std::atomic<uint64_t> claim{0};  // kClaimed | MAC; 0 while unclaimed

  // Worker: whether `mac` may be a source, with n = count as read for the burst (not 0).
  // On an unclaimed lock=1 port the first source claims it.
  bool Admits(uint64_t mac, uint32_t n) const {
    if (n != kUnclaimed) return Allows(mac, n);
    const uint64_t mine = mac | kClaimed;
    uint64_t current = claim.load(std::memory_order_relaxed);
    if (current == 0 && claim.compare_exchange_strong(current, mine, std::memory_order_relaxed)) {
      return true;
    }
    return current == mine;
  }
  // Any thread: whether `mac` is one of the n published MACs (a claim not yet published
  // is not one).
  bool Allows(uint64_t mac, uint32_t n) const {
    if (n == kUnclaimed) return false;
    for (uint32_t i = 0; i < n; ++i) {
      if (macs[i].load(std::memory_order_relaxed) == mac) return true;
    }
    return false;
  }

  // Control thread: publishes fixed MACs (none: any source).
  void Set(const std::vector<uint64_t>& allowed) {
    for (size_t i = 0; i < allowed.size() && i < kMaxPortMacs; ++i) {
      macs[i].store(allowed[i], std::memory_order_relaxed);
    }
    count.store(static_cast<uint32_t>(std::min(allowed.size(), kMaxPortMacs)),
                std::memory_order_release);
  }
  // Control thread: a lock=1 port without a MAC; the next source a worker sees claims it.
  void ArmLock() {
    claim.store(0, std::memory_order_relaxed);
    count.store(kUnclaimed, std::memory_order_release);
  }
  bool Armed() const { return count.load(std::memory_order_relaxed) == kUnclaimed; }
  // Control thread: the MAC a worker claimed on an armed port, published as its allowed
  // MAC; 0 when there is none yet (or the port is not armed).
  uint64_t PublishClaim() {
    if (!Armed()) return 0;
    const uint64_t claimed = claim.load(std::memory_order_relaxed);
    if (claimed == 0) return 0;
    Set({claimed & ~kClaimed});
    return claimed & ~kClaimed;
  }
};

struct RxQueueRef {
  uint16_t port;      // bridge port index
  uint16_t eth_port;  // ethdev id
  uint16_t queue;
};

// The ports as the workers see them, indexed by bridge port (a slot: a removed port's slot
// stays empty until a new port takes it). Immutable once published: the control thread
// builds a new table for every change, swaps it in and frees the old one after a grace
// period (WorkerQuiescence).
struct PortTable {
  std::array<DatapathPort, kMaxPorts> ports{};
  uint64_t present = 0;     // bit p set while slot p holds a port
  // Bit p set for a port that needs a transmit call every round (DatapathFlags::
  // tx_each_round: memif zero-copy frees sent frames only then, an 802.3ad bond sends its
  // LACPDUs from it): workers make an empty one (Forwarder::TxEachRound). Derived from
  // the ports by Seal.
  uint64_t tx_each_round = 0;
  // Bit p set for a port whose frames can wait in a kernel's or NIC's queue
  // (DatapathFlags::rx_backpressure): while a destination's queue is full, a worker parks
  // the frames of such a port it could not send and stops polling the port until they
  // went (Forwarder::OfferParked). Derived from the ports by Seal.
  uint64_t rx_backpressure = 0;
  // Bit p set for a port whose device reports no link change (DatapathFlags::link_polled:
  // memif): while its bit in Datapath::up_mask is clear, workers read its link at every
  // burst (Forwarder::LoadUpMask), so that a guest that connected is sent frames at once,
  // not from the control thread's next look. Derived from the ports by Seal.
  uint64_t link_polled = 0;
  uint16_t min_mtu = 1500;  // smallest port MTU: frames up to it skip the per-port check
  // The longest a worker sleeps between rounds that found nothing (--idle=sleep or
  // interrupt), in ns; 0: workers poll (--idle=poll). Kept from table to table.
  uint32_t idle_max_ns = 0;
  // --idle=interrupt: a worker whose every receive queue interrupts blocks once its sleeps
  // reach their longest. Kept from table to table.
  bool idle_interrupt = false;
  // Each worker's longest sleep: idle_max_ns, or less where a receive ring it polls would
  // overflow sooner at line rate (DatapathPort::rx_hold_ns). Derived by Seal.
  std::array<uint32_t, kMaxWorkers> max_sleep_ns{};
  // Bit w set for a worker that blocks when quiet (idle_interrupt, and every queue it polls
  // has DatapathPort::rx_interrupts; none at all too). Derived by Seal.
  uint64_t blocks = 0;
  VlanTable vlans;
  // Each port's policing and storm-control meter profiles (BuildGuards).
  std::array<GuardProfiles, kMaxPorts> guards{};
  // Each port's IP bindings (ip=; DatapathPort::guards has kGuardIp where there are some).
  std::array<IpBindings, kMaxPorts> ips{};
  // Mirror sessions by slot; kept from table to table (Configure leaves them), the ports'
  // part derived from them by Seal. Bit p of `analysers`: port p is a session's
  // destination: out of every VLAN (nothing is forwarded to it), its frames dropped.
  std::array<MirrorSession, kMaxMirrors> mirrors{};
  uint64_t analysers = 0;
  // Bit p set for a port whose transmits are tapped: copied for a mirror (mirror_tx), or
  // read for DHCP replies (ip_learn=1). Derived by Seal.
  uint64_t tx_tapped = 0;
  // The receive queues each worker polls. A queue stays with its worker for as long as
  // its port exists: two workers must never poll one queue.
  std::array<std::vector<RxQueueRef>, kMaxWorkers> rx;

  // VLANs, MTUs, transmit retries and presence from the slots' specs (null: empty slot). Ethdev ids, queues
  // and rx lists are filled in by whoever opened the ports.
  void Configure(const std::vector<const PortSpec*>& specs) {
    present = 0;
    vlans = VlanTable::Build(specs);
    min_mtu = kMaxMtu;
    for (size_t p = 0; p < specs.size() && p < kMaxPorts; ++p) {
      ips[p] = {};
      if (specs[p] == nullptr) {
        ports[p] = {};
        continue;
      }
      for (const IpPrefix& prefix : specs[p]->guards.ips) ips[p].Add(prefix);
      ips[p].learn = specs[p]->guards.ip_learn;
      present |= uint64_t{1} << p;
      ports[p].mtu = specs[p]->mtu;
      ports[p].tx_retries = specs[p]->tx_retries;
      ports[p].guards = GuardBits(specs[p]->guards);
      min_mtu = std::min(min_mtu, specs[p]->mtu);
    }
  }
  // Every slot holds a port: specs[p] is port p's.
  void Configure(const std::vector<PortSpec>& specs) { Configure(SpecSlots(specs)); }
  // Once the slots' ports are filled in: the masks derived from them.
  // After Configure: the mirror sessions' ports too (a session's ports that are gone
  // from the table are left out).
  void Seal() {
    tx_each_round = rx_backpressure = link_polled = 0;
    for (size_t p = 0; p < kMaxPorts; ++p) {
      if (!((present >> p) & 1)) continue;
      if (ports[p].tx_each_round) tx_each_round |= uint64_t{1} << p;
      if (ports[p].rx_backpressure) rx_backpressure |= uint64_t{1} << p;
      if (ports[p].link_polled) link_polled |= uint64_t{1} << p;
    }
    SealMirrors();
    tx_tapped = 0;
    for (size_t p = 0; p < kMaxPorts; ++p) {
      // A learning port's transmits are read for DHCP replies, an analyser's never.
      if (ports[p].mirror_tx != 0 ||
          (ports[p].guards & (kGuardIpLearn | kGuardMirrorPort)) == kGuardIpLearn) {
        tx_tapped |= uint64_t{1} << p;
      }
    }
    blocks = 0;
    for (size_t w = 0; w < kMaxWorkers; ++w) {
      max_sleep_ns[w] = idle_max_ns;
      bool interrupts = idle_interrupt;
      for (const RxQueueRef& q : rx[w]) {
        max_sleep_ns[w] = std::min(max_sleep_ns[w], ports[q.port].rx_hold_ns);
        interrupts = interrupts && ports[q.port].rx_interrupts;
      }
      if (interrupts && max_sleep_ns[w] != 0) blocks |= uint64_t{1} << w;
    }
  }
  // The ports' part of the mirror sessions: their session bits; an analyser out of every
  // VLAN (Configure put it back in from its spec), its frames dropped, and never retried
  // or waited for, so that a slow analyser slows no mirrored port (its drops are its own).
  void SealMirrors() {
    analysers = 0;
    for (size_t p = 0; p < kMaxPorts; ++p) {
      ports[p].mirror_rx = ports[p].mirror_tx = 0;
      ports[p].guards &= static_cast<uint8_t>(~(kGuardMirrorPort | kGuardMirrorRx));
    }
    for (size_t s = 0; s < kMaxMirrors; ++s) {
      const MirrorSession& m = mirrors[s];
      if (!m.active() || !((present >> m.to) & 1)) continue;
      for (size_t p = 0; p < kMaxPorts; ++p) {
        if (((m.rx & present) >> p) & 1) ports[p].mirror_rx |= static_cast<uint8_t>(1u << s);
        if (((m.tx & present) >> p) & 1) ports[p].mirror_tx |= static_cast<uint8_t>(1u << s);
      }
      analysers |= uint64_t{1} << m.to;
    }
    for (size_t p = 0; p < kMaxPorts; ++p) {
      if (!((analysers >> p) & 1)) continue;
      ports[p].guards |= kGuardMirrorPort;
      ports[p].tx_retries = 0;
      ports[p].mirror_rx = ports[p].mirror_tx = 0;  // copies of copies: never
    }
    for (size_t p = 0; p < kMaxPorts; ++p) {
      if (ports[p].mirror_rx != 0) ports[p].guards |= kGuardMirrorRx;
    }
    if (analysers == 0) return;
    for (uint16_t v = 0; v < kVlans; ++v) {
      vlans.members[v] &= ~analysers;
      vlans.untagged[v] &= ~analysers;
    }
  }
  // What worker w does when quiet, as this table has it.
  IdleMode WorkerIdle(size_t w) const {
    if (max_sleep_ns[w] == 0) return IdleMode::kPoll;
    return (blocks >> w) & 1 ? IdleMode::kInterrupt : IdleMode::kSleep;
  }
};

struct Datapath {
  // Loaded by each worker once per poll round (acquire); see PortTable.
  std::atomic<const PortTable*> table{nullptr};
  const Fdb* fdb = nullptr;
  mutable std::array<std::array<rte_spinlock_t, kMaxWorkers>, kMaxPorts> tx_locks{};
  // Bit p set while port p's link is up (guest connected); written by the control thread.
  std::atomic<uint64_t> up_mask{0};
  // Bit p set while port p is shut (bpdu_guard=1 and it sent a BPDU): its frames are
  // dropped (shut) and none are sent to it. Set by the worker that saw the BPDU, cleared
  // by the control thread (hvswitchctl port enable, the port removed).
  mutable std::atomic<uint64_t> shut_mask{0};
  // Bit p set while port p completes partial L4 checksums itself (a vhost-user guest that
  // negotiated GUEST_CSUM, a NIC with the Tx offload) / segments TCP/IPv4 and TCP/IPv6
  // super-frames (GUEST_TSO4/6, NIC TSO); written by the control thread as peers change.
  std::atomic<uint64_t> csum_capable_mask{0};
  std::atomic<uint64_t> tso4_capable_mask{0};
  std::atomic<uint64_t> tso6_capable_mask{0};
  std::array<PortMacs, kMaxPorts> port_macs;
  // Bit p set while port p may not learn a new MAC (Fdb::Room): it has as many as its learn
  // limit allows, or it is beyond its FDB reserve and the table's shared rest is full (then
  // bit p of learn_full_mask is set too). Workers then count such frames instead of asking.
  std::atomic<uint64_t> learn_blocked_mask{0};
  std::atomic<uint64_t> learn_full_mask{0};
  // The control thread's clock in seconds, for FDB last-seen times.
  std::atomic<uint32_t> now_seconds{0};
  // Packet capture (hvswitchctl capture): bit p set while frames received from / sent to
  // port p are copied (rte_pcapng_copy, from capture_pool) into capture_ring for the
  // control thread to write. The ring and pool are set before any bit is.
  std::atomic<uint64_t> capture_rx_mask{0};
  std::atomic<uint64_t> capture_tx_mask{0};
  rte_ring* capture_ring = nullptr;
  rte_mempool* capture_pool = nullptr;
  // Mirror copies come from this pool (made before the first session is, kept after),
  // so that an analyser that holds them starves no port of buffers.
  rte_mempool* mirror_pool = nullptr;
  // IGMP/MLD snooping (--mcast_snooping=1): the group table, loaded (acquire) for frames
  // to a group address and replaced under RCU; null while snooping is off (they flood).
  std::atomic<const McastTable*> mcast{nullptr};
  // Copies of the frames the control thread parses (IGMP/MLD, ip_learn's DHCP and claims);
  // set before any table that needs it is published.
  SnoopQueue* snoop = nullptr;
};

}  // namespace hvswitch
