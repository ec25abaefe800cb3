// rte_ipv4_udptcp_cksum_mbuf (an outer UDP checksum over a chain) is experimental in 22.11.
#define ALLOW_EXPERIMENTAL_API 1

#include "ports/vxlan/vxlan_frame.h"

#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>
#include <rte_vxlan.h>

#include <cstddef>
#include <cstring>

namespace hvswitch {
namespace {

constexpr uint32_t kIpOffset = RTE_ETHER_HDR_LEN;
constexpr uint32_t kUdpOffset = kIpOffset + sizeof(rte_ipv4_hdr);
constexpr uint32_t kVxlanOffset = kUdpOffset + sizeof(rte_udp_hdr);
static_assert(kVxlanOffset + sizeof(rte_vxlan_hdr) == kVxlanOverhead);
constexpr uint8_t kVxlanFlagI = 0x08;  // RFC 7348: the VNI is valid
constexpr uint16_t kFirstDynamicPort = 49152;

bool IsFragment(const rte_ipv4_hdr* ip) {
  return (rte_be_to_cpu_16(ip->fragment_offset) &
          (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0;
}

}  // namespace

OuterTemplate BuildOuterTemplate(const OuterAddresses& a) {
  // Written field by field at their offsets: the template's bytes have no alignment
  // (the VXLAN header's words sit at offset 42).
  OuterTemplate t{};
  uint8_t* p = t.bytes.data();
  std::memcpy(p, a.dst_mac.data(), 6);
  std::memcpy(p + 6, a.src_mac.data(), 6);
  const rte_be16_t ipv4 = RTE_BE16(RTE_ETHER_TYPE_IPV4);
  std::memcpy(p + 12, &ipv4, 2);
  p[kIpOffset] = RTE_IPV4_VHL_DEF;
  p[kIpOffset + offsetof(rte_ipv4_hdr, time_to_live)] = 64;
  p[kIpOffset + offsetof(rte_ipv4_hdr, next_proto_id)] = IPPROTO_UDP;
  std::memcpy(p + kIpOffset + offsetof(rte_ipv4_hdr, src_addr), &a.src_ip, 4);
  std::memcpy(p + kIpOffset + offsetof(rte_ipv4_hdr, dst_addr), &a.dst_ip, 4);
  const rte_be16_t port = rte_cpu_to_be_16(a.udp_port);
  std::memcpy(p + kUdpOffset + offsetof(rte_udp_hdr, dst_port), &port, 2);
  const rte_be32_t flags = rte_cpu_to_be_32(uint32_t{kVxlanFlagI} << 24);
  const rte_be32_t vni = rte_cpu_to_be_32(a.vni << 8);
  std::memcpy(p + kVxlanOffset, &flags, 4);
  std::memcpy(p + kVxlanOffset + 4, &vni, 4);
  t.ip_sum = rte_raw_cksum(p + kIpOffset, sizeof(rte_ipv4_hdr));  // length, id, checksum 0
  return t;
}

bool Encapsulate(rte_mbuf* m, const OuterTemplate& outer, uint16_t src_port, uint16_t ip_id,
                 bool udp_checksum) {
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kVxlanOverhead));
  if (p == nullptr) return false;
  std::memcpy(p, outer.bytes.data(), kVxlanOverhead);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p + kIpOffset);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(p + kUdpOffset);
  const uint32_t ip_len = m->pkt_len - kIpOffset;
  const rte_be16_t total_length = rte_cpu_to_be_16(static_cast<uint16_t>(ip_len));
  const rte_be16_t packet_id = rte_cpu_to_be_16(ip_id);
  ip->total_length = total_length;
  ip->packet_id = packet_id;
  // The template's sum and this frame's two fields, folded (what rte_ipv4_cksum would
  // compute over the whole header).
  ip->hdr_checksum = static_cast<uint16_t>(
      ~__rte_raw_cksum_reduce(outer.ip_sum + total_length + packet_id));
  udp->src_port = rte_cpu_to_be_16(src_port);
  udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(ip_len - sizeof(rte_ipv4_hdr)));
  if (udp_checksum) udp->dgram_cksum = rte_ipv4_udptcp_cksum_mbuf(m, ip, kUdpOffset);
  m->ol_flags &= ~(RTE_MBUF_F_TX_OFFLOAD_MASK | RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED);
  m->l2_len = RTE_ETHER_HDR_LEN;
  m->l3_len = sizeof(rte_ipv4_hdr);
  return true;
}

