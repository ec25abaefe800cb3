#include "switch/control/command_handlers.h"

#include <array>
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
#include "switch/control/control_policy.h"
#include "switch/control/options.h"
#include "switch/control/port_json.h"
#include "switch/control/vxlan_json.h"
#include "ports/vxlan/vxlan_driver.h"
#include "switch/datapath/mac_key.h"
#include "switch/protocol/atomic_file.h"
#include "switch/protocol/commands.h"

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

// What a handler gets: the bridge, who asks, and the request's descriptor (-1 once taken).
struct CommandContext {
  BridgeControl& bridge;
  const DaemonOptions& options;
  const ControlPolicy& policy;
  ControlRole role;
  const ControlRequest& request;
  int& file;
  bool connection_taken = false;  // the handler answers on the connection itself
};

using Handler = json (*)(CommandContext&, const Parsed&);

// --- port ------------------------------------------------------------------------------

json PortList(CommandContext& ctx, const Parsed&) {
  const BridgeSnapshot snap = ctx.bridge.Snapshot();
  json ports = json::array();
  for (const PortSnapshot& port : snap.ports) ports.push_back(PortJson(port, false));
  return {{"ok", true}, {"ports", ports}};
}

json PortShow(CommandContext& ctx, const Parsed& p) {
  const BridgeSnapshot snap = ctx.bridge.Snapshot();
  for (const PortSnapshot& port : snap.ports) {
    if (port.name == p.args[0]) return {{"ok", true}, {"port", PortJson(port, true)}};
  }
  return Error(absl::StrCat("no port named '", p.args[0], "'"));
}

json AddPort(CommandContext& ctx, const absl::StatusOr<PortSpec>& spec) {
  if (!spec.ok()) return Error(spec.status().message());
  absl::Status status = ctx.policy.MayManagePort(ctx.role, *spec);
  if (status.ok()) status = ctx.bridge.AddPort(*spec);
  if (!status.ok()) return Error(status);
  return {{"ok", true}, {"spec", spec->ToString()}};
}

// `port add vm3 vhost-user path=/run/vm3.sock`: the --port grammar as words.
json PortAdd(CommandContext& ctx, const Parsed& p) {
  std::string text = absl::StrCat(p.args[0], ",type=", p.args[1]);
  for (size_t i = 2; i < p.args.size(); ++i) absl::StrAppend(&text, ",", p.args[i]);
  return AddPort(ctx, ParsePortSpec(text));
}

// `port add vm3,type=vhost-user,path=/run/vm3.sock`: one --port word.
json PortAddSpec(CommandContext& ctx, const Parsed& p) {
  return AddPort(ctx, ParsePortSpec(p.args[0]));
}

json PortDel(CommandContext& ctx, const Parsed& p) {
  const std::string& name = p.args[0];
  absl::Status status = absl::NotFoundError(absl::StrCat("no port named '", name, "'"));
  for (const PortSpec& spec : ctx.bridge.PortSpecs()) {
    if (spec.name == name) status = ctx.policy.MayManagePort(ctx.role, spec);
  }
  if (status.ok()) status = ctx.bridge.RemovePort(name);
  return status.ok() ? Ok() : Error(status);
}

// A shut port is the network's business, not the host's: group members may end it.
json PortEnable(CommandContext& ctx, const Parsed& p) {
  absl::Status status = ctx.bridge.EnablePort(p.args[0]);
  return status.ok() ? Ok() : Error(status);
}

// --- fdb -------------------------------------------------------------------------------

struct FdbFilter {
  std::optional<int> port;
  uint16_t vlan = 0;
};

// --port and --vlan, checked in this order.
absl::StatusOr<FdbFilter> ResolveFdbOptions(const BridgeControl& bridge,
                                            const std::optional<std::string>& port,
                                            const std::optional<std::string>& vlan) {
  FdbFilter filter;
  if (port) {
    absl::StatusOr<int> p = FindPort(bridge, *port);
    if (!p.ok()) return p.status();
    filter.port = *p;
  }
  absl::StatusOr<uint16_t> v = ParseVlan(vlan);
  if (!v.ok()) return v.status();
  filter.vlan = *v;
  return filter;
}

