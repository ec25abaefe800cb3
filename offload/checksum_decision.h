// What to do at egress with a frame's L4 checksum, given what the frame carries and what
// the destination port accepts. Pure rules, decided once per frame and destination group
// (a flooded frame is resolved once per group, so its copies never diverge).
//   - A checksum the sender completed, or one found bad, goes as it is: hvswitch never
//     "fixes" a bad checksum.
//   - A partial checksum (the L4 field holds the pseudo-header sum, as virtio-net sends
//     with NEEDS_CSUM) goes on as partial to a port that completes it (a guest that
//     negotiated GUEST_CSUM, a NIC with the tx offload), and is completed in software for
//     any other port.
//   - A partial checksum on a frame whose TCP/UDP headers cannot be found is dropped: no
//     one downstream could complete it.
#pragma once

#include <cstdint>

#include "offload/header_layout.h"

namespace hvswitch {

enum class ChecksumState : uint8_t { kUnknown, kGood, kBad, kPartial };

struct PortOffloadCaps {
  bool csum = false;  // completes partial TCP/UDP checksums
  bool tso = false;   // segments TCP super-frames
};

enum class ChecksumAction : uint8_t { kAsIs, kPassPartial, kCompleteInSoftware, kDrop };

inline ChecksumAction DecideChecksum(ChecksumState state, const HeaderLayout& layout,
                                     const PortOffloadCaps& destination) {
  if (state != ChecksumState::kPartial) return ChecksumAction::kAsIs;
  if (layout.error != HeaderError::kNone || layout.l4 == L4Type::kOther) {
    return ChecksumAction::kDrop;
  }
  return destination.csum ? ChecksumAction::kPassPartial : ChecksumAction::kCompleteInSoftware;
}

}  // namespace hvswitch
