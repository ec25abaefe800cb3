// The Forwarder over net_ring ports held against the reference model frame by frame:
// VLANs, MTU, learning with limits and static entries, ageing and flushes, transmit
// batching. The test plays the control thread: the bridge's Learner applies the learn
// requests after every burst, as the bridge has it do about every millisecond.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "ports/port_spec.h"
#include "switch/control/learner.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/forwarder.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/mac_key.h"
#include "tests/integration/forwarder_fixture.h"
#include "tests/integration/ring_port.h"
#include "tests/model/bridge_model.h"
#include "tests/test_frames.h"

namespace hvswitch {
namespace {

TEST_F(ForwarderTest, FloodLearnThenUnicast) {
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1, 2, 3}));  // B unknown
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0}));        // A learned
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));        // B learned
  EXPECT_EQ(Send(2, {kC, kBcast}), Untagged({0, 1, 3}));
  EXPECT_EQ(counters_.ports[0][PortCounter::kRxPackets].Read(), 2u);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxPackets].Read(), 3u);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxBytes].Read(), 3u * 64);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxBursts].Read(), 3u);
}

TEST_F(ForwarderTest, HairpinAndMalformedAreDroppedAndCounted) {
  Send(0, {kA, kBcast});
  EXPECT_TRUE(Send(0, {kB, kA}).empty());  // A lives on port 0 itself
  EXPECT_EQ(RxDrops(0, RxDrop::kHairpin), 1u);
  EXPECT_TRUE(Send(1, {kBcast, kA}).empty());  // group source
  EXPECT_EQ(RxDrops(1, RxDrop::kMalformed), 1u);
  rte_mbuf* runt = rte_pktmbuf_alloc(pool_);
  rte_pktmbuf_append(runt, 10);
  forwarder_->HandleBurst(2, &runt, 1);
  EXPECT_EQ(RxDrops(2, RxDrop::kMalformed), 1u);
  rte_mbuf* short_tag = MakeFrame(pool_, {kA, kB, 5, 4});
  rte_pktmbuf_trim(short_tag, short_tag->pkt_len - 16);  // a tag announced, not present
  forwarder_->HandleBurst(2, &short_tag, 1);
  EXPECT_EQ(RxDrops(2, RxDrop::kMalformed), 2u);
}

TEST_F(ForwarderTest, DownPortsAreLeftOutOfFloodsAndCountUnicastDrops) {
  Send(3, {kB, kBcast});  // B on port 3
  datapath_.up_mask.store(0b0111);
  EXPECT_EQ(Send(0, {kA, kBcast}), Untagged({1, 2}));
  EXPECT_TRUE(Send(0, {kA, kB}).empty());
  EXPECT_EQ(TxDrops(3, TxDrop::kLinkDown), 1u);
}

TEST_F(ForwarderTest, FlushedPortsMacsAreFloodedUntilRelearned) {
  Send(1, {kB, kBcast});
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));
  learner_->Flush(1);
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1, 2, 3}));
  Send(1, {kB, kA});
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));
}

// Burst after burst of one conversation reuses the last lookup; every change of the table
// in between must show at once.
TEST_F(ForwarderTest, RepeatedConversationSeesEveryTableChange) {
  const std::vector<TestFrame> burst(8, TestFrame{kA, kB});
  auto all_to = [&](std::vector<std::vector<model::Copy>> out, Copies want) {
    for (const auto& copies : out) EXPECT_EQ(copies, want);
  };
  Send(1, {kB, kBcast});
  all_to(RunBurst(0, burst), Untagged({1}));
  all_to(RunBurst(0, burst), Untagged({1}));
  learner_->Flush(1);
  all_to(RunBurst(0, burst), Untagged({1, 2, 3}));
  Send(2, {kB, kBcast});  // B moves to port 2
  all_to(RunBurst(0, burst), Untagged({2}));
  learner_->Age(100000, 5);  // B not seen since 0: aged out
  all_to(RunBurst(0, burst), Untagged({1, 2, 3}));
  ASSERT_TRUE(learner_->AddStatic(kB, 3).ok());
  all_to(RunBurst(0, burst), Untagged({3}));
}

// The port's last source (Forwarder::last_) is taken without a look-up by the runs that
// follow; the table's changes must still show, and it must still be refreshed for ageing.
// A guest's burst: one source, runs to several destinations.
std::vector<TestFrame> GuestBurst(uint64_t src, std::vector<uint64_t> dsts) {
  std::vector<TestFrame> frames;
  for (uint64_t dst : dsts) frames.insert(frames.end(), 2, TestFrame{src, dst});
  return frames;
}

TEST_F(ForwarderTest, ACachedSourceThatMovesIsSeenToMoveAndBack) {
  Send(1, {kB, kBcast});
  Send(2, {kC, kBcast});
  const std::vector<TestFrame> guest = GuestBurst(kA, {kB, kC, kB, kC});
  RunBurst(0, guest);  // A learned on port 0
  std::vector<std::vector<model::Copy>> out = RunBurst(0, guest);  // A port 0's last source
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i], Untagged({static_cast<uint16_t>(i % 4 < 2 ? 1 : 2)}));
  }
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0}));
  Send(3, {kA, kBcast});  // A moves to port 3
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({3}));
  // Port 0 remembers A as its own: it must see that A is not any more, and ask again.
  RunBurst(0, guest);
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0}));
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbMoves), 2u);
}

TEST_F(ForwarderTest, ACachedSourceIsStillRefreshedForAgeing) {
  ASSERT_TRUE(learner_->AddStatic(kB, 1).ok());
  const std::vector<TestFrame> guest = GuestBurst(kA, {kB, kBcast, kB});
  for (uint32_t now = 1; now <= 12; ++now) {
    RunBurst(0, guest, now);
    RunBurst(0, guest, now);  // the same second: nothing to refresh
    learner_->Age(now, 3);
    uint32_t seen = 0;
    for (const FdbEntryView& e : learner_->Entries()) {
      if (e.key == kA) seen = e.last_seen;
    }
    ASSERT_EQ(seen, now) << "A's last-seen time at " << now;
  }
  EXPECT_EQ(RunBurst(1, {{kB, kA}}, 12)[0], Untagged({0}));
}

TEST_F(ForwarderTest, ACachedSourceIsLearnedAgainAfterItsPortIsFlushed) {
  Send(1, {kB, kBcast});
  const std::vector<TestFrame> guest = GuestBurst(kA, {kB, kC});
  RunBurst(0, guest);
  RunBurst(0, guest);  // A port 0's last source
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0}));
  learner_->Flush(0);  // by generation: A's entry stays, no longer current
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0, 2, 3}));
  RunBurst(0, guest);  // port 0 must not take A as current: asked to learn it again
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0}));
}

// Runs whose source or destination is the port's last one among runs whose are not: the
// answers looked up land on their own runs.
TEST_F(ForwarderTest, RunsOfTheCachedSourceAndOthersInOneBurst) {
  const uint64_t kD = 0x0d0000000002, kE = 0x0e0000000002, kF = 0x0f0000000002;
  Send(1, {kB, kBcast});
  Send(2, {kE, kBcast});
  Send(3, {kF, kBcast});
  RunBurst(0, GuestBurst(kC, {kB}));  // C learned on port 0
  RunBurst(0, GuestBurst(kA, {kB}));
  RunBurst(0, GuestBurst(kA, {kB}));  // A port 0's last source, B its last destination
  std::vector<std::vector<model::Copy>> out =
      RunBurst(0, {{kA, kB}, {kA, kE}, {kC, kF}, {kA, kB}, {kD, kE}, {kA, kD}, {kC, kA},
                   {kA, kF}, {kC, kB}});
  const std::vector<Copies> want = {Untagged({1}), Untagged({2}),       Untagged({3}),
                                    Untagged({1}), Untagged({2}),       Untagged({1, 2, 3}),
                                    {},            Untagged({3}),       Untagged({1})};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[i], want[i]) << "frame " << i;
  EXPECT_EQ(RxDrops(0, RxDrop::kHairpin), 1u);  // C to A: both on port 0
  EXPECT_EQ(Send(1, {kB, kD}), Untagged({0}));  // D learned on port 0
}

