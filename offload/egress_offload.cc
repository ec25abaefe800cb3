#include "offload/egress_offload.h"

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_gso.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include <algorithm>
#include <cstring>

#include "offload/checksum.h"

namespace hvswitch {
namespace {

using Result = EgressOutcome::Result;

constexpr uint64_t kTxRequests = RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG |
                                 RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 |
                                 RTE_MBUF_F_TX_IP_CKSUM;
constexpr uint64_t kRxState = RTE_MBUF_F_RX_L4_CKSUM_MASK | RTE_MBUF_F_RX_LRO;

void Store16(rte_mbuf* m, uint32_t at, uint16_t v) {
  std::memcpy(rte_pktmbuf_mtod_offset(m, uint8_t*, at), &v, 2);
}

// What the frame carries once its work is done here: nothing left for a device, and a
// checksum that is complete.
void MarkDone(rte_mbuf* m) {
  m->ol_flags &= ~(kTxRequests | kRxState);
  m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
}

void RequestChecksum(rte_mbuf* m, const HeaderLayout& layout) {
  m->l2_len = layout.l2_len;
  m->l3_len = layout.l3_len;
  m->l4_len = layout.l4_len;
  m->ol_flags &= ~kTxRequests;
  m->ol_flags |= (layout.l3 == L3Type::kIpv4 ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6) |
                 (layout.l4 == L4Type::kTcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM);
}

// The field holds the pseudo-header sum (a partial checksum): the sum over the L4 bytes,
// across the chain, replaces it.
bool CompleteChecksum(rte_mbuf* m, const HeaderLayout& layout) {
  const uint32_t l4 = layout.l4_offset();
  uint16_t raw = 0;
  if (rte_raw_cksum_mbuf(m, l4, layout.l4_end - l4, &raw) != 0) return false;
  uint16_t cksum = static_cast<uint16_t>(~raw);
  if (cksum == 0 && layout.l4 == L4Type::kUdp) cksum = 0xffff;
  Store16(m, layout.l4_checksum_offset(), cksum);
  return true;
}

// A segment made here: its IPv4 header checksum is recomputed (lengths and IDs changed),
// its TCP checksum left to the destinations or completed.
bool FinishSegment(rte_mbuf* seg, bool leave_checksum) {
  const HeaderLayout layout =
      ParseHeaders(rte_pktmbuf_mtod(seg, const uint8_t*), seg->data_len, seg->pkt_len);
  if (layout.error != HeaderError::kNone || layout.l4 != L4Type::kTcp) return false;
  if (layout.l3 == L3Type::kIpv4) {
    auto* ip = rte_pktmbuf_mtod_offset(seg, rte_ipv4_hdr*, layout.l3_offset());
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
  }
  const uint32_t l4_len = layout.l4_end - layout.l4_offset();
  Store16(seg, layout.l4_checksum_offset(),
          PseudoHeaderSum(rte_pktmbuf_mtod(seg, const uint8_t*), layout, l4_len));
  if (leave_checksum) {
    RequestChecksum(seg, layout);
    seg->ol_flags &= ~kRxState;
    return true;
  }
  MarkDone(seg);
  return CompleteChecksum(seg, layout);
}

// IPv4: librte_gso (a header mbuf per segment, the payload attached by reference).
int SegmentIpv4(rte_mbuf* m, const HeaderLayout& layout, uint16_t mss, rte_mbuf** out) {
  rte_gso_ctx ctx{};
  ctx.direct_pool = m->pool;
  ctx.indirect_pool = m->pool;
  ctx.gso_types = RTE_ETH_TX_OFFLOAD_TCP_TSO;
  ctx.gso_size = static_cast<uint16_t>(layout.l4_offset() + layout.l4_len + mss);
  m->l2_len = layout.l2_len;
  m->l3_len = layout.l3_len;
  m->l4_len = layout.l4_len;
  m->ol_flags &= ~kTxRequests;
  m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4;
  return rte_gso_segment(m, &ctx, out, kMaxSegments);
}

// IPv6 (librte_gso of DPDK 22.11 has no TCP/IPv6): each segment is a copy of the
// headers, with lengths, sequence number and flags set, chained to a copy of its payload.
int SegmentIpv6(rte_mbuf* m, const HeaderLayout& layout, uint16_t mss, rte_mbuf** out) {
  const uint32_t headers = layout.l4_offset() + layout.l4_len;
  const uint32_t payload = m->pkt_len - headers;
  const auto* tcp = rte_pktmbuf_mtod_offset(m, const rte_tcp_hdr*, layout.l4_offset());
  const uint32_t seq = rte_be_to_cpu_32(tcp->sent_seq);
  int n = 0;
  for (uint32_t off = 0; off < payload; off += mss, ++n) {
    const uint32_t len = std::min<uint32_t>(mss, payload - off);
    rte_mbuf* seg = rte_pktmbuf_alloc(m->pool);
    char* head = seg != nullptr ? rte_pktmbuf_append(seg, static_cast<uint16_t>(headers))
                                : nullptr;
    rte_mbuf* data = head != nullptr ? rte_pktmbuf_copy(m, m->pool, headers + off, len)
                                     : nullptr;
    if (data == nullptr || rte_pktmbuf_chain(seg, data) != 0) {
      rte_pktmbuf_free(data);
      rte_pktmbuf_free(seg);
      for (int i = 0; i < n; ++i) rte_pktmbuf_free(out[i]);
      return -ENOMEM;
    }
    std::memcpy(head, rte_pktmbuf_mtod(m, const char*), headers);
    auto* ip = reinterpret_cast<rte_ipv6_hdr*>(head + layout.l3_offset());
    ip->payload_len = rte_cpu_to_be_16(static_cast<uint16_t>(layout.l3_len - 40 +
                                                             layout.l4_len + len));
    auto* th = reinterpret_cast<rte_tcp_hdr*>(head + layout.l4_offset());
    th->sent_seq = rte_cpu_to_be_32(seq + off);
    if (off + len < payload) th->tcp_flags &= ~(RTE_TCP_FIN_FLAG | RTE_TCP_PSH_FLAG);
    if (off != 0) th->tcp_flags &= ~RTE_TCP_CWR_FLAG;
    seg->ol_flags = m->ol_flags;
    out[n] = seg;
  }
  return n;
}

EgressOutcome Segment(rte_mbuf* m, const HeaderLayout& layout, const FrameOffload& frame,
                      const EgressCaps& caps, rte_mbuf** out) {
  EgressOutcome outcome{Result::kSent, OffloadAction::kSegment, 0};
  const uint32_t headers = uint32_t{layout.l3_len} + layout.l4_len;
  const uint32_t payload = m->pkt_len - layout.l4_offset() - layout.l4_len;
  // Too many segments at the sender's own size: its request, not a destination, is at
  // fault.
  if ((payload + frame.segment_size - 1) / frame.segment_size > kMaxSegments) {
    outcome.result = Result::kBadFrame;
    return outcome;
  }
  if (caps.mtu < headers + kMinSegmentSize) {
    outcome.result = Result::kTooSmall;
    return outcome;
  }
  const uint16_t mss = static_cast<uint16_t>(std::min<uint32_t>(frame.segment_size,
                                                                caps.mtu - headers));
  if ((payload + mss - 1) / mss > kMaxSegments) {
    outcome.result = Result::kTooSmall;
    return outcome;
  }
  const int n = layout.l3 == L3Type::kIpv4 ? SegmentIpv4(m, layout, mss, out)
                                           : SegmentIpv6(m, layout, mss, out);
  if (n <= 0) {  // 0: gso found nothing to cut (a fragment), which the layout rules out
    m->ol_flags &= ~kTxRequests;
    outcome.result = n == 0 ? Result::kBadFrame : Result::kNoMbuf;
    return outcome;
  }
  const bool leave_checksum = caps.csum && !HasIpv6Extensions(layout);
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    ok &= FinishSegment(out[i], leave_checksum);
    out[i]->port = m->port;  // received where the frame was, as a copy would be
  }
  if (!ok) {  // cannot happen for headers that parsed once; never send a half-done frame
    for (int i = 0; i < n; ++i) rte_pktmbuf_free(out[i]);
    m->ol_flags &= ~kTxRequests;
    outcome.result = Result::kBadFrame;
    return outcome;
  }
  rte_pktmbuf_free(m);  // the segments hold what they need of it
  outcome.nb = static_cast<uint16_t>(n);
  return outcome;
}

}  // namespace

