#include "tests/guest/l4_frames.h"

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "offload/checksum.h"
#include "offload/header_layout.h"

namespace hvswitch::guest {
namespace {

constexpr uint16_t kFrameSize = 128;
constexpr uint16_t kStreamPort = 3000;  // the source port of super-frame streams

}  // namespace

bool ParseChecksumMode(const std::string& text, ChecksumMode* mode) {
  if (text == "full") *mode = ChecksumMode::kFull;
  else if (text == "partial") *mode = ChecksumMode::kPartial;
  else if (text == "bad") *mode = ChecksumMode::kBad;
  else return false;
  return true;
}

rte_mbuf* MakeL4Frame(rte_mempool* pool, const rte_ether_addr& dst, const rte_ether_addr& src,
                      bool tcp, ChecksumMode mode, uint32_t seq) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  uint8_t* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kFrameSize));
  std::memset(data, 0, kFrameSize);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(data);
  eth->dst_addr = dst;
  eth->src_addr = src;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->total_length = rte_cpu_to_be_16(kFrameSize - sizeof(rte_ether_hdr));
  ip->time_to_live = 64;
  ip->next_proto_id = tcp ? IPPROTO_TCP : IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(0x0a000001);
  ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  uint8_t* l4 = reinterpret_cast<uint8_t*>(ip + 1);
  const uint32_t l4_len = kFrameSize - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr);
  uint8_t* field;  // the checksum's two bytes
  if (tcp) {
    auto* th = reinterpret_cast<rte_tcp_hdr*>(l4);
    th->data_off = 0x50;
    th->src_port = rte_cpu_to_be_16(1000);
    th->dst_port = rte_cpu_to_be_16(2000);
    field = l4 + offsetof(rte_tcp_hdr, cksum);
  } else {
    auto* uh = reinterpret_cast<rte_udp_hdr*>(l4);
    uh->src_port = rte_cpu_to_be_16(1000);
    uh->dst_port = rte_cpu_to_be_16(2000);
    uh->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(l4_len));
    field = l4 + offsetof(rte_udp_hdr, dgram_cksum);
  }
  std::memcpy(data + kFrameSize - 4, &seq, 4);
  const uint64_t flags = RTE_MBUF_F_TX_IPV4 | (tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM);
  uint16_t cksum;
  if (mode == ChecksumMode::kPartial) {
    m->l2_len = sizeof(rte_ether_hdr);
    m->l3_len = sizeof(rte_ipv4_hdr);
    m->ol_flags |= flags;
    cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
  } else {
    cksum = rte_ipv4_udptcp_cksum(ip, l4);
    if (mode == ChecksumMode::kBad) cksum ^= 0x5a5a;
  }
  std::memcpy(field, &cksum, 2);
  return m;
}

