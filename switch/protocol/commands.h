// The hvswitchctl commands, declared once: their words, arguments, help, whether they
// change the saved configuration and how hvswitchctl shows their answer. The daemon
// (switch/control/command_handlers.cc) and hvswitchctl (switch/ctl/main.cc) both parse requests
// with this table, so the grammar, `hvswitchctl help` and the usage errors cannot drift
// apart. Abseil only: no DPDK, no JSON.
//
// Adding a command: a CommandId and a row below; its handler in control_commands.cc (the
// daemon refuses to build without one); a View case in ctl_views.cc only for a new view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hvswitch {

enum class CommandId : uint8_t {
  kPortList, kPortShow, kPortAdd, kPortAddSpec, kPortDel, kPortEnable,
  kFdbShow, kFdbFlush, kFdbAdd, kFdbDel,
  kStats, kPmd, kTop,
  kVxlanShow, kVxlanAdd, kVxlanDel,
  kMirrorShow, kMirrorAdd, kMirrorDel,
  kMcastShow,
  kBondShow,
  kCapture, kCaptureStart, kCaptureStatus, kCaptureStop,
  kConfigShow, kConfigSave,
  kHelp,
  kCount
};
inline constexpr size_t kCommandCount = static_cast<size_t>(CommandId::kCount);

// How hvswitchctl shows a successful answer (without --json). Not on the wire: the
// client takes it from the row its own words matched.
enum class View : uint8_t {
  kNothing,      // {"ok":true}: nothing to show
  kPortTable,    // NAME TYPE LINK MTU MAC RX TX MACS
  kPortDetail,   // one `key: value` line per field
  kPortAdded,    // added SPEC
  kFdbTable,     // MAC VLAN PORT TYPE AGE
  kStatsTable,   // per port frames, bytes and drops, then the FDB line
  kPmdTable,     // per worker core
  kRateTable,    // per port frames, Mbit/s and drops a second (top; not a command's)
  kVxlanTable,   // per tunnel, then its VTEPs; per uplink, decapsulation drops
  kMirrorTable,  // per mirror session: what it copies, where, frames copied
  kMcastTable,   // per snooped group its member ports; the router ports
  kBondTable,    // per bond member: link, carrying traffic, LACP states and partner
  kConfigText,   // the configuration file's text
  kSaved,        // saved PATH
  kCaptureState, // a capture is running / no capture is running
  kOwnOutput,    // run by hvswitchctl, which prints what it did itself
};

// Who runs a command.
enum class RunsIn : uint8_t {
  kDaemon,  // hvswitchctl sends the words, the daemon answers
  kClient,  // hvswitchctl runs it and parses its arguments itself (they are not sent)
  kWire,    // what hvswitchctl sends for a kClient command: daemon only, not in help
};

// The `--name VALUE` options a daemon command takes, anywhere after its first word.
enum Option : uint8_t {
  kNoOption = 0, kPortOption = 1, kVlanOption = 2,
  kFromOption = 4, kToOption = 8, kDirectionOption = 16,  // mirror add
};

inline constexpr uint16_t kAnyNumber = std::numeric_limits<uint16_t>::max();

struct Command {
  CommandId id;
  absl::string_view words;     // "fdb show": the words that name it
  absl::string_view synopsis;  // "[--port P] [--vlan V]": what follows them
  absl::string_view help;      // one line for `hvswitchctl help`
  uint16_t min_args, max_args;  // positional words after `words` (kAnyNumber: no limit)
  uint8_t options;              // the Options it takes
  bool changes_config;          // --save_config is written again after it succeeds
  View view;
  RunsIn runs_in;
};

