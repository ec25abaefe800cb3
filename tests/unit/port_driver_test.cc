// The port drivers (ports/drivers.cc) as the rest of hvswitch sees them: the registry, each
// driver's keys, its specs read back, and what it decides without a device.
#include "ports/port_driver.h"
#include "ports/vxlan/vxlan_driver.h"

#include <rte_ethdev.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <rte_ethdev.h>

#include "ports/port.h"
#include "ports/port_spec.h"

namespace hvswitch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> TypeNames() {
  std::vector<std::string> names;
  for (const PortDriver* driver : PortDrivers()) names.emplace_back(driver->type());
  return names;
}

// The order is the one help and errors list ("vhost-user, memif, host, netdev, dpdk, bond
// or vxlan").
TEST(PortDriverTest, RegistryOrderAndLookup) {
  EXPECT_THAT(TypeNames(),
              ElementsAre("vhost-user", "memif", "host", "netdev", "dpdk", "bond", "vxlan"));
  for (const PortDriver* driver : PortDrivers()) {
    EXPECT_EQ(FindPortDriver(driver->type()), driver);
  }
  EXPECT_EQ(FindPortDriver("foo"), nullptr);
  EXPECT_EQ(FindPortDriver(""), nullptr);
}

// A driver names each key once, and a key that several drivers have parses alike in all
// of them (the parser may meet it before type=).
TEST(PortDriverTest, EachDriversKeysAreUniqueAndSharedNamesParseAlike) {
  std::map<std::string, const SpecKey*> first;
  for (const PortDriver* driver : PortDrivers()) {
    std::set<std::string> names;
    for (const SpecKey& key : driver->keys()) {
      EXPECT_TRUE(names.insert(std::string(key.name)).second)
          << driver->type() << " names '" << key.name << "' twice";
      auto [it, added] = first.emplace(std::string(key.name), &key);
      if (!added) {
        EXPECT_EQ(it->second->apply, key.apply) << key.name << " in " << driver->type();
        EXPECT_EQ(it->second->rest_of_line, key.rest_of_line) << key.name;
      }
    }
  }
  // A driver key never hides a key every port has.
  for (const char* shared : {"type", "vlan", "native", "trunk", "mtu", "learn_limit", "mac",
                             "quota", "lock"}) {
    EXPECT_EQ(first.count(shared), 0u) << shared;
  }
}

// Every driver's keys, written back by ToString as they were read (saved configurations
// and `config show` depend on it).
TEST(PortDriverTest, ToStringReadsBackForEachDriver) {
  const std::map<std::string, std::vector<std::string>> specs = {
      {"vhost-user",
       {"v,type=vhost-user,path=/a", "v,type=vhost-user,path=/a,client=1,queues=4,vlan=3",
        "v,type=vhost-user,path=/a,queues=16,mtu=9000,quota=4096"}},
      {"memif",
       {"m,type=memif,path=/b", "m,type=memif,path=/b,id=7,trunk=10-12,native=4",
        "m,type=memif,path=/b,client=1,zero_copy=1,id=2,learn_limit=0,quota=512"}},
      {"host",
       {"h,type=host,iface=hvs0", "h,type=host,iface=hvs0,netns=blue,queues=2,mtu=9000",
        "h,type=host,iface=h1,netns=/proc/1/ns/net,vlan=5,learn_limit=4"}},
      {"netdev",
       {"n,type=netdev,iface=veth0", "n,type=netdev,iface=veth0,netns=red,queues=4,mtu=9000",
        "n,type=netdev,iface=eth1,netns=/proc/1/ns/net,trunk=10-20,native=1,quota=1024"}},
      {"dpdk",
       {"d,type=dpdk,devargs=net_null0", "d,type=dpdk,mtu=9000,queues=4,devargs=0000:03:00.0",
        "d,type=dpdk,lock=1,devargs=net_tap0,iface=x,path=/y"}},
      {"bond",
       {"b,type=bond,members=net_null_a;net_null_b",
        "b,type=bond,mode=802.3ad,hash=l34,mtu=9000,queues=2,"
        "members=net_af_packet_a,iface=veth0;net_af_packet_b,iface=veth1",
        "b,type=bond,mode=balance-xor,members=0000:03:00.0;0000:03:00.1;net_tap_c,iface=t"}},
      {"vxlan",
       {"x,type=vxlan,vni=100,uplink=u,local=10.0.0.1,vlan=10",
        "x,type=vxlan,vni=16777215,uplink=up,local=192.0.2.1,remote=192.0.2.2,192.0.2.3,"
        "udp_port=8472,udp_csum=1,queues=2,vlan=4094,mtu=1450",
        "x,type=vxlan,vni=7,uplink=u,local=10.0.0.1,evpn=1,vlan=7,learn_limit=4"}},
  };
  for (const PortDriver* driver : PortDrivers()) {
    auto it = specs.find(std::string(driver->type()));
    ASSERT_NE(it, specs.end()) << "no spec of type " << driver->type() << " is read back";
    for (const std::string& text : it->second) {
      absl::StatusOr<PortSpec> spec = ParsePortSpec(text);
      ASSERT_TRUE(spec.ok()) << text << ": " << spec.status();
      EXPECT_EQ(spec->driver, driver) << text;
      EXPECT_EQ(spec->ToString(), text);
    }
  }
}

