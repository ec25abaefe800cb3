// The snooping parsers (switch/control/mcast_message.h, dhcp_message.h, address_claim.h) on
// frames built byte by byte (tests/snoop_frames.h) and on frames real implementations sent
// (tests/snoop_captures.h): every rule with a case that keeps it and one that breaks it,
// every header cut short at every length, bad checksums, tags, and the captures read with
// the fields their senders meant.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "switch/control/address_claim.h"
#include "switch/control/dhcp_message.h"
#include "switch/control/mcast_message.h"
#include "switch/datapath/announce.h"
#include "tests/snoop_captures.h"
#include "tests/snoop_frames.h"

namespace hvswitch {

// Failures name groups, not bytes.
void PrintTo(const McastGroup& group, std::ostream* os) { *os << McastGroupString(group); }
void PrintTo(const McastRecord& record, std::ostream* os) {
  *os << (record.join ? "join " : "leave ") << McastGroupString(record.group);
}

namespace {

using testing::ArpFrame;
using testing::Bootp;
using testing::Bytes;
using testing::Concat;
using testing::Ethernet;
using testing::FromHex;
using testing::IgmpFrame;
using testing::IgmpMessage;
using testing::Igmpv3Query;
using testing::Igmpv3Report;
using testing::kGuestKey;
using testing::kGuestMac;
using testing::kOtherKey;
using testing::kOtherMac;
using testing::LinkLayerOption;
using testing::MldFrame;
using testing::Mldv1;
using testing::Mldv2Query;
using testing::Mldv2Report;
using testing::NdFrame;
using testing::NdMessage;
using testing::Option;
using testing::Packet4;
using testing::Prefix;
using testing::Put16;
using testing::PutAddr;
using testing::UdpFrame;
using Kind = McastMessage::Kind;
using Claim = AddressClaim::Kind;

McastMessage Mcast(const Bytes& f) {
  return ParseMcastFrame(f.data(), static_cast<uint32_t>(f.size()));
}
std::optional<DhcpMessage> Dhcp(const Bytes& f) {
  return ParseDhcpFrame(f.data(), static_cast<uint32_t>(f.size()));
}
std::optional<AddressClaim> ClaimOf(const Bytes& f) {
  return ParseAddressClaim(f.data(), static_cast<uint32_t>(f.size()));
}
bool AnyParses(const Bytes& f) {
  return Mcast(f).kind != Kind::kNone || Dhcp(f).has_value() || ClaimOf(f).has_value();
}

McastGroup Group(const char* text) {
  const IpPrefix p = Prefix(text);
  return McastGroup{p.v6, p.addr};
}
McastRecord Join(const char* group) { return {Group(group), true}; }
McastRecord Leave(const char* group) { return {Group(group), false}; }

uint32_t Ip4(const char* text) {  // network order, as the DHCP fields hold addresses
  uint32_t a = 0;
  EXPECT_EQ(inet_pton(AF_INET, text, &a), 1) << text;
  return a;
}
uint64_t Key(const char* mac) {
  uint8_t b[6];
  EXPECT_EQ(std::sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &b[0], &b[1], &b[2], &b[3], &b[4],
                        &b[5]),
            6);
  return MacKey(0, b);
}

// The frame's bytes without its last `n`: whatever the cut, no parser may read anything.
// `whole`: where the message ends (before Ethernet padding).
void ExpectCutsRefused(const Bytes& frame, size_t whole = 0) {
  if (whole == 0) whole = frame.size();
  for (size_t len = 0; len < whole; ++len) {
    const Bytes cut(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_FALSE(AnyParses(cut)) << "cut to " << len << " of " << frame.size();
  }
}

// The same frame with an 802.1Q tag in front of its EtherType.
Bytes Tagged(const Bytes& frame, uint16_t tpid = 0x8100) {
  Bytes tag = {0, 0, 0x00, 0x64};
  Put16(tag, 0, tpid);
  Bytes b(frame.begin(), frame.begin() + 12);
  return Concat({b, tag, Bytes(frame.begin() + 12, frame.end())});
}

// --- multicast groups

TEST(McastGroupTest, GroupMacSnoopedAndText) {
  EXPECT_EQ(KeyMacString(GroupMac(Group("239.129.2.3"))), "01:00:5e:01:02:03")
      << "only the low 23 bits";
  EXPECT_EQ(KeyMacString(GroupMac(Group("224.0.0.22"))), "01:00:5e:00:00:16");
  EXPECT_EQ(KeyMacString(GroupMac(Group("ff05::1:3"))), "33:33:00:01:00:03");
  EXPECT_EQ(KeyMacString(GroupMac(Group("ff02::1:ff38:ba51"))), "33:33:ff:38:ba:51");
  EXPECT_EQ(KeyVlan(GroupMac(Group("ff05::1:3"))), 0);
  EXPECT_TRUE(IsGroupKey(GroupMac(Group("239.1.2.3"))));

  for (const char* yes : {"224.0.1.0", "224.0.1.1", "232.1.1.1", "239.255.255.255",
                          "ff02::2", "ff02::1:ff00:1", "ff05::1:3", "ff0e::1", "ff12::1"}) {
    EXPECT_TRUE(SnoopedGroup(Group(yes))) << yes;
  }
  for (const char* no : {"224.0.0.1", "224.0.0.22", "224.0.0.255", "223.255.255.255",
                         "240.0.0.1", "10.0.0.1", "0.0.0.0", "ff02::1", "ff01::2", "ff00::5",
                         "ff11::5", "fe80::1", "::", "2001:db8::1"}) {
    EXPECT_FALSE(SnoopedGroup(Group(no))) << no;
  }
  EXPECT_EQ(McastGroupString(Group("239.1.2.3")), "239.1.2.3");
  EXPECT_EQ(McastGroupString(Group("ff05::1:3")), "ff05::1:3");
}

// --- IGMP

TEST(McastMessageTest, IgmpReportsAndLeaves) {
  McastMessage m = Mcast(IgmpFrame(IgmpMessage(0x16, 0, "239.1.2.3")));
  EXPECT_EQ(m.kind, Kind::kReport);
  EXPECT_FALSE(m.v6);
  EXPECT_EQ(m.version, 2);
  EXPECT_EQ(m.source, Group("10.0.0.5"));
  EXPECT_FALSE(m.from_unspecified);
  EXPECT_EQ(m.records, std::vector<McastRecord>{Join("239.1.2.3")});
  m = Mcast(IgmpFrame(IgmpMessage(0x12, 0, "239.1.2.3"), "10.0.0.5", "239.1.2.3"));
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.records, std::vector<McastRecord>{Join("239.1.2.3")});
  m = Mcast(IgmpFrame(IgmpMessage(0x17, 0, "239.1.2.3"), "10.0.0.5", "224.0.0.2"));
  EXPECT_EQ(m.kind, Kind::kReport);
  EXPECT_EQ(m.records, std::vector<McastRecord>{Leave("239.1.2.3")});
  m = Mcast(IgmpFrame(IgmpMessage(0x16, 0, "239.1.2.3"), "0.0.0.0"));
  EXPECT_TRUE(m.from_unspecified) << "a report before the host has an address";
  EXPECT_EQ(m.records.size(), 1u);

  // Groups no snooping switch tracks: still a report, with nothing in it.
  for (const char* group : {"224.0.0.251", "224.0.0.1", "10.0.0.1", "0.0.0.0"}) {
    m = Mcast(IgmpFrame(IgmpMessage(0x16, 0, group)));
    EXPECT_EQ(m.kind, Kind::kReport) << group;
    EXPECT_TRUE(m.records.empty()) << group;
  }
  // RFC 2236 2.5: what follows the first 8 bytes is ignored (the checksum covers it).
  m = Mcast(IgmpFrame(Concat({IgmpMessage(0x16, 0, "239.1.2.3"), Bytes(5, 0x77)})));
  EXPECT_EQ(m.records, std::vector<McastRecord>{Join("239.1.2.3")});
  Bytes seven = IgmpMessage(0x16, 0, "239.1.2.3");
  seven.resize(7);
  EXPECT_EQ(Mcast(IgmpFrame(seven)).kind, Kind::kNone) << "shorter than a message";
  EXPECT_EQ(Mcast(IgmpFrame(IgmpMessage(0x13, 0, "239.1.2.3"))).kind, Kind::kNone)
      << "not an IGMP type a snooping switch reads";
}

TEST(McastMessageTest, IgmpQueries) {
  McastMessage m = Mcast(IgmpFrame(IgmpMessage(0x11, 0, "0.0.0.0"), "10.0.0.1", "224.0.0.1"));
  EXPECT_EQ(m.kind, Kind::kQuery);
  EXPECT_EQ(m.version, 1) << "8 bytes, max response 0";
  EXPECT_EQ(m.source, Group("10.0.0.1"));
  EXPECT_EQ(m.query_group, McastGroup{});
  EXPECT_TRUE(m.records.empty());
  m = Mcast(IgmpFrame(IgmpMessage(0x11, 100, "0.0.0.0"), "10.0.0.1", "224.0.0.1"));
  EXPECT_EQ(m.version, 2);
  m = Mcast(IgmpFrame(IgmpMessage(0x11, 10, "239.1.2.3"), "10.0.0.1", "239.1.2.3"));
  EXPECT_EQ(m.version, 2);
  EXPECT_EQ(m.query_group, Group("239.1.2.3")) << "group-specific";
  m = Mcast(IgmpFrame(Igmpv3Query("0.0.0.0"), "0.0.0.0", "224.0.0.1"));
  EXPECT_EQ(m.kind, Kind::kQuery);
  EXPECT_EQ(m.version, 3);
  EXPECT_TRUE(m.from_unspecified) << "a snooping switch's querier";
  m = Mcast(IgmpFrame(Igmpv3Query("232.1.1.1", {"10.0.0.7", "10.0.0.8"}), "10.0.0.1"));
  EXPECT_EQ(m.version, 3);
  EXPECT_EQ(m.query_group, Group("232.1.1.1"));

  // RFC 3376 7.1: 9 to 11 bytes is no version at all.
  for (size_t len : {9, 10, 11}) {
    Bytes q = Igmpv3Query("0.0.0.0");
    q.resize(len);
    EXPECT_EQ(Mcast(IgmpFrame(q)).kind, Kind::kNone) << len;
  }
  Bytes sources = Igmpv3Query("232.1.1.1", {"10.0.0.7", "10.0.0.8"});
  Put16(sources, 10, 3);
  EXPECT_EQ(Mcast(IgmpFrame(sources)).kind, Kind::kNone) << "a source count past the end";
  Put16(sources, 10, 1);
  EXPECT_EQ(Mcast(IgmpFrame(sources)).kind, Kind::kQuery) << "fewer sources than bytes";
  EXPECT_EQ(Mcast(IgmpFrame(IgmpMessage(0x11, 10, "10.1.2.3"))).kind, Kind::kNone)
      << "a group that is no multicast group";
  EXPECT_EQ(Mcast(IgmpFrame(Igmpv3Query("192.168.0.1"))).kind, Kind::kNone);
}

// Group-level semantics: an include of nothing leaves, every other known type joins.
TEST(McastMessageTest, Igmpv3RecordTypes) {
  McastMessage m = Mcast(IgmpFrame(Igmpv3Report({{2, "239.0.0.2"},
                                                 {3, "239.0.0.3"},
                                                 {5, "232.0.0.5", {"10.0.0.7"}}})));
  EXPECT_EQ(m.kind, Kind::kReport);
  EXPECT_EQ(m.version, 3);
  EXPECT_EQ(m.records, (std::vector<McastRecord>{Join("239.0.0.2"), Leave("239.0.0.3"),
                                                 Join("232.0.0.5")}));

  m = Mcast(IgmpFrame(Igmpv3Report({{1, "239.0.0.1"},
                                    {1, "239.0.0.11", {"10.0.0.7"}},
                                    {3, "239.0.0.13", {"10.0.0.7", "10.0.0.8"}},
                                    {4, "239.0.0.4", {"10.0.0.9"}, 2},
                                    {9, "239.0.0.9"},
                                    {6, "239.0.0.6", {"10.0.0.7"}},
                                    {0, "239.0.0.10"}})));
  EXPECT_EQ(m.records,
            (std::vector<McastRecord>{Leave("239.0.0.1"), Join("239.0.0.11"),
                                      Join("239.0.0.13"), Join("239.0.0.4"),
                                      Join("239.0.0.6")}))
      << "types 9 and 0 skipped, aux data stepped over";

  m = Mcast(IgmpFrame(Igmpv3Report({{4, "224.0.0.251"}, {4, "239.1.1.1"}, {4, "10.0.0.1"},
                                    {3, "224.0.0.106"}})));
  EXPECT_EQ(m.kind, Kind::kReport);
  EXPECT_EQ(m.records, std::vector<McastRecord>{Join("239.1.1.1")}) << "not snooped: left out";
  m = Mcast(IgmpFrame(Igmpv3Report({})));
  EXPECT_EQ(m.kind, Kind::kReport);
  EXPECT_TRUE(m.records.empty());

  const Bytes two = Igmpv3Report({{4, "239.0.0.1"}, {4, "239.0.0.2", {"10.0.0.7"}, 1}});
  Bytes fewer = two;
  Put16(fewer, 6, 1);
  EXPECT_EQ(Mcast(IgmpFrame(fewer)).records, std::vector<McastRecord>{Join("239.0.0.1")})
      << "bytes after the counted records ignored";
  Bytes more = two;
  Put16(more, 6, 3);
  EXPECT_EQ(Mcast(IgmpFrame(more)).kind, Kind::kNone) << "a record counted but not there";
  Bytes sources = two;
  sources[8 + 8 + 3] = 3;  // the second record's source count
  EXPECT_EQ(Mcast(IgmpFrame(sources)).kind, Kind::kNone) << "sources past the end";
  Bytes aux = two;
  aux[8 + 8 + 1] = 2;  // its aux data length
  EXPECT_EQ(Mcast(IgmpFrame(aux)).kind, Kind::kNone) << "aux data past the end";
  Bytes group_cut = two;
  group_cut.resize(8 + 8 + 6);
  EXPECT_EQ(Mcast(IgmpFrame(group_cut)).kind, Kind::kNone) << "a record's group cut";
}

TEST(McastMessageTest, Ipv4HeaderRules) {
  const Bytes good = IgmpFrame(IgmpMessage(0x16, 0, "239.1.2.3"));
  ASSERT_EQ(Mcast(good).kind, Kind::kReport);
  const size_t ip = 14;
  // A header change with the checksum made right again: only the rule refuses it.
  auto with = [&](size_t at, uint8_t value) {
    Bytes f = good;
    f[ip + at] = value;
    f[ip + 10] = f[ip + 11] = 0;
    testing::PutChecksum(f, ip + 10, Rfc1071Sum(Bytes(f.begin() + ip, f.begin() + ip + 24)));
    return f;
  };
  EXPECT_EQ(Mcast(with(0, 0x56)).kind, Kind::kNone) << "version 5";
  EXPECT_EQ(Mcast(with(0, 0x44)).kind, Kind::kNone) << "IHL 4";
  EXPECT_EQ(Mcast(with(0, 0x4f)).kind, Kind::kNone) << "IHL 15: past the packet";
  EXPECT_EQ(Mcast(with(3, 20)).kind, Kind::kNone) << "total length below the header";
  EXPECT_EQ(Mcast(with(3, 23)).kind, Kind::kNone) << "total length inside the header";
  EXPECT_EQ(Mcast(with(3, 33)).kind, Kind::kNone) << "total length past the bytes";
  EXPECT_EQ(Mcast(with(6, 0x20)).kind, Kind::kNone) << "more fragments";
  EXPECT_EQ(Mcast(with(7, 0x01)).kind, Kind::kNone) << "a fragment offset";
  EXPECT_EQ(Mcast(with(6, 0x40)).kind, Kind::kReport) << "don't fragment is fine";
  EXPECT_EQ(Mcast(with(9, 17)).kind, Kind::kNone) << "UDP";
  EXPECT_EQ(Mcast(with(8, 64)).kind, Kind::kReport) << "TTL not checked";
  Bytes bad_ip = good;
  bad_ip[ip + 11] ^= 1;
  EXPECT_EQ(Mcast(bad_ip).kind, Kind::kNone) << "header checksum";
  Bytes bad_igmp = good;
  bad_igmp[ip + 24 + 3] ^= 0x10;
  EXPECT_EQ(Mcast(bad_igmp).kind, Kind::kNone) << "IGMP checksum";
  Bytes group_flipped = good;
  group_flipped[ip + 24 + 7] ^= 1;
  EXPECT_EQ(Mcast(group_flipped).kind, Kind::kNone) << "IGMP checksum of a changed group";

  Bytes padded = good;
  padded.resize(60, 0);
  EXPECT_EQ(Mcast(padded), Mcast(good)) << "Ethernet padding behind the packet";
  padded.resize(64, 0xee);
  EXPECT_EQ(Mcast(padded), Mcast(good)) << "whatever the padding's bytes";
  const Bytes no_alert = Ethernet(0x0800, Packet4("10.0.0.5", "239.1.2.3", 2, [] {
    Bytes igmp = IgmpMessage(0x16, 0, "239.1.2.3");
    testing::PutChecksum(igmp, 2, Rfc1071Sum(igmp));
    return igmp;
  }(), false));
  EXPECT_EQ(Mcast(no_alert).records, std::vector<McastRecord>{Join("239.1.2.3")})
      << "no router alert: accepted";
  EXPECT_EQ(Mcast(Ethernet(0x86dd, Bytes(good.begin() + 14, good.end()))).kind, Kind::kNone)
      << "IPv4 bytes under the IPv6 EtherType";
}

// --- MLD

TEST(McastMessageTest, MldMessages) {
  McastMessage m = Mcast(MldFrame(Mldv1(131, "ff05::1:3"), "fe80::5", "ff05::1:3"));
  EXPECT_EQ(m.kind, Kind::kReport);
  EXPECT_TRUE(m.v6);
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.source, Group("fe80::5"));
  EXPECT_EQ(m.records, std::vector<McastRecord>{Join("ff05::1:3")});
  EXPECT_EQ(m.query_group, (McastGroup{true, {}})) << "a report's: all zero, of its family";
  m = Mcast(MldFrame(Mldv1(132, "ff05::1:3"), "fe80::5", "ff02::2"));
  EXPECT_EQ(m.records, std::vector<McastRecord>{Leave("ff05::1:3")});
  m = Mcast(MldFrame(Mldv1(130, "::"), "fe80::1", "ff02::1"));
  EXPECT_EQ(m.kind, Kind::kQuery);
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.query_group, (McastGroup{true, {}}));
  m = Mcast(MldFrame(Mldv2Query("ff05::1:3", {"2001:db8::7"}), "fe80::1", "ff05::1:3"));
  EXPECT_EQ(m.version, 2);
  EXPECT_EQ(m.query_group, Group("ff05::1:3"));
  m = Mcast(MldFrame(Mldv2Query("::"), "::", "ff02::1"));
  EXPECT_EQ(m.kind, Kind::kQuery) << "a querier without an address";
  EXPECT_TRUE(m.from_unspecified);
  for (size_t len : {25, 26, 27}) {
    Bytes q = Mldv2Query("::");
    q.resize(len);
    EXPECT_EQ(Mcast(MldFrame(q)).kind, Kind::kNone) << len;
  }
  Bytes sources = Mldv2Query("ff05::1:3", {"2001:db8::7"});
  Put16(sources, 26, 2);
  EXPECT_EQ(Mcast(MldFrame(sources)).kind, Kind::kNone) << "a source count past the end";
  EXPECT_EQ(Mcast(MldFrame(Mldv1(130, "2001:db8::1"))).kind, Kind::kNone)
      << "a query for no multicast group";
  Bytes short_report = Mldv1(131, "ff05::1:3");
  short_report.resize(23);
  EXPECT_EQ(Mcast(MldFrame(short_report)).kind, Kind::kNone);

  m = Mcast(MldFrame(Mldv2Report({{4, "ff05::1:3"},
                                  {3, "ff0e::7"},
                                  {5, "ff3e::8000:1", {"2001:db8::7"}},
                                  {4, "ff02::1"},
                                  {4, "ff01::9"},
                                  {1, "ff05::2", {}, 1}}),
                     "::"));
  EXPECT_EQ(m.kind, Kind::kReport);
  EXPECT_EQ(m.version, 2);
  EXPECT_TRUE(m.from_unspecified) << "reports during DAD come from ::";
  EXPECT_EQ(m.records, (std::vector<McastRecord>{Join("ff05::1:3"), Leave("ff0e::7"),
                                                 Join("ff3e::8000:1"), Leave("ff05::2")}))
      << "all-nodes and interface-local groups left out";
  Bytes more = Mldv2Report({{4, "ff05::1:3"}});
  Put16(more, 6, 2);
  EXPECT_EQ(Mcast(MldFrame(more)).kind, Kind::kNone);

  // RFC 3810 5.1.14, 5.2.13: from a link-local address or ::, nothing else.
  EXPECT_EQ(Mcast(MldFrame(Mldv1(131, "ff05::1:3"), "2001:db8::5")).kind, Kind::kNone);
  EXPECT_EQ(Mcast(MldFrame(Mldv2Query("::"), "2001:db8::1")).kind, Kind::kNone);
  EXPECT_EQ(Mcast(MldFrame(Mldv1(131, "ff05::1:3"), "fec0::5")).kind, Kind::kNone);
  EXPECT_EQ(Mcast(MldFrame(Mldv1(131, "ff05::1:3"), "febf::5")).kind, Kind::kReport);
  EXPECT_EQ(Mcast(MldFrame(Mldv1(131, "ff05::1:3"), "::1")).kind, Kind::kNone);
}

