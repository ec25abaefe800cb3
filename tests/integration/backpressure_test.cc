// Backpressure for kernel and NIC ports (Forwarder::PausedSources): a worker, driven
// round by round from the test thread, over four net_ring ports. Port 0 (S) stands for a
// kernel or NIC port (rx_backpressure), port 3 (G) for a guest; port 1 (D) is the
// destination whose transmit ring the test fills (a guest not draining) and empties,
// port 2 (C) another destination that always has room. MACs are static: A behind S, B
// behind D, C behind C, G behind G. Windows are 0 (a park ends at the first offer that
// sends nothing) or an hour (never within a test): nothing depends on how fast it runs.
#include <rte_cycles.h>
#include <rte_ethdev.h>
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
using testing::ParseFrame;
using testing::RingPort;
using testing::TestFrame;

constexpr uint16_t kS = 0, kD = 1, kC = 2, kG = 3, kPorts = 4;
constexpr uint64_t kMacA = 0x0a00, kMacB = 0x0b00, kMacC = 0x0c00, kMacG = 0x0d00;
constexpr unsigned kTxRing = 256;  // D's transmit ring: 255 frames fill it

class BackpressureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int instance = 0;
    name_ = "bp" + std::to_string(++instance);
    pool_ = rte_pktmbuf_pool_create((name_ + "pool").c_str(), 8191, 0, 0,
                                    RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(pool_, nullptr);
    fdb_ = *Fdb::Create(name_ + "fdb", 1024);
    learn_ = *LearnQueue::Create(name_ + "learn", 1024);
    quiescence_ = *WorkerQuiescence::Create(1);
    datapath_.fdb = fdb_.get();
    for (uint16_t p = 0; p < kPorts; ++p) {
      ports_.push_back(RingPort::Create(name_ + "_" + std::to_string(p), 1, 1, 1024, pool_,
                                        kTxRing));
      ASSERT_NE(ports_.back(), nullptr);
    }
    for (auto [mac, port] : {std::pair{kMacA, kS}, {kMacB, kD}, {kMacC, kC}, {kMacG, kG}}) {
      ASSERT_TRUE(fdb_->AddStatic(mac, port).ok());
    }
    datapath_.up_mask.store((1u << kPorts) - 1);
  }

  void TearDown() override {
    if (worker_ != nullptr) worker_->LetGoOfTable();
    worker_.reset();
    for (auto& port : ports_) {
      for (rte_mbuf* m : port->TakeSent()) rte_pktmbuf_free(m);
    }
    ports_.clear();
    EXPECT_EQ(rte_mempool_in_use_count(pool_), 0u) << "mbufs leaked";
    rte_mempool_free(pool_);
  }

  // The ports as the bridge would publish them, S a kernel or NIC port, and a worker
  // polling all of them with `options`.
  void Start(ForwarderOptions options, std::vector<PortSpec> specs = std::vector<PortSpec>(kPorts),
             uint16_t burst = 32) {
    table_.Configure(specs);
    for (uint16_t p = 0; p < kPorts; ++p) {
      table_.ports[p].eth_port = ports_[p]->eth_port();
      table_.rx[0].push_back({p, ports_[p]->eth_port(), 0});
    }
    table_.ports[kS].rx_backpressure = true;
    table_.Seal();
    datapath_.table.store(&table_);
    worker_ = std::make_unique<Worker>(options, datapath_, *learn_, counters_, *quiescence_,
                                       burst, stop_);
  }
  static ForwarderOptions Window(uint64_t park_window_cycles) {
    ForwarderOptions options;
    options.park_window_cycles = park_window_cycles;
    return options;
  }
  static uint64_t AnHour() { return rte_get_tsc_hz() * 3600; }

  // Returns the round's busy cycles (Worker::Round).
  uint64_t Round() {
    uint64_t now, busy = 0;
    worker_->Round(table_, now, busy);
    return busy;
  }
  // Frames src>dst with sequence numbers from `seq` into `port`'s receive queue.
  void Inject(uint16_t port, uint64_t src, uint64_t dst, uint32_t n, uint32_t seq = 0) {
    std::vector<rte_mbuf*> frames;
    for (uint32_t i = 0; i < n; ++i) frames.push_back(MakeFrame(pool_, {src, dst, -1, 50, seq + i}));
    ASSERT_EQ(ports_[port]->Inject(0, frames.data(), n), n);
  }
  // Fills D's transmit ring: a guest that stopped draining.
  // D full, then 16 frames A>B from S: parked (none dropped), S paused once; then 16 more
  // A>B (sequence numbers 16-31) waiting in S's receive queue.
  void ParkSixteenOfSAtD() {
    FillD();
    Inject(kS, kMacA, kMacB, 16);
    Round();
    EXPECT_EQ(QueueFull(kD), 0u);
    EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 1u);
    Inject(kS, kMacA, kMacB, 16, 16);
  }
  void FillD() {
    rte_mbuf* m;
    do {
      m = MakeFrame(pool_, {kMacG, kMacG});
    } while (rte_eth_tx_burst(ports_[kD]->eth_port(), 0, &m, 1) == 1);
    rte_pktmbuf_free(m);
  }
  // Empties `port`'s transmit ring; returns the sequence numbers of its frames src>dst.
  std::vector<uint32_t> Take(uint16_t port, uint64_t src, uint64_t dst) {
    std::vector<uint32_t> seqs;
    for (rte_mbuf* m : ports_[port]->TakeSent()) {
      const TestFrame f = ParseFrame(m);
      if (f.src == src && f.dst == dst) seqs.push_back(f.seq);
      rte_pktmbuf_free(m);
    }
    return seqs;
  }
  static std::vector<uint32_t> Seqs(uint32_t first, uint32_t n) {
    std::vector<uint32_t> seqs;
    for (uint32_t i = 0; i < n; ++i) seqs.push_back(first + i);
    return seqs;
  }
  uint64_t QueueFull(uint16_t port) {
    return counters_.ports[port].tx_drops[static_cast<size_t>(TxDrop::kQueueFull)].Read();
  }
  uint64_t Count(uint16_t port, PortCounter counter) {
    return counters_.ports[port][counter].Read();
  }
  // 16 frames from `source` for the full D: dropped at once, the source not paused.
  void ExpectDroppedAtOnce(uint16_t source, uint64_t src_mac) {
    FillD();
    Inject(source, src_mac, kMacB, 16);
    Round();
    EXPECT_EQ(QueueFull(kD), 16u);
    EXPECT_EQ(Count(source, PortCounter::kRxPauses), 0u);
    EXPECT_EQ(ports_[source]->Waiting(0), 0u);
  }

  std::string name_;
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<LearnQueue> learn_;
  std::unique_ptr<WorkerQuiescence> quiescence_;
  std::vector<std::unique_ptr<RingPort>> ports_;
  PortTable table_;
  Datapath datapath_;
  WorkerCounters counters_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<Worker> worker_;
};

