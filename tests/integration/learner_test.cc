// The Learner on its own, on the shared test EAL (the FDB and the learn queue are DPDK
// objects): this test plays the workers, queuing learn requests and claiming locks as a
// worker does, and the bridge, telling the learner about ports and links. What the
// forwarder tests do not reach: refusals and their counts, port removal, port security
// across a link going down, ageing and flushing counted.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ports/port_spec.h"
#include "switch/control/learner.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/learn_queue.h"

namespace hvswitch {
namespace {

// Unicast MACs, VLAN 0: keys as the FDB has them.
constexpr uint64_t kA = 0x0a0000000002, kB = 0x0b0000000002, kC = 0x0c0000000002,
                   kS = 0x0e0000000002;
constexpr uint16_t kPorts = 3;

class LearnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int instance = 0;
    // StrCat, not "learner" + std::to_string(...): GCC 12 -O3 warns falsely on the
    // latter (-Wrestrict, PR 105329).
    const std::string name = absl::StrCat("learner", ++instance);
    fdb_ = *Fdb::Create(name + "fdb", 1024);
    queue_ = *LearnQueue::Create(name + "queue", 1024);
    datapath_.fdb = fdb_.get();
    datapath_.up_mask.store((1u << kPorts) - 1);
    learner_ = std::make_unique<Learner>(*fdb_, datapath_, std::vector<LearnQueue*>{queue_.get()});
  }

  void AddPorts(std::vector<PortSpec> specs) {
    for (size_t p = 0; p < specs.size(); ++p) {
      specs[p].name = absl::StrCat("p", p);
      learner_->AddPort(static_cast<uint16_t>(p), specs[p]);
    }
  }
  // A worker asks to learn `mac` on `port` for `frames` frames.
  void Ask(uint64_t mac, uint16_t port, uint32_t frames = 1) {
    ASSERT_TRUE(queue_->Request(mac, port, ++tsc_, frames));
  }
  // One request, applied at once.
  void Learn(uint64_t mac, uint16_t port) {
    Ask(mac, port);
    learner_->Poll(0);
  }
  // A worker's first frame from `mac` on an armed lock=1 port, as the forwarder checks it.
  bool Admits(uint16_t port, uint64_t mac) {
    const PortMacs& macs = datapath_.port_macs[port];
    return macs.Admits(mac, macs.count.load());
  }
  // The port of `mac`'s current entry, -1 when there is none.
  int PortOf(uint64_t mac) {
    uint16_t port = 0;
    return fdb_->LookupBulk(&mac, 1, &port) & 1 ? port : -1;
  }
  uint64_t Refused(uint16_t port, PortCounter counter) {
    PortTotals totals;
    learner_->AddRefusals(port, totals);
    return totals[counter];
  }

  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<LearnQueue> queue_;
  Datapath datapath_;
  std::unique_ptr<Learner> learner_;
  uint64_t tsc_ = 0;
};

// A port at its learn limit learns nothing new; the frames that asked are counted for it,
// the workers are told to stop asking, and the counts outlive the port (its slot's next
// port counts from them: PortSlots).
TEST_F(LearnerTest, LearnLimitRefusesNewMacsCountsTheirFramesAndBlocksThePort) {
  std::vector<PortSpec> specs(kPorts);
  specs[1].learn_limit = 2;
  AddPorts(specs);
  Ask(kA, 1);
  Ask(kB, 1);
  Ask(kC, 1, 5);
  learner_->Poll(0);
  EXPECT_EQ(fdb_->learned(1), 2u);
  EXPECT_EQ(PortOf(kC), -1);
  EXPECT_EQ(Refused(1, PortCounter::kLearnLimited), 5u);
  EXPECT_EQ(Refused(1, PortCounter::kLearnTableFull), 0u);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLearned), 2u);
  EXPECT_EQ(datapath_.learn_blocked_mask.load(), 0b010u);
  EXPECT_EQ(datapath_.learn_full_mask.load(), 0u);
  // Flushed, the port may learn again: the next poll lifts the block.
  learner_->Flush(1);
  learner_->Poll(0);
  EXPECT_EQ(datapath_.learn_blocked_mask.load(), 0u);
  // Full again; ageing lifts the block at once.
  Ask(kA, 1);
  Ask(kB, 1);
  learner_->Poll(0);
  EXPECT_EQ(datapath_.learn_blocked_mask.load(), 0b010u);
  learner_->Age(10, 5);
  EXPECT_EQ(datapath_.learn_blocked_mask.load(), 0u);
  learner_->RemovePort(1);
  EXPECT_EQ(Refused(1, PortCounter::kLearnLimited), 5u);
}

