// Two real workers on their own lcores forwarding at once, while this thread plays the
// control thread (learning, with the workers reading the FDB) and the guests (filling
// receive rings, draining transmit rings). Port 2 has a single tx queue that both workers
// share under its lock. Every count must add up exactly.
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/worker.h"
#include "switch/datapath/worker_quiescence.h"
#include "tests/integration/ring_port.h"

namespace hvswitch {
namespace {

using testing::MakeFrame;
using testing::ParseFrame;
using testing::RingPort;

constexpr uint16_t kPorts = 3, kWorkers = 2;
constexpr uint64_t kMac[kPorts] = {0x0a00, 0x0b00, 0x0c00};  // static, one per port
constexpr uint64_t kBcast = 0xffffffffffff;

TEST(WorkersTest, TwoWorkersForwardConcurrentlyAndCountersAddUp) {
  std::vector<unsigned> lcores;
  for (unsigned lcore = rte_get_next_lcore(-1, 1, 0); lcore < RTE_MAX_LCORE;
       lcore = rte_get_next_lcore(lcore, 1, 0)) {
    lcores.push_back(lcore);
  }
  ASSERT_GE(lcores.size(), kWorkers) << "the test EAL needs three lcores";

  rte_mempool* pool = rte_pktmbuf_pool_create("workers_pool", 65535, 256, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  ASSERT_NE(pool, nullptr);
  std::unique_ptr<Fdb> fdb = *Fdb::Create("workers_fdb", 1 << 16);
  PortTable table;
  table.Configure(std::vector<PortSpec>(kPorts));
  Datapath datapath;
  datapath.fdb = fdb.get();
  datapath.table.store(&table);
  std::vector<std::unique_ptr<RingPort>> ports;
  for (uint16_t p = 0; p < kPorts; ++p) {
    uint16_t nb_txq = p == 2 ? 1 : kWorkers;
    // Transmit rings big enough that the workers never find them full (no queue_full).
    ports.push_back(
        RingPort::Create("wk" + std::to_string(p), kWorkers, nb_txq, 1024, pool, 32768));
    ASSERT_NE(ports.back(), nullptr);
    table.ports[p].eth_port = ports.back()->eth_port();
    table.ports[p].nb_txq = nb_txq;
    table.ports[p].shared_tx = nb_txq < kWorkers;
    ASSERT_TRUE(fdb->AddStatic(kMac[p], p).ok());
  }
  datapath.up_mask.store((1u << kPorts) - 1);

  std::unique_ptr<WorkerQuiescence> quiescence = *WorkerQuiescence::Create(kWorkers);
  std::vector<std::unique_ptr<LearnQueue>> learn;
  std::unique_ptr<WorkerCounters[]> counters(new WorkerCounters[kWorkers]);
  std::vector<std::unique_ptr<Worker>> workers;
  std::atomic<bool> stop{false};
  for (uint16_t w = 0; w < kWorkers; ++w) {
    learn.push_back(*LearnQueue::Create("workers_learn" + std::to_string(w), 4096));
    for (uint16_t p = 0; p < kPorts; ++p) table.rx[w].push_back({p, ports[p]->eth_port(), w});
    ForwarderOptions options;
    options.worker = w;
    workers.push_back(std::make_unique<Worker>(options, datapath, *learn[w], counters[w],
                                               *quiescence, 32, stop));
  }
  for (uint16_t w = 0; w < kWorkers; ++w) {
    ASSERT_EQ(rte_eal_remote_launch(&Worker::Main, workers[w].get(), lcores[w]), 0);
  }

  // Port p's frames go to the next port's static MAC; every 8th is a broadcast. Sources
  // are new MACs (learned meanwhile) so that the workers read an FDB being written.
  constexpr uint32_t kPerQueue = 40'000;
  std::array<uint64_t, kPorts> expected_tx{}, sent_tx{};
  std::array<std::array<uint32_t, kWorkers>, kPorts> injected{};
  uint64_t learned = 0;
  bool done = false;
  while (!done) {
    done = true;
    for (uint16_t p = 0; p < kPorts; ++p) {
      for (uint16_t q = 0; q < kWorkers; ++q) {
        uint32_t& n = injected[p][q];
        if (n == kPerQueue) continue;
        done = false;
        rte_mbuf* burst[64];
        uint32_t count = std::min<uint32_t>(64, kPerQueue - n);
        for (uint32_t i = 0; i < count; ++i) {
          uint32_t seq = n + i;
          bool bcast = seq % 8 == 0;
          uint64_t src = (uint64_t{p + 1u} << 40) | (uint64_t{q} << 32) | ((seq % 1000 + 1) << 8);
          burst[i] = MakeFrame(pool, {src, bcast ? kBcast : kMac[(p + 1) % kPorts]});
        }
        unsigned in = ports[p]->Inject(q, burst, count);
        for (unsigned i = in; i < count; ++i) rte_pktmbuf_free(burst[i]);
        for (unsigned i = 0; i < in; ++i) {
          if ((n + i) % 8 == 0) {
            for (uint16_t o = 0; o < kPorts; ++o) expected_tx[o] += o != p;
          } else {
            ++expected_tx[(p + 1) % kPorts];
          }
        }
        n += in;
      }
    }
    for (uint16_t p = 0; p < kPorts; ++p) {
      for (rte_mbuf* m : ports[p]->TakeSent()) {
        ++sent_tx[p];
        rte_pktmbuf_free(m);
      }
    }
    LearnRequest requests[256];
    for (auto& queue : learn) {
      for (unsigned n; (n = queue->Drain(requests, 256)) != 0;) {
        for (unsigned i = 0; i < n; ++i) {
          learned += fdb->Learn(requests[i].key, static_cast<uint16_t>(requests[i].port), 0) ==
                     LearnResult::kAdded;
        }
      }
    }
  }
  // Let the workers finish what is in the rings, then stop them.
  auto all_sent = [&] {
    for (uint16_t p = 0; p < kPorts; ++p) {
      for (rte_mbuf* m : ports[p]->TakeSent()) {
        ++sent_tx[p];
        rte_pktmbuf_free(m);
      }
      if (sent_tx[p] < expected_tx[p]) return false;
    }
    return true;
  };
  uint64_t deadline = rte_get_tsc_cycles() + 30 * rte_get_tsc_hz();
  while (!all_sent() && rte_get_tsc_cycles() < deadline) rte_delay_ms(1);
  stop.store(true);
  for (uint16_t w = 0; w < kWorkers; ++w) rte_eal_wait_lcore(lcores[w]);
  quiescence->Synchronize();  // the workers' offline reports: done, in TSan's sight too
  all_sent();

  uint64_t busy[kWorkers] = {};
  for (uint16_t p = 0; p < kPorts; ++p) {
    PortTotals totals;
    for (uint16_t w = 0; w < kWorkers; ++w) totals.AddFrom(counters[w].ports[p]);
    EXPECT_EQ(totals[PortCounter::kRxPackets], uint64_t{kPerQueue} * kWorkers) << "port " << p;
    EXPECT_EQ(totals[PortCounter::kTxPackets], expected_tx[p]) << "port " << p;
    EXPECT_EQ(sent_tx[p], expected_tx[p]) << "port " << p;
    for (uint64_t d : totals.rx_drops) EXPECT_EQ(d, 0u) << "port " << p;
    for (uint64_t d : totals.tx_drops) EXPECT_EQ(d, 0u) << "port " << p;
    for (uint16_t w = 0; w < kWorkers; ++w) {
      busy[w] += counters[w].ports[p][PortCounter::kRxPackets].Read();
    }
  }
  for (uint16_t w = 0; w < kWorkers; ++w) EXPECT_GT(busy[w], 0u) << "worker " << w << " idle";
  EXPECT_EQ(learned, uint64_t{kPorts} * kWorkers * 1000);

  workers.clear();
  ports.clear();
  fdb.reset();
  learn.clear();
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u) << "mbufs leaked";
  rte_mempool_free(pool);
}

// lock=1 with two workers polling the locked port's two queues at once, each starting on
// its own sources: exactly one source wins the claim, and only its frames are forwarded.
TEST(WorkersTest, TwoWorkersRaceForALockedPortAndOneSourceWins) {
  std::vector<unsigned> lcores;
  for (unsigned lcore = rte_get_next_lcore(-1, 1, 0); lcore < RTE_MAX_LCORE;
       lcore = rte_get_next_lcore(lcore, 1, 0)) {
    lcores.push_back(lcore);
  }
  ASSERT_GE(lcores.size(), kWorkers) << "the test EAL needs three lcores";
  rte_mempool* pool = rte_pktmbuf_pool_create("lock_race_pool", 4095, 256, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  ASSERT_NE(pool, nullptr);
  std::unique_ptr<Fdb> fdb = *Fdb::Create("lock_race_fdb", 1024);
  PortTable table;
  std::vector<PortSpec> specs(2);
  specs[0].lock_mac = true;
  table.Configure(specs);
  Datapath datapath;
  datapath.fdb = fdb.get();
  datapath.table.store(&table);
  std::vector<std::unique_ptr<RingPort>> ports;
  for (uint16_t p = 0; p < 2; ++p) {
    ports.push_back(RingPort::Create("lr" + std::to_string(p), kWorkers, kWorkers, 1024, pool));
    ASSERT_NE(ports.back(), nullptr);
    table.ports[p].eth_port = ports.back()->eth_port();
    table.ports[p].nb_txq = kWorkers;
  }
  ASSERT_TRUE(fdb->AddStatic(kMac[1], 1).ok());
  datapath.up_mask.store(0b11);
  datapath.port_macs[0].ArmLock();
  // Queue q: 32 sources of its own, 4 frames each, to port 1's MAC.
  constexpr uint32_t kSources = 32, kEach = 4;
  for (uint16_t q = 0; q < kWorkers; ++q) {
    std::vector<rte_mbuf*> frames;
    for (uint32_t i = 0; i < kSources * kEach; ++i) {
      const uint64_t src = (uint64_t{q + 1u} << 40) | (uint64_t{i / kEach + 1} << 8);
      frames.push_back(MakeFrame(pool, {src, kMac[1], -1, 50, i}));
    }
    ASSERT_EQ(ports[0]->Inject(q, frames.data(), frames.size()), frames.size());
  }
  std::unique_ptr<WorkerQuiescence> quiescence = *WorkerQuiescence::Create(kWorkers);
  std::vector<std::unique_ptr<LearnQueue>> learn;
  std::unique_ptr<WorkerCounters[]> counters(new WorkerCounters[kWorkers]);
  std::vector<std::unique_ptr<Worker>> workers;
  std::atomic<bool> stop{false};
  for (uint16_t w = 0; w < kWorkers; ++w) {
    learn.push_back(*LearnQueue::Create("lock_race_learn" + std::to_string(w), 1024));
    table.rx[w].push_back({0, ports[0]->eth_port(), w});
    ForwarderOptions options;
    options.worker = w;
    workers.push_back(std::make_unique<Worker>(options, datapath, *learn[w], counters[w],
                                               *quiescence, 32, stop));
  }
  for (uint16_t w = 0; w < kWorkers; ++w) {
    ASSERT_EQ(rte_eal_remote_launch(&Worker::Main, workers[w].get(), lcores[w]), 0);
  }
  constexpr uint64_t kTotal = uint64_t{kWorkers} * kSources * kEach;
  auto received = [&] {
    uint64_t n = 0;
    for (uint16_t w = 0; w < kWorkers; ++w) {
      n += counters[w].ports[0][PortCounter::kRxPackets].Read();
    }
    return n;
  };
  uint64_t deadline = rte_get_tsc_cycles() + 30 * rte_get_tsc_hz();
  while (received() < kTotal && rte_get_tsc_cycles() < deadline) rte_delay_ms(1);
  stop.store(true);
  for (uint16_t w = 0; w < kWorkers; ++w) rte_eal_wait_lcore(lcores[w]);
  quiescence->Synchronize();  // the workers' offline reports: done, in TSan's sight too

  std::map<uint64_t, uint32_t> delivered;  // by source
  for (rte_mbuf* m : ports[1]->TakeSent()) {
    ++delivered[ParseFrame(m).src];
    rte_pktmbuf_free(m);
  }
  const uint64_t claim = datapath.port_macs[0].claim.load();
  ASSERT_NE(claim, 0u);
  EXPECT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered.begin()->first, claim & ~PortMacs::kClaimed);
  EXPECT_EQ(delivered.begin()->second, kEach);
  uint64_t spoofed = 0;
  for (uint16_t w = 0; w < kWorkers; ++w) {
    spoofed += counters[w].ports[0].rx_drops[static_cast<size_t>(RxDrop::kSpoofed)].Read();
  }
  EXPECT_EQ(received(), kTotal);
  EXPECT_EQ(spoofed, kTotal - kEach);

  workers.clear();
  ports.clear();
  fdb.reset();
  learn.clear();
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u) << "mbufs leaked";
  rte_mempool_free(pool);
}

// The control thread replaces the port table again and again while two workers forward;
// once Synchronize returns, no worker may use the table it replaced. Each replaced table
// is made a trap at once: a port slot that is empty in every published table appears in
// it, up and in the frames' VLAN, so that a worker still forwarding with it floods to the
// trap port. (A worker that reported its quiescent state while holding the table it had
// read before did exactly that, and crashed the daemon in port add/del under traffic when
// the old table was freed.) Three threads share two CPUs here: a worker preempted between
// reading the table and reporting quiescence is what opens the window.
TEST(WorkersTest, NoWorkerUsesATableAfterItsGracePeriod) {
  std::vector<unsigned> lcores;
  for (unsigned lcore = rte_get_next_lcore(-1, 1, 0); lcore < RTE_MAX_LCORE;
       lcore = rte_get_next_lcore(lcore, 1, 0)) {
    lcores.push_back(lcore);
  }
  ASSERT_GE(lcores.size(), kWorkers) << "the test EAL needs three lcores";
  rte_mempool* pool = rte_pktmbuf_pool_create("grace_pool", 8191, 256, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  ASSERT_NE(pool, nullptr);
  std::unique_ptr<Fdb> fdb = *Fdb::Create("grace_fdb", 1024);
  constexpr uint16_t kTrap = 1;  // the slot no published table has
  std::unique_ptr<RingPort> in = RingPort::Create("grace_in", kWorkers, kWorkers, 4096, pool);
  std::unique_ptr<RingPort> trap = RingPort::Create("grace_trap", 1, kWorkers, 4096, pool);
  ASSERT_NE(in, nullptr);
  ASSERT_NE(trap, nullptr);
  PortTable good;
  good.Configure(std::vector<PortSpec>(1));  // slot 0: `in`, plain, polled by both workers
  good.ports[0].eth_port = in->eth_port();
  good.ports[0].nb_txq = kWorkers;
  for (uint16_t w = 0; w < kWorkers; ++w) good.rx[w] = {{0, in->eth_port(), w}};
  constexpr int kTables = 4;
  std::array<std::unique_ptr<PortTable>, kTables> tables;
  for (auto& t : tables) t = std::make_unique<PortTable>(good);
  auto make_trap = [&](PortTable& t) {
    t.ports[kTrap].eth_port = trap->eth_port();
    t.ports[kTrap].nb_txq = kWorkers;
    t.vlans.members[0] |= uint64_t{1} << kTrap;
    t.present |= uint64_t{1} << kTrap;
  };
  auto make_good = [&](PortTable& t) {
    t.present &= ~(uint64_t{1} << kTrap);
    t.vlans.members[0] &= ~(uint64_t{1} << kTrap);
    t.ports[kTrap] = {};
  };
  Datapath datapath;
  datapath.fdb = fdb.get();
  datapath.table.store(tables[0].get());
  datapath.up_mask.store(0b11);

  std::unique_ptr<WorkerQuiescence> quiescence = *WorkerQuiescence::Create(kWorkers);
  std::vector<std::unique_ptr<LearnQueue>> learn;
  std::unique_ptr<WorkerCounters[]> counters(new WorkerCounters[kWorkers]);
  std::vector<std::unique_ptr<Worker>> workers;
  std::atomic<bool> stop{false};
  for (uint16_t w = 0; w < kWorkers; ++w) {
    learn.push_back(*LearnQueue::Create("grace_learn" + std::to_string(w), 1024));
    ForwarderOptions options;
    options.worker = w;
    workers.push_back(std::make_unique<Worker>(options, datapath, *learn[w], counters[w],
                                               *quiescence, 32, stop));
  }
  for (uint16_t w = 0; w < kWorkers; ++w) {
    ASSERT_EQ(rte_eal_remote_launch(&Worker::Main, workers[w].get(), lcores[w]), 0);
  }
  rte_mbuf* frame = MakeFrame(pool, {kMac[0], kBcast});  // a broadcast: floods
  uint64_t trapped = 0;
  for (int i = 1; i <= 1000; ++i) {
    // Traffic for the workers to forward while the table changes under them.
    for (uint16_t q = 0; q < kWorkers; ++q) {
      rte_mbuf* burst[32];
      uint16_t n = 0;
      for (; n < 32; ++n) {
        burst[n] = rte_pktmbuf_copy(frame, pool, 0, UINT32_MAX);
        if (burst[n] == nullptr) break;
      }
      const unsigned put = in->Inject(q, burst, n);
      if (put < n) rte_pktmbuf_free_bulk(burst + put, n - put);
    }
    PortTable* next = tables[i % kTables].get();
    PortTable* old = tables[(i - 1) % kTables].get();
    make_good(*next);
    datapath.table.store(next, std::memory_order_release);
    quiescence->Synchronize();
    make_trap(*old);  // from now on no worker may read it
    for (rte_mbuf* m : trap->TakeSent()) {
      ++trapped;
      rte_pktmbuf_free(m);
    }
  }
  stop.store(true);
  for (uint16_t w = 0; w < kWorkers; ++w) rte_eal_wait_lcore(lcores[w]);
  quiescence->Synchronize();  // the workers' offline reports: done, in TSan's sight too
  for (rte_mbuf* m : trap->TakeSent()) {
    ++trapped;
    rte_pktmbuf_free(m);
  }
  for (uint16_t w = 0; w < kWorkers; ++w) {
    trapped += counters[w].ports[kTrap].tx_drops[static_cast<size_t>(TxDrop::kQueueFull)].Read();
  }
  EXPECT_EQ(trapped, 0u) << "frames forwarded with a table past its grace period";
  uint64_t received = 0;
  for (uint16_t w = 0; w < kWorkers; ++w) {
    received += counters[w].ports[0][PortCounter::kRxPackets].Read();
  }
  EXPECT_GT(received, 0u);

  rte_pktmbuf_free(frame);
  workers.clear();
  in.reset();
  trap.reset();
  fdb.reset();
  learn.clear();
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u) << "mbufs leaked";
  rte_mempool_free(pool);
}

}  // namespace
}  // namespace hvswitch