TEST(PortDriverTest, VxlanDevargsAndSugar) {
  EXPECT_EQ(PortDevargs(*ParsePortSpec("x,type=vxlan,vni=100,uplink=u,local=10.0.0.1,vlan=1"), 3),
            "net_hvs_vxlan3,vni=100,udp_csum=0,learn=1");
  EXPECT_EQ(PortDevargs(*ParsePortSpec("x,type=vxlan,vni=9,uplink=u,local=10.0.0.1,vlan=1,"
                                       "evpn=1,udp_csum=1"), 0),
            "net_hvs_vxlan0,vni=9,udp_csum=1,learn=0");
  absl::StatusOr<PortSpec> sugar =
      ParseVxlanSpec("100,vlan=10,uplink=u,local=10.0.0.1,remote=10.0.0.2,10.0.0.3,mtu=1450");
  ASSERT_TRUE(sugar.ok()) << sugar.status();
  EXPECT_EQ(sugar->ToString(), "vxlan100,type=vxlan,vni=100,uplink=u,local=10.0.0.1,"
                               "remote=10.0.0.2,10.0.0.3,vlan=10,mtu=1450");
  const VxlanKeys keys = ReadVxlanKeys(*sugar);
  EXPECT_EQ(keys.vni, 100u);
  EXPECT_EQ(keys.uplink, "u");
  EXPECT_EQ(keys.local, inet_addr("10.0.0.1"));
  EXPECT_THAT(keys.remotes, ElementsAre(inet_addr("10.0.0.2"), inet_addr("10.0.0.3")));
  EXPECT_EQ(keys.udp_port, 4789);
  EXPECT_FALSE(keys.evpn);
}

