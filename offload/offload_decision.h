// What to do at egress with a frame's pending offload work, given what the frame carries
// and what its destinations accept. Pure rules, decided once per frame and destination
// group (a flooded frame is resolved once for all its copies, so they never diverge).
//   - A checksum the sender completed, or one found bad, goes as it is: hvswitch never
//     "fixes" a bad checksum.
//   - A partial checksum (the L4 field holds the pseudo-header sum, as virtio-net sends
//     with NEEDS_CSUM) goes on as partial where every destination completes it (a guest
//     that negotiated GUEST_CSUM, a NIC with the tx offload), and is completed in
//     software otherwise.
//   - A TCP super-frame (virtio GSO) goes whole where every destination segments it
//     (GUEST_TSO4/6 with GUEST_CSUM, a NIC with TSO); otherwise it is cut in software into
//     segments that fit the smallest destination MTU, each with complete checksums.
//   - IPv6 with extension headers is never left to a vhost-user guest: the vhost library
//     rewrites the pseudo-header sum from payload_len and the first next-header, which is
//     wrong there; it is completed here.
//   - Offload requests on frames that cannot honour them are dropped, never trusted:
//     headers that do not parse, no TCP/UDP header, a segment size below kMinSegmentSize
//     (0 or 1 included), a super-frame that is not TCP or whose IP length is not the
//     frame's. (Segmenting here also refuses a super-frame that would need more than
//     kMaxSegments segments at its own segment size: egress_offload.cc.)
#pragma once

#include <cstdint>

#include "offload/header_layout.h"

namespace hvswitch {

enum class ChecksumState : uint8_t { kUnknown, kGood, kBad, kPartial };

// A TCP super-frame of 64 KB cut for a 576-byte MTU gives 122 segments: the most hvswitch
// makes of one frame.
inline constexpr uint16_t kMaxSegments = 128;
// Less TCP payload per segment than any stack sends (Linux's floor is a 48-byte MSS, less
// up to 40 bytes of options): a segment size below it is nonsense, not a small MTU.
inline constexpr uint16_t kMinSegmentSize = 8;

// A frame's offload state, decoded once at receive.
struct FrameOffload {
  ChecksumState csum = ChecksumState::kUnknown;
  bool super_frame = false;   // a segmentation request (virtio GSO, mbuf RX_LRO)
  uint16_t segment_size = 0;  // its TCP payload per segment (MSS)
};

// What a group of destinations accepts: each field the AND (mtu: the minimum) over them.
struct EgressCaps {
  bool csum = false;  // completes partial TCP/UDP checksums
  bool tso4 = false;  // segments TCP/IPv4 super-frames
  bool tso6 = false;  // segments TCP/IPv6 super-frames
  uint16_t mtu = 1500;  // largest L3 packet
};

enum class OffloadAction : uint8_t {
  kAsIs,
  kPassPartial,       // destinations complete the checksum
  kCompleteChecksum,  // completed here
  kPassSuperFrame,    // destinations segment (and complete checksums)
  kSegment,           // segmented here, every segment's checksums complete
  kDrop,              // bad offload metadata or headers
};

inline bool HasIpv6Extensions(const HeaderLayout& layout) {
  return layout.l3 == L3Type::kIpv6 && layout.l3_len != 40;
}

inline OffloadAction DecideOffload(const FrameOffload& frame, const HeaderLayout& layout,
                                   uint32_t frame_len, const EgressCaps& dest) {
  const bool usable = layout.error == HeaderError::kNone && layout.l4 != L4Type::kOther;
  if (frame.super_frame) {
    if (!usable || layout.l4 != L4Type::kTcp || frame.segment_size < kMinSegmentSize ||
        layout.l4_end != frame_len) {
      return OffloadAction::kDrop;
    }
    const uint32_t l3_packet = frame_len - layout.l2_len;
    if (l3_packet > dest.mtu) {
      const bool tso = layout.l3 == L3Type::kIpv4 ? dest.tso4 : dest.tso6;
      if (tso && dest.csum && !HasIpv6Extensions(layout)) return OffloadAction::kPassSuperFrame;
      return OffloadAction::kSegment;
    }
    // Already fits: only its checksum is pending.
  } else if (frame.csum != ChecksumState::kPartial) {
    return OffloadAction::kAsIs;
  }
  if (!usable) return OffloadAction::kDrop;
  return dest.csum && !HasIpv6Extensions(layout) ? OffloadAction::kPassPartial
                                                 : OffloadAction::kCompleteChecksum;
}

}  // namespace hvswitch
