// The DPDK-backed pieces of the data path in one EAL (--no-huge --no-pci): the FDB over
// rte_hash, the learn queue, and the Forwarder over net_ring ports held against the
// reference model frame by frame.
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "switch/fdb.h"
#include "switch/forwarder.h"
#include "switch/learn_queue.h"
#include "switch/mac_key.h"
#include "tests/unit/bridge_model.h"

namespace hvswitch {
namespace {

uint64_t Key(uint64_t mac) { return mac & 0xffffffffffff; }  // VLAN 0

TEST(FdbTest, LearnWritesOnlyWhenSomethingChanged) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_learn", 1024);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 1, 0), LearnResult::kAdded);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 1, 0), LearnResult::kCurrent);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 2, 0), LearnResult::kMoved);
  EXPECT_EQ(fdb->Learn(Key(0x0400) | (uint64_t{5} << 48), 3, 0), LearnResult::kAdded);
  EXPECT_EQ(fdb->size(), 2u);

  uint64_t keys[3] = {Key(0x0200), Key(0x0600), Key(0x0400) | (uint64_t{5} << 48)};
  uint16_t ports[3] = {};
  uint64_t hits = fdb->LookupBulk(keys, 3, ports);
  EXPECT_EQ(hits, 0b101u);
  EXPECT_EQ(ports[0], 2);
  EXPECT_EQ(ports[2], 3);
  uint64_t other_vlan = Key(0x0400);  // same MAC, VLAN 0: a different entry
  EXPECT_EQ(fdb->LookupBulk(&other_vlan, 1, ports), 0u);
}

TEST(FdbTest, StopsLearningAtCapacity) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_full", 64);
  for (uint64_t i = 0; i < 64; ++i) ASSERT_EQ(fdb->Learn(Key(i << 8), 0, 0), LearnResult::kAdded);
  EXPECT_EQ(fdb->Learn(Key(999u << 8), 0, 0), LearnResult::kFull);
  EXPECT_EQ(fdb->Learn(Key(5u << 8), 1, 0), LearnResult::kMoved);  // existing entries still move
  EXPECT_EQ(fdb->size(), 64u);
}

TEST(FdbTest, AgesEntriesNotSeenForTheAgeingTime) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_age", 1024);
  int waits = 0;
  auto wait = [&] { ++waits; };
  fdb->Learn(Key(0x0200), 1, 100);
  fdb->Learn(Key(0x0400), 1, 100);
  uint64_t key = Key(0x0400);
  uint16_t port = 0;
  int32_t position = -1;
  ASSERT_EQ(fdb->LookupBulk(&key, 1, &port, &position), 1u);
  fdb->Touch(position, 250);  // a worker saw 0x0400 again
  AgeResult r = fdb->Age(399, 300, wait);
  EXPECT_EQ(r.aged, 0u);
  EXPECT_EQ(waits, 0);  // nothing removed: no grace period needed
  r = fdb->Age(400, 300, wait);
  EXPECT_EQ(r.aged, 1u);  // 0x0200, last seen at 100
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(fdb->size(), 1u);
  key = Key(0x0200);
  EXPECT_EQ(fdb->LookupBulk(&key, 1, &port), 0u);
  EXPECT_EQ(fdb->Age(100000, 0, wait).aged, 0u);  // ageing off
}

TEST(FdbTest, FlushingAPortForgetsItsEntriesAtOnce) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_flush", 64);
  for (uint64_t i = 0; i < 32; ++i) fdb->Learn(Key(i << 8), 1, 0);
  for (uint64_t i = 32; i < 64; ++i) fdb->Learn(Key(i << 8), 2, 0);
  fdb->FlushPort(1);
  uint64_t keys[2] = {Key(5u << 8), Key(40u << 8)};
  uint16_t ports[2] = {};
  EXPECT_EQ(fdb->LookupBulk(keys, 2, ports), 0b10u);  // port 1's MAC is gone already
  EXPECT_EQ(fdb->Learn(Key(5u << 8), 3, 0), LearnResult::kAdded);  // not a move
  AgeResult r = fdb->Age(0, 0, [] {});
  EXPECT_EQ(r.flushed, 31u);
  EXPECT_EQ(fdb->size(), 33u);
  // Freed positions are reused: the table fills to capacity again.
  for (uint64_t i = 100; i < 131; ++i) {
    ASSERT_EQ(fdb->Learn(Key(i << 8), 4, 0), LearnResult::kAdded) << i;
  }
  EXPECT_EQ(fdb->Learn(Key(999u << 8), 4, 0), LearnResult::kFull);
  EXPECT_EQ(fdb->LookupBulk(keys, 2, ports), 0b11u);
  EXPECT_EQ(ports[0], 3);
}

