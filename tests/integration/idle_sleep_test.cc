// --idle=sleep and interrupt with a real worker on its own lcore: it sleeps while its
// rings are empty (counted), a publication does not wait for its sleep, and frames that
// arrive while it sleeps wait in the receive ring and are all forwarded. Under interrupt
// it blocks (ring ports have no interrupts: only a worker without queues blocks here;
// vhost-user guests are the e2e test's), a publication rings it, and a queue that cannot
// interrupt leaves it sleeping.
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
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
using testing::RingPort;

constexpr uint64_t kMac[2] = {0x0a00, 0x0b00};

class IdleSleepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Names of their own per test: DPDK keeps a device's and a ring's name in use.
    static int instance = 0;
    const std::string tag = "idle" + std::to_string(instance++);
    lcore_ = rte_get_next_lcore(-1, 1, 0);
    ASSERT_LT(lcore_, RTE_MAX_LCORE) << "the test EAL needs a second lcore";
    pool_ = rte_pktmbuf_pool_create((tag + "_pool").c_str(), 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(pool_, nullptr);
    fdb_ = *Fdb::Create(tag + "_fdb", 1024);
    table_.Configure(std::vector<PortSpec>(2));
    for (uint16_t p = 0; p < 2; ++p) {
      ports_.push_back(RingPort::Create(tag + "p" + std::to_string(p), 1, 1, 1024, pool_));
      ASSERT_NE(ports_.back(), nullptr);
      table_.ports[p].eth_port = ports_.back()->eth_port();
      table_.rx[0].push_back({p, ports_.back()->eth_port(), 0});
      ASSERT_TRUE(fdb_->AddStatic(kMac[p], p).ok());
    }
    table_.idle_max_ns = 200'000;
    table_.Seal();
    datapath_.fdb = fdb_.get();
    datapath_.table.store(&table_);
    datapath_.up_mask.store(3);
    quiescence_ = *WorkerQuiescence::Create(1);
    learn_ = *LearnQueue::Create(tag + "_learn", 1024);
    ForwarderOptions options;
    worker_ = std::make_unique<Worker>(options, datapath_, *learn_, counters_, *quiescence_, 32,
                                       stop_);
    ASSERT_EQ(rte_eal_remote_launch(&Worker::Main, worker_.get(), lcore_), 0);
    launched_ = true;
  }

  void TearDown() override {
    if (launched_) {
      stop_.store(true);
      quiescence_->WakeBlocked();
      rte_eal_wait_lcore(lcore_);
      quiescence_->Synchronize();
    }
    worker_.reset();
    for (auto& port : ports_) {
      for (rte_mbuf* m : port->TakeSent()) rte_pktmbuf_free(m);
    }
    ports_.clear();
    if (pool_ != nullptr) {
      EXPECT_EQ(rte_mempool_in_use_count(pool_), 0u) << "mbufs leaked";
      rte_mempool_free(pool_);
    }
  }

  uint64_t Core(CoreCounter c) const { return counters_[c].Read(); }

  // Frames from port 0 to port 1's MAC, sequence numbers from `first`.
  unsigned Inject(unsigned n, uint32_t first) {
    std::vector<rte_mbuf*> frames;
    for (unsigned i = 0; i < n; ++i) {
      frames.push_back(MakeFrame(pool_, {.src = kMac[0], .dst = kMac[1], .seq = first + i}));
    }
    const unsigned in = ports_[0]->Inject(0, frames.data(), n);
    for (unsigned i = in; i < n; ++i) rte_pktmbuf_free(frames[i]);
    return in;
  }

  // Takes what port 1 sent until `n` frames came or 5 s passed; returns how many came.
  uint64_t Receive(uint64_t n) {
    uint64_t got = 0;
    const uint64_t deadline = rte_get_tsc_cycles() + 5 * rte_get_tsc_hz();
    while (got < n && rte_get_tsc_cycles() < deadline) {
      for (rte_mbuf* m : ports_[1]->TakeSent()) {
        ++got;
        rte_pktmbuf_free(m);
      }
      rte_delay_us_sleep(100);
    }
    return got;
  }

  unsigned lcore_ = RTE_MAX_LCORE;
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<Fdb> fdb_;
  PortTable table_;
  Datapath datapath_;
  std::vector<std::unique_ptr<RingPort>> ports_;
  std::unique_ptr<WorkerQuiescence> quiescence_;
  std::unique_ptr<LearnQueue> learn_;
  WorkerCounters counters_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<Worker> worker_;
  bool launched_ = false;
};