TEST_F(ForwarderTest, FullTxQueueCountsQueueFull) {
  Send(1, {kB, kBcast});
  // Fill port 1's tx ring (4095 slots) so that only 3 more frames fit.
  std::vector<rte_mbuf*> filler;
  for (int i = 0; i < 4092; ++i) filler.push_back(MakeFrame(pool_, {kC, kC}));
  std::vector<rte_mbuf*> burst;
  for (uint32_t i = 0; i < 8; ++i) burst.push_back(MakeFrame(pool_, {kA, kB, -1, 50, i}));
  ASSERT_EQ(rte_eth_tx_burst(ports_[1]->eth_port(), 0, filler.data(), 4092), 4092);
  forwarder_->HandleBurst(0, burst.data(), 8);
  EXPECT_EQ(TxDrops(1, TxDrop::kQueueFull), 5u);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxPackets].Read(), 3u);
}

// Retries (tx_retries=): port 1's ring is filled so that 4 frames fit, then a burst of 64
// is sent to it. A guest that drains 4 frames at every transmit call gets 8 at the first
// (4 free + 4 drained) and 4 more at each retry; one that drains nothing gets the 4 that
// fit, and the retry that sends nothing ends them; a full ring gets no retry at all.
class TxRetryTest : public ForwarderTest {
 protected:
  static constexpr uint32_t kBurst = 64;
  // Sends kBurst frames A>B to port 1 with `free_slots` left in its ring; returns how many
  // port 1 took (those the drain took away included).
  uint64_t SendToSlowPort(uint16_t tx_retries, unsigned free_slots, unsigned drain_per_call,
                          unsigned drain_every = 1, uint64_t window_cycles = 0) {
    std::vector<PortSpec> specs(kPorts);
    specs[1].tx_retries = tx_retries;
    ForwarderOptions options;
    options.retry_window_cycles = window_cycles;
    Configure(specs, options);
    Send(1, {kB, kBcast});
    const uint64_t before = counters_.ports[1][PortCounter::kTxPackets].Read();
    std::vector<rte_mbuf*> filler;
    for (unsigned i = 0; i < 4095 - free_slots; ++i) filler.push_back(MakeFrame(pool_, {kC, kC}));
    EXPECT_EQ(rte_eth_tx_burst(ports_[1]->eth_port(), 0, filler.data(),
                               static_cast<uint16_t>(filler.size())), filler.size());
    ports_[1]->DrainOnTransmit(drain_per_call, drain_every);
    std::vector<rte_mbuf*> burst;
    for (uint32_t i = 0; i < kBurst; ++i) burst.push_back(MakeFrame(pool_, {kA, kB, -1, 50, i}));
    forwarder_->HandleBurst(0, burst.data(), kBurst);
    ports_[1]->DrainOnTransmit(0);
    const uint64_t took = counters_.ports[1][PortCounter::kTxPackets].Read() - before;
    EXPECT_EQ(took + TxDrops(1, TxDrop::kQueueFull), kBurst);
    for (rte_mbuf* m : ports_[1]->TakeSent()) rte_pktmbuf_free(m);
    return took;
  }
  uint64_t Retries() { return counters_.ports[1][PortCounter::kTxRetries].Read(); }
  uint64_t RetryCycles() { return counters_.ports[1][PortCounter::kTxRetryCycles].Read(); }
};

TEST_F(TxRetryTest, ADrainingGuestGetsMoreFramesWithEachRetry) {
  EXPECT_EQ(SendToSlowPort(kDefaultTxRetries, 4, 4), 8u + 8 * 4);
  EXPECT_EQ(Retries(), 8u);
  EXPECT_GT(RetryCycles(), 0u);
  EXPECT_EQ(TxDrops(1, TxDrop::kQueueFull), kBurst - 40);
}

TEST_F(TxRetryTest, RetriesStopWhenTheBurstIsSent) {
  EXPECT_EQ(SendToSlowPort(32, 4, 4), kBurst);  // 8 + 14 * 4
  EXPECT_EQ(Retries(), 14u);
}

TEST_F(TxRetryTest, NoRetriesWithTxRetriesZero) {
  EXPECT_EQ(SendToSlowPort(0, 4, 4), 8u);
  EXPECT_EQ(Retries(), 0u);
  EXPECT_EQ(RetryCycles(), 0u);
}

TEST_F(TxRetryTest, AStalledRingEndsRetriesAtTheFirstThatSendsNothing) {
  EXPECT_EQ(SendToSlowPort(kDefaultTxRetries, 4, 0), 4u);
  EXPECT_EQ(Retries(), 1u);
}

// A guest that frees descriptors only now and then (here at every second call): without a
// window the first retry that finds none ends them; within the window the retry waits for
// the ring to take more, and only calls that take frames count.
TEST_F(TxRetryTest, WithoutAWindowAGuestThatDrainsNowAndThenLosesTheRest) {
  EXPECT_EQ(SendToSlowPort(kDefaultTxRetries, 4, 4, 2, 0), 8u);  // 4, then 4, then none
  EXPECT_EQ(Retries(), 2u);
}

TEST_F(TxRetryTest, AWindowWaitsForAGuestThatDrainsNowAndThen) {
  const uint64_t second = rte_get_tsc_hz();
  EXPECT_EQ(SendToSlowPort(kDefaultTxRetries, 4, 4, 2, second), 4u + 8 * 4);
  EXPECT_EQ(Retries(), 8u);
}

TEST_F(TxRetryTest, AWindowEndsRetriesOnAStalledRing) {
  EXPECT_EQ(SendToSlowPort(kDefaultTxRetries, 4, 0, 1, rte_get_tsc_hz() / 100000), 4u);
  EXPECT_EQ(Retries(), 1u);  // the window that passed
}

TEST_F(TxRetryTest, AFullRingIsNotRetried) {
  EXPECT_EQ(SendToSlowPort(kDefaultTxRetries, 0, 0), 0u);
  EXPECT_EQ(Retries(), 0u);
  EXPECT_EQ(RetryCycles(), 0u);
}

// Ports: 0 access VLAN 10, 1 access VLAN 20, 2 trunk of 10 and 20 with native VLAN 30,
// 3 plain (every VLAN, untagged VLAN 0).
class VlanTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    std::vector<PortSpec> specs(kPorts);
    specs[0].access_vlan = 10;
    specs[1].access_vlan = 20;
    specs[2].trunk_vlans = {10, 20};
    specs[2].native_vlan = 30;
    Configure(specs);
  }
};

TEST_F(VlanTest, FloodsStayInTheirVlanWithTheRightTags) {
  EXPECT_EQ(Send(0, {kA, kBcast}), (Copies{{2, 10}, {3, 10}}));
  EXPECT_EQ(Send(2, {kB, kBcast, 20}), (Copies{{1, -1}, {3, 20}}));
  EXPECT_EQ(Send(2, {kC, kBcast}), (Copies{{3, 30}}));          // native VLAN 30
  EXPECT_EQ(Send(3, {kC, kBcast}), (Copies{}));                  // VLAN 0: nobody else
  EXPECT_EQ(Send(3, {kC, kBcast, 10}), (Copies{{0, -1}, {2, 10}}));
  EXPECT_EQ(Send(3, {kC, kBcast, 30}), (Copies{{2, -1}}));
}

TEST_F(VlanTest, UnicastIsLearnedPerVlan) {
  Send(0, {kA, kBcast});                                       // A in VLAN 10 on port 0
  EXPECT_EQ(Send(3, {kB, kA, 10}), (Copies{{0, -1}}));        // tag removed for access
  EXPECT_EQ(Send(2, {kC, kA, 10}), (Copies{{0, -1}}));
  EXPECT_EQ(Send(0, {kA, kB}), (Copies{{3, 10}}));            // tag added for the trunk
  EXPECT_EQ(Send(2, {kC, kA, 20}), (Copies{{1, -1}, {3, 20}}));  // A unknown in VLAN 20
  EXPECT_EQ(Send(1, {kA, kC}), (Copies{{2, 20}}));  // same MAC, VLAN 20, on port 1
  EXPECT_EQ(Send(3, {kB, kA, 10}), (Copies{{0, -1}}));  // VLAN 10's A did not move
  EXPECT_EQ(fdb_->size(), 5u);
}

