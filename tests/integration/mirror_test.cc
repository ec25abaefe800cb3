// Port mirroring through the Forwarder over net_ring ports: copies of received and of sent
// frames at the analyser (as they crossed the mirrored port, with the session's tag
// pushed), the analyser left out of forwarding and its own frames dropped, and the
// analyser's troubles (slow, down, no buffers) counted on it without costing the mirrored
// ports a frame. The reference model holds the rest (forwarder_test.cc's random bursts).
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/integration/forwarder_fixture.h"

namespace hvswitch {
namespace {

constexpr uint16_t kAnalyser = 3;

class MirrorTest : public ForwarderTest {
 protected:
  // Session 0: rx and tx of `rx_ports` / `tx_ports` (masks) to port 3.
  void Mirror(uint64_t rx_ports, uint64_t tx_ports, uint16_t vlan = 0) {
    SetMirror(0, {rx_ports, tx_ports, kAnalyser, vlan});
  }
  // The frames port p sent since the last look, parsed (and freed).
  std::vector<TestFrame> SentBy(uint16_t p) {
    std::vector<TestFrame> out;
    for (rte_mbuf* m : ports_[p]->TakeSent()) {
      out.push_back(ParseFrame(m));
      rte_pktmbuf_free(m);
    }
    return out;
  }
  // Frames from `in` handed to the forwarder without collecting what left.
  void Inject(uint16_t in, std::vector<TestFrame> frames) {
    std::vector<rte_mbuf*> burst;
    for (uint32_t i = 0; i < frames.size(); ++i) {
      frames[i].seq = i;
      burst.push_back(MakeFrame(pool_, frames[i]));
    }
    forwarder_->HandleBurst(in, burst.data(), static_cast<uint16_t>(burst.size()));
    learner_->Poll(0);
  }
  uint64_t Copied(bool rx) {
    return (rx ? counters_.mirrors[0].rx : counters_.mirrors[0].tx).Read();
  }
  static std::vector<uint32_t> Seqs(const std::vector<TestFrame>& frames) {
    std::vector<uint32_t> seqs;
    for (const TestFrame& f : frames) seqs.push_back(f.seq);
    return seqs;
  }
};

TEST_F(MirrorTest, ReceivedFramesAreCopiedAsTheyCameDroppedOnesToo) {
  Mirror(/*rx=*/1u << 0, /*tx=*/0);
  Send(1, {kB, kBcast});  // B known on 1
  Send(0, {kA, kBcast});  // A known on 0
  // To B (unicast), to A (hairpin: dropped), a broadcast.
  const auto out = RunBurst(0, {{kA, kB}, {kA, kA}, {kA, kBcast}});
  EXPECT_EQ(out[0], (Copies{{1, -1}, {kAnalyser, -1}}));
  EXPECT_EQ(out[1], (Copies{{kAnalyser, -1}})) << "a hairpin drop, mirrored as received";
  EXPECT_EQ(out[2], (Copies{{1, -1}, {2, -1}, {kAnalyser, -1}})) << "no flood to the analyser";
  EXPECT_EQ(RxDrops(0, RxDrop::kHairpin), 1u);
  EXPECT_EQ(Copied(true), 4u);  // and the broadcast that taught A
  EXPECT_EQ(Copied(false), 0u);
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0})) << "port 1 is not mirrored";
}

TEST_F(MirrorTest, SentFramesAreCopiedAsTheyWereSentThere) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].access_vlan = 5;  // frames from 0 leave tagged on the trunk
  specs[1].trunk_vlans = {5};
  specs[2].access_vlan = 5;
  Configure(specs);
  Mirror(0, /*tx=*/1u << 1);
  EXPECT_EQ(Send(1, {kB, kBcast, 5}), Untagged({0, 2})) << "from 1: not sent to 1";
  EXPECT_EQ(Send(0, {kA, kB}), (Copies{{1, 5}, {kAnalyser, 5}})) << "tagged, as sent to 1";
  EXPECT_EQ(Send(0, {kA, kBcast}), (Copies{{1, 5}, {2, -1}, {kAnalyser, 5}}));
  EXPECT_EQ(Send(2, {kC, kA}), Untagged({0})) << "not to 1: not copied";
  EXPECT_EQ(Copied(false), 2u);
  EXPECT_EQ(Copied(true), 0u);
}

