#include "ports/host_tap/netns_guard.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ports/host_tap/kernel_device.h"

namespace hvswitch {
namespace {

std::string NetnsPath(const std::string& netns) {
  return netns.find('/') == std::string::npos ? "/run/netns/" + netns : netns;
}

}  // namespace

absl::Status ErrnoStatus(absl::string_view what, int err) {
  return absl::Status(absl::ErrnoToStatusCode(err), absl::StrCat(what, ": ", strerror(err)));
}

NetnsGuard::~NetnsGuard() {
  if (home_ < 0) return;
  if (setns(home_, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "hvswitch: cannot return to its network namespace: %s\n",
                 strerror(errno));
    std::abort();
  }
  close(home_);
}

absl::Status NetnsGuard::Enter(const std::string& netns) {
  if (netns.empty()) return absl::OkStatus();
  const std::string path = NetnsPath(netns);
  const int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) return ErrnoStatus(absl::StrCat("network namespace ", path), errno);
  // This thread's own namespace (/proc/self is the main thread's).
  home_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home_ < 0) {
    const int err = errno;
    close(target);
    return ErrnoStatus("/proc/thread-self/ns/net", err);
  }
  const int rc = setns(target, CLONE_NEWNET);
  const int err = errno;
  close(target);
  if (rc != 0) {
    close(home_);
    home_ = -1;
    return ErrnoStatus(absl::StrCat("entering network namespace ", path), err);
  }
  return absl::OkStatus();
}

absl::Status EnterInterfaceNamespace(const KernelInterfaceOptions& options, NetnsGuard& guard) {
  if (options.iface.empty() || options.iface.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError(
        absl::StrCat("interface name '", options.iface, "' must have 1 to 15 characters"));
  }
  return guard.Enter(options.netns);
}

}  // namespace hvswitch
