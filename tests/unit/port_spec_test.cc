#include "ports/port_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ports/guard_keys.h"
#include "ports/port.h"

namespace hvswitch {
namespace {

using ::testing::HasSubstr;

TEST(PortSpecTest, VhostUserWithEveryKey) {
  absl::StatusOr<PortSpec> spec =
      ParsePortSpec("vm1,type=vhost-user,path=/run/x/vm1.sock,client=1,queues=4");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "vm1");
  EXPECT_EQ(spec->type_name(), "vhost-user");
  EXPECT_EQ(spec->driver_keys.Text("path"), "/run/x/vm1.sock");
  EXPECT_TRUE(spec->driver_keys.Flag("client"));
  EXPECT_EQ(spec->driver_keys.Number("queues", 1), 4u);
  EXPECT_FALSE(spec->OwnsSocket());  // QEMU owns a client-mode socket
}

TEST(PortSpecTest, VhostUserDefaultsToServerWithOneQueue) {
  absl::StatusOr<PortSpec> spec = ParsePortSpec("vm1,type=vhost-user,path=/s");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->driver_keys.Flag("client"));
  EXPECT_EQ(spec->driver_keys.Number("queues", 1), 1u);
  EXPECT_TRUE(spec->OwnsSocket());
}

TEST(PortSpecTest, Memif) {
  absl::StatusOr<PortSpec> spec = ParsePortSpec("m0,type=memif,path=/run/m.sock,id=7");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->type_name(), "memif");
  EXPECT_EQ(spec->driver_keys.Number("id", 0), 7u);
  EXPECT_TRUE(spec->OwnsSocket());
  // The peer serves the socket; hvswitch connects, in place with zero_copy=1.
  spec = ParsePortSpec("m1,type=memif,path=/run/m.sock,client=1,zero_copy=1,quota=4096");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->driver_keys.Flag("client"));
  EXPECT_TRUE(spec->driver_keys.Flag("zero_copy"));
  EXPECT_FALSE(spec->OwnsSocket());
}

// A type's keys at their defaults are stored as not given: a spec means the same however
// it was written, and its ToString (which leaves defaults out) parses back equal.
TEST(PortSpecTest, DriverKeysAtTheirDefaultsEqualKeysNotGiven) {
  EXPECT_EQ(ParsePortSpec("a,type=vhost-user,path=/s,client=0,queues=1")->driver_keys,
            ParsePortSpec("a,type=vhost-user,path=/s")->driver_keys);
  EXPECT_EQ(ParsePortSpec("a,type=memif,id=0,zero_copy=0,path=/s")->driver_keys,
            ParsePortSpec("a,path=/s,type=memif")->driver_keys);
  EXPECT_FALSE(ParsePortSpec("a,type=memif,path=/s,id=3")->driver_keys ==
               ParsePortSpec("a,type=memif,path=/s")->driver_keys);
  EXPECT_FALSE(ParsePortSpec("a,type=vhost-user,path=/s,queues=2")->driver_keys ==
               ParsePortSpec("a,type=vhost-user,path=/t,queues=2")->driver_keys);
}

TEST(PortSpecTest, DpdkDevargsTakenVerbatimWithCommas) {
  absl::StatusOr<PortSpec> spec =
      ParsePortSpec("up0,type=dpdk,devargs=net_af_packet0,iface=eth1,qpairs=2");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->driver_keys.Text("devargs"), "net_af_packet0,iface=eth1,qpairs=2");
  EXPECT_FALSE(spec->OwnsSocket());
}

TEST(PortSpecTest, RoundTripsThroughToString) {
  for (const char* text : {"vm1,type=vhost-user,path=/a,client=1,queues=2",
                           "vm2,type=vhost-user,path=/a,client=1,postcopy=1,iommu=1",
                           "m,type=memif,path=/b,id=3", "n,type=dpdk,devargs=net_tap0,iface=x",
                           "v,type=vhost-user,path=/c,vlan=10,mtu=9000,learn_limit=64",
                           "u,type=vhost-user,path=/c,learn_limit=0",
                           "w,type=dpdk,learn_limit=0,devargs=net_null0",
                           "t,type=memif,path=/d,trunk=10,20-22,30,native=5",
                           "r,type=dpdk,mtu=9000,queues=4,devargs=0000:03:00.0",
                           "s,type=vhost-user,path=/e,mac=02:00:00:00:00:01,0a:bc:00:00:00:02",
                           "l,type=memif,path=/f,vlan=3,lock=1",
                           "q,type=vhost-user,path=/h,quota=4096",
                           "z,type=memif,path=/i,client=1,zero_copy=1,id=2,quota=4096",
                           "x,type=vhost-user,path=/j,tx_retries=0",
                           "y,type=dpdk,tx_retries=32,devargs=net_null0",
                           "up,type=dpdk,mrouter=1,devargs=net_null0"}) {
    absl::StatusOr<PortSpec> spec = ParsePortSpec(text);
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ(spec->ToString(), text);
  }
}