TEST_F(VlanTest, FramesInVlansThePortDoesNotCarryAreDropped) {
  EXPECT_TRUE(Send(0, {kA, kBcast, 10}).empty());  // access ports take no tags
  EXPECT_TRUE(Send(2, {kA, kBcast, 40}).empty());  // not in the trunk
  EXPECT_TRUE(Send(3, {kA, kBcast, 4095}).empty());  // reserved
  EXPECT_EQ(RxDrops(0, RxDrop::kVlan), 1u);
  EXPECT_EQ(RxDrops(2, RxDrop::kVlan), 1u);
  EXPECT_EQ(RxDrops(3, RxDrop::kVlan), 1u);
  EXPECT_EQ(fdb_->size(), 0u);  // and they taught nothing
}

// Source 00:00:00:00:00:00 is no station's address: malformed, never learned, whether it
// starts a burst, sits inside a run of valid frames or repeats.
TEST_F(ForwarderTest, ZeroSourceMacIsMalformed) {
  EXPECT_TRUE(Send(0, {0, kBcast}).empty());
  EXPECT_TRUE(Send(0, {0, kA, 5}).empty());
  EXPECT_EQ(RxDrops(0, RxDrop::kMalformed), 2u);
  auto out = RunBurst(1, {{kB, kBcast}, {0, kBcast}, {0, kBcast}, {kB, kBcast}, {0, kB}});
  EXPECT_EQ(out[0], Untagged({0, 2, 3}));
  EXPECT_TRUE(out[1].empty());
  EXPECT_TRUE(out[2].empty());
  EXPECT_EQ(out[3], Untagged({0, 2, 3}));
  EXPECT_TRUE(out[4].empty());
  EXPECT_EQ(RxDrops(1, RxDrop::kMalformed), 3u);
  EXPECT_EQ(fdb_->size(), 1u) << "only B was learned";
  EXPECT_EQ(counters_.ports[1][PortCounter::kRxPackets].Read(), 5u);
}

// The VLAN hopping: a wire trunk of VLAN 10 (port 0) and a guest trunk of VLAN 20
// with native VLAN 10 (port 1). A frame tagged [10][20] from the wire belongs to VLAN 10,
// which leaves port 1 untagged: stripping the outer tag would deliver it in VLAN 20. It is
// not sent there; ports that carry VLAN 10 tagged still get it whole.
class VlanHoppingTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    std::vector<PortSpec> specs(kPorts);
    specs[0].trunk_vlans = {10};
    specs[1].trunk_vlans = {20};
    specs[1].native_vlan = 10;
    specs[2].trunk_vlans = {10, 20};
    specs[3].access_vlan = 10;
    Configure(specs);
  }
  TestFrame DoubleTagged(uint64_t src, uint64_t dst, uint16_t inner_tpid = 0x8100) {
    TestFrame f{src, dst, 10};
    f.inner_tag = 20;
    f.inner_tpid = inner_tpid;
    return f;
  }
};

TEST_F(VlanHoppingTest, DoubleTaggedFramesAreNotStrippedIntoTheInnerVlan) {
  for (uint16_t tpid : {0x8100, 0x88a8, 0x9100}) {
    auto out = RunBurst(0, {DoubleTagged(kA, kBcast, tpid)});
    EXPECT_EQ(out[0], (Copies{{2, 10}})) << std::hex << tpid;  // not 1 (native) nor 3 (access)
  }
  EXPECT_EQ(TxDrops(1, TxDrop::kVlan), 3u);
  EXPECT_EQ(TxDrops(3, TxDrop::kVlan), 3u);
  EXPECT_EQ(TxDrops(2, TxDrop::kVlan), 0u);
  // Whole on the tagged port: both tags, the inner one unchanged.
  std::vector<rte_mbuf*> burst = {MakeFrame(pool_, DoubleTagged(kA, kBcast))};
  forwarder_->HandleBurst(0, burst.data(), 1);
  std::vector<rte_mbuf*> sent = ports_[2]->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  TestFrame got = ParseFrame(sent[0]);
  EXPECT_EQ(got.tag, 10);
  EXPECT_EQ(got.inner_tag, 20);
  rte_pktmbuf_free(sent[0]);
  Collect(1);
  // Unicast to a MAC learned behind the guest's native VLAN: dropped as well.
  Send(1, {kB, kBcast});  // B in VLAN 10 on port 1
  EXPECT_TRUE(RunBurst(0, {DoubleTagged(kA, kB)})[0].empty());
  Send(3, {kC, kBcast});  // C in VLAN 10 on the access port
  EXPECT_TRUE(RunBurst(0, {DoubleTagged(kA, kC)})[0].empty());
  EXPECT_EQ(TxDrops(1, TxDrop::kVlan), 5u);  // 4 broadcasts above (one whole), 1 unicast
  EXPECT_EQ(TxDrops(3, TxDrop::kVlan), 5u);
  // A frame with a single tag still goes everywhere in its VLAN, untagged where it should.
  EXPECT_EQ(Send(0, {kA, kBcast, 10}), (Copies{{1, -1}, {2, 10}, {3, -1}}));
  // A double-tagged frame that keeps its outer tag is fine: port 1 sends VLAN 20 tagged.
  TestFrame in20{kB, kBcast, 20};
  in20.inner_tag = 30;
  EXPECT_EQ(RunBurst(1, {in20})[0], (Copies{{2, 20}}));
}

// Every received frame is forwarded or dropped with a reason: a flood that finds no other
// port up in its VLAN is a receive drop (no_destination); one whose only destinations
// refuse it for their MTU is counted there (mtu), not twice.
TEST_F(ForwarderTest, FloodsWithNobodyToHearThemAreCountedNoDestination) {
  datapath_.up_mask.store(0b0001);  // only the sender is up
  EXPECT_TRUE(RunBurst(0, {{kA, kBcast}, {kA, kBcast}, {kA, kB}})[0].empty());
  EXPECT_EQ(RxDrops(0, RxDrop::kNoDestination), 3u);
  EXPECT_EQ(fdb_->size(), 1u) << "its source is still learned";
  datapath_.up_mask.store(0b1111);
  std::vector<PortSpec> specs(kPorts);
  specs[0].access_vlan = 5;
  specs[1].access_vlan = 6;  // nobody else carries VLAN 6
  for (uint16_t p : {2, 3}) {
    specs[p].trunk_vlans = {5};
    specs[p].mtu = 1000;
  }
  Configure(specs);
  EXPECT_TRUE(Send(1, {kB, kBcast}).empty());
  EXPECT_EQ(RxDrops(1, RxDrop::kNoDestination), 1u);
  EXPECT_TRUE(Send(0, {kA, kBcast, -1, 1200}).empty());  // too big for both plain ports
  EXPECT_EQ(RxDrops(0, RxDrop::kNoDestination), 3u);
  EXPECT_EQ(TxDrops(2, TxDrop::kMtu), 1u);
  EXPECT_EQ(TxDrops(3, TxDrop::kMtu), 1u);
}

// A device that reports no link change (memif) is read by the workers while its bit in
// the up mask is clear: a guest that just connected is flooded to from the first burst,
// not from the control thread's next look; one still down is not.
TEST_F(ForwarderTest, LinkPolledPortsAreReadWhileTheirBitIsClear) {
  table_.ports[2].link_polled = true;
  table_.Seal();
  datapath_.up_mask.store(0b1011);  // port 2 down, as the control thread last saw it
  ASSERT_EQ(rte_eth_dev_set_link_down(ports_[2]->eth_port()), 0);
  EXPECT_EQ(Send(0, {kA, kBcast}), Untagged({1, 3}));
  ASSERT_EQ(rte_eth_dev_set_link_up(ports_[2]->eth_port()), 0);
  EXPECT_EQ(Send(0, {kA, kBcast}), Untagged({1, 2, 3}));
  EXPECT_EQ(TxDrops(2, TxDrop::kLinkDown), 0u);
  // A port that reports its link changes: the mask alone decides.
  table_.ports[2].link_polled = false;
  table_.Seal();
  EXPECT_EQ(Send(0, {kA, kBcast}), Untagged({1, 3}));
}

