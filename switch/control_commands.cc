#include "switch/control_commands.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "switch/bridge.h"
#include "switch/mac_key.h"
#include "switch/options.h"

namespace hvswitch {
namespace {

using nlohmann::json;

json Error(absl::string_view message) {
  return {{"ok", false}, {"error", std::string(message)}};
}

json Ok() { return {{"ok", true}}; }

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

absl::StatusOr<int> FindPort(const Bridge& bridge, const std::string& name) {
  int p = bridge.PortIndex(name);
  if (p < 0) return absl::NotFoundError(absl::StrCat("no port named '", name, "'"));
  return p;
}

json PortJson(const PortSnapshot& port, bool detail) {
  json j = {{"name", port.name},       {"type", port.type},
            {"up", port.up},           {"mac", port.mac},
            {"mtu", port.mtu},         {"rx_packets", port.totals.rx_packets},
            {"tx_packets", port.totals.tx_packets},
            {"fdb_learned", port.fdb_learned}};
  if (!detail) return j;
  j["spec"] = port.spec;
  j["rx_bytes"] = port.totals.rx_bytes;
  j["tx_bytes"] = port.totals.tx_bytes;
  j["tx_bursts"] = port.totals.tx_bursts;
  j["learn_limited"] = port.totals.learn_limited;
  if (port.quota != 0) {
    j["buffer_quota"] = port.quota;
    j["buffers_in_use"] = port.buffers_in_use;
  }
  json rx_drops = {{"no_mbuf", port.rx_no_mbuf}}, tx_drops = json::object();
  for (size_t r = 0; r < kRxDropNames.size(); ++r) {
    rx_drops[std::string(kRxDropNames[r])] = port.totals.rx_drops[r];
  }
  for (size_t r = 0; r < kTxDropNames.size(); ++r) {
    tx_drops[std::string(kTxDropNames[r])] = port.totals.tx_drops[r];
  }
  j["rx_drops"] = rx_drops;
  j["tx_drops"] = tx_drops;
  j["offload"] = {{"csum_hw", port.totals.csum_hw}, {"csum_sw", port.totals.csum_sw},
                  {"tso_hw", port.totals.tso_hw},   {"tso_sw", port.totals.tso_sw}};
  return j;
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

json PortCommand(Bridge& bridge, const Words& w) {
  if (w.positional.empty() || w.port || w.vlan) return Error(kPortUsage);
  const std::string& verb = w.positional[0];
  if (verb == "add" && w.positional.size() >= 2) {
    absl::StatusOr<PortSpec> spec = ParseAddedPort(w.positional);
    if (!spec.ok()) return Error(spec.status().message());
    absl::Status status = bridge.AddPort(*spec);
    if (!status.ok()) return Error(status.message());
    return {{"ok", true}, {"spec", spec->ToString()}};
  }
  if (verb == "del" && w.positional.size() == 2) {
    absl::Status status = bridge.RemovePort(w.positional[1]);
    return status.ok() ? Ok() : Error(status.message());
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

json FdbCommand(Bridge& bridge, const Words& w) {
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
                  {"port", bridge.port(e.port).spec().name},
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

json StatsCommand(Bridge& bridge, const Words& w) {
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
  json fdb = {{"entries", snap.fdb_entries}, {"static", snap.fdb_static},
              {"learned_total", snap.fdb_learned}, {"moves_total", snap.fdb_moves},
              {"aged_total", snap.fdb_aged}, {"flushed_total", snap.fdb_flushed}};
  return {{"ok", true}, {"ports", ports}, {"fdb", fdb}};
}

// The daemon's side of hvswitchctl capture: `capture start PORT COUNT rx|tx|both` with the
// file's descriptor, then `capture status` until it is no longer active, or
// `capture stop`.
json CaptureCommand(Bridge& bridge, const Words& w, int fd) {
  PacketCapture& capture = bridge.capture();
  const std::vector<std::string>& words = w.positional;
  if (!words.empty() && words[0] == "start" && words.size() == 4) {
    uint64_t count = 0;
    absl::StatusOr<int> port = FindPort(bridge, words[1]);
    const std::string& direction = words[3];
    absl::Status status;
    if (fd < 0) {
      status = absl::InvalidArgumentError("capture start needs the file's descriptor");
    } else if (!port.ok()) {
      status = port.status();
    } else if (!absl::SimpleAtoi(words[2], &count) || count == 0) {
      status = absl::InvalidArgumentError("--count must be a positive number");
    } else if (direction != "rx" && direction != "tx" && direction != "both") {
      status = absl::InvalidArgumentError("--direction must be rx, tx or both");
    } else {
      status = capture.Start(static_cast<uint16_t>(*port), direction != "tx",
                             direction != "rx", count, fd);
      fd = -1;  // taken
    }
    if (fd >= 0) close(fd);
    return status.ok() ? Ok() : Error(status.message());
  }
  if (fd >= 0) close(fd);
  if (!words.empty() && words.size() == 1 && (words[0] == "status" || words[0] == "stop")) {
    if (words[0] == "stop") capture.Stop();
    return {{"ok", true}, {"active", capture.active()}, {"captured", capture.captured()}};
  }
  return Error("capture: start PORT COUNT rx|tx|both (with a file) | status | stop");
}

// Per worker core: what ovs-appctl dpif-netdev/pmd-perf-show tells (busy share, cycles
// per frame, burst sizes).
json PmdCommand(const Bridge& bridge, const Words& w) {
  if (!w.positional.empty() || w.port || w.vlan) return Error("pmd (no arguments)");
  const BridgeSnapshot snap = bridge.Snapshot();
  json cores = json::array();
  for (const CoreSnapshot& core : snap.cores) {
    const uint64_t cycles = core.busy_cycles + core.idle_cycles;
    uint64_t calls = 0;
    json bursts = json::array();  // receive calls by frames returned: up to size_le
    for (size_t b = 0; b < kBurstBuckets.size(); ++b) {
      bursts.push_back({{"size_le", kBurstBuckets[b]}, {"count", core.rx_bursts[b]}});
      calls += core.rx_bursts[b];
    }
    cores.push_back(
        {{"core", core.cpu},
         {"busy_cycles", core.busy_cycles},
         {"idle_cycles", core.idle_cycles},
         {"busy_percent", cycles == 0 ? 0.0 : 100.0 * core.busy_cycles / cycles},
         {"packets", core.rx_packets},
         {"cycles_per_packet",
          core.rx_packets == 0 ? 0.0 : static_cast<double>(core.busy_cycles) / core.rx_packets},
         {"mean_burst", calls == 0 ? 0.0 : static_cast<double>(core.rx_packets) / calls},
         {"bursts", bursts}});
  }
  return {{"ok", true}, {"cores", cores}};
}

// Writes the daemon's options with its current ports (added and removed at run time
// included) and the FDB's current static entries to `path`, replacing it whole:
// `hvswitch --config=FILE` brings the same switch back.
absl::Status SaveConfig(const Bridge& bridge, const DaemonOptions& options,
                        const std::string& path) {
  DaemonOptions current = options;
  current.ports = bridge.PortSpecs();
  current.static_macs.clear();
  for (const FdbEntryView& e : bridge.FdbEntries()) {
    if (e.is_static) current.static_macs.push_back({bridge.port(e.port).spec().name, e.key});
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << ConfigText(current);
    if (!out.flush()) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

// `config save [FILE]`: to FILE, else --save_config's file, else RUNTIME_DIR/hvswitch.conf.
json ConfigCommand(const Bridge& bridge, const DaemonOptions& options, const Words& w) {
  if (w.positional.empty() || w.positional[0] != "save" || w.positional.size() > 2 || w.port ||
      w.vlan) {
    return Error("config save [FILE]");
  }
  const std::string path = w.positional.size() == 2  ? w.positional[1]
                           : !options.save_config.empty() ? options.save_config
                           : absl::StrCat(options.runtime_dir, "/hvswitch.conf");
  absl::Status status = SaveConfig(bridge, options, path);
  if (!status.ok()) return Error(status.message());
  return {{"ok", true}, {"path", path}};
}

// Port and static MAC changes persist at once under --save_config.
bool ChangesConfig(const std::vector<std::string>& words) {
  return words.size() >= 2 && (words[0] == "port" || words[0] == "fdb") &&
         (words[1] == "add" || words[1] == "del");
}

}  // namespace

std::string ExecuteControlCommand(Bridge& bridge, const DaemonOptions& options,
                                  absl::string_view line, int fd) {
  std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
  absl::StatusOr<Words> w = Split(words, 1);
  if (words.empty() || !w.ok() || words[0] != "capture") {
    if (fd >= 0) close(fd);  // only a capture takes a file
    fd = -1;
  }
  if (words.empty()) return Error("empty request").dump();
  if (!w.ok()) return Error(w.status().message()).dump();
  json answer;
  if (words[0] == "capture") {
    answer = CaptureCommand(bridge, *w, fd);
  } else if (words[0] == "port") {
    answer = PortCommand(bridge, *w);
  } else if (words[0] == "fdb") {
    answer = FdbCommand(bridge, *w);
  } else if (words[0] == "stats") {
    answer = StatsCommand(bridge, *w);
  } else if (words[0] == "pmd") {
    answer = PmdCommand(bridge, *w);
  } else if (words[0] == "config") {
    answer = ConfigCommand(bridge, options, *w);
  } else {
    answer = Error(absl::StrCat("unknown command '", words[0], "': ", kControlCommandsHelp));
  }
  if (answer.value("ok", false) && ChangesConfig(words) && !options.save_config.empty()) {
    absl::Status saved = SaveConfig(bridge, options, options.save_config);
    if (!saved.ok()) answer["warning"] = absl::StrCat("done, but not saved: ", saved.message());
  }
  return answer.dump();
}

}  // namespace hvswitch