// One row per CommandId, in its order. Rows with the same words are tried in table order.
// Each row: id, words, synopsis; help; min and max arguments, options, changes_config,
// view, runs_in.
inline constexpr Command kCommands[] = {
    {CommandId::kPortList, "port list", "",
     "every port: type, link, MTU, MAC, frames, MACs learned",
     0, 0, kNoOption, false, View::kPortTable, RunsIn::kDaemon},
    {CommandId::kPortShow, "port show", "NAME",
     "one port: its spec, counters, drops by reason, offloads",
     1, 1, kNoOption, false, View::kPortDetail, RunsIn::kDaemon},
    {CommandId::kPortAdd, "port add", "NAME TYPE KEY=VALUE...",
     "add a port: the --port grammar as words (vm3 vhost-user path=/run/hvswitch/vm3.sock)",
     2, kAnyNumber, kNoOption, true, View::kPortAdded, RunsIn::kDaemon},
    {CommandId::kPortAddSpec, "port add", "SPEC",
     "add a port: one --port word (vm3,type=vhost-user,path=/run/hvswitch/vm3.sock)",
     1, 1, kNoOption, true, View::kPortAdded, RunsIn::kDaemon},
    {CommandId::kPortDel, "port del", "NAME",
     "remove a port, its MACs (static too) and its socket",
     1, 1, kNoOption, true, View::kNothing, RunsIn::kDaemon},
    {CommandId::kPortEnable, "port enable", "NAME",
     "end a port's shut (bpdu_guard=1 shut it when it sent a BPDU)",
     1, 1, kNoOption, false, View::kNothing, RunsIn::kDaemon},
    {CommandId::kFdbShow, "fdb show", "[--port P] [--vlan V]",
     "the MAC table: learned and static entries, their age",
     0, 0, kPortOption | kVlanOption, false, View::kFdbTable, RunsIn::kDaemon},
    {CommandId::kFdbFlush, "fdb flush", "[--port P]",
     "forget the learned MACs, of one port or all (static entries stay)",
     0, 0, kPortOption, false, View::kNothing, RunsIn::kDaemon},
    {CommandId::kFdbAdd, "fdb add", "PORT MAC [--vlan V]",
     "pin a MAC to a port, at once",
     2, 2, kVlanOption, true, View::kNothing, RunsIn::kDaemon},
    {CommandId::kFdbDel, "fdb del", "MAC [--vlan V]",
     "remove a MAC table entry",
     1, 1, kVlanOption, true, View::kNothing, RunsIn::kDaemon},
    // stats has always taken, and ignored, --port and --vlan: scripts may give them.
    {CommandId::kStats, "stats", "[PORT]",
     "frames, bytes and drops of every port (or one), FDB totals",
     0, 1, kPortOption | kVlanOption, false, View::kStatsTable, RunsIn::kDaemon},
    {CommandId::kPmd, "pmd", "",
     "per worker core: busy %, frames, cycles per frame, bursts",
     0, 0, kNoOption, false, View::kPmdTable, RunsIn::kDaemon},
    {CommandId::kTop, "top", "[--interval S] [--count N]",
     "live per-port rates: frames, bits and drops a second with the drops' main reason",
     0, kAnyNumber, kNoOption, false, View::kOwnOutput, RunsIn::kClient},
    {CommandId::kVxlanShow, "vxlan show", "",
     "VXLAN tunnels: VNI, uplink, remote VTEPs (next hop, frames), remote MACs, drops",
     0, 0, kNoOption, false, View::kVxlanTable, RunsIn::kDaemon},
    {CommandId::kVxlanAdd, "vxlan add", "VNI,vlan=N,uplink=PORT,local=IP[,remote=IP...]",
     "add a VXLAN tunnel: the port vxlanVNI of type=vxlan (the --vxlan grammar)",
     1, 1, kNoOption, true, View::kPortAdded, RunsIn::kDaemon},
    {CommandId::kVxlanDel, "vxlan del", "VNI",
     "remove the VXLAN tunnel of that VNI (its port)",
     1, 1, kNoOption, true, View::kNothing, RunsIn::kDaemon},
    {CommandId::kMirrorShow, "mirror show", "",
     "mirror sessions: the ports mirrored and how, the analyser, frames copied",
     0, 0, kNoOption, false, View::kMirrorTable, RunsIn::kDaemon},
    {CommandId::kMirrorAdd, "mirror add",
     "NAME --from PORT[,PORT...] --to PORT [--direction rx|tx|both] [--vlan V]",
     "copy what ports receive and are sent to an analyser port, which takes nothing else",
     1, 1, kFromOption | kToOption | kDirectionOption | kVlanOption, true, View::kNothing,
     RunsIn::kDaemon},
    {CommandId::kMirrorDel, "mirror del", "NAME",
     "remove a mirror session (its analyser becomes an ordinary port again)",
     1, 1, kNoOption, true, View::kNothing, RunsIn::kDaemon},
    {CommandId::kMcastShow, "mcast show", "[--vlan V]",
     "IGMP/MLD snooping: groups and the ports that joined them, router ports",
     0, 0, kVlanOption, false, View::kMcastTable, RunsIn::kDaemon},
    {CommandId::kBondShow, "bond show", "",
     "bonded uplinks (type=bond): mode, members, which carry traffic, LACP partner",
     0, 0, kNoOption, false, View::kBondTable, RunsIn::kDaemon},
    {CommandId::kCapture, "capture",
     "PORT [--count N] [--direction rx|tx|both] -w FILE [--timeout S]",
     "write a port's frames into a pcapng file (opened by hvswitchctl, with your rights)",
     0, kAnyNumber, kNoOption, false, View::kOwnOutput, RunsIn::kClient},
    {CommandId::kCaptureStart, "capture start", "PORT COUNT rx|tx|both [SECONDS] (with a file)",
     "",
     3, 4, kNoOption, false, View::kOwnOutput, RunsIn::kWire},
    {CommandId::kCaptureStatus, "capture status", "",
     "whether a capture is running",
     0, 0, kNoOption, false, View::kCaptureState, RunsIn::kDaemon},
    {CommandId::kCaptureStop, "capture stop", "",
     "end the running capture (whoever started it)",
     0, 0, kNoOption, false, View::kCaptureState, RunsIn::kDaemon},
    {CommandId::kConfigShow, "config show", "",
     "every port, static MAC and setting, as a file for --config=FILE",
     0, 0, kNoOption, false, View::kConfigText, RunsIn::kDaemon},
    // With FILE, hvswitchctl writes it (switch/ctl/local_commands.cc).
    {CommandId::kConfigSave, "config save", "[FILE]",
     "the same into FILE (written by hvswitchctl, with your rights) or the daemon's own file",
     0, 1, kNoOption, false, View::kSaved, RunsIn::kDaemon},
    {CommandId::kHelp, "help", "[COMMAND]",
     "every command, or how one (or a group: fdb) is written",
     0, kAnyNumber, kNoOption, false, View::kOwnOutput, RunsIn::kClient},
};

