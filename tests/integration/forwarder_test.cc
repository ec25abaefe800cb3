// The Forwarder over net_ring ports held against the reference model frame by frame:
// VLANs, MTU, learning with limits and static entries, ageing and flushes, transmit
// batching. The test plays the control thread: it applies the learn requests after every
// burst, as the bridge does about every millisecond.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "ports/port_spec.h"
#include "switch/fdb.h"
#include "switch/forwarder.h"
#include "switch/learn_queue.h"
#include "switch/mac_key.h"
#include "tests/integration/ring_port.h"
#include "tests/unit/bridge_model.h"

namespace hvswitch {
namespace {

using testing::MakeFrame;
using testing::ParseFrame;
using testing::RingPort;
using testing::TestFrame;

constexpr uint16_t kPorts = 4;
constexpr uint64_t kA = 0x0a0000000002, kB = 0x0b0000000002, kC = 0x0c0000000002,
                   kBcast = 0xffffffffffff;

model::PortConfig ModelConfig(const PortSpec& spec) {
  model::PortConfig c;
  c.access = spec.access_vlan;
  c.trunk.insert(spec.trunk_vlans.begin(), spec.trunk_vlans.end());
  c.native = spec.native_vlan;
  c.mtu = spec.mtu;
  c.learn_limit = spec.learn_limit;
  return c;
}

class ForwarderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int instance = 0;
    name_ = "fwd" + std::to_string(++instance);
    pool_ = rte_pktmbuf_pool_create((name_ + "pool").c_str(), 16383, 0, 0,
                                    RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(pool_, nullptr);
    fdb_ = *Fdb::Create(name_ + "fdb", 1 << 16);
    learn_ = *LearnQueue::Create(name_ + "learn", 4096);
    datapath_.fdb = fdb_.get();
    for (uint16_t p = 0; p < kPorts; ++p) {
      ports_.push_back(RingPort::Create(name_ + "_" + std::to_string(p), 1, 1, 4096, pool_));
      ASSERT_NE(ports_.back(), nullptr);
      table_.ports[p].eth_port = ports_.back()->eth_port();
    }
    datapath_.up_mask.store((1u << kPorts) - 1);
    Configure(std::vector<PortSpec>(kPorts));
  }

  void TearDown() override {
    forwarder_.reset();
    ports_.clear();
    learn_.reset();
    fdb_.reset();
    EXPECT_EQ(rte_mempool_in_use_count(pool_), 0u) << "mbufs leaked";
    rte_mempool_free(pool_);
  }

  // Port configuration as the bridge would publish it; a new forwarder with `options`.
  void Configure(std::vector<PortSpec> specs, ForwarderOptions options = {}) {
    specs_ = std::move(specs);
    table_.Configure(specs_);
    datapath_.table.store(&table_);
    datapath_.learn_blocked_mask.store(0);
    forwarder_ = std::make_unique<Forwarder>(datapath_, options, counters_, *learn_);
  }

  // The control thread's share: learn requests applied with the ports' limits, then the
  // ports at their limit published to the workers.
  void ApplyLearning(uint32_t now) {
    LearnRequest requests[256];
    unsigned n;
    while ((n = learn_->Drain(requests, 256)) != 0) {
      for (unsigned i = 0; i < n; ++i) {
        uint16_t port = static_cast<uint16_t>(requests[i].port);
        if (fdb_->Learn(requests[i].key, port, now, specs_[port].learn_limit) ==
            LearnResult::kLimited) {
          refused_[port] += requests[i].frames;
        }
      }
    }
    uint64_t blocked = 0;
    for (uint16_t p = 0; p < kPorts; ++p) {
      if (specs_[p].learn_limit != 0 && fdb_->learned(p) >= specs_[p].learn_limit) {
        blocked |= uint64_t{1} << p;
      }
    }
    datapath_.learn_blocked_mask.store(blocked);
  }