// A bond's members are probed first and named to net_bonding by their ethdev names; PCI
// members join the EAL's allow-list; 802.3ad needs a transmit call every round (its
// LACPDUs wait for one).
TEST(PortDriverTest, BondDevargsMembersAndFlags) {
  const PortSpec lacp = *ParsePortSpec(
      "up,type=bond,mode=802.3ad,hash=l34,members=net_af_packet_a,iface=v0;03:00.1");
  EXPECT_EQ(PortDevargs(lacp, 2),
            "net_bonding_hvs2,mode=4,xmit_policy=l34,slave=net_af_packet_a,slave=0000:03:00.1");
  EXPECT_THAT(lacp.driver->MemberDevargs(lacp),
              ElementsAre("net_af_packet_a,iface=v0", "03:00.1"));
  EalNeeds needs;
  const PortSpec* mine[] = {&lacp};
  lacp.driver->AddEalNeeds(mine, needs);
  EXPECT_THAT(needs.pci_allow, ElementsAre("03:00.1"));
  EXPECT_TRUE(lacp.driver->Flags(lacp, {}).tx_each_round);
  EXPECT_TRUE(lacp.driver->Flags(lacp, {}).rx_backpressure);
  EXPECT_EQ(lacp.driver->role(), PortRole::kDevice);
  EXPECT_TRUE(lacp.driver->Traits(lacp).root_only.has_value());

  const PortSpec backup = *ParsePortSpec("up,type=bond,members=net_null_a;net_null_b");
  EXPECT_EQ(PortDevargs(backup, 0), "net_bonding_hvs0,mode=1,slave=net_null_a,slave=net_null_b");
  EXPECT_FALSE(backup.driver->Flags(backup, {}).tx_each_round);
  const PortSpec xor_hash = *ParsePortSpec("up,type=bond,mode=balance-xor,members=a0;b0");
  EXPECT_EQ(PortDevargs(xor_hash, 1), "net_bonding_hvs1,mode=2,xmit_policy=l2,slave=a0,slave=b0");
}

TEST(PortDriverTest, BondSpecErrors) {
  for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
           {"b,type=bond", "missing members="},
           {"b,type=bond,members=net_null_a", "2 to 8 members"},
           {"b,type=bond,members=a;b;c;d;e;f;g;h;i", "2 to 8 members"},
           {"b,type=bond,members=net_null_a;net_null_a,size=64", "given twice"},
           {"b,type=bond,members=a;", "an empty member"},
           {"b,type=bond,mode=lacp,members=a;b", "mode must be active-backup, 802.3ad, "
                                                  "balance-xor"},
           {"b,type=bond,mode=802.3ad,hash=l4,members=a;b", "hash must be l2, l23, l34"},
           {"b,type=bond,hash=l34,members=a;b", "hash= does not apply to mode=active-backup"},
       }) {
    const absl::StatusOr<PortSpec> spec = ParsePortSpec(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_THAT(spec.status().message(), HasSubstr(error)) << text;
  }
}

TEST(PortDriverTest, VxlanSpecErrors) {
  auto error = [](absl::string_view text) {
    absl::StatusOr<PortSpec> spec = ParsePortSpec(text);
    return spec.ok() ? std::string("ok") : std::string(spec.status().message());
  };
  EXPECT_EQ(error("x,type=vxlan,uplink=u,local=10.0.0.1,vlan=1"), "port 'x': missing vni=");
  EXPECT_EQ(error("x,type=vxlan,vni=1,local=10.0.0.1,vlan=1"), "port 'x': missing uplink=");
  EXPECT_EQ(error("x,type=vxlan,vni=1,uplink=u,vlan=1"), "port 'x': missing local=");
  EXPECT_EQ(error("x,type=vxlan,vni=1,uplink=u,local=10.0.0.1"),
            "port 'x': a vxlan port carries one VLAN: give vlan=N");
  EXPECT_EQ(error("x,type=vxlan,vni=1,uplink=x,local=10.0.0.1,vlan=1"),
            "port 'x': a vxlan port cannot be its own uplink");
  EXPECT_EQ(error("x,type=vxlan,vni=16777216,uplink=u,local=10.0.0.1,vlan=1"),
            "port 'x': vni must be a VNI from 1 to 16777215");
  EXPECT_EQ(error("x,type=vxlan,vni=1,uplink=u,local=fd00::1,vlan=1"),
            "port 'x': local 'fd00::1' is not a unicast IPv4 address (IPv6 VTEPs are not "
            "supported)");
  EXPECT_EQ(error("x,type=vxlan,vni=1,uplink=u,local=10.0.0.1,remote=10.0.0.2,10.0.0.2,vlan=1"),
            "port 'x': remote 10.0.0.2 listed twice");
  EXPECT_EQ(error("x,type=vxlan,vni=1,uplink=u,local=10.0.0.1,remote=224.0.0.1,vlan=1"),
            "port 'x': remote '224.0.0.1' is not a unicast IPv4 address (IPv6 VTEPs are not "
            "supported)");
  EXPECT_EQ(error("x,type=vxlan,vni=1,uplink=u,local=10.0.0.1,remote=10.0.0.2,evpn=1,vlan=1"),
            "port 'x': evpn=1 takes the flood list from FRR: no remote=");
  EXPECT_EQ(ParseVxlanSpec("0,vlan=1").status().message(),
            "vxlan '0,vlan=1': starts with the VNI (1-16777215), then KEY=VALUE,...");
}

