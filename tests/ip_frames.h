// Frames' L3 parts built byte by byte for the IP anti-spoofing tests (unit and
// integration): IPv4 with a UDP header, ARP, IPv6 with extension headers and an ICMPv6
// message, IPv6 with UDP; and ip= prefixes from text.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "ports/guard_spec.h"

namespace hvswitch::testing {

using Bytes = std::vector<uint8_t>;

inline IpPrefix Prefix(const char* addr, int length = -1) {
  IpPrefix p;
  p.v6 = std::strchr(addr, ':') != nullptr;
  EXPECT_EQ(inet_pton(p.v6 ? AF_INET6 : AF_INET, addr, p.addr.data()), 1) << addr;
  p.length = static_cast<uint8_t>(length >= 0 ? length : p.v6 ? 128 : 32);
  return p;
}


inline void Put(Bytes& b, size_t at, const void* data, size_t n) {
  if (b.size() < at + n) b.resize(at + n);
  std::memcpy(b.data() + at, data, n);
}
inline void Put16(Bytes& b, size_t at, uint16_t host) {
  const uint16_t v = htons(host);
  Put(b, at, &v, 2);
}
inline void PutAddr(Bytes& b, size_t at, const char* addr) {
  const IpPrefix p = Prefix(addr);
  Put(b, at, p.addr.data(), p.v6 ? 16 : 4);
}

// An IPv4 header (20 bytes, or more with options) and a UDP header from `sport` to `dport`.
inline Bytes Ipv4(const char* src, uint8_t proto = 17, uint16_t sport = 1000,
                  uint16_t dport = 2000, uint8_t ihl = 5) {
  Bytes b(ihl * 4u + 8);
  b[0] = static_cast<uint8_t>(0x40 | ihl);
  Put16(b, 2, static_cast<uint16_t>(b.size()));
  b[8] = 64;
  b[9] = proto;
  PutAddr(b, 12, src);
  PutAddr(b, 16, "10.0.0.99");
  Put16(b, ihl * 4u, sport);
  Put16(b, ihl * 4u + 2, dport);
  return b;
}

inline Bytes Arp(const char* sender) {
  Bytes b(28);
  Put16(b, 0, 1);
  Put16(b, 2, 0x0800);
  b[4] = 6;
  b[5] = 4;
  Put16(b, 6, 1);
  PutAddr(b, 14, sender);
  PutAddr(b, 24, "10.0.0.1");
  return b;
}

// An IPv6 header, `extensions` (each 8 bytes, next header in its first byte), then an
// ICMPv6 message of `type` whose target (bytes 8-23) is `target`.
inline Bytes Icmpv6(const char* src, uint8_t type, const char* target = "2001:db8::99",
                    std::vector<uint8_t> extensions = {}) {
  Bytes b(40);
  b[0] = 0x60;
  b[6] = extensions.empty() ? 58 : extensions[0];
  b[7] = 255;
  PutAddr(b, 8, src);
  PutAddr(b, 24, "ff02::1");
  for (size_t i = 0; i < extensions.size(); ++i) {
    Bytes ext(8);
    ext[0] = i + 1 < extensions.size() ? extensions[i + 1] : 58;
    Put(b, b.size(), ext.data(), ext.size());
  }
  const size_t icmp = b.size();
  b.resize(icmp + 24);
  b[icmp] = type;
  PutAddr(b, icmp + 8, target);
  Put16(b, 4, static_cast<uint16_t>(b.size() - 40));
  return b;
}

inline Bytes Udp6(const char* src) {
  Bytes b(48);
  b[0] = 0x60;
  b[6] = 17;
  PutAddr(b, 8, src);
  PutAddr(b, 24, "2001:db8::1");
  return b;
}

}  // namespace hvswitch::testing
