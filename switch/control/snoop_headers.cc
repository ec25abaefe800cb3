#include "switch/control/snoop_headers.h"

#include <rte_ip.h>

#include "switch/datapath/ipv6_upper.h"

namespace hvswitch {
namespace {

constexpr uint32_t kEthernetHeader = 14, kTagLength = 4;
constexpr uint16_t kTpidVlan = 0x8100;

uint16_t Fold(uint32_t sum) {
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>((sum & 0xffff) + (sum >> 16));
}

}  // namespace

// rte_raw_cksum reads through memcpy: fields at any alignment.
bool ChecksumValid(const uint8_t* bytes, uint32_t len) {
  return rte_raw_cksum(bytes, len) == 0xffff;
}

uint16_t Icmpv6Sum(const uint8_t* ip, const uint8_t* icmp, uint32_t icmp_len) {
  // The pseudo-header (RFC 8200 8.1): both addresses, the upper-layer length, next header.
  const uint8_t tail[8] = {static_cast<uint8_t>(icmp_len >> 24),
                           static_cast<uint8_t>(icmp_len >> 16),
                           static_cast<uint8_t>(icmp_len >> 8), static_cast<uint8_t>(icmp_len),
                           0, 0, 0, kProtoIcmpv6};
  return Fold(uint32_t{rte_raw_cksum(ip + 8, 32)} + rte_raw_cksum(tail, sizeof(tail)) +
              rte_raw_cksum(icmp, icmp_len));
}

std::optional<L3Bytes> FrameL3(const uint8_t* frame, uint32_t len) {
  if (len < kEthernetHeader) return std::nullopt;
  uint16_t ether_type = Be16(frame + 12);
  uint32_t at = kEthernetHeader;
  if (ether_type == kTpidVlan) {
    if (len < kEthernetHeader + kTagLength) return std::nullopt;
    ether_type = Be16(frame + 16);
    at += kTagLength;
  }
  return L3Bytes{ether_type, frame + at, len - at};
}

std::optional<Ipv4Packet> ReadIpv4(const L3Bytes& l3) {
  if (l3.ether_type != kEtherTypeIpv4 || l3.len < 20) return std::nullopt;
  const uint8_t* ip = l3.data;
  const uint32_t ihl = (ip[0] & 0xfu) * 4, total = Be16(ip + 2);
  if ((ip[0] >> 4) != 4 || ihl < 20 || ihl > total || total > l3.len) return std::nullopt;
  if ((Be16(ip + 6) & 0x3fff) != 0) return std::nullopt;  // more fragments, or an offset
  if (!ChecksumValid(ip, ihl)) return std::nullopt;
  return Ipv4Packet{ip, ip[9], ip + ihl, total - ihl};
}

std::optional<Icmpv6Packet> ReadIcmpv6(const L3Bytes& l3) {
  if (l3.ether_type != kEtherTypeIpv6 || l3.len < 40) return std::nullopt;
  const uint8_t* ip = l3.data;
  const uint32_t payload = Be16(ip + 4);
  // Payload length 0 is a jumbogram's (RFC 2675): never on an Ethernet link.
  if ((ip[0] >> 4) != 6 || payload == 0 || payload > l3.len - 40) return std::nullopt;
  const uint8_t* icmp = nullptr;
  uint32_t icmp_len = 0;
  if (FindIcmpv6(ip, 40 + payload, &icmp, &icmp_len) != Ipv6Upper::kIcmpv6) return std::nullopt;
  if (Icmpv6Sum(ip, icmp, icmp_len) != 0xffff) return std::nullopt;
  return Icmpv6Packet{ip, icmp, icmp_len};
}

}  // namespace hvswitch