TEST(PortDriverTest, MemifDevargs) {
  EXPECT_EQ(PortDevargs(*ParsePortSpec("m,type=memif,path=/r/m.sock"), 4),
            "net_memif4,role=server,socket=/r/m.sock,socket-abstract=no,id=0");
  EXPECT_EQ(PortDevargs(*ParsePortSpec("m,type=memif,path=/r/m.sock,client=1,zero_copy=1,id=5,"
                                       "quota=512"),
                        1),
            "net_memif1,role=client,socket=/r/m.sock,socket-abstract=no,id=5,zero-copy=yes");
}

TEST(PortDriverTest, VhostUserDevargs) {
  EXPECT_EQ(PortDevargs(*ParsePortSpec("v,type=vhost-user,path=/r/v.sock"), 0),
            "net_vhost0,iface=/r/v.sock,queues=1,client=0,legacy-ol-flags=0,tso=1");
  EXPECT_EQ(PortDevargs(*ParsePortSpec("v,type=vhost-user,path=/r/v.sock,client=1,queues=4"), 7),
            "net_vhost7,iface=/r/v.sock,queues=4,client=1,legacy-ol-flags=0,tso=1");
  // Live migration's options, asked of the vhost library.
  EXPECT_EQ(PortDevargs(*ParsePortSpec("v,type=vhost-user,path=/r/v.sock,postcopy=1,iommu=1"), 1),
            "net_vhost1,iface=/r/v.sock,queues=1,client=0,legacy-ol-flags=0,tso=1,"
            "postcopy-support=1,iommu-support=1");
  EXPECT_EQ(PortDevargs(*ParsePortSpec("v,type=vhost-user,path=/r/v.sock,postcopy=0,iommu=0"), 1),
            "net_vhost1,iface=/r/v.sock,queues=1,client=0,legacy-ol-flags=0,tso=1");
  EXPECT_FALSE(ParsePortSpec("v,type=vhost-user,path=/r/v.sock,postcopy=2").ok());
}

