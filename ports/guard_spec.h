// GuardSpec: the guardrails an operator set on one port (its --port keys): ingress
// policing, storm control, BPDU guard and IP anti-spoofing. Plain data, no DPDK; parsed by
// guard_keys.cc, enforced by the workers (switch/datapath/port_guards.h, ip_guard.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hvswitch {

// The frames storm control meters, by what their destination is: a broadcast, another
// group address, or a unicast address the FDB does not know (all three flood).
enum class StormClass : uint8_t { kBroadcast, kMulticast, kUnknown };
inline constexpr size_t kStormClasses = 3;

// One address or prefix, as ip= names it: IPv4 in the first 4 bytes (network order).
struct IpPrefix {
  bool v6 = false;
  uint8_t length = 32;  // prefix length: 0-32 (IPv4), 0-128 (IPv6)
  std::array<uint8_t, 16> addr{};
  bool operator==(const IpPrefix&) const = default;
};

inline constexpr size_t kMaxPortIps = 16;  // ip= list length, per family
// Addresses ip_learn=1 binds from a port's own ARP / neighbour discovery, per family (a
// guest's IPv4 address; IPv6 link-local, global and temporary ones). DHCP leases come on
// top, up to kMaxPortIps in all.
inline constexpr size_t kMaxLearnedIps = 4;

struct GuardSpec {
  // Ingress policing: frames beyond the rate are dropped once classified, before any lookup
  // or copy. Rates 0: no meter; bursts 0: the default (DefaultPacketBurst / DefaultByteBurst).
  uint64_t police_pps = 0;        // police_pps=, frames a second
  uint64_t police_pps_burst = 0;  // police_pps_burst=, frames
  uint64_t police_bps = 0;        // police_bps=, bits a second (of whole frames)
  uint64_t police_bps_burst = 0;  // police_bps_burst=, bytes
  // Storm control (storm_broadcast=, storm_multicast=, storm_unknown=): flooded frames a
  // second, by StormClass; 0: no limit.
  std::array<uint64_t, kStormClasses> storm{};
  // bpdu_guard=1: a BPDU (to 01:80:C2:00:00:00) received from the port shuts it until
  // `hvswitchctl port enable`.
  bool bpdu_guard = false;
  // IP anti-spoofing (ip=): the only addresses the port may send from, ARP for and
  // advertise as a neighbour (switch/datapath/ip_guard.h); empty: any (unless ip_learn).
  std::vector<IpPrefix> ips;
  // ip_learn=1: besides `ips`, the addresses a DHCP server (on a port without ip_learn)
  // leased to the port's MAC, and those the port claims first with ARP or neighbour
  // discovery (up to kMaxLearnedIps a family); nothing else, even without `ips`. Needs the
  // port's MAC fixed (mac= or lock=1).
  bool ip_learn = false;

  bool policed() const { return police_pps != 0 || police_bps != 0; }
  bool ip_guarded() const { return !ips.empty() || ip_learn; }
  bool storm_controlled() const { return storm[0] != 0 || storm[1] != 0 || storm[2] != 0; }
  bool operator==(const GuardSpec&) const = default;
};

// A meter's default burst: 10 ms at its rate, and never less than one full receive burst
// of the switch (64 frames; of 1518 bytes for a byte meter), so that a conforming sender's
// burst is not cut by the way the switch polls.
inline constexpr uint64_t kMinBurstFrames = 64;
inline constexpr uint64_t DefaultPacketBurst(uint64_t pps) {
  return pps / 100 > kMinBurstFrames ? pps / 100 : kMinBurstFrames;
}
inline constexpr uint64_t DefaultByteBurst(uint64_t bps) {
  return bps / 800 > kMinBurstFrames * 1518 ? bps / 800 : kMinBurstFrames * 1518;
}

}  // namespace hvswitch