TEST(PortSpecTest, IpLearnNeedsTheMacFixed) {
  PortSpec locked = *ParsePortSpec("g,type=vhost-user,path=/g,lock=1,ip_learn=1");
  EXPECT_TRUE(locked.guards.ip_learn);
  EXPECT_TRUE(locked.guards.ip_guarded());
  EXPECT_EQ(locked.ToString(), "g,type=vhost-user,path=/g,lock=1,ip_learn=1");
  EXPECT_TRUE(ParsePortSpec("g,type=vhost-user,path=/g,mac=02:00:00:00:00:01,ip_learn=1,"
                            "ip=10.0.0.5")
                  .ok());
  EXPECT_EQ(ParsePortSpec("g,type=vhost-user,path=/g,ip_learn=1").status().message(),
            "port 'g': ip_learn=1 needs the port's MAC fixed: mac= or lock=1");
  EXPECT_FALSE(ParsePortSpec("g,type=vhost-user,path=/g,lock=1").value().guards.ip_guarded());
}

TEST(PortSpecTest, MulticastRouterPort) {
  EXPECT_TRUE(ParsePortSpec("u,type=vhost-user,path=/u,mrouter=1")->mrouter);
  EXPECT_FALSE(ParsePortSpec("u,type=vhost-user,path=/u,mrouter=0")->mrouter);
  EXPECT_FALSE(ParsePortSpec("u,type=vhost-user,path=/u")->mrouter);
  EXPECT_EQ(ParsePortSpec("u,type=vhost-user,path=/u,mrouter=yes").status().message(),
            "port 'u': mrouter must be 0 or 1");
}

TEST(PortSpecTest, VlansMtuAndLearnLimit) {
  PortSpec access = *ParsePortSpec("a,type=vhost-user,path=/a,vlan=100,mtu=9000,learn_limit=8");
  EXPECT_EQ(access.access_vlan, 100);
  EXPECT_TRUE(access.trunk_vlans.empty());
  EXPECT_EQ(access.mtu, 9000);
  EXPECT_EQ(access.learn_limit, 8u);
  // A trunk list's commas continue it until the next key=value field.
  PortSpec trunk = *ParsePortSpec("t,type=memif,path=/t,trunk=30,10-12,4094,native=7,mtu=68");
  EXPECT_EQ(trunk.trunk_vlans, (std::vector<uint16_t>{10, 11, 12, 30, 4094}));
  EXPECT_EQ(trunk.native_vlan, 7);
  EXPECT_EQ(trunk.mtu, 68);
  PortSpec plain = *ParsePortSpec("p,type=memif,path=/p");
  EXPECT_EQ(plain.access_vlan, 0);
  EXPECT_TRUE(plain.trunk_vlans.empty());
  EXPECT_EQ(plain.mtu, 1500);
  PortSpec nic = *ParsePortSpec("n,type=dpdk,queues=4,devargs=net_null0");
  EXPECT_EQ(nic.driver_keys.Number("queues", 1), 4u);
}

// Every port type retries a partly taken burst 8 times by default (Open vSwitch's
// tx-retries-max); tx_retries=0 turns retries off. The default is not written back.
TEST(PortSpecTest, TxRetriesDefaultAndRange) {
  for (const char* text : {"v,type=vhost-user,path=/a", "m,type=memif,path=/b",
                           "n,type=dpdk,devargs=net_null0"}) {
    PortSpec spec = *ParsePortSpec(text);
    EXPECT_EQ(spec.tx_retries, kDefaultTxRetries) << text;
    EXPECT_EQ(spec.ToString(), text);
  }
  EXPECT_EQ(kDefaultTxRetries, 8);
  EXPECT_EQ(ParsePortSpec("v,type=vhost-user,path=/a,tx_retries=0")->tx_retries, 0);
  EXPECT_EQ(ParsePortSpec("m,type=memif,path=/b,tx_retries=32")->tx_retries, 32);
  EXPECT_EQ(ParsePortSpec("v,type=vhost-user,path=/a,tx_retries=8")->ToString(),
            "v,type=vhost-user,path=/a");
}

