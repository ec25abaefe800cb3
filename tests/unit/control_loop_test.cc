// What the control thread sleeps on and wakes for: the wake-up eventfd, the periodic
// jobs' timers, and the per-port limit on link log lines. Times are injected.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "switch/control/control_timers.h"
#include "switch/control/link_log_limit.h"
#include "switch/control/wakeup.h"

namespace hvswitch {
namespace {

using std::chrono::milliseconds;

TEST(WakeupTest, ARingEndsTheWaitOnceAndIsTaken) {
  std::unique_ptr<Wakeup> wakeup = *Wakeup::Create();
  std::vector<pollfd> none;
  const auto now = ControlClock::now();
  EXPECT_FALSE(wakeup->Wait(none, now));  // nothing rang: the deadline (already past)
  Wakeup::Ring(wakeup->fd());
  Wakeup::Ring(wakeup->fd());  // rings before a wait count as one
  EXPECT_TRUE(wakeup->Wait(none, ControlClock::time_point::max()));
  EXPECT_FALSE(wakeup->Wait(none, now));
  Wakeup::Ring(-1);  // nobody to ring: nothing
  EXPECT_FALSE(wakeup->Wait(none, now));
}

TEST(WakeupTest, ARingFromAnotherThreadEndsAnEndlessWait) {
  std::unique_ptr<Wakeup> wakeup = *Wakeup::Create();
  std::vector<pollfd> none;
  std::thread ringer([&] { wakeup->Ring(); });
  EXPECT_TRUE(wakeup->Wait(none, ControlClock::time_point::max()));
  ringer.join();
}

TEST(WakeupTest, AReadyDescriptorEndsTheWaitWithItsEvents) {
  std::unique_ptr<Wakeup> wakeup = *Wakeup::Create();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  std::vector<pollfd> fds = {{pipe_fds[0], POLLIN, 0}};
  EXPECT_FALSE(wakeup->Wait(fds, ControlClock::now()));
  EXPECT_EQ(fds[0].revents, 0);
  ASSERT_EQ(write(pipe_fds[1], "x", 1), 1);
  EXPECT_TRUE(wakeup->Wait(fds, ControlClock::time_point::max()));
  EXPECT_TRUE(fds[0].revents & POLLIN);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(ControlTimersTest, IdleTheThreadRunsTwentyTimesASecond) {
  const ControlClock::time_point start{};
  ControlTimers timers(start);
  int ages = 0, links = 0, pools = 0, wakes = 0;
  ControlClock::time_point now = start;
  // As the control loop runs them: asleep until the next job, with nothing else waking it.
  while (now < start + std::chrono::seconds(10)) {
    now = timers.Next(now, /*watching=*/false);
    const ControlTimers::Due due = timers.Take(now);
    ++wakes;
    ages += due.age;
    links += due.links;
    pools += due.pools;
    EXPECT_TRUE(due.age || due.links || due.pools);  // no wake for nothing
  }
  EXPECT_EQ(ages, 200);   // a 1/20 slice every 50 ms: the table once a second
  EXPECT_EQ(links, 100);  // the link fallback every 100 ms, with an ageing slice
  EXPECT_EQ(pools, 10);
  EXPECT_EQ(wakes, 200);
}

TEST(ControlTimersTest, AWatchedPortThatIsDownIsLookedAtEveryTenMilliseconds) {
  const ControlClock::time_point start{};
  ControlTimers timers(start);
  EXPECT_EQ(timers.Next(start, true), start + milliseconds(10));
  EXPECT_EQ(timers.Next(start + milliseconds(45), true), start + milliseconds(50));
  EXPECT_EQ(timers.Next(start, false), start + milliseconds(50));
  const ControlTimers::Due due = timers.Take(start + milliseconds(10));
  EXPECT_FALSE(due.age || due.links || due.pools);
}

TEST(ControlTimersTest, ALateThreadDoesNotCatchUpInABurst) {
  const ControlClock::time_point start{};
  ControlTimers timers(start);
  const ControlClock::time_point late = start + std::chrono::seconds(3);
  const ControlTimers::Due due = timers.Take(late);
  EXPECT_TRUE(due.age && due.links && due.pools);
  EXPECT_EQ(timers.Next(late, false), late + ControlTimers::kAgePeriod);
  const ControlTimers::Due again = timers.Take(late + milliseconds(1));
  EXPECT_FALSE(again.age || again.links || again.pools);
}

TEST(LinkLogLimitTest, APortFlappingInALoopWritesItsLimitThenOneCount) {
  LinkLogLimit limit;
  const ControlClock::time_point start{};
  int written = 0;
  // Two lines a millisecond for a second (a guest resetting its device in a loop).
  for (int ms = 0; ms < 1000; ++ms) {
    for (int line = 0; line < 2; ++line) {
      written += limit.Allow(3, start + milliseconds(ms));
      EXPECT_TRUE(limit.Expired(start + milliseconds(ms)).empty());
    }
  }
  EXPECT_EQ(written, LinkLogLimit::kLinesPerWindow);
  // Another port is not held back by it.
  EXPECT_TRUE(limit.Allow(4, start + milliseconds(999)));
  const std::vector<LinkLogLimit::HeldBack> held = limit.Expired(start + milliseconds(1000));
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].port, 3);
  EXPECT_EQ(held[0].lines, 2000u - LinkLogLimit::kLinesPerWindow);
  EXPECT_TRUE(limit.Expired(start + milliseconds(1000)).empty());  // told once
  // A new second: lines again.
  EXPECT_TRUE(limit.Allow(3, start + milliseconds(1001)));
}

TEST(LinkLogLimitTest, OrdinaryChangesAreAllWritten) {
  LinkLogLimit limit;
  ControlClock::time_point now{};
  // A guest reconnecting every 200 ms, with its offloads line: three lines each time.
  for (int i = 0; i < 100; ++i, now += milliseconds(200)) {
    for (int line = 0; line < 3; ++line) EXPECT_TRUE(limit.Allow(0, now));
    EXPECT_TRUE(limit.Expired(now).empty());
  }
}

TEST(LinkLogLimitTest, ARemovedPortsHeldLinesAreReturnedAndForgotten) {
  LinkLogLimit limit;
  const ControlClock::time_point start{};
  for (int i = 0; i < LinkLogLimit::kLinesPerWindow + 5; ++i) limit.Allow(7, start);
  EXPECT_EQ(limit.Forget(7), 5u);
  EXPECT_TRUE(limit.Expired(start + std::chrono::seconds(2)).empty());
  EXPECT_TRUE(limit.Allow(7, start));  // the next port in the slot starts afresh
}

}  // namespace
}  // namespace hvswitch
