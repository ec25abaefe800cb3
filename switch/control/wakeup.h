// Wakeup: what the control thread sleeps on. An eventfd that other threads ring when they
// have work for it (a device's link event, a worker's learn request into an empty ring, a
// stop signal), and the descriptors and deadline of each wait (the control socket's
// connections, the next periodic job). The control thread runs when one of them is ready
// and sleeps otherwise, instead of waking every millisecond to look.
#pragma once

#include <poll.h>

#include <chrono>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"

namespace hvswitch {

// The control thread's clock for deadlines (CLOCK_MONOTONIC, as the control socket's).
using ControlClock = std::chrono::steady_clock;

class Wakeup {
 public:
  static absl::StatusOr<std::unique_ptr<Wakeup>> Create();
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // The eventfd, for the threads that ring it (Ring(fd)).
  int fd() const { return fd_; }
  // Any thread, a signal handler too (one write(2)): the next or current Wait returns.
  // fd < 0: nothing.
  static void Ring(int fd);
  void Ring() const { Ring(fd_); }

  // Control thread: sleeps until the eventfd was rung, one of `fds` is ready (their revents
  // are set) or `deadline` (ControlClock::time_point::max(): none). True when woken by a
  // ring or a descriptor, false at the deadline. Takes the rings it returns for.
  bool Wait(std::vector<pollfd>& fds, ControlClock::time_point deadline);

 private:
  explicit Wakeup(int fd) : fd_(fd) {}
  int fd_;
  std::vector<pollfd> all_;  // the eventfd, then fds: kept to allocate once
};

}  // namespace hvswitch