TEST(McastMessageTest, Ipv6HeaderRules) {
  const Bytes icmp = Mldv1(131, "ff05::1:3");
  EXPECT_EQ(Mcast(MldFrame(icmp, "fe80::5", "ff05::1:3", {})).kind, Kind::kReport)
      << "no extension header";
  EXPECT_EQ(Mcast(MldFrame(icmp, "fe80::5", "ff05::1:3", {0, 60, 43, 60})).kind,
            Kind::kReport);
  EXPECT_EQ(Mcast(MldFrame(icmp, "fe80::5", "ff05::1:3", std::vector<uint8_t>(8, 60))).kind,
            Kind::kReport);
  EXPECT_EQ(Mcast(MldFrame(icmp, "fe80::5", "ff05::1:3", std::vector<uint8_t>(9, 60))).kind,
            Kind::kNone)
      << "a ninth extension header is not followed";
  EXPECT_EQ(Mcast(MldFrame(icmp, "fe80::5", "ff05::1:3", {0, 44})).kind, Kind::kNone)
      << "a fragment";
  EXPECT_EQ(Mcast(MldFrame(icmp, "fe80::5", "ff05::1:3", {0, 59})).kind, Kind::kNone)
      << "no next header";

  const Bytes good = MldFrame(icmp);
  Bytes bad_sum = good;
  bad_sum[14 + 48 + 2] ^= 1;
  EXPECT_EQ(Mcast(bad_sum).kind, Kind::kNone) << "ICMPv6 checksum";
  Bytes other_dst = good;
  other_dst[14 + 24 + 15] ^= 1;
  EXPECT_EQ(Mcast(other_dst).kind, Kind::kNone) << "the pseudo-header's destination";
  Bytes version = good;
  version[14] = 0x40;
  EXPECT_EQ(Mcast(version).kind, Kind::kNone);
  Bytes longer = good;
  Put16(longer, 14 + 4, static_cast<uint16_t>(good.size() - 14 - 40 + 1));
  EXPECT_EQ(Mcast(longer).kind, Kind::kNone) << "payload length past the bytes";
  Bytes jumbo = good;
  Put16(jumbo, 14 + 4, 0);
  EXPECT_EQ(Mcast(jumbo).kind, Kind::kNone) << "payload length 0";
  Bytes trailing = good;
  trailing.resize(good.size() + 6, 0x55);
  EXPECT_EQ(Mcast(trailing), Mcast(good)) << "bytes behind the payload ignored";
  Bytes hop_limit = good;
  hop_limit[14 + 7] = 255;
  EXPECT_EQ(Mcast(hop_limit), Mcast(good)) << "MLD's hop limit is not checked";
}

