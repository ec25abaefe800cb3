#include "ports/peer_socket_guard.h"

#include "ports/interposed_call.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>

namespace hvswitch::peer_socket_guard {
namespace {

thread_local bool t_control = false;

timeval Millis(long ms) { return {ms / 1000, (ms % 1000) * 1000}; }

// The DPDK threads that talk to guests' peers, by the names DPDK 22.11 gives them.
bool CallerIs(const char* name) {
  char self[16] = {};
  return prctl(PR_GET_NAME, self) == 0 && std::strcmp(self, name) == 0;
}

bool IsUnix(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
         addr.ss_family == AF_UNIX;
}

void SetPeerTimeouts(int fd) {
  const timeval timeout = Millis(kPeerIoTimeoutMs);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
}

int Connect(int fd, const sockaddr* addr, socklen_t len) {
  const bool peer = addr != nullptr && addr->sa_family == AF_UNIX &&
                    (t_control || CallerIs("vhost_reconn"));
  if (!peer) return interposed::Connect(fd, addr, len);
  const int flags = fcntl(fd, F_GETFL);
  if (t_control && flags >= 0 && !(flags & O_NONBLOCK)) {
    const timeval bounded = Millis(kConnectTimeoutMs);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bounded, sizeof(bounded));
  }
  const int rc = interposed::Connect(fd, addr, len);
  const int saved = errno;
  SetPeerTimeouts(fd);  // replaces the connect bound
  errno = saved;
  return rc;
}

int Accepted(int fd) {
  if (fd >= 0 && (CallerIs("vhost-events") || CallerIs("eal-intr-thread")) && IsUnix(fd)) {
    SetPeerTimeouts(fd);
  }
  return fd;
}

}  // namespace

void BoundThisThread() { t_control = true; }

}  // namespace hvswitch::peer_socket_guard

extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  return hvswitch::peer_socket_guard::Connect(fd, addr, len);
}

extern "C" int accept(int fd, sockaddr* addr, socklen_t* len) {
  return hvswitch::peer_socket_guard::Accepted(hvswitch::interposed::Accept(fd, addr, len));
}