// lock=1: the first source a worker sees takes the lock at once. The guest's first burst
// of 256 frames from 256 sources (the worker hands the forwarder 64 at a time, before the
// control thread ever runs) delivers the first source's frame only; the rest are spoofed.
// Again after the guest disconnects and a new one connects.
TEST_F(ForwarderTest, ALockedPortTakesOnlyItsFirstSourceFromTheFirstFrame) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].lock_mac = true;
  Configure(specs);
  uint64_t spoofed = 0;
  for (uint64_t round = 0; round < 2; ++round) {
    const uint64_t base = (round + 1) << 40;
    auto source = [&](uint32_t i) { return base | (uint64_t{i + 1} << 8); };
    for (uint32_t i = 0; i < 256; i += kMaxBurst) {
      std::vector<rte_mbuf*> burst;
      for (uint32_t j = 0; j < kMaxBurst; ++j) {
        burst.push_back(MakeFrame(pool_, {source(i + j), kBcast, -1, 50, i + j}));
      }
      forwarder_->HandleBurst(0, burst.data(), kMaxBurst);
    }
    auto out = Collect(256);
    EXPECT_EQ(out[0], Untagged({1, 2, 3})) << "round " << round;
    for (uint32_t i = 1; i < 256; ++i) ASSERT_TRUE(out[i].empty()) << "frame " << i;
    spoofed += 255;
    EXPECT_EQ(RxDrops(0, RxDrop::kSpoofed), spoofed);
    // The control thread publishes the claim: the port is locked to the first source.
    learner_->Poll(0);
    const PortMacs& macs = datapath_.port_macs[0];
    ASSERT_EQ(macs.count.load(), 1u);
    EXPECT_EQ(macs.macs[0].load(), source(0));
    EXPECT_EQ(fdb_->learned(0), 1u);
    EXPECT_EQ(Send(0, {source(0), kBcast}), Untagged({1, 2, 3}));
    EXPECT_TRUE(Send(0, {source(1), kBcast}).empty());
    EXPECT_EQ(RxDrops(0, RxDrop::kSpoofed), ++spoofed);
    // The guest goes (the bridge flushes its MACs and arms the lock again); a new one comes.
    learner_->PortDown(0);
    learner_->Poll(0);
  }
}

// Another worker polling the same port shares the claim: its first frame, from another
// source, is spoofed too.
TEST_F(ForwarderTest, TheLockClaimIsSharedByEveryWorker) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].lock_mac = true;
  Configure(specs);
  ForwarderOptions second_options;
  second_options.worker = 1;
  Forwarder second(datapath_, second_options, counters_, *learn_);
  rte_mbuf* a = MakeFrame(pool_, {kA, kBcast});
  forwarder_->HandleBurst(0, &a, 1);
  rte_mbuf* b = MakeFrame(pool_, {kB, kBcast, -1, 50, 1});
  second.HandleBurst(0, &b, 1);
  rte_mbuf* a_again = MakeFrame(pool_, {kA, kBcast, -1, 50, 2});
  second.HandleBurst(0, &a_again, 1);
  auto out = Collect(3);
  EXPECT_EQ(out[0], Untagged({1, 2, 3}));
  EXPECT_TRUE(out[1].empty());
  EXPECT_EQ(out[2], Untagged({1, 2, 3}));
  EXPECT_EQ(RxDrops(0, RxDrop::kSpoofed), 1u);
}

// Priority-tagged frames (VID 0, 802.1Q): they belong to the port's untagged VLAN; the tag
// is kept with its priority and carries that VLAN where the frame leaves tagged, and is
// removed where it leaves untagged.
TEST_F(VlanTest, PriorityTaggedFramesJoinThePortsUntaggedVlan) {
  TestFrame prio{kA, kBcast, 0};
  prio.pcp = 5;
  // Access port 0 (VLAN 10): accepted, out on the trunk tagged 10 with priority 5, on the
  // plain port tagged 10 too.
  std::vector<rte_mbuf*> burst = {MakeFrame(pool_, prio)};
  forwarder_->HandleBurst(0, burst.data(), 1);
  for (uint16_t p : {2, 3}) {
    std::vector<rte_mbuf*> sent = ports_[p]->TakeSent();
    ASSERT_EQ(sent.size(), 1u) << "port " << p;
    TestFrame got = ParseFrame(sent[0]);
    EXPECT_EQ(got.tag, 10) << "port " << p;
    EXPECT_EQ(got.pcp, 5) << "port " << p;
    EXPECT_EQ(got.payload, prio.payload);
    rte_pktmbuf_free(sent[0]);
  }
  EXPECT_TRUE(ports_[1]->TakeSent().empty());
  EXPECT_EQ(RxDrops(0, RxDrop::kVlan), 0u);
  // Trunk port 2 with native VLAN 30: into VLAN 30, which the plain port carries tagged.
  prio.src = kB;
  burst = {MakeFrame(pool_, prio)};
  forwarder_->HandleBurst(2, burst.data(), 1);
  std::vector<rte_mbuf*> sent = ports_[3]->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(ParseFrame(sent[0]).tag, 30);
  EXPECT_EQ(ParseFrame(sent[0]).pcp, 5);
  rte_pktmbuf_free(sent[0]);
  Collect(1);
  // Learned in that VLAN: unicast back from the access... from the plain port, untagged
  // on the trunk's native VLAN.
  EXPECT_EQ(Send(3, {kC, kB, 30}), (Copies{{2, -1}}));
  // The plain port: VLAN 0, sent untagged to nobody else here (no other port has VLAN 0).
  EXPECT_TRUE(Send(3, {kC, kBcast, 0}).empty());
  // Untagged on the access port: the priority tag is removed there.
  TestFrame to_access{kC, kA, 10};
  to_access.pcp = 3;
  EXPECT_EQ(RunBurst(3, {to_access})[0], (Copies{{0, -1}}));
}

TEST_F(ForwarderTest, PriorityTaggedFramesOnATrunkWithoutNativeVlanAreDropped) {
  std::vector<PortSpec> specs(kPorts);
  specs[1].trunk_vlans = {7};
  specs[2].access_vlan = 7;
  Configure(specs);
  TestFrame prio{kA, kBcast, 0};
  prio.pcp = 6;
  EXPECT_TRUE(RunBurst(1, {prio})[0].empty());
  EXPECT_EQ(RxDrops(1, RxDrop::kVlan), 1u);
  // On a plain port they are VLAN 0 and leave the plain ports untagged.
  EXPECT_EQ(RunBurst(0, {prio})[0], Untagged({3}));
  // On the access port: VLAN 7, tagged 7 on the trunk with the priority kept.
  prio.src = kB;
  std::vector<rte_mbuf*> burst = {MakeFrame(pool_, prio)};
  forwarder_->HandleBurst(2, burst.data(), 1);
  std::vector<rte_mbuf*> sent = ports_[1]->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(ParseFrame(sent[0]).tag, 7);
  EXPECT_EQ(ParseFrame(sent[0]).pcp, 6);
  rte_pktmbuf_free(sent[0]);
  Collect(1);
}

TEST_F(ForwarderTest, TrunkWithoutNativeVlanDropsUntaggedFrames) {
  std::vector<PortSpec> specs(kPorts);
  specs[1].trunk_vlans = {7};
  Configure(specs);
  EXPECT_TRUE(Send(1, {kA, kBcast}).empty());
  EXPECT_EQ(RxDrops(1, RxDrop::kVlan), 1u);
  EXPECT_EQ(Send(0, {kB, kBcast, 7}), (Copies{{1, 7}, {2, 7}, {3, 7}}));
}