uint16_t InnerFlowPort(const rte_mbuf* m) {
  const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = m->data_len;
  uint32_t hash = 0;
  if (len >= RTE_ETHER_HDR_LEN) {
    uint64_t macs;
    std::memcpy(&macs, p, 8);
    hash = rte_hash_crc_8byte(macs, hash);
    uint32_t rest;
    std::memcpy(&rest, p + 8, 4);
    hash = rte_hash_crc_4byte(rest, hash);
    uint16_t type;
    std::memcpy(&type, p + 12, 2);
    if (type == RTE_BE16(RTE_ETHER_TYPE_IPV4) && len >= kIpOffset + sizeof(rte_ipv4_hdr)) {
      const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(p + kIpOffset);
      hash = rte_hash_crc_4byte(ip->src_addr, hash);
      hash = rte_hash_crc_4byte(ip->dst_addr, hash);
      const uint32_t l4 = kIpOffset + rte_ipv4_hdr_len(ip);
      const bool ports = (ip->next_proto_id == IPPROTO_TCP || ip->next_proto_id == IPPROTO_UDP) &&
                         !IsFragment(ip) && len >= l4 + 4;
      if (ports) {
        uint32_t both;
        std::memcpy(&both, p + l4, 4);
        hash = rte_hash_crc_4byte(both, hash);
      }
    } else if (type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
               len >= kIpOffset + sizeof(rte_ipv6_hdr) + 4) {
      const auto* ip = reinterpret_cast<const rte_ipv6_hdr*>(p + kIpOffset);
      // rte_hash_crc loads 8 bytes at a time: the addresses (2-byte aligned in the frame)
      // are copied to an aligned buffer first.
      uint64_t addresses[4];
      std::memcpy(addresses, ip->src_addr, sizeof(addresses));  // source and destination
      hash = rte_hash_crc(addresses, sizeof(addresses), hash);
      if (ip->proto == IPPROTO_TCP || ip->proto == IPPROTO_UDP) {
        uint32_t both;
        std::memcpy(&both, p + kIpOffset + sizeof(rte_ipv6_hdr), 4);
        hash = rte_hash_crc_4byte(both, hash);
      }
    }
  }
  // Folded so that every bit of the hash moves the port.
  hash ^= hash >> 16;
  return static_cast<uint16_t>(kFirstDynamicPort | (hash & (65535 - kFirstDynamicPort)));
}

OuterVerdict ParseOuter(const rte_mbuf* m, const LocalVteps& local, OuterInfo& info) {
  const uint32_t len = m->data_len;
  if (len < kIpOffset + sizeof(rte_ipv4_hdr)) return OuterVerdict::kNotVxlan;
  const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
  uint16_t type;
  std::memcpy(&type, p + 12, 2);
  if (type != RTE_BE16(RTE_ETHER_TYPE_IPV4)) return OuterVerdict::kNotVxlan;
  const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(p + kIpOffset);
  if (ip->next_proto_id != IPPROTO_UDP || (ip->version_ihl >> 4) != 4 ||
      !local.HasIp(ip->dst_addr)) {
    return OuterVerdict::kNotVxlan;
  }
  // UDP to a VTEP address: VXLAN if to its port, and then every header must be whole.
  const uint32_t ihl = rte_ipv4_hdr_len(ip);
  if (ihl < sizeof(rte_ipv4_hdr)) return OuterVerdict::kBadIpHeader;
  if (len < kIpOffset + ihl + sizeof(rte_udp_hdr)) return OuterVerdict::kShort;
  const auto* udp = reinterpret_cast<const rte_udp_hdr*>(p + kIpOffset + ihl);
  if (!local.Has(ip->dst_addr, udp->dst_port)) return OuterVerdict::kNotVxlan;
  info.src_ip = ip->src_addr;
  info.dst_ip = ip->dst_addr;
  const uint32_t inner_offset = kIpOffset + ihl + sizeof(rte_udp_hdr) + sizeof(rte_vxlan_hdr);
  if (len < inner_offset) return OuterVerdict::kShort;
  const uint32_t ip_len = rte_be_to_cpu_16(ip->total_length);
  // The checksum: the device's verdict where it gives one, else computed (over the
  // 20-byte header: options are neither checked nor used).
  const uint64_t ip_csum = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
  const bool csum_bad = ip_csum == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
                        (ip_csum != RTE_MBUF_F_RX_IP_CKSUM_GOOD && rte_ipv4_cksum(ip) != 0);
  if (ip_len < ihl || csum_bad) return OuterVerdict::kBadIpHeader;
  if (kIpOffset + ip_len > m->pkt_len) return OuterVerdict::kShort;
  if (IsFragment(ip)) return OuterVerdict::kFragment;
  const uint32_t udp_len = rte_be_to_cpu_16(udp->dgram_len);
  if (udp_len != ip_len - ihl ||
      udp_len < sizeof(rte_udp_hdr) + sizeof(rte_vxlan_hdr) + kInnerMinLength) {
    return OuterVerdict::kBadUdp;
  }
  // Read with memcpy: the header's words need not be aligned (an IPv4 header with options).
  const uint8_t* vxlan = p + kIpOffset + ihl + sizeof(rte_udp_hdr);
  rte_be32_t flags, vni;
  std::memcpy(&flags, vxlan, 4);
  std::memcpy(&vni, vxlan + 4, 4);
  // Reserved bits are ignored on receipt (RFC 7348 5); the I flag must be set.
  if (!((rte_be_to_cpu_32(flags) >> 24) & kVxlanFlagI)) return OuterVerdict::kBadFlags;
  info.vni = rte_be_to_cpu_32(vni) >> 8;
  info.inner_offset = static_cast<uint16_t>(inner_offset);
  return OuterVerdict::kVxlan;
}

}  // namespace hvswitch
