// Guardrails through the Forwarder over net_ring ports: ingress policing by frames and by
// bytes, storm control per class, 802.1D reserved addresses, BPDU guard, IP anti-spoofing
// (ip=) on frames built byte by byte; the meters' profiles as the bridge builds them (rates split between a port's workers). Meters are
// frozen (ForwarderTest::FreezeMeters) where a test counts what passes, so that no count
// depends on how long the test takes; the one test of refilling only waits, and asks for
// no more tokens than the wait is sure to have brought.
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "switch/datapath/port_guards.h"
#include "tests/integration/forwarder_fixture.h"
#include "tests/ip_frames.h"

namespace hvswitch {
namespace {

constexpr uint64_t kStp = 0x0000c28001;   // 01:80:c2:00:00:00
constexpr uint64_t kLacp = 0x020000c28001;  // 01:80:c2:00:00:02
constexpr uint64_t kGroup = 0x0100005e0001;  // 01:00:5e:00:00:01

class GuardsTest : public ForwarderTest {
 protected:
  // Port 0 with `guards`, the others plain; meters frozen.
  void Guard(const GuardSpec& guards) {
    std::vector<PortSpec> specs(kPorts);
    specs[0].guards = guards;
    Configure(specs);
    FreezeMeters();
  }
  // `n` frames src -> dst from port 0 in one burst; how many frames left the switch.
  size_t Sent(uint64_t src, uint64_t dst, size_t n, uint32_t payload = 50) {
    std::vector<TestFrame> frames(n, TestFrame{src, dst, -1, payload});
    size_t copies = 0;
    for (const auto& out : RunBurst(0, frames)) copies += out.size();
    return copies;
  }
  uint64_t Rx(uint16_t port) { return counters_.ports[port][PortCounter::kRxPackets].Read(); }
};

TEST_F(GuardsTest, PolicingByFramesKeepsTheBurstsFirstFramesAndCountsTheRest) {
  GuardSpec g;
  g.police_pps = 1;
  g.police_pps_burst = 40;
  Guard(g);
  Send(1, {kB, kBcast});  // B known on 1: A's frames to it are unicast
  EXPECT_EQ(Sent(kA, kB, 32), 32u);
  EXPECT_EQ(Sent(kA, kB, 32), 8u);
  EXPECT_EQ(RxDrops(0, RxDrop::kPoliced), 24u);
  EXPECT_EQ(Sent(kA, kB, 5), 0u);
  EXPECT_EQ(RxDrops(0, RxDrop::kPoliced), 29u);
  EXPECT_EQ(Rx(0), 69u) << "policed frames are received frames";
  EXPECT_EQ(counters_.ports[0][PortCounter::kRxBytes].Read(), 69u * 64);
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0})) << "A learned from its first frames";
  EXPECT_EQ(Rx(1), 2u);  // port 1 has no meter
}

TEST_F(GuardsTest, PolicingByBytesDropsWhatDoesNotFitAndLetsSmallerFramesPass) {
  GuardSpec g;
  g.police_bps = 8;
  g.police_bps_burst = 1000;  // bytes
  Guard(g);
  // 5 frames of 164 bytes (820), then a 1018-byte one that does not fit in the 180 left,
  // then two 64-byte ones that do.
  std::vector<TestFrame> frames(5, TestFrame{kA, kBcast, -1, 150});
  frames.push_back({kA, kBcast, -1, 1004});
  frames.push_back({kA, kBcast});
  frames.push_back({kA, kBcast});
  size_t forwarded = 0;
  for (const auto& out : RunBurst(0, frames)) forwarded += !out.empty();
  EXPECT_EQ(forwarded, 7u);
  EXPECT_EQ(RxDrops(0, RxDrop::kPoliced), 1u);
  EXPECT_EQ(Sent(kA, kBcast, 2), 0u) << "52 bytes left: no 64-byte frame fits";
  EXPECT_EQ(RxDrops(0, RxDrop::kPoliced), 3u);
}

