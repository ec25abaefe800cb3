// Forwarder: one worker's bridge pipeline. A received burst is classified as a whole
// (VLAN, source learning requests, bulk destination lookup, verdicts), then transmitted
// grouped by destination port. With a flush interval, frames for a port wait up to that
// long (or until a burst's worth is queued) so that guests get fewer, fuller bursts and
// fewer notifications. Worker thread only: no locks (except tx queues shared by workers),
// no allocation, no exceptions; counters are the worker's own.
// Where its parts live: forwarder.cc the pipeline (HandleBurst and its stages, over a
// Burst: burst.h), egress.cc the way frames reach their ports' buffers, tx_buffers.cc the
// buffers and their flushing, capture_tap.cc the capture copies.
#pragma once

#include <rte_ether.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "offload/egress_offload.h"
#include "switch/datapath/burst.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/mcast_table.h"
#include "switch/datapath/snoop_queue.h"
#include "switch/datapath/verdict.h"

struct rte_mbuf;

namespace hvswitch {

// A port's snooping budget (ForwarderOptions): enough for a guest's reports to a general
// query and its addresses coming up at once, and a steady rate far above any honest
// guest's, far below what would keep the control thread from the others'.
inline constexpr uint32_t kSnoopBurst = 32;
inline constexpr uint64_t kSnoopsPerSecond = 1000;

struct ForwarderOptions {
  uint16_t worker = 0;        // picks this worker's tx queue on each port
  uint64_t flush_cycles = 0;  // TSC cycles a frame may wait for company; 0: send at once
  uint16_t flush_batch = 32;  // a port with this many frames waiting is sent at once
  // How long a transmit retry waits for a ring that took part of a burst to take more
  // (TSC cycles; kTxRetryWindowUs in the daemon); 0: a retry that sends nothing ends them.
  uint64_t retry_window_cycles = 0;
  // How long parked frames wait for their destination to take one of them (TSC cycles;
  // kParkWindowUs in the daemon); 0: they are offered once more, then dropped.
  uint64_t park_window_cycles = 0;
  // A port is paused for backpressure at most pause_budget_cycles of every
  // pause_period_cycles (kPauseBudgetUs, kPausePeriodUs in the daemon); period 0: no limit.
  uint64_t pause_period_cycles = 0;
  uint64_t pause_budget_cycles = 0;
  // What a port may have copied for the control thread's snooping (IGMP/MLD, DHCP
  // replies, address claims): a burst of this many, then this many a second.
  uint32_t snoop_burst = kSnoopBurst;
  uint64_t snoops_per_second = kSnoopsPerSecond;
};

// A slow guest frees a descriptor every few hundred nanoseconds (a DPDK guest doing work
// per frame) to a few microseconds; a retry made at once (~50 ns) mostly finds none yet.
// So a retry may wait this long for the ring to take more: a slow-but-alive guest is
// followed at its pace, and what it costs is bounded by tx_retries windows a burst.
inline constexpr uint32_t kTxRetryWindowUs = 2;

// Frames from a kernel or NIC port that a full destination refused are parked, and the
// port is not polled until the destination took them: its next frames wait in its own
// queue. They wait while the destination takes one of them at least this often: a slow
// guest's ring frees a descriptor within microseconds, a stalled one never; a kernel
// port's queue (a tap's 500 frames) or a NIC's ring (1024) holds this long of traffic at
// several Mpps, and a stalled guest costs its sources one such pause, then none.
inline constexpr uint32_t kParkWindowUs = 100;

// While a port is paused, its frames for every destination wait, not only those for the
// slow one: a guest slower than its traffic (or one that takes a frame just often enough)
// could hold a NIC or the host's port paused for everyone. So a port is paused at most
// half of every millisecond; beyond that, what a destination refuses from it is dropped
// as before, until the next millisecond.
inline constexpr uint32_t kPausePeriodUs = 1000;
inline constexpr uint32_t kPauseBudgetUs = 500;

inline constexpr uint16_t kNoSource = UINT16_MAX;

class Forwarder {
 public:
  Forwarder(const Datapath& datapath, const ForwarderOptions& options,
            WorkerCounters& counters, LearnQueue& learn)
      : datapath_(datapath), table_(datapath.table.load(std::memory_order_acquire)),
        options_(options), counters_(counters), learn_(learn) {}