json FdbShow(CommandContext& ctx, const Parsed& p) {
  absl::StatusOr<FdbFilter> filter = ResolveFdbOptions(ctx.bridge, p.port, p.vlan);
  if (!filter.ok()) return Error(filter.status().message());
  const uint32_t now = ctx.bridge.now();
  json entries = json::array();
  for (const FdbEntryView& e : ctx.bridge.FdbEntries()) {
    if ((filter->port && e.port != *filter->port) || (p.vlan && KeyVlan(e.key) != filter->vlan)) {
      continue;
    }
    json row = {{"mac", KeyMacString(e.key)},
                {"vlan", KeyVlan(e.key)},
                {"port", ctx.bridge.PortName(e.port)},
                {"static", e.is_static}};
    if (!e.is_static) row["age"] = now - e.last_seen;
    entries.push_back(row);
  }
  return {{"ok", true}, {"entries", entries}};
}

json FdbFlush(CommandContext& ctx, const Parsed& p) {
  absl::StatusOr<FdbFilter> filter = ResolveFdbOptions(ctx.bridge, p.port, p.vlan);
  if (!filter.ok()) return Error(filter.status().message());
  ctx.bridge.FlushFdb(filter->port.value_or(-1));
  return Ok();
}

json FdbAdd(CommandContext& ctx, const Parsed& p) {
  absl::StatusOr<FdbFilter> filter = ResolveFdbOptions(ctx.bridge, p.port, p.vlan);
  if (!filter.ok()) return Error(filter.status().message());
  absl::StatusOr<uint64_t> key = ParseMacKey(p.args[1], filter->vlan);
  if (!key.ok()) return Error(key.status().message());
  absl::Status status = ctx.bridge.AddStaticMac({p.args[0], *key});
  return status.ok() ? Ok() : Error(status.message());
}

json FdbDel(CommandContext& ctx, const Parsed& p) {
  absl::StatusOr<FdbFilter> filter = ResolveFdbOptions(ctx.bridge, p.port, p.vlan);
  if (!filter.ok()) return Error(filter.status().message());
  absl::StatusOr<uint64_t> key = ParseMacKey(p.args[0], filter->vlan);
  if (!key.ok()) return Error(key.status().message());
  absl::Status status = ctx.bridge.RemoveMac(*key);
  if (absl::IsNotFound(status)) {
    return Error(absl::StrCat("no entry for ", p.args[0], " in VLAN ", filter->vlan));
  }
  return status.ok() ? Ok() : Error(status.message());
}

// --- stats, pmd ------------------------------------------------------------------------

json Stats(CommandContext& ctx, const Parsed& p) {
  const BridgeSnapshot snap = ctx.bridge.Snapshot();
  json ports = json::array();
  for (const PortSnapshot& port : snap.ports) {
    if (!p.args.empty() && port.name != p.args[0]) continue;
    ports.push_back(PortJson(port, true));
  }
  if (!p.args.empty() && ports.empty()) {
    return Error(absl::StrCat("no port named '", p.args[0], "'"));
  }
  return {{"ok", true}, {"ports", ports}, {"fdb", FdbStatsJson(snap)}};
}

// --- vxlan -----------------------------------------------------------------------------

json VxlanShow(CommandContext& ctx, const Parsed&) {
  json answer = VxlanJson(ctx.bridge.Snapshot().vxlan);
  answer["ok"] = true;
  return answer;
}

// `vxlan add 100,vlan=10,uplink=u,local=10.0.0.1`: the port vxlan100.
json VxlanAdd(CommandContext& ctx, const Parsed& p) {
  return AddPort(ctx, ParseVxlanSpec(p.args[0]));
}

// `vxlan del 100`: the tunnel port of VNI 100, whatever its name.
json VxlanDel(CommandContext& ctx, const Parsed& p) {
  uint32_t vni = 0;
  if (!absl::SimpleAtoi(p.args[0], &vni)) return Error(absl::StrCat("'", p.args[0], "' is not a VNI"));
  for (const VxlanSnapshot& t : ctx.bridge.Snapshot().vxlan.tunnels) {
    if (t.vni != vni) continue;
    Parsed del = p;
    del.args = {t.port};
    return PortDel(ctx, del);
  }
  return Error(absl::StrCat("no VXLAN tunnel of VNI ", vni));
}

// --- bond ------------------------------------------------------------------------------

json BondShow(CommandContext& ctx, const Parsed&) {
  json bonds = json::array();
  for (const PortSnapshot& port : ctx.bridge.Snapshot().ports) {
    if (!port.bond) continue;
    json row = BondJson(*port.bond);
    row["port"] = port.name;
    row["up"] = port.up;
    bonds.push_back(row);
  }
  return {{"ok", true}, {"bonds", bonds}};
}

// --- mirror ----------------------------------------------------------------------------

