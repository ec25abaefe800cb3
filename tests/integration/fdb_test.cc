// The FDB over rte_hash and the learn queue, on the shared test EAL.
#include <gtest/gtest.h>

#include <memory>

#include "switch/fdb.h"
#include "switch/learn_queue.h"

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

TEST(FdbTest, LearnLimitStopsNewMacsAndMovesButNotRefreshes) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_limit", 1024);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 1, 0, 2), LearnResult::kAdded);
  EXPECT_EQ(fdb->Learn(Key(0x0400), 1, 0, 2), LearnResult::kAdded);
  EXPECT_EQ(fdb->Learn(Key(0x0600), 1, 0, 2), LearnResult::kLimited);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 1, 5, 2), LearnResult::kCurrent);  // refresh is fine
  EXPECT_EQ(fdb->Learn(Key(0x0800), 2, 0, 2), LearnResult::kAdded);
  EXPECT_EQ(fdb->Learn(Key(0x0800), 1, 0, 2), LearnResult::kLimited);  // no move in either
  EXPECT_EQ(fdb->learned(1), 2u);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 3, 0), LearnResult::kMoved);  // a slot frees up on 1
  EXPECT_EQ(fdb->learned(1), 1u);
  EXPECT_EQ(fdb->Learn(Key(0x0600), 1, 0, 2), LearnResult::kAdded);
  fdb->FlushPort(1);
  EXPECT_EQ(fdb->learned(1), 0u);
  EXPECT_EQ(fdb->Learn(Key(0x0a00), 1, 0, 2), LearnResult::kAdded);
  EXPECT_EQ(fdb->Age(0, 0, [] {}).flushed, 2u);
  EXPECT_EQ(fdb->learned(1), 1u);
  EXPECT_EQ(fdb->learned(2), 1u);
}

TEST(FdbTest, StaticEntriesNeverMoveAgeOrFlush) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_static", 1024);
  fdb->Learn(Key(0x0200), 1, 0);
  ASSERT_TRUE(fdb->AddStatic(Key(0x0200), 2).ok());  // replaces the learned entry
  ASSERT_TRUE(fdb->AddStatic(Key(0x0400), 2).ok());
  EXPECT_EQ(fdb->learned(1), 0u);
  EXPECT_EQ(fdb->statics(), 2u);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 3, 0), LearnResult::kStatic);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 2, 0), LearnResult::kCurrent);
  fdb->FlushPort(2);
  AgeResult r = fdb->Age(1'000'000, 300, [] {});
  EXPECT_EQ(r.aged + r.flushed, 0u);
  uint64_t keys[2] = {Key(0x0200), Key(0x0400)};
  uint16_t ports[2] = {};
  EXPECT_EQ(fdb->LookupBulk(keys, 2, ports), 0b11u);
  EXPECT_EQ(ports[0], 2);
  EXPECT_EQ(fdb->size(), 2u);
}

TEST(FdbTest, StaticEntryNeedsRoom) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_static_full", 16);
  for (uint64_t i = 0; i < 16; ++i) fdb->Learn(Key((i + 1) << 8), 0, 0);
  EXPECT_FALSE(fdb->AddStatic(Key(0xff00), 1).ok());
  EXPECT_TRUE(fdb->AddStatic(Key(1 << 8), 1).ok());  // an existing key needs no room
}

}  // namespace
}  // namespace hvswitch
