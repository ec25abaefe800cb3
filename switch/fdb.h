// Fdb: the MAC table, (VLAN, MAC) -> port index, over a lock-free rte_hash.
// Threads: LookupBulk from any worker at any time; every write (Learn) from one thread
// only, the control thread, which applies the learn requests the workers queue.
// Nothing is deleted yet, so readers need no grace period; ageing and flush will add
// RCU (rte_hash_rcu_qsbr_add) when they add deletes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct rte_hash;

namespace hvswitch {

enum class LearnResult { kCurrent, kAdded, kMoved, kFull };

class Fdb {
 public:
  // Most keys one LookupBulk call takes (RTE_HASH_LOOKUP_BULK_MAX).
  static constexpr uint32_t kMaxBulk = 64;

  static absl::StatusOr<std::unique_ptr<Fdb>> Create(const std::string& name,
                                                     uint32_t capacity);
  ~Fdb();
  Fdb(const Fdb&) = delete;
  Fdb& operator=(const Fdb&) = delete;

  // Any thread. Looks up n <= kMaxBulk keys; bit i of the result is set when keys[i] was
  // found, and then ports[i] holds its port.
  uint64_t LookupBulk(const uint64_t* keys, uint32_t n, uint16_t* ports) const;

  // Control thread only.
  LearnResult Learn(uint64_t key, uint16_t port);

  // Any thread.
  uint32_t size() const { return size_.load(std::memory_order_relaxed); }
  uint32_t capacity() const { return capacity_; }

 private:
  Fdb(rte_hash* hash, uint32_t capacity) : hash_(hash), capacity_(capacity) {}

  rte_hash* hash_;
  uint32_t capacity_;
  std::atomic<uint32_t> size_{0};
};

}  // namespace hvswitch
