// Test frames with every header kind the offload code handles (802.1Q, IPv4 options,
// IPv6 extension headers, TCP/UDP) and an independent RFC 1071 checksum to judge them.
// Shared by the unit and integration tests.
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>

#include <cstdint>
#include <vector>

namespace hvswitch {

// RFC 1071 one's complement sum over 16-bit big-endian words, written the plain way.
inline uint32_t Rfc1071Sum(const std::vector<uint8_t>& bytes, uint32_t sum = 0) {
  for (size_t i = 0; i < bytes.size(); i += 2) {
    uint32_t word = uint32_t{bytes[i]} << 8;
    if (i + 1 < bytes.size()) word |= bytes[i + 1];
    sum += word;
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum;
}

inline void Put16(std::vector<uint8_t>& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}

struct FrameSpec {
  bool ipv6;
  bool tcp;
  bool tagged;
  bool options;  // IPv4 options (8 bytes) / IPv6 hop-by-hop + destination options
  uint32_t payload = 100;
};

struct Built {
  std::vector<uint8_t> bytes;
  uint32_t l3, l4, end;
};

inline Built Build(const FrameSpec& s) {
  Built b;
  std::vector<uint8_t>& f = b.bytes;
  const uint32_t l2 = s.tagged ? 18 : 14;
  const uint32_t l3_len = s.ipv6 ? 40 + (s.options ? 16 : 0) : 20 + (s.options ? 8 : 0);
  const uint32_t l4_len = s.tcp ? 20 : 8;
  b.l3 = l2;
  b.l4 = l2 + l3_len;
  b.end = b.l4 + l4_len + s.payload;
  f.assign(b.end + 6, 0);  // + Ethernet padding the checksum must not cover
  for (uint32_t i = 0; i < 12; ++i) f[i] = static_cast<uint8_t>(0x10 + i);
  if (s.tagged) {
    Put16(f, 12, RTE_ETHER_TYPE_VLAN);
    Put16(f, 14, 100);
  }
  Put16(f, l2 - 2, s.ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
  const uint8_t proto = s.tcp ? IPPROTO_TCP : IPPROTO_UDP;
  if (s.ipv6) {
    f[l2] = 0x60;
    Put16(f, l2 + 4, static_cast<uint16_t>(b.end - l2 - 40));
    f[l2 + 6] = s.options ? 0 : proto;  // hop-by-hop first
    f[l2 + 7] = 64;
    for (int i = 0; i < 32; ++i) f[l2 + 8 + i] = static_cast<uint8_t>(0xa0 + i);
    if (s.options) {
      f[l2 + 40] = 60;  // then destination options
      f[l2 + 41] = 0;   // 8 bytes
      f[l2 + 48] = proto;
      f[l2 + 49] = 0;
    }
  } else {
    f[l2] = static_cast<uint8_t>(0x40 | (l3_len / 4));
    Put16(f, l2 + 2, static_cast<uint16_t>(b.end - l2));
    f[l2 + 8] = 64;
    f[l2 + 9] = proto;
    for (int i = 0; i < 8; ++i) f[l2 + 12 + i] = static_cast<uint8_t>(0xc0 + i);
    if (s.options) f[l2 + 20] = 1;  // NOPs
    if (s.options) f[l2 + 21] = 1;
  }
  if (s.tcp) {
    f[b.l4 + 12] = 0x50;
  } else {
    Put16(f, b.l4 + 4, static_cast<uint16_t>(b.end - b.l4));
  }
  for (uint32_t i = b.l4 + l4_len; i < b.end; ++i) f[i] = static_cast<uint8_t>(i * 7);
  return b;
}

// The pseudo-header sum per RFC 768/793 (IPv4) and RFC 8200 (IPv6), independently.
inline uint32_t PseudoSum(const Built& b, const FrameSpec& s) {
  std::vector<uint8_t> p;
  const auto& f = b.bytes;
  uint32_t l4_len = b.end - b.l4;
  if (s.ipv6) {
    p.assign(f.begin() + b.l3 + 8, f.begin() + b.l3 + 40);
    p.insert(p.end(), {0, 0, static_cast<uint8_t>(l4_len >> 8), static_cast<uint8_t>(l4_len),
                       0, 0, 0, static_cast<uint8_t>(s.tcp ? 6 : 17)});
  } else {
    p.assign(f.begin() + b.l3 + 12, f.begin() + b.l3 + 20);
    p.insert(p.end(), {0, static_cast<uint8_t>(s.tcp ? 6 : 17), static_cast<uint8_t>(l4_len >> 8),
                       static_cast<uint8_t>(l4_len)});
  }
  return Rfc1071Sum(p);
}

}  // namespace hvswitch
