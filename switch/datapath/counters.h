// Per-worker packet counters, and every counter's description. Each worker writes only its
// own block with plain relaxed load+store (a mov/add/mov, no locked instruction); readers
// on other threads sum the blocks of all workers. Counters are never reset.
//
// Each family is one list below (as VPP's foreach_l2learn_error): a counter's line gives
// its key (JSON and telemetry), its Prometheus family, extra labels, HELP and where else
// it is shown. Summing, base subtraction, /metrics (switch/control/metrics.cc), the control
// protocol's JSON (switch/control/port_json.cc) and telemetry (switch/control/telemetry_commands.cc) are
// loops over these tables: a new counter is its line plus its increment, a new histogram
// (HVS_PORT_HISTOGRAMS: durations, sampled) its line plus its Sample.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "switch/datapath/datapath_limits.h"

namespace hvswitch {

class Counter {
 public:
  // Owner thread only.
  void Add(uint64_t n) { value_.store(value_.load(std::memory_order_relaxed) + n,
                                      std::memory_order_relaxed); }
  // Owner thread only: Add(1), returning the new value.
  uint64_t Increment() {
    const uint64_t v = value_.load(std::memory_order_relaxed) + 1;
    value_.store(v, std::memory_order_relaxed);
    return v;
  }
  // Any thread.
  uint64_t Read() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// Where a counter is shown besides /metrics (every counter is a Prometheus sample).
enum Shown : uint8_t {
  kJsonList = 1,           // port list (and port show, stats)
  kJsonDetail = 2,         // port show, stats
  kJsonOffload = 4,        // port show, stats: in "offload"
  kJsonStats = 8,          // stats: in "fdb"
  kTelemetrySummary = 16,  // /hvswitch/ports (and /hvswitch/port)
  kTelemetryDetail = 32,   // /hvswitch/port
  kTelemetryFdb = 64,      // /hvswitch/fdb
  kTelemetryPmd = 128,     // /hvswitch/pmd
};

enum class MetricKind : uint8_t { kCounter, kGauge };

struct MetricLabel {
  std::string_view name, value;  // an empty name: none
};
using MetricLabels = std::array<MetricLabel, 2>;
constexpr MetricLabels Labels() { return {}; }
constexpr MetricLabels Labels(std::string_view name, std::string_view value) {
  return {{{name, value}, {}}};
}
constexpr MetricLabels Labels(std::string_view name1, std::string_view value1,
                              std::string_view name2, std::string_view value2) {
  return {{{name1, value1}, {name2, value2}}};
}

struct HistogramInfo {
  std::string_view key;     // JSON and telemetry key
  std::string_view family;  // Prometheus histogram family (seconds)
  std::string_view help;
  uint8_t shown;            // Shown bits
};

struct CounterInfo {
  std::string_view key;     // JSON and telemetry key
  std::string_view family;  // Prometheus family; a family's cells are adjacent
  MetricLabels labels;      // besides port= / core=
  std::string_view help;    // on the family's first cell only
  MetricKind kind;
  uint8_t shown;            // Shown bits
  // A family named *_seconds_total counts TSC cycles and is exported in seconds (JSON and
  // telemetry keep the cycles).
  bool tsc_seconds = family.ends_with("_seconds_total");
};

enum class CountedBy : uint8_t { kWorker, kDevice };

struct DropInfo {
  std::string_view key;  // the reason= label and JSON/telemetry key
  CountedBy counted_by;  // a worker, or the port's device (frames no worker saw)
};

// --- The lists -------------------------------------------------------------------------

// Per port, counted by the workers. X(id, key, family, labels, help, shown). Order is
// memory order: the first 8 cells share the block's first cache line; keep there what
// every frame touches (packets, bytes, tx bursts).
#define HVS_PORT_COUNTERS(X)                                                              \
  X(kRxPackets, "rx_packets", "hvswitch_port_receive_packets_total", Labels(),            \
    "Frames received from the port (before any drop).", kJsonList | kTelemetrySummary)    \
  X(kRxBytes, "rx_bytes", "hvswitch_port_receive_bytes_total", Labels(),                  \
    "Bytes received from the port.", kJsonDetail | kTelemetrySummary)                     \
  X(kTxPackets, "tx_packets", "hvswitch_port_transmit_packets_total", Labels(),           \
    "Frames sent to the port.", kJsonList | kTelemetrySummary)                            \
  X(kTxBytes, "tx_bytes", "hvswitch_port_transmit_bytes_total", Labels(),                 \
    "Bytes sent to the port.", kJsonDetail | kTelemetrySummary)                           \
  /* Frames forwarded but not learned: their source was new and the port at its learn  */ \
  /* limit / beyond its FDB reserve while the table's shared rest is full.             */ \
  X(kLearnLimited, "learn_limited", "hvswitch_port_learn_limited_total", Labels(),        \
    "Frames forwarded without learning their source because the port has as many MACs "   \
    "as its learn limit allows (learn_limit=, 1024 by default on guest ports): a guest "  \
    "spraying source MACs, or a limit set too low.",                                      \
    kJsonDetail)                                                                          \
  X(kLearnTableFull, "learn_table_full", "hvswitch_port_learn_table_full_total", Labels(), \
    "Frames forwarded without learning their source because the MAC table is full for "   \
    "the port: it uses all of its reserved entries and the table's shared rest is "       \
    "taken. Non-zero means the table is too small for this port's MACs (--fdb_capacity) " \
    "or the port sprays source MACs (set learn_limit= on it); other ports keep their "    \
    "reserve.",                                                                           \
    kJsonDetail)                                                                          \
  /* Transmit calls that sent something: packets / bursts is the mean tx burst size,   */ \
  /* and for an interrupt-driven guest each burst may cost one notification.           */ \
  X(kTxBursts, "tx_bursts", "hvswitch_port_transmit_bursts_total", Labels(),              \
    "Transmit bursts to the port that sent frames; transmit packets / bursts is the "     \
    "mean burst size (small bursts to an interrupt-driven guest mean many "               \
    "notifications: consider --tx_flush_us).",                                            \
    kJsonDetail)                                                                          \
  /* Partial L4 checksums of frames sent to the port: left to it (hw) or completed     */ \
  /* here; TCP super-frames sent to it: passed whole (hw) or segmented here.           */ \
  X(kCsumHw, "csum_hw", "hvswitch_port_offload_total", Labels("kind", "csum", "how", "hw"), \
    "Offload work for frames sent to the port. kind=csum: partial L4 checksums (a guest " \
    "left them to the device); how=hw: passed on for the port to complete, how=sw: "      \
    "completed by hvswitch because the port cannot (CPU spent per frame). kind=tso: TCP " \
    "super-frames from a guest's GSO; how=hw: passed whole for the port to segment, "     \
    "how=sw: cut into MTU-sized segments by hvswitch (costly: a guest peer without "      \
    "GUEST_TSO4/6, memif, or a NIC without TSO).",                                        \
    kJsonOffload | kTelemetryDetail)                                                      \
  X(kCsumSw, "csum_sw", "hvswitch_port_offload_total", Labels("kind", "csum", "how", "sw"), \
    "", kJsonOffload | kTelemetryDetail)                                                  \
  X(kTsoHw, "tso_hw", "hvswitch_port_offload_total", Labels("kind", "tso", "how", "hw"),  \
    "", kJsonOffload | kTelemetryDetail)                                                  \
  X(kTsoSw, "tso_sw", "hvswitch_port_offload_total", Labels("kind", "tso", "how", "sw"),  \
    "", kJsonOffload | kTelemetryDetail)                                                  \
  /* Transmit calls repeated for a burst the port's queue took only in part            */ \
  /* (tx_retries=), and the TSC cycles they took: counted only where one was made.     */ \
  X(kTxRetries, "tx_retries", "hvswitch_port_transmit_retries_total", Labels(),           \
    "Transmit retries to the port: a burst its queue took only in part is offered again " \
    "(tx_retries=, 8 by default), each retry waiting up to 2 us for the queue to take "   \
    "frames. Rising with few queue_full drops: a slow guest got its frames by them; "     \
    "rising with queue_full too: it is slower than the traffic offered to it.",           \
    kJsonDetail | kTelemetryDetail)                                                       \
  X(kTxRetryCycles, "tx_retry_cycles", "hvswitch_port_transmit_retry_cycles_total",       \
    Labels(),                                                                             \
    "TSC cycles worker cores spent retrying transmits to the port (tx_retries=): the "    \
    "price of waiting for a slow guest, paid out of the time for every other port. "      \
    "Compare with hvswitch_core_busy_cycles_total; lower tx_retries= if it matters.",     \
    kJsonDetail | kTelemetryDetail)                                                       \
  /* Backpressure on a kernel or NIC port (DatapathFlags::rx_backpressure): pauses of   */ \
  /* its polling while frames of it wait for a full destination, and their TSC cycles. */ \
  X(kRxPauses, "rx_pauses", "hvswitch_port_receive_pauses_total", Labels(),               \
    "Times the port (a kernel interface or a NIC) was not polled because frames from it " \
    "waited for a destination whose queue was full: its next frames waited in its own "   \
    "queue (the kernel's, the NIC's ring) instead of being dropped as queue_full. A "      \
    "pause ends when the destination has taken the waiting frames, after it took none "    \
    "for 100 us (they are dropped then; a destination that took none at all pauses no "    \
    "port again until it takes frames), or once the port was paused for half of the "     \
    "current millisecond.",                                                               \
    kJsonDetail | kTelemetryDetail)                                                       \
  X(kRxPauseCycles, "rx_pause_cycles", "hvswitch_port_receive_pause_cycles_total",        \
    Labels(),                                                                             \
    "TSC cycles the port's polling was paused for full destinations: meanwhile its "      \
    "frames to every destination waited in the kernel's or NIC's queue, which drops what " \
    "does not fit (the interface's or NIC's own drop counters). Set tx_retries=0 on a "    \
    "destination the port must not wait for.",                                            \
    kJsonDetail | kTelemetryDetail)                                                       \
  /* What a port's frames cost: worker time from the receive call that returned them  */ \
  /* to their forwarding done (lookup, learning, copies, software offloads, floods).   */ \
  X(kCpuCycles, "cpu_cycles", "hvswitch_port_cpu_seconds_total", Labels(),                \
    "Worker CPU time spent on the frames received from the port: the receive call that "  \
    "returned them and their forwarding (lookup, learning requests, copies, software "    \
    "checksums and segmentation, flood copies, the transmits). Which guest costs the "     \
    "host what: compare ports, or divide by hvswitch_port_receive_packets_total.",        \
    kJsonDetail | kTelemetryDetail)                                                       \
  /* bpdu_guard=1: times a BPDU from the port shut it (hvswitch_port_shut).           */ \
  X(kBpduGuardShutdowns, "bpdu_guard_shutdowns", "hvswitch_port_bpdu_guard_shutdowns_total", \
    Labels(),                                                                             \
    "Times the port was shut because it sent a BPDU (frame to 01:80:C2:00:00:00) while "  \
    "bpdu_guard=1: a guest running a bridge or spanning tree, or a loop through a guest. " \
    "Its frames are dropped (reason shut) until hvswitchctl port enable.",                \
    kJsonDetail | kTelemetryDetail)                                                       \
  /* Snooped messages of the port beyond its budget (Forwarder::OfferSnoop): not       */ \
  /* copied for the control thread; the frames themselves forwarded.                  */ \
  X(kSnoopLimited, "snoop_limited", "hvswitch_port_snoop_limited_total", Labels(),        \
    "Messages of the port that snooping did not read because the port sent them faster "  \
    "than its budget (32 at once, then 1000 a second, per worker core): IGMP/MLD "        \
    "messages from it (--mcast_snooping=1), and for an ip_learn=1 port its ARP/neighbour " \
    "discovery claims and the DHCP replies sent to it. The frames were forwarded; a "     \
    "membership or binding they carried may be missing until the next. Rising: a guest "  \
    "flooding such messages (the budget keeps it from starving the others').",           \
    kJsonDetail | kTelemetryDetail)                                                       \
  /* RARP, gratuitous ARP and unsolicited neighbour advertisements from the port        */ \
  /* (announce.h): a live-migrated guest announcing itself on its new port.             */ \
  X(kAnnouncements, "announcements", "hvswitch_port_announcements_total", Labels(),        \
    "Announcements received from the port: RARP (QEMU's after a live migration, for a "   \
    "guest without GUEST_ANNOUNCE), gratuitous ARP and unsolicited IPv6 neighbour "       \
    "advertisements (a migrated guest's own, or an address taken over). The MAC table "   \
    "moves the sender's MAC to this port at the first of them; a migrated guest whose "   \
    "port shows none is reached only once it sends something else.",                     \
    kJsonDetail | kTelemetryDetail)

// Per port histograms, sampled by the workers: a sample is a duration in nanoseconds, put
// into one of the buckets below (the same for every histogram and every host: the bounds
// do not depend on the TSC rate, so histograms of several hosts add up).
// X(id, key, family, help, shown); the family is a Prometheus histogram in seconds.
#define HVS_PORT_HISTOGRAMS(X)                                                            \
  /* From the receive call that returned the oldest frame of a transmit to the transmit */ \
  /* call's return (tx_buffers.cc), one transmit in kResidenceSampleEvery per worker.   */ \
  X(kResidence, "residence", "hvswitch_port_residence_seconds",                           \
    "Time frames spent in hvswitch on their way to the port: from the start of the "      \
    "receive call that returned a transmit's oldest frame to the return of the transmit " \
    "call that handed it to the port (after any retries). One transmit in 32 that sent "  \
    "frames is sampled, per port and worker; each sample is that transmit's oldest "      \
    "frame, the longest any of its frames waited. It includes the forwarding work, "      \
    "waits for company (tx_flush_us), transmit retries and backpressure parking (a "      \
    "parked frame counts from its receive, not from the last offer).",                    \
    kJsonDetail | kTelemetryDetail)

// Why a received frame went nowhere. X(id, key, counted_by): workers count the reasons
// listed first; the device counts the others itself (frames it dropped before a worker
// saw them, read from rte_eth_stats when a snapshot is taken). Each is a reason= of
// hvswitch_port_receive_drop_total, a key of port show's "rx_drops" and an rx_drop_<key>
// of /hvswitch/port.
#define HVS_RX_DROPS(X)                                                                   \
  X(kMalformed, "malformed", kWorker)                                                     \
  X(kVlan, "vlan", kWorker)                                                               \
  X(kHairpin, "hairpin", kWorker)                                                         \
  X(kBadOffload, "bad_offload", kWorker)                                                  \
  X(kSpoofed, "spoofed", kWorker)                                                         \
  X(kNoDestination, "no_destination", kWorker)                                            \
  X(kPoliced, "policed", kWorker)                                                         \
  X(kStorm, "storm", kWorker)                                                             \
  X(kReserved, "reserved", kWorker)                                                       \
  X(kShut, "shut", kWorker)                                                               \
  X(kSpoofedIp, "spoofed_ip", kWorker)                                                    \
  X(kMirrorPort, "mirror_port", kWorker)                                                  \
  X(kMissed, "missed", kDevice)                                                           \
  X(kRxError, "rx_error", kDevice)                                                        \
  X(kNoMbuf, "no_mbuf", kDevice)

inline constexpr std::string_view kRxDropFamily = "hvswitch_port_receive_drop_total";
inline constexpr std::string_view kRxDropHelp =
    "Frames dropped after receive, by reason. no_mbuf: the buffer pool ran dry (raise it "
    "or find who holds buffers); quota: the port's own buffers (quota=) ran out, so its "
    "frames were dropped by the device instead of drawing on the shared pool; malformed: "
    "runt or group-source frames from the port; "
    "vlan: tagged frames on an access port, or frames in a VLAN the port does not carry "
    "(a guest or trunk misconfigured); bad_offload: a partial checksum on a frame whose "
    "TCP/UDP headers are missing or inconsistent (a broken or hostile guest); "
    "hairpin: destination learned on the ingress port itself (a loop or a confused peer); "
    "spoofed: a source MAC the port may not use (port security: mac= or lock=1); "
    "no_destination: flooded, but no other port is up in the frame's VLAN (nobody to "
    "hear it); policed: beyond the port's police_pps= / police_bps= (dropped before any "
    "lookup or copy); storm: broadcast, multicast or unknown-unicast "
    "frames beyond the port's storm_broadcast= / storm_multicast= / storm_unknown= rate; "
    "reserved: frames to 802.1D's reserved group addresses 01:80:C2:00:00:00-0F (STP, "
    "LACP, 802.1X, LLDP), which a bridge never forwards; shut: frames from a port shut "
    "by bpdu_guard=1 (hvswitchctl port enable ends it); spoofed_ip: IP, ARP or neighbour "
    "advertisement from an address the port may not use (ip=); mirror_port: frames from a "
    "port that is a mirror's destination (it takes the mirror's copies only); missed / "
    "rx_error: the device "
    "itself dropped frames before hvswitch saw "
    "them (missed: its receive queue was full, hvswitch polling too slowly; rx_error: "
    "erroneous frames). no_mbuf, quota, missed and rx_error are not in "
    "receive_packets_total; every other frame received is forwarded or counted here.";

// Why a frame meant for a port was not sent; all counted by the workers. X(id, key): a
// reason= of hvswitch_port_transmit_drop_total, a key of "tx_drops", a tx_drop_<key>.
#define HVS_TX_DROPS(X)                                                                   \
  X(kQueueFull, "queue_full")                                                             \
  X(kLinkDown, "link_down")                                                               \
  X(kMtu, "mtu")                                                                          \
  X(kNoMbuf, "no_mbuf")                                                                   \
  X(kOffload, "offload_refused")                                                          \
  X(kVlan, "vlan")

inline constexpr std::string_view kTxDropFamily = "hvswitch_port_transmit_drop_total";
inline constexpr std::string_view kTxDropHelp =
    "Frames for the port that were not sent, by reason. queue_full: the guest or device "
    "is not draining its ring fast enough; link_down: the guest is not connected; mtu: "
    "the frame is larger than the port's MTU (raise mtu= or fix the sender's MTU); "
    "no_mbuf: no buffer for a copy or a segment of the frame (pool exhausted); "
    "offload_refused: the NIC refused the frame's checksum/TSO request (its limits); "
    "vlan: a frame with two tags that would leave the port with its outer tag removed "
    "(hvswitch carries one tag: sending it would move it into the inner tag's VLAN; "
    "someone attempts VLAN hopping or stacks tags on an access/native VLAN).";

// Per worker core. X(id, key, family, labels, help, shown); label core=.
#define HVS_CORE_COUNTERS(X)                                                              \
  /* TSC cycles as testpmd counts them: busy, the poll calls that returned frames and  */ \
  /* the work they caused; idle, the rest of the loop. busy + idle: the whole loop.    */ \
  X(kBusyCycles, "busy_cycles", "hvswitch_core_busy_cycles_total", Labels(),              \
    "TSC cycles a worker core spent in receive calls that returned frames and in the "    \
    "work they caused; busy / (busy + idle) near 1 means the core is saturated.",         \
    kTelemetryPmd)                                                                        \
  X(kIdleCycles, "idle_cycles", "hvswitch_core_idle_cycles_total", Labels(),              \
    "TSC cycles a worker core spent in the rest of its loop: receive calls that "         \
    "returned nothing, timed flushes, quiescent states, sleeps.", kTelemetryPmd)          \
  X(kPackets, "packets", "hvswitch_core_packets_total", Labels(),                         \
    "Frames a worker core received; busy cycles / packets is its cost per frame.",        \
    kTelemetryPmd)                                                                        \
  /* --idle=sleep/interrupt: the part of the idle cycles spent asleep or blocked, and  */ \
  /* the wake-ups by cause.                                                            */ \
  X(kSleepCycles, "sleep_cycles", "hvswitch_core_sleep_seconds_total", Labels(),          \
    "Time a worker core slept or blocked between rounds that found nothing (--idle=sleep " \
    "or interrupt); the CPU it gave back to the host.", kTelemetryPmd)                    \
  X(kWakeupsTimer, "wakeups_timer", "hvswitch_core_wakeups_total", Labels("cause", "timer"), \
    "Times a worker core woke from a sleep, by cause (timer: the sleep ran out; a worker " \
    "wakes every --idle_max_us at most while the host is quiet; interrupt: a receive "    \
    "queue raised one, with --idle=interrupt; control: the control thread rang, with a "  \
    "new port table or to stop).", kTelemetryPmd)                                         \
  X(kWakeupsInterrupt, "wakeups_interrupt", "hvswitch_core_wakeups_total",                \
    Labels("cause", "interrupt"), "", kTelemetryPmd)                                      \
  X(kWakeupsControl, "wakeups_control", "hvswitch_core_wakeups_total",                    \
    Labels("cause", "control"), "", kTelemetryPmd)                                        \
  /* Learn requests lost because the worker's learn ring was full (the source asks     */ \
  /* again).                                                                           */ \
  X(kLearnQueueDrops, "learn_queue_drops", "hvswitch_core_learn_queue_drops_total", Labels(), \
    "Learn requests a worker core dropped because its queue to the control thread was "   \
    "full; the source is asked for again a millisecond later. Non-zero means sources "    \
    "arrive faster than the control thread learns them (many new MACs at once) or the "   \
    "control thread is stalled: learning lags meanwhile and unicast to new MACs floods.", \
    0)                                                                                    \
  /* Frames the control thread was to read (IGMP/MLD with --mcast_snooping, DHCP and   */ \
  /* ARP/ND of ip_learn=1 ports) but could not be copied: no buffer or a full queue.   */ \
  X(kSnoopQueueDrops, "snoop_queue_drops", "hvswitch_core_snoop_queue_drops_total",       \
    Labels(),                                                                             \
    "IGMP/MLD messages (--mcast_snooping=1), and DHCP, ARP and neighbour discovery of "   \
    "ip_learn=1 ports, that a worker core could not copy for the control thread (its "    \
    "queue full, or no buffer): the frames were forwarded, but snooping did not see "     \
    "them (a membership or binding may be missing until the next report or renewal).",   \
    0)

// Switch-wide, in a snapshot. X(id, key, family, kind, help, shown); no labels.
#define HVS_SWITCH_STATS(X)                                                               \
  X(kMbufs, "mbufs", "hvswitch_mbufs", kGauge, "Packet buffers in the shared pool.", 0)   \
  X(kMbufsInUse, "mbufs_in_use", "hvswitch_mbufs_in_use", kGauge,                         \
    "Packet buffers out of the pool now: in device rings, transmit queues or in flight. " \
    "Rising while traffic is steady means a leak.",                                       \
    0)                                                                                    \
  X(kCaptureMissed, "capture_missed", "hvswitch_capture_missed_total", kCounter,          \
    "Frames a running hvswitchctl capture could not copy (no buffer, or the control "     \
    "thread behind); the capture file lacks them, forwarding does not.",                  \
    0)                                                                                    \
  X(kFdbEntries, "entries", "hvswitch_fdb_entries", kGauge,                               \
    "MAC addresses in the forwarding table, learned and static.",                         \
    kJsonStats | kTelemetryFdb)                                                           \
  X(kFdbStatic, "static", "hvswitch_fdb_static_entries", kGauge,                          \
    "Static MAC entries (configured; never aged or moved).", kJsonStats | kTelemetryFdb)  \
  X(kFdbStaticRefused, "static_move_refused", "hvswitch_fdb_static_move_refused_total",   \
    kCounter,                                                                             \
    "Frames whose source is a static MAC of another port; non-zero means a guest is "     \
    "using an address it does not own, or the entry is wrong.",                           \
    0)                                                                                    \
  X(kFdbLockedRefused, "locked_move_refused", "hvswitch_fdb_locked_move_refused_total",   \
    kCounter,                                                                             \
    "Learn requests refused because the MAC belongs to a connected guest port with port " \
    "security (mac= or lock=1); non-zero means another port sends with that guest's "     \
    "address.",                                                                           \
    0)                                                                                    \
  X(kFdbLearned, "learned_total", "hvswitch_fdb_learned_total", kCounter,                 \
    "MAC addresses learned (new table entries).", kJsonStats | kTelemetryFdb)             \
  X(kFdbMoves, "moves_total", "hvswitch_fdb_moves_total", kCounter,                       \
    "Learned MACs seen on another port than before; a steady rate means a loop or a MAC " \
    "shared by two guests.",                                                              \
    kJsonStats | kTelemetryFdb)                                                           \
  X(kFdbAged, "aged_total", "hvswitch_fdb_aged_total", kCounter,                          \
    "MAC entries removed because they were not seen for the ageing time.",                \
    kJsonStats | kTelemetryFdb)                                                           \
  X(kFdbFlushed, "flushed_total", "hvswitch_fdb_flushed_total", kCounter,                 \
    "MAC entries removed because their port went down.", kJsonStats | kTelemetryFdb)

// --- Enums and tables generated from the lists -----------------------------------------

#define HVS_ID(id, ...) id,
enum class PortCounter : uint8_t { HVS_PORT_COUNTERS(HVS_ID) kCount };
enum class RxDrop : uint8_t { HVS_RX_DROPS(HVS_ID) kCount };
enum class TxDrop : uint8_t { HVS_TX_DROPS(HVS_ID) kCount };
enum class CoreCounter : uint8_t { HVS_CORE_COUNTERS(HVS_ID) kCount };
enum class SwitchStat : uint8_t { HVS_SWITCH_STATS(HVS_ID) kCount };
enum class PortHistogram : uint8_t { HVS_PORT_HISTOGRAMS(HVS_ID) kCount };
#undef HVS_ID

inline constexpr size_t kPortCounters = static_cast<size_t>(PortCounter::kCount);
inline constexpr size_t kRxDrops = static_cast<size_t>(RxDrop::kCount);
inline constexpr size_t kTxDrops = static_cast<size_t>(TxDrop::kCount);
inline constexpr size_t kCoreCounters = static_cast<size_t>(CoreCounter::kCount);
inline constexpr size_t kSwitchStats = static_cast<size_t>(SwitchStat::kCount);
inline constexpr size_t kPortHistograms = static_cast<size_t>(PortHistogram::kCount);

#define HVS_PORT_INFO(id, key, family, labels, help, shown) \
  CounterInfo{key, family, labels, help, MetricKind::kCounter, shown},
#define HVS_RX_DROP_INFO(id, key, counted_by) DropInfo{key, CountedBy::counted_by},
#define HVS_TX_DROP_INFO(id, key) DropInfo{key, CountedBy::kWorker},
#define HVS_CORE_INFO(id, key, family, labels, help, shown) \
  CounterInfo{key, family, labels, help, MetricKind::kCounter, shown},
#define HVS_SWITCH_INFO(id, key, family, kind, help, shown) \
  CounterInfo{key, family, Labels(), help, MetricKind::kind, shown},
#define HVS_HISTOGRAM_INFO(id, key, family, help, shown) HistogramInfo{key, family, help, shown},
inline constexpr std::array<CounterInfo, kPortCounters> kPortCounterInfo = {
    HVS_PORT_COUNTERS(HVS_PORT_INFO)};
inline constexpr std::array<DropInfo, kRxDrops> kRxDropInfo = {HVS_RX_DROPS(HVS_RX_DROP_INFO)};
inline constexpr std::array<DropInfo, kTxDrops> kTxDropInfo = {HVS_TX_DROPS(HVS_TX_DROP_INFO)};
inline constexpr std::array<CounterInfo, kCoreCounters> kCoreCounterInfo = {
    HVS_CORE_COUNTERS(HVS_CORE_INFO)};
inline constexpr std::array<CounterInfo, kSwitchStats> kSwitchStatInfo = {
    HVS_SWITCH_STATS(HVS_SWITCH_INFO)};
inline constexpr std::array<HistogramInfo, kPortHistograms> kPortHistogramInfo = {
    HVS_PORT_HISTOGRAMS(HVS_HISTOGRAM_INFO)};
#undef HVS_PORT_INFO
#undef HVS_RX_DROP_INFO
#undef HVS_TX_DROP_INFO
#undef HVS_CORE_INFO
#undef HVS_SWITCH_INFO
#undef HVS_HISTOGRAM_INFO

// --- Compile-time checks of the tables -------------------------------------------------

template <typename Info, size_t N>
constexpr bool EveryKeyNamedAndUnique(const std::array<Info, N>& table) {
  for (size_t i = 0; i < N; ++i) {
    if (table[i].key.empty()) return false;
    for (size_t j = 0; j < i; ++j) {
      if (table[j].key == table[i].key) return false;
    }
  }
  return true;
}

// A family's cells are adjacent, its first carries the HELP and the others none, and no
// two cells of a family have the same labels.
template <size_t N>
constexpr bool FamiliesContiguousWithOneHelp(const std::array<CounterInfo, N>& table) {
  for (size_t i = 0; i < N; ++i) {
    if (table[i].family.empty()) return false;
    const bool first = i == 0 || table[i - 1].family != table[i].family;
    if (first == table[i].help.empty()) return false;
    for (size_t j = 0; j + 1 < i; ++j) {
      if (table[j].family == table[i].family && table[j + 1].family != table[i].family) {
        return false;  // the family came before and was interrupted
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (table[j].family == table[i].family && table[j].labels[0].value ==
          table[i].labels[0].value && table[j].labels[1].value == table[i].labels[1].value) {
        return false;
      }
    }
  }
  return true;
}

template <size_t N>
constexpr bool WorkerReasonsFirst(const std::array<DropInfo, N>& table) {
  for (size_t i = 1; i < N; ++i) {
    if (table[i - 1].counted_by == CountedBy::kDevice &&
        table[i].counted_by == CountedBy::kWorker) {
      return false;
    }
  }
  return true;
}

template <size_t N>
constexpr size_t WorkerReasons(const std::array<DropInfo, N>& table) {
  size_t n = 0;
  while (n < N && table[n].counted_by == CountedBy::kWorker) ++n;
  return n;
}

static_assert(kPortCounterInfo.size() == kPortCounters && kRxDropInfo.size() == kRxDrops &&
              kTxDropInfo.size() == kTxDrops && kCoreCounterInfo.size() == kCoreCounters &&
              kSwitchStatInfo.size() == kSwitchStats);
static_assert(EveryKeyNamedAndUnique(kPortCounterInfo) && EveryKeyNamedAndUnique(kRxDropInfo) &&
              EveryKeyNamedAndUnique(kTxDropInfo) && EveryKeyNamedAndUnique(kCoreCounterInfo) &&
              EveryKeyNamedAndUnique(kSwitchStatInfo) &&
              EveryKeyNamedAndUnique(kPortHistogramInfo));
static_assert(FamiliesContiguousWithOneHelp(kPortCounterInfo) &&
              FamiliesContiguousWithOneHelp(kCoreCounterInfo) &&
              FamiliesContiguousWithOneHelp(kSwitchStatInfo));
static_assert(WorkerReasonsFirst(kRxDropInfo) && WorkerReasons(kTxDropInfo) == kTxDrops);

// The reasons a worker counts (the rest are the device's).
inline constexpr size_t kWorkerRxDrops = WorkerReasons(kRxDropInfo);

// --- Histograms ------------------------------------------------------------------------

// Bucket b < kHistogramBounds counts samples of at most kHistogramBoundsNs[b] nanoseconds
// (and more than the bucket before); the last, the rest. 1-2-5 steps from 100 ns to 10 ms:
// a guest's frames take ~1 us through an idle switch, tens of us with tx_flush_us or
// retries, up to ms when parked for backpressure.
inline constexpr std::array<uint64_t, 16> kHistogramBoundsNs = {
    100,     200,     500,     1'000,     2'000,     5'000,     10'000,    20'000,
    50'000,  100'000, 200'000, 500'000, 1'000'000, 2'000'000, 5'000'000, 10'000'000};
inline constexpr size_t kHistogramBounds = kHistogramBoundsNs.size();
inline constexpr size_t kHistogramBuckets = kHistogramBounds + 1;

// Sampled events only: a short scan.
constexpr size_t HistogramBucket(uint64_t ns) {
  size_t b = 0;
  while (b < kHistogramBounds && ns > kHistogramBoundsNs[b]) ++b;
  return b;
}
static_assert(HistogramBucket(0) == 0 && HistogramBucket(100) == 0 &&
              HistogramBucket(101) == 1 && HistogramBucket(1'000) == 3 &&
              HistogramBucket(10'000'000) == kHistogramBounds - 1 &&
              HistogramBucket(10'000'001) == kHistogramBounds &&
              HistogramBucket(~uint64_t{0}) == kHistogramBounds);

// The residence histogram samples one transmit in this many per port and worker that sent
// frames (the first one included): the sample's clock read and bucket cost ~50 cycles,
// a transmit's share of that ~2.
inline constexpr uint16_t kResidenceSampleEvery = 32;

// One histogram's cells: the samples by bucket, and their sum (ns). Its count is the sum
// of the buckets.
template <typename Cell>
struct HistogramCells {
  std::array<Cell, kHistogramBuckets> buckets{};
  Cell sum_ns{};
};

// A reader's copy of a histogram.
using HistogramTotals = HistogramCells<uint64_t>;

inline uint64_t HistogramCount(const HistogramTotals& h) {
  uint64_t n = 0;
  for (uint64_t b : h.buckets) n += b;
  return n;
}

// The q-quantile (0 < q <= 1) of `h` estimated as Prometheus' histogram_quantile does:
// linear within the bucket that holds it (from 0 in the first); one in the last bucket is
// that bucket's lower bound. 0 without samples.
inline double HistogramQuantileNs(const HistogramTotals& h, double q) {
  const uint64_t n = HistogramCount(h);
  if (n == 0) return 0;
  const double rank = q * static_cast<double>(n);
  uint64_t below = 0;
  for (size_t b = 0; b < kHistogramBounds; ++b) {
    if (h.buckets[b] != 0 && static_cast<double>(below + h.buckets[b]) >= rank) {
      const double lower = b == 0 ? 0 : static_cast<double>(kHistogramBoundsNs[b - 1]);
      const double upper = static_cast<double>(kHistogramBoundsNs[b]);
      return lower + (upper - lower) * (rank - static_cast<double>(below)) /
                         static_cast<double>(h.buckets[b]);
    }
    below += h.buckets[b];
  }
  return static_cast<double>(kHistogramBoundsNs.back());
}

// --- Counter blocks --------------------------------------------------------------------

// One port's cells: the same layout for the workers' counters and a reader's sums.
template <typename Cell, size_t kRxCells>
struct PortCells {
  std::array<Cell, kPortCounters> counts{};  // by PortCounter
  std::array<Cell, kRxCells> rx_drops{};     // by RxDrop
  std::array<Cell, kTxDrops> tx_drops{};     // by TxDrop
  // By PortHistogram; touched only by sampled events, after everything else.
  std::array<HistogramCells<Cell>, kPortHistograms> histograms{};

  Cell& operator[](PortCounter c) { return counts[static_cast<size_t>(c)]; }
  const Cell& operator[](PortCounter c) const { return counts[static_cast<size_t>(c)]; }
};

// A port's block in one worker's counters. The indices are constants on the packet path.
struct alignas(64) PortCounters : PortCells<Counter, kWorkerRxDrops> {
  void Add(PortCounter c, uint64_t n) { (*this)[c].Add(n); }
  template <RxDrop kReason>
  void Drop(uint64_t n) {
    static_assert(static_cast<size_t>(kReason) < kWorkerRxDrops, "the device counts it");
    rx_drops[static_cast<size_t>(kReason)].Add(n);
  }
  void Drop(TxDrop reason, uint64_t n) { tx_drops[static_cast<size_t>(reason)].Add(n); }
  void Sample(PortHistogram h, uint64_t ns) {
    HistogramCells<Counter>& cells = histograms[static_cast<size_t>(h)];
    cells.buckets[HistogramBucket(ns)].Add(1);
    cells.sum_ns.Add(ns);
  }
};
static_assert(sizeof(PortCounters) % 64 == 0);
// Every frame touches the packet, byte and tx burst counts: they stay in the first line.
static_assert(static_cast<size_t>(PortCounter::kRxPackets) < 8 &&
              static_cast<size_t>(PortCounter::kRxBytes) < 8 &&
              static_cast<size_t>(PortCounter::kTxPackets) < 8 &&
              static_cast<size_t>(PortCounter::kTxBytes) < 8 &&
              static_cast<size_t>(PortCounter::kTxBursts) < 8);

// A plain sum over workers, taken by a reader.
struct PortTotals : PortCells<uint64_t, kRxDrops> {
  HistogramTotals& operator[](PortHistogram h) { return histograms[static_cast<size_t>(h)]; }
  const HistogramTotals& operator[](PortHistogram h) const {
    return histograms[static_cast<size_t>(h)];
  }
  using PortCells::operator[];
  uint64_t& operator[](RxDrop r) { return rx_drops[static_cast<size_t>(r)]; }
  uint64_t operator[](RxDrop r) const { return rx_drops[static_cast<size_t>(r)]; }
  uint64_t& operator[](TxDrop r) { return tx_drops[static_cast<size_t>(r)]; }
  uint64_t operator[](TxDrop r) const { return tx_drops[static_cast<size_t>(r)]; }

  void AddFrom(const PortCounters& c) {
    for (size_t i = 0; i < counts.size(); ++i) counts[i] += c.counts[i].Read();
    for (size_t i = 0; i < c.rx_drops.size(); ++i) rx_drops[i] += c.rx_drops[i].Read();
    for (size_t i = 0; i < tx_drops.size(); ++i) tx_drops[i] += c.tx_drops[i].Read();
    for (size_t h = 0; h < histograms.size(); ++h) {
      for (size_t b = 0; b < kHistogramBuckets; ++b) {
        histograms[h].buckets[b] += c.histograms[h].buckets[b].Read();
      }
      histograms[h].sum_ns += c.histograms[h].sum_ns.Read();
    }
  }

  // What was counted since `base` was taken.
  PortTotals& operator-=(const PortTotals& base) {
    for (size_t i = 0; i < counts.size(); ++i) counts[i] -= base.counts[i];
    for (size_t i = 0; i < rx_drops.size(); ++i) rx_drops[i] -= base.rx_drops[i];
    for (size_t i = 0; i < tx_drops.size(); ++i) tx_drops[i] -= base.tx_drops[i];
    for (size_t h = 0; h < histograms.size(); ++h) {
      for (size_t b = 0; b < kHistogramBuckets; ++b) {
        histograms[h].buckets[b] -= base.histograms[h].buckets[b];
      }
      histograms[h].sum_ns -= base.histograms[h].sum_ns;
    }
    return *this;
  }
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
  alignas(64) std::array<Counter, kCoreCounters> core;  // by CoreCounter
  // Receive calls that returned frames, by size.
  std::array<Counter, kBurstBuckets.size()> rx_bursts;
  // Frames a capture missed: no buffer for the copy, or its ring full (summed over
  // workers into SwitchStat::kCaptureMissed).
  Counter capture_missed;
  // Per mirror session slot (PortTable::mirrors): copies of received (rx) and sent (tx)
  // frames handed to its destination, and frames it could not copy (no buffer in the
  // mirror pool, or no room for its tag). Summed over workers into MirrorSnapshot.
  struct MirrorCounters {
    Counter rx, tx, failed;
  };
  std::array<MirrorCounters, kMaxMirrors> mirrors;
  // TSC when the worker blocked (--idle=interrupt), 0 while it runs: a block can last
  // hours, and its time is added to kSleepCycles only when it ends. SleptCycles adds the
  // part so far.
  std::atomic<uint64_t> blocked_since{0};
  mutable std::atomic<uint64_t> slept_seen{0};  // SleptCycles' largest answer

  Counter& operator[](CoreCounter c) { return core[static_cast<size_t>(c)]; }
  const Counter& operator[](CoreCounter c) const { return core[static_cast<size_t>(c)]; }
  // Worker: a block ends. blocked_since is cleared before its time is added, fenced, so
  // that a reader that sees the time added sees the block ended.
  void EndBlock(uint64_t cycles) {
    blocked_since.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    (*this)[CoreCounter::kSleepCycles].Add(cycles);
  }
  // Any thread: kSleepCycles with the current block so far (at TSC `now`). Between a
  // block's end and its time added a reader sees neither: the largest answer so far is
  // given instead, so that the counter never goes back.
  uint64_t SleptCycles(uint64_t now) const {
    uint64_t slept = (*this)[CoreCounter::kSleepCycles].Read();
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint64_t since = blocked_since.load(std::memory_order_relaxed);
    if (since != 0 && now > since) slept += now - since;
    uint64_t seen = slept_seen.load(std::memory_order_relaxed);
    while (seen < slept && !slept_seen.compare_exchange_weak(seen, slept)) {
    }
    return std::max(seen, slept);
  }
};

}  // namespace hvswitch
