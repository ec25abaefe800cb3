// The FDB over rte_hash and the learn queue, on the shared test EAL.
#include <gtest/gtest.h>

#include <memory>

#include "switch/datapath/fdb.h"
#include "switch/datapath/learn_queue.h"

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
  fdb->Learn(Key(0x0200), 1, 100);
  fdb->Learn(Key(0x0400), 1, 100);
  uint64_t key = Key(0x0400);
  uint16_t port = 0;
  int32_t position = -1;
  ASSERT_EQ(fdb->LookupBulk(&key, 1, &port, &position), 1u);
  fdb->Touch(position, key, 250);  // a worker saw 0x0400 again
  AgeResult r = fdb->Age(399, 300);
  EXPECT_EQ(r.aged, 0u);
  r = fdb->Age(400, 300);
  EXPECT_EQ(r.aged, 1u);  // 0x0200, last seen at 100
  EXPECT_EQ(fdb->size(), 1u);
  key = Key(0x0200);
  EXPECT_EQ(fdb->LookupBulk(&key, 1, &port), 0u);
  EXPECT_EQ(fdb->Age(100000, 0).aged, 0u);  // ageing off
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
  AgeResult r = fdb->Age(0, 0);
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

// The reserve arithmetic at the default size: 65,536 entries, 256 guaranteed to each of
// the 64 port slots (16,384), the shared rest 49,152.
TEST(FdbReserveTest, OnePortFillsTheSharedRestEveryOtherKeepsItsReserve) {
  constexpr uint32_t kCapacity = 65536;
  static_assert(Fdb::ReserveFor(kCapacity) == 256);
  static_assert(Fdb::ReserveFor(1 << 20) == 256);   // at most 256 however large
  static_assert(Fdb::ReserveFor(16384) == 64);      // a quarter of the table otherwise
  static_assert(Fdb::ReserveFor(64) == 0);
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_reserve", kCapacity);
  EXPECT_EQ(fdb->reserve(), 256u);
  EXPECT_EQ(fdb->shared_capacity(), 49152u);
  uint64_t next = 1;
  auto mac = [&] { return Key((next++) << 8); };
  uint32_t sprayed = 0;
  while (fdb->Learn(mac(), 0, 0) == LearnResult::kAdded) ++sprayed;
  EXPECT_EQ(sprayed, 256u + 49152u);  // its reserve and the whole shared rest
  EXPECT_EQ(fdb->Room(0, 0), LearnRoom::kFull);
  EXPECT_EQ(fdb->shared_used(), fdb->shared_capacity());
  // Every other slot still learns its 256, and not one more.
  for (uint16_t p = 1; p < kMaxPorts; ++p) {
    EXPECT_EQ(fdb->Room(p, 0), LearnRoom::kYes);
    for (int i = 0; i < 256; ++i) ASSERT_EQ(fdb->Learn(mac(), p, 0), LearnResult::kAdded) << p;
    EXPECT_EQ(fdb->Learn(mac(), p, 0), LearnResult::kFull) << p;
    EXPECT_EQ(fdb->Room(p, 0), LearnRoom::kFull);
  }
  EXPECT_EQ(fdb->size(), kCapacity);  // the hash really holds all of it
  // A learn limit is reported before fullness.
  EXPECT_EQ(fdb->Room(1, 256), LearnRoom::kLimited);
  // Refreshes and moves within reserves still work on a full table.
  EXPECT_EQ(fdb->Learn(Key(1 << 8), 0, 5), LearnResult::kCurrent);
  // Port 1 is at its reserve, but taking one of port 0's entries is even: port 0 gives a
  // slot of the shared rest back.
  EXPECT_EQ(fdb->Learn(Key(2 << 8), 1, 0), LearnResult::kMoved);
  EXPECT_EQ(fdb->learned(1), 257u);
  // Removing one of port 5's entries frees a slot of its reserve, for port 5 only.
  fdb->FlushPort(5);
  EXPECT_EQ(fdb->Age(0, 0).flushed, 256u);
  EXPECT_EQ(fdb->Learn(mac(), 0, 0), LearnResult::kFull);
  EXPECT_EQ(fdb->Learn(mac(), 5, 0), LearnResult::kAdded);
}