// --- tags, truncation

TEST(SnoopTagsTest, OneTagSkippedStacksRefused) {
  const std::vector<Bytes> frames = {
      IgmpFrame(IgmpMessage(0x16, 0, "239.1.2.3")), MldFrame(Mldv1(131, "ff05::1:3")),
      UdpFrame("0.0.0.0", "255.255.255.255", 68, 67,
               Bootp(1, "0.0.0.0", "0.0.0.0", Concat({Option(53, {1}), {255}}))),
      ArpFrame(1, "10.0.0.5", "10.0.0.1"),
      NdFrame(NdMessage(136, "2001:db8::5"), "fe80::5")};
  for (const Bytes& f : frames) {
    ASSERT_TRUE(AnyParses(f));
    EXPECT_EQ(Mcast(Tagged(f)), Mcast(f));
    EXPECT_EQ(Dhcp(Tagged(f)), Dhcp(f));
    EXPECT_EQ(ClaimOf(Tagged(f)), ClaimOf(f));
    EXPECT_FALSE(AnyParses(Tagged(Tagged(f)))) << "two 802.1Q tags";
    EXPECT_FALSE(AnyParses(Tagged(f, 0x88a8))) << "802.1ad";
    EXPECT_FALSE(AnyParses(Tagged(f, 0x9100))) << "old QinQ";
    EXPECT_FALSE(AnyParses(Tagged(Tagged(f), 0x88a8))) << "802.1ad outside 802.1Q";
    EXPECT_FALSE(AnyParses(Tagged(Tagged(f, 0x88a8)))) << "802.1ad inside 802.1Q";
    ExpectCutsRefused(Tagged(f));
  }
}

