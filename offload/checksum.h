// Software completion of L4 checksums, for frames whose sender left them to the
// receiver (a guest's partial checksum) going to a port that cannot finish them. Works on
// the contiguous bytes of a frame whose headers were checked by ParseHeaders. The sums
// themselves are DPDK's (rte_ip.h); what is ours is where they go and what is trusted.
#pragma once

#include <cstdint>

#include "offload/header_layout.h"

namespace hvswitch {

// The folded (not complemented) pseudo-header sum of the TCP/UDP packet `layout`
// describes, for an upper-layer length of `l4_len` (RFC 768/793, RFC 8200: with IPv6
// extension headers the length is that of the upper layer, not payload_len). This is what
// a partial checksum's field holds. The layout must have an L3 header.
uint16_t PseudoHeaderSum(const uint8_t* data, const HeaderLayout& layout, uint32_t l4_len);

// Computes the TCP or UDP checksum (pseudo-header included; IPv6 extension headers are
// skipped, as the pseudo-header wants the upper-layer length) and stores it. False, and
// nothing written, when the layout has no TCP/UDP header.
bool FillL4Checksum(uint8_t* data, const HeaderLayout& layout);

// Completes a virtio-style partial checksum: the 16-bit field at csum_start + csum_offset
// already holds the folded pseudo-header sum; the one's complement sum from csum_start to
// `end` replaces it (a UDP result of 0 is sent as 0xffff, 0 meaning "no checksum").
// False, and nothing written, when the field or start lies outside [0, end): a guest's
// metadata is never trusted.
bool CompletePartialChecksum(uint8_t* data, uint32_t end, uint32_t csum_start,
                             uint32_t csum_offset, bool udp);

}  // namespace hvswitch
