#include "ports/unix_connect_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

namespace hvswitch::unix_connect_guard {
namespace {

thread_local bool t_bounded = false;

int KernelConnect(int fd, const sockaddr* addr, socklen_t len) {
  return static_cast<int>(syscall(SYS_connect, fd, addr, len));
}

int Connect(int fd, const sockaddr* addr, socklen_t len) {
  const int flags = t_bounded && addr != nullptr && addr->sa_family == AF_UNIX
                        ? fcntl(fd, F_GETFL)
                        : -1;
  if (flags < 0 || (flags & O_NONBLOCK)) return KernelConnect(fd, addr, len);
  timeval old{};
  socklen_t old_len = sizeof(old);
  if (getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &old, &old_len) != 0) {
    return KernelConnect(fd, addr, len);
  }
  const timeval bounded{0, kConnectTimeoutMs * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bounded, sizeof(bounded));
  const int rc = KernelConnect(fd, addr, len);
  const int saved = errno;
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &old, sizeof(old));
  errno = saved;
  return rc;
}

}  // namespace

void BoundThisThread() { t_bounded = true; }

}  // namespace hvswitch::unix_connect_guard

extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  return hvswitch::unix_connect_guard::Connect(fd, addr, len);
}