// A MAC a port allows (mac=) is not moved to another port while that port is up: the
// request is refused and counted. After the port went down (its MACs flushed) it moves.
TEST_F(LearnerTest, AnAllowedMacIsNotMovedWhileItsPortIsUp) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].allowed_macs = {kA};
  AddPorts(specs);
  Ask(kA, 0);
  Ask(kC, 0);  // not one of port 0's sources: never learned there
  learner_->Poll(0);
  EXPECT_EQ(PortOf(kA), 0);
  EXPECT_EQ(PortOf(kC), -1);
  Learn(kA, 1);
  EXPECT_EQ(PortOf(kA), 0);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLockedRefused), 1u);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbMoves), 0u);
  datapath_.up_mask.store(0b110);
  learner_->PortDown(0);
  Learn(kA, 1);
  EXPECT_EQ(PortOf(kA), 1);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLockedRefused), 1u);
}

// lock=1: the claim a worker made is published as the port's MAC and protected like an
// allowed one; the link going down releases it, and the next guest's first source takes
// the port.
TEST_F(LearnerTest, APortDownReleasesTheLockForTheNextGuest) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].lock_mac = true;
  AddPorts(specs);
  ASSERT_TRUE(Admits(0, kA));
  Learn(kA, 0);
  EXPECT_EQ(datapath_.port_macs[0].count.load(), 1u);
  EXPECT_EQ(datapath_.port_macs[0].macs[0].load(), kA);
  EXPECT_EQ(PortOf(kA), 0);
  EXPECT_FALSE(Admits(0, kB));
  Learn(kA, 1);
  EXPECT_EQ(PortOf(kA), 0) << "the locked MAC stays with its guest";
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLockedRefused), 1u);

  datapath_.up_mask.store(0b110);
  learner_->PortDown(0);
  EXPECT_TRUE(datapath_.port_macs[0].Armed());
  EXPECT_EQ(PortOf(kA), -1);
  datapath_.up_mask.store(0b111);  // another guest connects, with another MAC
  ASSERT_TRUE(Admits(0, kB));
  Ask(kB, 0);
  Ask(kA, 1);  // the old guest's MAC is free to move
  learner_->Poll(0);
  EXPECT_EQ(datapath_.port_macs[0].macs[0].load(), kB);
  EXPECT_EQ(PortOf(kB), 0);
  EXPECT_EQ(PortOf(kA), 1);
  Learn(kB, 2);
  EXPECT_EQ(PortOf(kB), 0);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLockedRefused), 2u);
}

// Removing a port: what its workers asked before is applied, then every entry of the port
// goes, static ones too, and its security is lifted.
// A request still queued for the empty slot is ignored.
TEST_F(LearnerTest, RemovePortForgetsItsMacsStaticOnesTooAndItsSecurity) {
  std::vector<PortSpec> specs(kPorts);
  specs[2].allowed_macs = {kA, kB};
  AddPorts(specs);
  ASSERT_TRUE(learner_->AddStatic(kS, 2).ok());
  Ask(kA, 2);
  learner_->RemovePort(2);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLearned), 1u);
  EXPECT_EQ(fdb_->learned(2), 0u);
  EXPECT_EQ(PortOf(kA), -1);
  EXPECT_EQ(PortOf(kS), -1);
  EXPECT_TRUE(learner_->Entries().empty());
  EXPECT_EQ(datapath_.port_macs[2].count.load(), 0u);
  Learn(kB, 2);
  EXPECT_EQ(PortOf(kB), -1);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbLearned), 1u);
}