// --- DHCP

Bytes DhcpRequest(const Bytes& options, const char* ciaddr = "0.0.0.0") {
  return UdpFrame("0.0.0.0", "255.255.255.255", 68, 67, Bootp(1, ciaddr, "0.0.0.0", options));
}
Bytes DhcpReply(const Bytes& options) {
  return UdpFrame("10.0.0.1", "255.255.255.255", 67, 68,
                  Bootp(2, "0.0.0.0", "10.0.0.50", options));
}
const Bytes kAckOptions = Concat({Option(53, {5}), Option(54, {10, 0, 0, 1}),
                                  Option(51, {0, 0, 0x0e, 0x10}), {255}});

TEST(DhcpMessageTest, ClientAndServerMessages) {
  std::optional<DhcpMessage> d = Dhcp(DhcpRequest(Concat({Option(53, {1}), {255}})));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->type, 1);
  EXPECT_FALSE(d->reply);
  EXPECT_EQ(d->client_ip, 0u);
  EXPECT_EQ(d->your_ip, 0u);
  EXPECT_EQ(d->server_id, 0u);
  EXPECT_EQ(d->lease_seconds, 0u);
  EXPECT_EQ(d->client_mac, kGuestKey);

  d = Dhcp(DhcpReply(kAckOptions));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->type, 5);
  EXPECT_TRUE(d->reply);
  EXPECT_EQ(d->your_ip, Ip4("10.0.0.50"));
  EXPECT_EQ(d->server_id, Ip4("10.0.0.1"));
  EXPECT_EQ(d->lease_seconds, 3600u);
  EXPECT_EQ(d->client_mac, kGuestKey);

  d = Dhcp(DhcpRequest(Concat({Option(53, {7}), Option(54, {10, 0, 0, 1}), {255}}),
                       "10.0.0.50"));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->type, 7);
  EXPECT_EQ(d->client_ip, Ip4("10.0.0.50"));
  d = Dhcp(DhcpReply(Concat({Option(53, {5}), Option(51, {0xff, 0xff, 0xff, 0xff})})));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->lease_seconds, 0xffffffffu) << "infinite; and no end option: the bytes end";
  for (uint8_t type = 1; type <= 8; ++type) {
    EXPECT_TRUE(Dhcp(DhcpRequest(Concat({Option(53, {type}), {255}}))).has_value()) << +type;
  }
}

TEST(DhcpMessageTest, PortsAndOps) {
  const Bytes request = Bootp(1, "0.0.0.0", "0.0.0.0", Concat({Option(53, {3}), {255}}));
  const Bytes reply = Bootp(2, "0.0.0.0", "10.0.0.50", kAckOptions);
  EXPECT_TRUE(Dhcp(UdpFrame("0.0.0.0", "10.0.0.1", 68, 67, request)).has_value());
  EXPECT_TRUE(Dhcp(UdpFrame("10.0.0.1", "10.0.0.50", 67, 68, reply)).has_value());
  EXPECT_FALSE(Dhcp(UdpFrame("10.0.0.1", "10.0.0.2", 67, 67, request)).has_value())
      << "a relay's";
  EXPECT_FALSE(Dhcp(UdpFrame("10.0.0.1", "10.0.0.2", 67, 67, reply)).has_value());
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "10.0.0.1", 67, 68, request)).has_value())
      << "a request from the server port";
  EXPECT_FALSE(Dhcp(UdpFrame("10.0.0.1", "10.0.0.50", 68, 67, reply)).has_value())
      << "a reply from the client port";
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "10.0.0.1", 68, 68, request)).has_value());
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "10.0.0.1", 1068, 67, request)).has_value());
  Bytes op3 = request;
  op3[0] = 3;
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "10.0.0.1", 68, 67, op3)).has_value());
  Bytes udp(8);
  Put16(udp, 0, 68);
  Put16(udp, 2, 67);
  Put16(udp, 4, static_cast<uint16_t>(8 + request.size()));
  EXPECT_FALSE(Dhcp(Ethernet(0x0800, Packet4("0.0.0.0", "10.0.0.1", 6, Concat({udp, request}),
                                             false)))
                   .has_value())
      << "TCP";
}

