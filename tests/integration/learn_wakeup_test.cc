// The workers wake the control thread through their learn queues: one eventfd write for
// the first request the control thread armed for, none after until it arms again; and
// the Learner arms them as it tells the control loop how soon to look again.
#include <sys/eventfd.h>

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ports/port_spec.h"
#include "switch/control/learner.h"
#include "switch/control/wakeup.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/learn_queue.h"

namespace hvswitch {
namespace {

// How many times the eventfd was written since the last call.
uint64_t Rings(const Wakeup& wakeup) {
  eventfd_t n = 0;
  return eventfd_read(wakeup.fd(), &n) == 0 ? n : 0;
}

uint64_t Key(uint64_t i) { return (i + 1) << 16 | 0x0200; }

class LearnWakeupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int instance = 0;
    ++instance;
    queue_ = *LearnQueue::Create(absl::StrCat("wake_q", instance), 64);
    wakeup_ = *Wakeup::Create();
    queue_->set_wakeup_fd(wakeup_->fd());
  }
  void Ask(uint64_t i) { ASSERT_TRUE(queue_->Request(Key(i), 1, ++tsc_)); }

  std::unique_ptr<LearnQueue> queue_;
  std::unique_ptr<Wakeup> wakeup_;
  uint64_t tsc_ = 0;
};

TEST_F(LearnWakeupTest, NobodyArmedNobodyRung) {
  for (int i = 0; i < 10; ++i) Ask(i);
  EXPECT_EQ(Rings(*wakeup_), 0u);
}

TEST_F(LearnWakeupTest, ArmedForAnyRequestTheFirstRingsOnce) {
  EXPECT_EQ(queue_->capacity(), 63u);
  EXPECT_TRUE(queue_->ArmWakeup(queue_->capacity()));  // empty: the caller may sleep
  Ask(0);
  EXPECT_EQ(Rings(*wakeup_), 1u);
  for (int i = 1; i < 10; ++i) Ask(i);  // no system call per request after the first
  EXPECT_EQ(Rings(*wakeup_), 0u);
  // Not drained: arming again says so (the control thread must not sleep on it).
  EXPECT_FALSE(queue_->ArmWakeup(queue_->capacity()));
  LearnRequest out[64];
  EXPECT_EQ(queue_->Drain(out, 64), 10u);
  EXPECT_TRUE(queue_->ArmWakeup(queue_->capacity()));
  Ask(10);
  EXPECT_EQ(Rings(*wakeup_), 1u);
}

TEST_F(LearnWakeupTest, ArmedForHalfTheRingTheRequestThatFillsHalfRings) {
  EXPECT_TRUE(queue_->ArmWakeup(queue_->capacity() / 2));  // fewer than 31 free
  for (int i = 0; i < 32; ++i) Ask(i);  // 31 free left
  EXPECT_EQ(Rings(*wakeup_), 0u);
  Ask(32);  // 30 free
  EXPECT_EQ(Rings(*wakeup_), 1u);
  Ask(33);
  EXPECT_EQ(Rings(*wakeup_), 0u);
  EXPECT_FALSE(queue_->ArmWakeup(queue_->capacity() / 2));  // already that full
}

TEST_F(LearnWakeupTest, TheLearnerArmsAsItSaysHowSoonToLookAgain) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("wake_fdb", 1024);
  Datapath datapath;
  datapath.fdb = fdb.get();
  Learner learner(*fdb, datapath, {queue_.get()});
  PortSpec spec;
  spec.name = "p1";
  learner.AddPort(1, spec);
  // Nothing asked: it sleeps until a worker rings, at the first request.
  EXPECT_EQ(learner.Poll(0), ControlClock::duration::max());
  Ask(0);
  EXPECT_EQ(Rings(*wakeup_), 1u);
  // Requests came: it looks again within a millisecond, rung only if half the ring fills.
  EXPECT_EQ(learner.Poll(0), std::chrono::milliseconds(1));
  EXPECT_EQ(fdb->learned(1), 1u);
  Ask(1);
  EXPECT_EQ(Rings(*wakeup_), 0u);
  EXPECT_EQ(learner.Poll(0), std::chrono::milliseconds(1));
  // A look that finds nothing: asleep again until the next request.
  EXPECT_EQ(learner.Poll(0), ControlClock::duration::max());
  Ask(2);
  EXPECT_EQ(Rings(*wakeup_), 1u);
  EXPECT_EQ(fdb->learned(1), 2u);
}

}  // namespace
}  // namespace hvswitch
