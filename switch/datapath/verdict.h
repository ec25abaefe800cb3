// The bridge's forwarding decision for one frame, as a pure function so that the fast
// pipeline and the reference model in the tests share nothing but these rules.
#pragma once

#include <cstdint>

namespace hvswitch {

enum class VerdictKind : uint8_t { kUnicast, kFlood, kHairpinDrop };

struct Verdict {
  VerdictKind kind;
  uint16_t port;  // kUnicast only
};

// `dst_hit`/`dst_port`: the FDB lookup of the destination in the frame's VLAN.
inline Verdict Decide(uint16_t in_port, bool dst_is_group, bool dst_hit, uint16_t dst_port) {
  if (dst_is_group || !dst_hit) return {VerdictKind::kFlood, 0};
  if (dst_port == in_port) return {VerdictKind::kHairpinDrop, 0};
  return {VerdictKind::kUnicast, dst_port};
}

// Learning is wanted when the source is a unicast address not yet current on `in_port`.
inline bool WantsLearn(uint16_t in_port, bool src_is_group, bool src_hit, uint16_t src_port) {
  return !src_is_group && (!src_hit || src_port != in_port);
}

}  // namespace hvswitch
