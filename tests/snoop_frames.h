// Whole Ethernet frames for the snooping parsers' tests (switch/control/mcast_message.h,
// dhcp_message.h, address_claim.h), built byte by byte: IGMP v1-v3 and MLD v1-v2 messages,
// DHCP messages, ARP, neighbour discovery with options. Message builders leave the
// checksum field zero so that a test can change any byte first; the frame builders fill
// the checksums in, from tests/test_frames.h's independent RFC 1071 sum (not the DPDK code
// the parsers use). Frames from hex for the captures of tests/snoop_captures.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "switch/datapath/mac_key.h"
#include "tests/ip_frames.h"
#include "tests/test_frames.h"

namespace hvswitch::testing {

inline constexpr uint8_t kGuestMac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};
inline const uint64_t kGuestKey = MacKey(0, kGuestMac);
inline constexpr uint8_t kOtherMac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0b};
inline const uint64_t kOtherKey = MacKey(0, kOtherMac);

inline Bytes FromHex(std::string_view hex) {
  Bytes b;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    b.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return b;
}

inline Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const Bytes& part : parts) b.insert(b.end(), part.begin(), part.end());
  return b;
}

// The ones' complement of `sum` folded, stored big-endian at `at`.
inline void PutChecksum(Bytes& b, size_t at, uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  Put16(b, at, static_cast<uint16_t>(~sum));
}

// An Ethernet frame from kGuestMac carrying `l3`, behind a tag (VLAN 100) per TPID in
// `tpids`.
inline Bytes Ethernet(uint16_t ether_type, const Bytes& l3, std::vector<uint16_t> tpids = {}) {
  Bytes b = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0};
  std::memcpy(b.data() + 6, kGuestMac, 6);
  for (uint16_t tpid : tpids) {
    Put16(b, b.size(), tpid);
    Put16(b, b.size(), 100);
  }
  Put16(b, b.size(), ether_type);
  b.insert(b.end(), l3.begin(), l3.end());
  return b;
}

// An IPv4 packet (TTL 1, with a router alert option when `router_alert`, as IGMP is sent)
// around `payload`; the header checksum filled in.
inline Bytes Packet4(const char* src, const char* dst, uint8_t proto, const Bytes& payload,
                     bool router_alert = true) {
  const size_t ihl = router_alert ? 24 : 20;
  Bytes b(ihl);
  b[0] = static_cast<uint8_t>(0x40 | ihl / 4);
  Put16(b, 2, static_cast<uint16_t>(ihl + payload.size()));
  b[8] = 1;
  b[9] = proto;
  PutAddr(b, 12, src);
  PutAddr(b, 16, dst);
  if (router_alert) b[20] = 0x94, b[21] = 4;  // RFC 2113
  PutChecksum(b, 10, Rfc1071Sum(b));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// An IPv6 packet around an ICMPv6 message (its checksum filled in over the pseudo-header)
// behind `extensions`: each an 8-byte header of that type (0 carries a router alert).
inline Bytes Packet6(const char* src, const char* dst, Bytes icmp, uint8_t hop_limit,
                     const std::vector<uint8_t>& extensions = {}) {
  Bytes b(40);
  b[0] = 0x60;
  b[6] = extensions.empty() ? 58 : extensions[0];
  b[7] = hop_limit;
  PutAddr(b, 8, src);
  PutAddr(b, 24, dst);
  for (size_t i = 0; i < extensions.size(); ++i) {
    Bytes ext = {static_cast<uint8_t>(i + 1 < extensions.size() ? extensions[i + 1] : 58), 0,
                 0, 0, 0, 0, 0, 0};
    if (extensions[i] == 0) ext[2] = 5, ext[3] = 2, ext[6] = 1;  // router alert, PadN
    b.insert(b.end(), ext.begin(), ext.end());
  }
  Put16(b, 4, static_cast<uint16_t>(b.size() - 40 + icmp.size()));
  Bytes pseudo(b.begin() + 8, b.begin() + 40);
  const size_t n = icmp.size();
  pseudo.insert(pseudo.end(), {0, 0, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n), 0,
                               0, 0, 58});
  icmp[2] = icmp[3] = 0;
  PutChecksum(icmp, 2, Rfc1071Sum(icmp, Rfc1071Sum(pseudo)));
  b.insert(b.end(), icmp.begin(), icmp.end());
  return b;
}

// IGMP: an 8-byte message (v1/v2 report, v2 leave, v1/v2 query) and v3's query and report.
inline Bytes IgmpMessage(uint8_t type, uint8_t code, const char* group) {
  Bytes b = {type, code, 0, 0};
  PutAddr(b, 4, group);
  return b;
}

inline Bytes Igmpv3Query(const char* group, const std::vector<const char*>& sources = {}) {
  Bytes b = IgmpMessage(0x11, 100, group);
  b.resize(12);
  b[9] = 125;
  Put16(b, 10, static_cast<uint16_t>(sources.size()));
  for (const char* source : sources) PutAddr(b, b.size(), source);
  return b;
}

// One IGMPv3 or MLDv2 group record.
struct Record {
  uint8_t type;
  const char* group;
  std::vector<const char*> sources = {};
  uint8_t aux_words = 0;
};

