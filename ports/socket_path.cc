#include "ports/socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hvswitch {
namespace {

// The folder a socket path names ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::Status PathError(const PortSpec& spec, absl::string_view path, absl::string_view problem) {
  return absl::FailedPreconditionError(
      absl::StrCat("port '", spec.name, "': socket ", path, ": ", problem));
}

// Never waits: a listener whose backlog is full (EAGAIN) is a listener too. A memif
// server's socket is SOCK_SEQPACKET: a stream connect to it is refused as the wrong type.
bool HasListener(const std::string& path) {
  for (int type : {SOCK_STREAM, SOCK_SEQPACKET}) {
    int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    const int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    const bool listening = rc == 0 || errno == EAGAIN || errno == EINPROGRESS;
    close(fd);
    if (listening) return true;
  }
  return false;
}

}  // namespace

bool SocketFolderGone(const PortSpec& spec, const std::string& runtime_dir) {
  const PortTraits traits = spec.Traits();
  if (!traits.owns_socket || !traits.socket || runtime_dir.empty()) return false;
  const std::string dir = FolderOf(*traits.socket);
  std::string below = runtime_dir;
  if (below.back() != '/') below += '/';
  if (dir.size() <= below.size() || dir.compare(0, below.size(), below) != 0) return false;
  struct stat st{};
  return stat(dir.c_str(), &st) != 0 && errno == ENOENT;
}

absl::Status PrepareSocketPath(const PortSpec& spec) {
  const PortTraits traits = spec.Traits();
  if (!traits.owns_socket || !traits.socket) return absl::OkStatus();
  const std::string& path = *traits.socket;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return PathError(spec, path, "path is too long for a UNIX socket");
  }
  const std::string dir = FolderOf(path);
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return PathError(spec, path, absl::StrCat("directory ", dir, " does not exist"));
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return PathError(spec, path, absl::StrCat("directory ", dir, " is not writable"));
  }
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return PathError(spec, path, "exists and is not a socket");
    if (HasListener(path)) return PathError(spec, path, "is in use by another process");
    if (unlink(path.c_str()) != 0) {
      return PathError(spec, path, absl::StrCat("cannot remove stale socket: ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

void RemoveSocketFile(const std::string& path) {
  struct stat st{};
  if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path.c_str());
}

}  // namespace hvswitch