// S's frames for the full D are parked, and S is not polled: its next frames, for D and
// for C alike, wait in its own receive queue. Once D drains, the parked frames go first,
// then S is polled again and the rest follows, in order; nothing was dropped.
TEST_F(BackpressureTest, AKernelPortsFramesWaitInItsQueueWhileTheDestinationIsFull) {
  Start(Window(AnHour()));
  ParkSixteenOfSAtD();
  Inject(kS, kMacA, kMacC, 8);
  for (int i = 0; i < 5; ++i) Round();
  EXPECT_EQ(ports_[kS]->Waiting(0), 24u) << "a paused port was polled";
  EXPECT_TRUE(Take(kC, kMacA, kMacC).empty());
  EXPECT_EQ(QueueFull(kD), 0u);

  EXPECT_TRUE(Take(kD, kMacA, kMacB).empty());  // the guest drains its ring
  Round();                                      // the parked frames go, S is resumed
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(0, 16));
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 1u);
  EXPECT_GT(Count(kS, PortCounter::kRxPauseCycles), 0u);
  Round();
  EXPECT_EQ(ports_[kS]->Waiting(0), 0u);
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(16, 16));
  EXPECT_EQ(Take(kC, kMacA, kMacC), Seqs(0, 8));
  EXPECT_EQ(QueueFull(kD), 0u);
  EXPECT_EQ(Count(kD, PortCounter::kTxPackets), 32u);
}

// A guest's frames are not parked: what D refuses is dropped, and the guest's ring is
// polled as before.
TEST_F(BackpressureTest, AGuestsFramesAreDroppedAsBefore) {
  Start(Window(AnHour()));
  ExpectDroppedAtOnce(kG, kMacG);
  Inject(kG, kMacG, kMacB, 16, 16);
  Round();
  EXPECT_EQ(ports_[kG]->Waiting(0), 0u);
  EXPECT_EQ(QueueFull(kD), 32u);
  EXPECT_EQ(Count(kG, PortCounter::kRxPauses), 0u);
}

