// IP anti-spoofing: the addresses a port may send from (ip=), and whether a frame keeps to
// them. Pure code over bytes (no EAL): the workers run it on frames of ports with
// bindings, the unit tests and the ip_guard fuzzer on anything.
//
// A port with bindings may send
//   - IPv4 packets from a bound address, and from 0.0.0.0 only as a DHCP client does
//     (UDP from port 68 to 67);
//   - ARP whose sender protocol address is bound, or 0.0.0.0 (a probe, RFC 5227);
//   - IPv6 packets from a bound address, and from :: only as duplicate address detection
//     (a neighbour solicitation) and MLD reports do;
//   - neighbour advertisements only for a bound target (the in-subnet hijack);
//   - any frame of another EtherType (not IP: the bindings say nothing of it), except
//     one whose EtherType is another VLAN tag (what it carries cannot be checked);
//   - with ip_learn=1 (IpBindings::learn), no UDP from port 67 or to port 68 (a DHCP
//     server's or relay's message).
// A family without bindings sends nothing of that family (beyond DHCP and DAD). IPv6
// link-local addresses are addresses like any: bind fe80::/64 (or the guest's own) to let
// a port use them. Anything too short to be checked is refused, and so is an IPv6 packet
// whose extension headers cannot be followed to its upper layer (more than eight, or past
// the frame's first segment). A fragment is not looked into: neighbour discovery is never
// fragmented (receivers drop fragmented ND, RFC 6980).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ports/guard_spec.h"

namespace hvswitch {

// What a port's IP anti-spoofing is, for the worker's pipeline (its Classify instances):
// none, bindings (ip=), or bindings that learn (ip_learn=1: DHCP server messages refused
// even from a bound source).
enum class IpMode : uint8_t { kNone, kBound, kLearn };

// A port's bindings as the workers check them: addresses and masks in network byte order,
// loaded as the frame's bytes are (memcpy), so that a check is an AND and a compare.
struct IpBindings {
  uint8_t nb_v4 = 0, nb_v6 = 0;
  // ip_learn=1: the port is a DHCP client only (its DHCP server messages are refused).
  bool learn = false;
  std::array<uint32_t, kMaxPortIps> v4_addr{}, v4_mask{};
  std::array<std::array<uint64_t, 2>, kMaxPortIps> v6_addr{}, v6_mask{};

  // Up to kMaxPortIps of each family; host bits of a prefix are ignored.
  void Add(const IpPrefix& prefix);
  bool empty() const { return nb_v4 == 0 && nb_v6 == 0; }

  bool Allows4(uint32_t addr) const {
    for (uint8_t i = 0; i < nb_v4; ++i) {
      if ((addr & v4_mask[i]) == v4_addr[i]) return true;
    }
    return false;
  }
  bool Allows6(const uint8_t* addr) const;
};

// EtherTypes in network byte order, as a frame's bytes load them: the three IpAllowed
// reads, and the tags (802.1Q, 802.1ad, the old QinQ) it refuses, not seeing past them.
inline constexpr uint16_t kEtherIpv4 = 0x0008, kEtherArp = 0x0608, kEtherIpv6 = 0xdd86;
inline constexpr uint16_t kEtherVlan = 0x0081, kEtherQinq = 0xa888, kEtherQinq1 = 0x0091;

// Whether IpAllowed looks at a frame of this EtherType at all (every other one passes).
inline bool IpGuardReads(uint16_t ether_type) {
  return ether_type == kEtherIpv4 || ether_type == kEtherArp || ether_type == kEtherIpv6 ||
         ether_type == kEtherVlan || ether_type == kEtherQinq || ether_type == kEtherQinq1;
}

// Whether a frame of a bound port keeps to `bindings`: `l3` points at what follows its
// Ethernet header (and tag), `ether_type` is the EtherType there (network order), `len`
// the bytes at `l3` in the frame's first segment.
bool IpAllowed(const IpBindings& bindings, uint16_t ether_type, const uint8_t* l3, uint32_t len);

// ip_learn=1: whether the frame (IpAllowed's verdict `allowed`) claims an address its
// port's bindings do not hold: an ARP refused, or a probe (from 0.0.0.0, RFC 5227); neighbour
// discovery (router and neighbour solicitations, advertisements) refused, or from ::
// (DAD). The control thread reads such frames (switch/control/address_claim.h) and binds
// what is the port's to take.
bool ClaimsUnbound(uint16_t ether_type, const uint8_t* l3, uint32_t len, bool allowed);

// Whether the frame is a DHCP server's message to a client (IPv4, UDP 67 -> 68): what a
// learning port is sent of it tells the control thread its lease (dhcp_message.h).
bool IsDhcpReply(uint16_t ether_type, const uint8_t* l3, uint32_t len);

}  // namespace hvswitch