  // The port table to forward with from now on. Frames still waiting for a flush were
  // meant for the ports of the previous table: the worker flushes them first (FlushAll)
  // while that table is safe to use. What still waits when the table changed after that
  // look (a port of it may be gone, or its slot taken) is dropped, counted as link_down.
  void Use(const PortTable* table) {
    if (table != table_ && pending_ != 0) DropPending(pending_);
    if (table != table_ && parked_ != 0) DropParked();
    if (table != table_) ip_ok_ = {};
    table_ = table;
  }

  // The TSC at the start of the receive call that returned the bursts handed over next:
  // their frames' residence (hvswitch_port_residence_seconds) is measured from it.
  void Received(uint64_t tsc) { received_ = tsc; }
  // Takes ownership of n <= kMaxBurst mbufs received on bridge port `in_port`.
  void HandleBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n);
  // Sends what waited past its deadline (`now`: TSC); the worker calls it every round.
  void FlushExpired(uint64_t now);
  // Sends everything waiting.
  void FlushAll();
  // An empty transmit call for the ports in the table's tx_each_round: DPDK 22.11's memif
  // zero-copy transmit frees sent frames only when called again (whatever it still holds
  // when the peer goes is lost to its pool); an 802.3ad bond sends its LACPDUs from it.
  void TxEachRound();
  bool HasPending() const { return pending_ != 0; }

  // Backpressure for kernel and NIC ports (PortTable::rx_backpressure). Frames of such a
  // port that a destination refused (its queue full after the retries) stay at the front
  // of the destination's transmit buffer (parked) instead of being dropped, and the port
  // is paused: the worker does not poll it, so that its next frames wait in its own
  // queue (the kernel's, the NIC's), until every destination it has frames parked at
  // took them. Whatever else is queued for such a destination goes behind them, so no
  // frame overtakes a parked one. Refused frames of other ports are dropped as before
  // (queue_full); so are all for a port with tx_retries=0 (the operator does not want it
  // waited for) or that took none of the last frames parked for it (stalled: a guest that
  // stopped draining pauses no port again until it takes frames).
  // Ports the worker must not poll now.
  uint64_t PausedSources() const { return paused_; }
  bool HasParked() const { return parked_ != 0; }
  // Offers parked frames to their destinations again (`now`: TSC; the worker calls it
  // every round while some are parked). A destination that took none of them for
  // options_.park_window_cycles gets them dropped (queue_full); sources whose frames all
  // went are polled again.
  void OfferParked(uint64_t now);
  // Drops what waits for destinations with parked frames (queue_full) and resumes every
  // paused port: the worker calls it, after FlushAll, before it lets go of the table the
  // frames were meant for.
  void DropParked();

