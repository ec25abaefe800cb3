#include "switch/control_commands.h"

#include <cstdint>
#include <optional>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "switch/atomic_file.h"
#include "switch/control_policy.h"
#include "switch/mac_key.h"
#include "switch/options.h"
#include "switch/port_json.h"

namespace hvswitch {
namespace {

using nlohmann::json;

json Error(absl::string_view message) {
  return {{"ok", false}, {"error", std::string(message)}};
}

// A refused request; `denied` tells hvswitchctl to exit as for a socket it may not use.
json Error(const absl::Status& status) {
  json answer = Error(status.message());
  if (absl::IsPermissionDenied(status)) answer["denied"] = true;
  return answer;
}

json Ok() { return {{"ok", true}}; }

// Names and paths are the operator's bytes: whatever is not UTF-8 is replaced, not thrown.
std::string Dump(const json& answer) {
  return answer.dump(-1, ' ', false, json::error_handler_t::replace);
}

// `--name VALUE` options after the positional words; anything else is an error.
struct Words {
  std::vector<std::string> positional;
  std::optional<std::string> port, vlan;
};

absl::StatusOr<Words> Split(const std::vector<std::string>& words, size_t from) {
  Words out;
  for (size_t i = from; i < words.size(); ++i) {
    if (words[i] == "--port" || words[i] == "--vlan") {
      if (i + 1 == words.size()) {
        return absl::InvalidArgumentError(absl::StrCat(words[i], " needs a value"));
      }
      std::optional<std::string>& option = words[i] == "--port" ? out.port : out.vlan;
      option = words[++i];
    } else if (absl::StartsWith(words[i], "--")) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option ", words[i]));
    } else {
      out.positional.push_back(words[i]);
    }
  }
  return out;
}

absl::StatusOr<uint16_t> ParseVlan(const std::optional<std::string>& text) {
  if (!text) return 0;
  uint32_t vlan = 0;
  if (!absl::SimpleAtoi(*text, &vlan) || vlan > 4094) {
    return absl::InvalidArgumentError(absl::StrCat("--vlan must be 0-4094, not '", *text, "'"));
  }
  return static_cast<uint16_t>(vlan);
}

absl::StatusOr<uint64_t> ParseMacKey(const std::string& text, uint16_t vlan) {
  std::optional<uint64_t> key = ParseUnicastMacKey(text, vlan);
  if (!key) return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a unicast MAC"));
  return *key;
}

absl::StatusOr<int> FindPort(const BridgeControl& bridge, const std::string& name) {
  int p = bridge.PortIndex(name);
  if (p < 0) return absl::NotFoundError(absl::StrCat("no port named '", name, "'"));
  return p;
}

// `port add` takes the --port grammar, written either as one word
// (`vm3,type=vhost-user,path=/run/vm3.sock`) or as words (`vm3 vhost-user path=/run/vm3.sock`).
absl::StatusOr<PortSpec> ParseAddedPort(const std::vector<std::string>& words) {
  if (words.size() == 2) return ParsePortSpec(words[1]);
  std::string text = absl::StrCat(words[1], ",type=", words[2]);
  for (size_t i = 3; i < words.size(); ++i) absl::StrAppend(&text, ",", words[i]);
  return ParsePortSpec(text);
}

constexpr absl::string_view kPortUsage =
    "port: list | show NAME | add NAME TYPE KEY=VALUE... | add SPEC | del NAME";

json PortCommand(BridgeControl& bridge, const Words& w, const ControlPolicy& policy,
                 ControlRole role) {
  if (w.positional.empty() || w.port || w.vlan) return Error(kPortUsage);
  const std::string& verb = w.positional[0];
  if (verb == "add" && w.positional.size() >= 2) {
    absl::StatusOr<PortSpec> spec = ParseAddedPort(w.positional);
    if (!spec.ok()) return Error(spec.status().message());
    absl::Status status = policy.MayManagePort(role, *spec);
    if (status.ok()) status = bridge.AddPort(*spec);
    if (!status.ok()) return Error(status);
    return {{"ok", true}, {"spec", spec->ToString()}};
  }
  if (verb == "del" && w.positional.size() == 2) {
    absl::Status status = absl::NotFoundError(absl::StrCat("no port named '", w.positional[1], "'"));
    for (const PortSpec& spec : bridge.PortSpecs()) {
      if (spec.name == w.positional[1]) status = policy.MayManagePort(role, spec);
    }
    if (status.ok()) status = bridge.RemovePort(w.positional[1]);
    return status.ok() ? Ok() : Error(status);
  }
  const BridgeSnapshot snap = bridge.Snapshot();
  if (verb == "list" && w.positional.size() == 1) {
    json ports = json::array();
    for (const PortSnapshot& port : snap.ports) ports.push_back(PortJson(port, false));
    return {{"ok", true}, {"ports", ports}};
  }
  if (verb == "show" && w.positional.size() == 2) {
    for (const PortSnapshot& port : snap.ports) {
      if (port.name == w.positional[1]) return {{"ok", true}, {"port", PortJson(port, true)}};
    }
    return Error(absl::StrCat("no port named '", w.positional[1], "'"));
  }
  return Error(kPortUsage);
}

json FdbCommand(BridgeControl& bridge, const Words& w) {
  if (w.positional.empty()) return Error("fdb: show, flush, add or del");
  const std::string& verb = w.positional[0];
  std::optional<int> port;
  if (w.port) {
    absl::StatusOr<int> p = FindPort(bridge, *w.port);
    if (!p.ok()) return Error(p.status().message());
    port = *p;
  }
  absl::StatusOr<uint16_t> vlan = ParseVlan(w.vlan);
  if (!vlan.ok()) return Error(vlan.status().message());
  if (verb == "show" && w.positional.size() == 1) {
    const uint32_t now = bridge.now();
    json entries = json::array();
    for (const FdbEntryView& e : bridge.FdbEntries()) {
      if ((port && e.port != *port) || (w.vlan && KeyVlan(e.key) != *vlan)) continue;
      json row = {{"mac", KeyMacString(e.key)},
                  {"vlan", KeyVlan(e.key)},
                  {"port", bridge.PortName(e.port)},
                  {"static", e.is_static}};
      if (!e.is_static) row["age"] = now - e.last_seen;
      entries.push_back(row);
    }
    return {{"ok", true}, {"entries", entries}};
  }
  if (verb == "flush" && w.positional.size() == 1 && !w.vlan) {
    bridge.FlushFdb(port.value_or(-1));
    return Ok();
  }
  if (verb == "add" && w.positional.size() == 3 && !w.port) {
    absl::StatusOr<uint64_t> key = ParseMacKey(w.positional[2], *vlan);
    if (!key.ok()) return Error(key.status().message());
    absl::Status status = bridge.AddStaticMac({w.positional[1], *key});
    return status.ok() ? Ok() : Error(status.message());
  }
  if (verb == "del" && w.positional.size() == 2 && !w.port) {
    absl::StatusOr<uint64_t> key = ParseMacKey(w.positional[1], *vlan);
    if (!key.ok()) return Error(key.status().message());
    absl::Status status = bridge.RemoveMac(*key);
    if (absl::IsNotFound(status)) {
      return Error(absl::StrCat("no entry for ", w.positional[1], " in VLAN ", *vlan));
    }
    return status.ok() ? Ok() : Error(status.message());
  }
  return Error(
      "fdb: show [--port P] [--vlan V] | flush [--port P] | add PORT MAC [--vlan V] | "
      "del MAC [--vlan V]");
}

json StatsCommand(const BridgeControl& bridge, const Words& w) {
  if (w.positional.size() > 1) return Error("stats [PORT]");
  const BridgeSnapshot snap = bridge.Snapshot();
  json ports = json::array();
  for (const PortSnapshot& port : snap.ports) {
    if (!w.positional.empty() && port.name != w.positional[0]) continue;
    ports.push_back(PortJson(port, true));
  }
  if (!w.positional.empty() && ports.empty()) {
    return Error(absl::StrCat("no port named '", w.positional[0], "'"));
  }
  return {{"ok", true}, {"ports", ports}, {"fdb", FdbStatsJson(snap)}};
}

// The daemon's side of hvswitchctl capture: `capture start PORT COUNT rx|tx|both
// [SECONDS]` (default 60) with the file's descriptor keeps the connection: the capture answers on it when it
// starts and when it ends, and ends when the client writes "stop" or goes away.
// `capture status` and `capture stop` come on connections of their own.
ControlAnswer CaptureCommand(BridgeControl& bridge, const Words& w,
                             const ControlRequest& request) {
  const std::vector<std::string>& words = w.positional;
  int file = request.file;
  if (!words.empty() && words[0] == "start" && (words.size() == 4 || words.size() == 5) &&
      !w.port && !w.vlan) {
    uint64_t count = 0;
    double seconds = 60;
    absl::StatusOr<int> port = FindPort(bridge, words[1]);
    const std::string& direction = words[3];
    absl::Status status;
    if (file < 0) {
      status = absl::InvalidArgumentError("capture start needs the file's descriptor");
    } else if (!port.ok()) {
      status = port.status();
    } else if (!absl::SimpleAtoi(words[2], &count) || count == 0) {
      status = absl::InvalidArgumentError("--count must be a positive number");
    } else if (direction != "rx" && direction != "tx" && direction != "both") {
      status = absl::InvalidArgumentError("--direction must be rx, tx or both");
    } else if (words.size() == 5 &&
               (!absl::SimpleAtod(words[4], &seconds) || !(seconds > 0 && seconds <= 86400))) {
      status = absl::InvalidArgumentError("--timeout must be 0 to 86400 seconds");
    } else {
      CaptureRequest capture;
      capture.port = static_cast<uint16_t>(*port);
      capture.rx = direction != "tx";
      capture.tx = direction != "rx";
      capture.count = count;
      capture.timeout = absl::Seconds(seconds);
      capture.file = file;
      capture.client = request.connection;
      file = -1;  // taken
      status = bridge.StartCapture(capture);
      // The capture answered on the connection itself (when there is one).
      if (status.ok() && request.connection >= 0) return {{}, true};
      if (status.ok()) return {Dump({{"ok", true}, {"active", true}}), false};
    }
    if (file >= 0) close(file);
    return {Dump(Error(status)), false};
  }
  if (file >= 0) close(file);
  if (words.size() == 1 && (words[0] == "status" || words[0] == "stop") && !w.port && !w.vlan) {
    const CaptureStatus status = words[0] == "stop" ? bridge.StopCapture() : bridge.CaptureState();
    return {Dump({{"ok", true}, {"active", status.active}, {"captured", status.captured}}), false};
  }
  return {Dump(Error("capture: start PORT COUNT rx|tx|both [SECONDS] (with a file) | status | stop")),
          false};
}

// Per worker core: what ovs-appctl dpif-netdev/pmd-perf-show tells (busy share, cycles
// per frame, burst sizes).
json PmdCommand(const BridgeControl& bridge, const Words& w) {
  if (!w.positional.empty() || w.port || w.vlan) return Error("pmd (no arguments)");
  const BridgeSnapshot snap = bridge.Snapshot();
  json cores = json::array();
  for (const CoreSnapshot& core : snap.cores) {
    const uint64_t busy = core[CoreCounter::kBusyCycles], packets = core[CoreCounter::kPackets];
    const uint64_t cycles = busy + core[CoreCounter::kIdleCycles];
    uint64_t calls = 0;
    json bursts = json::array();  // receive calls by frames returned: up to size_le
    for (size_t b = 0; b < kBurstBuckets.size(); ++b) {
      bursts.push_back({{"size_le", kBurstBuckets[b]}, {"count", core.rx_bursts[b]}});
      calls += core.rx_bursts[b];
    }
    cores.push_back(
        {{"core", core.cpu},
         {"busy_cycles", busy},
         {"idle_cycles", core[CoreCounter::kIdleCycles]},
         {"busy_percent", cycles == 0 ? 0.0 : 100.0 * busy / cycles},
         {"packets", packets},
         {"cycles_per_packet", packets == 0 ? 0.0 : static_cast<double>(busy) / packets},
         {"mean_burst", calls == 0 ? 0.0 : static_cast<double>(packets) / calls},
         {"bursts", bursts}});
  }
  return {{"ok", true}, {"cores", cores}};
}

// The daemon's options with its current ports (added and removed at run time included)
// and the FDB's current static entries: `hvswitch --config=FILE` brings the same switch
// back.
std::string CurrentConfig(const BridgeControl& bridge, const DaemonOptions& options) {
  DaemonOptions current = options;
  current.ports = bridge.PortSpecs();
  current.static_macs.clear();
  for (const FdbEntryView& e : bridge.FdbEntries()) {
    if (e.is_static) current.static_macs.push_back({bridge.PortName(e.port), e.key});
  }
  return ConfigText(current);
}

// The daemon's own configuration file: --save_config's, else RUNTIME_DIR/hvswitch.conf.
std::string OwnConfigPath(const DaemonOptions& options) {
  return !options.save_config.empty() ? options.save_config
                                      : absl::StrCat(options.runtime_dir, "/hvswitch.conf");
}

// `config show`: the text (hvswitchctl config save FILE writes it with its caller's
// rights); `config save`: the daemon's own file; `config save FILE`: FILE, for root.
json ConfigCommand(const BridgeControl& bridge, const DaemonOptions& options, const Words& w,
                   const ControlPolicy& policy, ControlRole role) {
  if (w.port || w.vlan || w.positional.empty()) return Error("config show | config save [FILE]");
  const std::string& verb = w.positional[0];
  if (verb == "show" && w.positional.size() == 1) {
    return {{"ok", true}, {"config", CurrentConfig(bridge, options)}};
  }
  if (verb != "save" || w.positional.size() > 2) return Error("config show | config save [FILE]");
  const bool named = w.positional.size() == 2;
  if (named) {
    absl::Status allowed = policy.MayWriteFile(role);
    if (!allowed.ok()) return Error(allowed);
  }
  const std::string path = named ? w.positional[1] : OwnConfigPath(options);
  absl::Status status = WriteFileAtomically(path, CurrentConfig(bridge, options));
  if (!status.ok()) return Error(status.message());
  return {{"ok", true}, {"path", path}};
}

// Port and static MAC changes persist at once under --save_config.
bool ChangesConfig(const std::vector<std::string>& words) {
  return words.size() >= 2 && (words[0] == "port" || words[0] == "fdb") &&
         (words[1] == "add" || words[1] == "del");
}

}  // namespace