inline Bytes RecordBytes(const Record& r) {
  Bytes b = {r.type, r.aux_words, 0, 0};
  Put16(b, 2, static_cast<uint16_t>(r.sources.size()));
  PutAddr(b, 4, r.group);
  for (const char* source : r.sources) PutAddr(b, b.size(), source);
  b.resize(b.size() + r.aux_words * 4u, 0xaa);
  return b;
}

// A v3/v2 report: its type, then (after a reserved 16 bits) the record count and records.
inline Bytes Report(uint8_t type, const std::vector<Record>& records) {
  Bytes b = {type, 0, 0, 0, 0, 0, 0, 0};
  Put16(b, 6, static_cast<uint16_t>(records.size()));
  for (const Record& r : records) b = Concat({b, RecordBytes(r)});
  return b;
}
inline Bytes Igmpv3Report(const std::vector<Record>& records) { return Report(0x22, records); }
inline Bytes Mldv2Report(const std::vector<Record>& records) { return Report(143, records); }

// The frame of an IGMP message, its checksum filled in.
inline Bytes IgmpFrame(Bytes igmp, const char* src = "10.0.0.5", const char* dst = "224.0.0.22",
                       std::vector<uint16_t> tpids = {}) {
  igmp[2] = igmp[3] = 0;
  PutChecksum(igmp, 2, Rfc1071Sum(igmp));
  return Ethernet(0x0800, Packet4(src, dst, 2, igmp), std::move(tpids));
}

// MLD: v1's 24-byte messages (query, report, done) and v2's query.
inline Bytes Mldv1(uint8_t type, const char* group) {
  Bytes b(24);
  b[0] = type;
  PutAddr(b, 8, group);
  return b;
}

inline Bytes Mldv2Query(const char* group, const std::vector<const char*>& sources = {}) {
  Bytes b = Mldv1(130, group);
  b.resize(28);
  b[25] = 125;
  Put16(b, 26, static_cast<uint16_t>(sources.size()));
  for (const char* source : sources) PutAddr(b, b.size(), source);
  return b;
}

// The frame of an MLD message: hop limit 1, behind a hop-by-hop header with router alert.
inline Bytes MldFrame(const Bytes& icmp, const char* src = "fe80::5",
                      const char* dst = "ff02::16", std::vector<uint8_t> extensions = {0}) {
  return Ethernet(0x86dd, Packet6(src, dst, icmp, 1, extensions));
}

// Neighbour discovery: a router solicitation (8 bytes), or a neighbour solicitation or
// advertisement (24 bytes, `target`), then `options`.
inline Bytes NdMessage(uint8_t type, const char* target, const Bytes& options = {},
                       uint8_t flags = 0) {
  Bytes b(type == 133 ? 8 : 24);
  b[0] = type;
  b[4] = flags;
  if (type != 133) PutAddr(b, 8, target);
  return Concat({b, options});
}

// A source (1) or target (2) link-layer address option.
inline Bytes LinkLayerOption(uint8_t type, const uint8_t* mac) {
  Bytes b = {type, 1, 0, 0, 0, 0, 0, 0};
  std::memcpy(b.data() + 2, mac, 6);
  return b;
}

inline Bytes NdFrame(const Bytes& icmp, const char* src, const char* dst = "ff02::1",
                     uint8_t hop_limit = 255, std::vector<uint8_t> extensions = {}) {
  return Ethernet(0x86dd, Packet6(src, dst, icmp, hop_limit, extensions));
}

// Ethernet/IPv4 ARP from kGuestMac.
inline Bytes ArpFrame(uint16_t op, const char* sender, const char* target) {
  Bytes b(28);
  Put16(b, 0, 1);
  Put16(b, 2, 0x0800);
  b[4] = 6;
  b[5] = 4;
  Put16(b, 6, op);
  std::memcpy(b.data() + 8, kGuestMac, 6);
  PutAddr(b, 14, sender);
  PutAddr(b, 24, target);
  return Ethernet(0x0806, b);
}

// DHCP: a BOOTP message (chaddr kGuestMac, the magic cookie) with `options`, which end
// with the end option unless the test leaves it out.
inline Bytes Bootp(uint8_t op, const char* ciaddr, const char* yiaddr, const Bytes& options) {
  Bytes b(240);
  b[0] = op;
  b[1] = 1;
  b[2] = 6;
  PutAddr(b, 12, ciaddr);
  PutAddr(b, 16, yiaddr);
  std::memcpy(b.data() + 28, kGuestMac, 6);
  const uint8_t cookie[4] = {0x63, 0x82, 0x53, 0x63};
  std::memcpy(b.data() + 236, cookie, 4);
  return Concat({b, options});
}

inline Bytes Option(uint8_t code, const Bytes& data) {
  Bytes b = {code, static_cast<uint8_t>(data.size())};
  return Concat({b, data});
}

// A UDP datagram in an IPv4 packet (no router alert); UDP checksum 0 (none).
inline Bytes UdpFrame(const char* src, const char* dst, uint16_t sport, uint16_t dport,
                      const Bytes& payload, std::vector<uint16_t> tpids = {}) {
  Bytes udp(8);
  Put16(udp, 0, sport);
  Put16(udp, 2, dport);
  Put16(udp, 4, static_cast<uint16_t>(8 + payload.size()));
  return Ethernet(0x0800, Packet4(src, dst, 17, Concat({udp, payload}), false),
                  std::move(tpids));
}

}  // namespace hvswitch::testing
