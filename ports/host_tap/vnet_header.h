// The virtio-net header a tap opened with IFF_VNET_HDR puts in front of every frame, and
// how it maps to and from mbuf offload metadata. Pure functions over bytes and flags (no
// EAL), called per frame by the host tap's Rx and Tx bursts (worker threads): no
// allocation, no exceptions.
//
// The mbuf side is the one hvswitch already reads from vhost-user guests (the vhost PMD
// with compliant offload flags), so frames from the host kernel and from a guest are one
// case for offload/: a partial checksum is RTE_MBUF_F_RX_L4_CKSUM_NONE with the
// pseudo-header sum in the field, a GSO super-frame RTE_MBUF_F_RX_LRO (+ CKSUM_NONE) with
// tso_segsz. On Tx the mbuf carries the usual requests (RTE_MBUF_F_TX_TCP_SEG,
// RTE_MBUF_F_TX_{TCP,UDP}_CKSUM with l2/l3/l4_len, tso_segsz) and leaves as NEEDS_CSUM and
// GSO_TCPV4/6.
#pragma once

#include <cstdint>

#include "offload/header_layout.h"

namespace hvswitch {

// struct virtio_net_hdr (virtio 1.1, 5.1.6; the legacy 10 bytes without num_buffers),
// little-endian (TUNSETVNETLE). <linux/virtio_net.h> does not compile as C++.
struct VnetHeader {
  uint8_t flags = 0;
  uint8_t gso_type = 0;
  uint16_t hdr_len = 0;      // headers up to and with L4 (a hint for the kernel's copy)
  uint16_t gso_size = 0;     // payload per segment (MSS)
  uint16_t csum_start = 0;   // where the one's complement sum starts (L4 header)
  uint16_t csum_offset = 0;  // the checksum field, from csum_start
};
static_assert(sizeof(VnetHeader) == 10);

inline constexpr uint8_t kVnetNeedsCsum = 1;  // VIRTIO_NET_HDR_F_NEEDS_CSUM
inline constexpr uint8_t kVnetDataValid = 2;  // VIRTIO_NET_HDR_F_DATA_VALID
inline constexpr uint8_t kVnetGsoNone = 0, kVnetGsoTcpv4 = 1, kVnetGsoUdp = 3,
                         kVnetGsoTcpv6 = 4, kVnetGsoEcn = 0x80;

// What a received frame's header means for its mbuf.
struct RxOffload {
  enum class Fix : uint8_t {
    kNone,          // ol_flags / tso_segsz say it all
    kCompleteHere,  // a partial checksum offload/ would not find (not TCP/UDP where the
                    // headers say, e.g. a tunnel's): sum from csum_start, store at
                    // csum_start + csum_offset, forward as unknown
    kDrop,          // a super-frame hvswitch cannot describe (not TCP, UDP GSO, no
                    // checksum request): never forwarded as something else
  };
  uint64_t ol_flags = 0;  // RTE_MBUF_F_RX_L4_CKSUM_*, RTE_MBUF_F_RX_LRO
  uint16_t tso_segsz = 0;
  Fix fix = Fix::kNone;
};

// `layout`: ParseHeaders over the frame (its first segment).
RxOffload DecodeRxHeader(const VnetHeader& hdr, const HeaderLayout& layout);

// What an mbuf asks of the device on Tx.
struct TxRequest {
  uint64_t ol_flags = 0;
  uint16_t l2_len = 0, l3_len = 0, l4_len = 0;
  uint16_t tso_segsz = 0;
};

// The header for a frame with `request`. False when the request cannot be put in a
// virtio-net header (an SCTP checksum, TSO without a segment size or a TCP header, lengths
// that do not fit): the frame is dropped and counted, not sent unfinished.
bool EncodeTxHeader(const TxRequest& request, VnetHeader& out);

// For a frame going out with NEEDS_CSUM: stores the pseudo-header sum the kernel wants in
// the L4 checksum field of `frame` (its first `available` bytes, which must hold the
// headers), with the full upper-layer length from the IP header, for a super-frame too
// (Linux's tcp_gso_segment adjusts that sum per segment; DPDK's TSO convention leaves the
// length out, and a frame from another DPDK source may carry that). False, nothing
// written, when the headers are not where `request` says.
bool SeedPseudoHeader(uint8_t* frame, uint32_t available, const TxRequest& request);

}  // namespace hvswitch
