// FdbTable: the hash table under the FDB (fdb.h), laid out for the data path's look-ups.
// Buckets of one cache line hold four slots each, key, value and last-seen time inline;
// every key lives in one of two buckets chosen by two CRC32 hashes of it (cuckoo hashing
// with 4-way buckets, as CuckooSwitch and VPP's bihash do). A look-up is a hash and one
// cache line, a second line only when the key is not in its first bucket; it comes in two
// halves (Probe: hash and prefetch; Find: compare) so that a burst's look-ups can be
// started early and their cache misses overlap. The table is sized so that it is at most
// half full at capacity: keys rarely have to be displaced to make room.
//
// Threads: one writer (the FDB's, the control thread) and any number of readers that
// never lock and never wait:
//  - a slot's value and time are written before its key (release): a reader that matches
//    a key (acquire) reads a value written for it;
//  - a key leaves its slot (erased, or displaced) by being overwritten with kEmpty first,
//    and a reader reads the key again after the value: when it is no longer the same key
//    the value may be the next occupant's, and the slot does not count as a match;
//  - a key being displaced is copied to its other bucket before its old slot is cleared,
//    but a reader that looked at the new place before the copy and at the old one after
//    the clear would miss it: the writer bumps a sequence count around displacements
//    (`moves`), and a reader that found nothing looks again if it moved. A look-up still
//    disturbed after a few tries answers "not found": for a switch, a flood.
// Nothing is freed behind a reader's back: the memory lives as long as the table.
#pragma once

#include <nmmintrin.h>
#include <rte_prefetch.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace hvswitch {

class FdbTable {
 public:
  static constexpr uint32_t kWays = 4;  // FindIn compares the four one by one
  // Never a key: VLAN 4095 and a group MAC (only unicast MACs are stored).
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  // The two buckets a key may be in.
  struct Probe {
    uint32_t first, second;
  };

  // A table that holds `capacity` keys at half its slots or less.
  // `name`: of its memory, when it comes from the EAL's hugepages.
  static absl::StatusOr<std::unique_ptr<FdbTable>> Create(const std::string& name,
                                                          uint32_t capacity);
  ~FdbTable();
  FdbTable(const FdbTable&) = delete;
  FdbTable& operator=(const FdbTable&) = delete;

  // ---- Any thread --------------------------------------------------------------------

