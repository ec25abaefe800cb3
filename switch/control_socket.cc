#include "switch/control_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

constexpr size_t kMaxRequest = 4096;
constexpr uint64_t kClientTimeoutMs = 1000;

uint64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat("control socket ", path, ": ", what, ": ",
                                          strerror(errno)));
}

// True when something answers on `path`: another hvswitch is using it.
bool InUse(const sockaddr_un& addr) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  bool answered = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return answered;
}

// A large answer (a big FDB) may not fit the socket buffer: written blocking, for at most
// a second, which is all a slow client may hold up the control thread.
void WriteAll(int fd, const std::string& data) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval timeout{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  for (size_t done = 0; done < data.size();) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ControlSocket>> ControlSocket::Listen(const std::string& path,
                                                                     const std::string& group) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("control socket path too long: ", path));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  gid_t gid = getgid();
  if (!group.empty()) {
    const struct group* g = getgrnam(group.c_str());
    if (g == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--ctl_group: no group '", group, "'"));
    }
    gid = g->gr_gid;
  }
  if (InUse(addr)) {
    return absl::FailedPreconditionError(
        absl::StrCat("control socket ", path, " is in use: is another hvswitch running?"));
  }
  unlink(path.c_str());  // a stale socket of a killed daemon
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket", path);
  // Created without permissions for others from the start, then given to the group.
  mode_t old_mask = umask(0177);
  int rc = bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  umask(old_mask);
  if (rc != 0 || chown(path.c_str(), geteuid(), gid) != 0 || chmod(path.c_str(), 0660) != 0 ||
      listen(fd, 16) != 0) {
    absl::Status status = Errno("bind/listen", path);
    close(fd);
    unlink(path.c_str());
    return status;
  }
  return std::unique_ptr<ControlSocket>(new ControlSocket(fd, path));
}

namespace {

// Reads what is there; a descriptor sent along is kept in *passed (one; extras closed).
ssize_t ReadWithFd(int fd, char* buf, size_t size, int* passed) {
  iovec iov{buf, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t got = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); got >= 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int received;
    std::memcpy(&received, CMSG_DATA(c), sizeof(int));
    if (*passed >= 0) {
      close(received);
    } else {
      *passed = received;
    }
  }
  return got;
}

}  // namespace

ControlSocket::~ControlSocket() {
  for (const Client& c : clients_) {
    close(c.fd);
    if (c.passed_fd >= 0) close(c.passed_fd);
  }
  close(fd_);
  unlink(path_.c_str());
}

void ControlSocket::Poll(absl::FunctionRef<std::string(absl::string_view, int)> handler) {
  const uint64_t now = NowMs();
  for (int fd; (fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
    clients_.push_back({fd, {}, now + kClientTimeoutMs});
  }
  for (size_t i = 0; i < clients_.size();) {
    Client& c = clients_[i];
    char buf[1024];
    ssize_t got;
    while ((got = ReadWithFd(c.fd, buf, sizeof(buf), &c.passed_fd)) > 0 &&
           c.request.size() < kMaxRequest) {
      c.request.append(buf, static_cast<size_t>(got));
    }
    const size_t newline = c.request.find('\n');
    const bool closed = got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    if (newline != std::string::npos || c.request.size() >= kMaxRequest) {
      std::string answer =
          newline != std::string::npos
              ? handler(absl::string_view(c.request).substr(0, newline), c.passed_fd)
              : std::string("{\"ok\":false,\"error\":\"request too long\"}");
      if (newline == std::string::npos && c.passed_fd >= 0) close(c.passed_fd);
      c.passed_fd = -1;
      answer += '\n';
      WriteAll(c.fd, answer);
    } else if (!closed && now < c.deadline_ms) {
      ++i;
      continue;
    }
    close(c.fd);
    if (c.passed_fd >= 0) close(c.passed_fd);
    clients_.erase(clients_.begin() + static_cast<long>(i));
  }
}

}  // namespace hvswitch
