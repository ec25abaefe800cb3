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
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "switch/datapath_limits.h"

struct rte_hash;

namespace hvswitch {

enum class LearnResult {
  kCurrent,  // already on that port: nothing written but the last-seen time
  kAdded,
  kMoved,
  kFull,     // the table is at capacity
  kLimited,  // the port has as many learned MACs as its limit allows
  kStatic,   // a static entry on another port: not moved
};

// One current entry, as the control plane lists it.
struct FdbEntryView {
  uint64_t key = 0;  // VLAN and MAC (switch/mac_key.h)
  uint16_t port = 0;
  bool is_static = false;
  uint32_t last_seen = 0;  // seconds (control clock); 0 for static entries
};

struct AgeResult {
  uint32_t aged = 0;     // not seen for the ageing time
  uint32_t flushed = 0;  // their port was flushed
};

class Fdb {
 public:
  // Most keys one LookupBulk call takes (RTE_HASH_LOOKUP_BULK_MAX).
  static constexpr uint32_t kMaxBulk = 64;

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
  // Any thread. Moves on with every change a lookup could see (learn, move, static entry,
  // flush, removal), so that a reader may reuse a result while it stays the same.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  struct Entry {
    // Bits 0-15: port + 1 (0: no entry); bits 16-31: the port's generation when learned;
    // bit 32: static.
    std::atomic<uint64_t> value{0};
    std::atomic<uint32_t> last_seen{0};
  };
  static constexpr uint64_t kStaticBit = uint64_t{1} << 32;
  static uint64_t Encode(uint16_t port, uint16_t generation) {
    return (uint64_t{port} + 1) | (uint64_t{generation} << 16);
  }
  static bool IsStatic(uint64_t value) { return value & kStaticBit; }
  // The port of a current entry value, or -1 when empty or flushed.
  int CurrentPort(uint64_t value) const {
    if (value == 0) return -1;
    uint16_t port = static_cast<uint16_t>((value & 0xffff) - 1);
    if (IsStatic(value)) return port;
    uint16_t generation = static_cast<uint16_t>(value >> 16);
    return generation == generations_[port].load(std::memory_order_relaxed) ? port : -1;
  }
  void Changed() {
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // Adds a key to the hash; -1 when the table is full.
  int32_t Insert(uint64_t key);
  void CountLearned(int port, int delta) {
    if (port < 0) return;
    std::atomic<uint32_t>& n = learned_[port];
    n.store(n.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }

  Fdb(rte_hash* hash, uint32_t capacity, uint32_t slots);

  rte_hash* hash_;
  uint32_t capacity_;
  std::unique_ptr<Entry[]> entries_;
  std::array<std::atomic<uint16_t>, kMaxPorts> generations_{};
  std::array<std::atomic<uint32_t>, kMaxPorts> learned_{};
  std::atomic<uint32_t> size_{0}, statics_{0};
  std::atomic<uint64_t> version_{0};
};

}  // namespace hvswitch
