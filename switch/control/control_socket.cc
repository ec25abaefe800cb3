#include "switch/control/control_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

constexpr uint64_t kRequestTimeoutMs = 1000;
constexpr uint64_t kAnswerTimeoutMs = 2000;
// Descriptors one read can bring; a request may carry one, the rest are closed.
constexpr size_t kMaxFdsPerRead = 16;

uint64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat("control socket ", path, ": ", what, ": ",
                                          strerror(errno)));
}

bool FillAddress(const std::string& path, sockaddr_un& addr) {
  addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return true;
}

// True when something listens on `addr`: another hvswitch is using it. Never waits: a
// listener whose backlog is full answers EAGAIN, which means in use too.
bool InUse(const sockaddr_un& addr) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const bool answered = rc == 0 || errno == EAGAIN || errno == EINPROGRESS;
  close(fd);
  return answered;
}

bool IsPrintableAscii(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// Answers of the socket itself; the messages are plain ASCII without quotes.
std::string ErrorLine(absl::string_view message) {
  return absl::StrCat("{\"ok\":false,\"error\":\"", message, "\"}");
}

}  // namespace

// The socket is bound in a private directory (mode 0700) beside its final path, given its
// group and mode there, and renamed into place: nobody can swap a symlink in while the
// owner and mode are set, and the process umask, which other threads also use, stays
// untouched.
absl::StatusOr<std::unique_ptr<ControlSocket>> ControlSocket::Listen(const std::string& path,
                                                                     const std::string& group) {
  sockaddr_un addr;
  if (!FillAddress(path, addr)) {
    return absl::InvalidArgumentError(absl::StrCat("control socket path too long: ", path));
  }
  gid_t gid = getgid();
  if (!group.empty()) {
    const struct group* g = getgrnam(group.c_str());
    if (g == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--ctl_group: no group '", group, "'"));
    }
    gid = g->gr_gid;
  }
  struct stat st{};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("control socket ", path, " exists and is not a socket"));
    }
    if (InUse(addr)) {
      return absl::FailedPreconditionError(
          absl::StrCat("control socket ", path, " is in use: is another hvswitch running?"));
    }
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string private_dir = dir + "/.hvsctlXXXXXX";
  if (mkdtemp(private_dir.data()) == nullptr) return Errno("mkdtemp", path);
  const std::string bound = private_dir + "/s";
  sockaddr_un bound_addr;
  int fd = -1;
  absl::Status status;
  if (!FillAddress(bound, bound_addr)) {
    status = absl::InvalidArgumentError(absl::StrCat("control socket path too long: ", path));
  } else if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
    status = Errno("socket", path);
  } else if (bind(fd, reinterpret_cast<const sockaddr*>(&bound_addr), sizeof(bound_addr)) != 0 ||
             chown(bound.c_str(), geteuid(), gid) != 0 || chmod(bound.c_str(), 0660) != 0 ||
             listen(fd, 64) != 0 || rename(bound.c_str(), path.c_str()) != 0) {
    status = Errno("bind/listen", path);
  }
  unlink(bound.c_str());  // left only when something failed
  rmdir(private_dir.c_str());
  if (!status.ok()) {
    if (fd >= 0) close(fd);
    return status;
  }
  return std::unique_ptr<ControlSocket>(new ControlSocket(fd, path));
}

ControlSocket::~ControlSocket() {
  for (Client& c : clients_) Drop(c);
  close(fd_);
  unlink(path_.c_str());
}

void ControlSocket::Drop(Client& c) {
  if (c.fd >= 0) close(c.fd);
  if (c.passed_fd >= 0) close(c.passed_fd);
  pending_bytes_ -= c.answer.size() - c.sent;
  c.fd = c.passed_fd = -1;
  c.answer.clear();
  c.sent = 0;
}

// Beyond kMaxClients, connections wait in the listen backlog until one of the held ones
// is answered or times out: a client that hoards connections holds each for a second at
// most, and costs the daemon no memory meanwhile.
void ControlSocket::Accept(uint64_t now) {
  for (int fd; clients_.size() < kMaxClients &&
               (fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      close(fd);
      continue;
    }
    Client c;
    c.fd = fd;
    c.peer = {cred.pid, cred.uid, cred.gid};
    c.deadline_ms = now + kRequestTimeoutMs;
    clients_.push_back(std::move(c));
  }
}