 private:
  struct TxBuffer {
    uint16_t n = 0;
    uint64_t bytes = 0;
    uint64_t deadline = 0;  // TSC; set when the first frame enters an empty buffer
    // TSC: received_ when the first frame entered the empty buffer. Frames left in it
    // (parked) keep it: measured from the receive of the buffer's first frame, theirs or
    // an earlier one's, never from an offer.
    uint64_t oldest_rx = 0;
    rte_mbuf* pkts[kMaxBurst];
  };
  // A destination's parked frames (PausedSources): the first of its transmit buffer.
  struct Park {
    bool took = false;        // it took parked frames since the park began
    uint64_t sources = 0;     // the ports whose frames are parked
    uint64_t last_taken = 0;  // TSC: the park began, or it last took parked frames
    uint64_t done_at = 0;     // its kTxPackets count once every parked frame went
  };
  // The pipeline's stages (forwarder.cc), in HandleBurst's order. Always inlined into
  // it: the burst's state stays in its registers and stack frame (a Burst& or Tally&
  // passed to a real call would send every count through memory).
  // Port fix-ups (memif chains) and the receive capture.
  [[gnu::always_inline]] inline void FixUp(uint16_t in_port, rte_mbuf** pkts, uint16_t n);
  // VLAN and encapsulation of every frame, grouped into runs; runts and frames of a VLAN
  // the port does not carry are dropped (with ip= or ip_learn=1, frames from addresses
  // the port may not use too); received frames counted. Instantiated six times so that
  // ports without offload requests or IP bindings pay nothing for them.
  template <bool kOffloadPort, IpMode kIp>
  [[gnu::always_inline]] inline void Classify(Burst& b, rte_mbuf** pkts, uint16_t n);
  // Every run's source and destination in the FDB (the last single run's reused).
  [[gnu::always_inline]] inline void LookUp(Burst& b);
  // Link, capture and learn masks, clocks, the port's allowed sources.
  [[gnu::always_inline]] inline void ReadSharedState(Burst& b);
  // Drops a run whose source is not a station's or not allowed on the port.
  [[gnu::always_inline]] inline bool AdmitSource(const Burst& b, const Run& run, rte_mbuf** frames,
                                                 Tally& tally);
  // Asks to learn (or refreshes) the run's source, or counts why it is not learned.
  [[gnu::always_inline]] inline void LearnSource(Burst& b, const Run& run, uint16_t r,
                                                 Tally& tally);
  [[gnu::always_inline]] inline Verdict DecideRun(const Burst& b, const Run& run, uint16_t r) const;
  // Sends the run where the verdict says: one port, a flood, or nowhere (hairpin).
  [[gnu::always_inline]] inline void Dispatch(const Burst& b, const Run& run, rte_mbuf** frames,
                                              Verdict verdict, Tally& tally);
  [[gnu::always_inline]] inline void CountDrops(PortCounters& in, const Tally& tally);
  // Counts the announcements (announce.h) among frames to broadcast or all-nodes; out of
  // line, as the guardrails below.
  void CountAnnouncements(PortCounters& in, rte_mbuf* const* frames, uint16_t len);
  // Guardrails (port_guards.h), out of line: only ports with guards call them. They take
  // no Burst or Tally (whose address, handed to a real call, would keep their counts in
  // memory for the whole pipeline), and give back what they dropped.
  // A burst dropped whole: counted received, dropped for kReason (shut: a port that
  // bpdu_guard shut; mirror_port: a mirror's destination).
  template <RxDrop kReason>
  [[gnu::noinline, gnu::cold]] void DropBurst(PortCounters& in, rte_mbuf** pkts, uint16_t n);
  // A run about to flood: to a reserved group address, dropped (a BPDU shuts a
  // bpdu_guard=1 port); else its first `pass` frames are what the port's storm meter for
  // their class lets pass, the rest freed.
  struct FloodGuard {
    uint16_t pass, storm, reserved;
  };

  [[gnu::noinline]] FloodGuard GuardFlood(uint16_t in_port, PortCounters& in, const Run& run,
                                          rte_mbuf** frames);
  // IGMP/MLD snooping (mcast_dispatch.cc): the first `len` frames of a run to a group
  // address other than broadcast, by `mcast`: IGMP/MLD queries flooded and reports sent
  // to the router ports (both copied for the control thread), other frames to a snooped
  // group's members and router ports, the rest flooded. Returns the frames that had
  // nowhere to go (freed; counted no_destination by the caller).
  [[gnu::noinline]] uint16_t DispatchGroup(const McastTable& mcast, uint16_t in_port,
                                           PortCounters& in, const Run& run,
                                           rte_mbuf** frames, uint16_t len);
  // A classified burst's arrays and counts, for Police (which must not take the Burst).
  struct BurstView {
    rte_mbuf** frames;
    Run* runs;
    uint64_t* keys;
    FdbTable::Probe* probes;
  };
  struct BurstShape {
    uint16_t nb_frames, nb_runs, nb_src_lookups, nb_dst_lookups;
    uint64_t src_known, dst_known;
  };
  // The classified burst (`frames`, `bytes`) through the port's police meters, frames then
  // bytes: kWhole when it fits (the tokens taken), kFramesPaid when its frames did and its
  // bytes not (those taken), kNone when its frames did not (nothing taken).
  enum class PoliceFit : uint8_t { kWhole, kFramesPaid, kNone };
  [[gnu::noinline]] PoliceFit PoliceBurst(uint16_t in_port, uint16_t frames, uint64_t bytes);
  // A burst that did not fit whole, frame by frame (its frames' tokens taken already when
  // `frames_paid`): what exceeds freed (policed) and the runs and their look-ups closed
  // up over it; returns the burst's new shape.
  [[gnu::noinline, gnu::cold]] BurstShape Police(uint16_t in_port, PortCounters& in,
                                                 const BurstView& burst, BurstShape shape,
                                                 bool frames_paid);
  // Sends now, or only what filled a burst (the rest waits for FlushExpired).
  [[gnu::always_inline]] inline void FlushByPolicy();

