// What the snooping parsers (mcast_message.h, dhcp_message.h, address_claim.h) read first
// in a frame a guest sent: the Ethernet header and at most one 802.1Q tag, then an IPv4
// header or an IPv6 header and its ICMPv6 message, each checked as the receiver would check
// it before acting on what follows. Every length is the smaller of what a header says and
// the bytes there are; nothing past `len` is read. Pure code over bytes (no EAL), any
// thread: the control thread runs it, the unit tests and the snoop fuzzer too.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>

namespace hvswitch {

// Multi-byte fields in host order, loaded byte-wise: a frame's fields are rarely aligned.
inline uint16_t Be16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return __builtin_bswap16(v);
}
inline uint32_t Be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800, kEtherTypeArp = 0x0806,
                          kEtherTypeIpv6 = 0x86dd;

// The frame past its Ethernet header and tag.
struct L3Bytes {
  uint16_t ether_type = 0;  // host order
  const uint8_t* data = nullptr;
  uint32_t len = 0;
};
// One 802.1Q tag is skipped, no more: behind a second tag, or an 802.1ad or old QinQ one,
// ether_type is that tag's TPID, which no parser reads (the switch's VLANs are
// single-tagged; a guest has no business sending a stack). nullopt: shorter than the
// Ethernet header and its tag.
std::optional<L3Bytes> FrameL3(const uint8_t* frame, uint32_t len);

struct Ipv4Packet {
  const uint8_t* header = nullptr;  // source address at +12, destination at +16
  uint8_t proto = 0;
  const uint8_t* payload = nullptr;
  uint32_t payload_len = 0;  // from the total length: Ethernet padding behind it is not
                             // part of the packet
};
// A whole, unfragmented IPv4 packet with a valid header (version, header and total lengths
// within the bytes, header checksum); options are allowed (IGMP carries router alert).
std::optional<Ipv4Packet> ReadIpv4(const L3Bytes& l3);

struct Icmpv6Packet {
  const uint8_t* header = nullptr;  // hop limit at +7, source at +8, destination at +24
  const uint8_t* icmp = nullptr;
  uint32_t icmp_len = 0;  // from the payload length, at least 4
};
// An IPv6 packet whose payload length is within the bytes, whose hop-by-hop, routing and
// destination options headers lead to ICMPv6 (at most kMaxExtensionHeaders; a fragment
// header or another upper layer: nullopt) and whose ICMPv6 checksum is valid.
std::optional<Icmpv6Packet> ReadIcmpv6(const L3Bytes& l3);

// Whether `len` bytes that hold their own ones' complement checksum field (IGMP's; IPv4's
// header) sum right.
bool ChecksumValid(const uint8_t* bytes, uint32_t len);
// The folded ones' complement sum of an ICMPv6 message (`ip`: its IPv6 header) and its
// pseudo-header: 0xffff when its checksum is right.
uint16_t Icmpv6Sum(const uint8_t* ip, const uint8_t* icmp, uint32_t icmp_len);

inline bool IsZero16(const uint8_t* addr) {
  uint64_t a, b;
  std::memcpy(&a, addr, 8);
  std::memcpy(&b, addr + 8, 8);
  return (a | b) == 0;
}

}  // namespace hvswitch
