// Checks a port's UNIX socket path before DPDK starts, so that a bad path is reported
// as one line naming the port, and removes a stale socket left by a killed switch.
// Control thread only.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "ports/port_spec.h"

namespace hvswitch {

// For a socket hvswitch creates: the directory must exist and be writable, and the path
// must not be a non-socket file or a socket some live process listens on. A socket with
// no listener is stale and is removed. Sockets owned by the guest (vhost-user client=1)
// are not checked: the guest may create them later.
absl::Status PrepareSocketPath(const PortSpec& spec);

// Whether `spec` has a socket hvswitch creates in a folder below `runtime_dir` (not the
// directory itself) that does not exist.
bool SocketFolderGone(const PortSpec& spec, const std::string& runtime_dir);

// Removes `path` if it is a socket; anything else is left alone.
void RemoveSocketFile(const std::string& path);

}  // namespace hvswitch