TEST_F(GuardsTest, BothPoliceMetersApplyFramesFirst) {
  GuardSpec g;
  g.police_pps = 1;
  g.police_pps_burst = 10;
  g.police_bps = 8;
  g.police_bps_burst = 64 * 6;
  Guard(g);
  EXPECT_EQ(Sent(kA, kBcast, 16), 6u * 3);
  EXPECT_EQ(RxDrops(0, RxDrop::kPoliced), 10u);
  EXPECT_EQ(Sent(kA, kBcast, 16), 0u);
  EXPECT_EQ(RxDrops(0, RxDrop::kPoliced), 26u);
}

TEST_F(GuardsTest, StormControlMetersEachClassOfFloodAlone) {
  GuardSpec g;
  g.storm[static_cast<size_t>(StormClass::kBroadcast)] = 1;  // a bucket of 64
  g.storm[static_cast<size_t>(StormClass::kUnknown)] = 1;
  Guard(g);
  EXPECT_EQ(Sent(kA, kBcast, 60), 60u * 3);
  EXPECT_EQ(Sent(kA, kBcast, 10), 4u * 3);
  EXPECT_EQ(RxDrops(0, RxDrop::kStorm), 6u);
  EXPECT_EQ(Sent(kA, kGroup, 64), 64u * 3) << "multicast has no meter";
  EXPECT_EQ(Sent(kA, kC, 64), 64u * 3) << "C unknown: flooded, from its own bucket";
  EXPECT_EQ(Sent(kA, kC, 3), 0u);
  EXPECT_EQ(RxDrops(0, RxDrop::kStorm), 9u);
  Send(2, {kC, kBcast});  // C learned on 2: known unicast is not storm controlled
  EXPECT_EQ(Sent(kA, kC, 64), 64u);
  EXPECT_EQ(RxDrops(0, RxDrop::kStorm), 9u);
  EXPECT_EQ(fdb_->size(), 2u) << "storm-dropped frames still teach their source";
}

TEST_F(GuardsTest, ReservedGroupAddressesAreNeverForwarded) {
  for (uint64_t last = 0; last < 16; ++last) {
    EXPECT_EQ(Sent(kA, kStp | last << 40, 2), 0u) << "01:80:c2:00:00:0" << last;
  }
  EXPECT_EQ(RxDrops(0, RxDrop::kReserved), 32u);
  EXPECT_EQ(Sent(kA, kStp | uint64_t{0x10} << 40, 1), 3u) << "01:80:c2:00:00:10 is not reserved";
  std::vector<TestFrame> tagged(3, TestFrame{kA, kLacp, 7});
  for (const auto& out : RunBurst(0, tagged)) EXPECT_TRUE(out.empty());
  EXPECT_EQ(RxDrops(0, RxDrop::kReserved), 35u);
  EXPECT_EQ(datapath_.shut_mask.load(), 0u) << "no port has bpdu_guard";
}