rte_mbuf* MakeTcpSuperFrame(rte_mempool* pool, const rte_ether_addr& dst,
                            const rte_ether_addr& src, bool ipv6, uint32_t seq,
                            uint16_t payload, uint16_t mss) {
  const uint16_t l3_len = ipv6 ? sizeof(rte_ipv6_hdr) : sizeof(rte_ipv4_hdr);
  const uint32_t headers = sizeof(rte_ether_hdr) + l3_len + sizeof(rte_tcp_hdr);
  std::vector<uint8_t> frame(headers + payload, 0);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(frame.data());
  eth->dst_addr = dst;
  eth->src_addr = src;
  eth->ether_type = rte_cpu_to_be_16(ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
  uint8_t* l3 = frame.data() + sizeof(rte_ether_hdr);
  uint64_t flags = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM;
  if (ipv6) {
    auto* ip = reinterpret_cast<rte_ipv6_hdr*>(l3);
    ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
    ip->payload_len = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_tcp_hdr) + payload));
    ip->proto = IPPROTO_TCP;
    ip->hop_limits = 64;
    ip->src_addr[0] = 0xfd;
    ip->src_addr[15] = 1;
    ip->dst_addr[0] = 0xfd;
    ip->dst_addr[15] = 2;
    flags |= RTE_MBUF_F_TX_IPV6;
  } else {
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(l3);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(l3_len + sizeof(rte_tcp_hdr) +
                                                              payload));
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_TCP;
    ip->src_addr = rte_cpu_to_be_32(0x0a000001);
    ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    flags |= RTE_MBUF_F_TX_IPV4;
  }
  auto* th = reinterpret_cast<rte_tcp_hdr*>(l3 + l3_len);
  th->src_port = rte_cpu_to_be_16(kStreamPort);
  th->dst_port = rte_cpu_to_be_16(2000);
  th->sent_seq = rte_cpu_to_be_32(seq);
  th->data_off = 0x50;
  th->tcp_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
  for (uint32_t i = 0; i < payload; ++i) frame[headers + i] = PayloadByte(seq + i);

  rte_mbuf* head = nullptr;
  constexpr uint32_t kPiece = 2048;
  for (uint32_t off = 0; off < frame.size(); off += kPiece) {
    const uint32_t len = std::min<uint32_t>(kPiece, frame.size() - off);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr || (head != nullptr && rte_pktmbuf_chain(head, m) != 0)) {
      rte_pktmbuf_free(m);
      rte_pktmbuf_free(head);
      return nullptr;
    }
    if (head == nullptr) head = m;
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(len)), frame.data() + off, len);
  }
  head->l2_len = sizeof(rte_ether_hdr);
  head->l3_len = l3_len;
  head->l4_len = sizeof(rte_tcp_hdr);
  head->tso_segsz = mss;
  head->ol_flags |= flags;
  // The device wants the pseudo-header sum without the length for TSO (DPDK's rule).
  const uint16_t phdr = ipv6 ? rte_ipv6_phdr_cksum(reinterpret_cast<rte_ipv6_hdr*>(
                                                       rte_pktmbuf_mtod_offset(head, uint8_t*, 14)),
                                                   head->ol_flags)
                             : rte_ipv4_phdr_cksum(reinterpret_cast<rte_ipv4_hdr*>(
                                                       rte_pktmbuf_mtod_offset(head, uint8_t*, 14)),
                                                   head->ol_flags);
  std::memcpy(rte_pktmbuf_mtod_offset(head, uint8_t*, 14 + l3_len + 16), &phdr, 2);
  return head;
}

TcpPayload CheckTcpPayload(const rte_mbuf* m) {
  TcpPayload result;
  std::vector<uint8_t> bytes(m->pkt_len);
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data());
  if (p != bytes.data()) std::memcpy(bytes.data(), p, m->pkt_len);
  HeaderLayout layout = ParseHeaders(bytes.data(), m->pkt_len, m->pkt_len);
  if (layout.error != HeaderError::kNone || layout.l4 != L4Type::kTcp) return result;
  uint16_t port;
  std::memcpy(&port, bytes.data() + layout.l4_offset(), 2);
  if (rte_be_to_cpu_16(port) != kStreamPort) return result;
  result.tcp = true;
  uint32_t seq;
  std::memcpy(&seq, bytes.data() + layout.l4_offset() + 4, 4);
  seq = rte_be_to_cpu_32(seq);
  const uint32_t start = layout.l4_offset() + layout.l4_len;
  result.bytes = layout.l4_end - start;
  for (uint32_t i = 0; i < result.bytes; ++i) {
    if (bytes[start + i] != PayloadByte(seq + i)) result.intact = false;
  }
  return result;
}

ReceivedChecksum CheckL4Frame(const rte_mbuf* m) {
  std::vector<uint8_t> bytes(m->pkt_len);
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data());
  if (p != bytes.data()) std::memcpy(bytes.data(), p, m->pkt_len);
  HeaderLayout layout = ParseHeaders(bytes.data(), m->pkt_len, m->pkt_len);
  if (layout.error != HeaderError::kNone || layout.l4 == L4Type::kOther) {
    return ReceivedChecksum::kNotL4;
  }
  if ((m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_NONE) {
    return ReceivedChecksum::kPartial;
  }
  std::vector<uint8_t> recomputed = bytes;
  FillL4Checksum(recomputed.data(), layout);
  return recomputed == bytes ? ReceivedChecksum::kGood : ReceivedChecksum::kBad;
}

}  // namespace hvswitch::guest
