// Where an attachment lives in hvswitch: its port's name, its socket and the port spec.
// All derived from the request alone, so that DEL and CHECK find what ADD made without
// the plugin keeping state of its own.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "switch/cni/cni_request.h"

namespace hvswitch::cni {

// "cni-" + the container id's first 12 characters (the short id `crictl ps` shows) + "-"
// + 8 hex digits of a hash of the whole id and the interface name: 25 characters of
// [A-Za-z0-9_.-], inside hvswitch's 32 (IsValidPortName, ports/port_spec.h), distinct for
// two ids that share a prefix and for two interfaces of one pod.
std::string PortName(absl::string_view container_id, absl::string_view ifname);

// The attachment's folder: <socketDir>/<pod UID> when the runtime gives K8S_POD_UID in
// CNI_ARGS (a pod knows its own UID from the downward API, and so can mount exactly its
// folder with subPathExpr), else <socketDir>/<container id>.
std::string PodDir(const Request& request);

// <PodDir>/<ifname>.sock; InvalidNetworkConfig when longer than a UNIX socket path can be.
absl::StatusOr<std::string> SocketPath(const Request& request);

// The hvswitch port spec (the --port grammar): name, type, path, then vlan, mtu, mac and
// the configuration's portKeys in their order.
std::string PortSpecText(const NetConf& conf, absl::string_view name, absl::string_view path);

}  // namespace hvswitch::cni