// Guest ports learn at most 1024 MACs unless learn_limit= says otherwise (0: no limit);
// other ports have no limit by default. "Not given" and "0" stay apart through ToString.
TEST(PortSpecTest, GuestPortsHaveADefaultLearnLimit) {
  for (const char* guest : {"g,type=vhost-user,path=/g", "m,type=memif,path=/m"}) {
    PortSpec spec = *ParsePortSpec(guest);
    EXPECT_FALSE(spec.learn_limit.has_value()) << guest;
    EXPECT_EQ(spec.LearnLimit(), kDefaultGuestLearnLimit) << guest;
    EXPECT_EQ(kDefaultGuestLearnLimit, 1024u);
    EXPECT_EQ(spec.ToString(), guest);
    PortSpec unlimited = *ParsePortSpec(std::string(guest) + ",learn_limit=0");
    EXPECT_EQ(unlimited.LearnLimit(), 0u) << guest;
    EXPECT_EQ(unlimited.ToString(), std::string(guest) + ",learn_limit=0");
    EXPECT_EQ(ParsePortSpec(unlimited.ToString())->learn_limit, std::optional<uint32_t>(0));
    EXPECT_EQ(ParsePortSpec(std::string(guest) + ",learn_limit=50")->LearnLimit(), 50u);
  }
  PortSpec nic = *ParsePortSpec("n,type=dpdk,devargs=net_null0");
  EXPECT_EQ(nic.LearnLimit(), 0u);
  EXPECT_EQ(ParsePortSpec("n,type=dpdk,learn_limit=9,devargs=net_null0")->LearnLimit(), 9u);
}

TEST(PortSpecTest, PortSecurity) {
  // A MAC list's commas continue it until the next key=value field.
  PortSpec fixed = *ParsePortSpec(
      "g,type=vhost-user,path=/g,mac=02:00:00:00:00:01,02:00:00:00:00:02,mtu=9000");
  ASSERT_EQ(fixed.allowed_macs.size(), 2u);
  EXPECT_EQ(fixed.allowed_macs[0], 0x010000000002u);  // FDB key layout: wire byte 0 lowest
  EXPECT_EQ(fixed.mtu, 9000);
  EXPECT_FALSE(fixed.lock_mac);
  PortSpec locked = *ParsePortSpec("g,type=memif,path=/g,lock=1");
  EXPECT_TRUE(locked.lock_mac);
  EXPECT_TRUE(locked.allowed_macs.empty());
  PortSpec open = *ParsePortSpec("g,type=memif,path=/g,lock=0");
  EXPECT_FALSE(open.lock_mac);
}

struct BadSpec {
  const char* text;
  const char* message;
};

class BadPortSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadPortSpecTest, RejectedWithOneLineNamingPortAndProblem) {
  absl::StatusOr<PortSpec> spec = ParsePortSpec(GetParam().text);
  ASSERT_FALSE(spec.ok());
  std::string message(spec.status().message());
  EXPECT_THAT(message, HasSubstr(GetParam().message));
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadPortSpecTest,
    ::testing::Values(
        BadSpec{"p1,type=foo,path=/s", "port 'p1': unknown type 'foo'"},
        BadSpec{"p1,type=memif,path=/s,colour=red", "port 'p1': unknown key 'colour'"},
        BadSpec{"p1,type=vhost-user", "port 'p1': missing path="},
        BadSpec{"p1,type=memif", "port 'p1': missing path="},
        BadSpec{"p1,type=vhost-user,path=", "port 'p1': empty path"},
        BadSpec{"p1,path=/s", "port 'p1': missing type="},
        BadSpec{"p1,type=dpdk", "port 'p1': missing devargs="},
        BadSpec{"p1,type=dpdk,devargs=", "port 'p1': missing devargs="},
        BadSpec{"p1,type=vhost-user,path=/s,queues=0", "queues must be"},
        BadSpec{"p1,type=vhost-user,path=/s,queues=99", "queues must be"},
        BadSpec{"p1,type=vhost-user,path=/s,client=yes", "client must be 0 or 1"},
        BadSpec{"p1,type=vhost-user,path=/s,path=/t", "key 'path' given twice"},
        BadSpec{"p1,type=memif,path=/s,zero_copy=1", "zero_copy=1 needs client=1"},
        BadSpec{"p1,type=memif,path=/s,client=1,zero_copy=1", "zero_copy=1 needs quota=N"},
        BadSpec{"p1,type=vhost-user,path=/s,zero_copy=1", "'zero_copy' does not apply"},
        BadSpec{"p1,type=memif,path=/s,client=1,zero_copy=2", "zero_copy must be 0 or 1"},
        BadSpec{"p1,type=vhost-user,path=/s,id=2", "'id' does not apply"},
        BadSpec{"p1,type=dpdk,path=/s,devargs=net_null0", "'path' does not apply"},
        BadSpec{"p1,type=memif,path=/s,id=x", "id must be"},
        BadSpec{",type=memif,path=/s", "name must be"},
        BadSpec{"bad name,type=memif,path=/s", "name must be"},
        BadSpec{"p1,type=memif,path=/s,vlan=0", "vlan must be a VLAN from 1 to 4094"},
        BadSpec{"p1,type=memif,path=/s,vlan=4095", "vlan must be"},
        BadSpec{"p1,type=memif,path=/s,trunk=10,5000", "trunk: '5000' is not a VLAN"},
        BadSpec{"p1,type=memif,path=/s,trunk=20-10", "trunk: '20-10' is not a VLAN"},
        BadSpec{"p1,type=memif,path=/s,trunk=", "trunk: '' is not a VLAN"},
        BadSpec{"p1,type=memif,path=/s,trunk,native=5", "key 'trunk' needs a value"},
        BadSpec{"p1,type=memif,path=/s,mac", "key 'mac' needs a value"},
        BadSpec{"p1,type=memif,path,trunk=5", "key 'path' needs a value"},
        BadSpec{"p1,type=memif,path=/s,vlan=5,trunk=6", "exclude each other"},
        BadSpec{"p1,type=memif,path=/s,native=5", "native= needs trunk="},
        BadSpec{"p1,type=memif,path=/s,mtu=9001", "mtu must be a number from 68 to 9000"},
        BadSpec{"p1,type=memif,path=/s,mtu=67", "mtu must be"},
        BadSpec{"p1,type=memif,path=/s,learn_limit=-1", "learn_limit must be"},
        BadSpec{"p1,type=dpdk,queues=0,devargs=net_null0", "queues must be"},
        BadSpec{"p1,type=memif,path=/s,mac=02:00:00:00:00:0g", "mac: '02:00:00:00:00:0g' is not"},
        BadSpec{"p1,type=memif,path=/s,mac=01:00:5e:00:00:01", "is not a unicast MAC"},
        BadSpec{"p1,type=memif,path=/s,mac=00:00:00:00:00:00", "is not a unicast MAC"},
        BadSpec{"p1,type=memif,path=/s,mac=", "mac: '' is not"},
        BadSpec{"p1,type=memif,path=/s,mac=02:00:00:00:00:01,02:00:00:00:00:02,"
                "02:00:00:00:00:03,02:00:00:00:00:04,02:00:00:00:00:05,02:00:00:00:00:06,"
                "02:00:00:00:00:07,02:00:00:00:00:08,02:00:00:00:00:09",
                "mac: at most 8 MACs"},
        BadSpec{"p1,type=memif,path=/s,lock=2", "lock must be 0 or 1"},
        BadSpec{"p1,type=memif,path=/s,quota=255", "quota must be a number of buffers from 256"},
        BadSpec{"p1,type=memif,path=/s,quota=x", "quota must be"},
        BadSpec{"p1,type=memif,path=/s,lock=1,mac=02:00:00:00:00:01", "exclude each other"},
        BadSpec{"p1,type=memif,path=/s,tx_retries=33", "tx_retries must be a number from 0 to 32"},
        BadSpec{"p1,type=memif,path=/s,tx_retries=-1", "tx_retries must be"},
        BadSpec{"p1,type=vhost-user,path=/s,tx_retries", "key 'tx_retries' needs a value"},
        BadSpec{"p1,type=dpdk,tx_retries=x,devargs=net_null0", "tx_retries must be"},
        BadSpec{"p1,type=netdev", "missing iface= (the existing kernel interface to attach to)"},
        BadSpec{"p1,type=host", "missing iface= (the kernel interface to create)"},
        BadSpec{"p1,type=netdev,iface=", "iface '' is not an interface name"},
        BadSpec{"p1,type=netdev,iface=veth0:1", "iface 'veth0:1' is not an interface name"},
        BadSpec{"p1,type=netdev,iface=sixteen-chars-xx", "is not an interface name"},
        BadSpec{"p1,type=netdev,iface=a b", "is not an interface name"},
        BadSpec{"p1,type=netdev,iface=v,netns=a/b", "netns 'a/b' is neither"},
        BadSpec{"p1,type=netdev,iface=v,netns=..", "netns '..' is neither"},
        BadSpec{"p1,type=netdev,iface=v,queues=17", "queues must be"},
        BadSpec{"p1,type=netdev,iface=v,path=/s", "'path' does not apply"},
        BadSpec{"p1,type=netdev,iface=v,devargs=net_null0", "'devargs' does not apply"},
        BadSpec{"p1,type=vhost-user,path=/s,iface=v", "'iface' does not apply"},
        BadSpec{"p1,type=memif,path=/s,police_pps=0", "police_pps must be frames a second from 1"},
        BadSpec{"p1,type=memif,path=/s,police_pps=2G", "police_pps must be"},
        BadSpec{"p1,type=memif,path=/s,police_bps=1.5G", "police_bps must be bits a second"},
        BadSpec{"p1,type=memif,path=/s,police_bps=10T", "police_bps must be"},
        BadSpec{"p1,type=memif,path=/s,police_bps=-1", "police_bps must be"},
        BadSpec{"p1,type=memif,path=/s,police_bps=k", "police_bps must be"},
        BadSpec{"p1,type=memif,path=/s,police_pps_burst=10", "police_pps_burst= needs police_pps="},
        BadSpec{"p1,type=memif,path=/s,police_bps_burst=10", "police_bps_burst= needs police_bps="},
        BadSpec{"p1,type=memif,path=/s,storm_broadcast=0", "storm_broadcast must be"},
        BadSpec{"p1,type=memif,path=/s,storm_unknown=x", "storm_unknown must be"},
        BadSpec{"p1,type=memif,path=/s,storm_multicast", "key 'storm_multicast' needs a value"},
        BadSpec{"p1,type=memif,path=/s,bpdu_guard=2", "bpdu_guard must be 0 or 1"}));

