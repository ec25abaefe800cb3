// LearnQueue: a worker's requests to learn (key, port), carried to the control thread,
// which alone writes the FDB. Single producer (the worker), single consumer (control).
// A small per-worker filter keeps a busy unlearned source from filling the ring while the
// control thread has not yet applied the first request.
#pragma once

#include <array>
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
  // second ask between two of the control thread's polls (a millisecond apart).
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

  void set_repeat_cycles(uint64_t cycles) { repeat_cycles_ = cycles; }

 private:
  explicit LearnQueue(rte_ring* ring) : ring_(ring) {}

  struct Recent {
    uint64_t key = 0;
    uint64_t when = 0;
    uint16_t port = 0;
  };
  rte_ring* ring_;
  uint64_t repeat_cycles_ = 0;
  std::array<Recent, 256> recent_{};
};

}  // namespace hvswitch
