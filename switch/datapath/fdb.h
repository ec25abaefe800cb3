// Fdb: the MAC table, (VLAN, MAC) -> port, over a lock-free rte_hash whose key positions
// index a table of entries (port, the port's generation when learned, last seen).
// Threads: LookupBulk and Touch from any worker at any time; every other call from one
// thread only, the control thread, which applies the learn requests the workers queue.
// Deleting (Age) frees a key's position only after `wait_for_readers` has returned, which
// the bridge implements with the workers' RCU.
//
// Flushing a port is O(1): its generation moves on, and every entry learned under the old
// generation stops matching at once; Age removes such entries later.
//
// Static entries (configured by the operator) never age, never move and survive a flush.
// Learned entries count against their port's learn limit.
//
// Room: every port slot is guaranteed reserve() entries; what a port learns beyond its
// reserve comes from the shared rest (capacity, minus the reserves of all kMaxPorts slots,
// minus static entries). When the shared rest is used up, only ports already beyond their
// reserve are refused (kFull): a port spraying source MACs cannot take the table from the
// others. Flushed entries keep their hash slot until Age removes them, so until then they
// still count against the port they were learned on (its reserve first): however often a
// port is flushed and relearns, the hash never holds more than `capacity` keys, and a port
// within its reserve always finds a slot.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "switch/datapath/datapath_limits.h"

struct rte_hash;

namespace hvswitch {

enum class LearnResult {
  kCurrent,  // already on that port: nothing written but the last-seen time
  kAdded,
  kMoved,
  kFull,     // the port's reserve is used and the table's shared rest is full
  kLimited,  // the port has as many learned MACs as its limit allows
  kStatic,   // a static entry on another port: not moved
};

// One current entry, as the control plane lists it.
struct FdbEntryView {
  uint64_t key = 0;  // VLAN and MAC (switch/datapath/mac_key.h)
  uint16_t port = 0;
  bool is_static = false;
  uint32_t last_seen = 0;  // seconds (control clock); 0 for static entries
};

// Whether a port may add a learned MAC now (Fdb::Room).
enum class LearnRoom { kYes, kLimited, kFull };

struct AgeResult {
  uint32_t aged = 0;     // not seen for the ageing time
  uint32_t flushed = 0;  // their port was flushed
};

class Fdb {
 public:
  // Most keys one LookupBulk call takes (RTE_HASH_LOOKUP_BULK_MAX).
  static constexpr uint32_t kMaxBulk = 64;

  // Entries every port slot is guaranteed in a table of `capacity`: a quarter of the
  // table is spread over the kMaxPorts slots, at most 256 each.
  static constexpr uint32_t ReserveFor(uint32_t capacity) {
    return std::min<uint32_t>(256, capacity / (4 * kMaxPorts));
  }

  static absl::StatusOr<std::unique_ptr<Fdb>> Create(const std::string& name,
                                                     uint32_t capacity);
  ~Fdb();
  Fdb(const Fdb&) = delete;
  Fdb& operator=(const Fdb&) = delete;

  // Any thread. Looks up n <= kMaxBulk keys; bit i of the result is set when keys[i] has
  // a current entry, and then ports[i] holds its port and, if `positions` is given,
  // positions[i] the entry's position for Touch.
  uint64_t LookupBulk(const uint64_t* keys, uint32_t n, uint16_t* ports,
                      int32_t* positions = nullptr) const;
  // Any thread: the entry at `position` was seen at `now` (seconds). Writes only when
  // the stored time differs.
  void Touch(int32_t position, uint32_t now) const {
    std::atomic<uint32_t>& seen = entries_[position].last_seen;
    if (seen.load(std::memory_order_relaxed) != now) seen.store(now, std::memory_order_relaxed);
  }

  // Control thread only. `limit`: learned MACs the port may have (0: no limit).
  LearnResult Learn(uint64_t key, uint16_t port, uint32_t now, uint32_t limit = 0);
  // Control thread only: whether `port` may learn a new MAC now (what the workers are told,
  // so that they stop asking for a port that would be refused).
  LearnRoom Room(uint16_t port, uint32_t limit) const;
  // Makes `key` a static entry on `port`, replacing a learned one.
  absl::Status AddStatic(uint64_t key, uint16_t port);
  void FlushPort(uint16_t port);
  // Removes one entry, learned or static; NotFound when there is none. Calls
  // wait_for_readers before freeing its slot.
  absl::Status Remove(uint64_t key, absl::FunctionRef<void()> wait_for_readers);
  // Calls fn for every current entry (not those of flushed ports), in table order.
  void ForEach(absl::FunctionRef<void(const FdbEntryView&)> fn) const;
  // Removes entries of flushed ports and, when max_age > 0, entries not seen for max_age
  // seconds. Calls wait_for_readers once before freeing what it removed.
  AgeResult Age(uint32_t now, uint32_t max_age, absl::FunctionRef<void()> wait_for_readers);

