// Guardrails in the data path: ingress policing and storm control over DPDK's rte_meter
// (srTCM, colour-blind, no excess bucket: a two-colour token bucket), and the 802.1D
// reserved group addresses. A port's meter profiles are built by the control thread and
// published with the PortTable (GuardProfiles); each worker keeps its own meters' state
// (GuardMeters), so that no two workers ever write one: a port polled by N workers has
// its rates split evenly between them (BuildGuardProfiles).
// Meters are checked a burst (policing) or a run of flooded frames (storm control) at a
// time: one rte_meter call with the whole burst's frames or bytes when it conforms, frame
// by frame only when it does not. A burst is policed once it is classified (VLANs, and the
// bytes summed, which classification does anyway; Forwarder::Police), before any lookup
// or copy.
#pragma once

#include <rte_meter.h>

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "ports/guard_spec.h"

struct rte_mbuf;

namespace hvswitch {

struct PortSpec;
struct PortTable;

enum class GuardMeter : uint8_t {
  kPolicePackets,
  kPoliceBytes,
  kStormBroadcast,  // kStormBroadcast + StormClass
  kStormMulticast,
  kStormUnknown,
  kCount
};
inline constexpr size_t kGuardMeters = static_cast<size_t>(GuardMeter::kCount);
inline constexpr GuardMeter StormMeter(StormClass c) {
  return static_cast<GuardMeter>(static_cast<size_t>(GuardMeter::kStormBroadcast) +
                                 static_cast<size_t>(c));
}

// DatapathPort::guards bits: which guard work a port's frames need (0: none, the common
// case, tested once per burst).
inline constexpr uint8_t kGuardPolice = 1;      // police_pps= / police_bps=
inline constexpr uint8_t kGuardStorm = 2;       // storm_*=
inline constexpr uint8_t kGuardBpdu = 4;        // bpdu_guard=1
inline constexpr uint8_t kGuardIp = 8;          // ip= or ip_learn=1
// Not a spec key: the port is a mirror session's destination (PortTable::Seal sets it),
// whose own frames are dropped (mirror_port).
inline constexpr uint8_t kGuardMirrorPort = 16;
// ip_learn=1 (with kGuardIp): its ARP and neighbour discovery that no binding allows
// are copied for the control thread (claims), and so are the DHCP replies sent to it.
inline constexpr uint8_t kGuardIpLearn = 32;
// Not a spec key: a mirror session copies what the port receives (PortTable::Seal sets it).
inline constexpr uint8_t kGuardMirrorRx = 64;
inline uint8_t GuardBits(const GuardSpec& spec) {
  return static_cast<uint8_t>((spec.policed() ? kGuardPolice : 0) |
                              (spec.storm_controlled() ? kGuardStorm : 0) |
                              (spec.bpdu_guard ? kGuardBpdu : 0) |
                              (spec.ip_guarded() ? kGuardIp : 0) |
                              (spec.ip_learn ? kGuardIpLearn : 0));
}

// 802.1D's reserved group addresses 01:80:C2:00:00:00-0F (FDB key layout, MAC in wire
// byte order from bit 0): bridge protocols (STP, LACP and other slow protocols, 802.1X,
// LLDP), which a bridge never forwards.
inline constexpr uint64_t kReservedMask = 0xf0ffffffffff;
inline constexpr uint64_t kReservedBase = 0x0000c28001;
inline constexpr uint64_t kStpKey = 0x0000c28001;  // 01:80:C2:00:00:00: (R/M)STP BPDUs
inline bool IsReservedKey(uint64_t key) { return (key & kReservedMask) == kReservedBase; }
inline bool IsStpKey(uint64_t key) { return (key & 0xffffffffffff) == kStpKey; }

// One port's meter profiles, in the PortTable: immutable once published.
struct GuardProfiles {
  uint8_t meters = 0;  // bit GuardMeter set: that meter is on
  // Moves on whenever the profiles are built again: a worker whose meters were configured
  // under another generation configures them anew (full buckets).
  uint32_t generation = 0;
  std::array<rte_meter_srtcm_profile, kGuardMeters> profile{};

  bool has(GuardMeter m) const { return (meters >> static_cast<size_t>(m)) & 1; }
};

// One worker's meters of one port.
struct GuardMeters {
  uint32_t generation = 0;  // 0: never configured (GuardProfiles generations start at 1)
  std::array<rte_meter_srtcm, kGuardMeters> meter{};
};

// Control thread (needs the EAL's TSC rate): `spec`'s profiles, each rate and burst split
// between `sharers` workers (0 counts as 1), with generation `generation`.
absl::Status BuildGuardProfiles(const GuardSpec& spec, uint16_t sharers, uint32_t generation,
                                GuardProfiles& out);
// Control thread: slot `slot`'s profiles in `table` from `spec` (null: an empty slot), its
// rates split between the workers that poll its queues as the table has them; the slot's
// generation moves on from what `table` held. BuildGuards: every slot's.
void BuildPortGuards(PortTable& table, size_t slot, const PortSpec* spec);
void BuildGuards(PortTable& table, const std::vector<const PortSpec*>& specs);

// Meter `m`'s profile, as rte_meter takes it: by a non-const pointer, which it only reads.
inline rte_meter_srtcm_profile* MeterProfile(const GuardProfiles& profiles, GuardMeter m) {
  return const_cast<rte_meter_srtcm_profile*>(&profiles.profile[static_cast<size_t>(m)]);
}

// Worker: `meters` made current for `profiles` (configured anew when the profiles changed,
// starting at the TSC now: a check must be given a TSC read after this call, since
// rte_meter takes an earlier one for a whole wrap-around of time).
inline GuardMeters& CurrentMeters(const GuardProfiles& profiles, GuardMeters& meters) {
  if (meters.generation != profiles.generation) [[unlikely]] {
    for (size_t m = 0; m < kGuardMeters; ++m) {
      if ((profiles.meters >> m) & 1) {
        rte_meter_srtcm_config(&meters.meter[m], MeterProfile(profiles, GuardMeter(m)));
      }
    }
    meters.generation = profiles.generation;
  }
  return meters;
}

// Worker: how many of `n` frames meter `m` lets pass now (frames count one token each), at
// TSC `now`. The tokens are taken.
uint16_t MeterFrames(const GuardProfiles& profiles, GuardMeters& meters, GuardMeter m,
                     uint16_t n, uint64_t now);

// Worker: whether a frame of `len` bytes fits meter `m` at TSC `now` (its tokens taken).
inline bool MeterFits(const GuardProfiles& profiles, GuardMeters& meters, GuardMeter m,
                      uint32_t len, uint64_t now) {
  return rte_meter_srtcm_color_blind_check(&meters.meter[static_cast<size_t>(m)],
                                           MeterProfile(profiles, m), now,
                                           len) == RTE_COLOR_GREEN;
}

}  // namespace hvswitch
