#include "ports/host_tap/vnet_header.h"

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf_core.h>

#include <cstring>

#include "offload/checksum.h"

namespace hvswitch {
namespace {

constexpr uint16_t kTcpCsumOffset = 16, kUdpCsumOffset = 6;
constexpr uint16_t kMinTcpHeader = 20;

uint16_t CsumOffset(L4Type l4) { return l4 == L4Type::kTcp ? kTcpCsumOffset : kUdpCsumOffset; }

// The kernel's checksum request is where offload/ will look for it: the L4 header the
// frame's own headers lead to, and its checksum field.
bool RequestMatchesHeaders(const VnetHeader& hdr, const HeaderLayout& layout) {
  return layout.error == HeaderError::kNone && layout.l4 != L4Type::kOther &&
         hdr.csum_start == layout.l4_offset() && hdr.csum_offset == CsumOffset(layout.l4);
}

}  // namespace

RxOffload DecodeRxHeader(const VnetHeader& hdr, const HeaderLayout& layout) {
  RxOffload out;
  const uint8_t gso = hdr.gso_type & ~kVnetGsoEcn;
  if (gso != kVnetGsoNone) {
    // We ask the kernel for TCP segmentation only (TUN_F_TSO4/6, not UFO/USO): a TCP
    // super-frame whose checksum request and IP version agree with its headers.
    const bool tcp = (gso == kVnetGsoTcpv4 && layout.l3 == L3Type::kIpv4) ||
                     (gso == kVnetGsoTcpv6 && layout.l3 == L3Type::kIpv6);
    if (!tcp || hdr.gso_size == 0 || (hdr.flags & kVnetNeedsCsum) == 0 ||
        !RequestMatchesHeaders(hdr, layout) || layout.l4 != L4Type::kTcp) {
      out.fix = RxOffload::Fix::kDrop;
      return out;
    }
    out.ol_flags = RTE_MBUF_F_RX_LRO | RTE_MBUF_F_RX_L4_CKSUM_NONE;
    out.tso_segsz = hdr.gso_size;
    return out;
  }
  if (hdr.flags & kVnetNeedsCsum) {
    if (RequestMatchesHeaders(hdr, layout)) {
      out.ol_flags = RTE_MBUF_F_RX_L4_CKSUM_NONE;
    } else {
      out.fix = RxOffload::Fix::kCompleteHere;
    }
    return out;
  }
  // The kernel checked it (CHECKSUM_UNNECESSARY), e.g. a frame it received and forwards.
  if (hdr.flags & kVnetDataValid) out.ol_flags = RTE_MBUF_F_RX_L4_CKSUM_GOOD;
  return out;
}

bool EncodeTxHeader(const TxRequest& request, VnetHeader& out) {
  out = VnetHeader{};
  const uint64_t l4 = request.ol_flags & RTE_MBUF_F_TX_L4_MASK;
  const uint32_t l4_start = uint32_t{request.l2_len} + request.l3_len;
  if (request.ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
    // TSO implies the TCP checksum (as in DPDK's vhost library).
    const uint32_t headers = l4_start + request.l4_len;
    if (request.tso_segsz == 0 || request.l4_len < kMinTcpHeader || headers > UINT16_MAX ||
        (l4 != 0 && l4 != RTE_MBUF_F_TX_TCP_CKSUM)) {
      return false;
    }
    out.flags = kVnetNeedsCsum;
    out.csum_start = static_cast<uint16_t>(l4_start);
    out.csum_offset = kTcpCsumOffset;
    out.gso_type = (request.ol_flags & RTE_MBUF_F_TX_IPV6) ? kVnetGsoTcpv6 : kVnetGsoTcpv4;
    out.gso_size = request.tso_segsz;
    out.hdr_len = static_cast<uint16_t>(headers);
    return true;
  }
  if (l4 == 0) return true;
  if ((l4 != RTE_MBUF_F_TX_TCP_CKSUM && l4 != RTE_MBUF_F_TX_UDP_CKSUM) || l4_start > UINT16_MAX) {
    return false;  // SCTP's CRC32c has no virtio-net form
  }
  out.flags = kVnetNeedsCsum;
  out.csum_start = static_cast<uint16_t>(l4_start);
  out.csum_offset = l4 == RTE_MBUF_F_TX_TCP_CKSUM ? kTcpCsumOffset : kUdpCsumOffset;
  return true;
}

bool SeedPseudoHeader(uint8_t* frame, uint32_t available, const TxRequest& request) {
  HeaderLayout layout;
  layout.l2_len = request.l2_len;
  layout.l3_len = request.l3_len;
  const uint64_t l4 = request.ol_flags & RTE_MBUF_F_TX_L4_MASK;
  layout.l4 = (request.ol_flags & RTE_MBUF_F_TX_TCP_SEG) || l4 == RTE_MBUF_F_TX_TCP_CKSUM
                  ? L4Type::kTcp
                  : L4Type::kUdp;
  const uint32_t field = layout.l4_checksum_offset();
  if (field + 2 > available) return false;  // (the IP header lies before it)
  const uint8_t* l3 = frame + layout.l3_offset();
  const uint8_t version = l3[0] >> 4;
  uint32_t l4_len = 0;
  if (version == 4 && request.l3_len >= 20 && (l3[0] & 0xf) * 4u == request.l3_len) {
    layout.l3 = L3Type::kIpv4;  // PseudoHeaderSum takes the length from total_length
    uint16_t total = 0;
    std::memcpy(&total, l3 + 2, 2);
    if (rte_be_to_cpu_16(total) < request.l3_len) return false;
  } else if (version == 6 && request.l3_len >= 40) {
    layout.l3 = L3Type::kIpv6;
    uint16_t payload = 0;
    std::memcpy(&payload, l3 + 4, 2);
    const uint32_t after_fixed = rte_be_to_cpu_16(payload);
    if (after_fixed + 40 < request.l3_len) return false;
    l4_len = after_fixed + 40 - request.l3_len;  // extension headers are not upper layer
  } else {
    return false;
  }
  const uint16_t sum = PseudoHeaderSum(frame, layout, l4_len);
  std::memcpy(frame + field, &sum, 2);
  return true;
}

}  // namespace hvswitch
