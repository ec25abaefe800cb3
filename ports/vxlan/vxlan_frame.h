// VXLAN (RFC 7348) framing over IPv4: the outer headers a tunnel prepends for one remote
// VTEP (built once per VTEP as a template), and the checks a received frame passes before
// its inner frame is taken out. Worker code (Encapsulate, ParseOuter, InnerFlowPort): no
// allocation, no locks; BuildOuterTemplate on the control thread.
#pragma once

#include <rte_byteorder.h>

#include <array>
#include <cstdint>

struct rte_mbuf;

namespace hvswitch {

inline constexpr uint16_t kVxlanUdpPort = 4789;  // IANA
inline constexpr uint32_t kMaxVni = (1u << 24) - 1;
// Outer Ethernet (14) + IPv4 (20) + UDP (8) + VXLAN (8).
inline constexpr uint32_t kVxlanOverhead = 50;
// The inner frame's smallest: an Ethernet header.
inline constexpr uint32_t kInnerMinLength = 14;

// The 50 bytes every frame to one VTEP starts with, and the one's complement sum
// (rte_raw_cksum) of its IPv4 header as far as every frame shares it: each adds its
// length and id, so that a frame's header checksum costs a few additions, not a pass over
// the header.
struct OuterTemplate {
  std::array<uint8_t, kVxlanOverhead> bytes{};
  uint32_t ip_sum = 0;
};

// Addresses in network byte order as they go on the wire; MACs as 6 bytes.
struct OuterAddresses {
  std::array<uint8_t, 6> src_mac{}, dst_mac{};
  rte_be32_t src_ip = 0, dst_ip = 0;
  uint16_t udp_port = kVxlanUdpPort;  // host order
  uint32_t vni = 0;
};

// The template of a VTEP; lengths, IP id and checksum, UDP source port and checksum are
// each frame's own (Encapsulate).
OuterTemplate BuildOuterTemplate(const OuterAddresses& a);

// Prepends `outer` to `m` (which must be unshared and have 50 bytes of headroom), with
// `src_port` as UDP source port and `ip_id`. UDP checksum: computed over the whole frame
// when `udp_checksum`, else 0 (RFC 7348 allows it for IPv4, as Linux's noudpcsum and
// Open vSwitch's default do). Clears the frame's transmit offload requests (the inner
// frame's were settled before it reached the tunnel). False when the frame has no
// headroom for it.
bool Encapsulate(rte_mbuf* m, const OuterTemplate& outer, uint16_t src_port, uint16_t ip_id,
                 bool udp_checksum);

// A UDP source port from 49152-65535 that follows the inner flow (RFC 7348 5: a hash of
// the inner headers, so that the underlay's ECMP keeps a flow on one path): its MACs, and
// for IPv4/IPv6 its addresses and TCP/UDP ports.
uint16_t InnerFlowPort(const rte_mbuf* m);

// What a received frame is, as the uplink sees it.
enum class OuterVerdict : uint8_t {
  kNotVxlan,     // not IPv4/UDP to a local VTEP on its port: the bridge's, as it is
  kVxlan,        // well-formed: vni and src_ip set, inner frame at inner_offset
  kShort,        // to a VTEP, but shorter than its headers say (or they are not all in
                 // the first segment)
  kBadIpHeader,  // to a VTEP, but the IPv4 header's length field or checksum is wrong
  kFragment,     // a fragment (VXLAN is never reassembled here)
  kBadUdp,       // UDP length not what the IP header says, or too short for VXLAN + Ethernet
  kBadFlags,     // the VXLAN I flag (a valid VNI) is not set
};

struct OuterInfo {
  uint32_t vni = 0;
  rte_be32_t src_ip = 0;
  rte_be32_t dst_ip = 0;
  uint16_t inner_offset = 0;
};

// The local VTEP endpoints (address and UDP port) frames may be addressed to: an uplink
// carries the tunnels of a few VNIs, mostly from one address.
struct LocalVteps {
  static constexpr int kMax = 8;
  int n = 0;
  rte_be32_t ip[kMax] = {};
  rte_be16_t port[kMax] = {};
  bool Has(rte_be32_t dst_ip, rte_be16_t dst_port) const {
    for (int i = 0; i < n; ++i) {
      if (ip[i] == dst_ip && port[i] == dst_port) return true;
    }
    return false;
  }
  bool HasIp(rte_be32_t dst_ip) const {
    for (int i = 0; i < n; ++i) {
      if (ip[i] == dst_ip) return true;
    }
    return false;
  }
};

// Which a frame received on an uplink is: IPv4/UDP to a local VTEP address and port is
// VXLAN, whole or counted as what is wrong with it; anything else is the bridge's. The
// outer headers must lie in the frame's first segment.
OuterVerdict ParseOuter(const rte_mbuf* m, const LocalVteps& local, OuterInfo& info);

}  // namespace hvswitch