  // Every frame the ports transmitted, by sequence number: (port, tag) in port order.
  std::vector<std::vector<model::Copy>> Collect(size_t nb_frames,
                                                const std::vector<TestFrame>* sent = nullptr) {
    std::vector<std::vector<model::Copy>> out(nb_frames);
    for (uint16_t p = 0; p < kPorts; ++p) {
      for (rte_mbuf* m : ports_[p]->TakeSent()) {
        TestFrame f = ParseFrame(m);
        EXPECT_LT(f.seq, nb_frames);
        if (f.seq < nb_frames) {
          out[f.seq].push_back({p, f.tag});
          if (sent != nullptr) {
            EXPECT_EQ(f.payload, (*sent)[f.seq].payload) << "frame " << f.seq;
            EXPECT_EQ(f.src, (*sent)[f.seq].src);
          }
        }
        rte_pktmbuf_free(m);
      }
    }
    return out;
  }

  // One burst from port `in` through the forwarder, then learning at `now`.
  std::vector<std::vector<model::Copy>> RunBurst(uint16_t in, std::vector<TestFrame> frames,
                                                 uint32_t now = 0) {
    std::vector<rte_mbuf*> burst;
    for (uint32_t i = 0; i < frames.size(); ++i) {
      frames[i].seq = i;
      burst.push_back(MakeFrame(pool_, frames[i]));
    }
    datapath_.now_seconds.store(now);
    forwarder_->HandleBurst(in, burst.data(), static_cast<uint16_t>(burst.size()));
    ApplyLearning(now);
    return Collect(frames.size(), &frames);
  }
  std::vector<model::Copy> Send(uint16_t in, const TestFrame& frame) {
    return RunBurst(in, {frame})[0];
  }

  uint64_t RxDrops(uint16_t port, RxDrop reason) {
    return counters_.ports[port].rx_drops[static_cast<size_t>(reason)].Read();
  }
  uint64_t TxDrops(uint16_t port, TxDrop reason) {
    return counters_.ports[port].tx_drops[static_cast<size_t>(reason)].Read();
  }

  std::string name_;
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<LearnQueue> learn_;
  PortTable table_;
  Datapath datapath_;
  WorkerCounters counters_;
  std::vector<std::unique_ptr<RingPort>> ports_;
  std::vector<PortSpec> specs_;
  std::unique_ptr<Forwarder> forwarder_;
  std::array<uint64_t, kPorts> refused_{};
};

using Copies = std::vector<model::Copy>;
Copies Untagged(std::initializer_list<uint16_t> ports) {
  Copies c;
  for (uint16_t p : ports) c.push_back({p, -1});
  return c;
}

TEST_F(ForwarderTest, FloodLearnThenUnicast) {
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1, 2, 3}));  // B unknown
  EXPECT_EQ(Send(1, {kB, kA}), Untagged({0}));        // A learned
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));        // B learned
  EXPECT_EQ(Send(2, {kC, kBcast}), Untagged({0, 1, 3}));
  EXPECT_EQ(counters_.ports[0].rx_packets.Read(), 2u);
  EXPECT_EQ(counters_.ports[1].tx_packets.Read(), 3u);
  EXPECT_EQ(counters_.ports[1].tx_bytes.Read(), 3u * 64);
  EXPECT_EQ(counters_.ports[1].tx_bursts.Read(), 3u);
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
  fdb_->FlushPort(1);
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
  fdb_->FlushPort(1);
  all_to(RunBurst(0, burst), Untagged({1, 2, 3}));
  Send(2, {kB, kBcast});  // B moves to port 2
  all_to(RunBurst(0, burst), Untagged({2}));
  fdb_->Age(100000, 5, [] {});  // B not seen since 0: aged out
  all_to(RunBurst(0, burst), Untagged({1, 2, 3}));
  ASSERT_TRUE(fdb_->AddStatic(kB, 3).ok());
  all_to(RunBurst(0, burst), Untagged({3}));
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
  EXPECT_EQ(counters_.ports[1].tx_packets.Read(), 3u);
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
  EXPECT_EQ(refused_[2], 1u);  // the burst's third MAC was refused by the control thread
  EXPECT_EQ(Send(2, {0x0800, kA}), Untagged({0, 1, 3}));  // still forwarded
  EXPECT_EQ(counters_.ports[2].learn_limited.Read(), 1u);  // counted by the worker
  EXPECT_EQ(Send(0, {kA, 0x0200}), Untagged({2}));  // what was learned works
}

