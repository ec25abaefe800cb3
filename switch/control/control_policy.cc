#include "switch/control/control_policy.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

absl::Status Denied(absl::string_view what) {
  return absl::PermissionDeniedError(absl::StrCat("permission denied: ", what));
}

// The path with symlinks resolved; empty when it does not exist.
std::string Resolved(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> real(realpath(path.c_str(), nullptr), &free);
  return real ? std::string(real.get()) : std::string();
}

// `path` with its directory resolved through symlinks (the entry itself may not exist
// yet: a socket about to be created); empty when the directory does not exist.
std::string Canonical(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string parent =
      Resolved(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
  if (parent.empty() || name.empty() || name == "." || name == "..") return {};
  return absl::StrCat(parent == "/" ? "" : parent, "/", name);
}

}  // namespace

ControlRole RoleOf(const ControlPeer& peer) {
  return peer.uid == 0 || peer.uid == geteuid() ? ControlRole::kRoot : ControlRole::kGroupMember;
}

bool IsDirectlyInside(const std::string& path, const std::string& dir) {
  const std::string canonical = Canonical(path);
  const std::string resolved_dir = Resolved(dir);
  return !canonical.empty() && !resolved_dir.empty() &&
         canonical.substr(0, canonical.rfind('/')) == (resolved_dir == "/" ? "" : resolved_dir);
}

absl::Status ControlPolicy::MayManagePort(ControlRole role, const PortSpec& spec) const {
  // Even root's ports never talk to the control socket: a vhost-user or memif client on it
  // would send its requests as the daemon, i.e. as root.
  const PortTraits traits = spec.Traits();
  if (traits.socket && !ctl_socket.empty() && !Canonical(ctl_socket).empty() &&
      (Canonical(*traits.socket) == Canonical(ctl_socket) ||
       Resolved(*traits.socket) == Canonical(ctl_socket))) {
    return absl::InvalidArgumentError(absl::StrCat("port '", spec.name, "': ", *traits.socket,
                                                   " is hvswitch's control socket"));
  }
  if (role == ControlRole::kRoot) return absl::OkStatus();
  if (traits.root_only) return Denied(*traits.root_only);
  if (!traits.socket) return absl::OkStatus();
  // A socket that exists already (a client port's) counts where it really is: a symlink
  // in the runtime directory must not lead to another service's socket.
  const std::string& socket = *traits.socket;
  const std::string target = Resolved(socket);
  if (!IsDirectlyInside(socket, runtime_dir) ||
      (!target.empty() && !IsDirectlyInside(target, runtime_dir))) {
    return Denied(absl::StrCat("the --ctl_group may manage ports whose socket is in ",
                               runtime_dir, " only; ", socket, " needs root"));
  }
  return absl::OkStatus();
}

absl::Status ControlPolicy::MayWriteFile(ControlRole role) const {
  if (role == ControlRole::kRoot) return absl::OkStatus();
  return Denied("the daemon writes a named file for root only (hvswitchctl config save FILE "
                "writes it with your rights)");
}

}  // namespace hvswitch