  Probe Hash(uint64_t key) const {
    // CRC32 is linear: MACs that differ in a few bits (a vendor's sequence) would share a
    // few buckets, and a second CRC would pair buckets for good. The high bits of two
    // multiplications mix every bit of it.
    // The instruction itself (SSE4.2, which DPDK's x86 builds require): rte_hash_crc_8byte
    // would ask a global which algorithm to use, every time.
    const uint32_t crc = static_cast<uint32_t>(_mm_crc32_u64(kSeed, key));
    const uint32_t first = (crc * kMixFirst) >> shift_;
    uint32_t second = (crc * kMixSecond) >> shift_;
    if (second == first) second = first ^ 1;  // two distinct buckets (there are >= 2)
    return {first, second};
  }
  // Hashes `key` and starts loading its first bucket, where it nearly always is.
  Probe Prefetch(uint64_t key) const {
    const Probe probe = Hash(key);
    rte_prefetch0(&buckets_[probe.first]);
    return probe;
  }
  // Looks up n <= 64 keys hashed before (Prefetch): on_found(i, position, value) for
  // each keys[i] in the table, where position is bucket * kWays + way; it answers whether
  // the key counts (true), and bit i of the result is set when it did. A key not found
  // while a displacement was under way is looked for again, up to kTries times in all.
  // (The counting is FindBulk's own: a mask the caller's closure updated through a
  // reference would live in memory, every key, for FindAgain's sake.)
  template <typename OnFound>
  uint64_t FindBulk(const uint64_t* keys, const Probe* probes, uint32_t n,
                    OnFound&& on_found) const {
    uint64_t absent = 0, counted = 0;
    const uint32_t before = moves();
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t value;
      const int32_t position = Find(keys[i], probes[i], &value);
      if (position < 0) {
        absent |= uint64_t{1} << i;
      } else {
        counted |= uint64_t{on_found(i, position, value)} << i;
      }
    }
    if (absent == 0) return counted;
    std::atomic_thread_fence(std::memory_order_acquire);  // the reads end before `moves`
    if (Undisturbed(before, moves())) [[likely]] return counted;
    return counted | FindAgain(keys, probes, absent, on_found);
  }
  // Displacement paths the writer has made (each counts twice: begun, ended).
  uint32_t moves() const { return moves_.load(std::memory_order_acquire); }

  // The last-seen time of the key at `position`, refreshed by readers (relaxed: a time
  // lost to a race delays ageing by one period at most). Writes only when `key` is still
  // there and the time differs.
  void Touch(int32_t position, uint64_t key, uint32_t now) const {
    Slot s = At(position);
    if (s.bucket->keys[s.way].load(std::memory_order_relaxed) != key) return;
    std::atomic<uint32_t>& seen = s.bucket->seen[s.way];
    if (seen.load(std::memory_order_relaxed) != now) seen.store(now, std::memory_order_relaxed);
  }

  // ---- The writer only -----------------------------------------------------------------

  // The position of `key` and its value, or -1.
  int32_t Find(uint64_t key, uint32_t* value) const { return Find(key, Hash(key), value); }
  // Adds a key that is not in the table; its position, or -1 when neither of its buckets
  // could be made to have room (not seen below half full).
  int32_t Insert(uint64_t key, uint32_t value, uint32_t seen);
  void SetValue(int32_t position, uint32_t value) {
    Slot s = At(position);
    s.bucket->values[s.way].store(value, std::memory_order_release);
  }
  void SetSeen(int32_t position, uint32_t seen) {
    Slot s = At(position);
    s.bucket->seen[s.way].store(seen, std::memory_order_relaxed);
  }
  uint32_t Seen(int32_t position) const {
    Slot s = At(position);
    return s.bucket->seen[s.way].load(std::memory_order_relaxed);
  }
  void Erase(int32_t position) {
    Slot s = At(position);
    s.bucket->keys[s.way].store(kEmpty, std::memory_order_release);
  }
  // fn(position, key, value, seen) for every key, from bucket `first` for `count` buckets
  // (wrapping around); fn may erase the key it is given. Returns the bucket after the
  // last one visited.
  uint32_t Scan(uint32_t first, uint32_t count,
                absl::FunctionRef<void(int32_t, uint64_t, uint32_t, uint32_t)> fn) const;

  uint32_t buckets() const { return mask_ + 1; }


 private:
  struct alignas(64) Bucket {
    std::atomic<uint64_t> keys[kWays];
    std::atomic<uint32_t> values[kWays];
    std::atomic<uint32_t> seen[kWays];
  };
  static_assert(sizeof(Bucket) == 64, "a bucket is one cache line");
  struct Slot {
    Bucket* bucket;
    uint32_t way;
  };
  static constexpr uint32_t kSeed = 0xffffffff;
  static constexpr uint32_t kMixFirst = 0x9e3779b1, kMixSecond = 0x85ebca77;  // odd

  FdbTable(Bucket* buckets, uint32_t nb_buckets, size_t mapped);
  Slot At(int32_t position) const {
    return {&buckets_[static_cast<uint32_t>(position) / kWays],
            static_cast<uint32_t>(position) % kWays};
  }
  static constexpr int kTries = 3;

  static bool Undisturbed(uint32_t before, uint32_t after) {
    return before == after && (before & 1) == 0;
  }
  int32_t Find(uint64_t key, Probe probe, uint32_t* value) const {
    const int32_t at = FindIn(key, probe.first, value);
    return at >= 0 ? at : FindIn(key, probe.second, value);
  }
  template <typename OnFound>
  __attribute__((noinline)) uint64_t FindAgain(const uint64_t* keys, const Probe* probes,
                                               uint64_t absent, OnFound& on_found) const {
    uint64_t counted = 0;
    for (int attempt = 1; attempt < kTries && absent != 0; ++attempt) {
      const uint32_t before = moves();
      for (uint64_t todo = absent; todo != 0; todo &= todo - 1) {
        const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(todo));
        uint32_t value;
        const int32_t position = Find(keys[i], probes[i], &value);
        if (position < 0) continue;
        absent &= ~(uint64_t{1} << i);
        counted |= uint64_t{on_found(i, position, value)} << i;
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      if (Undisturbed(before, moves())) break;
    }
    return counted;
  }
  int32_t FindIn(uint64_t key, uint32_t b, uint32_t* value) const {
    const Bucket& bucket = buckets_[b];
    const uint32_t w = bucket.keys[0].load(std::memory_order_relaxed) == key   ? 0
                       : bucket.keys[1].load(std::memory_order_relaxed) == key ? 1
                       : bucket.keys[2].load(std::memory_order_relaxed) == key ? 2
                       : bucket.keys[3].load(std::memory_order_relaxed) == key ? 3
                                                                                : kWays;
    if (w == kWays) return -1;
    std::atomic_thread_fence(std::memory_order_acquire);  // the key's value after the key
    const uint32_t v = bucket.values[w].load(std::memory_order_acquire);
    if (bucket.keys[w].load(std::memory_order_relaxed) != key) return -1;  // left meanwhile
    *value = v;
    return static_cast<int32_t>(b * kWays + w);
  }
  int32_t FreeWay(uint32_t b) const;
  // Copies the key at `from` into the free slot `to`, then clears `from`.
  void Move(int32_t from, int32_t to);
  // Frees a slot in `b` by moving keys along a path to a bucket with room; its position,
  // or -1 when no path was found within the search's bound.
  int32_t MakeRoom(uint32_t b);

  Bucket* buckets_;
  uint32_t mask_;   // buckets - 1 (a power of two)
  uint32_t shift_;  // 32 - log2(buckets)
  size_t mapped_;  // bytes mmap'ed (0: rte_zmalloc'ed)
  std::atomic<uint32_t> moves_{0};
};

}  // namespace hvswitch
