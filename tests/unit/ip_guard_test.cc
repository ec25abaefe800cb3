// IP anti-spoofing's frame checks (switch/datapath/ip_guard.h) on frames built byte by
// byte: IPv4 sources and DHCP clients, ARP senders and probes, IPv6 sources, DAD and MLD
// from ::, neighbour advertisement targets, extension headers, other EtherTypes, and
// every header cut short.
#include "switch/datapath/ip_guard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ports/port_spec.h"
#include "tests/ip_frames.h"

namespace hvswitch {
namespace {

using testing::Arp;
using testing::Bytes;
using testing::Icmpv6;
using testing::Ipv4;
using testing::Prefix;
using testing::Udp6;

IpBindings Bind(std::initializer_list<IpPrefix> prefixes) {
  IpBindings b;
  for (const IpPrefix& p : prefixes) b.Add(p);
  return b;
}

bool Allowed(const IpBindings& b, uint16_t ether_type, const Bytes& l3) {
  return IpAllowed(b, htons(ether_type), l3.data(), static_cast<uint32_t>(l3.size()));
}

const IpBindings kV4 = Bind({Prefix("10.0.0.5"), Prefix("192.168.7.0", 24)});
const IpBindings kBoth = Bind({Prefix("10.0.0.5"), Prefix("2001:db8::5"),
                               Prefix("fe80::", 64), Prefix("2001:db8:1::", 48)});

TEST(IpGuardTest, Ipv4SourcesMustBeBoundOrADhcpClients) {
  EXPECT_TRUE(Allowed(kV4, 0x0800, Ipv4("10.0.0.5")));
  EXPECT_TRUE(Allowed(kV4, 0x0800, Ipv4("192.168.7.200")));
  EXPECT_FALSE(Allowed(kV4, 0x0800, Ipv4("192.168.8.1")));
  EXPECT_FALSE(Allowed(kV4, 0x0800, Ipv4("10.0.0.6")));
  EXPECT_TRUE(Allowed(kV4, 0x0800, Ipv4("0.0.0.0", 17, 68, 67)));  // DHCPDISCOVER
  EXPECT_TRUE(Allowed(kV4, 0x0800, Ipv4("0.0.0.0", 17, 68, 67, 6))) << "with options";
  EXPECT_FALSE(Allowed(kV4, 0x0800, Ipv4("0.0.0.0", 17, 67, 68))) << "a server's";
  EXPECT_FALSE(Allowed(kV4, 0x0800, Ipv4("0.0.0.0", 6, 68, 67))) << "TCP";
  EXPECT_FALSE(Allowed(kV4, 0x0800, Ipv4("0.0.0.0", 17, 1000, 2000)));
  Bytes cut = Ipv4("10.0.0.5");
  cut.resize(19);
  EXPECT_FALSE(Allowed(kV4, 0x0800, cut)) << "shorter than an IPv4 header";
  Bytes dhcp_cut = Ipv4("0.0.0.0", 17, 68, 67, 15);  // 60-byte header
  dhcp_cut.resize(62);
  EXPECT_FALSE(Allowed(kV4, 0x0800, dhcp_cut)) << "ports past the end";
  EXPECT_FALSE(Allowed(IpBindings{}, 0x0800, Ipv4("10.0.0.5"))) << "no IPv4 binding";
}

TEST(IpGuardTest, ArpSendersMustBeBoundOrProbes) {
  EXPECT_TRUE(Allowed(kV4, 0x0806, Arp("10.0.0.5")));
  EXPECT_TRUE(Allowed(kV4, 0x0806, Arp("0.0.0.0")));  // RFC 5227 probe
  EXPECT_FALSE(Allowed(kV4, 0x0806, Arp("10.0.0.1"))) << "the gateway's address";
  Bytes odd = Arp("10.0.0.5");
  odd[5] = 16;  // not Ethernet/IPv4
  EXPECT_FALSE(Allowed(kV4, 0x0806, odd));
  Bytes cut = Arp("10.0.0.5");
  cut.resize(27);
  EXPECT_FALSE(Allowed(kV4, 0x0806, cut));
}

TEST(IpGuardTest, Ipv6SourcesNeighbourTargetsAndUnspecifiedSources) {
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Udp6("2001:db8::5")));
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Udp6("2001:db8:1:2::7")));
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Udp6("fe80::1234")));
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Udp6("2001:db8::6")));
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Udp6("::"))) << "UDP from ::";
  // Duplicate address detection and MLD reports come from ::.
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Icmpv6("::", 135, "2001:db8::77")));
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Icmpv6("::", 143, "::", {0})));  // behind hop-by-hop
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Icmpv6("::", 136, "2001:db8::5")));
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Icmpv6("::", 128))) << "an echo request";
  // Advertisements only for a bound target: the in-subnet hijack.
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::5")));
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::1")));
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::1", {60, 43})))
      << "behind destination options and routing headers";
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 135, "2001:db8::1"))) << "solicitation";
  Bytes na = Icmpv6("fe80::1", 136, "2001:db8::5");
  na.resize(na.size() - 1);  // target cut short
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, na));
  Bytes fragment = Icmpv6("::", 135, "2001:db8::5", {44});
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, fragment)) << "a fragment from :: shows no ICMPv6";
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Icmpv6("2001:db8::5", 136, "2001:db8::1", {44})))
      << "a fragment from a bound source: receivers drop fragmented ND";
  // Eight extension headers are followed; a ninth hides what follows: refused.
  const std::vector<uint8_t> eight(8, 60), nine(9, 60);
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::1", eight)));
  EXPECT_TRUE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::5", eight)));
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::1", nine)));
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::5", nine)))
      << "not followed to its end, whatever it carries";
  Bytes chain_cut = Icmpv6("2001:db8::5", 128, "::", {60, 60});
  chain_cut.resize(40 + 12);  // the second header past the bytes there are
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, chain_cut));
  EXPECT_FALSE(Allowed(kV4, 0x86dd, Udp6("2001:db8::5"))) << "no IPv6 binding";
  Bytes cut = Udp6("2001:db8::5");
  cut.resize(39);
  EXPECT_FALSE(Allowed(kBoth, 0x86dd, cut));
}

