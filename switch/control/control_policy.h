// ControlPolicy: what a caller of the control socket may do. The socket file already
// keeps out everyone but root and the --ctl_group; this decides, per request, what a
// group member may do that root may not. The rule: group members operate the guest
// network (they see everything, manage the FDB, capture, and attach and detach guests)
// but nothing they ask makes the daemon, which runs as root, open a device or touch a
// file outside the runtime directory:
//   - port add/del: vhost-user and memif ports only, their socket directly in the
//     runtime directory, and not zero_copy=1 (its peer sees all of hvswitch's memory);
//   - config save FILE: hvswitchctl writes FILE itself, with the caller's rights; the
//     daemon writes only its own configuration file (--save_config, or the default);
//   - capture: the file is opened by hvswitchctl, with the caller's rights.
// Root (uid 0, or the daemon's own user) may do everything.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "ports/port_spec.h"
#include "switch/control/control_socket.h"

namespace hvswitch {

enum class ControlRole { kRoot, kGroupMember };

ControlRole RoleOf(const ControlPeer& peer);

// Where a group member's guest sockets may be, and the control socket no port may use.
struct ControlPolicy {
  std::string runtime_dir;
  std::string ctl_socket;

  // Adding a port, or removing the port `spec` describes.
  absl::Status MayManagePort(ControlRole role, const PortSpec& spec) const;
  // Writing a file the caller names (config save FILE).
  absl::Status MayWriteFile(ControlRole role) const;
};

// True when `path` names an entry directly inside directory `dir` (both resolved through
// symlinks, so `dir/../x` or a symlinked directory elsewhere do not count).
bool IsDirectlyInside(const std::string& path, const std::string& dir);

}  // namespace hvswitch