  // Egress (egress.cc): frames to their ports' transmit buffers, out of line.
  // A run's frames to `port`: the common case (same encapsulation, within the MTU) whole,
  // inline (a copy of pointers, a frame's run mostly being that frame alone); the rest
  // frame by frame (UnicastFrames).
  [[gnu::always_inline]] inline void UnicastRun(uint16_t port, const Run& run, rte_mbuf** frames);
  void UnicastFrames(uint16_t port, const Run& run, rte_mbuf** frames, bool retag);
  // One frame of a run to `port`: MTU check, tag change (`retag`), queued.
  void UnicastFrame(uint16_t port, rte_mbuf* m, const Run& run, bool retag);
  // The ports a frame of `vlan` from `in_port` floods to: up, carrying it, not in_port.
  uint64_t FloodTargets(uint16_t in_port, uint16_t vlan) const {
    return table_->vlans.members[vlan] & up_mask_ & ~(uint64_t{1} << in_port);
  }
  // A frame of `run` to `targets` (not 0): MTU checks, tag changes, queued.
  void Flood(uint64_t targets, const Run& run, rte_mbuf* m);
  // The same for a frame whose offload requests may need settling first (run.offload).
  void FloodFrame(uint64_t targets, const Run& run, rte_mbuf* m, PortCounters& in) {
    if (!run.offload) return Flood(targets, run, m);
    rte_mbuf* out[kMaxSegments];
    const uint16_t nb = ResolveOffload(targets, m, in, out);
    for (uint16_t k = 0; k < nb; ++k) Flood(targets, run, out[k]);
  }
  // Settles a frame's offload requests for all of `targets` at once (copies of a flood
  // never diverge) and counts how; returns the frames to send in `out` (kMaxSegments):
  // the frame or its segments. 0 when it cannot be sent: freed and counted.
  uint16_t ResolveOffload(uint64_t targets, rte_mbuf* m, PortCounters& in, rte_mbuf** out);
  // Sends `targets` the same frame as one mbuf whose reference count covers them all.
  void Share(uint64_t targets, rte_mbuf* m);

  // Transmit buffers (tx_buffers.cc): one per port, sent by FlushPort.
  void Enqueue(uint16_t port, rte_mbuf* m);
  // Inline (below): called for every unicast run.
  [[gnu::always_inline]] inline void EnqueueRun(uint16_t port, rte_mbuf** frames, uint16_t n,
                                                uint64_t bytes);
  void FlushPort(uint16_t port);
  // What FlushPort could not send: tx_[port].pkts[sent..n) (the buffer emptied). Those
  // of kernel or NIC ports are parked, the rest freed and counted (queue_full). Returns
  // their bytes (parked ones are counted once they are sent).
  [[gnu::noinline, gnu::cold]] uint64_t Refused(uint16_t port, uint16_t sent, uint16_t n);
  // The bridge port whose device is ethdev `eth_port`, if it is a kernel or NIC port;
  // kNoSource otherwise.
  uint16_t BackpressureSource(uint16_t eth_port) const;
  // Ends the park at `port` (its frames went or were dropped) and resumes the sources
  // that have frames parked nowhere else.
  void EndPark(uint16_t port, uint64_t now);
  // Whether `source` may be paused (or stay paused) at `now`: within its budget.
  bool MayPause(uint16_t source, uint64_t now);
  // Polls `sources` (paused) again: their pauses counted and charged to their budgets.
  void Resume(uint64_t sources, uint64_t now);
  // Enqueue and EnqueueRun for a buffer without room: flushed first; what parked frames
  // still leave no room for is dropped.
  [[gnu::noinline, gnu::cold]] void EnqueueFull(uint16_t port, rte_mbuf** frames, uint16_t n,
                                                uint64_t bytes);
  // Offers n frames a partial transmit left again while the queue keeps taking some: at
  // most dp.tx_retries retries, each waiting up to options_.retry_window_cycles for the
  // queue to take frames (one that does not ends them); counts the retries and their
  // cycles; returns how many went.
  [[gnu::noinline, gnu::cold]] uint16_t RetryTx(const DatapathPort& dp, uint16_t queue,
                                                rte_mbuf** pkts, uint16_t n, PortCounters& out);
  // Frees what waits for `ports`, counted as link_down.
  void DropPending(uint64_t ports);
  // Frees what waits for `ports`, counted as `why`, and ends their parks.
  void DropWaiting(uint64_t ports, TxDrop why);