// Guardrails are keys of every port type: rates with k/M/G (thousands, millions, billions),
// bursts that default to 10 ms of their rate (at least 64 frames, of 1518 bytes for bytes);
// written back as given, numbers in full.
TEST(PortSpecTest, GuardKeys) {
  PortSpec spec = *ParsePortSpec(
      "v,type=vhost-user,path=/a,police_pps=20k,police_pps_burst=500,police_bps=1G,"
      "storm_broadcast=1000,storm_multicast=2M,storm_unknown=30,bpdu_guard=1");
  EXPECT_EQ(spec.guards.police_pps, 20'000u);
  EXPECT_EQ(spec.guards.police_pps_burst, 500u);
  EXPECT_EQ(spec.guards.police_bps, 1'000'000'000u);
  EXPECT_EQ(spec.guards.police_bps_burst, 0u);
  EXPECT_EQ(spec.guards.storm[static_cast<size_t>(StormClass::kBroadcast)], 1000u);
  EXPECT_EQ(spec.guards.storm[static_cast<size_t>(StormClass::kMulticast)], 2'000'000u);
  EXPECT_EQ(spec.guards.storm[static_cast<size_t>(StormClass::kUnknown)], 30u);
  EXPECT_TRUE(spec.guards.bpdu_guard);
  EXPECT_TRUE(spec.guards.policed());
  EXPECT_TRUE(spec.guards.storm_controlled());
  EXPECT_EQ(spec.ToString(),
            "v,type=vhost-user,path=/a,police_pps=20000,police_pps_burst=500,"
            "police_bps=1000000000,storm_broadcast=1000,storm_multicast=2000000,storm_unknown=30,"
            "bpdu_guard=1");
  EXPECT_EQ(ParsePortSpec(spec.ToString())->guards, spec.guards);
  // Keys of every type, before devargs.
  PortSpec nic = *ParsePortSpec("n,type=dpdk,police_bps=100M,police_bps_burst=64k,devargs=net_null0");
  EXPECT_EQ(nic.guards.police_bps_burst, 64'000u);
  EXPECT_EQ(ParsePortSpec(nic.ToString())->guards, nic.guards);
  PortSpec none = *ParsePortSpec("m,type=memif,path=/b,bpdu_guard=0");
  EXPECT_EQ(none.guards, GuardSpec{});
  EXPECT_EQ(none.ToString(), "m,type=memif,path=/b");
  EXPECT_EQ(ParsePortSpec("m,type=memif,path=/b,police_pps=1G")->guards.police_pps, kMaxGuardPps);

  EXPECT_EQ(DefaultPacketBurst(1000), 64u);
  EXPECT_EQ(DefaultPacketBurst(1'000'000), 10'000u);
  EXPECT_EQ(DefaultByteBurst(1'000'000), 64u * 1518);
  EXPECT_EQ(DefaultByteBurst(10'000'000'000), 12'500'000u);  // 10 ms of 10 Gbit/s
}

TEST(PortDevargsTest, EachTypeMapsToItsPmd) {
  PortSpec vhost = *ParsePortSpec("vm1,type=vhost-user,path=/r/vm1.sock,client=1");
  EXPECT_EQ(PortDevargs(vhost, 3),
            "net_vhost3,iface=/r/vm1.sock,queues=1,client=1,legacy-ol-flags=0,tso=1");
  PortSpec memif = *ParsePortSpec("m,type=memif,path=/r/m.sock,id=2");
  EXPECT_EQ(PortDevargs(memif, 0),
            "net_memif0,role=server,socket=/r/m.sock,socket-abstract=no,id=2");
  PortSpec dpdk = *ParsePortSpec("n,type=dpdk,devargs=net_tap0,iface=hvs0");
  EXPECT_EQ(PortDevargs(dpdk, 0), "net_tap0,iface=hvs0");
  PortSpec host = *ParsePortSpec("h,type=host,iface=hvs0,netns=blue,queues=2");
  EXPECT_EQ(PortDevargs(host, 1), "net_hvs_tap1,iface=hvs0,queues=2,netns=blue");
  PortSpec netdev = *ParsePortSpec("v,type=netdev,iface=veth0,netns=/proc/7/ns/net");
  EXPECT_EQ(PortDevargs(netdev, 5), "net_hvs_packet5,iface=veth0,queues=1,netns=/proc/7/ns/net");
  EXPECT_EQ(PortDevargs(*ParsePortSpec("v,type=netdev,iface=eth1,queues=3"), 0),
            "net_hvs_packet0,iface=eth1,queues=3");
}

TEST(PortDevargsTest, RecognisesPciAddresses) {
  EXPECT_TRUE(IsPciDevargs("0000:03:00.0"));
  EXPECT_TRUE(IsPciDevargs("03:00.1"));
  EXPECT_TRUE(IsPciDevargs("0000:af:00.0,rxq_cqe_comp_en=0"));
  EXPECT_FALSE(IsPciDevargs("net_tap0,iface=x"));
  EXPECT_FALSE(IsPciDevargs("net_af_packet0,iface=eth1"));
}

}  // namespace
}  // namespace hvswitch

namespace hvswitch {
namespace {

// A spec is one line of a saved configuration: a newline in a path would start an option
// of its own there (ctl_group=, eal=...) when root starts hvswitch again from it.
TEST(PortSpecTest, ControlCharactersEdgeSpacesAndEmptyTextAreRefused) {
  for (std::string text :
       {std::string("vm,type=vhost-user,path=/run/a.sock\nctl_group=users"),
        std::string("vm,type=vhost-user,path=/run/a\x01.sock"),
        std::string("vm,type=vhost-user,path=/run/a.sock\x7f"),
        std::string("vm,type=dpdk,devargs=net_pcap0,tx_pcap=/tmp/x\r"),
        std::string("vm,type=vhost-user,path=/run/a\0.sock", 35),
        std::string(" vm,type=vhost-user,path=/run/a.sock"),
        std::string("vm,type=vhost-user,path=/run/a.sock "), std::string()}) {
    EXPECT_FALSE(ParsePortSpec(text).ok()) << text;
  }
  EXPECT_FALSE(ParsePortSpec(absl::string_view()).ok());
}

}  // namespace
}  // namespace hvswitch