TEST_F(GuardsTest, ABpduShutsABpduGuardPortUntilItIsEnabled) {
  GuardSpec g;
  g.bpdu_guard = true;
  Guard(g);
  Send(0, {kA, kBcast});
  Send(1, {kB, kBcast});
  // The BPDU's burst is decided as it came; the shut holds from the next one on.
  const auto out = RunBurst(0, {{kA, kB}, {kA, kStp}, {kA, kB}});
  EXPECT_EQ(out[0], Untagged({1}));
  EXPECT_TRUE(out[1].empty());
  EXPECT_EQ(out[2], Untagged({1}));
  EXPECT_EQ(datapath_.shut_mask.load(), 0b0001u);
  EXPECT_EQ(counters_.ports[0][PortCounter::kBpduGuardShutdowns].Read(), 1u);
  EXPECT_EQ(RxDrops(0, RxDrop::kReserved), 1u);
  EXPECT_EQ(Sent(kA, kBcast, 4), 0u);
  EXPECT_EQ(Sent(kA, kStp, 1), 0u) << "another BPDU while shut: dropped as shut, not counted again";
  EXPECT_EQ(RxDrops(0, RxDrop::kShut), 5u);
  EXPECT_EQ(counters_.ports[0][PortCounter::kBpduGuardShutdowns].Read(), 1u);
  EXPECT_EQ(Rx(0), 9u);
  // No destination meanwhile: left out of floods, unicast to it counted link_down.
  EXPECT_EQ(Send(1, {kB, kBcast}), Untagged({2, 3}));
  EXPECT_TRUE(Send(1, {kB, kA}).empty());
  EXPECT_EQ(TxDrops(0, TxDrop::kLinkDown), 1u);
  // A BPDU from a port without bpdu_guard is only a reserved frame.
  EXPECT_TRUE(Send(1, {kB, kStp}).empty());
  EXPECT_EQ(datapath_.shut_mask.load(), 0b0001u);
  datapath_.shut_mask.store(0);  // hvswitchctl port enable
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0}));
}

// A port polled by two workers has each worker's meter at half its rate and burst; a
// worker configures its meters anew (full buckets) when the port's profiles change.
TEST_F(GuardsTest, ProfilesSplitRatesBetweenTheWorkersPollingThePort) {
  PortTable table;
  std::vector<PortSpec> specs(2);
  specs[0].guards.police_pps = 1000;
  specs[0].guards.police_pps_burst = 100;
  specs[0].guards.storm[static_cast<size_t>(StormClass::kMulticast)] = 20000;
  specs[1].guards.police_bps = 8'000'000;
  table.Configure(specs);
  table.rx[0] = {{0, 0, 0}, {1, 1, 0}};
  table.rx[1] = {{0, 0, 1}};
  BuildGuards(table, SpecSlots(specs));
  const GuardProfiles& two = table.guards[0];
  EXPECT_TRUE(two.has(GuardMeter::kPolicePackets));
  EXPECT_FALSE(two.has(GuardMeter::kPoliceBytes));
  EXPECT_TRUE(two.has(GuardMeter::kStormMulticast));
  EXPECT_FALSE(two.has(GuardMeter::kStormBroadcast));
  EXPECT_EQ(two.profile[static_cast<size_t>(GuardMeter::kPolicePackets)].cbs, 50u);
  EXPECT_EQ(two.profile[static_cast<size_t>(GuardMeter::kStormMulticast)].cbs, 100u)
      << "the default burst, 10 ms of 20000/s, halved";
  const GuardProfiles& one = table.guards[1];
  EXPECT_TRUE(one.has(GuardMeter::kPoliceBytes));
  EXPECT_EQ(one.profile[static_cast<size_t>(GuardMeter::kPoliceBytes)].cbs, 64u * 1518);
  EXPECT_EQ(table.ports[0].guards, kGuardPolice | kGuardStorm);
  EXPECT_EQ(table.ports[1].guards, kGuardPolice);
  const uint32_t generation = two.generation, other = one.generation;
  BuildPortGuards(table, 0, SpecSlots(specs)[0]);
  EXPECT_EQ(table.guards[0].generation, generation + 1);
  EXPECT_EQ(table.guards[1].generation, other) << "other slots keep theirs";
  BuildPortGuards(table, 0, nullptr);
  EXPECT_EQ(table.guards[0].meters, 0u);
}

// A meter that let its burst pass lets more pass once time has brought tokens: after 50 ms
// at 2000 frames a second, at least 100 (the wait is at least that long; more time only
// brings more, up to the burst of 150).
TEST_F(GuardsTest, AMeterRefillsAtItsRate) {
  GuardSpec g;
  g.police_pps = 2000;
  g.police_pps_burst = 150;
  std::vector<PortSpec> specs(kPorts);
  specs[0].guards = g;
  Configure(specs);
  Send(1, {kB, kBcast});
  size_t passed = 0;
  for (int i = 0; i < 3; ++i) passed += Sent(kA, kB, 64);
  EXPECT_GE(passed, 150u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Sent(kA, kB, 64) + Sent(kA, kB, 36), 100u);
}

