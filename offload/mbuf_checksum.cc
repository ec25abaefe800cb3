#include "offload/mbuf_checksum.h"

#include <rte_ip.h>
#include <rte_mbuf.h>

#include <cstring>

namespace hvswitch {

bool CompletePartialChecksum(rte_mbuf* m, const HeaderLayout& layout) {
  if (layout.error != HeaderError::kNone || layout.l4 == L4Type::kOther) return false;
  const uint32_t l4 = layout.l4_offset();
  uint16_t raw = 0;
  if (rte_raw_cksum_mbuf(m, l4, layout.l4_end - l4, &raw) != 0) return false;
  uint16_t cksum = static_cast<uint16_t>(~raw);
  if (cksum == 0 && layout.l4 == L4Type::kUdp) cksum = 0xffff;
  const uint32_t field = l4 + (layout.l4 == L4Type::kTcp ? 16 : 6);
  std::memcpy(rte_pktmbuf_mtod_offset(m, uint8_t*, field), &cksum, 2);
  return true;
}

void RequestChecksumOffload(rte_mbuf* m, const HeaderLayout& layout) {
  m->l2_len = layout.l2_len;
  m->l3_len = layout.l3_len;
  m->ol_flags &= ~(RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6);
  m->ol_flags |= (layout.l3 == L3Type::kIpv4 ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6) |
                 (layout.l4 == L4Type::kTcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM);
}

}  // namespace hvswitch
