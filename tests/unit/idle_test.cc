// --idle=sleep's pieces that need no device: the back-off schedule and the receive-ring
// bound on a sleep.
#include <gtest/gtest.h>

#include <vector>

#include "switch/control/rx_hold.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/idle_backoff.h"

namespace hvswitch {
namespace {

constexpr uint32_t kMax = 250'000;
constexpr uint64_t kHz = 1'000'000'000;  // a TSC of 1 GHz: a cycle a nanosecond

// Rounds every 1 us without frames from `now` on: the sleeps of the first `n` (0: polled);
// `now` advanced past them (sleeps included).
std::vector<uint32_t> QuietRounds(IdleBackoff& idle, uint64_t& now, int n, uint32_t max_ns = kMax) {
  std::vector<uint32_t> sleeps;
  for (int i = 0; i < n; ++i) {
    sleeps.push_back(idle.Next(0, false, max_ns, now));
    now += 1000 + sleeps.back();
  }
  return sleeps;
}

TEST(IdleBackoffTest, SleepsOnlyAfterBeingQuietLongEnoughThenDoublesUpToTheMaximum) {
  IdleBackoff idle(kHz);
  uint64_t now = 1'000'000;
  // 50 us of rounds without frames: none sleeps.
  for (uint32_t ns : QuietRounds(idle, now, IdleBackoff::kQuietNs / 1000)) EXPECT_EQ(ns, 0u);
  EXPECT_EQ(QuietRounds(idle, now, 11), (std::vector<uint32_t>{1000, 2000, 4000, 8000, 16000,
                                                               32000, 64000, 128000, 250000,
                                                               250000, 250000}));
}

TEST(IdleBackoffTest, FramesOrFramesWaitingReturnToPollingAtOnce) {
  IdleBackoff idle(kHz);
  uint64_t now = 1'000'000;
  QuietRounds(idle, now, IdleBackoff::kQuietNs / 1000 + 5);
  EXPECT_EQ(idle.Next(3, false, kMax, now), 0u);  // a round with frames
  for (uint32_t ns : QuietRounds(idle, now, IdleBackoff::kQuietNs / 1000)) EXPECT_EQ(ns, 0u);
  EXPECT_EQ(idle.Next(0, false, kMax, now), 1000u);  // the schedule starts again
  EXPECT_EQ(idle.Next(0, true, kMax, now), 0u);      // frames wait to be sent
  for (uint32_t ns : QuietRounds(idle, now, IdleBackoff::kQuietNs / 1000)) EXPECT_EQ(ns, 0u);
  EXPECT_EQ(idle.Next(0, false, kMax, now), 1000u);
}

TEST(IdleBackoffTest, TrafficCloserThanTheQuietTimeNeverMeetsASleep) {
  IdleBackoff idle(kHz);
  uint64_t now = 1'000'000;
  for (int frame = 0; frame < 1000; ++frame) {  // a frame every 40 us, rounds every 1 us
    for (uint32_t ns : QuietRounds(idle, now, 39)) EXPECT_EQ(ns, 0u);
    EXPECT_EQ(idle.Next(1, false, kMax, now), 0u);
    now += 1000;
  }
}

TEST(IdleBackoffTest, AWorkerWithoutSleepPollsAndALowerMaximumTakesEffectAtOnce) {
  IdleBackoff idle(kHz);
  uint64_t now = 1'000'000;
  for (uint32_t ns : QuietRounds(idle, now, 200, 0)) EXPECT_EQ(ns, 0u);  // --idle=poll
  QuietRounds(idle, now, IdleBackoff::kQuietNs / 1000 + 20);  // at the maximum by now
  EXPECT_EQ(idle.Next(0, false, 68'813, now), 68'813u);       // a smaller ring joined
  EXPECT_EQ(idle.Next(0, false, 68'813, now), 68'813u);
  EXPECT_EQ(idle.Next(0, false, 700, now), 700u);  // below the first sleep
}

TEST(RxHoldTest, ARingHoldsItsDescriptorsOverTheLineRateOf64ByteFrames) {
  // 10 Gb/s: 14.88 M frames/s of 84 bytes on the wire.
  EXPECT_NEAR(RxHoldNs(1024, 10'000), 68'813, 1);
  EXPECT_NEAR(RxHoldNs(4096, 10'000), 275'251, 1);
  EXPECT_NEAR(RxHoldNs(1024, 100'000), 6'881, 1);
  EXPECT_NEAR(RxHoldNs(1024, 1'000), 688'128, 1);
  EXPECT_EQ(RxHoldNs(1024, 0), RxHoldNs(1024, 10'000));  // unknown: taken as 10 Gb/s
  EXPECT_LT(RxHoldNs(8192, 10), DatapathPort::kRingWaits);  // never "waits" by accident
}

TEST(PortTableTest, AWorkersLongestSleepIsTheSmallestOfItsRingsAndTheMaximum) {
  PortTable table;
  table.Configure(std::vector<PortSpec>(3));
  table.idle_max_ns = kMax;
  table.ports[0].rx_hold_ns = 68'813;  // a device ring
  table.ports[2].rx_hold_ns = 500'000;
  table.rx[0] = {{0, 0, 0}, {1, 1, 0}};  // port 1: a guest's ring
  table.rx[1] = {{1, 1, 1}, {2, 2, 0}};
  table.Seal();
  EXPECT_EQ(table.max_sleep_ns[0], 68'813u);
  EXPECT_EQ(table.max_sleep_ns[1], kMax);
  EXPECT_EQ(table.max_sleep_ns[2], kMax);  // polls nothing
  table.idle_max_ns = 0;                   // --idle=poll
  table.Seal();
  EXPECT_EQ(table.max_sleep_ns[0], 0u);
  EXPECT_EQ(table.max_sleep_ns[1], 0u);
}

TEST(WorkerCountersTest, SleepIncludesABlockInProgressAndNeverGoesBack) {
  WorkerCounters counters;
  counters[CoreCounter::kSleepCycles].Add(100);
  EXPECT_EQ(counters.SleptCycles(1000), 100u);
  counters.blocked_since.store(1000);  // blocked at TSC 1000
  EXPECT_EQ(counters.SleptCycles(1500), 600u);
  EXPECT_EQ(counters.SleptCycles(1200), 600u);  // an earlier TSC read later: not less
  // Between the block's end and its time added a reader sees neither part.
  counters.blocked_since.store(0);
  EXPECT_EQ(counters.SleptCycles(2000), 600u);
  counters[CoreCounter::kSleepCycles].Add(1000);  // the block lasted 1000
  EXPECT_EQ(counters.SleptCycles(2000), 1100u);
  counters.blocked_since.store(3000);
  counters.EndBlock(500);
  EXPECT_EQ(counters.SleptCycles(9000), 1600u);
}

TEST(PortTableTest, AWorkerBlocksOnlyWhenEveryQueueItPollsInterrupts) {
  PortTable table;
  table.Configure(std::vector<PortSpec>(3));
  table.idle_max_ns = kMax;
  table.ports[0].rx_interrupts = true;  // vhost-user
  table.ports[1].rx_interrupts = true;
  table.ports[2].rx_interrupts = false;  // memif
  table.rx[0] = {{0, 0, 0}, {1, 1, 0}};
  table.rx[1] = {{1, 1, 1}, {2, 2, 0}};
  table.Seal();
  EXPECT_EQ(table.blocks, 0u);  // --idle=sleep
  EXPECT_EQ(table.WorkerIdle(0), IdleMode::kSleep);
  table.idle_interrupt = true;
  table.Seal();
  EXPECT_EQ(table.WorkerIdle(0), IdleMode::kInterrupt);
  EXPECT_EQ(table.WorkerIdle(1), IdleMode::kSleep);  // memif has no receive interrupts
  EXPECT_EQ(table.WorkerIdle(2), IdleMode::kInterrupt);  // polls nothing: waits for news
  table.ports[0].rx_hold_ns = 0;  // a ring that cannot wait at all: polled
  table.Seal();
  EXPECT_EQ(table.WorkerIdle(0), IdleMode::kPoll);
  EXPECT_EQ(table.blocks, uint64_t{0xfffc});  // workers 2-15 of kMaxWorkers
}

}  // namespace
}  // namespace hvswitch