// A destination that takes none of the parked frames within the window gets them
// dropped and pauses its sources no more: S is paused once, for one window (here: none),
// then its frames for C flow every round while those for the stalled D are dropped.
TEST_F(BackpressureTest, AStalledDestinationPausesItsSourcesForOneWindowOnly) {
  Start(Window(0));
  FillD();
  for (uint32_t round = 0; round < 4; ++round) {
    for (uint32_t i = 0; i < 8; ++i) {
      Inject(kS, kMacA, kMacB, 1, round * 8 + i);
      Inject(kS, kMacA, kMacC, 1, round * 8 + i);
    }
    Round();
    EXPECT_EQ(ports_[kS]->Waiting(0), 0u) << "round " << round;
    EXPECT_EQ(Take(kC, kMacA, kMacC), Seqs(round * 8, 8)) << "round " << round;
    EXPECT_EQ(QueueFull(kD), (round + 1) * 8u);
  }
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 1u);
  EXPECT_GT(Count(kS, PortCounter::kRxPauseCycles), 0u);
}

// D stalled, then taking frames again: once a transmit to it took some, it is waited for
// again. (tx_retries=1: a first call and one retry, 4 frames each once D drains.)
TEST_F(BackpressureTest, AStalledDestinationThatDrainsAgainIsWaitedForAgain) {
  std::vector<PortSpec> specs(kPorts);
  specs[kD].tx_retries = 1;
  Start(Window(0), specs);
  FillD();
  Inject(kS, kMacA, kMacB, 8);
  Round();  // parked, offered in vain, dropped: D is stalled
  EXPECT_EQ(QueueFull(kD), 8u);
  Take(kD, kMacA, kMacB);
  FillD();
  ports_[kD]->DrainOnTransmit(4);  // from now on it frees 4 at each transmit call
  Inject(kS, kMacA, kMacB, 16, 8);
  Round();  // 8 taken (D alive again), 8 parked and taken by the offer at the round's end
  ports_[kD]->DrainOnTransmit(0);
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 2u);
  EXPECT_EQ(QueueFull(kD), 8u);
  EXPECT_EQ(Count(kD, PortCounter::kTxPackets), 16u);
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(8, 16));
}

// A guest that drains slowly takes the parked frames a few at a time; S stays paused
// until all went, and nothing is dropped.
TEST_F(BackpressureTest, ASlowDestinationTakesTheParkedFramesAsItDrains) {
  Start(Window(AnHour()));
  FillD();
  ports_[kD]->DrainOnTransmit(4, 2);  // 4 frames freed at every other transmit call
  Inject(kS, kMacA, kMacB, 32);
  Inject(kS, kMacA, kMacC, 4);
  int rounds = 0;
  do {
    Round();
  } while (++rounds < 100 && ports_[kS]->Waiting(0) != 0);
  ports_[kD]->DrainOnTransmit(0);
  EXPECT_GT(rounds, 2);
  EXPECT_EQ(QueueFull(kD), 0u);
  EXPECT_EQ(Count(kD, PortCounter::kTxPackets), 32u);
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 1u);
  EXPECT_EQ(Take(kC, kMacA, kMacC), Seqs(0, 4));
  EXPECT_EQ(ports_[kD]->Drained(), 32u);  // fillers: the frames stay in the ring
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(0, 32));
}

// A poll of 80 frames is two bursts for the forwarder (64 + 16): the second's frames for
// D queue up behind the first's parked ones instead of overtaking them when D takes some.
// (D frees 8 frames at every transmit call; tx_retries=1: 16 a flush.)
TEST_F(BackpressureTest, FramesBehindParkedOnesKeepTheirOrder) {
  std::vector<PortSpec> specs(kPorts);
  specs[kD].tx_retries = 1;
  Start(Window(AnHour()), specs, 128);
  FillD();
  ports_[kD]->DrainOnTransmit(8);
  Inject(kS, kMacA, kMacB, 80);
  for (int rounds = 0; rounds < 20 && Count(kD, PortCounter::kTxPackets) < 80; ++rounds) Round();
  ports_[kD]->DrainOnTransmit(0);
  EXPECT_EQ(QueueFull(kD), 0u);
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 1u);
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(0, 80));
}

// tx_retries=0: the operator does not want D waited for; S is never paused for it.
TEST_F(BackpressureTest, NoWaitingForADestinationWithTxRetriesZero) {
  std::vector<PortSpec> specs(kPorts);
  specs[kD].tx_retries = 0;
  Start(Window(AnHour()), specs);
  ExpectDroppedAtOnce(kS, kMacA);
}

