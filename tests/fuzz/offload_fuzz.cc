// libFuzzer target over what a guest or the wire controls in the offload path: a frame's
// bytes, how they are split into mbuf segments, the offload metadata a PMD reports
// (partial checksum, super-frame, segment size) and the destinations' capabilities and MTU.
// Built with AddressSanitizer (deploy/fuzz.sh). Besides memory errors it aborts on a
// broken promise of ResolveEgressOffload: an mbuf leaked or freed twice (the pool's in-use
// count must return to zero), a segment larger than the MTU, a super-frame left for a
// destination that cannot segment it.
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "offload/egress_offload.h"
#include "offload/header_layout.h"

namespace {

rte_mempool* pool = nullptr;

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "offload_fuzz: broken promise: %s\n", what);
    std::abort();
  }
}

// Input layout: 8 bytes of metadata, then the frame.
//   [0] bit 0: partial checksum, 1: super-frame, 2: checksum good, 3: bad,
//       4: destinations complete checksums, 5: segment TCP/IPv4, 6: TCP/IPv6
//   [1..2] segment size   [3..4] destination MTU   [5..6] bytes per mbuf segment
//   [7] unused
struct Meta {
  uint8_t flags;
  uint16_t segment_size, mtu, piece;
};

rte_mbuf* ToChain(const uint8_t* data, size_t size, uint16_t piece) {
  rte_mbuf* head = nullptr;
  size_t off = 0;
  do {
    const uint16_t len = static_cast<uint16_t>(std::min<size_t>(piece, size - off));
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    Require(m != nullptr, "pool sized for the largest input");
    std::memcpy(rte_pktmbuf_append(m, len), data + off, len);
    if (head == nullptr) {
      head = m;
    } else if (rte_pktmbuf_chain(head, m) != 0) {  // too many segments: stop here
      rte_pktmbuf_free(m);
      break;
    }
    off += len;
  } while (off < size);
  return head;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* eal[] = {"offload_fuzz", "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
                       "--log-level=*:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "offload_fuzz: cannot init EAL\n");
    std::abort();
  }
  pool = rte_pktmbuf_pool_create("fuzz", 16383, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  Require(pool != nullptr, "pool created");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8 + 14 || size - 8 > 65535) return 0;
  Meta meta;
  meta.flags = data[0];
  std::memcpy(&meta.segment_size, data + 1, 2);
  std::memcpy(&meta.mtu, data + 3, 2);
  std::memcpy(&meta.piece, data + 5, 2);
  const uint8_t* frame = data + 8;
  const size_t frame_len = size - 8;

  // The parser alone, on every prefix length it could be given as the first segment.
  const uint32_t available = static_cast<uint32_t>(std::min<size_t>(frame_len, meta.piece));
  const hvswitch::HeaderLayout layout =
      hvswitch::ParseHeaders(frame, available, static_cast<uint32_t>(frame_len));
  if (layout.error == hvswitch::HeaderError::kNone && layout.l3 != hvswitch::L3Type::kOther) {
    Require(layout.l4_end <= frame_len, "l4_end inside the frame");
    Require(layout.l4_offset() + layout.l4_len <= available, "headers inside the segment");
  }

  // Segments of 64 bytes at least (a PMD never splits finer), at most a buffer's room.
  const uint16_t room = static_cast<uint16_t>(rte_pktmbuf_data_room_size(pool) -
                                              RTE_PKTMBUF_HEADROOM);
  const uint16_t piece = static_cast<uint16_t>(64 + meta.piece % (room - 63));
  rte_mbuf* m = ToChain(frame, frame_len, piece);
  if (meta.flags & 1) m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_NONE;
  if (meta.flags & 4) m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
  if (meta.flags & 8) m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_BAD;
  if (meta.flags & 2) {
    m->ol_flags |= RTE_MBUF_F_RX_LRO;
    m->tso_segsz = meta.segment_size;
  }
  hvswitch::EgressCaps caps;
  caps.csum = meta.flags & 16;
  caps.tso4 = meta.flags & 32;
  caps.tso6 = meta.flags & 64;
  caps.mtu = static_cast<uint16_t>(68 + meta.mtu % (9000 - 67));

  rte_mbuf* out[hvswitch::kMaxSegments];
  const hvswitch::EgressOutcome outcome = hvswitch::ResolveEgressOffload(m, caps, out);
  if (outcome.result != hvswitch::EgressOutcome::Result::kSent) {
    Require(outcome.nb == 0, "nothing to send on failure");
    rte_pktmbuf_free(m);
  } else {
    Require(outcome.nb >= 1 && outcome.nb <= hvswitch::kMaxSegments, "frames to send");
    for (uint16_t i = 0; i < outcome.nb; ++i) {
      rte_mbuf* f = out[i];
      uint32_t total = 0;
      for (rte_mbuf* s = f; s != nullptr; s = s->next) total += s->data_len;
      Require(total == f->pkt_len, "pkt_len is the sum of the segments");
      if (f->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
        Require(outcome.action == hvswitch::OffloadAction::kPassSuperFrame,
                "TSO requested only when passing a super-frame");
        Require(caps.tso4 || caps.tso6, "TSO requested only of destinations that segment");
        Require(f->tso_segsz > 0 && f->l4_len > 0, "a usable TSO request");
      }
      if (outcome.action == hvswitch::OffloadAction::kSegment) {
        const hvswitch::HeaderLayout seg = hvswitch::ParseHeaders(
            rte_pktmbuf_mtod(f, const uint8_t*), f->data_len, f->pkt_len);
        Require(seg.error == hvswitch::HeaderError::kNone, "segments parse");
        Require(f->pkt_len - seg.l2_len <= caps.mtu, "segments fit the MTU");
      }
      rte_pktmbuf_free(f);
    }
  }
  Require(rte_mempool_in_use_count(pool) == 0, "every mbuf returned to the pool");
  return 0;
}
