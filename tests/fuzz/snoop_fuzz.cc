// libFuzzer target: the snooping parsers (switch/control/mcast_message.h, dhcp_message.h,
// address_claim.h) over any bytes taken as a whole Ethernet frame, under ASan and UBSan
// (deploy/fuzz.sh snoop). Input: [mode] then the frame. Mode bit 0: the frame's IPv4
// header, IGMP and ICMPv6 checksums are made right first, so that mutations reach the
// parsing behind them (a changed byte passes a 16-bit checksum once in 65536 tries). The
// frame is copied into a buffer of its own size, so a read past it is ASan's to see.
// Besides that, what the parsers return keeps their promises:
//   - a report's records are all of groups SnoopedGroup() tracks, of the message's family,
//     whose GroupMac() has the family's prefix (01:00:5e with bit 23 clear, or 33:33); a
//     query has none, a report no query group; every address is of the message's family;
//     the version is IGMP's 1-3 or MLD's 1-2; from_unspecified says whether the source is
//     all zero;
//   - a claim's address is usable unicast (address_claim.h), its length and kind those of
//     its family, its eth_src the frame's source;
//   - a DHCP message's type is 1-8, and `reply` says which ports it came between;
//   - no two parsers read one frame (they read different protocols);
//   - a frame read reads the same with one byte more behind it (every length the parsers
//     use comes from a header: trailing bytes are Ethernet padding);
//   - an untagged frame reads the same behind an 802.1Q tag, whatever its TCI.
#include <rte_ip.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "switch/control/address_claim.h"
#include "switch/control/dhcp_message.h"
#include "switch/control/mcast_message.h"
#include "switch/control/snoop_headers.h"
#include "switch/datapath/ipv6_upper.h"
#include "switch/datapath/mac_key.h"

using hvswitch::AddressClaim;
using hvswitch::DhcpMessage;
using hvswitch::McastMessage;

