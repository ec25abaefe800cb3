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

// A TCP super-frame DST<-SRC (IPv4 or IPv6) with `payload` bytes starting at sequence
// number `seq`, to be segmented at `mss` by the device (RTE_MBUF_F_TX_TCP_SEG; virtio:
// GSO). Payload byte at sequence number s is PayloadByte(s), so that any receiver can
// check the segments it gets. An mbuf chain; nullptr when the pool is dry.
rte_mbuf* MakeTcpSuperFrame(rte_mempool* pool, const rte_ether_addr& dst,
                            const rte_ether_addr& src, bool ipv6, uint32_t seq,
                            uint16_t payload, uint16_t mss);
inline uint8_t PayloadByte(uint32_t seq) { return static_cast<uint8_t>(seq * 7 + (seq >> 8)); }

enum class ReceivedChecksum { kNotL4, kGood, kBad, kPartial };

// What a received frame's L4 checksum is: verified in software unless the device says it
// was left partial (RTE_MBUF_F_RX_L4_CKSUM_NONE from a vhost/virtio device).
ReceivedChecksum CheckL4Frame(const rte_mbuf* m);

// What a received TCP frame carried of a MakeTcpSuperFrame stream (source port 3000): its payload bytes,
// and whether each one is the byte its sequence number calls for.
struct TcpPayload {
  bool tcp = false;
  uint32_t bytes = 0;
  bool intact = true;
};
TcpPayload CheckTcpPayload(const rte_mbuf* m);

}  // namespace hvswitch::guest