// Each session with what it copied, and what its analyser dropped of it (the analyser
// takes nothing else, so its transmit drops are the copies it could not send).
json MirrorShow(CommandContext& ctx, const Parsed&) {
  const BridgeSnapshot snap = ctx.bridge.Snapshot();
  json mirrors = json::array();
  for (const MirrorSnapshot& m : snap.mirrors) {
    json dropped = json::object();
    for (const PortSnapshot& port : snap.ports) {
      if (port.name != m.spec.to) continue;
      for (size_t r = 0; r < kTxDrops; ++r) {
        dropped[std::string(kTxDropInfo[r].key)] = port.totals.tx_drops[r];
      }
    }
    json row = {{"name", m.spec.name},
                {"from", m.spec.from},
                {"direction", std::string(m.spec.direction())},
                {"to", m.spec.to},
                {"spec", m.spec.ToString()},
                {"rx_copies", m.counts.rx},
                {"tx_copies", m.counts.tx},
                {"copy_failures", m.counts.failed},
                {"analyser_drops", dropped}};
    if (m.spec.vlan != 0) row["vlan"] = m.spec.vlan;
    mirrors.push_back(row);
  }
  return {{"ok", true}, {"mirrors", mirrors}};
}

// An analyser leaves its VLANs and sends nothing but copies: making a port one (or back)
// is managing it, allowed as adding or removing it would be.
absl::Status MayManageAnalyser(CommandContext& ctx, const std::string& to) {
  for (const PortSpec& spec : ctx.bridge.PortSpecs()) {
    if (spec.name == to) return ctx.policy.MayManagePort(ctx.role, spec);
  }
  return absl::OkStatus();  // no such port: AddMirror says so
}

json MirrorAdd(CommandContext& ctx, const Parsed& p) {
  if (!p.from || !p.to) return Error("mirror add needs --from PORT[,PORT...] and --to PORT");
  const absl::StatusOr<MirrorSpec> spec =
      MirrorSpecFromWords(p.args[0], *p.from, *p.to, p.direction, p.vlan);
  if (!spec.ok()) return Error(spec.status().message());
  absl::Status status = MayManageAnalyser(ctx, spec->to);
  if (status.ok()) status = ctx.bridge.AddMirror(*spec);
  return status.ok() ? Ok() : Error(status);
}

json MirrorDel(CommandContext& ctx, const Parsed& p) {
  absl::Status status = absl::OkStatus();
  for (const MirrorSpec& spec : ctx.bridge.MirrorSpecs()) {
    if (spec.name == p.args[0]) status = MayManageAnalyser(ctx, spec.to);
  }
  if (status.ok()) status = ctx.bridge.RemoveMirror(p.args[0]);
  return status.ok() ? Ok() : Error(status);
}

// --- mcast -----------------------------------------------------------------------------

// Snooped groups with their member ports and how long each membership lasts without a new
// report; router ports (queriers seen, and mrouter=1); messages read.
json McastShow(CommandContext& ctx, const Parsed& p) {
  absl::StatusOr<uint16_t> vlan = ParseVlan(p.vlan);
  if (!vlan.ok()) return Error(vlan.status().message());
  const BridgeSnapshot snap = ctx.bridge.Snapshot();
  const McastSnapshot& m = snap.mcast;
  auto name = [&](uint16_t port) {
    for (const PortSnapshot& ps : snap.ports) {
      if (ps.index == port) return ps.name;
    }
    return std::string();  // gone since (not in this snapshot's ports)
  };
  json groups = json::array(), routers = json::array();
  for (const McastSnapshot::Group& g : m.groups) {
    if (p.vlan && g.vlan != *vlan) continue;
    json members = json::array();
    for (const McastSnapshot::Member& member : g.members) {
      members.push_back({{"port", name(member.port)}, {"expires", member.expires_in}});
    }
    groups.push_back({{"vlan", g.vlan},
                      {"group", McastGroupString(g.group)},
                      {"mac", KeyMacString(GroupMac(g.group))},
                      {"members", members}});
  }
  for (const McastSnapshot::Router& r : m.routers) {
    if (p.vlan && r.vlan != *vlan) continue;
    routers.push_back({{"vlan", r.vlan}, {"port", name(r.port)}, {"expires", r.expires_in}});
  }
  json static_routers = json::array();
  for (const PortSnapshot& ps : snap.ports) {
    if ((m.static_routers >> ps.index) & 1) static_routers.push_back(ps.name);
  }
  return {{"ok", true},
          {"enabled", m.enabled},
          {"groups", groups},
          {"routers", routers},
          {"static_routers", static_routers},
          {"messages", {{"queries", m.queries}, {"reports", m.reports}, {"invalid", m.invalid}}},
          {"refused",
           {{"table_full", m.table_full},
            {"port_limit", m.port_limit},
            {"guest_querier", m.guest_querier}}}};
}

