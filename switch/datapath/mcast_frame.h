// What a frame to a group address is to IGMP/MLD snooping, as a worker tells it from its
// first segment: a query (flooded, and copied for the control thread: its sender is a
// multicast router), a membership report or leave (sent to the router ports only, and
// copied: it says who listens), or anything else (forwarded by the group table). Only the
// message type is read here; the control thread checks the copies in full
// (switch/control/mcast_message.h) and ignores what does not hold.
#pragma once

#include <cstdint>

namespace hvswitch {

enum class McastFrame : uint8_t { kData, kQuery, kReport };

// IGMP (IP protocol 2): membership query; v1, v2 and v3 reports, v2 leave (RFC 1112, 2236,
// 3376). MLD (ICMPv6): query; v1 report and done, v2 report (RFC 2710, 3810). Shared with
// the control thread's parser (switch/control/mcast_message.cc).
inline constexpr uint8_t kProtoIgmp = 2;
inline constexpr uint8_t kIgmpQuery = 0x11, kIgmpv1Report = 0x12, kIgmpv2Report = 0x16,
                         kIgmpv2Leave = 0x17, kIgmpv3Report = 0x22;
inline constexpr uint8_t kMldQuery = 130, kMldv1Report = 131, kMldv1Done = 132,
                         kMldv2Report = 143;

// `l3`: what follows the Ethernet header (and tag) whose EtherType (network order) is
// `ether_type`; `len`: the bytes of the first segment from `l3` on.
McastFrame ClassifyMcastFrame(uint16_t ether_type, const uint8_t* l3, uint32_t len);

}  // namespace hvswitch