TEST_F(ForwarderTest, FramesOverTheEgressMtuAreDroppedThereOnly) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].mtu = 9000;
  specs[1].mtu = 9000;
  specs[2].mtu = 1500;
  specs[3].mtu = 4000;
  Configure(specs);
  // A jumbo broadcast (a five-segment chain) reaches port 1 whole.
  EXPECT_EQ(Send(0, {kA, kBcast, -1, 9000}), Untagged({1}));
  EXPECT_EQ(TxDrops(2, TxDrop::kMtu), 1u);
  EXPECT_EQ(TxDrops(3, TxDrop::kMtu), 1u);
  EXPECT_EQ(Send(1, {kB, kA, -1, 4000}), Untagged({0}));
  EXPECT_EQ(Send(0, {kA, kB, -1, 1500}), Untagged({1}));
  Send(3, {kC, kA});
  EXPECT_TRUE(Send(0, {kA, kC, -1, 4001}).empty());
  EXPECT_EQ(TxDrops(3, TxDrop::kMtu), 2u);
  EXPECT_EQ(Send(0, {kA, kC, 5, 4000}), (Copies{{1, 5}, {3, 5}}));  // C unknown in VLAN 5
  EXPECT_EQ(TxDrops(2, TxDrop::kMtu), 2u);
}

TEST_F(ForwarderTest, LearnLimitedFramesAreForwardedAndCounted) {
  std::vector<PortSpec> specs(kPorts);
  specs[2].learn_limit = 2;
  Configure(specs);
  EXPECT_EQ(RunBurst(2, {{0x0200, kBcast}, {0x0400, kBcast}, {0x0600, kBcast}}).size(), 3u);
  EXPECT_EQ(fdb_->learned(2), 2u);
  // The burst's third MAC was refused by the control thread.
  EXPECT_EQ(Refused(2, PortCounter::kLearnLimited), 1u);
  EXPECT_EQ(Send(2, {0x0800, kA}), Untagged({0, 1, 3}));  // still forwarded
  EXPECT_EQ(counters_.ports[2][PortCounter::kLearnLimited].Read(), 1u);  // counted by the worker
  EXPECT_EQ(Send(0, {kA, 0x0200}), Untagged({2}));  // what was learned works
}

TEST_F(ForwarderTest, StaticEntriesDoNotMove) {
  ASSERT_TRUE(learner_->AddStatic(MacKey(0, reinterpret_cast<const uint8_t*>(&kB)), 1).ok());
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));
  Send(2, {kB, kBcast});  // B claimed elsewhere
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));
  datapath_.up_mask.store(0b1101);
  learner_->PortDown(1);  // port 1 down: still B's port
  EXPECT_TRUE(Send(0, {kA, kB}).empty());
  EXPECT_EQ(TxDrops(1, TxDrop::kLinkDown), 1u);
}

TEST_F(ForwarderTest, PortSecurityDropsForeignSourcesWithoutLearningThem) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].allowed_macs = {kA, kB};
  Configure(specs);
  EXPECT_EQ(Send(0, {kA, kBcast}), Untagged({1, 2, 3}));  // its own MACs pass
  EXPECT_TRUE(Send(0, {kC, kBcast}).empty());             // another source does not
  EXPECT_EQ(RxDrops(0, RxDrop::kSpoofed), 1u);
  // A burst mixing runs of allowed and foreign sources: only the foreign runs go.
  std::vector<std::vector<model::Copy>> out =
      RunBurst(0, {{kB, kBcast}, {kC, kBcast}, {kC, kBcast}, {kA, kBcast}, {0x0e0000000002, kA}});
  EXPECT_EQ(out[0], Untagged({1, 2, 3}));
  EXPECT_TRUE(out[1].empty());
  EXPECT_TRUE(out[2].empty());
  EXPECT_EQ(out[3], Untagged({1, 2, 3}));
  EXPECT_TRUE(out[4].empty());
  EXPECT_EQ(RxDrops(0, RxDrop::kSpoofed), 4u);
  EXPECT_EQ(fdb_->size(), 2u) << "foreign sources are never learned";
  // Dropped frames were received.
  EXPECT_EQ(counters_.ports[0][PortCounter::kRxPackets].Read(), 7u);
  // Other ports are not secured.
  EXPECT_EQ(Send(1, {kC, kBcast}), Untagged({0, 2, 3}));
}

TEST_F(ForwarderTest, FlushIntervalHoldsFramesForAFullerBurst) {
  ForwarderOptions options;
  options.flush_cycles = 1'000'000'000'000;
  options.flush_batch = 8;
  Configure(std::vector<PortSpec>(kPorts), options);
  Send(1, {kB, kBcast});  // flooded: held
  EXPECT_TRUE(forwarder_->HasPending());
  forwarder_->FlushAll();
  Collect(1);
  std::vector<TestFrame> frames(5, TestFrame{kA, kB});
  EXPECT_TRUE(RunBurst(0, frames)[0].empty());  // 5 < 8: waiting
  forwarder_->FlushExpired(0);
  EXPECT_TRUE(Collect(5)[0].empty());  // deadline not reached
  forwarder_->FlushExpired(UINT64_MAX);
  auto out = Collect(5);
  for (auto& copies : out) EXPECT_EQ(copies, Untagged({1}));
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxBursts].Read(), 1u);  // five frames, one burst
  frames.resize(8, TestFrame{kA, kB});
  out = RunBurst(0, frames);  // a batch's worth goes at once
  for (auto& copies : out) EXPECT_EQ(copies, Untagged({1}));
  EXPECT_FALSE(forwarder_->HasPending());
}

// A million distinct source MACs through the pipeline: all learned, within capacity, and
// all of them found again.
TEST_F(ForwarderTest, OneMillionSourceMacsAreLearned) {
  constexpr uint32_t kMacs = 1'000'000;
  // The guest's MACs, a static one, and the other port slots' reserves.
  fdb_ = *Fdb::Create(name_ + "fdb1m", kMacs + 1 + (kMaxPorts - 1) * 256);
  ASSERT_EQ(fdb_->reserve(), 256u);
  datapath_.fdb = fdb_.get();
  Configure(std::vector<PortSpec>(kPorts));
  ASSERT_TRUE(learner_->AddStatic(kB, 1).ok());
  auto mac = [](uint32_t i) { return (uint64_t{i} << 16) | 0x0200; };  // unicast, distinct
  std::vector<rte_mbuf*> burst(kMaxBurst);
  for (uint32_t i = 0; i < kMacs; i += kMaxBurst) {
    uint16_t n = static_cast<uint16_t>(std::min<uint32_t>(kMaxBurst, kMacs - i));
    for (uint16_t j = 0; j < n; ++j) burst[j] = MakeFrame(pool_, {mac(i + j), kB});
    forwarder_->HandleBurst(0, burst.data(), n);
    learner_->Poll(0);
    for (rte_mbuf* m : ports_[1]->TakeSent()) rte_pktmbuf_free(m);
  }
  EXPECT_EQ(fdb_->learned(0), kMacs);
  EXPECT_EQ(fdb_->size(), kMacs + 1);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxPackets].Read(), kMacs);
  Send(0, {mac(kMacs), kB});  // the table is full: forwarded, not learned
  EXPECT_EQ(fdb_->size(), kMacs + 1);
  std::mt19937 rng(1);
  for (int round = 0; round < 100; ++round) {
    std::vector<TestFrame> frames;
    for (int j = 0; j < 32; ++j) {
      frames.push_back({kB, mac(static_cast<uint32_t>(rng() % kMacs)), -1, 50});
    }
    for (const auto& copies : RunBurst(1, frames)) ASSERT_EQ(copies, Untagged({0}));
  }
}

// A guest spraying new source MACs past its learn limit neither grows the table nor
// disturbs two other guests talking to each other.
TEST_F(ForwarderTest, LearnLimitFloodDoesNotDisturbOtherPorts) {
  std::vector<PortSpec> specs(kPorts);
  specs[2].learn_limit = 100;
  Configure(specs);
  Send(0, {kA, kBcast});
  Send(1, {kB, kBcast});
  Send(3, {kC, kBcast});
  constexpr uint32_t kSpray = 1600 * 64;
  uint64_t a_to_b = 0, b_to_a = 0;
  for (uint32_t i = 0; i < kSpray; i += 64) {
    std::vector<rte_mbuf*> spray;
    for (uint32_t j = 0; j < 64; ++j) {
      spray.push_back(MakeFrame(pool_, {(uint64_t{i + j + 1} << 16) | 0x0600, kC}));
    }
    forwarder_->HandleBurst(2, spray.data(), 64);
    for (rte_mbuf* m : ports_[3]->TakeSent()) rte_pktmbuf_free(m);
    auto ab = RunBurst(0, std::vector<TestFrame>(16, TestFrame{kA, kB}));
    auto ba = RunBurst(1, std::vector<TestFrame>(16, TestFrame{kB, kA}));
    for (const auto& copies : ab) ASSERT_EQ(copies, Untagged({1}));
    for (const auto& copies : ba) ASSERT_EQ(copies, Untagged({0}));
    a_to_b += ab.size();
    b_to_a += ba.size();
  }
  EXPECT_EQ(fdb_->learned(2), 100u);
  EXPECT_EQ(fdb_->size(), 103u);
  EXPECT_EQ(counters_.ports[2][PortCounter::kLearnLimited].Read() +
                Refused(2, PortCounter::kLearnLimited),
            kSpray - 100);
  // All sprayed + 2 broadcasts; + the two broadcasts.
  EXPECT_EQ(counters_.ports[3][PortCounter::kTxPackets].Read(), kSpray + 2);
  EXPECT_EQ(counters_.ports[1][PortCounter::kTxPackets].Read(), a_to_b + 2);
  EXPECT_EQ(counters_.ports[0][PortCounter::kTxPackets].Read(), b_to_a + 2);
}