TEST(LearnQueueTest, RepeatsAreFilteredForAWhile) {
  std::unique_ptr<LearnQueue> q = *LearnQueue::Create("learn_filter", 64);
  q->set_repeat_cycles(1000);
  q->Request(Key(0x0200), 1, 10'000);
  q->Request(Key(0x0200), 1, 10'500);  // repeat inside the window: filtered
  q->Request(Key(0x0200), 2, 10'600);  // another port: a move, passes
  q->Request(Key(0x0200), 2, 12'000);  // window over: asked again
  LearnRequest out[8];
  ASSERT_EQ(q->Drain(out, 8), 3u);
  EXPECT_EQ(out[0].port, 1u);
  EXPECT_EQ(out[1].port, 2u);
  EXPECT_EQ(out[2].key, Key(0x0200));
}

// Four ports over rte_rings. The test plays the control thread: it applies the learn
// requests after every burst.
class ForwarderTest : public ::testing::Test {
 protected:
  static constexpr uint16_t kPorts = 4;

  void SetUp() override {
    static int instance = 0;
    ++instance;
    pool_ = rte_pktmbuf_pool_create(("fwd_pool" + std::to_string(instance)).c_str(), 8191, 0,
                                    0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(pool_, nullptr);
    fdb_ = *Fdb::Create("fwd_fdb" + std::to_string(instance), 4096);
    learn_ = *LearnQueue::Create("fwd_learn" + std::to_string(instance), 4096);
    datapath_.fdb = fdb_.get();
    datapath_.SetAllPortsPlain(kPorts);
    for (uint16_t p = 0; p < kPorts; ++p) {
      std::string name = "fwd" + std::to_string(instance) + "_" + std::to_string(p);
      rx_[p] = rte_ring_create((name + "rx").c_str(), 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
      tx_[p] = rte_ring_create((name + "tx").c_str(), 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
      int id = rte_eth_from_rings(name.c_str(), &rx_[p], 1, &tx_[p], 1, 0);
      ASSERT_GE(id, 0);
      rte_eth_conf conf{};
      ASSERT_EQ(rte_eth_dev_configure(id, 1, 1, &conf), 0);
      ASSERT_EQ(rte_eth_rx_queue_setup(id, 0, 1024, 0, nullptr, pool_), 0);
      ASSERT_EQ(rte_eth_tx_queue_setup(id, 0, 1024, 0, nullptr), 0);
      ASSERT_EQ(rte_eth_dev_start(id), 0);
      datapath_.ports[p].eth_port = static_cast<uint16_t>(id);
      eth_ids_.push_back(static_cast<uint16_t>(id));
    }
    datapath_.up_mask.store((1u << kPorts) - 1);
    forwarder_ = std::make_unique<Forwarder>(datapath_, ForwarderOptions{}, counters_, *learn_);
  }

  void TearDown() override {
    for (uint16_t id : eth_ids_) {
      rte_eth_dev_stop(id);
      rte_eth_dev_close(id);
    }
    for (uint16_t p = 0; p < kPorts; ++p) {
      rte_ring_free(rx_[p]);
      rte_ring_free(tx_[p]);
    }
    forwarder_.reset();
    learn_.reset();
    fdb_.reset();
    EXPECT_EQ(rte_mempool_in_use_count(pool_), 0u) << "mbufs leaked";
    rte_mempool_free(pool_);
  }

  rte_mbuf* MakeFrame(uint64_t src, uint64_t dst, uint32_t seq) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (m == nullptr) std::abort();
    char* data = rte_pktmbuf_append(m, 64);
    if (data == nullptr) std::abort();
    std::memset(data, 0, 64);
    auto* eth = reinterpret_cast<rte_ether_hdr*>(data);
    std::memcpy(eth->dst_addr.addr_bytes, &dst, 6);
    std::memcpy(eth->src_addr.addr_bytes, &src, 6);
    eth->ether_type = rte_cpu_to_be_16(0x88b5);
    std::memcpy(data + 14, &seq, sizeof(seq));
    return m;
  }

  // Runs one burst through the forwarder, then applies learning. Returns, per frame, the
  // ports it came out of.
  std::vector<std::vector<uint16_t>> RunBurst(uint16_t in, const std::vector<model::Frame>& f) {
    std::vector<rte_mbuf*> burst;
    for (uint32_t i = 0; i < f.size(); ++i) burst.push_back(MakeFrame(f[i].src, f[i].dst, i));
    forwarder_->HandleBurst(in, burst.data(), static_cast<uint16_t>(burst.size()));
    LearnRequest requests[kMaxBurst];
    unsigned n = learn_->Drain(requests, kMaxBurst);
    for (unsigned i = 0; i < n; ++i) {
      fdb_->Learn(requests[i].key, static_cast<uint16_t>(requests[i].port), 0);
    }
    std::vector<std::vector<uint16_t>> out(f.size());
    for (uint16_t p = 0; p < kPorts; ++p) {
      void* objs[1024];
      unsigned got = rte_ring_dequeue_burst(tx_[p], objs, 1024, nullptr);
      for (unsigned i = 0; i < got; ++i) {
        auto* m = static_cast<rte_mbuf*>(objs[i]);
        uint32_t seq = 0;
        std::memcpy(&seq, rte_pktmbuf_mtod_offset(m, char*, 14), sizeof(seq));
        out[seq].push_back(p);
        rte_pktmbuf_free(m);
      }
    }
    return out;
  }

  uint64_t RxDrops(uint16_t port, RxDrop reason) {
    return counters_.ports[port].rx_drops[static_cast<size_t>(reason)].Read();
  }

  rte_mempool* pool_ = nullptr;
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<LearnQueue> learn_;
  Datapath datapath_;
  WorkerCounters counters_;
  std::unique_ptr<Forwarder> forwarder_;
  std::array<rte_ring*, kPorts> rx_{}, tx_{};
  std::vector<uint16_t> eth_ids_;
};

constexpr uint64_t kA = 0x0a0000000002, kB = 0x0b0000000002, kBcast = 0xffffffffffff;

TEST_F(ForwarderTest, FloodLearnThenUnicast) {
  EXPECT_EQ(RunBurst(0, {{kA, kB}})[0], (std::vector<uint16_t>{1, 2, 3}));  // B unknown
  EXPECT_EQ(RunBurst(1, {{kB, kA}})[0], (std::vector<uint16_t>{0}));        // A learned
  EXPECT_EQ(RunBurst(0, {{kA, kB}})[0], (std::vector<uint16_t>{1}));        // B learned
  EXPECT_EQ(RunBurst(2, {{0x0c0000000002, kBcast}})[0], (std::vector<uint16_t>{0, 1, 3}));
  EXPECT_EQ(counters_.ports[0].rx_packets.Read(), 2u);
  EXPECT_EQ(counters_.ports[1].tx_packets.Read(), 3u);
  EXPECT_EQ(counters_.ports[1].tx_bytes.Read(), 3u * 64);
}

TEST_F(ForwarderTest, HairpinAndMalformedAreDroppedAndCounted) {
  RunBurst(0, {{kA, kBcast}});
  EXPECT_TRUE(RunBurst(0, {{kB, kA}})[0].empty());  // A lives on port 0 itself
  EXPECT_EQ(RxDrops(0, RxDrop::kHairpin), 1u);
  EXPECT_TRUE(RunBurst(1, {{kBcast, kA}})[0].empty());  // group source
  EXPECT_EQ(RxDrops(1, RxDrop::kMalformed), 1u);
  rte_mbuf* runt = rte_pktmbuf_alloc(pool_);
  rte_pktmbuf_append(runt, 10);
  forwarder_->HandleBurst(2, &runt, 1);
  EXPECT_EQ(RxDrops(2, RxDrop::kMalformed), 1u);
}

TEST_F(ForwarderTest, DownPortsAreLeftOutOfFloodsAndCountUnicastDrops) {
  RunBurst(3, {{kB, kBcast}});  // B on port 3
  datapath_.up_mask.store(0b0111);
  EXPECT_EQ(RunBurst(0, {{kA, kBcast}})[0], (std::vector<uint16_t>{1, 2}));
  EXPECT_TRUE(RunBurst(0, {{kA, kB}})[0].empty());
  EXPECT_EQ(counters_.ports[3].tx_drops[static_cast<size_t>(TxDrop::kLinkDown)].Read(), 1u);
}

TEST_F(ForwarderTest, FlushedPortsMacsAreFloodedUntilRelearned) {
  RunBurst(1, {{kB, kBcast}});
  EXPECT_EQ(RunBurst(0, {{kA, kB}})[0], (std::vector<uint16_t>{1}));
  fdb_->FlushPort(1);
  EXPECT_EQ(RunBurst(0, {{kA, kB}})[0], (std::vector<uint16_t>{1, 2, 3}));
  RunBurst(1, {{kB, kA}});
  EXPECT_EQ(RunBurst(0, {{kA, kB}})[0], (std::vector<uint16_t>{1}));
}

TEST_F(ForwarderTest, FullTxQueueCountsQueueFull) {
  RunBurst(1, {{kB, kBcast}});
  // Fill port 1's tx ring so that only 3 more frames fit.
  void* filler[1021];
  for (auto& f : filler) f = rte_pktmbuf_alloc(pool_);
  ASSERT_EQ(rte_ring_enqueue_bulk(tx_[1], filler, 1020, nullptr), 1020u);
  std::vector<model::Frame> burst(8, {kA, kB});
  std::vector<rte_mbuf*> mbufs;
  for (uint32_t i = 0; i < burst.size(); ++i) mbufs.push_back(MakeFrame(kA, kB, i));
  forwarder_->HandleBurst(0, mbufs.data(), 8);
  EXPECT_EQ(counters_.ports[1].tx_drops[static_cast<size_t>(TxDrop::kQueueFull)].Read(), 5u);
  EXPECT_EQ(counters_.ports[1].tx_packets.Read(), 3u);  // the ring holds 1023
  void* objs[1024];
  unsigned n = rte_ring_dequeue_burst(tx_[1], objs, 1024, nullptr);
  for (unsigned i = 0; i < n; ++i) rte_pktmbuf_free(static_cast<rte_mbuf*>(objs[i]));
  rte_pktmbuf_free(static_cast<rte_mbuf*>(filler[1020]));
}

// Random bursts over a small population of MACs, ports going up and down: every frame
// leaves exactly where the reference model says, and the counters add up.
TEST_F(ForwarderTest, MatchesReferenceModelOnRandomBursts) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> macs;
  for (uint64_t i = 1; i <= 10; ++i) macs.push_back(i << 8 | (i << 40));
  macs.push_back(kBcast);
  macs.push_back(0x0000005e0001 | 1);
  model::BridgeModel model(kPorts);
  uint64_t delivered = 0, sent = 0;
  for (int round = 0; round < 2000; ++round) {
    uint16_t in = static_cast<uint16_t>(rng() % kPorts);
    uint64_t up = (rng() % 8 == 0 ? rng() : 0xf) & 0xf;
    datapath_.up_mask.store(up);
    std::vector<model::Frame> frames(1 + rng() % 32);
    for (auto& f : frames) f = {macs[rng() % macs.size()], macs[rng() % macs.size()]};
    std::vector<model::Result> expected = model.ForwardBurst(in, frames, up);
    std::vector<std::vector<uint16_t>> got = RunBurst(in, frames);
    for (size_t i = 0; i < frames.size(); ++i) {
      // Unicast to a down port: the model names the port, the switch drops it link_down.
      std::vector<uint16_t> want;
      for (uint16_t p : expected[i].ports) {
        if ((up >> p) & 1) want.push_back(p);
      }
      ASSERT_EQ(got[i], want) << "round " << round << " frame " << i;
      delivered += got[i].size();
    }
    sent += frames.size();
  }
  uint64_t rx = 0, tx = 0;
  for (uint16_t p = 0; p < kPorts; ++p) {
    rx += counters_.ports[p].rx_packets.Read();
    tx += counters_.ports[p].tx_packets.Read();
  }
  EXPECT_EQ(rx, sent);
  EXPECT_EQ(tx, delivered);
  EXPECT_EQ(fdb_->size(), 10u);
}

}  // namespace
}  // namespace hvswitch

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* eal[] = {"datapath_test", "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
                       "-l", "0", "--log-level=lib.eal:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "cannot init EAL\n");
    return 1;
  }
  int rc = RUN_ALL_TESTS();
  rte_eal_cleanup();
  return rc;
}