TEST(DhcpMessageTest, FixedPartAndCookie) {
  const Bytes options = Concat({Option(53, {1}), {255}});
  Bytes b = Bootp(1, "0.0.0.0", "0.0.0.0", options);
  b[1] = 6;  // IEEE 802 hardware type
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "255.255.255.255", 68, 67, b)).has_value());
  b = Bootp(1, "0.0.0.0", "0.0.0.0", options);
  b[2] = 16;
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "255.255.255.255", 68, 67, b)).has_value());
  b = Bootp(1, "0.0.0.0", "0.0.0.0", options);
  b[239] = 0x64;
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "255.255.255.255", 68, 67, b)).has_value())
      << "not the magic cookie: plain BOOTP";
  b = Bootp(1, "0.0.0.0", "0.0.0.0", {});
  b.resize(239);
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "255.255.255.255", 68, 67, b)).has_value())
      << "shorter than the fixed part and cookie";
}

TEST(DhcpMessageTest, Options) {
  const Bytes pads = Concat({Bytes{0, 0, 0}, Option(12, {'v', 'm'}), Bytes{0},
                             Option(53, {3}), Option(50, {10, 0, 0, 50}), Bytes{255},
                             Option(53, {99}), Bytes{1, 200}});
  std::optional<DhcpMessage> d = Dhcp(DhcpRequest(pads));
  ASSERT_TRUE(d.has_value()) << "pads and unknown options skipped, nothing read after end";
  EXPECT_EQ(d->type, 3);

  auto refused = [](const Bytes& options) { return !Dhcp(DhcpRequest(options)).has_value(); };
  EXPECT_TRUE(refused({255})) << "no option 53";
  EXPECT_TRUE(refused(Concat({Option(53, {1, 0}), {255}}))) << "53 of two bytes";
  EXPECT_TRUE(refused(Concat({Option(53, {}), {255}})));
  EXPECT_TRUE(refused(Concat({Option(53, {0}), {255}}))) << "type 0";
  EXPECT_TRUE(refused(Concat({Option(53, {9}), {255}}))) << "type 9";
  EXPECT_TRUE(refused(Concat({Option(53, {1}), Option(53, {1}), {255}}))) << "53 twice";
  EXPECT_TRUE(refused(Concat({Option(53, {5}), Option(51, {0, 0, 1}), {255}})));
  EXPECT_TRUE(refused(Concat({Option(53, {5}), Option(51, {0, 0, 0, 1}),
                              Option(51, {0, 0, 0, 2}), {255}})));
  EXPECT_TRUE(refused(Concat({Option(53, {5}), Option(54, {10, 0, 0, 1, 0}), {255}})));
  EXPECT_TRUE(refused(Concat({Option(53, {5}), Option(54, {10, 0, 0, 1}),
                              Option(54, {10, 0, 0, 2}), {255}})));
  EXPECT_TRUE(refused(Concat({Option(53, {1}), {12}}))) << "a code without its length";
  EXPECT_TRUE(refused(Concat({Option(53, {1}), {12, 5, 'v', 'm'}}))) << "data cut short";
  // Option overload (52): sname and file are not looked into.
  Bytes overloaded = Bootp(1, "0.0.0.0", "0.0.0.0", Concat({Option(52, {1}), {255}}));
  const Bytes in_file = Concat({Option(53, {1}), {255}});
  std::copy(in_file.begin(), in_file.end(), overloaded.begin() + 108);
  EXPECT_FALSE(Dhcp(UdpFrame("0.0.0.0", "255.255.255.255", 68, 67, overloaded)).has_value());
}

TEST(DhcpMessageTest, UdpAndIpRules) {
  const Bytes good = DhcpReply(kAckOptions);
  ASSERT_TRUE(Dhcp(good).has_value());
  const size_t udp = 14 + 20;
  Bytes checksum = good;
  Put16(checksum, udp + 6, 0x15c0);
  EXPECT_EQ(Dhcp(checksum), Dhcp(good)) << "the UDP checksum is not verified";
  Bytes longer = good;
  Put16(longer, udp + 4, static_cast<uint16_t>(good.size() - udp + 1));
  EXPECT_FALSE(Dhcp(longer).has_value()) << "UDP length past the IP payload";
  Bytes shorter = good;
  Put16(shorter, udp + 4, 8 + 239);
  EXPECT_FALSE(Dhcp(shorter).has_value()) << "UDP length inside the cookie";
  Put16(shorter, udp + 4, 4);
  EXPECT_FALSE(Dhcp(shorter).has_value()) << "UDP length below its header";
  // A UDP length short of the IP payload: a receiver reads up to it.
  Bytes inner = Bootp(2, "0.0.0.0", "10.0.0.50", kAckOptions);
  Bytes dgram(8);
  Put16(dgram, 0, 67);
  Put16(dgram, 2, 68);
  Put16(dgram, 4, static_cast<uint16_t>(8 + inner.size()));
  inner.resize(inner.size() + 9, 0x35);
  EXPECT_EQ(Dhcp(Ethernet(0x0800, Packet4("10.0.0.1", "255.255.255.255", 17,
                                          Concat({dgram, inner}), false))),
            Dhcp(good));
  Bytes ip_sum = good;
  ip_sum[14 + 10] ^= 0x80;
  EXPECT_FALSE(Dhcp(ip_sum).has_value()) << "the IP header checksum is verified";
  Bytes fragment = good;
  fragment[14 + 6] |= 0x20;
  fragment[14 + 10] = fragment[14 + 11] = 0;
  testing::PutChecksum(fragment, 14 + 10,
                       Rfc1071Sum(Bytes(fragment.begin() + 14, fragment.begin() + 34)));
  EXPECT_FALSE(Dhcp(fragment).has_value()) << "a first fragment";
  Bytes padded = good;
  padded.resize(good.size() + 20, 0);
  EXPECT_EQ(Dhcp(padded), Dhcp(good));
}

// --- address claims