TEST_F(MirrorTest, TheSessionsVlanIsPushedInFrontOfTheFramesOwnTag) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].trunk_vlans = {8};
  Configure(specs);
  Mirror(1u << 0, 1u << 0, /*vlan=*/7);
  ports_[0]->TakeSent();
  Inject(0, {{kA, kBcast, 8}});  // flooded in VLAN 8 to the plain ports 1 and 2
  Inject(1, {{kB, kA}});  // VLAN 0, which the trunk 0 does not carry: not sent to 0
  std::vector<TestFrame> copies = SentBy(kAnalyser);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].tag, 7);
  EXPECT_EQ(copies[0].inner_tag, 8);
  // A frame that reaches the trunk: its copy has VLAN 7, then 8.
  specs[1].trunk_vlans = {8};
  Configure(specs);
  Mirror(1u << 0, 1u << 0, 7);
  Inject(1, {{kB, kBcast, 8}});
  copies = SentBy(kAnalyser);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].tag, 7);
  EXPECT_EQ(copies[0].inner_tag, 8);
  EXPECT_EQ(SentBy(0).size(), 1u);
}

TEST_F(MirrorTest, TheAnalyserTakesNothingElseAndItsOwnFramesAreDropped) {
  Mirror(1u << 0, 0);
  EXPECT_EQ(Send(kAnalyser, {kC, kBcast}), Copies{});
  EXPECT_EQ(RxDrops(kAnalyser, RxDrop::kMirrorPort), 1u);
  EXPECT_EQ(counters_[CoreCounter::kLearnQueueDrops].Read(), 0u);
  EXPECT_EQ(fdb_->size(), 0u) << "nothing learned from it";
  EXPECT_EQ(Send(1, {kB, kC}), Untagged({0, 2})) << "unknown unicast floods without it";
  EXPECT_EQ(counters_.ports[kAnalyser][PortCounter::kRxPackets].Read(), 1u);
  // The session gone, the port is an ordinary one again.
  SetMirror(0, {});
  EXPECT_EQ(Send(1, {kB, kC}), Untagged({0, 2, kAnalyser}));
}

TEST_F(MirrorTest, ASlowAnalyserDropsItsOwnCopiesAndTheMirroredPortsLoseNothing) {
  // The analyser's ring holds 63 frames and nobody drains it.
  ports_[kAnalyser] = RingPort::Create(name_ + "_slow", 1, 1, 4096, pool_, 64);
  table_.ports[kAnalyser].eth_port = ports_[kAnalyser]->eth_port();
  Mirror(1u << 0, 1u << 1);
  Send(1, {kB, kBcast});  // B on 1 (not copied: 1 is tx-mirrored, this came from it)
  for (int burst = 0; burst < 8; ++burst) {
    Inject(0, std::vector<TestFrame>(32, TestFrame{kA, kB}));
  }
  EXPECT_EQ(SentBy(1).size(), 8u * 32) << "every frame reached port 1";
  EXPECT_EQ(Copied(true), 8u * 32);
  EXPECT_EQ(Copied(false), 8u * 32);
  const uint64_t taken = SentBy(kAnalyser).size();
  EXPECT_EQ(taken, 63u);
  EXPECT_EQ(counters_.ports[kAnalyser][PortCounter::kTxPackets].Read(), taken);
  EXPECT_EQ(TxDrops(kAnalyser, TxDrop::kQueueFull), 2u * 8 * 32 - taken);
  EXPECT_EQ(counters_.ports[kAnalyser][PortCounter::kTxRetries].Read(), 0u)
      << "an analyser is never waited for";
  EXPECT_EQ(TxDrops(1, TxDrop::kQueueFull), 0u);
}

TEST_F(MirrorTest, NoCopyIsMadeWhileTheAnalyserIsDown) {
  Mirror(1u << 0, 1u << 1);
  datapath_.up_mask.store(0x7);  // 3 down
  EXPECT_EQ(Send(0, {kA, kBcast}), Untagged({1, 2}));
  EXPECT_EQ(TxDrops(kAnalyser, TxDrop::kLinkDown), 2u) << "one received, one sent to 1";
  EXPECT_EQ(Copied(true) + Copied(false), 0u);
  EXPECT_EQ(counters_.mirrors[0].failed.Read(), 0u);
  EXPECT_EQ(rte_mempool_in_use_count(mirror_pool_), 0u);
}

