#include "offload/checksum.h"

#include <rte_byteorder.h>
#include <rte_ip.h>

#include <cstring>

namespace hvswitch {
namespace {

void Store16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

}  // namespace

uint16_t PseudoHeaderSum(const uint8_t* data, const HeaderLayout& layout, uint32_t l4_len) {
  // (IPv4 needs no l4_len: its header has the length.)
  const uint8_t* l3 = data + layout.l3_offset();
  const uint32_t proto = layout.l4 == L4Type::kTcp ? IPPROTO_TCP : IPPROTO_UDP;
  if (layout.l3 == L3Type::kIpv4) {
    // DPDK's takes the length from total_length (checked by ParseHeaders against l4_end)
    // and the protocol from the header, which for IPv4 is the L4 protocol.
    return rte_ipv4_phdr_cksum(reinterpret_cast<const rte_ipv4_hdr*>(l3), 0);
  }
  // DPDK's rte_ipv6_phdr_cksum takes the length from payload_len and the protocol from
  // the first next-header, both wrong when extension headers sit between.
  const auto* ip = reinterpret_cast<const rte_ipv6_hdr*>(l3);
  struct {
    uint8_t addrs[32];
    uint32_t len;
    uint32_t proto;
  } pseudo;
  std::memcpy(pseudo.addrs, ip->src_addr, 16);
  std::memcpy(pseudo.addrs + 16, ip->dst_addr, 16);
  pseudo.len = rte_cpu_to_be_32(l4_len);
  pseudo.proto = rte_cpu_to_be_32(proto);
  return __rte_raw_cksum_reduce(__rte_raw_cksum(&pseudo, sizeof(pseudo), 0));
}

bool FillL4Checksum(uint8_t* data, const HeaderLayout& layout) {
  if (layout.error != HeaderError::kNone || layout.l4 == L4Type::kOther) return false;
  uint8_t* l4 = data + layout.l4_offset();
  uint8_t* field = data + layout.l4_checksum_offset();
  Store16(field, 0);
  const uint32_t l4_len = layout.l4_end - layout.l4_offset();
  uint32_t sum = __rte_raw_cksum(l4, l4_len, PseudoHeaderSum(data, layout, l4_len));
  uint16_t cksum = static_cast<uint16_t>(~__rte_raw_cksum_reduce(sum));
  if (cksum == 0 && layout.l4 == L4Type::kUdp) cksum = 0xffff;
  Store16(field, cksum);
  return true;
}

bool CompletePartialChecksum(uint8_t* data, uint32_t end, uint32_t csum_start,
                             uint32_t csum_offset, bool udp) {
  if (csum_start >= end || csum_offset > end - csum_start || end - csum_start - csum_offset < 2) {
    return false;
  }
  uint16_t cksum = static_cast<uint16_t>(~rte_raw_cksum(data + csum_start, end - csum_start));
  if (cksum == 0 && udp) cksum = 0xffff;
  Store16(data + csum_start + csum_offset, cksum);
  return true;
}

}  // namespace hvswitch
