// Checksum work on mbufs at egress (chains included), for the workers.
#pragma once

#include "offload/header_layout.h"

struct rte_mbuf;

namespace hvswitch {

// Completes in place the partial L4 checksum of a frame whose headers (in its first
// segment) `layout` describes: the field holds the pseudo-header sum, the sum over the
// L4 bytes (the field included) replaces it. False, nothing written, without TCP/UDP.
bool CompletePartialChecksum(rte_mbuf* m, const HeaderLayout& layout);

// Asks the egress device to complete it instead (vhost-user: a NEEDS_CSUM header for a
// guest that negotiated GUEST_CSUM): the mbuf's Tx offload flags and header lengths.
void RequestChecksumOffload(rte_mbuf* m, const HeaderLayout& layout);

}  // namespace hvswitch