// A frame of `l3` bytes with EtherType `ether_type` (untagged, or tagged with `vlan`).
rte_mbuf* L3Frame(rte_mempool* pool, uint64_t src, uint64_t dst, uint16_t ether_type,
                  const testing::Bytes& l3, int vlan = -1) {
  testing::Bytes frame(12);
  std::memcpy(frame.data(), &dst, 6);
  std::memcpy(frame.data() + 6, &src, 6);
  if (vlan >= 0) {
    testing::Put16(frame, 12, 0x8100);
    testing::Put16(frame, 14, static_cast<uint16_t>(vlan));
  }
  testing::Put16(frame, frame.size(), ether_type);
  frame.insert(frame.end(), l3.begin(), l3.end());
  if (frame.size() < 60) frame.resize(60);
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(),
              frame.size());
  return m;
}

class IpGuardTest : public GuardsTest {
 protected:
  void SetUp() override {
    GuardsTest::SetUp();
    std::vector<PortSpec> specs(kPorts);
    specs[0].guards.ips = {testing::Prefix("10.0.0.5"), testing::Prefix("2001:db8::5"),
                           testing::Prefix("fe80::", 64)};
    specs[2].trunk_vlans = {7};
    specs[2].guards.ips = {testing::Prefix("10.7.0.0", 16)};
    Configure(specs);
    Send(1, {kB, kBcast});  // B on 1: frames to it are unicast
  }
  // The burst from `in`; per frame, whether it reached port 1.
  std::vector<bool> Through(uint16_t in, std::vector<rte_mbuf*> burst) {
    datapath_.now_seconds.store(0);
    forwarder_->HandleBurst(in, burst.data(), static_cast<uint16_t>(burst.size()));
    learner_->Poll(0);
    std::vector<bool> out;
    for (rte_mbuf* m : ports_[1]->TakeSent()) {
      out.push_back(true);
      rte_pktmbuf_free(m);
    }
    for (uint16_t p : {2, 3}) {
      for (rte_mbuf* m : ports_[p]->TakeSent()) rte_pktmbuf_free(m);
    }
    return out;
  }
  // The bytes of the frames port 1 was sent.
  std::vector<testing::Bytes> SentTo1() {
    std::vector<testing::Bytes> out;
    for (rte_mbuf* m : ports_[1]->TakeSent()) {
      const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
      out.emplace_back(p, p + m->data_len);
      rte_pktmbuf_free(m);
    }
    return out;
  }
};

