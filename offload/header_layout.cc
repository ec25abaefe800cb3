#include "offload/header_layout.h"

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <cstring>

namespace hvswitch {
namespace {

constexpr uint8_t kHopByHop = 0, kRouting = 43, kFragment = 44, kDestOptions = 60;

uint16_t Be16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return rte_be_to_cpu_16(v);
}

HeaderLayout Fail(HeaderLayout layout, HeaderError error) {
  layout.error = error;
  return layout;
}

// Sets layout.l4 / l4_len for `proto` at layout.l4_offset(), within l4_end.
HeaderLayout ParseL4(const uint8_t* data, uint32_t available, uint8_t proto,
                     HeaderLayout layout) {
  const uint32_t at = layout.l4_offset();
  const uint32_t room = layout.l4_end - at;
  if (proto == IPPROTO_UDP) {
    if (room < sizeof(rte_udp_hdr) || at + sizeof(rte_udp_hdr) > available) {
      return Fail(layout, HeaderError::kTruncated);
    }
    layout.l4 = L4Type::kUdp;
    layout.l4_len = sizeof(rte_udp_hdr);
  } else if (proto == IPPROTO_TCP) {
    if (room < sizeof(rte_tcp_hdr) || at + sizeof(rte_tcp_hdr) > available) {
      return Fail(layout, HeaderError::kTruncated);
    }
    const uint32_t tcp_len = (data[at + 12] >> 4) * 4u;
    if (tcp_len < sizeof(rte_tcp_hdr)) return Fail(layout, HeaderError::kBadHeader);
    if (tcp_len > room || at + tcp_len > available) return Fail(layout, HeaderError::kTruncated);
    layout.l4 = L4Type::kTcp;
    layout.l4_len = static_cast<uint16_t>(tcp_len);
  }
  return layout;
}

}  // namespace

HeaderLayout ParseHeaders(const uint8_t* data, uint32_t available, uint32_t frame_len) {
  HeaderLayout layout;
  if (available > frame_len) available = frame_len;
  if (available < RTE_ETHER_HDR_LEN) return Fail(layout, HeaderError::kTruncated);
  uint16_t ether_type = Be16(data + 12);
  layout.l2_len = RTE_ETHER_HDR_LEN;
  if (ether_type == RTE_ETHER_TYPE_VLAN) {
    if (available < RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN) return Fail(layout, HeaderError::kTruncated);
    layout.tagged = true;
    layout.l2_len += RTE_VLAN_HLEN;
    ether_type = Be16(data + 16);
  }
  const uint32_t l3 = layout.l2_len;
  layout.l4_end = frame_len;

  if (ether_type == RTE_ETHER_TYPE_IPV4) {
    if (available < l3 + sizeof(rte_ipv4_hdr)) return Fail(layout, HeaderError::kTruncated);
    const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(data + l3);
    const uint32_t ihl = (ip->version_ihl & 0xf) * 4u;
    if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(rte_ipv4_hdr)) {
      return Fail(layout, HeaderError::kBadHeader);
    }
    const uint32_t total = rte_be_to_cpu_16(ip->total_length);
    if (total < ihl || l3 + total > frame_len) return Fail(layout, HeaderError::kBadLength);
    if (available < l3 + ihl) return Fail(layout, HeaderError::kTruncated);
    layout.l3 = L3Type::kIpv4;
    layout.l3_len = static_cast<uint16_t>(ihl);
    layout.l4_end = l3 + total;
    // Fragments other than the first carry no L4 header; the first carries a partial one.
    if ((rte_be_to_cpu_16(ip->fragment_offset) & (RTE_IPV4_HDR_OFFSET_MASK | RTE_IPV4_HDR_MF_FLAG)) != 0) {
      return layout;
    }
    return ParseL4(data, available, ip->next_proto_id, layout);
  }

  if (ether_type == RTE_ETHER_TYPE_IPV6) {
    if (available < l3 + sizeof(rte_ipv6_hdr)) return Fail(layout, HeaderError::kTruncated);
    const auto* ip = reinterpret_cast<const rte_ipv6_hdr*>(data + l3);
    if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6) return Fail(layout, HeaderError::kBadHeader);
    const uint32_t payload = rte_be_to_cpu_16(ip->payload_len);
    const uint32_t end = l3 + sizeof(rte_ipv6_hdr) + payload;
    if (end > frame_len) return Fail(layout, HeaderError::kBadLength);
    layout.l3 = L3Type::kIpv6;
    layout.l4_end = end;
    uint8_t next = ip->proto;
    uint32_t at = l3 + sizeof(rte_ipv6_hdr);
    bool fragment = false;
    while (next == kHopByHop || next == kRouting || next == kFragment || next == kDestOptions) {
      if (at + 8 > end || at + 8 > available) return Fail(layout, HeaderError::kTruncated);
      const uint32_t len = next == kFragment ? 8u : (data[at + 1] + 1u) * 8u;
      if (next == kFragment) {
        // Offset 0 and no "more fragments": an atomic fragment, whose L4 header is whole.
        fragment = (Be16(data + at + 2) & 0xfff9) != 0;
      }
      // Every header must lie in the bytes given, like those before it.
      if (at + len > end || at + len > available) return Fail(layout, HeaderError::kTruncated);
      next = data[at];
      at += len;
    }
    layout.l3_len = static_cast<uint16_t>(at - l3);
    if (fragment) return layout;
    return ParseL4(data, available, next, layout);
  }
  return layout;  // not IP: L2 only
}

}  // namespace hvswitch