TEST_F(ForwarderTest, StaticEntriesDoNotMove) {
  ASSERT_TRUE(fdb_->AddStatic(MacKey(0, reinterpret_cast<const uint8_t*>(&kB)), 1).ok());
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));
  Send(2, {kB, kBcast});  // B claimed elsewhere
  EXPECT_EQ(Send(0, {kA, kB}), Untagged({1}));
  datapath_.up_mask.store(0b1101);
  fdb_->FlushPort(1);  // port 1 down: still B's port
  EXPECT_TRUE(Send(0, {kA, kB}).empty());
  EXPECT_EQ(TxDrops(1, TxDrop::kLinkDown), 1u);
}

TEST_F(ForwarderTest, PortSecurityDropsForeignSourcesWithoutLearningThem) {
  PortMacs& allowed = datapath_.port_macs[0];
  allowed.macs[0].store(kA);
  allowed.macs[1].store(kB);
  allowed.count.store(2);
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
  EXPECT_EQ(counters_.ports[0].rx_packets.Read(), 7u);  // dropped frames were received
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
  EXPECT_EQ(counters_.ports[1].tx_bursts.Read(), 1u);  // five frames, one burst
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
  ASSERT_TRUE(fdb_->AddStatic(kB, 1).ok());
  auto mac = [](uint32_t i) { return (uint64_t{i} << 16) | 0x0200; };  // unicast, distinct
  std::vector<rte_mbuf*> burst(kMaxBurst);
  for (uint32_t i = 0; i < kMacs; i += kMaxBurst) {
    uint16_t n = static_cast<uint16_t>(std::min<uint32_t>(kMaxBurst, kMacs - i));
    for (uint16_t j = 0; j < n; ++j) burst[j] = MakeFrame(pool_, {mac(i + j), kB});
    forwarder_->HandleBurst(0, burst.data(), n);
    ApplyLearning(0);
    for (rte_mbuf* m : ports_[1]->TakeSent()) rte_pktmbuf_free(m);
  }
  EXPECT_EQ(fdb_->learned(0), kMacs);
  EXPECT_EQ(fdb_->size(), kMacs + 1);
  EXPECT_EQ(counters_.ports[1].tx_packets.Read(), kMacs);
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
  EXPECT_EQ(counters_.ports[2].learn_limited.Read() + refused_[2], kSpray - 100);
  EXPECT_EQ(counters_.ports[3].tx_packets.Read(), kSpray + 2);  // all sprayed + 2 broadcasts
  EXPECT_EQ(counters_.ports[1].tx_packets.Read(), a_to_b + 2);  // + the two broadcasts
  EXPECT_EQ(counters_.ports[0].tx_packets.Read(), b_to_a + 2);
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
    ApplyLearning(0);
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

// Random bursts with VLAN configurations, MTUs, learn limits, static entries, ports going
// up and down (and flushed), ageing: every frame leaves exactly where and how the
// reference model says, the tables agree, and the counters add up.
TEST_F(ForwarderTest, MatchesReferenceModelOnRandomBursts) {
  std::mt19937_64 rng(7);
  for (int config = 0; config < 6; ++config) {
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
    }
    fdb_ = *Fdb::Create(name_ + "fdb" + std::to_string(config), 1 << 12);
    datapath_.fdb = fdb_.get();
    refused_ = {};
    counters_.~WorkerCounters();
    new (&counters_) WorkerCounters();
    Configure(specs);
    std::vector<model::PortConfig> configs;
    for (const PortSpec& s : specs) configs.push_back(ModelConfig(s));
    model::BridgeModel model(configs);
    // One static MAC in VLAN 0 (or the first VLAN its port carries).
    model::PortConfig& c0 = configs[0];
    uint16_t static_vlan = c0.Carries(0) ? 0 : c0.access ? c0.access : *c0.trunk.begin();
    const uint64_t static_mac = 0x0b00;
    ASSERT_TRUE(fdb_->AddStatic(uint64_t{static_vlan} << 48 | static_mac, 0).ok());
    model.AddStatic(static_vlan, static_mac, 0);

    std::vector<uint64_t> macs;
    for (uint64_t i = 1; i <= 10; ++i) macs.push_back(i << 8 | (i << 40));
    macs.push_back(static_mac);
    macs.push_back(kBcast);
    macs.push_back(0x0000005e0001 | 1);
    const int tags[] = {-1, -1, 0, 1, 2, 3, 9};
    uint64_t up = 0xf, delivered = 0, sent = 0;
    datapath_.up_mask.store(up);
    uint32_t now = 1000;
    for (int round = 0; round < 600; ++round) {
      now += static_cast<uint32_t>(rng() % 3);
      if (rng() % 16 == 0) {  // a link changes: a port going down is flushed
        uint64_t next = rng() & 0xf;
        for (uint16_t p = 0; p < kPorts; ++p) {
          if (((up >> p) & 1) && !((next >> p) & 1)) {
            fdb_->FlushPort(p);
            model.Flush(p);
          }
        }
        up = next;
        datapath_.up_mask.store(up);
        ApplyLearning(now);  // the limits of flushed ports are lifted
      }
      if (rng() % 32 == 0) {
        fdb_->Age(now, 5, [] {});
        model.Age(now, 5);
        ApplyLearning(now);  // ageing may have brought ports under their limit
      }
      uint16_t in = static_cast<uint16_t>(rng() % kPorts);
      std::vector<TestFrame> frames(1 + rng() % 32);
      std::vector<model::Frame> model_frames;
      const bool one_conversation = rng() % 4 == 0;  // a single run: the reused lookup
      for (auto& f : frames) {
        if (one_conversation && &f != &frames[0]) {
          f = frames[0];
        } else {
          f.src = macs[rng() % macs.size()];
          f.dst = macs[rng() % macs.size()];
          f.tag = tags[rng() % std::size(tags)];
          f.payload = rng() % 8 == 0 ? 2000 + rng() % 7000 : 46;
        }
        model_frames.push_back({f.src, f.dst, f.tag, f.payload});
      }
      std::vector<model::Result> expected = model.ForwardBurst(in, model_frames, up, now);
      std::vector<std::vector<model::Copy>> got = RunBurst(in, frames, now);
      for (size_t i = 0; i < frames.size(); ++i) {
        // Unicast to a down port: the model names the port, the switch drops it link_down.
        Copies want;
        for (const model::Copy& c : expected[i].copies) {
          if ((up >> c.port) & 1) want.push_back(c);
        }
        ASSERT_EQ(got[i], want) << "config " << config << " round " << round << " frame " << i
                                << ": in " << in << " " << specs[in].ToString() << " src "
                                << std::hex << frames[i].src << " dst " << frames[i].dst
                                << std::dec << " tag " << frames[i].tag << " payload "
                                << frames[i].payload << " up " << up << Explain(model, frames[i], in);
        delivered += got[i].size();
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
    fdb_->Age(now, 0, [] {});  // drop flushed entries so that size() counts current ones
    EXPECT_EQ(fdb_->size(), model.table().size()) << "config " << config;
    uint64_t rx = 0, tx = 0;
    for (uint16_t p = 0; p < kPorts; ++p) {
      rx += counters_.ports[p].rx_packets.Read();
      tx += counters_.ports[p].tx_packets.Read();
      EXPECT_EQ(counters_.ports[p].learn_limited.Read() + refused_[p], model.limited(p))
          << "config " << config << " port " << p;
    }
    EXPECT_EQ(rx, sent);
    EXPECT_EQ(tx, delivered);
  }
}

}  // namespace
}  // namespace hvswitch