// A guest's TCP super-frame (virtio GSO) as the vhost PMD delivers it: a chain, flagged
// RX_LRO with the guest's segment size and a partial checksum.
rte_mbuf* SuperFrame(rte_mempool* pool, uint32_t payload, uint16_t segment_size) {
  Built b = Build({false, true, false, false, payload});
  b.bytes.resize(b.end);
  rte_mbuf* head = nullptr;
  for (uint32_t off = 0; off < b.bytes.size(); off += 2000) {
    const uint32_t len = std::min<uint32_t>(2000, b.bytes.size() - off);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(len)), b.bytes.data() + off, len);
    if (head == nullptr) {
      head = m;
    } else {
      rte_pktmbuf_chain(head, m);
    }
  }
  head->ol_flags = RTE_MBUF_F_RX_LRO | RTE_MBUF_F_RX_L4_CKSUM_NONE;
  head->tso_segsz = segment_size;
  return head;
}
constexpr uint64_t kSuperDst = 0x151413121110;  // test_frames.h's destination MAC

// A segment size no TCP stack sends (1 byte: 60,000 segments), or one that needs more
// segments than hvswitch makes of a frame (100 bytes: 600), is the sender's bad offload
// request, whichever ports it was for; a real one that a destination's MTU cannot take
// stays an mtu drop there.
TEST_F(ForwarderTest, SuperFrameWithNonsenseSegmentSizeIsTheSendersBadOffload) {
  table_.ports[0].rx_offload = true;
  for (uint16_t segment_size : {1, 7, 100}) {
    rte_mbuf* m = SuperFrame(pool_, 60000, segment_size);
    forwarder_->HandleBurst(0, &m, 1);  // flooded: destination unknown
  }
  EXPECT_EQ(RxDrops(0, RxDrop::kBadOffload), 3u);
  for (uint16_t p = 1; p < kPorts; ++p) {
    EXPECT_EQ(TxDrops(p, TxDrop::kMtu), 0u) << "port " << p;
    EXPECT_TRUE(ports_[p]->TakeSent().empty());
  }
  // Fewer than 8 bytes per segment is nonsense even where the frame would go whole.
  datapath_.csum_capable_mask.store(0b1110);
  datapath_.tso4_capable_mask.store(0b1110);
  rte_mbuf* m = SuperFrame(pool_, 60000, 1);
  forwarder_->HandleBurst(0, &m, 1);
  EXPECT_EQ(RxDrops(0, RxDrop::kBadOffload), 4u);
  // A real segment size to a port whose MTU leaves too little room per segment: mtu there.
  datapath_.csum_capable_mask.store(0);
  datapath_.tso4_capable_mask.store(0);
  std::vector<PortSpec> specs(kPorts);
  specs[1].mtu = 68;  // 28 bytes per segment: more segments than hvswitch makes
  Configure(specs);
  table_.ports[0].rx_offload = true;
  Send(1, {kSuperDst, kBcast});
  m = SuperFrame(pool_, 60000, 1448);
  forwarder_->HandleBurst(0, &m, 1);
  EXPECT_EQ(TxDrops(1, TxDrop::kMtu), 1u);
  EXPECT_EQ(RxDrops(0, RxDrop::kBadOffload), 4u);
  EXPECT_TRUE(ports_[1]->TakeSent().empty());
  // Segmented where it fits.
  m = SuperFrame(pool_, 6000, 1448);
  Send(2, {kSuperDst, kBcast});  // the destination moves to port 2 (MTU 1500)
  forwarder_->HandleBurst(0, &m, 1);
  std::vector<rte_mbuf*> sent = ports_[2]->TakeSent();
  EXPECT_EQ(sent.size(), 5u);
  for (rte_mbuf* s : sent) rte_pktmbuf_free(s);
}

// The full-table leak: one port sprays 100,000 random source MACs at default
// settings (a 65,536-entry table). Two other ports must still learn their MACs, and their
// unicast must never be flooded to the sprayer.
TEST_F(ForwarderTest, FullTableStillLearnsOtherPortsAndNeverLeaksTheirUnicast) {
  // Port 2 is a wire port (no learn limit by default).
  std::mt19937_64 rng(12);
  constexpr uint32_t kSpray = 100'000;
  for (uint32_t i = 0; i < kSpray; i += kMaxBurst) {
    std::vector<rte_mbuf*> spray;
    for (uint32_t j = 0; j < kMaxBurst && i + j < kSpray; ++j) {
      const uint64_t mac = (rng() & 0xfefffffffffe) | 0x020000000000;  // unicast, local
      spray.push_back(MakeFrame(pool_, {mac, kC}));
    }
    forwarder_->HandleBurst(2, spray.data(), static_cast<uint16_t>(spray.size()));
    learner_->Poll(0);
    for (uint16_t p = 0; p < kPorts; ++p) {
      for (rte_mbuf* m : ports_[p]->TakeSent()) rte_pktmbuf_free(m);
    }
  }
  // Two guests arrive and talk: they learn, and nothing of theirs reaches the sprayer.
  Send(0, {kA, kBcast});
  Send(1, {kB, kBcast});
  uint64_t leaked = 0;
  for (int i = 0; i < 100; ++i) {
    for (const auto& copies : RunBurst(0, {{kA, kB}})) {
      EXPECT_EQ(copies, Untagged({1}));
      for (const model::Copy& c : copies) leaked += c.port == 2;
    }
    for (const auto& copies : RunBurst(1, {{kB, kA}})) {
      EXPECT_EQ(copies, Untagged({0}));
      for (const model::Copy& c : copies) leaked += c.port == 2;
    }
  }
  EXPECT_EQ(leaked, 0u) << "of 200 unicast frames";
  EXPECT_EQ(fdb_->learned(0), 1u);
  EXPECT_EQ(fdb_->learned(1), 1u);
  EXPECT_LE(fdb_->size(), fdb_->capacity());
  // The sprayer holds its reserve and the shared rest; every other frame of its is counted
  // as not learned for a full table (by the control thread until the workers were told,
  // then by the workers), none for a learn limit (a wire port has none by default).
  const uint64_t learned = fdb_->learned(2);
  EXPECT_EQ(learned, fdb_->reserve() + fdb_->shared_capacity());
  EXPECT_EQ(counters_.ports[2][PortCounter::kLearnTableFull].Read() +
                Refused(2, PortCounter::kLearnTableFull),
            kSpray - learned);
  EXPECT_GT(counters_.ports[2][PortCounter::kLearnTableFull].Read(), 0u);
  EXPECT_EQ(counters_.ports[2][PortCounter::kLearnLimited].Read() +
                Refused(2, PortCounter::kLearnLimited),
            0u);
  EXPECT_EQ(datapath_.learn_full_mask.load(), 0b0100u);
  EXPECT_EQ(datapath_.learn_blocked_mask.load(), 0b0100u);
  EXPECT_EQ(counters_[CoreCounter::kLearnQueueDrops].Read(), 0u);
}

