#include "switch/datapath/ip_guard.h"

#include <cstring>

#include "switch/datapath/ipv6_upper.h"

namespace hvswitch {
namespace {

constexpr uint8_t kProtoUdp = 17;
constexpr uint8_t kRouterSolicitation = 133, kNeighbourSolicitation = 135,
                  kNeighbourAdvertisement = 136;
constexpr uint8_t kMldv2Report = 143, kMldv1Report = 131;

uint16_t Load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Network-order mask of the first `bits` of a 32-bit word.
uint32_t Mask32(unsigned bits) {
  if (bits == 0) return 0;
  const uint32_t host = bits >= 32 ? ~uint32_t{0} : ~uint32_t{0} << (32 - bits);
  return __builtin_bswap32(host);
}

// The same for a 64-bit half of an IPv6 address.
uint64_t Mask64(unsigned bits) {
  if (bits == 0) return 0;
  const uint64_t host = bits >= 64 ? ~uint64_t{0} : ~uint64_t{0} << (64 - bits);
  return __builtin_bswap64(host);
}

bool IsZero16(const uint8_t* addr) {
  uint64_t a, b;
  std::memcpy(&a, addr, 8);
  std::memcpy(&b, addr + 8, 8);
  return (a | b) == 0;
}

// An IPv4 packet's UDP ports (network order), if it is UDP and its first fragment (a later
// one has no ports).
bool UdpPorts(const uint8_t* ip, uint32_t len, uint16_t* sport, uint16_t* dport) {
  const uint32_t ihl = (ip[0] & 0xf) * 4u;
  if (ip[9] != kProtoUdp || ihl < 20 || len < ihl + 4) return false;
  if ((Load16(ip + 6) & __builtin_bswap16(0x1fff)) != 0) return false;  // a later fragment
  *sport = Load16(ip + ihl);
  *dport = Load16(ip + ihl + 2);
  return true;
}

bool Ipv4Allowed(const IpBindings& bindings, const uint8_t* ip, uint32_t len) {
  if (len < 20) return false;
  const uint32_t src = Load32(ip + 12);
  uint16_t sport = 0, dport = 0;
  const bool udp = UdpPorts(ip, len, &sport, &dport);
  // A learning port is a DHCP client, never a server or relay: what it sends from port 67
  // or to port 68 (a client's) would bind addresses to other ports.
  if (bindings.learn && udp &&
      (sport == __builtin_bswap16(67) || dport == __builtin_bswap16(68))) {
    return false;
  }
  if (bindings.Allows4(src)) return true;
  // From 0.0.0.0: only a DHCP client's (UDP 68 -> 67, before it has an address).
  return src == 0 && udp && sport == __builtin_bswap16(68) && dport == __builtin_bswap16(67);
}

// Ethernet/IPv4 ARP only; the sender's protocol address bound, or 0.0.0.0 (a probe).
bool ArpAllowed(const IpBindings& bindings, const uint8_t* arp, uint32_t len) {
  if (len < 28) return false;
  if (Load16(arp) != __builtin_bswap16(1) || Load16(arp + 2) != kEtherIpv4 || arp[4] != 6 ||
      arp[5] != 4) {
    return false;
  }
  const uint32_t sender = Load32(arp + 14);
  return sender == 0 || bindings.Allows4(sender);
}

bool Ipv6Allowed(const IpBindings& bindings, const uint8_t* ip, uint32_t len) {
  if (len < 40) return false;
  const uint8_t* src = ip + 8;
  const uint8_t* icmp = nullptr;
  uint32_t icmp_len = 0;
  const Ipv6Upper upper = FindIcmpv6(ip, len, &icmp, &icmp_len);
  if (upper == Ipv6Upper::kUnreadable) return false;  // what it carries cannot be checked
  const bool has_icmp = upper == Ipv6Upper::kIcmpv6;
  if (IsZero16(src)) {
    // Duplicate address detection and MLD reports are sent before an address is had.
    return has_icmp && (icmp[0] == kNeighbourSolicitation || icmp[0] == kMldv2Report ||
                        icmp[0] == kMldv1Report);
  }
  if (!bindings.Allows6(src)) return false;
  if (has_icmp && icmp[0] == kNeighbourAdvertisement) {
    return icmp_len >= 24 && bindings.Allows6(icmp + 8);  // its target
  }
  return true;
}

}  // namespace

void IpBindings::Add(const IpPrefix& prefix) {
  if (!prefix.v6) {
    if (nb_v4 == kMaxPortIps) return;
    v4_mask[nb_v4] = Mask32(prefix.length);
    v4_addr[nb_v4] = Load32(prefix.addr.data()) & v4_mask[nb_v4];
    ++nb_v4;
    return;
  }
  if (nb_v6 == kMaxPortIps) return;
  const unsigned bits = prefix.length;
  v6_mask[nb_v6] = {Mask64(bits >= 64 ? 64 : bits), Mask64(bits > 64 ? bits - 64 : 0)};
  uint64_t a, b;
  std::memcpy(&a, prefix.addr.data(), 8);
  std::memcpy(&b, prefix.addr.data() + 8, 8);
  v6_addr[nb_v6] = {a & v6_mask[nb_v6][0], b & v6_mask[nb_v6][1]};
  ++nb_v6;
}

bool IpBindings::Allows6(const uint8_t* addr) const {
  uint64_t a, b;
  std::memcpy(&a, addr, 8);
  std::memcpy(&b, addr + 8, 8);
  for (uint8_t i = 0; i < nb_v6; ++i) {
    if ((a & v6_mask[i][0]) == v6_addr[i][0] && (b & v6_mask[i][1]) == v6_addr[i][1]) {
      return true;
    }
  }
  return false;
}

bool IsDhcpReply(uint16_t ether_type, const uint8_t* l3, uint32_t len) {
  uint16_t sport, dport;
  return ether_type == kEtherIpv4 && len >= 20 && (l3[0] >> 4) == 4 &&
         UdpPorts(l3, len, &sport, &dport) && sport == __builtin_bswap16(67) &&
         dport == __builtin_bswap16(68);
}

bool ClaimsUnbound(uint16_t ether_type, const uint8_t* l3, uint32_t len, bool allowed) {
  if (ether_type == kEtherArp) {
    // A refused ARP claims its sender; an allowed one from 0.0.0.0 (a probe) its target.
    return len >= 28 && (!allowed || Load32(l3 + 14) == 0);
  }
  if (ether_type != kEtherIpv6 || len < 40) return false;
  const uint8_t* icmp = nullptr;
  uint32_t icmp_len = 0;
  if (FindIcmpv6(l3, len, &icmp, &icmp_len) != Ipv6Upper::kIcmpv6) return false;
  if (icmp[0] != kRouterSolicitation && icmp[0] != kNeighbourSolicitation &&
      icmp[0] != kNeighbourAdvertisement) {
    return false;
  }
  // Refused, or duplicate address detection (from ::, allowed): its target.
  return !allowed || IsZero16(l3 + 8);
}

bool IpAllowed(const IpBindings& bindings, uint16_t ether_type, const uint8_t* l3, uint32_t len) {
  switch (ether_type) {
    case kEtherIpv4: return Ipv4Allowed(bindings, l3, len);
    case kEtherArp: return ArpAllowed(bindings, l3, len);
    case kEtherIpv6: return Ipv6Allowed(bindings, l3, len);
    default: return !IpGuardReads(ether_type);  // another tag: what it carries is unseen
  }
}

}  // namespace hvswitch
