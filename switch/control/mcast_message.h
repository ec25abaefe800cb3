// Multicast snooping's parser (RFC 4541): the IGMP (v1-v3) or MLD (v1, v2) message a frame
// carries, read as a snooping switch needs it: queries (a multicast router or querier is
// behind the port) and reports (which groups a port's listeners joined or left). Pure code
// over bytes (no EAL): the control thread runs it on frames the workers copied to it, the
// unit tests and the snoop fuzzer on anything. Every input is a guest's: any byte may lie.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace hvswitch {

// A multicast group address: IPv4 in the first 4 bytes (network order).
struct McastGroup {
  bool v6 = false;
  std::array<uint8_t, 16> addr{};
  auto operator<=>(const McastGroup&) const = default;
};

// The Ethernet destination frames to `group` carry (RFC 1112: 01:00:5e + the low 23 bits;
// RFC 2464: 33:33 + the low 32 bits), in the FDB key layout of switch/datapath/mac_key.h
// (VLAN 0).
uint64_t GroupMac(const McastGroup& group);

// Whether a snooping switch tracks `group`: IPv4 224.0.0.0/4 outside 224.0.0.0/24 (the
// link-local control groups are always flooded, RFC 4541 2.1.2); IPv6 ff00::/8 whose scope
// (low nibble of byte 1) is 2 or more, except ff02::1 (all nodes; RFC 4541 3).
bool SnoopedGroup(const McastGroup& group);

std::string McastGroupString(const McastGroup& group);  // "239.1.2.3", "ff05::1:3"

struct McastRecord {
  McastGroup group;
  bool join = false;  // false: leaves (IGMPv2 leave, MLDv1 done, v3/v2 record IS_IN/TO_IN
                      // with no source)
  bool operator==(const McastRecord&) const = default;
};

struct McastMessage {
  enum class Kind : uint8_t { kNone, kQuery, kReport };
  Kind kind = Kind::kNone;
  bool v6 = false;
  uint8_t version = 0;            // IGMP 1-3, MLD 1-2
  bool from_unspecified = false;  // sent from 0.0.0.0 / :: (a snooping switch's or proxy
                                  // querier: not a sign of a multicast router)
  McastGroup source;              // the IP source (a query's: the querier)
  McastGroup query_group;         // a group-specific query's group; all zero: a general query
                                  // or a report (of the message's family either way)
  std::vector<McastRecord> records;  // kReport: only groups SnoopedGroup() tracks, in the
                                     // message's order
  bool operator==(const McastMessage&) const = default;
};

// kNone for anything that is not a well-formed IGMP or MLD message: `frame` is a whole
// Ethernet frame from its destination MAC, untagged or with one 802.1Q tag. Well-formed:
//   - IGMP: a valid IPv4 header (snoop_headers.h), protocol 2, the IGMP checksum valid;
//     a query of 8 bytes (v1 with max response 0, else v2) or of 12 and more with its
//     sources (v3; 9 to 11 bytes is no version: RFC 3376 7.1); reports and leaves of 8
//     bytes and more (RFC 2236 2.5: what follows is ignored);
//   - MLD: ICMPv6 (snoop_headers.h) from a link-local address or :: (RFC 3810 5.1.14,
//     5.2.13); a query of 24 bytes (v1) or of 28 and more with its sources (v2); v1
//     reports and dones of 24 bytes and more;
//   - a query's group is all zero (general) or a multicast address;
//   - a v3/v2 report's records all within the message (its record count read, bytes after
//     the last record ignored); a record of an unknown type is skipped.
// A record's group that SnoopedGroup() does not track is left out: a report can have none.
McastMessage ParseMcastFrame(const uint8_t* frame, uint32_t len);

}  // namespace hvswitch
