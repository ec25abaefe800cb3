// First-come-first-served address claims (in the manner of SAVI-FCFS, RFC 6620): which
// address an ARP or IPv6 neighbour discovery message from a guest claims, and for which
// link-layer address. Pure code over bytes (no EAL): the control thread runs it on frames
// the workers copied to it, the unit tests and the snoop fuzzer on anything.
#pragma once

#include <cstdint>
#include <optional>

#include "ports/guard_spec.h"

namespace hvswitch {

struct AddressClaim {
  IpPrefix address;       // length 32 or 128
  uint64_t link_mac = 0;  // the link-layer address given for it: ARP's sender hardware
                          // address; ND's source/target link-layer address option if
                          // present, else the Ethernet source (FDB key layout, VLAN 0)
  uint64_t eth_src = 0;   // the frame's Ethernet source (FDB key layout, VLAN 0)
  enum class Kind : uint8_t {
    kArp,        // ARP: its sender protocol address
    kArpProbe,   // ARP from 0.0.0.0 (RFC 5227): the target protocol address it probes
    kDad,        // a neighbour solicitation from :: (duplicate address detection): its target
    kNeighbour,  // an advertisement's target; a solicitation's or router solicitation's
                 // source
  } kind = Kind::kArp;
  bool operator==(const AddressClaim&) const = default;
};

// nullopt unless `frame` (a whole Ethernet frame, untagged or one 802.1Q tag) is
//   - Ethernet/IPv4 ARP (28 bytes and more), a request or a reply; or
//   - ICMPv6 (snoop_headers.h) neighbour discovery as RFC 4861 6.1.1 and 7.1 have a
//     receiver accept it (receivers drop anything else, so it claims nothing): hop limit
//     255, code 0, a router solicitation (8 bytes and more), a neighbour solicitation or
//     advertisement (24 and more) whose target is not multicast, options each of a length
//     other than 0 and within the message, link-layer address options of 8 bytes;
//     a solicitation from :: without a source link-layer address option; an advertisement
//     to a multicast destination not flagged solicited;
// and the address claimed is usable unicast: IPv4 not 0.0.0.0, 255.255.255.255, 127/8,
// 224/4 or 240/4; IPv6 not ::, ::1 or ff00::/8.
std::optional<AddressClaim> ParseAddressClaim(const uint8_t* frame, uint32_t len);

// Whether `address` (length 32 or 128) is usable unicast as above: what a port may be
// bound to, claimed or leased.
bool IsUsableUnicast(const IpPrefix& address);

}  // namespace hvswitch