TEST_F(IdleSleepTest, AnIdleWorkerSleepsAndForwardsEveryFrameThatCameMeanwhile) {
  // Idle: it sleeps for most of the time (generous: this VM preempts), up to 200 us a time.
  const uint64_t start = rte_get_tsc_cycles();
  rte_delay_us_sleep(300'000);
  const uint64_t elapsed = rte_get_tsc_cycles() - start;
  const uint64_t slept = Core(CoreCounter::kSleepCycles), wakeups = Core(CoreCounter::kWakeupsTimer);
  EXPECT_GT(slept, elapsed / 4);
  EXPECT_GT(wakeups, 0u);
  // At least 200 us a sleep once backed off: far fewer wake-ups than 1 us sleeps would be.
  EXPECT_LT(wakeups, 300'000 / 50);

  // A publication while it sleeps: it must not wait for the worker (offline meanwhile),
  // and the worker must use the new table once awake.
  PortTable next = table_;
  datapath_.table.store(&next);
  quiescence_->Synchronize();

  // Frames put in its ring while it sleeps wait there: every one is forwarded.
  unsigned sent = 0;
  for (int burst = 0; burst < 20; ++burst) {
    sent += Inject(40, sent);
    rte_delay_us_sleep(1000);
  }
  EXPECT_EQ(sent, 800u);
  EXPECT_EQ(Receive(sent), sent);
  PortTotals in, out;
  in.AddFrom(counters_.ports[0]);
  out.AddFrom(counters_.ports[1]);
  EXPECT_EQ(in[PortCounter::kRxPackets], sent);
  EXPECT_EQ(out[PortCounter::kTxPackets], sent);
  for (uint64_t d : in.rx_drops) EXPECT_EQ(d, 0u);
  for (uint64_t d : out.tx_drops) EXPECT_EQ(d, 0u);
  EXPECT_GT(Core(CoreCounter::kWakeupsTimer), wakeups);
  datapath_.table.store(&table_);
  quiescence_->Synchronize();
}

TEST_F(IdleSleepTest, AWorkerWithoutSleepPollsOn) {
  PortTable polling = table_;
  polling.idle_max_ns = 0;
  polling.Seal();
  datapath_.table.store(&polling);
  quiescence_->Synchronize();
  rte_delay_us_sleep(2000);  // a sleep begun under the old table ends (200 us at most)
  const uint64_t wakeups = Core(CoreCounter::kWakeupsTimer);
  const uint64_t slept = Core(CoreCounter::kSleepCycles);
  rte_delay_us_sleep(100'000);
  EXPECT_EQ(Core(CoreCounter::kWakeupsTimer), wakeups);
  EXPECT_EQ(Core(CoreCounter::kSleepCycles), slept);
  EXPECT_EQ(Inject(100, 0), 100u);
  EXPECT_EQ(Receive(100), 100u);
  datapath_.table.store(&table_);
  quiescence_->Synchronize();
}

TEST_F(IdleSleepTest, AWorkerWithoutQueuesBlocksUntilAPublicationRingsIt) {
  PortTable empty = table_;
  empty.rx[0].clear();
  empty.idle_interrupt = true;
  empty.Seal();
  ASSERT_EQ(empty.WorkerIdle(0), IdleMode::kInterrupt);
  datapath_.table.store(&empty);
  quiescence_->Synchronize();
  rte_delay_us_sleep(50'000);  // backed off and blocked (a few ms of sleeps at most)
  const uint64_t timer = Core(CoreCounter::kWakeupsTimer);
  const uint64_t control = Core(CoreCounter::kWakeupsControl);
  rte_delay_us_sleep(100'000);
  EXPECT_EQ(Core(CoreCounter::kWakeupsTimer), timer) << "blocked, not sleeping";
  EXPECT_EQ(Core(CoreCounter::kWakeupsInterrupt), 0u);

  // The table with the ports: the blocked worker is rung (or Synchronize would wait for
  // ever), takes it, and forwards; its ring ports have no interrupts, so it sleeps on.
  PortTable ports = table_;
  ports.idle_interrupt = true;
  ports.Seal();
  ASSERT_EQ(ports.WorkerIdle(0), IdleMode::kSleep);
  datapath_.table.store(&ports);
  quiescence_->Synchronize();
  EXPECT_GT(Core(CoreCounter::kWakeupsControl), control);
  EXPECT_EQ(Inject(100, 0), 100u);
  EXPECT_EQ(Receive(100), 100u);
  // Blocked again at the end: TearDown's stop rings it.
  datapath_.table.store(&empty);
  quiescence_->Synchronize();
  rte_delay_us_sleep(50'000);
}

TEST_F(IdleSleepTest, AQueueThatCannotInterruptLeavesTheWorkerSleeping) {
  // Said to interrupt, but a ring's device has no interrupt handle: arming fails (logged)
  // and the worker sleeps instead of blocking on queues that would never wake it.
  PortTable claimed = table_;
  claimed.idle_interrupt = true;
  for (uint16_t p = 0; p < 2; ++p) claimed.ports[p].rx_interrupts = true;
  claimed.Seal();
  ASSERT_EQ(claimed.WorkerIdle(0), IdleMode::kInterrupt);
  datapath_.table.store(&claimed);
  quiescence_->Synchronize();
  rte_delay_us_sleep(50'000);
  const uint64_t timer = Core(CoreCounter::kWakeupsTimer);
  rte_delay_us_sleep(50'000);
  EXPECT_GT(Core(CoreCounter::kWakeupsTimer), timer);
  EXPECT_EQ(Inject(100, 0), 100u);
  EXPECT_EQ(Receive(100), 100u);
  datapath_.table.store(&table_);
  quiescence_->Synchronize();
}

}  // namespace
}  // namespace hvswitch
