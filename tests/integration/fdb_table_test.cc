// The FDB's hash table (switch/datapath/fdb_table.h) on its own, well beyond the half load
// the FDB keeps it at, so that keys are displaced all the time: every key stays findable,
// and readers running beside the writer never see a key with another key's value.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "switch/datapath/fdb_table.h"

namespace hvswitch {
namespace {

// Keys as MACs come: a vendor prefix and a sequence (the worst case for a linear hash),
// in a few VLANs.
uint64_t KeyOf(uint32_t i) {
  return uint64_t{0x02} | (uint64_t{i & 0xffffff} << 24) | (uint64_t{i >> 24} << 48);
}
// The value a key must always be seen with.
uint32_t ValueOf(uint64_t key) { return static_cast<uint32_t>((key * 0x9e3779b97f4a7c15) >> 40) | 1; }

std::unique_ptr<FdbTable> Table(uint32_t capacity) {
  absl::StatusOr<std::unique_ptr<FdbTable>> table = FdbTable::Create("fdb_table_test", capacity);
  EXPECT_TRUE(table.ok()) << table.status();
  return *std::move(table);
}

// n keys looked up in one FindBulk call: how many were found, each with its own value.
struct BulkResult {
  uint32_t found = 0, wrong = 0;
  uint64_t mask = 0;
};
BulkResult Lookup(const FdbTable& table, const uint64_t* keys, uint32_t n) {
  FdbTable::Probe probes[64];
  for (uint32_t i = 0; i < n; ++i) probes[i] = table.Prefetch(keys[i]);
  BulkResult r;
  r.mask = table.FindBulk(keys, probes, n, [&](uint32_t i, int32_t, uint32_t value) {
    ++r.found;
    if (value != ValueOf(keys[i])) ++r.wrong;
    return true;
  });
  return r;
}

TEST(FdbTableTest, AMillionKeysAtNinetyPercentAreAllFound) {
  std::unique_ptr<FdbTable> table = Table(1 << 20);  // 2^19 buckets, 2^21 slots
  const uint32_t slots = table->buckets() * FdbTable::kWays;
  const uint32_t n = slots / 10 * 9;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t key = KeyOf(i);
    ASSERT_GE(table->Insert(key, ValueOf(key), i), 0) << "key " << i << " of " << n;
  }
  EXPECT_GT(table->moves(), 0u);  // keys were displaced to make room
  EXPECT_EQ(table->moves() % 2, 0u);
  uint64_t keys[64];
  uint32_t found = 0;
  for (uint32_t i = 0; i < n; i += 64) {
    const uint32_t batch = std::min<uint32_t>(64, n - i);
    for (uint32_t j = 0; j < batch; ++j) keys[j] = KeyOf(i + j);
    BulkResult r = Lookup(*table, keys, batch);
    ASSERT_EQ(r.wrong, 0u);
    found += r.found;
  }
  EXPECT_EQ(found, n);
  for (uint32_t j = 0; j < 64; ++j) keys[j] = KeyOf(n + j);  // never inserted
  EXPECT_EQ(Lookup(*table, keys, 64).found, 0u);
  // A key's time moves with it: every key still has the time it was inserted with.
  uint32_t value = 0;
  for (uint32_t i = 0; i < n; i += 997) {
    const int32_t position = table->Find(KeyOf(i), &value);
    ASSERT_GE(position, 0);
    EXPECT_EQ(table->Seen(position), i);
  }
}

TEST(FdbTableTest, ErasedSlotsAreReusedAndScanSeesEveryKeyOnce) {
  std::unique_ptr<FdbTable> table = Table(64);
  uint32_t v = 0;
  for (uint32_t i = 0; i < 100; ++i) ASSERT_GE(table->Insert(KeyOf(i), i + 1, 0), 0);
  for (uint32_t i = 0; i < 100; i += 2) table->Erase(table->Find(KeyOf(i), &v));
  uint32_t seen = 0;
  table->Scan(0, table->buckets(), [&](int32_t, uint64_t key, uint32_t value, uint32_t) {
    ++seen;
    EXPECT_GE(table->Find(key, &v), 0);
    EXPECT_EQ(v, value);
  });
  EXPECT_EQ(seen, 50u);
  for (uint32_t i = 100; i < 150; ++i) ASSERT_GE(table->Insert(KeyOf(i), i + 1, 0), 0);
}

// The writer keeps the table at ~85 % while it removes and adds keys (a million changes,
// each new key displacing others), readers look up batches of keys that never leave and
// of keys that come and go: a key that never left is always found, and no key is ever
// seen with a value that is not its own.
TEST(FdbTableTest, ReadersNeverSeeATornEntryWhileTheWriterChurns) {
  std::unique_ptr<FdbTable> table = Table(1 << 16);  // 2^15 buckets, 2^17 slots
  const uint32_t slots = table->buckets() * FdbTable::kWays;
  const uint32_t resident = slots / 100 * 85;
  std::vector<uint64_t> present;  // keys in the table; even indexes never leave
  for (uint32_t i = 0; i < resident; ++i) {
    const uint64_t key = KeyOf(i);
    ASSERT_GE(table->Insert(key, ValueOf(key), 0), 0);
    present.push_back(key);
  }
  std::vector<uint64_t> stable;
  for (uint32_t i = 0; i < resident; i += 2) stable.push_back(present[i]);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> lookups{0}, stable_missed{0}, wrong{0};
  auto reader = [&](uint32_t seed) {
    std::mt19937 rng(seed);
    uint64_t keys[64];
    while (!stop.load(std::memory_order_relaxed)) {
      // 32 keys that never leave, 32 that may be anywhere in their life.
      for (uint32_t j = 0; j < 32; ++j) keys[j] = stable[rng() % stable.size()];
      for (uint32_t j = 32; j < 64; ++j) keys[j] = KeyOf(rng() % (resident + 1000000));
      BulkResult r = Lookup(*table, keys, 64);
      const uint64_t stable_found = __builtin_popcountll(r.mask & 0xffffffff);
      stable_missed.fetch_add(32 - stable_found, std::memory_order_relaxed);
      wrong.fetch_add(r.wrong, std::memory_order_relaxed);
      lookups.fetch_add(64, std::memory_order_relaxed);
    }
  };
  std::thread readers[] = {std::thread(reader, 1), std::thread(reader, 2)};
  std::mt19937 rng(3);
  const uint32_t moves_before = table->moves();
  uint32_t next = resident;
  uint32_t value = 0;
  for (uint32_t change = 0; change < 1000000; ++change) {
    // Out: a key at an odd index (one that may leave); in: a new key in its place.
    const uint32_t victim = (rng() % (resident / 2)) * 2 + 1;
    if (victim >= present.size()) continue;
    table->Erase(table->Find(present[victim], &value));
    const uint64_t key = KeyOf(next++);
    ASSERT_GE(table->Insert(key, ValueOf(key), change), 0) << "change " << change;
    present[victim] = key;
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_GT(lookups.load(), 0u);
  EXPECT_GT(table->moves() - moves_before, 1000u);  // displacements ran beside the readers
  EXPECT_EQ(stable_missed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
}

}  // namespace
}  // namespace hvswitch