// The same spray from a guest port: its default learn limit (1024) stops it long before
// the table fills.
TEST_F(ForwarderTest, AGuestPortsDefaultLearnLimitStopsASpray) {
  std::vector<PortSpec> specs(kPorts);
  specs[2].driver = FindPortDriver("vhost-user");
  Configure(specs);
  std::mt19937_64 rng(13);
  constexpr uint32_t kSpray = 320 * kMaxBurst;
  for (uint32_t i = 0; i < kSpray; i += kMaxBurst) {
    std::vector<rte_mbuf*> spray;
    for (uint32_t j = 0; j < kMaxBurst; ++j) {
      spray.push_back(MakeFrame(pool_, {(rng() & 0xfefffffffffe) | 0x020000000000, kC}));
    }
    forwarder_->HandleBurst(2, spray.data(), kMaxBurst);
    learner_->Poll(0);
    for (uint16_t p = 0; p < kPorts; ++p) {
      for (rte_mbuf* m : ports_[p]->TakeSent()) rte_pktmbuf_free(m);
    }
  }
  EXPECT_EQ(fdb_->learned(2), kDefaultGuestLearnLimit);
  EXPECT_EQ(counters_.ports[2][PortCounter::kLearnLimited].Read() +
                Refused(2, PortCounter::kLearnLimited),
            kSpray - kDefaultGuestLearnLimit);
  EXPECT_EQ(counters_.ports[2][PortCounter::kLearnTableFull].Read() +
                Refused(2, PortCounter::kLearnTableFull),
            0u);
  EXPECT_EQ(datapath_.learn_full_mask.load(), 0u);
  EXPECT_EQ(datapath_.learn_blocked_mask.load(), 0b0100u);
}

// A learn ring that is full loses the request, counted per worker; the source asks again.
TEST_F(ForwarderTest, LearnRequestsLostToAFullRingAreCounted) {
  learn_ = *LearnQueue::Create(name_ + "learn_small", 64);  // 63 requests fit
  Configure(std::vector<PortSpec>(kPorts));
  std::vector<rte_mbuf*> burst;
  for (uint32_t i = 0; i < kMaxBurst; ++i) {
    burst.push_back(MakeFrame(pool_, {(uint64_t{i + 1} << 16) | 0x0200, kBcast}));
  }
  forwarder_->HandleBurst(0, burst.data(), kMaxBurst);
  EXPECT_EQ(counters_[CoreCounter::kLearnQueueDrops].Read(), 1u);
  learner_->Poll(0);
  EXPECT_EQ(fdb_->learned(0), 63u);
  for (uint16_t p = 0; p < kPorts; ++p) {
    for (rte_mbuf* m : ports_[p]->TakeSent()) rte_pktmbuf_free(m);
  }
}

std::string Explain(const model::BridgeModel& model, const TestFrame& f, uint16_t in) {
  int vlan = model.port(in).Ingress(f.tag);
  uint64_t key = model::BridgeModel::Key(vlan, f.dst);
  auto it = model.table().find(key);
  std::string out = " | model: vlan " + std::to_string(vlan);
  if (it != model.table().end()) {
    out += " dst on " + std::to_string(it->second.port) + (it->second.is_static ? " static" : "");
  }
  for (uint16_t p = 0; p < 4; ++p) out += " learned" + std::to_string(p) + "=" + std::to_string(model.Learned(p));
  return out;
}

