#include "switch/datapath/learn_queue.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_atomic.h>
#include <rte_ring_elem.h>
#include <sys/eventfd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {

absl::StatusOr<std::unique_ptr<LearnQueue>> LearnQueue::Create(const std::string& name,
                                                               uint32_t size) {
  rte_ring* ring = rte_ring_create_elem(name.c_str(), sizeof(LearnRequest), size,
                                        static_cast<int>(rte_socket_id()),
                                        RING_F_SP_ENQ | RING_F_SC_DEQ);
  if (ring == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot create learn ring ", name, ": ", rte_strerror(rte_errno)));
  }
  return std::unique_ptr<LearnQueue>(new LearnQueue(ring));
}

LearnQueue::~LearnQueue() { rte_ring_free(ring_); }

bool LearnQueue::Request(uint64_t key, uint16_t port, uint64_t now, uint32_t frames) {
  Recent& recent = recent_[(key ^ (key >> 17) ^ (key >> 40)) & (recent_.size() - 1)];
  if (recent.key == key && recent.port == port && now - recent.when < repeat_cycles_) {
    return true;
  }
  recent = {key, now, port};
  LearnRequest request{key, port, frames};
  unsigned free = 0;
  if (rte_ring_sp_enqueue_bulk_elem(ring_, &request, sizeof(request), 1, &free) == 0) {
    return false;
  }
  // The request visible before the look at whether the control thread sleeps, as it arms
  // before its last look at the ring: one of the two sees the other (else a request could
  // wait in the ring with nobody rung). A locked add, on learn requests only.
  rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (free < wake_below_.load(std::memory_order_relaxed)) {
    wake_below_.store(0, std::memory_order_relaxed);
    if (wakeup_fd_ >= 0) eventfd_write(wakeup_fd_, 1);
  }
  return true;
}

unsigned LearnQueue::Drain(LearnRequest* out, unsigned max) {
  return rte_ring_sc_dequeue_burst_elem(ring_, out, sizeof(LearnRequest), max, nullptr);
}

bool LearnQueue::ArmWakeup(uint32_t free_below) {
  wake_below_.store(free_below, std::memory_order_relaxed);
  rte_atomic_thread_fence(__ATOMIC_SEQ_CST);  // see Request
  return rte_ring_free_count(ring_) >= free_below;
}

uint32_t LearnQueue::capacity() const { return rte_ring_get_capacity(ring_); }

}  // namespace hvswitch