constexpr const Command& CommandFor(CommandId id) { return kCommands[static_cast<size_t>(id)]; }

constexpr bool EveryCommandHasItsRow() {
  if (std::size(kCommands) != kCommandCount) return false;
  for (size_t i = 0; i < std::size(kCommands); ++i) {
    if (static_cast<size_t>(kCommands[i].id) != i) return false;
  }
  return true;
}
static_assert(EveryCommandHasItsRow(), "kCommands: one row per CommandId, in its order");

// Who parses: the daemon matches kDaemon and kWire rows, hvswitchctl kDaemon and kClient.
enum class Parser : uint8_t { kDaemon, kClient };

constexpr bool ParsedBy(const Command& command, Parser parser) {
  return command.runs_in == RunsIn::kDaemon ||
         command.runs_in == (parser == Parser::kDaemon ? RunsIn::kWire : RunsIn::kClient);
}

// The words of a request: the options (`--port P`, `--vlan V`, `--from P,...`, `--to P`,
// `--direction D`) taken out (anywhere after the first word), the rest in order. Errors:
// "--port needs a value", "--port given twice", "unknown option --x".
struct Words {
  std::vector<std::string> positional;
  std::optional<std::string> port, vlan, from, to, direction;
};
absl::StatusOr<Words> SplitOptions(const std::vector<std::string>& words);

struct Parsed {
  const Command* command = nullptr;
  std::vector<std::string> args;  // the positional words after command->words
  std::optional<std::string> port, vlan, from, to, direction;
};

// The row `words` name: the longest `words` that fit with their number of arguments and
// options (a kClient row takes the rest as it is). Errors, in this order: "empty request";
// an option error (SplitOptions); "unknown command 'x': " + CommandsSummary() (NotFound);
// the group's usage (GroupUsage).
absl::StatusOr<Parsed> ParseCommand(const std::vector<std::string>& words, Parser parser);

// How the daemon's commands starting with `group` are written, e.g. "port: list | show NAME
// | add NAME TYPE KEY=VALUE... | add SPEC | del NAME"; a one-command group is just its
// words and synopsis ("stats [PORT]").
std::string GroupUsage(absl::string_view group);

// Every command hvswitchctl takes, on one line: "port list | port show NAME | ...".
std::string CommandsSummary();

// `hvswitchctl help`: every command, its synopsis and help, one a line (empty `command`);
// or the commands whose words start with `command` ("fdb", "fdb add"). NotFound when none.
absl::StatusOr<std::string> HelpText(absl::string_view command);

}  // namespace hvswitch