FrameOffload FrameOffloadOf(const rte_mbuf* m) {
  FrameOffload frame;
  switch (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) {
    case RTE_MBUF_F_RX_L4_CKSUM_GOOD:
      frame.csum = ChecksumState::kGood;
      break;
    case RTE_MBUF_F_RX_L4_CKSUM_BAD:
      frame.csum = ChecksumState::kBad;
      break;
    case RTE_MBUF_F_RX_L4_CKSUM_NONE:
      frame.csum = ChecksumState::kPartial;
      break;
    default:
      break;
  }
  if (m->ol_flags & RTE_MBUF_F_RX_LRO) {
    frame.super_frame = true;
    frame.segment_size = static_cast<uint16_t>(m->tso_segsz);
  }
  return frame;
}

EgressOutcome ResolveEgressOffload(rte_mbuf* m, const EgressCaps& caps, rte_mbuf** out) {
  const FrameOffload frame = FrameOffloadOf(m);
  const HeaderLayout layout =
      ParseHeaders(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, m->pkt_len);
  EgressOutcome outcome{Result::kSent, DecideOffload(frame, layout, m->pkt_len, caps), 1};
  switch (outcome.action) {
    case OffloadAction::kAsIs:
      break;
    case OffloadAction::kPassPartial:
      RequestChecksum(m, layout);
      break;
    case OffloadAction::kCompleteChecksum:
      if (!CompleteChecksum(m, layout)) outcome.result = Result::kBadFrame;
      MarkDone(m);
      break;
    case OffloadAction::kPassSuperFrame: {
      const uint32_t headers = uint32_t{layout.l3_len} + layout.l4_len;
      if (caps.mtu < headers + kMinSegmentSize) {
        outcome.result = Result::kTooSmall;
        break;
      }
      RequestChecksum(m, layout);
      // Segments the destinations cut must fit the smallest MTU among them.
      m->tso_segsz = std::min<uint32_t>(frame.segment_size, caps.mtu - headers);
      m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
      break;
    }
    case OffloadAction::kSegment:
      return Segment(m, layout, frame, caps, out);
    case OffloadAction::kDrop:
      outcome.result = Result::kBadFrame;
      break;
  }
  if (outcome.result != Result::kSent) {
    outcome.nb = 0;
    return outcome;
  }
  out[0] = m;
  return outcome;
}

}  // namespace hvswitch