// Static entries do not move (counted) and survive flushes; flushed and aged entries are
// counted when ageing removes them.
TEST_F(LearnerTest, StaticEntriesFlushesAndAgeingAreCounted) {
  AddPorts(std::vector<PortSpec>(kPorts));
  ASSERT_TRUE(learner_->AddStatic(kS, 1).ok());
  Ask(kS, 0);
  Ask(kA, 0);
  Ask(kB, 1);
  Ask(kC, 2);
  learner_->Poll(100);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbStaticRefused), 1u);
  EXPECT_EQ(PortOf(kS), 1);
  Ask(kC, 0);
  learner_->Poll(100);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbMoves), 1u);
  EXPECT_EQ(PortOf(kC), 0);

  learner_->Flush(1);
  EXPECT_EQ(PortOf(kB), -1);
  EXPECT_EQ(PortOf(kS), 1);
  learner_->Age(103, 5);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbFlushed), 1u);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbAged), 0u);
  learner_->Age(105, 5);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbAged), 2u);  // kA and kC, last seen at 100
  EXPECT_EQ(PortOf(kS), 1);

  Ask(kA, 0);
  Ask(kB, 2);
  learner_->Poll(200);
  learner_->Flush(-1);
  EXPECT_EQ(PortOf(kA), -1);
  EXPECT_EQ(PortOf(kB), -1);
  EXPECT_EQ(PortOf(kS), 1);
  ASSERT_TRUE(learner_->Remove(kS).ok());
  EXPECT_EQ(PortOf(kS), -1);
}

// The ageing ticks pass the whole table once a second only while a flush left entries
// holding slots; otherwise once every max_age / 8 seconds, and not at all without ageing.
TEST_F(LearnerTest, AgeingTicksPassTheTableFastAfterAFlushAndSlowlyOtherwise) {
  AddPorts(std::vector<PortSpec>(kPorts));
  constexpr uint32_t kTicks = 20;  // a second's ticks, as the control thread's
  constexpr uint64_t kKeys = 600;  // over most of the 1024-entry table's buckets
  auto learn_all = [&](uint32_t now) {
    for (uint64_t k = 0; k < kKeys; ++k) {
      Ask(((k + 1) << 8) | 0x020000000000, 0);
      if (k % 500 == 499) learner_->Poll(now);  // the queue holds 1024
    }
    learner_->Poll(now);
  };
  learn_all(0);
  ASSERT_EQ(fdb_->size(), kKeys);
  // Ageing 0 and nothing flushed: nothing to pass for.
  for (uint32_t t = 0; t < kTicks; ++t) learner_->AgeTick(1000, 0, kTicks);
  EXPECT_EQ(fdb_->size(), kKeys);
  // Ageing 320 s: a pass every 40 s; one second of ticks reaches a fortieth of the table.
  for (uint32_t t = 0; t < kTicks; ++t) learner_->AgeTick(1000, 320, kTicks);
  const uint64_t aged_in_a_second = learner_->Stat(SwitchStat::kFdbAged);
  EXPECT_GT(aged_in_a_second, 0u);
  EXPECT_LT(aged_in_a_second, kKeys / 10);
  for (uint32_t t = 0; t < 40 * kTicks; ++t) learner_->AgeTick(1000, 320, kTicks);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbAged), kKeys);  // a pass in 40 s
  // A flush: its entries' slots are freed within a second of ticks, ageing or not.
  learn_all(2000);
  learner_->Flush(0);
  for (uint32_t t = 0; t <= kTicks; ++t) learner_->AgeTick(2000, 0, kTicks);
  EXPECT_EQ(learner_->Stat(SwitchStat::kFdbFlushed), kKeys);
  EXPECT_EQ(fdb_->size(), 0u);
  // --fdb_aging takes any 32-bit count: the longest still ages a slice a tick.
  learner_->AgeTick(3000, 4'000'000'000u, kTicks);
}

}  // namespace
}  // namespace hvswitch