bool ControlSocket::Read(Client& c) {
  while (c.request.find('\n') == std::string::npos && c.request.size() < kMaxRequest) {
    char buf[1024];
    iovec iov{buf, std::min(sizeof(buf), kMaxRequest - c.request.size())};
    alignas(cmsghdr) char control[CMSG_SPACE(kMaxFdsPerRead * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t got = recvmsg(c.fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (got < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    // Every descriptor that arrived is ours to close: one request carries one at most.
    if (msg.msg_flags & MSG_CTRUNC) c.bad_fds = true;
    for (cmsghdr* h = CMSG_FIRSTHDR(&msg); h != nullptr; h = CMSG_NXTHDR(&msg, h)) {
      if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
      const size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < n; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
        if (c.passed_fd < 0 && !c.bad_fds) {
          c.passed_fd = received;
        } else {
          close(received);
          c.bad_fds = true;
        }
      }
    }
    if (got == 0) return true;  // the client is done sending
    c.request.append(buf, static_cast<size_t>(got));
  }
  return true;
}

void ControlSocket::Answer(Client& c,
                           absl::FunctionRef<ControlAnswer(const ControlRequest&)> handler,
                           uint64_t now) {
  const size_t newline = c.request.find('\n');
  const absl::string_view line = absl::string_view(c.request).substr(0, newline);
  ControlAnswer answer;
  if (newline == std::string::npos) {
    answer.line = ErrorLine(c.request.size() >= kMaxRequest ? "request too long"
                                                            : "request without a newline");
  } else if (c.bad_fds) {
    answer.line = ErrorLine("a request carries one file descriptor at most");
  } else if (!IsPrintableAscii(line)) {
    answer.line = ErrorLine("a request is one line of printable ASCII");
  } else {
    const int file = c.passed_fd;
    c.passed_fd = -1;  // the handler's now
    answer = handler(ControlRequest{line, file, c.fd, c.peer});
  }
  if (answer.connection_taken) {
    c.fd = -1;
    return;
  }
  if (pending_bytes_ + answer.line.size() > kMaxPendingBytes) {
    answer.line = ErrorLine("busy: too many answers not yet read");
  }
  c.answer = std::move(answer.line);
  c.answer += '\n';
  c.sent = 0;
  pending_bytes_ += c.answer.size();
  c.answering = true;
  c.deadline_ms = now + kAnswerTimeoutMs;
}

bool ControlSocket::Write(Client& c) {
  while (c.sent < c.answer.size()) {
    const ssize_t n = send(c.fd, c.answer.data() + c.sent, c.answer.size() - c.sent,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
    if (n <= 0) return true;  // the client went: nothing more to send
    c.sent += static_cast<size_t>(n);
    pending_bytes_ -= static_cast<size_t>(n);
  }
  return true;
}

void ControlSocket::Poll(absl::FunctionRef<ControlAnswer(const ControlRequest&)> handler) {
  const uint64_t now = NowMs();
  Accept(now);
  for (size_t i = 0; i < clients_.size();) {
    Client& c = clients_[i];
    bool done = false;
    if (!c.answering) {
      if (Read(c)) {
        Answer(c, handler, now);
        done = c.fd < 0;  // taken by the handler
      } else {
        done = now >= c.deadline_ms;
      }
    }
    if (!done && c.answering) done = Write(c) || now >= c.deadline_ms;
    if (!done) {
      ++i;
      continue;
    }
    Drop(c);
    clients_.erase(clients_.begin() + static_cast<long>(i));
  }
}

void ControlSocket::AddPollFds(std::vector<pollfd>& fds) const {
  // A full house leaves new connections in the backlog (Accept): not looked at meanwhile.
  if (clients_.size() < kMaxClients) fds.push_back({fd_, POLLIN, 0});
  for (const Client& c : clients_) {
    fds.push_back({c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
  }
}

std::chrono::steady_clock::time_point ControlSocket::NextDeadline() const {
  if (clients_.empty()) return std::chrono::steady_clock::time_point::max();
  uint64_t earliest = UINT64_MAX;
  for (const Client& c : clients_) earliest = std::min(earliest, c.deadline_ms);
  // NowMs's clock is steady_clock's (CLOCK_MONOTONIC).
  return std::chrono::steady_clock::time_point(std::chrono::milliseconds(earliest));
}

}  // namespace hvswitch