// Per worker core: what ovs-appctl dpif-netdev/pmd-perf-show tells (busy share, cycles
// per frame, burst sizes).
json Pmd(CommandContext& ctx, const Parsed&) {
  const BridgeSnapshot snap = ctx.bridge.Snapshot();
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
         // The whole loop's, idle polls included: what the core costs per frame.
         {"loop_cycles_per_packet", packets == 0 ? 0.0 : static_cast<double>(cycles) / packets},
         {"mean_burst", calls == 0 ? 0.0 : static_cast<double>(packets) / calls},
         {"bursts", bursts},
         {"idle_mode", IdleModeName(core.mode)},
         {"max_sleep_us", core.max_sleep_ns / 1e3},
         {"sleep_percent",
          cycles == 0 ? 0.0 : 100.0 * core[CoreCounter::kSleepCycles] / cycles},
         {"wakeups", core[CoreCounter::kWakeupsTimer] + core[CoreCounter::kWakeupsInterrupt] +
                         core[CoreCounter::kWakeupsControl]},
         {"wakeups_by_cause",
          {{"timer", core[CoreCounter::kWakeupsTimer]},
           {"interrupt", core[CoreCounter::kWakeupsInterrupt]},
           {"control", core[CoreCounter::kWakeupsControl]}}}});
  }
  return {{"ok", true}, {"cores", cores}};
}

// --- capture ---------------------------------------------------------------------------

// The daemon's side of hvswitchctl capture: `capture start PORT COUNT rx|tx|both
// [SECONDS]` (default 60) with the file's descriptor keeps the connection: the capture
// answers on it when it starts and when it ends, and ends when the client writes "stop"
// or goes away. `capture status` and `capture stop` come on connections of their own.
json CaptureStart(CommandContext& ctx, const Parsed& p) {
  uint64_t count = 0;
  double seconds = 60;
  absl::StatusOr<int> port = FindPort(ctx.bridge, p.args[0]);
  const std::string& direction = p.args[2];
  absl::Status status;
  if (ctx.file < 0) {
    status = absl::InvalidArgumentError("capture start needs the file's descriptor");
  } else if (!port.ok()) {
    status = port.status();
  } else if (!absl::SimpleAtoi(p.args[1], &count) || count == 0) {
    status = absl::InvalidArgumentError("--count must be a positive number");
  } else if (direction != "rx" && direction != "tx" && direction != "both") {
    status = absl::InvalidArgumentError("--direction must be rx, tx or both");
  } else if (p.args.size() == 4 &&
             (!absl::SimpleAtod(p.args[3], &seconds) || !(seconds > 0 && seconds <= 86400))) {
    status = absl::InvalidArgumentError("--timeout must be 0 to 86400 seconds");
  } else {
    CaptureRequest capture;
    capture.port = static_cast<uint16_t>(*port);
    capture.rx = direction != "tx";
    capture.tx = direction != "rx";
    capture.count = count;
    capture.timeout = absl::Seconds(seconds);
    capture.file = ctx.file;
    capture.client = ctx.request.connection;
    ctx.file = -1;  // taken
    status = ctx.bridge.StartCapture(capture);
    // The capture answered on the connection itself (when there is one).
    if (status.ok() && ctx.request.connection >= 0) ctx.connection_taken = true;
    if (status.ok()) return {{"ok", true}, {"active", true}};
  }
  return Error(status);
}

json CaptureStateAnswer(const CaptureStatus& status) {
  return {{"ok", true}, {"active", status.active}, {"captured", status.captured}};
}

json CaptureStatusCommand(CommandContext& ctx, const Parsed&) {
  return CaptureStateAnswer(ctx.bridge.CaptureState());
}

json CaptureStop(CommandContext& ctx, const Parsed&) {
  return CaptureStateAnswer(ctx.bridge.StopCapture());
}

// --- config ----------------------------------------------------------------------------

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
  current.mirrors = bridge.MirrorSpecs();
  return ConfigText(current);
}

// The daemon's own configuration file: --save_config's, else RUNTIME_DIR/hvswitch.conf.
std::string OwnConfigPath(const DaemonOptions& options) {
  return !options.save_config.empty() ? options.save_config
                                      : absl::StrCat(options.runtime_dir, "/hvswitch.conf");
}