// Flushed entries hold their hash slot until Age: a port that is flushed and refills its
// reserve over and over (a guest reconnecting in a loop) must not crowd out the others'
// reserves in the meantime, and the hash must never refuse a port within its reserve.
TEST(FdbReserveTest, FlushedButNotAgedEntriesStillCountAgainstTheirPort) {
  constexpr uint32_t kCapacity = 16384;  // reserve 64
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_reserve_flush", kCapacity);
  ASSERT_EQ(fdb->reserve(), 64u);
  uint64_t next = 1;
  auto mac = [&] { return Key((next++) << 8); };
  for (int round = 0; round < 5; ++round) {
    while (fdb->Learn(mac(), 0, 0) == LearnResult::kAdded) {
    }
    fdb->FlushPort(0);  // no Age in between
    EXPECT_EQ(fdb->learned(0), 0u);
  }
  // Port 0's reserve is taken by its own flushed entries: it is refused until they age.
  EXPECT_EQ(fdb->Room(0, 0), LearnRoom::kFull);
  for (uint16_t p = 1; p < kMaxPorts; ++p) {
    for (int i = 0; i < 64; ++i) ASSERT_EQ(fdb->Learn(mac(), p, 0), LearnResult::kAdded) << p;
  }
  EXPECT_LE(fdb->size(), kCapacity);
  // Relearning one of its own flushed MACs takes nothing new: allowed.
  EXPECT_EQ(fdb->Learn(Key(3 << 8), 0, 0), LearnResult::kAdded);
  fdb->Age(0, 0);
  EXPECT_EQ(fdb->Room(0, 0), LearnRoom::kYes);
  EXPECT_EQ(fdb->size(), 63u * 64 + 1);
}

// Static entries take from the shared rest, never from a port's reserve.
TEST(FdbReserveTest, StaticEntriesComeFromTheSharedRest) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_reserve_static", 1024);  // reserve 4
  ASSERT_EQ(fdb->reserve(), 4u);
  ASSERT_EQ(fdb->shared_capacity(), 1024u - 256);
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(fdb->AddStatic(Key((0x1000 + i) << 8), 3).ok());
  uint32_t n = 0;
  while (fdb->Learn(Key((++n) << 8), 0, 0) == LearnResult::kAdded) {
  }
  EXPECT_EQ(n - 1, 4u + 768 - 10);
  EXPECT_FALSE(fdb->AddStatic(Key(0xffff00), 3).ok());  // the shared rest is full
  EXPECT_EQ(fdb->Learn(Key(0xfffe00), 7, 0), LearnResult::kAdded);  // 7's reserve is not
  // A learned entry beyond its port's reserve may become static: its slot was shared.
  EXPECT_TRUE(fdb->AddStatic(Key(100 << 8), 3).ok());
  EXPECT_EQ(fdb->statics(), 11u);
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
  EXPECT_EQ(fdb->Age(0, 0).flushed, 2u);
  EXPECT_EQ(fdb->learned(1), 1u);
  EXPECT_EQ(fdb->learned(2), 1u);
}

// A port that goes down again and again before Age runs (a guest reconnecting in a loop)
// moves its generation on each time: an entry learned generations ago must never match
// again, however many flushes there were (a 16-bit generation came back after 65536).
TEST(FdbTest, RepeatedFlushesNeverBringAnOldEntryBack) {
  std::unique_ptr<Fdb> fdb = *Fdb::Create("fdb_generations", 1024);
  ASSERT_EQ(fdb->Learn(Key(0x0200), 1, 0), LearnResult::kAdded);
  uint64_t key = Key(0x0200);
  uint16_t port = 0;
  for (uint32_t flush = 1; flush <= 65536 + 2; ++flush) {
    fdb->FlushPort(1);
    if (flush >= 65535) {
      ASSERT_EQ(fdb->LookupBulk(&key, 1, &port), 0u) << "after " << flush << " flushes";
    }
  }
  int current = 0;
  fdb->ForEach([&](const FdbEntryView&) { ++current; });
  EXPECT_EQ(current, 0);
  EXPECT_EQ(fdb->learned(1), 0u);
  EXPECT_EQ(fdb->Learn(Key(0x0200), 1, 0), LearnResult::kAdded);  // not "current"
  EXPECT_EQ(fdb->Age(0, 0).flushed, 0u);  // relearned in place
  EXPECT_EQ(fdb->size(), 1u);
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
  AgeResult r = fdb->Age(1'000'000, 300);
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
