// libFuzzer target over the daemon's configuration grammar: a `--port` spec alone
// (ParsePortSpec, also what `hvswitchctl port add` takes), a command line (ParseDaemonOptions
// over NUL-separated arguments) and a config file's text (ParseConfigText, what
// --config=FILE and a restart from `config save` read). Built with ASan+UBSan
// (deploy/fuzz.sh options). Besides memory errors and undefined behaviour it aborts when
// something that parsed does not come back the same through what hvswitch writes:
// PortSpec::ToString for a port, ConfigText for the options (a saved configuration must
// restart the same switch, and must not let a value smuggle in options of its own).
//
// Input: byte 0 picks the parser (mod 3: port spec, arguments, config text); the rest is
// its text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ports/port_spec.h"
#include "switch/control/options.h"

namespace {

using hvswitch::DaemonOptions;
using hvswitch::PortSpec;

// Adding a field to PortSpec or DaemonOptions changes these sizes: compare the new field in
// SamePort / SameOptions below, then update the size.
static_assert(sizeof(PortSpec) == 256, "PortSpec changed: compare its new field in SamePort");
static_assert(sizeof(DaemonOptions) == 384,
              "DaemonOptions changed: compare its new field in SameOptions");

[[noreturn]] void Broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "options_fuzz: broken promise: %s\n%s\n", what,
               absl::CHexEscape(detail).c_str());
  std::abort();
}

bool SamePort(const PortSpec& a, const PortSpec& b) {
  return a.name == b.name && a.driver == b.driver && a.driver_keys == b.driver_keys &&
         a.access_vlan == b.access_vlan &&
         a.trunk_vlans == b.trunk_vlans && a.native_vlan == b.native_vlan && a.mtu == b.mtu &&
         a.learn_limit == b.learn_limit && a.allowed_macs == b.allowed_macs &&
         a.lock_mac == b.lock_mac && a.quota == b.quota && a.tx_retries == b.tx_retries &&
         a.guards == b.guards && a.mrouter == b.mrouter;
}

// Everything a configuration file carries (not `help`, nor whether the ports were the
// defaults: a saved file lists them).
bool SameOptions(const DaemonOptions& a, const DaemonOptions& b) {
  if (a.ports.size() != b.ports.size() || a.static_macs.size() != b.static_macs.size() ||
      a.mirrors != b.mirrors) {
    return false;
  }
  for (size_t i = 0; i < a.ports.size(); ++i) {
    if (!SamePort(a.ports[i], b.ports[i])) return false;
  }
  for (size_t i = 0; i < a.static_macs.size(); ++i) {
    if (a.static_macs[i].port != b.static_macs[i].port ||
        a.static_macs[i].key != b.static_macs[i].key) {
      return false;
    }
  }
  return a.worker_cpus == b.worker_cpus && a.control_cpus == b.control_cpus &&
         a.metrics_address == b.metrics_address &&
         a.eal_args == b.eal_args && a.runtime_dir == b.runtime_dir &&
         a.ctl_socket == b.ctl_socket && a.ctl_group == b.ctl_group &&
         a.socket_group == b.socket_group &&
         a.save_config == b.save_config && a.fdb_capacity == b.fdb_capacity &&
         a.fdb_aging_seconds == b.fdb_aging_seconds && a.burst == b.burst &&
         a.rx_descriptors == b.rx_descriptors && a.tx_descriptors == b.tx_descriptors &&
         a.mbufs == b.mbufs && a.tx_flush_us == b.tx_flush_us && a.idle == b.idle &&
         a.idle_max_us == b.idle_max_us && a.idle_max_us_given == b.idle_max_us_given &&
         a.mcast_snooping == b.mcast_snooping && a.mcast_aging == b.mcast_aging;
}

void CheckPort(const PortSpec& spec) {
  const std::string text = spec.ToString();
  absl::StatusOr<PortSpec> back = hvswitch::ParsePortSpec(text);
  if (!back.ok()) Broken("a parsed port's ToString parses", text + "\n" + back.status().ToString());
  if (!SamePort(spec, *back)) Broken("a port's ToString parses back to the same port", text);
}

void CheckOptions(const DaemonOptions& options) {
  for (const PortSpec& spec : options.ports) CheckPort(spec);
  const std::string text = hvswitch::ConfigText(options);
  absl::StatusOr<DaemonOptions> back = hvswitch::ParseConfigText(text, "ConfigText");
  if (!back.ok()) Broken("ConfigText parses", text + "\n" + back.status().ToString());
  if (!SameOptions(options, *back)) Broken("ConfigText reads back as the same options", text);
  if (hvswitch::ConfigText(*back) != text) Broken("ConfigText is stable", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: {
      // As `hvswitchctl port add` takes it, then `config save` writes it.
      absl::StatusOr<PortSpec> spec = hvswitch::ParsePortSpec(text);
      if (!spec.ok()) break;
      CheckPort(*spec);
      DaemonOptions options = *hvswitch::ParseDaemonOptions({"--port=none"});
      options.ports.push_back(*spec);
      CheckOptions(options);
      break;
    }
    case 1: {
      std::vector<std::string> args = absl::StrSplit(text, '\0');
      absl::StatusOr<DaemonOptions> options = hvswitch::ParseDaemonOptions(args);
      if (options.ok()) CheckOptions(*options);
      break;
    }
    case 2: {
      absl::StatusOr<DaemonOptions> options = hvswitch::ParseConfigText(text, "fuzz");
      if (options.ok()) CheckOptions(*options);
      break;
    }
  }
  return 0;
}