TEST(AddressClaimTest, Arp) {
  std::optional<AddressClaim> c = ClaimOf(ArpFrame(1, "10.0.0.5", "10.0.0.1"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->address, Prefix("10.0.0.5"));
  EXPECT_EQ(c->kind, Claim::kArp);
  EXPECT_EQ(c->link_mac, kGuestKey);
  EXPECT_EQ(c->eth_src, kGuestKey);
  c = ClaimOf(ArpFrame(2, "10.0.0.5", "10.0.0.1"));
  ASSERT_TRUE(c.has_value()) << "a reply";
  EXPECT_EQ(c->kind, Claim::kArp);
  c = ClaimOf(ArpFrame(1, "0.0.0.0", "10.0.0.9"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, Claim::kArpProbe);
  EXPECT_EQ(c->address, Prefix("10.0.0.9"));
  Bytes other_sha = ArpFrame(1, "10.0.0.5", "10.0.0.1");
  std::memcpy(other_sha.data() + 14 + 8, kOtherMac, 6);
  c = ClaimOf(other_sha);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->link_mac, kOtherKey) << "the sender hardware address, not the frame's";
  EXPECT_EQ(c->eth_src, kGuestKey);
  Bytes padded = ArpFrame(1, "10.0.0.5", "10.0.0.1");
  padded.resize(60, 0);
  EXPECT_EQ(ClaimOf(padded), ClaimOf(ArpFrame(1, "10.0.0.5", "10.0.0.1")));

  for (size_t at : {0, 1, 2, 3, 4, 5, 6, 7}) {
    Bytes f = ArpFrame(1, "10.0.0.5", "10.0.0.1");
    f[14 + at] ^= 0x40;
    EXPECT_FALSE(ClaimOf(f).has_value()) << "hardware/protocol type, lengths or op: " << at;
  }
  for (const char* bad : {"255.255.255.255", "127.0.0.1", "127.255.0.9", "224.0.0.5",
                          "239.1.2.3", "240.0.0.1", "255.255.255.254"}) {
    EXPECT_FALSE(ClaimOf(ArpFrame(1, bad, "10.0.0.1")).has_value()) << bad;
    EXPECT_FALSE(ClaimOf(ArpFrame(1, "0.0.0.0", bad)).has_value()) << "probe of " << bad;
  }
  EXPECT_FALSE(ClaimOf(ArpFrame(1, "0.0.0.0", "0.0.0.0")).has_value());
  EXPECT_TRUE(ClaimOf(ArpFrame(1, "223.255.255.255", "10.0.0.1")).has_value());
  EXPECT_TRUE(ClaimOf(ArpFrame(1, "126.0.0.1", "10.0.0.1")).has_value());
}

const Bytes kSourceOption = LinkLayerOption(1, kOtherMac);
const Bytes kTargetOption = LinkLayerOption(2, kOtherMac);

TEST(AddressClaimTest, SolicitationsAndAdvertisements) {
  std::optional<AddressClaim> c =
      ClaimOf(NdFrame(NdMessage(135, "2001:db8::5"), "::", "ff02::1:ff00:5"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, Claim::kDad);
  EXPECT_EQ(c->address, Prefix("2001:db8::5"));
  EXPECT_EQ(c->link_mac, kGuestKey) << "no option: the Ethernet source";
  const Bytes nonce = {14, 1, 1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ClaimOf(NdFrame(NdMessage(135, "2001:db8::5", nonce), "::")), c)
      << "DAD's nonce option (RFC 7527) skipped";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(135, "2001:db8::5", kSourceOption), "::")))
      << "DAD with a source link-layer address (RFC 4861 7.1.1)";

  c = ClaimOf(NdFrame(NdMessage(135, "2001:db8::1", kSourceOption), "fe80::5"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, Claim::kNeighbour);
  EXPECT_EQ(c->address, Prefix("fe80::5")) << "a solicitation claims its source";
  EXPECT_EQ(c->link_mac, kOtherKey);
  EXPECT_EQ(c->eth_src, kGuestKey);
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(135, "ff02::1", kSourceOption), "fe80::5")))
      << "a multicast target";

  c = ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", kTargetOption, 0x20), "fe80::5"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, Claim::kNeighbour);
  EXPECT_EQ(c->address, Prefix("2001:db8::5"));
  EXPECT_EQ(c->link_mac, kOtherKey);
  c = ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", kSourceOption, 0x60), "fe80::5",
                      "fe80::1"));
  ASSERT_TRUE(c.has_value()) << "solicited, unicast; a source option is not a target one";
  EXPECT_EQ(c->link_mac, kGuestKey);
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", {}, 0x40), "fe80::5", "ff02::1")))
      << "solicited yet multicast (RFC 4861 7.1.2)";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(136, "ff05::1"), "fe80::5")));
  for (const char* bad : {"::", "::1", "ff02::1:ff00:5"}) {
    EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(136, bad), "fe80::5"))) << bad;
    EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(135, bad), "::"))) << bad;
  }
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(135, "2001:db8::1"), "::1")));
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(135, "2001:db8::1"), "ff02::5")));

  c = ClaimOf(NdFrame(NdMessage(133, nullptr, kSourceOption), "fe80::5", "ff02::2"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, Claim::kNeighbour);
  EXPECT_EQ(c->address, Prefix("fe80::5"));
  EXPECT_EQ(c->link_mac, kOtherKey);
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(133, nullptr), "::", "ff02::2")))
      << "a router solicitation from :: claims nothing";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(134, "::"), "fe80::5"))) << "an advertisement";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(137, "2001:db8::5"), "fe80::5"))) << "a redirect";
}

TEST(AddressClaimTest, NeighbourDiscoveryRules) {
  const Bytes na = NdMessage(136, "2001:db8::5", kTargetOption);
  ASSERT_TRUE(ClaimOf(NdFrame(na, "fe80::5")));
  EXPECT_FALSE(ClaimOf(NdFrame(na, "fe80::5", "ff02::1", 254))) << "hop limit 254: routed in";
  EXPECT_FALSE(ClaimOf(NdFrame(na, "fe80::5", "ff02::1", 1)));
  Bytes code = na;
  code[1] = 1;
  EXPECT_FALSE(ClaimOf(NdFrame(code, "fe80::5"))) << "code 1";
  EXPECT_TRUE(ClaimOf(NdFrame(na, "fe80::5", "ff02::1", 255, {0, 60})))
      << "behind hop-by-hop and destination options";
  EXPECT_FALSE(ClaimOf(NdFrame(na, "fe80::5", "ff02::1", 255, {44}))) << "a fragment";
  Bytes bad_sum = NdFrame(na, "fe80::5");
  bad_sum[14 + 40 + 3] ^= 4;
  EXPECT_FALSE(ClaimOf(bad_sum)) << "ICMPv6 checksum";
  Bytes cut = NdMessage(136, "2001:db8::5");
  cut.resize(23);
  EXPECT_FALSE(ClaimOf(NdFrame(cut, "fe80::5"))) << "target cut short";

  const Bytes unknown = {24, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  std::optional<AddressClaim> c =
      ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", Concat({unknown, kTargetOption})),
                      "fe80::5"));
  ASSERT_TRUE(c.has_value()) << "an unknown option stepped over";
  EXPECT_EQ(c->link_mac, kOtherKey);
  c = ClaimOf(NdFrame(NdMessage(136, "2001:db8::5",
                                Concat({kTargetOption, LinkLayerOption(2, kGuestMac)})),
                      "fe80::5"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->link_mac, kOtherKey) << "the first of two, as Linux takes it";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", {2, 0, 0, 0, 0, 0, 0, 0}),
                               "fe80::5")))
      << "an option of length 0";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(135, "2001:db8::5", {14, 0, 0, 0, 0, 0, 0, 0}), "::")))
      << "an option of length 0 of a type not read: the walk would not move on";
  Bytes past = kTargetOption;
  past[1] = 2;
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", past), "fe80::5")))
      << "an option past the end";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", {2}), "fe80::5")))
      << "an option's length past the end";
  Bytes wide = Concat({kTargetOption, Bytes(8)});
  wide[1] = 2;
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(136, "2001:db8::5", wide), "fe80::5")))
      << "a 16-byte link-layer address option: no Ethernet address";
  EXPECT_FALSE(ClaimOf(NdFrame(NdMessage(133, nullptr, {1, 1, 0, 0}), "fe80::5")))
      << "a router solicitation's option cut";
}

