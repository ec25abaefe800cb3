#include "switch/control/address_claim.h"

#include <cstring>

#include "switch/control/snoop_headers.h"
#include "switch/datapath/mac_key.h"

namespace hvswitch {
namespace {

constexpr uint8_t kRouterSolicitation = 133, kNeighbourSolicitation = 135,
                  kNeighbourAdvertisement = 136;
constexpr uint8_t kSourceLinkLayer = 1, kTargetLinkLayer = 2;
constexpr uint8_t kSolicitedFlag = 0x40;

bool Usable4(uint32_t addr) {  // host order
  return addr != 0 && addr != 0xffffffff && (addr >> 24) != 127 && (addr >> 28) < 0xe;
}

bool Usable6(const uint8_t* addr) {
  constexpr uint8_t kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return !IsZero16(addr) && std::memcmp(addr, kLoopback, 16) != 0 && addr[0] != 0xff;
}

IpPrefix Address(bool v6, const uint8_t* addr) {
  IpPrefix prefix;
  prefix.v6 = v6;
  prefix.length = v6 ? 128 : 32;
  std::memcpy(prefix.addr.data(), addr, v6 ? 16 : 4);
  return prefix;
}

std::optional<AddressClaim> Arp(const L3Bytes& arp, uint64_t eth_src) {
  const uint8_t* a = arp.data;
  if (arp.len < 28 || Be16(a) != 1 || Be16(a + 2) != kEtherTypeIpv4 || a[4] != 6 ||
      a[5] != 4 || (Be16(a + 6) != 1 && Be16(a + 6) != 2)) {
    return std::nullopt;
  }
  const bool probe = Be32(a + 14) == 0;
  const uint8_t* claimed = probe ? a + 24 : a + 14;
  if (!Usable4(Be32(claimed))) return std::nullopt;
  return AddressClaim{Address(false, claimed), MacKey(0, a + 8), eth_src,
                      probe ? AddressClaim::Kind::kArpProbe : AddressClaim::Kind::kArp};
}

// The options from `at` (type, length in 8-byte units): whether they are well-formed, and
// the first link-layer address option of type `wanted` (later ones are ignored, as Linux
// does) in *mac, or nullptr.
bool ReadNdOptions(const uint8_t* m, uint32_t len, uint32_t at, uint8_t wanted,
                   const uint8_t** mac) {
  *mac = nullptr;
  while (at < len) {
    if (len - at < 2) return false;
    const uint32_t size = m[at + 1] * 8u;
    if (size == 0 || size > len - at) return false;
    if (m[at] == wanted && *mac == nullptr) {
      if (size != 8) return false;  // not an Ethernet address: receivers drop the message
      *mac = m + at + 2;
    }
    at += size;
  }
  return true;
}

std::optional<AddressClaim> Nd(const Icmpv6Packet& ip, uint64_t eth_src) {
  const uint8_t* m = ip.icmp;
  const uint32_t len = ip.icmp_len;
  const uint8_t* src = ip.header + 8;
  const uint8_t* dst = ip.header + 24;
  // Hop limit 255 (sent on this link, not routed in) and code 0: RFC 4861 6.1.1, 7.1.
  if (ip.header[7] != 255 || m[1] != 0) return std::nullopt;
  const uint8_t* claimed = nullptr;
  const uint8_t* mac = nullptr;
  AddressClaim::Kind kind = AddressClaim::Kind::kNeighbour;
  switch (m[0]) {
    case kRouterSolicitation:
      if (len < 8 || !ReadNdOptions(m, len, 8, kSourceLinkLayer, &mac)) return std::nullopt;
      claimed = src;
      break;
    case kNeighbourSolicitation:
      if (len < 24 || m[8] == 0xff || !ReadNdOptions(m, len, 24, kSourceLinkLayer, &mac)) {
        return std::nullopt;
      }
      if (IsZero16(src)) {
        if (mac != nullptr) return std::nullopt;  // RFC 4861 7.1.1
        claimed = m + 8;
        kind = AddressClaim::Kind::kDad;
      } else {
        claimed = src;
      }
      break;
    case kNeighbourAdvertisement:
      if (len < 24 || m[8] == 0xff || !ReadNdOptions(m, len, 24, kTargetLinkLayer, &mac)) {
        return std::nullopt;
      }
      if (dst[0] == 0xff && (m[4] & kSolicitedFlag) != 0) return std::nullopt;  // 7.1.2
      claimed = m + 8;
      break;
    default:
      return std::nullopt;
  }
  if (!Usable6(claimed)) return std::nullopt;
  return AddressClaim{Address(true, claimed), mac != nullptr ? MacKey(0, mac) : eth_src,
                      eth_src, kind};
}

}  // namespace

std::optional<AddressClaim> ParseAddressClaim(const uint8_t* frame, uint32_t len) {
  const std::optional<L3Bytes> l3 = FrameL3(frame, len);
  if (!l3) return std::nullopt;
  const uint64_t eth_src = MacKey(0, frame + 6);
  if (l3->ether_type == kEtherTypeArp) return Arp(*l3, eth_src);
  if (const std::optional<Icmpv6Packet> ip = ReadIcmpv6(*l3)) return Nd(*ip, eth_src);
  return std::nullopt;
}

bool IsUsableUnicast(const IpPrefix& address) {
  if (address.v6) return Usable6(address.addr.data());
  uint32_t addr;
  std::memcpy(&addr, address.addr.data(), 4);
  return Usable4(__builtin_bswap32(addr));
}

}  // namespace hvswitch