// Queues, traits, reconnecting and data-path flags: what Port and the bridge ask.
TEST(PortDriverTest, WhatEachTypeDecidesWithoutADevice) {
  const PortSpec vhost = *ParsePortSpec("v,type=vhost-user,path=/r/v.sock,queues=2");
  EXPECT_EQ(vhost.role(), PortRole::kGuest);
  EXPECT_EQ(QueuesFor(vhost, 4, 512, 256).nb_rxq, 2);
  EXPECT_EQ(QueuesFor(vhost, 4, 512, 256).nb_txq, 2);  // no more than the guest's pairs
  EXPECT_EQ(QueuesFor(vhost, 4, 512, 256).rx_descriptors, 512);
  EXPECT_EQ(vhost.Traits().socket, "/r/v.sock");
  EXPECT_TRUE(vhost.Traits().owns_socket);
  EXPECT_FALSE(vhost.Traits().root_only.has_value());
  DeviceSetup offloading;
  offloading.rx_offload = true;
  EXPECT_TRUE(vhost.driver->Flags(vhost, offloading).rx_offload);

  const PortSpec memif = *ParsePortSpec("m,type=memif,path=/r/m.sock,client=1,zero_copy=1,"
                                        "quota=512");
  EXPECT_EQ(QueuesFor(memif, 4, 512, 256).nb_txq, 1);
  EXPECT_FALSE(memif.Traits().owns_socket);
  EXPECT_TRUE(memif.Traits().root_only.has_value());
  const DatapathFlags zero_copy = memif.driver->Flags(memif, {});
  EXPECT_TRUE(zero_copy.recount_chains && zero_copy.tx_each_round);
  const ReconnectPolicy reconnect = memif.driver->Reconnect(memif);
  EXPECT_TRUE(reconnect.enabled);
  EXPECT_EQ(reconnect.After(false), std::chrono::seconds(1));
  EXPECT_EQ(reconnect.After(true), std::chrono::seconds(10));
  EXPECT_EQ(reconnect.waiting, "no memif server at /r/m.sock");
  const PortSpec server = *ParsePortSpec("m,type=memif,path=/r/m.sock");
  EXPECT_FALSE(server.driver->Reconnect(server).enabled);
  EXPECT_FALSE(server.driver->Flags(server, {}).tx_each_round);
  EXPECT_FALSE(server.Traits().root_only.has_value());

  const PortSpec nic = *ParsePortSpec("n,type=dpdk,queues=3,devargs=net_tap0,iface=x");
  EXPECT_EQ(nic.role(), PortRole::kDevice);
  EXPECT_EQ(QueuesFor(nic, 4, 512, 256).nb_rxq, 3);
  EXPECT_EQ(QueuesFor(nic, 4, 512, 256).nb_txq, 4);
  EXPECT_FALSE(nic.Traits().socket.has_value());
  EXPECT_EQ(nic.Traits().endpoint, "net_tap0,iface=x");
  EXPECT_TRUE(nic.Traits().fills_rx_rings);
  EXPECT_TRUE(nic.Traits().root_only.has_value());
  DeviceSetup csum;
  csum.nic.csum = true;
  EXPECT_TRUE(nic.driver->Flags(nic, csum).tx_prepare);
  EXPECT_FALSE(nic.driver->Flags(nic, {}).tx_prepare);

  const PortSpec netdev = *ParsePortSpec("v,type=netdev,iface=veth0,netns=red,queues=2");
  EXPECT_EQ(netdev.role(), PortRole::kDevice);
  EXPECT_EQ(QueuesFor(netdev, 4, 512, 256).nb_rxq, 2);
  EXPECT_EQ(QueuesFor(netdev, 4, 512, 256).nb_txq, 4);  // the workers share its sockets
  EXPECT_EQ(netdev.Traits().endpoint, "red:veth0");
  EXPECT_FALSE(netdev.Traits().socket.has_value());
  EXPECT_FALSE(netdev.Traits().fills_rx_rings);
  EXPECT_THAT(*netdev.Traits().root_only, HasSubstr("type=netdev"));
  EXPECT_EQ(netdev.LearnLimit(), 0u);  // a veth may carry a whole namespace's bridge
  EXPECT_TRUE(netdev.driver->Flags(netdev, offloading).rx_offload);
}