// A port is paused only within its budget: none at all, and it is never paused; spent
// during a pause, and it is polled again while its frames still wait, and what D refuses
// of it from then on is dropped.
TEST_F(BackpressureTest, APortIsPausedOnlyWithinItsBudget) {
  ForwarderOptions options = Window(AnHour());
  options.pause_period_cycles = AnHour();
  Start(options);
  ExpectDroppedAtOnce(kS, kMacA);
}

TEST_F(BackpressureTest, APortWhoseBudgetIsSpentIsPolledAgain) {
  ForwarderOptions options = Window(AnHour());
  options.pause_period_cycles = AnHour();
  options.pause_budget_cycles = 1;  // spent by the time the round offers the parked frames
  Start(options);
  ParkSixteenOfSAtD();
  Inject(kS, kMacA, kMacC, 4);
  Round();
  EXPECT_EQ(ports_[kS]->Waiting(0), 0u);
  EXPECT_EQ(Take(kC, kMacA, kMacC), Seqs(0, 4));
  EXPECT_EQ(QueueFull(kD), 32u);
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 1u);
}

// Parked frames whose destination goes down are dropped as link_down; a table change
// drops them as queue_full; either way S is polled again.
TEST_F(BackpressureTest, ParkedFramesEndWithTheirDestinationOrTheTable) {
  Start(Window(AnHour()));
  FillD();
  Inject(kS, kMacA, kMacB, 8);
  Round();
  datapath_.up_mask.fetch_and(~(1u << kD));
  Inject(kS, kMacA, kMacB, 8, 8);
  Round();  // dropped, S resumed
  EXPECT_EQ(counters_.ports[kD].tx_drops[static_cast<size_t>(TxDrop::kLinkDown)].Read(), 8u);
  Round();  // S polled: for a destination that is down
  EXPECT_EQ(ports_[kS]->Waiting(0), 0u);
  EXPECT_EQ(counters_.ports[kD].tx_drops[static_cast<size_t>(TxDrop::kLinkDown)].Read(), 16u);
  datapath_.up_mask.fetch_or(1u << kD);
  Inject(kS, kMacA, kMacB, 8, 16);
  Round();
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 2u);
  worker_->LetGoOfTable();
  EXPECT_EQ(QueueFull(kD), 8u);
  Inject(kS, kMacA, kMacC, 4);
  Round();
  EXPECT_EQ(Take(kC, kMacA, kMacC), Seqs(0, 4));
}

// Frames waiting in one transmit buffer (a flush interval) from a guest and from S: only
// S's are parked, the guest's dropped.
TEST_F(BackpressureTest, InAMixedBurstOnlyTheKernelPortsFramesAreParked) {
  ForwarderOptions options = Window(AnHour());
  options.flush_cycles = 1;  // sent at the end of the round
  Start(options);
  FillD();
  Inject(kS, kMacA, kMacB, 8);
  Inject(kG, kMacG, kMacB, 8);
  Round();
  EXPECT_EQ(QueueFull(kD), 8u);
  EXPECT_EQ(Count(kS, PortCounter::kRxPauses), 1u);
  EXPECT_EQ(Count(kG, PortCounter::kRxPauses), 0u);
  Take(kD, kMacG, kMacG);
  Round();
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(0, 8));
  EXPECT_EQ(QueueFull(kD), 8u);
}

// Busy cycles as testpmd counts them: the poll calls that returned frames and their work,
// none for a round of empty polls, never more than the round took; each port charged
// with its own frames' share.
TEST_F(BackpressureTest, BusyCyclesAreThePollsThatReturnedFrames) {
  Start(ForwarderOptions{});
  EXPECT_EQ(Round(), 0u);
  Inject(kS, kMacA, kMacB, 16);
  const uint64_t before = rte_rdtsc();
  const uint64_t busy = Round();
  const uint64_t round = rte_rdtsc() - before;
  EXPECT_GT(busy, 0u);
  EXPECT_LE(busy, round);
  // All of it on S's account (hvswitch_port_cpu_seconds_total), none on the others'.
  EXPECT_EQ(Count(kS, PortCounter::kCpuCycles), busy);
  EXPECT_EQ(Count(kD, PortCounter::kCpuCycles), 0u);
  EXPECT_EQ(Take(kD, kMacA, kMacB).size(), 16u);
  EXPECT_EQ(Round(), 0u);
}