  // Any thread. Entries in the table, including flushed ones Age has not removed yet.
  uint32_t size() const { return size_.load(std::memory_order_relaxed); }
  uint32_t capacity() const { return capacity_; }
  // Any thread. Current learned (not static) entries of a port.
  uint32_t learned(uint16_t port) const {
    return learned_[port].load(std::memory_order_relaxed);
  }
  uint32_t statics() const { return statics_.load(std::memory_order_relaxed); }
  uint32_t reserve() const { return reserve_; }
  // Control thread only. The shared rest's size, and how much of it static entries and
  // ports beyond their reserve (flushed entries included until aged) use.
  uint32_t shared_capacity() const { return capacity_ - kMaxPorts * reserve_; }
  uint32_t shared_used() const { return statics() + beyond_reserve_; }
  // Any thread. Moves on with every change a lookup could see (learn, move, static entry,
  // flush, removal), so that a reader may reuse a result while it stays the same.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  struct Entry {
    // Bits 0-15: port + 1 (0: no entry); bit 16: static; bits 32-63: the port's generation
    // when learned (32 bits: flushes never wrap it back to a stale entry's before Age, which
    // runs every second, has removed that entry).
    std::atomic<uint64_t> value{0};
    std::atomic<uint32_t> last_seen{0};
  };
  static constexpr uint64_t kStaticBit = uint64_t{1} << 16;
  static uint64_t Encode(uint16_t port, uint32_t generation) {
    return (uint64_t{port} + 1) | (uint64_t{generation} << 32);
  }
  static bool IsStatic(uint64_t value) { return value & kStaticBit; }
  // The port an entry value was learned on (current or flushed), or -1 when empty.
  static int OwnerPort(uint64_t value) { return static_cast<int>(value & 0xffff) - 1; }
  // The port of a current entry value, or -1 when empty or flushed.
  int CurrentPort(uint64_t value) const {
    if (value == 0) return -1;
    uint16_t port = static_cast<uint16_t>((value & 0xffff) - 1);
    if (IsStatic(value)) return port;
    uint32_t generation = static_cast<uint32_t>(value >> 32);
    return generation == generations_[port].load(std::memory_order_relaxed) ? port : -1;
  }
  // A port's hash slots: its current learned entries and its flushed ones not yet aged.
  uint32_t Used(int port) const { return learned(static_cast<uint16_t>(port)) + flushed_[port]; }
  // Whether one more slot for `port` must come from the shared rest, and whether it has
  // one.
  bool BeyondReserve(int port) const { return Used(port) >= reserve_; }
  bool SharedFull() const { return shared_used() >= shared_capacity(); }
  // A port takes / gives back one hash slot (a learned entry, `flushed`: a flushed one).
  void Take(int port, bool flushed);
  void Give(int port, bool flushed);
  void Changed() {
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // Adds a key to the hash; -1 when the table is full.
  int32_t Insert(uint64_t key);
  void AddStatics(int delta) {
    statics_.store(statics_.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }

  Fdb(rte_hash* hash, uint32_t capacity, uint32_t slots);

  rte_hash* hash_;
  uint32_t capacity_;
  uint32_t reserve_;
  std::unique_ptr<Entry[]> entries_;
  std::array<std::atomic<uint32_t>, kMaxPorts> generations_{};
  std::array<std::atomic<uint32_t>, kMaxPorts> learned_{};
  // Control thread only: per port, flushed entries still in the hash; over all ports, the
  // slots beyond their reserves (sum of max(0, Used(p) - reserve_)).
  std::array<uint32_t, kMaxPorts> flushed_{};
  uint32_t beyond_reserve_ = 0;
  std::atomic<uint32_t> size_{0}, statics_{0};
  std::atomic<uint64_t> version_{0};
};

}  // namespace hvswitch