TEST_F(MirrorTest, ADownAnalyserCountsOnlyWhatTheMirroredPortTook) {
  // Port 1 takes 63 frames (its ring of 64, nobody draining), refuses the rest.
  ports_[1] = RingPort::Create(name_ + "_full", 1, 1, 4096, pool_, 64);
  table_.ports[1].eth_port = ports_[1]->eth_port();
  Mirror(0, 1u << 1);
  Send(1, {kB, kBcast});
  datapath_.up_mask.store(0x7);  // 3 down
  for (int burst = 0; burst < 4; ++burst) {
    Inject(0, std::vector<TestFrame>(32, TestFrame{kA, kB}));
  }
  EXPECT_EQ(SentBy(1).size(), 63u);
  EXPECT_EQ(TxDrops(1, TxDrop::kQueueFull), 128u - 63);
  EXPECT_EQ(TxDrops(kAnalyser, TxDrop::kLinkDown), 63u) << "not the frames 1 refused";
  EXPECT_EQ(counters_.mirrors[0].failed.Read(), 0u);
}

TEST_F(MirrorTest, CopiesThePoolCannotHoldAreCountedAndTheFramesStillGo) {
  Mirror(1u << 0, 0);
  // Every buffer of the mirror pool held elsewhere.
  std::vector<rte_mbuf*> held(rte_mempool_avail_count(mirror_pool_));
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(mirror_pool_, held.data(), held.size()), 0);
  EXPECT_EQ(Send(0, {kA, kBcast}), Untagged({1, 2}));
  EXPECT_EQ(counters_.mirrors[0].failed.Read(), 1u);
  EXPECT_EQ(Copied(true), 0u);
  rte_pktmbuf_free_bulk(held.data(), held.size());
  EXPECT_EQ(Send(0, {kA, kBcast}), (Copies{{1, -1}, {2, -1}, {kAnalyser, -1}}));
}

// A frame that cannot be copied (empty; too short for the session's tag) is that frame's
// failure: the frames after it in the burst are copied, or a guest could hide its
// traffic from the analyser behind one runt a burst.
TEST_F(MirrorTest, AFrameThatCannotBeCopiedHidesNoOther) {
  for (const uint16_t runt : {0, 1}) {
    Mirror(1u << 0, 0, /*vlan=*/runt == 0 ? 0 : 7);
    std::vector<rte_mbuf*> burst = {rte_pktmbuf_alloc(pool_)};
    if (runt != 0) std::memset(rte_pktmbuf_append(burst[0], runt), 0xff, runt);
    for (uint32_t seq : {1u, 2u}) {
      TestFrame f{kA, kBcast};
      f.seq = seq;
      burst.push_back(MakeFrame(pool_, f));
    }
    forwarder_->HandleBurst(0, burst.data(), static_cast<uint16_t>(burst.size()));
    EXPECT_EQ(Seqs(SentBy(kAnalyser)), (std::vector<uint32_t>{1, 2})) << "runt " << runt;
    EXPECT_EQ(SentBy(1).size(), 2u);
    EXPECT_EQ(counters_.mirrors[0].failed.Read(), 1u + (runt != 0));
  }
}

TEST_F(MirrorTest, CopiesOverTheAnalysersMtuAreDroppedThere) {
  std::vector<PortSpec> specs(kPorts);
  specs[kAnalyser].mtu = 1000;
  Configure(specs);
  Mirror(1u << 0, 0, /*vlan=*/4);
  // 1000 bytes after the Ethernet header and the pushed tag: fits; 1001 does not.
  EXPECT_EQ(Send(0, {kA, kBcast, -1, 1000}), (Copies{{1, -1}, {2, -1}, {kAnalyser, 4}}));
  EXPECT_EQ(Send(0, {kA, kBcast, -1, 1001}), Untagged({1, 2}));
  EXPECT_EQ(TxDrops(kAnalyser, TxDrop::kMtu), 1u);
  // A jumbo frame is copied whole, in as many buffers as it takes.
  specs[kAnalyser].mtu = 9000;
  Configure(specs);
  Mirror(1u << 0, 0);
  Inject(0, {{kA, kBcast, -1, 8000}});
  std::vector<TestFrame> jumbo = SentBy(kAnalyser);
  ASSERT_EQ(jumbo.size(), 1u);
  EXPECT_EQ(jumbo[0].payload, 8000u);
}

}  // namespace
}  // namespace hvswitch
