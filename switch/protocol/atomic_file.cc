#include "switch/protocol/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

absl::Status Failed(const std::string& path, absl::string_view what) {
  return absl::UnavailableError(
      absl::StrCat("cannot write ", path, ": ", what, ": ", strerror(errno)));
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 unsigned mode) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " names no file"));
  std::string tmp = absl::StrCat(dir, "/.", name, ".XXXXXX");
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return Failed(path, "cannot create a temporary file beside it");
  bool renamed = false;
  absl::Cleanup cleanup = [&] {
    close(fd);
    if (!renamed) unlink(tmp.c_str());
  };
  struct stat st{};
  if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    // Root replacing a file it does not own hands it back; anyone else keeps their own.
    if (fchown(fd, st.st_uid, st.st_gid) != 0 && errno != EPERM) return Failed(path, "fchown");
    mode = st.st_mode & 07777;
  }
  if (fchmod(fd, mode) != 0) return Failed(path, "fchmod");
  for (size_t done = 0; done < contents.size();) {
    const ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Failed(path, "write");
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return Failed(path, "fsync");
  if (rename(tmp.c_str(), path.c_str()) != 0) return Failed(path, "rename");
  renamed = true;
  // The rename itself reaches the disk with the directory.
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return absl::OkStatus();
}

}  // namespace hvswitch