// The device offers what the virtio-net header carries: both kernel types take all of it
// (checksums and TSO both ways), and say nothing of a device that offers less.
TEST(PortDriverTest, KernelPortsTakeEveryOffloadTheHeaderCarries) {
  for (const char* text : {"h,type=host,iface=h0", "n,type=netdev,iface=veth0"}) {
    const PortSpec spec = *ParsePortSpec(text);
    rte_eth_dev_info info{};
    info.rx_offload_capa = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
                           RTE_ETH_RX_OFFLOAD_TCP_LRO | RTE_ETH_RX_OFFLOAD_SCATTER;
    info.tx_offload_capa = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
                           RTE_ETH_TX_OFFLOAD_TCP_TSO;
    info.max_lro_pkt_size = 65553;
    rte_eth_conf conf{};
    const DeviceSetup setup = spec.driver->Configure(spec, info, conf);
    EXPECT_TRUE(setup.rx_offload) << text;
    EXPECT_TRUE(setup.nic.csum && setup.nic.tso4 && setup.nic.tso6) << text;
    EXPECT_TRUE(conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_TCP_LRO) << text;
    EXPECT_EQ(conf.rxmode.max_lro_pkt_size, 65553u) << text;
    EXPECT_TRUE(setup.caveat.empty()) << text;
    rte_eth_dev_info less{};
    rte_eth_conf untouched{};
    EXPECT_FALSE(spec.driver->Configure(spec, less, untouched).rx_offload) << text;
    EXPECT_EQ(untouched.rxmode.offloads, 0u) << text;
  }
}

// DPDK's af_packet PMD loses the kernel's checksum state: the operator is told at start,
// and pointed to type=netdev; other DPDK devices carry no such note.
TEST(PortDriverTest, DpdkAfPacketPortsCarryTheirChecksumCaveat) {
  const PortSpec spec = *ParsePortSpec("u,type=dpdk,devargs=net_af_packet0,iface=veth0");
  rte_eth_dev_info info{};
  info.driver_name = "net_af_packet";
  rte_eth_conf conf{};
  const std::string caveat = spec.driver->Configure(spec, info, conf).caveat;
  EXPECT_THAT(caveat, HasSubstr("partial checksums"));
  EXPECT_THAT(caveat, HasSubstr("type=netdev"));
  for (const char* other : {"net_tap", "net_null", "net_ring"}) {
    info.driver_name = other;
    EXPECT_TRUE(spec.driver->Configure(spec, info, conf).caveat.empty()) << other;
  }
}

// Ports whose frames wait in a kernel's or a NIC's queue may be paused for a full
// destination (rx_backpressure); guests' rings, and other processes' rings a dpdk port
// may open, are not.
TEST(PortDriverTest, OnlyKernelAndNicSourcesArePausedForBackpressure) {
  for (const char* guest : {"v,type=vhost-user,path=/r/v.sock", "m,type=memif,path=/r/m.sock",
                            "z,type=memif,path=/r/z.sock,client=1,zero_copy=1,quota=512"}) {
    const PortSpec spec = *ParsePortSpec(guest);
    EXPECT_FALSE(spec.driver->Flags(spec, {}).rx_backpressure) << guest;
  }
  for (const char* kernel : {"h,type=host,iface=hv0", "n,type=netdev,iface=veth0"}) {
    const PortSpec spec = *ParsePortSpec(kernel);
    EXPECT_TRUE(spec.driver->Flags(spec, {}).rx_backpressure) << kernel;
  }
  const PortSpec nic = *ParsePortSpec("n,type=dpdk,devargs=net_x0");
  for (const auto& [driver, pauses] :
       std::map<std::string, bool>{{"net_tap", true}, {"net_af_packet", true},
                                   {"net_ixgbe", true}, {"net_vhost", false},
                                   {"net_memif", false}, {"net_virtio_user", false}}) {
    rte_eth_dev_info info{};
    info.driver_name = driver.c_str();
    rte_eth_conf conf{};
    const DeviceSetup setup = nic.driver->Configure(nic, info, conf);
    EXPECT_EQ(nic.driver->Flags(nic, setup).rx_backpressure, pauses) << driver;
  }
}

// A spec without a driver (the data path's tests): a device's role, no socket.
TEST(PortDriverTest, ASpecWithoutADriverIsADeviceWithoutTraits) {
  PortSpec bare;
  EXPECT_EQ(bare.type_name(), "");
  EXPECT_EQ(bare.role(), PortRole::kDevice);
  EXPECT_EQ(bare.LearnLimit(), 0u);
  EXPECT_FALSE(bare.OwnsSocket());
}

}  // namespace
}  // namespace hvswitch
