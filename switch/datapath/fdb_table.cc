#include "switch/datapath/fdb_table.h"

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <sys/mman.h>

#include <bit>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Buckets a displacement search visits at most: with the table at most half full a free
// slot is nearly always one or two moves away.
constexpr uint32_t kSearchNodes = 512;

}  // namespace

absl::StatusOr<std::unique_ptr<FdbTable>> FdbTable::Create(const std::string& name,
                                                           uint32_t capacity) {
  // Slots >= 2 * capacity, in a power of two of buckets (>= 2).
  const uint64_t wanted = (uint64_t{capacity} * 2 + kWays - 1) / kWays;
  const uint32_t nb_buckets = static_cast<uint32_t>(std::bit_ceil(std::max<uint64_t>(wanted, 2)));
  const size_t bytes = size_t{nb_buckets} * sizeof(Bucket);
  void* memory = nullptr;
  size_t mapped = 0;
  // On hugepages when the EAL has them; otherwise pages of its own, transparent huge pages
  // asked for (a look-up all over a large table would miss the TLB on 4 KB pages).
  if (rte_eal_has_hugepages()) {
    memory = rte_zmalloc_socket(name.c_str(), bytes, kHugePage,
                                static_cast<int>(rte_socket_id()));
  }
  if (memory == nullptr) {
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* region = mmap(nullptr, rounded + kHugePage, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate an FDB of ", capacity, " entries (", bytes, " bytes)"));
    }
    // Aligned to a huge page inside the region, which has one to spare for it.
    const uintptr_t start = reinterpret_cast<uintptr_t>(region);
    const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned != start) munmap(region, aligned - start);
    if (aligned + rounded != start + rounded + kHugePage) {
      munmap(reinterpret_cast<void*>(aligned + rounded), start + kHugePage - aligned);
    }
    memory = reinterpret_cast<void*>(aligned);
    mapped = rounded;
    (void)madvise(memory, mapped, MADV_HUGEPAGE);  // advice: refused where THP is off
  }
  auto* buckets = static_cast<Bucket*>(memory);
  for (uint32_t b = 0; b < nb_buckets; ++b) {
    Bucket* bucket = new (&buckets[b]) Bucket;
    for (uint32_t w = 0; w < kWays; ++w) {
      bucket->keys[w].store(kEmpty, std::memory_order_relaxed);
      bucket->values[w].store(0, std::memory_order_relaxed);
      bucket->seen[w].store(0, std::memory_order_relaxed);
    }
  }
  return std::unique_ptr<FdbTable>(new FdbTable(buckets, nb_buckets, mapped));
}

FdbTable::FdbTable(Bucket* buckets, uint32_t nb_buckets, size_t mapped)
    : buckets_(buckets),
      mask_(nb_buckets - 1),
      shift_(32 - static_cast<uint32_t>(std::countr_zero(nb_buckets))),
      mapped_(mapped) {}

FdbTable::~FdbTable() {
  if (mapped_ != 0) {
    munmap(buckets_, mapped_);
  } else {
    rte_free(buckets_);
  }
}

int32_t FdbTable::FreeWay(uint32_t b) const {
  for (uint32_t w = 0; w < kWays; ++w) {
    if (buckets_[b].keys[w].load(std::memory_order_relaxed) == kEmpty) {
      return static_cast<int32_t>(b * kWays + w);
    }
  }
  return -1;
}

int32_t FdbTable::Insert(uint64_t key, uint32_t value, uint32_t seen) {
  const Probe probe = Hash(key);
  int32_t at = FreeWay(probe.first);
  if (at < 0) at = FreeWay(probe.second);
  if (at < 0) at = MakeRoom(probe.first);
  if (at < 0) at = MakeRoom(probe.second);
  if (at < 0) return -1;
  Slot s = At(at);
  s.bucket->values[s.way].store(value, std::memory_order_relaxed);
  s.bucket->seen[s.way].store(seen, std::memory_order_relaxed);
  s.bucket->keys[s.way].store(key, std::memory_order_release);  // published with its value
  return at;
}

void FdbTable::Move(int32_t from, int32_t to) {
  Slot src = At(from), dst = At(to);
  dst.bucket->values[dst.way].store(src.bucket->values[src.way].load(std::memory_order_relaxed),
                                    std::memory_order_relaxed);
  dst.bucket->seen[dst.way].store(src.bucket->seen[src.way].load(std::memory_order_relaxed),
                                  std::memory_order_relaxed);
  dst.bucket->keys[dst.way].store(src.bucket->keys[src.way].load(std::memory_order_relaxed),
                                  std::memory_order_release);
  src.bucket->keys[src.way].store(kEmpty, std::memory_order_release);
}

// Breadth-first over the buckets reachable by moving one key to its other bucket, from
// `b`, until a bucket with a free slot; then the keys on the path move, the last first,
// each into the slot the one after it left.
int32_t FdbTable::MakeRoom(uint32_t b) {
  struct Node {
    uint32_t bucket;
    int32_t parent;  // index into nodes, -1 for the root
    int32_t from;    // the position in the parent's bucket whose key moves here
  };
  Node nodes[kSearchNodes];
  uint32_t count = 0, next = 0;
  nodes[count++] = {b, -1, -1};
  while (next < count) {
    const Node node = nodes[next];
    const int32_t free_at = FreeWay(node.bucket);
    if (free_at >= 0) {
      // Walk back: each key moves into the free slot, whose key moved before it.
      const uint32_t seq = moves_.load(std::memory_order_relaxed);
      moves_.store(seq + 1, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_release);
      int32_t to = free_at;
      for (int32_t i = static_cast<int32_t>(next); nodes[i].parent >= 0; i = nodes[i].parent) {
        Move(nodes[i].from, to);
        to = nodes[i].from;
      }
      moves_.store(seq + 2, std::memory_order_release);
      return to;  // now free, in `b`
    }
    for (uint32_t w = 0; w < kWays && count < kSearchNodes; ++w) {
      const int32_t position = static_cast<int32_t>(node.bucket * kWays + w);
      const Probe probe = Hash(buckets_[node.bucket].keys[w].load(std::memory_order_relaxed));
      const uint32_t other = probe.first == node.bucket ? probe.second : probe.first;
      // A path through a bucket twice would move one slot's key twice.
      bool on_path = false;
      for (int32_t i = static_cast<int32_t>(next); i >= 0 && !on_path; i = nodes[i].parent) {
        on_path = nodes[i].bucket == other;
      }
      if (!on_path) nodes[count++] = {other, static_cast<int32_t>(next), position};
    }
    ++next;
  }
  return -1;
}

uint32_t FdbTable::Scan(uint32_t first, uint32_t count,
                        absl::FunctionRef<void(int32_t, uint64_t, uint32_t, uint32_t)> fn) const {
  uint32_t b = first & mask_;
  for (uint32_t i = 0; i < count && i <= mask_; ++i, b = (b + 1) & mask_) {
    const Bucket& bucket = buckets_[b];
    for (uint32_t w = 0; w < kWays; ++w) {
      const uint64_t key = bucket.keys[w].load(std::memory_order_relaxed);
      if (key == kEmpty) continue;
      fn(static_cast<int32_t>(b * kWays + w), key,
         bucket.values[w].load(std::memory_order_relaxed),
         bucket.seen[w].load(std::memory_order_relaxed));
    }
  }
  return b;
}

}  // namespace hvswitch