// --- every message cut short, at every length

TEST(SnoopParsersTest, NothingReadUntilTheWholeMessageIsThere) {
  const std::vector<Bytes> frames = {
      IgmpFrame(IgmpMessage(0x16, 0, "239.1.2.3")),
      IgmpFrame(IgmpMessage(0x11, 0, "0.0.0.0")),
      IgmpFrame(Igmpv3Query("232.1.1.1", {"10.0.0.7"})),
      IgmpFrame(Igmpv3Report({{4, "239.0.0.1"}, {5, "232.0.0.1", {"10.0.0.7"}, 1}})),
      MldFrame(Mldv1(131, "ff05::1:3")),
      MldFrame(Mldv2Query("ff05::1:3", {"2001:db8::7"})),
      MldFrame(Mldv2Report({{4, "ff05::1:3"}, {5, "ff05::1:4", {"2001:db8::7"}, 1}})),
      DhcpReply(kAckOptions),
      DhcpRequest(Concat({Option(53, {1}), {255}})),
      ArpFrame(1, "10.0.0.5", "10.0.0.1"),
      NdFrame(NdMessage(135, "2001:db8::5"), "::"),
      NdFrame(NdMessage(136, "2001:db8::5", kTargetOption), "fe80::5", "ff02::1", 255, {0}),
      NdFrame(NdMessage(133, nullptr, kSourceOption), "fe80::5"),
  };
  for (const Bytes& f : frames) {
    ASSERT_TRUE(AnyParses(f));
    ExpectCutsRefused(f);
  }
}

// --- frames real implementations sent (tests/snoop_captures.h)

TEST(SnoopCapturesTest, LinuxReports) {
  const struct {
    const char* hex;
    uint8_t version;
    const char* source;
    std::vector<McastRecord> records;
  } reports[] = {
      {kIgmpv3Join, 3, "10.9.0.2", {Join("232.1.1.1"), Join("239.1.2.3")}},
      {kIgmpv3Current, 3, "10.9.0.2", {Join("232.1.1.1"), Join("239.1.2.3")}},
      // A block of old sources still joins, group-level.
      {kIgmpv3Leave, 3, "10.9.0.2", {Join("232.1.1.1"), Leave("239.1.2.3")}},
      {kIgmpv3LinkLocalOnly, 3, "10.9.0.1", {}},
      {kIgmpv2Report, 2, "10.9.0.2", {Join("239.4.5.6")}},
      {kIgmpv2Leave, 2, "10.9.0.2", {Leave("239.4.5.6")}},
      {kMldv2FromUnspecified, 2, "::",
       {Join("ff02::1:ff38:ba51"), Join("ff02::6a"), Join("ff02::1:ff00:1")}},
      {kMldv2Join, 2, "fe80::b02b:12ff:fe07:63c", {Join("ff05::1:3")}},
      {kMldv2Leave, 2, "fe80::b02b:12ff:fe07:63c", {Leave("ff05::1:3")}},
      {kMldv1Report, 1, "fe80::b02b:12ff:fe07:63c", {Join("ff05::4:5:6")}},
      {kMldv1Done, 1, "fe80::b02b:12ff:fe07:63c", {Leave("ff05::4:5:6")}},
  };
  for (const auto& want : reports) {
    const McastMessage m = Mcast(FromHex(want.hex));
    const McastGroup source = Group(want.source);
    EXPECT_EQ(m.kind, Kind::kReport) << want.source;
    EXPECT_EQ(m.v6, source.v6);
    EXPECT_EQ(m.version, want.version) << want.source;
    EXPECT_EQ(m.source, source);
    EXPECT_EQ(m.from_unspecified, (source == McastGroup{source.v6, {}}));
    EXPECT_EQ(m.records, want.records);
  }
}

TEST(SnoopCapturesTest, LinuxBridgeQueries) {
  const struct {
    const char* hex;
    uint8_t version;
    const char* source;
    const char* group;
  } queries[] = {
      // The bridge's querier sends IGMP from 0.0.0.0.
      {kIgmpv3GeneralQuery, 3, "0.0.0.0", "0.0.0.0"},
      {kIgmpv3GroupQuery, 3, "0.0.0.0", "239.1.2.3"},
      {kIgmpv3SourceQuery, 3, "0.0.0.0", "232.1.1.1"},
      {kIgmpv2GeneralQuery, 2, "0.0.0.0", "0.0.0.0"},
      {kIgmpv2GroupQuery, 2, "0.0.0.0", "239.4.5.6"},
      {kMldv2GeneralQuery, 2, "fe80::585a:3bff:fe38:ba51", "::"},
      {kMldv1GeneralQuery, 1, "fe80::585a:3bff:fe38:ba51", "::"},
  };
  for (const auto& want : queries) {
    const McastMessage m = Mcast(FromHex(want.hex));
    EXPECT_EQ(m.kind, Kind::kQuery) << want.group;
    EXPECT_EQ(m.version, want.version) << want.group;
    EXPECT_EQ(m.source, Group(want.source));
    EXPECT_EQ(m.from_unspecified, !Group(want.source).v6);
    EXPECT_EQ(m.query_group, Group(want.group));
    EXPECT_TRUE(m.records.empty());
  }
  EXPECT_EQ(Mcast(FromHex(kMldv2GroupQueryFromGlobal)).kind, Kind::kNone)
      << "a query from a global address: hosts discard it";
}

TEST(SnoopCapturesTest, LinuxNeighbourDiscoveryAndArp) {
  const uint64_t host = Key("b2:2b:12:07:06:3c"), bridge = Key("5a:5a:3b:38:ba:51");
  const struct {
    const char* hex;
    Claim kind;
    const char* address;
    uint64_t link_mac, eth_src;
  } claims[] = {
      {kNdDad, Claim::kDad, "2001:db8:9::2", host, host},
      {kNdUnsolicitedNa, Claim::kNeighbour, "2001:db8:9::2", host, host},
      {kNdRouterSolicitation, Claim::kNeighbour, "fe80::585a:3bff:fe38:ba51", bridge, bridge},
      {kNdSolicitation, Claim::kNeighbour, "2001:db8:9::2", host, host},
      {kNdSolicitedNaTlla, Claim::kNeighbour, "2001:db8:9::1", bridge, bridge},
      {kNdSolicitedNa, Claim::kNeighbour, "2001:db8:9::2", host, host},
      {kArpRequest, Claim::kArp, "10.9.0.2", host, host},
      {kArpReply, Claim::kArp, "10.9.0.1", bridge, bridge},
      {kArpProbe, Claim::kArpProbe, "10.9.0.2", host, host},
      {kArpProbePadded, Claim::kArpProbe, "10.8.0.106", Key("82:78:d2:28:90:0e"),
       Key("82:78:d2:28:90:0e")},
  };
  for (const auto& want : claims) {
    const std::optional<AddressClaim> c = ClaimOf(FromHex(want.hex));
    ASSERT_TRUE(c.has_value()) << want.address;
    EXPECT_EQ(c->kind, want.kind) << want.address;
    EXPECT_EQ(c->address, Prefix(want.address));
    EXPECT_EQ(c->link_mac, want.link_mac) << want.address;
    EXPECT_EQ(c->eth_src, want.eth_src) << want.address;
  }
}

