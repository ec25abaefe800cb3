// IPv4 TCP/UDP test frames for hvs_guest: sent with a complete, a partial (left to the
// device: virtio-net NEEDS_CSUM) or a wrong L4 checksum, and checked on receive.
#pragma once

#include <cstdint>
#include <string>

struct rte_ether_addr;
struct rte_mbuf;
struct rte_mempool;

namespace hvswitch::guest {

enum class ChecksumMode { kFull, kPartial, kBad };

// Parses "full", "partial" or "bad"; false for anything else.
bool ParseChecksumMode(const std::string& text, ChecksumMode* mode);

// A 128-byte IPv4 frame DST<-SRC carrying TCP (tcp) or UDP, sequence number `seq` in the
// payload; with kPartial the mbuf asks the device to finish the checksum.
rte_mbuf* MakeL4Frame(rte_mempool* pool, const rte_ether_addr& dst, const rte_ether_addr& src,
                      bool tcp, ChecksumMode mode, uint32_t seq);

enum class ReceivedChecksum { kNotL4, kGood, kBad, kPartial };

// What a received frame's L4 checksum is: verified in software unless the device says it
// was left partial (RTE_MBUF_F_RX_L4_CKSUM_NONE from a vhost/virtio device).
ReceivedChecksum CheckL4Frame(const rte_mbuf* m);

}  // namespace hvswitch::guest