  // Mirroring (mirror_tap.cc): copies of a mirrored port's frames for its sessions'
  // analysers (PortTable::mirrors), out of line: only mirrored ports call them.
  // What the port received, as it came (FixUp, beside the receive capture).
  [[gnu::noinline]] void MirrorReceived(uint8_t sessions, rte_mbuf* const* pkts, uint16_t n);
  // FlushPort, before its transmit: copies of the frames it is about to send, one set per
  // session (into mirror_copies_); after it, the first `sent` go to the analysers, the
  // rest are freed.
  [[gnu::noinline]] void CopyForMirrors(uint8_t sessions, rte_mbuf* const* pkts, uint16_t n);
  [[gnu::noinline]] void MirrorSent(uint8_t sessions, uint16_t sent);
  // Copies of `pkts` for session `slot` (its tag pushed) from the mirror pool, copies[i]
  // frame i's (null: it could not be copied); returns how many were. kAnalyserDown: none
  // made, the analyser is down.
  static constexpr uint16_t kAnalyserDown = UINT16_MAX;
  uint16_t CopyForMirror(uint16_t slot, rte_mbuf* const* pkts, uint16_t n, rte_mbuf** copies);
  // Of `frames` to mirror, `copied` were (CopyForMirror's answer for them or more): the
  // rest counted, as failures, or as the down analyser's link_down.
  void CountMirrored(uint16_t slot, uint16_t frames, uint16_t copied);
  // Copies to the session's analyser's transmit buffer (nulls skipped); one over its MTU
  // is dropped there.
  void EnqueueMirrored(uint16_t slot, rte_mbuf** copies, uint16_t n);
  // A burst that ends before its flush (every frame dropped): the copies of its frames
  // that wait for analysers go now, not a round later.
  void FlushMirrorCopies() {
    if (mirrored_) [[unlikely]] SendMirrorCopies();
  }
  [[gnu::noinline, gnu::cold]] void SendMirrorCopies();

  // A copy of `m` for the control thread (the snoop queue), charged to `port`'s budget
  // (snoop_offer.cc): a burst of ForwarderOptions::snoop_burst, then snoops_per_second,
  // per port and worker.
  // A guest sending IGMP/MLD reports or address claims without end (or a server sending
  // a learning port DHCP replies) takes no more of the queue, nor of the control thread,
  // than that; what is beyond it is counted (snoop_limited), the frame forwarded as ever.
  [[gnu::noinline, gnu::cold]] void OfferSnoop(uint16_t port, const rte_mbuf* m, uint16_t vlan,
                                               SnoopKind kind);

  // ip_learn=1 (ip_learn_tap.cc): what the control thread reads to bind addresses to a
  // learning port, copied to the snoop queue. A frame of `port` claiming an address
  // (ClaimsUnbound), from a MAC the port may use.
  [[gnu::noinline, gnu::cold]] void OfferClaim(uint16_t port, const rte_mbuf* m);
  // FlushPort, for a learning port: the DHCP server messages among the frames it is sent,
  // charged to the learning port.
  [[gnu::noinline]] void OfferDhcpReplies(uint16_t port, rte_mbuf* const* pkts, uint16_t n);