// The text (hvswitchctl config save FILE writes it with its caller's rights).
json ConfigShow(CommandContext& ctx, const Parsed&) {
  return {{"ok", true}, {"config", CurrentConfig(ctx.bridge, ctx.options)}};
}

// `config save`: the daemon's own file; `config save FILE`: FILE, for root.
json ConfigSave(CommandContext& ctx, const Parsed& p) {
  const bool named = p.args.size() == 1;
  if (named) {
    absl::Status allowed = ctx.policy.MayWriteFile(ctx.role);
    if (!allowed.ok()) return Error(allowed);
  }
  const std::string path = named ? p.args[0] : OwnConfigPath(ctx.options);
  absl::Status status = WriteFileAtomically(path, CurrentConfig(ctx.bridge, ctx.options));
  if (!status.ok()) return Error(status.message());
  return {{"ok", true}, {"path", path}};
}

// --- the handler table -----------------------------------------------------------------

constexpr std::array<Handler, kCommandCount> kHandlers = [] {
  std::array<Handler, kCommandCount> handlers{};
  auto on = [&handlers](CommandId id, Handler handler) {
    handlers[static_cast<size_t>(id)] = handler;
  };
  on(CommandId::kPortList, PortList);
  on(CommandId::kPortShow, PortShow);
  on(CommandId::kPortAdd, PortAdd);
  on(CommandId::kPortAddSpec, PortAddSpec);
  on(CommandId::kPortDel, PortDel);
  on(CommandId::kPortEnable, PortEnable);
  on(CommandId::kFdbShow, FdbShow);
  on(CommandId::kFdbFlush, FdbFlush);
  on(CommandId::kFdbAdd, FdbAdd);
  on(CommandId::kFdbDel, FdbDel);
  on(CommandId::kStats, Stats);
  on(CommandId::kPmd, Pmd);
  on(CommandId::kVxlanShow, VxlanShow);
  on(CommandId::kVxlanAdd, VxlanAdd);
  on(CommandId::kVxlanDel, VxlanDel);
  on(CommandId::kMirrorShow, MirrorShow);
  on(CommandId::kMirrorAdd, MirrorAdd);
  on(CommandId::kMirrorDel, MirrorDel);
  on(CommandId::kMcastShow, McastShow);
  on(CommandId::kBondShow, BondShow);
  on(CommandId::kCaptureStart, CaptureStart);
  on(CommandId::kCaptureStatus, CaptureStatusCommand);
  on(CommandId::kCaptureStop, CaptureStop);
  on(CommandId::kConfigShow, ConfigShow);
  on(CommandId::kConfigSave, ConfigSave);
  return handlers;
}();

constexpr bool EveryDaemonCommandHasAHandler() {
  for (const Command& command : kCommands) {
    const bool handled = kHandlers[static_cast<size_t>(command.id)] != nullptr;
    if (handled != ParsedBy(command, Parser::kDaemon)) return false;
  }
  return true;
}
static_assert(EveryDaemonCommandHasAHandler(),
              "a handler for every command the daemon runs, and for no other");

// A request no command fits. fdb has always checked the values of --port and --vlan
// before saying how it is written, once a verb is given.
json Unfit(const BridgeControl& bridge, const std::vector<std::string>& words,
           const absl::Status& error) {
  absl::StatusOr<Words> w = SplitOptions(words);
  if (w.ok() && w->positional.size() >= 2 && w->positional[0] == "fdb") {
    absl::StatusOr<FdbFilter> filter = ResolveFdbOptions(bridge, w->port, w->vlan);
    if (!filter.ok()) return Error(filter.status().message());
  }
  return Error(error.message());
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
    const std::vector<std::string> words =
        absl::StrSplit(request.line, ' ', absl::SkipWhitespace());
    const absl::StatusOr<Parsed> parsed = ParseCommand(words, Parser::kDaemon);
    if (!parsed.ok() || parsed->command->id != CommandId::kCaptureStart) {
      if (file >= 0) close(file);  // only a capture takes a file
      file = -1;
    }
    if (!parsed.ok()) return {Dump(Unfit(bridge, words, parsed.status())), false};
    CommandContext ctx{bridge, options, policy, role, request, file};
    json answer = kHandlers[static_cast<size_t>(parsed->command->id)](ctx, *parsed);
    if (file >= 0) close(file);  // a capture that did not start
    file = -1;
    if (ctx.connection_taken) return {{}, true};
    // Port and static MAC changes persist at once under --save_config.
    if (answer.value("ok", false) && parsed->command->changes_config &&
        !options.save_config.empty()) {
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
