#include "switch/ctl/client_socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace hvswitch::ctl {

using nlohmann::json;

int Connect(const std::string& path, std::string* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    *error = "socket path too long";
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    *error = absl::StrCat("cannot connect to ", path, ": ", strerror(errno),
                          errno == EACCES ? " (root or the daemon's --ctl_group only)"
                                          : errno == ENOENT ? " (is hvswitch running?)" : "");
    if (sock >= 0) close(sock);
    return -1;
  }
  return sock;
}

bool SendRequest(int sock, const std::string& request, int fd) {
  std::string line = request + "\n";
  iovec iov{line.data(), line.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
}

std::string ReadLine(int sock) {
  std::string line;
  char c;
  while (read(sock, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

std::string Ask(const std::string& path, const std::string& request, std::string* error,
                int fd) {
  const int sock = Connect(path, error);
  if (sock < 0) return {};
  std::string answer;
  if (SendRequest(sock, request, fd)) {
    char buf[65536];
    for (ssize_t n; (n = read(sock, buf, sizeof(buf))) > 0;) {
      answer.append(buf, static_cast<size_t>(n));
    }
  }
  close(sock);
  if (answer.empty()) *error = "no answer from hvswitch";
  return answer;
}

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "hvswitchctl: %s\n", message.c_str());
  return code;
}

int Refused(const json& answer) {
  return Fail(answer.value("error", "failed"), answer.value("denied", false) ? 2 : 1);
}

int AskOk(const std::string& path, const std::string& request, json& answer) {
  std::string error;
  const std::string line = Ask(path, request, &error);
  if (line.empty()) return Fail(error, 2);
  answer = json::parse(line, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) return Fail("unreadable answer", 1);
  if (!answer.value("ok", false)) return Refused(answer);
  return 0;
}

}  // namespace hvswitch::ctl
