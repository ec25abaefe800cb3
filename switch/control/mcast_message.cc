#include "switch/control/mcast_message.h"

#include <cstring>
#include <optional>

#include "ports/guard_keys.h"
#include "ports/guard_spec.h"
#include "switch/control/snoop_headers.h"
#include "switch/datapath/mac_key.h"
#include "switch/datapath/mcast_frame.h"

namespace hvswitch {
namespace {

// v3/v2 record types (RFC 3376 4.2.12, RFC 3810 5.2.12).
constexpr uint8_t kModeIsInclude = 1, kChangeToInclude = 3, kBlockOldSources = 6;

McastGroup Group(bool v6, const uint8_t* addr) {
  McastGroup group;
  group.v6 = v6;
  std::memcpy(group.addr.data(), addr, v6 ? 16 : 4);
  return group;
}

bool IsMulticast(const McastGroup& group) {
  return group.v6 ? group.addr[0] == 0xff : (group.addr[0] >> 4) == 0xe;
}

// A query names no group (general) or a multicast one; anything else is no query.
bool QueryGroupValid(const McastGroup& group) {
  return group == McastGroup{group.v6, {}} || IsMulticast(group);
}

void AddRecord(McastMessage& message, const McastGroup& group, bool join) {
  if (SnoopedGroup(group)) message.records.push_back({group, join});
}

// An IGMPv3 or MLDv2 report: after a reserved 16 bits, the record count, then the records:
// type, aux data length (32-bit words), number of sources, group, the sources, the aux
// data. A record past the end spoils the whole report: what it says cannot be known.
// Group-level semantics, as Open vSwitch and RFC 4541 read them: an include with no source
// leaves, every other known type joins.
McastMessage Records(McastMessage message, const uint8_t* m, uint32_t len) {
  if (len < 8) return {};
  message.kind = McastMessage::Kind::kReport;
  message.version = message.v6 ? 2 : 3;
  const uint32_t addr_len = message.v6 ? 16 : 4, count = Be16(m + 6);
  uint32_t at = 8;
  for (uint32_t i = 0; i < count; ++i) {
    if (len - at < 4 + addr_len) return {};
    const uint8_t type = m[at];
    const uint32_t nsrcs = Be16(m + at + 2);
    const uint32_t size = 4 + addr_len * (1 + nsrcs) + m[at + 1] * 4u;
    if (size > len - at) return {};
    if (type >= kModeIsInclude && type <= kBlockOldSources) {
      const bool leave = (type == kModeIsInclude || type == kChangeToInclude) && nsrcs == 0;
      AddRecord(message, Group(message.v6, m + at + 4), !leave);
    }
    at += size;
  }
  return message;
}

// A query of `base` bytes (IGMPv1/v2, MLDv1: `base_version`), or of base + 4 and more with
// the source list its last 2 bytes count (IGMPv3, MLDv2); any other length is no version
// (RFC 3376 7.1, RFC 3810 8.1). Its group, at `group_at`, is zero or multicast.
McastMessage Query(McastMessage message, const uint8_t* m, uint32_t len, uint32_t base,
                   uint8_t base_version, uint32_t group_at) {
  const uint32_t addr_len = message.v6 ? 16 : 4;
  message.kind = McastMessage::Kind::kQuery;
  if (len == base) {
    message.version = base_version;
  } else if (len >= base + 4 && base + 4 + Be16(m + base + 2) * addr_len <= len) {
    message.version = message.v6 ? 2 : 3;
  } else {
    return {};
  }
  message.query_group = Group(message.v6, m + group_at);
  if (!QueryGroupValid(message.query_group)) return {};
  return message;
}

McastMessage Igmp(const Ipv4Packet& ip) {
  const uint8_t* m = ip.payload;
  const uint32_t len = ip.payload_len;
  if (ip.proto != kProtoIgmp || len < 8) return {};
  if (!ChecksumValid(m, len)) return {};
  McastMessage message;
  message.source = Group(false, ip.header + 12);
  message.from_unspecified = Be32(ip.header + 12) == 0;
  switch (m[0]) {
    case kIgmpQuery:
      return Query(message, m, len, 8, m[1] == 0 ? 1 : 2, 4);
    case kIgmpv1Report:
    case kIgmpv2Report:
    case kIgmpv2Leave:
      message.kind = McastMessage::Kind::kReport;
      message.version = m[0] == kIgmpv1Report ? 1 : 2;
      AddRecord(message, Group(false, m + 4), m[0] != kIgmpv2Leave);
      return message;
    case kIgmpv3Report:
      return Records(message, m, len);
    default:
      return {};
  }
}

bool IsLinkLocal(const uint8_t* addr) { return addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80; }

McastMessage Mld(const Icmpv6Packet& ip) {
  const uint8_t* m = ip.icmp;
  const uint32_t len = ip.icmp_len;
  const uint8_t* src = ip.header + 8;
  const bool unspecified = IsZero16(src);
  if (!unspecified && !IsLinkLocal(src)) return {};
  McastMessage message;
  message.v6 = true;
  message.source = Group(true, src);
  message.query_group.v6 = true;  // all zero, but of the message's family
  message.from_unspecified = unspecified;
  switch (m[0]) {
    case kMldQuery:
      return Query(message, m, len, 24, 1, 8);
    case kMldv1Report:
    case kMldv1Done:
      if (len < 24) return {};
      message.kind = McastMessage::Kind::kReport;
      message.version = 1;
      AddRecord(message, Group(true, m + 8), m[0] == kMldv1Report);
      return message;
    case kMldv2Report:
      return Records(message, m, len);
    default:
      return {};
  }
}

}  // namespace

uint64_t GroupMac(const McastGroup& group) {
  const uint8_t* a = group.addr.data();
  const std::array<uint8_t, 6> mac =
      group.v6 ? std::array<uint8_t, 6>{0x33, 0x33, a[12], a[13], a[14], a[15]}
               : std::array<uint8_t, 6>{0x01, 0x00, 0x5e, static_cast<uint8_t>(a[1] & 0x7f),
                                        a[2], a[3]};
  return MacKey(0, mac.data());
}

bool SnoopedGroup(const McastGroup& group) {
  const std::array<uint8_t, 16>& a = group.addr;
  if (!group.v6) return (a[0] >> 4) == 0xe && !(a[0] == 224 && a[1] == 0 && a[2] == 0);
  constexpr std::array<uint8_t, 16> kAllNodes = {0xff, 0x02, 0, 0, 0, 0, 0, 0,
                                                 0,    0,    0, 0, 0, 0, 0, 1};
  return a[0] == 0xff && (a[1] & 0xf) >= 2 && a != kAllNodes;
}

std::string McastGroupString(const McastGroup& group) {
  IpPrefix full;
  full.v6 = group.v6;
  full.length = group.v6 ? 128 : 32;
  full.addr = group.addr;
  return IpPrefixString(full);
}

McastMessage ParseMcastFrame(const uint8_t* frame, uint32_t len) {
  const std::optional<L3Bytes> l3 = FrameL3(frame, len);
  if (!l3) return {};
  if (const std::optional<Ipv4Packet> ip = ReadIpv4(*l3)) return Igmp(*ip);
  if (const std::optional<Icmpv6Packet> ip = ReadIcmpv6(*l3)) return Mld(*ip);
  return {};
}

}  // namespace hvswitch