// One run of frames from one MAC to another: the spoofed ones leave it, the others go on
// in order, each counted once.
TEST_F(IpGuardTest, SpoofedFramesLeaveTheirRunAndTheRestGoOnInOrder) {
  using namespace testing;  // NOLINT: the frame builders
  std::vector<rte_mbuf*> burst = {
      L3Frame(pool_, kA, kB, 0x0800, Ipv4("10.0.0.5", 17, 1, 1)),
      L3Frame(pool_, kA, kB, 0x0800, Ipv4("10.0.0.6", 17, 2, 2)),  // spoofed
      L3Frame(pool_, kA, kB, 0x0800, Ipv4("10.0.0.5", 17, 3, 3)),
      L3Frame(pool_, kA, kB, 0x0806, Arp("10.0.0.1")),             // spoofed: the gateway
      L3Frame(pool_, kA, kB, 0x0806, Arp("10.0.0.5")),
      L3Frame(pool_, kA, kB, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::1")),  // spoofed NA
      L3Frame(pool_, kA, kB, 0x86dd, Icmpv6("fe80::1", 136, "2001:db8::5")),
      L3Frame(pool_, kA, kB, 0x88b5, Bytes(46)),                   // not IP
      L3Frame(pool_, kA, kB, 0x8100, Ipv4("10.0.0.5"), 7),         // a second tag inside
  };
  forwarder_->HandleBurst(0, burst.data(), static_cast<uint16_t>(burst.size()));
  learner_->Poll(0);
  const std::vector<Bytes> sent = SentTo1();
  ASSERT_EQ(sent.size(), 5u);
  EXPECT_EQ(sent[0][14 + 20 + 1], 1) << "the first UDP frame, its source port";
  EXPECT_EQ(sent[1][14 + 20 + 1], 3);
  EXPECT_EQ(sent[2][12], 0x08);
  EXPECT_EQ(sent[2][13], 0x06);
  EXPECT_EQ(sent[3][14 + 40 + 8 + 15], 5) << "the NA for 2001:db8::5";
  EXPECT_EQ(sent[4][13], 0xb5);
  EXPECT_EQ(RxDrops(0, RxDrop::kSpoofedIp), 4u);
  EXPECT_EQ(Rx(0), 9u);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxPackets].Read(), 5u);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxBytes].Read(), 60u * 4 + 78u)
      << "the runs' bytes are their kept frames'";
  EXPECT_EQ(fdb_->size(), 2u) << "A learned from its good frames";
}

TEST_F(IpGuardTest, DhcpAndDuplicateAddressDetectionPassFromTheUnspecifiedAddress) {
  using namespace testing;  // NOLINT
  EXPECT_EQ(Through(0, {L3Frame(pool_, kA, kBcast, 0x0800, Ipv4("0.0.0.0", 17, 68, 67))}).size(),
            1u);
  EXPECT_EQ(Through(0, {L3Frame(pool_, kA, kBcast, 0x0806, Arp("0.0.0.0"))}).size(), 1u);
  EXPECT_EQ(Through(0, {L3Frame(pool_, kA, kBcast, 0x86dd, Icmpv6("::", 135))}).size(), 1u);
  EXPECT_TRUE(Through(0, {L3Frame(pool_, kA, kBcast, 0x0800, Ipv4("0.0.0.0", 17, 67, 68))})
                  .empty());
  EXPECT_EQ(RxDrops(0, RxDrop::kSpoofedIp), 1u);
}

// Tagged frames are checked past their tag; a port without ip= is not checked at all.
TEST_F(IpGuardTest, TaggedFramesAndUnboundPorts) {
  using namespace testing;  // NOLINT
  std::vector<PortSpec> specs(kPorts);
  specs[0].trunk_vlans = {7};
  specs[0].guards.ips = {Prefix("10.7.0.0", 16)};
  Configure(specs);
  EXPECT_EQ(Through(0, {L3Frame(pool_, kA, kBcast, 0x0800, Ipv4("10.7.3.4"), 7),
                        L3Frame(pool_, kA, kBcast, 0x0800, Ipv4("10.8.3.4"), 7),
                        L3Frame(pool_, kA, kBcast, 0x0806, Arp("10.7.9.9"), 7)})
                .size(),
            2u);
  EXPECT_EQ(RxDrops(0, RxDrop::kSpoofedIp), 1u);
  EXPECT_EQ(Through(3, {L3Frame(pool_, kC, kBcast, 0x0800, Ipv4("10.8.3.4"))}).size(), 1u)
      << "port 3 has no ip=";
  EXPECT_EQ(RxDrops(3, RxDrop::kSpoofedIp), 0u);
  // A whole run spoofed teaches nothing.
  EXPECT_TRUE(Through(0, {L3Frame(pool_, kC, kBcast, 0x0800, Ipv4("10.9.0.1"), 7)}).empty());
  EXPECT_EQ(RxDrops(0, RxDrop::kSpoofedIp), 2u);
  EXPECT_EQ(fdb_->size(), 3u) << "B, A in VLAN 7 and C in VLAN 0 (from port 3), not C in 7";
}

}  // namespace
}  // namespace hvswitch
