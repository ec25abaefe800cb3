// ControlSocket: the daemon's end of hvswitchctl. A UNIX stream socket, mode 0660 and
// owned by a configurable group, so that only root and that group's members may connect
// (the file system refuses everyone else); who is asking is read from the connection
// (SO_PEERCRED) and decides what the request may do (switch/control/control_policy.h).
//
// One request line per connection, answered with one line; the request may carry one
// file descriptor (SCM_RIGHTS: the file a capture goes to). The control thread polls it
// and must never wait for a client: every read and write is non-blocking, a client has a
// second to send its request and two to take its answer, and at most kMaxClients
// connections (the others wait in the listen backlog) and kMaxPendingBytes of unread
// answers are held at once.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hvswitch {

// The process on the other end of a connection, as the kernel saw it at connect().
struct ControlPeer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct ControlRequest {
  absl::string_view line;  // printable ASCII, without the newline
  int file = -1;           // a descriptor the request carried (the handler owns it), or -1
  // The client's connection. A handler may keep it to answer later (a capture that
  // reports when it ends): it then says so in its answer and owns the descriptor.
  int connection = -1;
  ControlPeer peer;
};

struct ControlAnswer {
  std::string line;  // without the newline
  bool connection_taken = false;
};

class ControlSocket {
 public:
  static constexpr size_t kMaxRequest = 4096;
  static constexpr size_t kMaxClients = 16;
  static constexpr size_t kMaxPendingBytes = size_t{64} << 20;

  // `group`: the group that may connect; empty: the daemon's own.
  static absl::StatusOr<std::unique_ptr<ControlSocket>> Listen(const std::string& path,
                                                               const std::string& group);
  ~ControlSocket();  // closes the connections and removes the socket file
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  // Accepts waiting connections, reads what they sent, answers each complete request
  // with handler(request) and sends what answers are waiting; never blocks.
  void Poll(absl::FunctionRef<ControlAnswer(const ControlRequest&)> handler);
  // What the next Poll would act on, for the control thread to sleep until one of them:
  // the descriptors (a connection to accept, a request to read, an answer to send) are
  // appended to `fds`; the deadline is the earliest client's timeout
  // (steady_clock::time_point::max(): none).
  void AddPollFds(std::vector<pollfd>& fds) const;
  std::chrono::steady_clock::time_point NextDeadline() const;

 private:
  struct Client {
    int fd = -1;
    ControlPeer peer;
    uint64_t deadline_ms = 0;  // to send the request, then to take the answer
    std::string request;
    int passed_fd = -1;
    bool bad_fds = false;  // the request carried more than one descriptor
    std::string answer;    // being sent
    size_t sent = 0;
    bool answering = false;
  };
  ControlSocket(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void Accept(uint64_t now);
  // Reads what the client sent; true once its request is complete (or can never be).
  bool Read(Client& c);
  // Sends what the socket takes of the answer; true once all of it is sent.
  bool Write(Client& c);
  void Answer(Client& c, absl::FunctionRef<ControlAnswer(const ControlRequest&)> handler,
              uint64_t now);
  void Drop(Client& c);

  int fd_;
  std::string path_;
  std::vector<Client> clients_;
  size_t pending_bytes_ = 0;  // of answers not yet sent
};

}  // namespace hvswitch