  // FlushPort's taps (a port in tx_taps_), before its transmit: mirror copies and DHCP
  // replies offered, capture copies made (into `captured`; returns how many); after it:
  // what of them the port's transmit decided.
  [[gnu::noinline, gnu::cold]] uint16_t TapSending(uint16_t port, const DatapathPort& dp,
                                                   rte_mbuf* const* pkts, uint16_t n,
                                                   rte_mbuf** captured);
  [[gnu::noinline, gnu::cold]] void TapSent(const DatapathPort& dp, uint16_t sent,
                                            rte_mbuf** captured, uint16_t nb_captured);

  // Capture (capture_tap.cc): copies frames of a captured port into the capture ring
  // (rx: as received; tx: the first `sent` of `copies`, the rest freed).
  void CaptureReceived(uint16_t port, rte_mbuf* const* pkts, uint16_t n);
  uint16_t CopyForCapture(uint16_t port, rte_mbuf* const* pkts, uint16_t n, rte_mbuf** copies,
                          bool rx);
  void EnqueueCaptured(rte_mbuf** copies, uint16_t n);

  // A port's transmit queue for this worker, and the queue's lock when workers share it
  // (else null).
  uint16_t TxQueue(const DatapathPort& dp) const {
    return options_.worker < dp.nb_txq ? options_.worker : options_.worker % dp.nb_txq;
  }
  rte_spinlock_t* TxLock(uint16_t port, const DatapathPort& dp, uint16_t queue) const {
    return dp.shared_tx ? &datapath_.tx_locks[port][queue] : nullptr;
  }
  // Ports that exist, are up and not shut. Read after the frames it decides for were
  // received: a link-polled port (memif) that is up in its device by then is up here.
  uint64_t LoadUpMask() const {
    const uint64_t shut = datapath_.shut_mask.load(std::memory_order_relaxed);
    const uint64_t up = datapath_.up_mask.load(std::memory_order_relaxed) & table_->present;
    const uint64_t polled = table_->link_polled & ~up;
    return (polled == 0 ? up : up | PolledLinksUp(polled)) & ~shut;
  }
  // Of `polled`, the ports whose device reads link up (until the control thread follows
  // and sets their bits, which ends these reads).
  uint64_t PolledLinksUp(uint64_t polled) const;

  // Per input port, what the FDB answered for its last run (VPP l2-learn's cached_key):
  // a later run with the same source or destination takes it instead of looking it up,
  // while the FDB's version stays the same (every change a look-up could see moves it
  // on: learning, moves, flushes, removals, ageing). A guest sends from one MAC, so its
  // runs skip the source look-up whatever their destination, and a steady conversation
  // skips both. The source is kept only while it is current on the port (nothing to
  // learn); its last-seen time is still refreshed, once per second of the FDB's clock.
  static constexpr uint32_t kNeverTouched = UINT32_MAX;  // not a time the FDB's clock reaches
  struct LastLookup {
    uint64_t version = ~uint64_t{0};
    // kEmpty: none (no frame's key: its bits 60-63 are 0).
    uint64_t src = FdbTable::kEmpty, dst = FdbTable::kEmpty;
    int32_t src_position = -1;  // the source's entry (for Touch)
    uint32_t touched = kNeverTouched;  // Burst::now_seconds when it was last refreshed
    uint16_t dst_port = 0;      // when dst_hit
    bool dst_hit = false;
  };

