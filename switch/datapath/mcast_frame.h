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

// `l3`: what follows the Ethernet header (and tag) whose EtherType (network order) is
// `ether_type`; `len`: the bytes of the first segment from `l3` on.
McastFrame ClassifyMcastFrame(uint16_t ether_type, const uint8_t* l3, uint32_t len);

}  // namespace hvswitch