ControlAnswer ExecuteControlCommand(BridgeControl& bridge, const DaemonOptions& options,
                                    const ControlRequest& request) {
  const ControlPolicy policy{options.runtime_dir, options.ctl_socket};
  const ControlRole role = RoleOf(request.peer);
  int file = request.file;
  // Nothing a client sends may stop the daemon: whatever throws (an allocation, a bug)
  // becomes an error answer.
  try {
    std::vector<std::string> words = absl::StrSplit(request.line, ' ', absl::SkipWhitespace());
    absl::StatusOr<Words> w = Split(words, 1);
    if (words.empty() || !w.ok() || words[0] != "capture") {
      if (file >= 0) close(file);  // only a capture takes a file
      file = -1;
    }
    json answer;
    if (words.empty()) {
      answer = Error("empty request");
    } else if (!w.ok()) {
      answer = Error(w.status().message());
    } else if (words[0] == "capture") {
      ControlRequest with_file = request;
      with_file.file = file;
      file = -1;  // CaptureCommand's now
      return CaptureCommand(bridge, *w, with_file);
    } else if (words[0] == "port") {
      answer = PortCommand(bridge, *w, policy, role);
    } else if (words[0] == "fdb") {
      answer = FdbCommand(bridge, *w);
    } else if (words[0] == "stats") {
      answer = StatsCommand(bridge, *w);
    } else if (words[0] == "pmd") {
      answer = PmdCommand(bridge, *w);
    } else if (words[0] == "config") {
      answer = ConfigCommand(bridge, options, *w, policy, role);
    } else {
      answer = Error(absl::StrCat("unknown command '", words[0], "': ", kControlCommandsHelp));
    }
    if (answer.value("ok", false) && ChangesConfig(words) && !options.save_config.empty()) {
      absl::Status saved = WriteFileAtomically(options.save_config, CurrentConfig(bridge, options));
      if (!saved.ok()) answer["warning"] = absl::StrCat("done, but not saved: ", saved.message());
    }
    return {Dump(answer), false};
  } catch (...) {
    if (file >= 0) close(file);
    return {Dump(Error("internal error")), false};
  }
}

}  // namespace hvswitch
