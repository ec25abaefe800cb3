// ControlSocket: the daemon's end of hvswitchctl. A UNIX stream socket, mode 0660 and
// owned by a configurable group, so that only root and that group's members may connect
// (the file system refuses everyone else). One request line per connection, answered with
// one line; the request may carry one file descriptor (SCM_RIGHTS: the file a capture
// goes to). Polled by the control thread without blocking; a client that sends nothing
// within a second is dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hvswitch {

class ControlSocket {
 public:
  // `group`: the group that may connect; empty: the daemon's own.
  static absl::StatusOr<std::unique_ptr<ControlSocket>> Listen(const std::string& path,
                                                               const std::string& group);
  ~ControlSocket();  // closes the connections and removes the socket file
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  // Accepts waiting connections, reads what they sent and answers each complete request
  // line with handler(line, fd): fd is the descriptor the request carried (the handler
  // owns it) or -1.
  void Poll(absl::FunctionRef<std::string(absl::string_view, int)> handler);

 private:
  struct Client {
    int fd;
    std::string request;
    uint64_t deadline_ms;
    int passed_fd = -1;
  };
  ControlSocket(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_;
  std::string path_;
  std::vector<Client> clients_;
};

}  // namespace hvswitch