namespace {

[[noreturn]] void Broken(const char* what) {
  std::fprintf(stderr, "snoop_fuzz: broken promise: %s\n", what);
  std::abort();
}

struct Results {
  McastMessage mcast;
  std::optional<DhcpMessage> dhcp;
  std::optional<AddressClaim> claim;
  bool operator==(const Results&) const = default;
  bool any() const { return mcast.kind != McastMessage::Kind::kNone || dhcp || claim; }
};

Results Parse(const std::vector<uint8_t>& frame) {
  const uint32_t len = static_cast<uint32_t>(frame.size());
  return {hvswitch::ParseMcastFrame(frame.data(), len),
          hvswitch::ParseDhcpFrame(frame.data(), len),
          hvswitch::ParseAddressClaim(frame.data(), len)};
}

void CheckMcast(const McastMessage& m) {
  if (m.kind == McastMessage::Kind::kNone) {
    if (m != McastMessage{}) Broken("kNone with fields set");
    return;
  }
  if (m.version < 1 || m.version > (m.v6 ? 2 : 3)) Broken("a version out of range");
  if (m.source.v6 != m.v6 || m.query_group.v6 != m.v6) Broken("addresses of two families");
  if (m.from_unspecified != (m.source == hvswitch::McastGroup{m.v6, {}})) {
    Broken("from_unspecified does not say the source is all zero");
  }
  if (m.kind == McastMessage::Kind::kQuery && !m.records.empty()) Broken("a query's records");
  if (m.kind == McastMessage::Kind::kReport && m.query_group != hvswitch::McastGroup{m.v6, {}}) {
    Broken("a report with a query's group");
  }
  for (const hvswitch::McastRecord& r : m.records) {
    if (r.group.v6 != m.v6) Broken("a record of the other family");
    if (!hvswitch::SnoopedGroup(r.group)) Broken("a record of a group not snooped");
    const uint64_t mac = hvswitch::GroupMac(r.group);
    const bool prefix = m.v6 ? (mac & 0xffff) == 0x3333
                             : (mac & 0xffffff) == 0x5e0001 && ((mac >> 24) & 0x80) == 0;
    if (!prefix || hvswitch::KeyVlan(mac) != 0) Broken("a group MAC without its prefix");
  }
}

bool Usable(const hvswitch::IpPrefix& p) {
  const uint8_t* a = p.addr.data();
  if (!p.v6) {
    return p.length == 32 && (a[0] | a[1] | a[2] | a[3]) != 0 && a[0] != 127 && a[0] < 224;
  }
  bool zero_head = true;
  for (int i = 0; i < 15; ++i) zero_head = zero_head && a[i] == 0;
  return p.length == 128 && !(zero_head && a[15] <= 1) && a[0] != 0xff;
}

void CheckClaim(const AddressClaim& c, const std::vector<uint8_t>& frame) {
  if (!Usable(c.address)) Broken("a claim of an address that is not usable unicast");
  const bool arp = c.kind == AddressClaim::Kind::kArp || c.kind == AddressClaim::Kind::kArpProbe;
  if (arp == c.address.v6) Broken("a claim's kind of the other family");
  if (c.eth_src != hvswitch::MacKey(0, frame.data() + 6)) Broken("eth_src not the source");
}

// A message read is whole: its UDP ports are within the frame.
void CheckDhcp(const DhcpMessage& d, const std::vector<uint8_t>& frame) {
  if (d.type < 1 || d.type > 8) Broken("a DHCP type out of range");
  const size_t l2 = frame[12] == 0x81 && frame[13] == 0 ? 18 : 14;
  const size_t udp = l2 + (frame[l2] & 0xf) * 4u;
  const unsigned sport = frame[udp] << 8 | frame[udp + 1];
  const unsigned dport = frame[udp + 2] << 8 | frame[udp + 3];
  if (d.reply ? sport != 67 || dport != 68 : sport != 68 || dport != 67) {
    Broken("reply says other ports than the message's");
  }
}

// The checksum at `field` made right for `len` bytes at `bytes` (which hold the field).
void SetChecksum(uint8_t* bytes, size_t len, uint8_t* field) {
  field[0] = field[1] = 0;
  const uint16_t sum = static_cast<uint16_t>(~rte_raw_cksum(bytes, len));
  std::memcpy(field, &sum, 2);  // the sum of memory-order words: stored as it came
}

// As far as the headers can be followed within the bytes; what cannot is left as it is.
void FixChecksums(std::vector<uint8_t>& f) {
  if (f.size() < 14) return;
  size_t l2 = 14;
  if (f[12] == 0x81 && f[13] == 0 && f.size() >= 18) l2 = 18;
  const uint16_t ether_type = static_cast<uint16_t>(f[l2 - 2] << 8 | f[l2 - 1]);
  uint8_t* ip = f.data() + l2;
  const size_t avail = f.size() - l2;
  if (ether_type == 0x0800 && avail >= 20) {
    const size_t ihl = (ip[0] & 0xfu) * 4;
    if (ihl < 20 || ihl > avail) return;
    SetChecksum(ip, ihl, ip + 10);
    const size_t total = std::min<size_t>(static_cast<size_t>(ip[2] << 8 | ip[3]), avail);
    if (ip[9] == 2 && total >= ihl + 4) SetChecksum(ip + ihl, total - ihl, ip + ihl + 2);
  } else if (ether_type == 0x86dd && avail >= 40) {
    const size_t len = std::min<size_t>(40 + static_cast<size_t>(ip[4] << 8 | ip[5]), avail);
    const uint8_t* icmp = nullptr;
    uint32_t icmp_len = 0;
    if (hvswitch::FindIcmpv6(ip, static_cast<uint32_t>(len), &icmp, &icmp_len) !=
        hvswitch::Ipv6Upper::kIcmpv6) {
      return;
    }
    uint8_t* m = ip + (icmp - ip);
    m[2] = m[3] = 0;
    const uint16_t sum = static_cast<uint16_t>(~hvswitch::Icmpv6Sum(ip, m, icmp_len));
    std::memcpy(m + 2, &sum, 2);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  if (input_size < 1) return 0;
  std::vector<uint8_t> frame(input + 1, input + input_size);
  if (input[0] & 1) FixChecksums(frame);
  const uint8_t* data = frame.data();
  const size_t size = frame.size();
  const Results r = Parse(frame);
  CheckMcast(r.mcast);
  if (r.claim) CheckClaim(*r.claim, frame);
  if (r.dhcp) CheckDhcp(*r.dhcp, frame);
  if ((r.mcast.kind != McastMessage::Kind::kNone) + r.dhcp.has_value() + r.claim.has_value() >
      1) {
    Broken("two parsers read one frame");
  }
  if (r.any()) {
    std::vector<uint8_t> longer = frame;
    longer.push_back(size > 0 ? data[0] : 0);
    if (Parse(longer) != r) Broken("a byte behind the frame changed what it reads");
  }
  if (size >= 14 && !(data[12] == 0x81 && data[13] == 0)) {
    std::vector<uint8_t> tagged(data, data + 12);
    const uint8_t tag[4] = {0x81, 0x00, data[0], data[1]};
    tagged.insert(tagged.end(), tag, tag + 4);
    tagged.insert(tagged.end(), data + 12, data + size);
    if (Parse(tagged) != r) Broken("an 802.1Q tag changed what a frame reads");
  }
  return 0;
}
