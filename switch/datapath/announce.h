// Announcements: the frames by which a station says where it now is, as a live-migrated
// guest does on its new port (QEMU's RARP, sent by the vhost library for a guest without
// VIRTIO_NET_F_GUEST_ANNOUNCE; else the guest's own gratuitous ARP and unsolicited
// neighbour advertisements), or a host whose address moved. The workers count them per
// receiving port (hvswitch_port_announcements_total): the FDB follows them as it follows
// any source, and the counter shows an operator that the guest announced itself.
// Pure code over bytes, any thread.
#pragma once

#include <cstdint>
#include <cstring>

#include "switch/datapath/ipv6_upper.h"

namespace hvswitch {

// Whether `frame` (`len` bytes of a whole Ethernet frame, untagged or one 802.1Q tag) is
//   - RARP (EtherType 0x8035), of any operation: QEMU's announce is a reverse request;
//   - an Ethernet/IPv4 ARP request or reply whose sender and target protocol addresses
//     are the same (gratuitous ARP, RFC 5227 3 ARP Announcement);
//   - an ICMPv6 neighbour advertisement not flagged solicited (RFC 4861 7.2.6).
inline bool IsAnnouncement(const uint8_t* frame, uint32_t len) {
  uint32_t l2 = 14;
  if (len < l2) return false;
  uint16_t type = static_cast<uint16_t>(frame[12] << 8 | frame[13]);
  if (type == 0x8100) {
    l2 = 18;
    if (len < l2) return false;
    type = static_cast<uint16_t>(frame[16] << 8 | frame[17]);
  }
  const uint8_t* l3 = frame + l2;
  const uint32_t l3_len = len - l2;
  switch (type) {
    case 0x8035:
      return true;
    case 0x0806: {
      static constexpr uint8_t kEthernetIpv4[6] = {0, 1, 8, 0, 6, 4};
      return l3_len >= 28 && std::memcmp(l3, kEthernetIpv4, sizeof(kEthernetIpv4)) == 0 &&
             std::memcmp(l3 + 14, l3 + 24, 4) == 0;
    }
    case 0x86dd: {
      if (l3_len < 40 || (l3[0] >> 4) != 6) return false;
      const uint8_t* icmp = nullptr;
      uint32_t icmp_len = 0;
      return FindIcmpv6(l3, l3_len, &icmp, &icmp_len) == Ipv6Upper::kIcmpv6 &&
             icmp_len >= 24 && icmp[0] == 136 && (icmp[4] & 0x40) == 0;
    }
    default:
      return false;
  }
}

// Where announcements go: broadcast (RARP, ARP) and IPv6's all-nodes group
// (33:33:00:00:00:01, unsolicited advertisements), as FDB keys without the VLAN.
inline constexpr uint64_t kAllNodesKey = 0x010000003333;
inline bool MayBeAnnouncement(uint64_t dst_mac_key) {
  return dst_mac_key == 0xffffffffffff || dst_mac_key == kAllNodesKey;
}

}  // namespace hvswitch
