// Following an IPv6 packet's extension headers to its upper layer, bounded: shared by IP
// anti-spoofing (ip_guard.h) and IGMP/MLD snooping's classification (mcast_frame.h) on the
// workers, and the control thread's snooping parsers.
// Pure code over bytes, any thread.
#pragma once

#include <cstdint>

namespace hvswitch {

inline constexpr uint8_t kProtoIcmpv6 = 58;

// What the walk of an IPv6 packet's extension headers found.
enum class Ipv6Upper : uint8_t {
  kIcmpv6,      // an ICMPv6 message: its bytes from *icmp on
  kOther,       // another upper layer, or a fragment (neighbour discovery is never one:
                // RFC 6980, receivers drop fragmented ND)
  kUnreadable,  // a chain longer than kMaxExtensionHeaders, or past the bytes available
};
// Past this many extension headers a packet is not read on (a receiver may read on:
// eight destination options headers would hide an advertisement from a shorter walk).
inline constexpr int kMaxExtensionHeaders = 8;

// Past hop-by-hop, routing and destination options headers to the upper layer. `ip` holds
// at least the 40 bytes of the IPv6 header; `len` bytes are there to read.
inline Ipv6Upper FindIcmpv6(const uint8_t* ip, uint32_t len, const uint8_t** icmp,
                        uint32_t* icmp_len) {
  uint8_t next = ip[6];
  uint32_t at = 40;
  for (int headers = 0; headers <= kMaxExtensionHeaders; ++headers) {
    if (next == kProtoIcmpv6) {
      if (len < at + 4) return Ipv6Upper::kUnreadable;
      *icmp = ip + at;
      *icmp_len = len - at;
      return Ipv6Upper::kIcmpv6;
    }
    if (next != 0 && next != 43 && next != 60) return Ipv6Upper::kOther;
    if (len < at + 8) return Ipv6Upper::kUnreadable;
    next = ip[at];
    at += (ip[at + 1] + 1u) * 8;
  }
  return Ipv6Upper::kUnreadable;
}

}  // namespace hvswitch
