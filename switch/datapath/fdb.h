// Fdb: the MAC table, (VLAN, MAC) -> port, over an FdbTable (fdb_table.h) whose slots
// hold each key's value (port, the port's generation when learned, static bit) and its
// last-seen time inline.
// Threads: Probe, Resolve, LookupBulk and Touch from any worker at any time, without
// locks; every other call from one thread only, the control thread, which applies the
// learn requests the workers queue. Readers never wait for it and it never waits for them:
// a removed entry's slot may be reused at once (fdb_table.h says why that is safe).
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
// others. Flushed entries keep their slot until Age removes them, so until then they
// still count against the port they were learned on (its reserve first): however often a
// port is flushed and relearns, the table never holds more than `capacity` keys, and a
// port within its reserve always finds a slot.
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
#include "switch/datapath/fdb_table.h"

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
  // Most keys one LookupBulk or Resolve call takes (hit masks are 64 bits).
  static constexpr uint32_t kMaxBulk = 64;

  // Entries every port slot is guaranteed in a table of `capacity`: a quarter of the
  // table is spread over the kMaxPorts slots, at most 256 each.
  static constexpr uint32_t ReserveFor(uint32_t capacity) {
    return std::min<uint32_t>(256, capacity / (4 * kMaxPorts));
  }

  static absl::StatusOr<std::unique_ptr<Fdb>> Create(const std::string& name,
                                                     uint32_t capacity);
  Fdb(const Fdb&) = delete;
  Fdb& operator=(const Fdb&) = delete;

  // Any thread. The first half of a look-up: hashes `key` and starts loading where it is;
  // Resolve finishes it. Called early (as a burst is classified), the loads of a burst's
  // look-ups overlap with each other and with the rest of the work.
  FdbTable::Probe Probe(uint64_t key) const { return table_->Prefetch(key); }
  // Any thread. Looks up n <= kMaxBulk keys probed before; bit i of the result is set when
  // keys[i] has a current entry, and then ports[i] holds its port and, if `positions` is
  // given, positions[i] the entry's position for Touch.
  uint64_t Resolve(const uint64_t* keys, const FdbTable::Probe* probes, uint32_t n,
                   uint16_t* ports, int32_t* positions = nullptr) const;
  // Any thread. Probe and Resolve in one.
  uint64_t LookupBulk(const uint64_t* keys, uint32_t n, uint16_t* ports,
                      int32_t* positions = nullptr) const;
  // Any thread: `key`, found at `position`, was seen at `now` (seconds). Writes only when
  // the stored time differs and the key is still there.
  void Touch(int32_t position, uint64_t key, uint32_t now) const {
    table_->Touch(position, key, now);
  }

  // Control thread only. `limit`: learned MACs the port may have (0: no limit).
  LearnResult Learn(uint64_t key, uint16_t port, uint32_t now, uint32_t limit = 0);
  // Control thread only: whether `port` may learn a new MAC now (what the workers are told,
  // so that they stop asking for a port that would be refused).
  LearnRoom Room(uint16_t port, uint32_t limit) const;
  // Makes `key` a static entry on `port`, replacing a learned one.
  absl::Status AddStatic(uint64_t key, uint16_t port);
  void FlushPort(uint16_t port);
  // Removes one entry, learned or static; NotFound when there is none.
  absl::Status Remove(uint64_t key);
  // Calls fn for every current entry (not those of flushed ports), in table order.
  void ForEach(absl::FunctionRef<void(const FdbEntryView&)> fn) const;
  // Removes entries of flushed ports and, when max_age > 0, entries not seen for max_age
  // seconds: in the whole table (Age), or in the next `buckets` of its buckets after where
  // the last slice ended (AgeSlice), so that ageing a large table is spread over time.
  AgeResult Age(uint32_t now, uint32_t max_age) {
    return AgeSlice(now, max_age, table_->buckets());
  }
  AgeResult AgeSlice(uint32_t now, uint32_t max_age, uint32_t buckets);
  uint32_t buckets() const { return table_->buckets(); }
  // Control thread: whether entries of a flushed port still hold slots (Age frees them).
  bool HasFlushed() const {
    return std::any_of(flushed_.begin(), flushed_.end(), [](uint32_t n) { return n != 0; });
  }

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
  // An entry's value: bits 0-6 port + 1 (0: no entry), bit 7 static, bits 8-31 the port's
  // generation when learned. 24 bits: a port flushed 16 million times before ageing came
  // round to one of its stale entries would bring that entry back; flushes are operator
  // commands and link changes.
  static constexpr uint32_t kStaticBit = 1u << 7;
  static constexpr uint32_t kGenerationShift = 8, kGenerationMask = (1u << 24) - 1;
  static_assert(kMaxPorts < (1u << 7), "port + 1 fits in bits 0-6");
  static uint32_t Encode(uint16_t port, uint32_t generation) {
    return (uint32_t{port} + 1) | ((generation & kGenerationMask) << kGenerationShift);
  }
  static bool IsStatic(uint32_t value) { return value & kStaticBit; }
  // The port an entry value was learned on (current or flushed), or -1 when empty.
  static int OwnerPort(uint32_t value) { return static_cast<int>(value & 0x7f) - 1; }
  // The port of a current entry value, or -1 when empty or flushed.
  int CurrentPort(uint32_t value) const {
    if (value == 0) return -1;
    const uint16_t port = static_cast<uint16_t>((value & 0x7f) - 1);
    if (IsStatic(value)) return port;
    const uint32_t generation = generations_[port].load(std::memory_order_relaxed);
    return (value >> kGenerationShift) == (generation & kGenerationMask) ? port : -1;
  }
  // A port's slots: its current learned entries and its flushed ones not yet aged.
  uint32_t Used(int port) const { return learned(static_cast<uint16_t>(port)) + flushed_[port]; }
  // Whether one more slot for `port` must come from the shared rest, and whether it has
  // one.
  bool BeyondReserve(int port) const { return Used(port) >= reserve_; }
  bool SharedFull() const { return shared_used() >= shared_capacity(); }
  // A port takes / gives back one slot (a learned entry, `flushed`: a flushed one).
  void Take(int port, bool flushed);
  void Give(int port, bool flushed);
  void Changed() {
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // Adds a key; -1 when the table is full.
  int32_t Insert(uint64_t key, uint32_t value, uint32_t now);
  void AddStatics(int delta) {
    statics_.store(statics_.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }

  Fdb(std::unique_ptr<FdbTable> table, uint32_t capacity);

  std::unique_ptr<FdbTable> table_;
  uint32_t capacity_;
  uint32_t reserve_;
  uint32_t age_cursor_ = 0;  // the bucket the next AgeSlice starts at
  std::array<std::atomic<uint32_t>, kMaxPorts> generations_{};
  std::array<std::atomic<uint32_t>, kMaxPorts> learned_{};
  // Control thread only: per port, flushed entries still in the table; over all ports,
  // the slots beyond their reserves (sum of max(0, Used(p) - reserve_)).
  std::array<uint32_t, kMaxPorts> flushed_{};
  uint32_t beyond_reserve_ = 0;
  std::atomic<uint32_t> size_{0}, statics_{0};
  std::atomic<uint64_t> version_{0};
};

}  // namespace hvswitch