  const Datapath& datapath_;
  const PortTable* table_;
  const ForwarderOptions options_;
  std::array<LastLookup, kMaxPorts> last_{};
  // This worker's policing and storm meters, per port (their profiles: table_->guards).
  std::array<GuardMeters, kMaxPorts> meters_{};
  // Per port with ip=: the IPv4 source last found bound (network order; 0: none), which
  // the next frames are compared with first. Forgotten with the table it was found under.
  std::array<uint32_t, kMaxPorts> ip_ok_{};
  WorkerCounters& counters_;
  LearnQueue& learn_;
  uint64_t up_mask_ = 0;  // as read at the start of the current burst
  uint64_t capture_tx_ = 0;  // Datapath::capture_tx_mask, as read with up_mask_
  // Ports whose transmits are tapped (FlushPort): captured, or the table's tx_tapped.
  uint64_t tx_taps_ = 0;
  void LoadTxTaps() {
    capture_tx_ = datapath_.capture_tx_mask.load(std::memory_order_relaxed);
    tx_taps_ = capture_tx_ | table_->tx_tapped;
  }
  // MirrorSent queued copies for analysers during FlushAll's flushes: it flushes them too.
  bool mirrored_ = false;
  uint64_t now_ = 0;      // TSC at the start of the current burst, when flushing by time
  uint64_t received_ = 0;  // Received()
  uint64_t pending_ = 0;  // ports with frames in tx_
  std::array<TxBuffer, kMaxPorts> tx_;
  // Backpressure (PausedSources): destinations with parked frames, ports not polled
  // meanwhile and since when (TSC), destinations found stalled.
  uint64_t parked_ = 0;
  uint64_t paused_ = 0;
  uint64_t stalled_ = 0;
  std::array<Park, kMaxPorts> parks_;
  // Per port: its pause began (TSC); its budget's period began, and what it used of it.
  struct PauseBudget {
    uint64_t since = 0;
    uint64_t period_start = 0;
    uint64_t used = 0;
  };
  std::array<PauseBudget, kMaxPorts> pauses_{};
  // CopyForMirrors' copies of the frames FlushPort is sending, per session, until
  // MirrorSent (copies[i] frame i's, null: not copied), and how many places are filled
  // (kAnalyserDown: none, the analyser is down); an analyser is never mirrored, so its
  // FlushPort never reaches them.
  std::array<std::array<rte_mbuf*, kMaxBurst>, kMaxMirrors> mirror_copies_;
  std::array<uint16_t, kMaxMirrors> mirror_copied_{};
  // OfferSnoop's budget: one profile, configured at the first offer (it needs the TSC
  // rate), and a meter per port, configured at the port's first (bit set in
  // snoop_budgeted_).
  rte_meter_srtcm_profile snoop_profile_{};
  std::array<rte_meter_srtcm, kMaxPorts> snoop_budget_{};
  uint64_t snoop_budgeted_ = 0;
  bool snoop_profile_ready_ = false;
};

inline void Forwarder::UnicastRun(uint16_t port, const Run& run, rte_mbuf** frames) {
  const bool retag = run.tagged == table_->vlans.SendsUntagged(run.vlan, port);
  if (!retag && run.max_len - run.header() <= table_->ports[port].mtu) [[likely]] {
    EnqueueRun(port, frames, run.len, run.bytes);
  } else {
    UnicastFrames(port, run, frames, retag);
  }
}

// Part of the transmit buffers (tx_buffers.cc), here to be inlined into the pipeline.
inline void Forwarder::EnqueueRun(uint16_t port, rte_mbuf** frames, uint16_t n, uint64_t bytes) {
  TxBuffer& buffer = tx_[port];
  if (buffer.n + n > kMaxBurst) [[unlikely]] return EnqueueFull(port, frames, n, bytes);
  if (buffer.n == 0) {
    buffer.deadline = now_ + options_.flush_cycles;
    buffer.oldest_rx = received_;
  }
  rte_mbuf** to = buffer.pkts + buffer.n;
  to[0] = frames[0];  // a run has one frame at least, and mostly one
  // The rest by memcpy, not a loop: GCC turns the loop into a memcpy call or not depending
  // on what else is inlined around it, and as a loop it costs ~5 instructions a frame.
  if (n > 1) std::memcpy(to + 1, frames + 1, (n - 1) * sizeof(rte_mbuf*));
  buffer.n = static_cast<uint16_t>(buffer.n + n);
  buffer.bytes += bytes;
  pending_ |= uint64_t{1} << port;
}

}  // namespace hvswitch
