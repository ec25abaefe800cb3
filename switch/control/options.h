// DaemonOptions: the daemon's command line and config file (same grammar), parsed and
// validated before DPDK starts. Control-plane only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ports/port_spec.h"
#include "switch/control/mirror_spec.h"
#include "switch/datapath/idle_backoff.h"
#include "switch/protocol/defaults.h"

namespace hvswitch {

// `--fdb_static=PORT,MAC[,vlan=N]`: a MAC pinned to a port.
struct StaticMacSpec {
  std::string port;
  uint64_t key = 0;  // MacKey(vlan, mac)
};

struct DaemonOptions {
  std::vector<PortSpec> ports;
  std::vector<StaticMacSpec> static_macs;
  std::vector<MirrorSpec> mirrors;  // --mirror=, checked against the ports at start
  std::vector<unsigned> worker_cpus;            // empty: one worker on the last CPU
  std::vector<unsigned> control_cpus;           // empty: the CPUs the workers leave free
  std::string metrics_address{kDefaultMetricsAddress};  // empty: no endpoint
  std::vector<std::string> eal_args;
  std::string runtime_dir{kDefaultRuntimeDir};
  // hvswitchctl's socket (default <runtime_dir>/hvswitch.ctl; empty after
  // --ctl_socket=none) and the group that may use it besides root.
  std::string ctl_socket;
  std::string ctl_group;
  // The group given the guest sockets hvswitch creates (mode 0660) and the folder
  // <runtime_dir>/qemu (0770) where QEMU creates those of client=1 ports: QEMU under
  // libvirt runs as libvirt-qemu, not root. Empty: root only.
  std::string socket_group;
  // Where the daemon writes its configuration after every change made with hvswitchctl
  // (ports, static MACs), and where `config save` writes by default; empty: nowhere, and
  // `config save` writes <runtime_dir>/hvswitch.conf.
  std::string save_config;
  uint32_t fdb_capacity = 65536;
  uint32_t fdb_aging_seconds = 300;  // 0: never
  // Data-path tunables; the defaults are the sweet spot measured in tests/perf/results.md.
  uint16_t burst = 32;
  uint16_t rx_descriptors = 1024;
  uint16_t tx_descriptors = 1024;
  uint32_t mbufs = 0;        // 0: sized from the ports' rings and the workers
  uint32_t tx_flush_us = 0;  // 0: no waiting for fuller tx bursts
  // What workers do between rounds that find nothing, and their longest sleep; given:
  // --idle_max_us was set, so a receive ring that cannot hold that long is an error
  // (otherwise the workers polling it sleep less).
  IdleMode idle = IdleMode::kSleep;
  uint32_t idle_max_us = 250;
  bool idle_max_us_given = false;
  // IGMP/MLD snooping: multicast to a group only where it was joined (and to the router
  // ports); memberships and routers expire after mcast_aging seconds unless refreshed.
  bool mcast_snooping = false;
  uint32_t mcast_aging = 260;
  bool uses_default_ports = false;  // no --port given: the embedded default configuration
  bool help = false;
  bool version = false;  // --version: print it and exit, like --help
};

// Parses `--key=value` / `--key value` options; `--port` may repeat; `--config=FILE` reads
// the same options from FILE, one per line (leading `--` optional, `#` starts a comment).
absl::StatusOr<DaemonOptions> ParseDaemonOptions(const std::vector<std::string>& args);

// Parses the text of a config file as `--config=FILE` would read it from FILE (`origin`
// names it in errors): what hvswitchctl config save wrote, or a fuzzer's input.
absl::StatusOr<DaemonOptions> ParseConfigText(absl::string_view text, absl::string_view origin);

// Parses `1`, `1,3` or `1-3` into CPU numbers.
// A CPU list such as 1 or 1,2 or 1-3; `flag` names the option in the error.
absl::StatusOr<std::vector<unsigned>> ParseCpuList(absl::string_view text,
                                                   absl::string_view flag = "lcores");

// The ports started when none is configured: two vhost-user guests and one memif guest
// with their sockets in `runtime_dir`.
std::vector<PortSpec> DefaultPorts(absl::string_view runtime_dir);

std::string UsageText();

// The options as a config file (`--config=FILE` reads it back into the same options):
// every port, static MAC and setting that differs from its default. What
// `hvswitchctl config save` writes, so that a restart brings back every port.
std::string ConfigText(const DaemonOptions& options);

}  // namespace hvswitch
