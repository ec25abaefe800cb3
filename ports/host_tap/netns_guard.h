// NetnsGuard: the calling thread inside another network namespace until the guard ends,
// for opening a kernel interface's descriptors there (a tap, a packet socket and the
// socket its ioctls go through belong to the namespace they were created in, and work
// from any namespace after). Control thread only: setns changes the calling thread.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hvswitch {

// "what: strerror(err)", with the status code errno maps to.
absl::Status ErrnoStatus(absl::string_view what, int err);

class NetnsGuard {
 public:
  NetnsGuard() = default;
  NetnsGuard(const NetnsGuard&) = delete;
  NetnsGuard& operator=(const NetnsGuard&) = delete;
  // Back to the thread's own namespace. A thread that cannot return would go on in the
  // wrong namespace: that aborts.
  ~NetnsGuard();

  // `netns`: "" (stay), a name under /run/netns (ip netns add), or a path such as
  // /proc/PID/ns/net.
  absl::Status Enter(const std::string& netns);

 private:
  int home_ = -1;
};

}  // namespace hvswitch
