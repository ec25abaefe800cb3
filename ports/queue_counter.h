// QueueCounter: a statistic of one device queue, written by the one worker that uses the
// queue and read by the control thread: relaxed loads and stores (a plain add on x86, no
// lock prefix). Lives in rte_zmalloc'd private data: zero without a constructor.
#pragma once

#include <atomic>
#include <cstdint>

namespace hvswitch {

struct QueueCounter {
  std::atomic<uint64_t> value;
  void Add(uint64_t by) {
    value.store(value.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  uint64_t Get() const { return value.load(std::memory_order_relaxed); }
};

}  // namespace hvswitch