TEST(SnoopCapturesTest, BusyboxDhcp) {
  const uint64_t client = Key("82:78:d2:28:90:0e");
  const uint32_t leased = Ip4("10.8.0.106"), server = Ip4("10.8.0.1");
  const struct {
    const char* hex;
    DhcpMessage want;
  } messages[] = {
      {kDhcpDiscover, {1, false, 0, 0, 0, client, 0}},
      {kDhcpOffer, {2, true, 0, leased, server, client, 600}},
      {kDhcpRequest, {3, false, 0, 0, server, client, 0}},
      {kDhcpAck, {5, true, 0, leased, server, client, 600}},
      {kDhcpRenew, {3, false, leased, 0, 0, client, 0}},
      {kDhcpRenewAck, {5, true, leased, leased, server, client, 600}},
      {kDhcpRelease, {7, false, leased, 0, server, client, 0}},
  };
  for (const auto& m : messages) {
    const std::optional<DhcpMessage> d = Dhcp(FromHex(m.hex));
    ASSERT_TRUE(d.has_value()) << +m.want.type;
    EXPECT_EQ(*d, m.want) << +m.want.type;
  }
}

// Each capture is read by its own parser alone, and by none until all of it is there.
TEST(SnoopCapturesTest, OneParserEachAndCutsRefused) {
  const std::vector<const char*> mcast = {
      kIgmpv3Join, kIgmpv3Current, kIgmpv3Leave, kIgmpv3LinkLocalOnly, kIgmpv2Report,
      kIgmpv2Leave, kIgmpv3GeneralQuery, kIgmpv3GroupQuery, kIgmpv3SourceQuery,
      kIgmpv2GeneralQuery, kIgmpv2GroupQuery, kMldv2FromUnspecified, kMldv2Join, kMldv2Leave,
      kMldv1Report, kMldv1Done, kMldv2GeneralQuery, kMldv1GeneralQuery};
  const std::vector<const char*> claims = {
      kNdDad, kNdUnsolicitedNa, kNdRouterSolicitation, kNdSolicitation, kNdSolicitedNaTlla,
      kNdSolicitedNa, kArpRequest, kArpReply, kArpProbe};
  const std::vector<const char*> dhcp = {kDhcpDiscover, kDhcpOffer, kDhcpRequest, kDhcpAck,
                                         kDhcpRenew, kDhcpRenewAck, kDhcpRelease};
  for (const char* hex : mcast) {
    const Bytes f = FromHex(hex);
    EXPECT_NE(Mcast(f).kind, Kind::kNone);
    EXPECT_FALSE(Dhcp(f) || ClaimOf(f));
    EXPECT_EQ(Mcast(Tagged(f)), Mcast(f));
    ExpectCutsRefused(f);
  }
  for (const char* hex : claims) {
    const Bytes f = FromHex(hex);
    EXPECT_TRUE(ClaimOf(f) && Mcast(f).kind == Kind::kNone && !Dhcp(f));
    EXPECT_EQ(ClaimOf(Tagged(f)), ClaimOf(f));
    ExpectCutsRefused(f);
  }
  ExpectCutsRefused(FromHex(kArpProbePadded), 14 + 28);
  for (const char* hex : dhcp) {
    const Bytes f = FromHex(hex);
    EXPECT_TRUE(Dhcp(f) && Mcast(f).kind == Kind::kNone && !ClaimOf(f));
    EXPECT_EQ(Dhcp(Tagged(f)), Dhcp(f));
    ExpectCutsRefused(f);
  }
  EXPECT_FALSE(AnyParses(FromHex(kMldv2GroupQueryFromGlobal)));
}

// --- Announcements (switch/datapath/announce.h), counted by the workers

bool Announces(const Bytes& frame) {
  return IsAnnouncement(frame.data(), static_cast<uint32_t>(frame.size()));
}

TEST(AnnouncementTest, RarpGratuitousArpAndUnsolicitedAdvertisements) {
  // QEMU's announce (qemu_announce_self): a reverse request for its own MAC, padded.
  Bytes rarp(28);
  Put16(rarp, 0, 1);
  Put16(rarp, 2, 0x0800);
  rarp[4] = 6;
  rarp[5] = 4;
  Put16(rarp, 6, 3);
  rarp.resize(46);
  EXPECT_TRUE(Announces(Ethernet(0x8035, rarp)));
  EXPECT_TRUE(Announces(Ethernet(0x8035, rarp, {0x8100}))) << "tagged";
  EXPECT_TRUE(Announces(ArpFrame(1, "10.0.0.5", "10.0.0.5"))) << "gratuitous request";
  EXPECT_TRUE(Announces(ArpFrame(2, "10.0.0.5", "10.0.0.5"))) << "gratuitous reply";
  EXPECT_TRUE(Announces(FromHex(kNdUnsolicitedNa)));
  EXPECT_TRUE(Announces(NdFrame(NdMessage(136, "2001:db8::5", {}, 0x20), "2001:db8::5",
                                "ff02::1", 255, {0})))
      << "behind a hop-by-hop header";

  EXPECT_FALSE(Announces(FromHex(kArpRequest)));
  EXPECT_FALSE(Announces(FromHex(kArpReply)));
  EXPECT_FALSE(Announces(FromHex(kArpProbe))) << "a probe claims nothing yet";
  EXPECT_FALSE(Announces(FromHex(kNdSolicitedNaTlla)));
  EXPECT_FALSE(Announces(FromHex(kNdSolicitation)));
  EXPECT_FALSE(Announces(FromHex(kNdDad)));
  EXPECT_FALSE(Announces(FromHex(kIgmpv3Join)));
  Bytes ipv6_arp = FromHex(kArpRequest);
  ipv6_arp[14 + 3] = 0xdd;  // protocol type 0x86dd: not Ethernet/IPv4 ARP
  std::memcpy(ipv6_arp.data() + 14 + 24, ipv6_arp.data() + 14 + 14, 4);
  EXPECT_FALSE(Announces(ipv6_arp));
  Bytes v4_header = FromHex(kNdUnsolicitedNa);
  v4_header[14] = 0x40;
  EXPECT_FALSE(Announces(v4_header)) << "EtherType IPv6, version 4";
}

TEST(AnnouncementTest, EveryCutIsRead) {
  // An announcement cut short stays one only once its deciding bytes are all there: the
  // advertisement's 24 bytes (its option may go), the ARP message's 28.
  struct Case {
    Bytes frame;
    size_t needed;
  };
  const Bytes arp = ArpFrame(2, "10.0.0.5", "10.0.0.5");
  const Case cases[] = {{FromHex(kNdUnsolicitedNa), 14 + 40 + 24},
               {ArpFrame(1, "10.0.0.5", "10.0.0.5"), 14 + 28},
               {Ethernet(0x0806, Bytes(arp.begin() + 14, arp.end()), {0x8100}), 18 + 28}};
  for (const auto& c : cases) {
    for (size_t len = 0; len <= c.frame.size(); ++len) {
      const Bytes cut(c.frame.begin(), c.frame.begin() + static_cast<ptrdiff_t>(len));
      EXPECT_EQ(Announces(cut), len >= c.needed) << len << " of " << c.frame.size();
    }
  }
  EXPECT_TRUE(Announces(Bytes{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x35}))
      << "RARP is RARP at any length";
}

}  // namespace
}  // namespace hvswitch