// Random bursts with VLAN configurations, MTUs, learn limits, port security (mac=, lock=1),
// a mirror session (rx and tx of some ports, with or without a pushed tag), ip= (frames
// IPv4 or ARP from bound and unbound addresses),
// guardrails (policing by frames or bytes, storm control of one class, BPDU guard; meters
// frozen: buckets of their burst), frames to reserved addresses, static entries, ports going up and down (and flushed), ageing; frames untagged, tagged,
// priority-tagged and double-tagged, from good, group and all-zero sources: every frame
// leaves exactly where and how the reference model says, the tables agree, and every
// received frame is accounted for: forwarded, or dropped with the model's reason (on
// receive, or on transmit at each of its destinations).
TEST_F(ForwarderTest, MatchesReferenceModelOnRandomBursts) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> macs;
  for (uint64_t i = 1; i <= 10; ++i) macs.push_back(i << 8 | (i << 40));
  const uint64_t static_mac = 0x0b00;
  macs.push_back(static_mac);
  macs.push_back(kBcast);
  macs.push_back(0x0000005e0001 | 1);
  macs.push_back(model::BridgeModel::kStp);  // 01:80:c2:00:00:00, a BPDU
  macs.push_back(0x0e0000c28001);            // 01:80:c2:00:00:0e, LLDP: reserved
  macs.push_back(0x100000c28001);            // 01:80:c2:00:00:10: not reserved
  const int tags[] = {-1, -1, 0, 1, 2, 3, 9};
  // IPv4 sources (network order): 10.0.0.1-3.
  const uint32_t ips[] = {0x0100000a, 0x0200000a, 0x0300000a};
  for (int config = 0; config < 12; ++config) {
    std::vector<PortSpec> specs(kPorts);
    for (PortSpec& s : specs) {
      switch (rng() % 3) {
        case 0: break;  // plain
        case 1: s.access_vlan = static_cast<uint16_t>(1 + rng() % 3); break;
        case 2:
          for (uint16_t v = 1; v <= 3; ++v) {
            if (rng() % 2) s.trunk_vlans.push_back(v);
          }
          if (s.trunk_vlans.empty()) s.trunk_vlans.push_back(2);
          if (rng() % 2) s.native_vlan = static_cast<uint16_t>(1 + rng() % 3);
          break;
      }
      s.mtu = rng() % 3 == 0 ? 3000 : 9000;
      s.learn_limit = rng() % 3 == 0 ? 3 : 0;
      switch (rng() % 6) {
        case 0: s.allowed_macs = {macs[rng() % 10], macs[rng() % 10]}; break;
        case 1: s.lock_mac = true; break;
        default: break;
      }
      switch (rng() % 8) {
        case 0:
          s.guards.police_pps = 1;
          s.guards.police_pps_burst = 20 + rng() % 400;
          break;
        case 1:
          s.guards.police_bps = 8;  // a byte a second
          s.guards.police_bps_burst = 2000 + rng() % 200000;
          break;
        case 2: s.guards.storm[rng() % kStormClasses] = 1; break;  // a bucket of 64
        case 3: s.guards.bpdu_guard = true; break;
        default: break;
      }
      if (rng() % 4 == 0) {  // ip=: one or two of the frames' IPv4 sources
        for (int k = 0; k < 1 + static_cast<int>(rng() % 2); ++k) {
          IpPrefix p;
          const uint32_t addr = ips[rng() % std::size(ips)];
          std::memcpy(p.addr.data(), &addr, 4);
          s.guards.ips.push_back(p);
        }
      }
    }
    fdb_ = *Fdb::Create(name_ + "fdb" + std::to_string(config), 1 << 12);
    datapath_.fdb = fdb_.get();
    counters_.~WorkerCounters();
    new (&counters_) WorkerCounters();
    Configure(specs);
    // Half the configurations mirror some ports' received and sent frames to another.
    model::MirrorConfig mirror;
    if (rng() % 2 == 0) {
      MirrorSession session;
      mirror.to = 1 + static_cast<int>(rng() % 3);  // port 0 has a static MAC
      session.to = static_cast<uint16_t>(mirror.to);
      for (uint16_t p = 0; p < kPorts; ++p) {
        if (p == mirror.to) continue;
        if (rng() % 2) {
          mirror.rx.insert(p);
          session.rx |= uint64_t{1} << p;
        }
        if (rng() % 2) {
          mirror.tx.insert(p);
          session.tx |= uint64_t{1} << p;
        }
      }
      mirror.vlan = rng() % 2 ? 0 : 6;
      session.vlan = static_cast<uint16_t>(mirror.vlan);
      if (session.active()) SetMirror(0, session);
      if (!session.active()) mirror = {};
    }
    FreezeMeters();
    std::vector<model::PortConfig> configs;
    for (const PortSpec& s : specs) configs.push_back(ModelConfig(s));
    model::BridgeModel model(configs);
    model.SetMirror(mirror);
    // One static MAC in VLAN 0 (or the first VLAN its port carries).
    model::PortConfig& c0 = configs[0];
    uint16_t static_vlan = c0.Carries(0) ? 0 : c0.access ? c0.access : *c0.trunk.begin();
    ASSERT_TRUE(learner_->AddStatic(uint64_t{static_vlan} << 48 | static_mac, 0).ok());
    model.AddStatic(static_vlan, static_mac, 0);

    // What the counters must say, from the model.
    std::array<std::map<RxDrop, uint64_t>, kPorts> rx_drops;
    std::array<std::map<TxDrop, uint64_t>, kPorts> tx_drops;
    std::array<uint64_t, kPorts> tx{};
    uint64_t up = 0xf, sent = 0, forwarded = 0;
    datapath_.up_mask.store(up);
    uint32_t now = 1000;
    for (int round = 0; round < 600; ++round) {
      now += static_cast<uint32_t>(rng() % 3);
      if (rng() % 16 == 0) {  // a link changes: a port going down is flushed, its lock freed
        uint64_t next = rng() & 0xf;
        for (uint16_t p = 0; p < kPorts; ++p) {
          if (((up >> p) & 1) && !((next >> p) & 1)) {
            learner_->PortDown(p);
            model.Flush(p);
          }
        }
        up = next;
        datapath_.up_mask.store(up);
        learner_->Poll(now);  // the limits of flushed ports are lifted
      }
      if (rng() % 32 == 0) {
        learner_->Age(now, 5);  // ageing may bring ports under their limit
        model.Age(now, 5);
      }
      if (rng() % 24 == 0) {  // hvswitchctl port enable, of every shut port
        for (uint16_t p = 0; p < kPorts; ++p) {
          EXPECT_EQ(model.shut(p), ((datapath_.shut_mask.load() >> p) & 1) != 0) << "port " << p;
          if (model.shut(p)) model.Enable(p);
        }
        datapath_.shut_mask.store(0);
      }
      uint16_t in = static_cast<uint16_t>(rng() % kPorts);
      std::vector<TestFrame> frames(1 + rng() % 32);
      std::vector<model::Frame> model_frames;
      const bool one_conversation = rng() % 4 == 0;  // a single run: the reused lookup
      for (auto& f : frames) {
        if (one_conversation && &f != &frames[0]) {
          f = frames[0];
        } else {
          f = {};
          f.src = rng() % 40 == 0 ? 0 : macs[rng() % macs.size()];
          f.dst = macs[rng() % macs.size()];
          f.tag = tags[rng() % std::size(tags)];
          f.pcp = static_cast<uint8_t>(rng() % 8);
          if (f.tag >= 0 && rng() % 6 == 0) f.inner_tag = static_cast<int>(rng() % 4);
          f.payload = rng() % 8 == 0 ? 2000 + rng() % 7000 : 46;
          if (f.inner_tag < 0 && rng() % 4 == 0) {  // IPv4 or ARP, what ip= looks at
            f.ipv4_src = ips[rng() % std::size(ips)];
            f.arp = rng() % 3 == 0;
          }
        }
        model::Frame mf{f.src, f.dst, f.tag, f.payload, f.inner_tag >= 0};
        mf.ip4 = f.ipv4_src;
        mf.arp = f.arp;
        model_frames.push_back(mf);
      }
      std::vector<model::Result> expected = model.ForwardBurst(in, model_frames, up, now);
      std::vector<std::vector<model::Copy>> got = RunBurst(in, frames, now);
      for (size_t i = 0; i < frames.size(); ++i) {
        const model::Result& e = expected[i];
        // The analyser's copies, in whatever order they left, among the frame's copies.
        std::vector<model::Copy> want = e.copies;
        want.insert(want.end(), e.mirrored.begin(), e.mirrored.end());
        std::sort(want.begin(), want.end());
        std::sort(got[i].begin(), got[i].end());
        ASSERT_EQ(got[i], want) << "config " << config << " round " << round << " frame " << i
                                    << ": in " << in << " " << specs[in].ToString() << " src "
                                    << std::hex << frames[i].src << " dst " << frames[i].dst
                                    << std::dec << " tag " << frames[i].tag << " inner "
                                    << frames[i].inner_tag << " payload " << frames[i].payload
                                    << " up " << up << Explain(model, frames[i], in);
        switch (e.outcome) {
          case model::Outcome::kForwarded:
            // Sent somewhere, or refused by each destination with a reason.
            ASSERT_FALSE(e.copies.empty() && e.mtu_drops.empty() && e.vlan_drops.empty() &&
                         e.link_down.empty());
            ++forwarded;
            break;
          case model::Outcome::kMalformed: ++rx_drops[in][RxDrop::kMalformed]; break;
          case model::Outcome::kVlan: ++rx_drops[in][RxDrop::kVlan]; break;
          case model::Outcome::kHairpin: ++rx_drops[in][RxDrop::kHairpin]; break;
          case model::Outcome::kSpoofed: ++rx_drops[in][RxDrop::kSpoofed]; break;
          case model::Outcome::kNoDestination: ++rx_drops[in][RxDrop::kNoDestination]; break;
          case model::Outcome::kPoliced: ++rx_drops[in][RxDrop::kPoliced]; break;
          case model::Outcome::kStorm: ++rx_drops[in][RxDrop::kStorm]; break;
          case model::Outcome::kReserved: ++rx_drops[in][RxDrop::kReserved]; break;
          case model::Outcome::kShut: ++rx_drops[in][RxDrop::kShut]; break;
          case model::Outcome::kMirrorPort: ++rx_drops[in][RxDrop::kMirrorPort]; break;
          case model::Outcome::kSpoofedIp: ++rx_drops[in][RxDrop::kSpoofedIp]; break;
        }
        for (const model::Copy& c : e.copies) ++tx[c.port];
        for (const model::Copy& c : e.mirrored) ++tx[c.port];
        for (uint16_t p : e.mtu_drops) ++tx_drops[p][TxDrop::kMtu];
        for (uint16_t p : e.vlan_drops) ++tx_drops[p][TxDrop::kVlan];
        for (uint16_t p : e.link_down) ++tx_drops[p][TxDrop::kLinkDown];
      }
      sent += frames.size();
    }
    std::map<uint64_t, uint16_t> fdb_table, model_table;
    for (const auto& [key, entry] : model.table()) {
      model_table[key] = entry.port;
      uint16_t port = 0;
      ASSERT_EQ(fdb_->LookupBulk(&key, 1, &port), 1u) << "config " << config;
      fdb_table[key] = port;
    }
    EXPECT_EQ(fdb_table, model_table) << "config " << config;
    fdb_->Age(now, 0);  // drop flushed entries so that size() counts current ones
    EXPECT_EQ(fdb_->size(), model.table().size()) << "config " << config;
    // The counters, port by port and reason by reason; and the invariant from them alone:
    // every frame received was forwarded or counted under a receive drop reason.
    uint64_t rx = 0, rx_dropped = 0;
    for (uint16_t p = 0; p < kPorts; ++p) {
      const PortCounters& c = counters_.ports[p];
      rx += c[PortCounter::kRxPackets].Read();
      for (size_t r = 0; r < kWorkerRxDrops; ++r) {
        const RxDrop reason = static_cast<RxDrop>(r);
        EXPECT_EQ(c.rx_drops[r].Read(), rx_drops[p][reason])
            << "config " << config << " port " << p << " rx drop " << kRxDropInfo[r].key;
        rx_dropped += c.rx_drops[r].Read();
      }
      for (size_t r = 0; r < kTxDrops; ++r) {
        EXPECT_EQ(c.tx_drops[r].Read(), tx_drops[p][static_cast<TxDrop>(r)])
            << "config " << config << " port " << p << " tx drop " << kTxDropInfo[r].key;
      }
      EXPECT_EQ(c[PortCounter::kTxPackets].Read(), tx[p])
          << "config " << config << " port " << p;
      EXPECT_EQ(c[PortCounter::kLearnLimited].Read() + Refused(p, PortCounter::kLearnLimited),
                model.limited(p))
          << "config " << config << " port " << p;
    }
    EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLockedRefused), model.locked_refused())
        << "config " << config;
    EXPECT_EQ(rx, sent);
    EXPECT_EQ(rx, rx_dropped + forwarded) << "config " << config;
  }
}

}  // namespace
}  // namespace hvswitch
