// EgressOffload: carries out, on an mbuf, what DecideOffload chose for a frame and its
// destinations: asks the egress device to finish the work (Tx offload flags) or does it
// here (checksums over the whole chain; TCP segmentation with librte_gso for IPv4, which
// has no IPv6 TCP support in DPDK 22.11, and by copying for IPv6). Worker code: no
// allocation besides mbufs from the frame's own pool, no exceptions.
#pragma once

#include <cstdint>

#include "offload/header_layout.h"
#include "offload/offload_decision.h"

struct rte_mbuf;

namespace hvswitch {

// The offload state the receiving device reported in the mbuf (vhost-user with
// compliant offload flags and Rx checksum offload on: a guest's NEEDS_CSUM arrives as
// RTE_MBUF_F_RX_L4_CKSUM_NONE, its GSO as RTE_MBUF_F_RX_LRO with tso_segsz).
FrameOffload FrameOffloadOf(const rte_mbuf* m);

struct EgressOutcome {
  enum class Result : uint8_t {
    kSent,       // out[0 .. nb) are the frames to send (m itself or its segments)
    kBadFrame,   // bad offload request or headers (the sender's); m still owned by the caller
    kNoMbuf,     // the pool ran dry while segmenting; m still owned by the caller
    kTooSmall,   // the destinations' MTU leaves too little room per segment; m still owned
  };
  Result result = Result::kSent;
  OffloadAction action = OffloadAction::kAsIs;
  uint16_t nb = 0;
};

// Resolves m's pending offload for destinations with `caps`. On kSent the frames in
// `out` replace m (m was consumed when it was segmented). `out` holds kMaxSegments.
EgressOutcome ResolveEgressOffload(rte_mbuf* m, const EgressCaps& caps, rte_mbuf** out);

}  // namespace hvswitch
