#include "switch/control/wakeup.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {

absl::StatusOr<std::unique_ptr<Wakeup>> Wakeup::Create() {
  // Non-blocking: a ring never waits (the counter cannot overflow at one write per event),
  // and taking the rings never blocks the control thread.
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("eventfd: ", strerror(errno)));
  return std::unique_ptr<Wakeup>(new Wakeup(fd));
}

Wakeup::~Wakeup() { close(fd_); }

void Wakeup::Ring(int fd) {
  if (fd < 0) return;
  const int saved = errno;  // a signal handler must leave errno as it found it
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd, &one, sizeof(one));
  errno = saved;
}

bool Wakeup::Wait(std::vector<pollfd>& fds, ControlClock::time_point deadline) {
  all_.clear();
  all_.push_back({fd_, POLLIN, 0});
  all_.insert(all_.end(), fds.begin(), fds.end());
  timespec timeout{};
  timespec* wait = nullptr;  // no deadline: until something is ready
  if (deadline != ControlClock::time_point::max()) {
    const auto left = std::max(deadline - ControlClock::now(), ControlClock::duration::zero());
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    timeout.tv_sec = static_cast<time_t>(ns / 1000000000);
    timeout.tv_nsec = static_cast<long>(ns % 1000000000);
    wait = &timeout;
  }
  const int ready = ppoll(all_.data(), all_.size(), wait, nullptr);
  if (ready <= 0) return ready < 0;  // a signal came: the caller looks whether to stop
  for (size_t i = 0; i < fds.size(); ++i) fds[i].revents = all_[i + 1].revents;
  if (all_[0].revents & POLLIN) {
    uint64_t rings;
    [[maybe_unused]] ssize_t n = read(fd_, &rings, sizeof(rings));
  }
  return true;
}

}  // namespace hvswitch