TEST(IpGuardTest, OtherEtherTypesPassButStackedTagsDoNot) {
  EXPECT_TRUE(Allowed(kV4, 0x88b5, Bytes(10)));
  EXPECT_TRUE(Allowed(kV4, 0x88cc, Bytes(0))) << "LLDP has no IP";
  EXPECT_FALSE(Allowed(kV4, 0x8100, Ipv4("10.0.0.5")));
  EXPECT_FALSE(Allowed(kV4, 0x88a8, Ipv4("10.0.0.5")));
  EXPECT_FALSE(Allowed(kV4, 0x9100, Ipv4("10.0.0.5")));
}

TEST(IpGuardTest, PrefixesIgnoreHostBitsAndLengthsZeroAndFull) {
  const IpBindings b = Bind({Prefix("10.1.2.3", 8), Prefix("2001:db8::1", 0)});
  EXPECT_TRUE(Allowed(b, 0x0800, Ipv4("10.200.0.1")));
  EXPECT_FALSE(Allowed(b, 0x0800, Ipv4("11.0.0.1")));
  EXPECT_TRUE(Allowed(b, 0x86dd, Udp6("2a00::1"))) << "::/0 binds every IPv6 address";
  const IpBindings all4 = Bind({Prefix("0.0.0.0", 0)});
  EXPECT_TRUE(Allowed(all4, 0x0800, Ipv4("203.0.113.9")));
  const IpBindings deep = Bind({Prefix("2001:db8::5:0", 112)});
  EXPECT_TRUE(Allowed(deep, 0x86dd, Udp6("2001:db8::5:ffff")));
  EXPECT_FALSE(Allowed(deep, 0x86dd, Udp6("2001:db8::6:0")));
}

// ip= in the --port grammar: a list whose commas continue it, both families, prefixes,
// written back as given.
TEST(IpGuardTest, PortSpecIpKey) {
  absl::StatusOr<PortSpec> spec =
      ParsePortSpec("v,type=vhost-user,path=/a,ip=10.0.0.5,2001:DB8::5,192.168.0.0/16,mtu=9000");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->guards.ips.size(), 3u);
  EXPECT_EQ(spec->guards.ips[1], Prefix("2001:db8::5"));
  EXPECT_EQ(spec->guards.ips[2], Prefix("192.168.0.0", 16));
  EXPECT_EQ(spec->mtu, 9000);
  EXPECT_EQ(spec->ToString(),
            "v,type=vhost-user,path=/a,mtu=9000,ip=10.0.0.5,2001:db8::5,192.168.0.0/16");
  EXPECT_EQ(ParsePortSpec(spec->ToString())->guards, spec->guards);
  for (const char* bad : {"ip=10.0.0.256", "ip=10.0.0.1/33", "ip=2001:db8::/129", "ip=host",
                          "ip=10.0.0.1/x", "ip=10.0.0.1,"}) {
    absl::StatusOr<PortSpec> refused =
        ParsePortSpec(std::string("v,type=memif,path=/b,") + bad);
    EXPECT_FALSE(refused.ok()) << bad;
    if (!refused.ok()) {
      EXPECT_NE(refused.status().message().find("ip: '"), std::string::npos) << bad;
    }
  }
  std::string many = "v,type=memif,path=/b,ip=10.0.0.1";
  for (int i = 2; i <= 17; ++i) many += ",10.0.0." + std::to_string(i);
  EXPECT_FALSE(ParsePortSpec(many).ok());
}

}  // namespace
}  // namespace hvswitch