// --- Residence (hvswitch_port_residence_seconds) ------------------------------------------
// A sample is bounded by clock reads around the rounds: at least the time the test made
// the frames wait, at most from before the round that received them to after the one that
// sent them. Neither bound depends on how fast the rounds run.

class ResidenceTest : public BackpressureTest {
 protected:
  const HistogramCells<Counter>& Residence(uint16_t port) {
    return counters_.ports[port].histograms[static_cast<size_t>(PortHistogram::kResidence)];
  }
  uint64_t Samples(uint16_t port) {
    uint64_t n = 0;
    for (const Counter& b : Residence(port).buckets) n += b.Read();
    return n;
  }
  // The only sample of `port`: in the bucket its sum falls in, between the bounds (TSC).
  void ExpectOneSampleBetween(uint16_t port, uint64_t at_least, uint64_t at_most) {
    ASSERT_EQ(Samples(port), 1u);
    const uint64_t ns = Residence(port).sum_ns.Read();
    EXPECT_EQ(Residence(port).buckets[HistogramBucket(ns)].Read(), 1u) << ns;
    EXPECT_GE(ns, Ns(at_least));
    EXPECT_LE(ns, Ns(at_most) + 1);
  }
  static uint64_t Ns(uint64_t cycles) {
    return static_cast<uint64_t>(static_cast<double>(cycles) * 1e9 /
                                 static_cast<double>(rte_get_tsc_hz()));
  }
};

// The first transmit to a port that sends frames is sampled, then one in
// kResidenceSampleEvery; every sample lands in exactly one bucket.
TEST_F(ResidenceTest, OneTransmitInNIsSampledIntoOneBucket) {
  Start(ForwarderOptions{});
  const uint64_t before = rte_rdtsc();
  Inject(kS, kMacA, kMacC, 1);
  Round();
  ExpectOneSampleBetween(kC, 0, rte_rdtsc() - before);
  for (uint32_t i = 1; i < 2 * kResidenceSampleEvery + 1; ++i) {
    Inject(kS, kMacA, kMacC, 1, i);
    Round();
  }
  EXPECT_EQ(Take(kC, kMacA, kMacC).size(), 2 * kResidenceSampleEvery + 1);
  EXPECT_EQ(Count(kC, PortCounter::kTxBursts), 2 * kResidenceSampleEvery + 1);
  EXPECT_EQ(Samples(kC), 3u);  // transmits 1, 33 and 65
  EXPECT_EQ(Samples(kD), 0u);  // nothing sent there
}

// A frame held for company (tx_flush_us) waits at least the flush interval.
TEST_F(ResidenceTest, AFrameHeldForAFlushIntervalWaitsAtLeastThatLong) {
  ForwarderOptions options;
  options.flush_cycles = rte_get_tsc_hz() / 20'000;  // 50 us
  Start(options);
  Inject(kS, kMacA, kMacC, 1);
  const uint64_t before = rte_rdtsc();
  do {
    Round();
  } while (Count(kC, PortCounter::kTxPackets) == 0);
  ExpectOneSampleBetween(kC, options.flush_cycles, rte_rdtsc() - before);
  EXPECT_GE(HistogramBucket(Residence(kC).sum_ns.Read()), HistogramBucket(Ns(options.flush_cycles)));
  EXPECT_EQ(Take(kC, kMacA, kMacC), Seqs(0, 1));
}

// Frames parked for a full destination are measured from their receive, not from the
// offer that finally sent them; the refused transmit that parked them is no sample.
TEST_F(ResidenceTest, AParkedFrameCountsFromItsReceive) {
  Start(Window(AnHour()));
  const uint64_t before = rte_rdtsc();
  ParkSixteenOfSAtD();
  EXPECT_EQ(Samples(kD), 0u);
  const uint64_t wait = rte_get_tsc_hz() / 1'000;  // 1 ms
  const uint64_t until = rte_rdtsc() + wait;
  while (rte_rdtsc() < until) Round();  // offered again every round, refused
  EXPECT_EQ(Samples(kD), 0u);
  Take(kD, kMacG, kMacG);  // D drains
  Round();
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(0, 16));
  ExpectOneSampleBetween(kD, wait, rte_rdtsc() - before);
  Round();  // S polled again: its next 16, a second transmit, not sampled
  EXPECT_EQ(Take(kD, kMacA, kMacB), Seqs(16, 16));
  EXPECT_EQ(Samples(kD), 1u);
}

}  // namespace
}  // namespace hvswitch
