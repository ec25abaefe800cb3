// HeaderLayout: where a frame's L2, L3 and L4 headers are, parsed once from its first
// segment and checked against the frame's length. Pure code over bytes (no EAL), run by
// the workers on frames from guests and the wire, so it trusts nothing: every length is
// checked before it is used, and a frame that fails is reported with a reason to count.
#pragma once

#include <cstdint>

namespace hvswitch {

enum class L3Type : uint8_t { kOther, kIpv4, kIpv6 };
enum class L4Type : uint8_t { kOther, kTcp, kUdp };

// Why a frame's headers could not be used.
enum class HeaderError : uint8_t {
  kNone,
  kTruncated,   // a header runs past the bytes available
  kBadLength,   // an IP length field disagrees with the frame (too short, or past its end)
  kBadHeader,   // IPv4 header length under 20, version mismatch
};

struct HeaderLayout {
  HeaderError error = HeaderError::kNone;
  bool tagged = false;      // one 802.1Q tag
  L3Type l3 = L3Type::kOther;
  L4Type l4 = L4Type::kOther;
  uint16_t l2_len = 0;      // Ethernet header (and tag)
  uint16_t l3_len = 0;      // IPv4 header with options / IPv6 header with extensions
  uint16_t l4_len = 0;      // TCP header with options / UDP header
  uint32_t l4_end = 0;      // offset where the IP packet ends (later bytes are padding)

  uint32_t l3_offset() const { return l2_len; }
  uint32_t l4_offset() const { return uint32_t{l2_len} + l3_len; }
  // Where the TCP or UDP checksum field sits (TCP: byte 16 of its header, UDP: byte 6).
  uint32_t l4_checksum_offset() const { return l4_offset() + (l4 == L4Type::kTcp ? 16 : 6); }
};

// Parses the headers in `data[0 .. available)` (the contiguous first segment) of a frame
// of `frame_len` bytes. IPv6 extension headers (hop-by-hop, routing, fragment,
// destination options) are walked; L4 is only reported for unfragmented packets.
HeaderLayout ParseHeaders(const uint8_t* data, uint32_t available, uint32_t frame_len);

}  // namespace hvswitch
