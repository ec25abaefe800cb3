// LearnQueue: a worker's requests to learn (key, port), carried to the control thread,
// which alone writes the FDB. Single producer (the worker), single consumer (control).
// A small per-worker filter keeps a busy unlearned source from filling the ring while the
// control thread has not yet applied the first request.
//
// The control thread sleeps between its looks: it arms the queue's wake-up before it does
// (ArmWakeup), and the worker rings it (one eventfd write) for the first request that
// leaves less free room than the control thread asked for: the first request into an
// empty ring when the control thread sleeps for good, the one that fills half the ring
// while it comes back within a millisecond anyway. Once rung, the worker rings no more
// until it is armed again: at most one system call on the worker per look of the control
// thread, none while it is awake and draining.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct rte_ring;

namespace hvswitch {

struct LearnRequest {
  uint64_t key;
  uint32_t port;
  uint32_t frames;  // frames of the burst that asked (for counting refusals per frame)
};

class LearnQueue {
 public:
  // The ring the daemon gives each worker: what new sources arriving at 30 million a
  // second ask between two of the control thread's looks while it learns (a millisecond
  // apart; it is rung when half of it is full).
  static constexpr uint32_t kRingSize = 32768;

  static absl::StatusOr<std::unique_ptr<LearnQueue>> Create(const std::string& name,
                                                            uint32_t size);
  ~LearnQueue();
  LearnQueue(const LearnQueue&) = delete;
  LearnQueue& operator=(const LearnQueue&) = delete;

  // Worker only. `now` is the TSC; a request repeated within `repeat_cycles` is skipped.
  // False when the ring was full and the request is lost (the source asks again after
  // repeat_cycles).
  bool Request(uint64_t key, uint16_t port, uint64_t now, uint32_t frames = 1);
  // Control thread only. Returns how many requests were written to `out`.
  unsigned Drain(LearnRequest* out, unsigned max);

  // Control thread, before it sleeps: the worker rings the wake-up eventfd after the first
  // request that leaves fewer than `free_below` free entries (capacity(): any request).
  // False when the ring is already that full: the caller must not sleep on it.
  bool ArmWakeup(uint32_t free_below);
  uint32_t capacity() const;

  void set_repeat_cycles(uint64_t cycles) { repeat_cycles_ = cycles; }
  // The eventfd to ring (-1: none; the control thread then looks on its own schedule).
  void set_wakeup_fd(int fd) { wakeup_fd_ = fd; }

 private:
  explicit LearnQueue(rte_ring* ring) : ring_(ring) {}

  struct Recent {
    uint64_t key = 0;
    uint64_t when = 0;
    uint16_t port = 0;
  };
  rte_ring* ring_;
  uint64_t repeat_cycles_ = 0;
  int wakeup_fd_ = -1;
  // Set by the control thread (ArmWakeup), cleared by the worker when it rings.
  alignas(64) std::atomic<uint32_t> wake_below_{0};
  alignas(64) std::array<Recent, 256> recent_{};
};

}  // namespace hvswitch
