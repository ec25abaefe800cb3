// The hvswitchctl command table (switch/protocol/commands.h): its rows are consistent, every
// synopsis parses back to its own row, the usage errors and help come from it, and the
// commands it says change the configuration are the ones the daemon saves after.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "switch/control/command_handlers.h"
#include "switch/protocol/commands.h"
#include "tests/stub_bridge.h"

namespace hvswitch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> Split(absl::string_view line) {
  return absl::StrSplit(line, ' ', absl::SkipEmpty());
}

std::string Line(const Command& c) {
  return c.synopsis.empty() ? std::string(c.words) : absl::StrCat(c.words, " ", c.synopsis);
}

Parser ParserOf(const Command& c) {
  return c.runs_in == RunsIn::kWire ? Parser::kDaemon : Parser::kClient;
}

TEST(CommandTableTest, RowsAreConsistent) {
  std::set<std::string> lines;
  for (size_t i = 0; i < std::size(kCommands); ++i) {
    const Command& c = kCommands[i];
    SCOPED_TRACE(Line(c));
    EXPECT_EQ(static_cast<size_t>(c.id), i);
    EXPECT_FALSE(c.words.empty());
    EXPECT_LE(c.min_args, c.max_args);
    // Help for what people type; nothing for what only hvswitchctl sends.
    EXPECT_EQ(c.help.empty(), c.runs_in == RunsIn::kWire);
    // hvswitchctl's own commands parse their own options; the daemon never sees them.
    if (c.runs_in == RunsIn::kClient) {
      EXPECT_EQ(c.options, kNoOption);
      EXPECT_FALSE(c.changes_config);
      EXPECT_EQ(c.view, View::kOwnOutput);
    }
    EXPECT_TRUE(lines.insert(Line(c)).second) << "two rows written the same";
  }
}

TEST(CommandTableTest, RowsWithTheSameWordsNeverFitTheSameArguments) {
  for (const Command& a : kCommands) {
    for (const Command& b : kCommands) {
      if (&a >= &b || a.words != b.words) continue;
      SCOPED_TRACE(absl::StrCat(Line(a), " / ", Line(b)));
      EXPECT_TRUE(a.max_args < b.min_args || b.max_args < a.min_args);
    }
  }
}

TEST(CommandTableTest, ConfigChangingCommandsArePortStaticMacAndMirrorChanges) {
  std::set<CommandId> changing;
  for (const Command& c : kCommands) {
    if (c.changes_config) changing.insert(c.id);
  }
  EXPECT_EQ(changing, (std::set<CommandId>{CommandId::kPortAdd, CommandId::kPortAddSpec,
                                           CommandId::kPortDel, CommandId::kFdbAdd,
                                           CommandId::kFdbDel, CommandId::kVxlanAdd,
                                           CommandId::kVxlanDel, CommandId::kMirrorAdd,
                                           CommandId::kMirrorDel}));
}

// Words for `c` as its synopsis writes them: the shortest form (no optional parts) or the
// longest (every optional part, each `...` once).
std::vector<std::string> Example(const Command& c, bool longest) {
  std::vector<std::string> words = Split(c.words);
  int depth = 0, placeholder = 0;
  bool in_note = false;
  for (std::string token : Split(c.synopsis)) {
    if (token.front() == '(') in_note = true;  // "(with a file)": prose
    if (in_note) {
      in_note = token.back() != ')';
      continue;
    }
    // A list inside a word (PORT[,PORT...]): its first item.
    if (const size_t at = token.find('['); at != std::string::npos && at > 0) {
      token.erase(at);
    }
    while (!token.empty() && token.front() == '[') {
      ++depth;
      token.erase(0, 1);
    }
    int closing = 0;
    while (!token.empty() && token.back() == ']') {
      ++closing;
      token.pop_back();
    }
    if (depth == 0 || longest) {
      if (absl::StrContains(token, '|')) {
        words.push_back(token.substr(0, token.find('|')));  // rx|tx|both
      } else if (token == "V" || token == "N" || token == "S" || token == "SECONDS" ||
                 token == "COUNT") {
        words.push_back("7");
      } else if (token == "MAC") {
        words.push_back("02:00:00:00:00:09");
      } else if (!token.empty() && std::isupper(static_cast<unsigned char>(token[0]))) {
        words.push_back(absl::StrCat("w", ++placeholder));  // NAME, PORT, FILE, KEY=VALUE...
      } else {
        words.push_back(token);  // --port, -w
      }
    }
    depth -= closing;
  }
  return words;
}

TEST(ParseCommandTest, EverySynopsisParsesToItsOwnRow) {
  for (const Command& c : kCommands) {
    for (bool longest : {false, true}) {
      const std::vector<std::string> words = Example(c, longest);
      SCOPED_TRACE(absl::StrJoin(words, " "));
      absl::StatusOr<Parsed> parsed = ParseCommand(words, ParserOf(c));
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_EQ(parsed->command, &c);
      if (c.runs_in == RunsIn::kClient) continue;  // its arguments are its own
      // Options the synopsis shows are taken (stats takes, and ignores, two it does not show).
      EXPECT_EQ(parsed->port.has_value(), longest && absl::StrContains(c.synopsis, "--port"));
      EXPECT_EQ(parsed->vlan.has_value(), longest && absl::StrContains(c.synopsis, "--vlan"));
      EXPECT_TRUE(!absl::StrContains(c.synopsis, "--port") || (c.options & kPortOption));
      EXPECT_TRUE(!absl::StrContains(c.synopsis, "--vlan") || (c.options & kVlanOption));
      // Options the synopsis requires are there in the shortest form too.
      EXPECT_EQ(parsed->from.has_value(), absl::StrContains(c.synopsis, "--from"));
      EXPECT_EQ(parsed->to.has_value(), absl::StrContains(c.synopsis, "--to"));
      EXPECT_EQ(parsed->direction.has_value(),
                longest && absl::StrContains(c.synopsis, "[--direction"));
      EXPECT_GE(parsed->args.size(), c.min_args);
      EXPECT_LE(parsed->args.size(), c.max_args);
    }
  }
}

TEST(ParseCommandTest, OptionsGoAnywhereAfterTheFirstWord) {
  absl::StatusOr<Parsed> parsed =
      ParseCommand(Split("fdb --vlan 7 add vm 02:00:00:00:00:09"), Parser::kDaemon);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command->id, CommandId::kFdbAdd);
  EXPECT_EQ(parsed->args, (std::vector<std::string>{"vm", "02:00:00:00:00:09"}));
  EXPECT_EQ(parsed->vlan, "7");
}

TEST(ParseCommandTest, MirrorAddTakesItsOptionsAnywhere) {
  absl::StatusOr<Parsed> p = ParseCommand(
      Split("mirror --to an add m1 --vlan 5 --from a,b --direction tx"), Parser::kDaemon);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->command->id, CommandId::kMirrorAdd);
  EXPECT_EQ(p->args, (std::vector<std::string>{"m1"}));
  EXPECT_EQ(p->from, "a,b");
  EXPECT_EQ(p->to, "an");
  EXPECT_EQ(p->direction, "tx");
  EXPECT_EQ(p->vlan, "5");
  // An option given twice would lose one of its values: refused.
  EXPECT_EQ(ParseCommand(Split("mirror add m1 --from a --from b --to c"), Parser::kDaemon)
                .status()
                .message(),
            "--from given twice");
  // Mirror options belong to mirror add only.
  EXPECT_EQ(ParseCommand(Split("fdb show --from a"), Parser::kDaemon).status().message(),
            GroupUsage("fdb"));
  EXPECT_EQ(ParseCommand(Split("mirror del m1 --to c"), Parser::kDaemon).status().message(),
            GroupUsage("mirror"));
}

TEST(ParseCommandTest, PortAddTakesOneSpecOrWords) {
  absl::StatusOr<Parsed> one =
      ParseCommand(Split("port add vm,type=memif,path=/x"), Parser::kDaemon);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->command->id, CommandId::kPortAddSpec);
  absl::StatusOr<Parsed> words = ParseCommand(Split("port add vm memif"), Parser::kDaemon);
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(words->command->id, CommandId::kPortAdd);
}

TEST(ParseCommandTest, PortEnableTakesOneName) {
  absl::StatusOr<Parsed> p = ParseCommand(Split("port enable vm"), Parser::kDaemon);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->command->id, CommandId::kPortEnable);
  EXPECT_EQ(p->args, (std::vector<std::string>{"vm"}));
  EXPECT_EQ(ParseCommand(Split("port enable"), Parser::kDaemon).status().message(),
            GroupUsage("port"));
  EXPECT_EQ(ParseCommand(Split("port enable vm mem"), Parser::kDaemon).status().message(),
            GroupUsage("port"));
}

TEST(ParseCommandTest, EachSideParsesItsOwnRows) {
  // hvswitchctl runs capture and help itself; the daemon takes capture start.
  absl::StatusOr<Parsed> p = ParseCommand(Split("capture start a 1 rx"), Parser::kClient);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->command->id, CommandId::kCapture);
  EXPECT_EQ(p->args, (std::vector<std::string>{"start", "a", "1", "rx"}));
  p = ParseCommand(Split("capture start a 1 rx"), Parser::kDaemon);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->command->id, CommandId::kCaptureStart);
  p = ParseCommand(Split("capture a --count 5 -w f.pcapng"), Parser::kClient);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->command->id, CommandId::kCapture);
  // The longest words that fit win; what does not fit falls back to a shorter command.
  p = ParseCommand(Split("capture status"), Parser::kClient);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->command->id, CommandId::kCaptureStatus);
  p = ParseCommand(Split("capture status --port a"), Parser::kClient);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->command->id, CommandId::kCapture);
  EXPECT_EQ(ParseCommand(Split("help"), Parser::kDaemon).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseCommand(Split("help fdb add"), Parser::kClient)->command->id, CommandId::kHelp);
}

TEST(ParseCommandTest, Errors) {
  EXPECT_EQ(ParseCommand({}, Parser::kDaemon).status().message(), "empty request");
  EXPECT_EQ(ParseCommand(Split("fdb show --port"), Parser::kDaemon).status().message(),
            "--port needs a value");
  EXPECT_EQ(ParseCommand(Split("fdb show --colour red"), Parser::kDaemon).status().message(),
            "unknown option --colour");
  // Option errors come before an unknown command, as they always did.
  EXPECT_EQ(ParseCommand(Split("bogus --x"), Parser::kDaemon).status().message(),
            "unknown option --x");
  absl::Status unknown = ParseCommand(Split("bogus"), Parser::kDaemon).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.message(), absl::StrCat("unknown command 'bogus': ", CommandsSummary()));
  EXPECT_EQ(ParseCommand(Split("port list extra"), Parser::kDaemon).status().message(),
            GroupUsage("port"));
  EXPECT_EQ(ParseCommand(Split("port list --vlan 3"), Parser::kDaemon).status().message(),
            GroupUsage("port"));
  EXPECT_EQ(ParseCommand(Split("fdb flush --vlan 3"), Parser::kDaemon).status().message(),
            GroupUsage("fdb"));
  EXPECT_EQ(ParseCommand(Split("stats a b"), Parser::kDaemon).status().message(),
            "stats [PORT]");
}

TEST(GroupUsageTest, WrittenFromTheTable) {
  // port:, fdb: and capture: as the daemon has always answered them.
  EXPECT_EQ(GroupUsage("port"),
            "port: list | show NAME | add NAME TYPE KEY=VALUE... | add SPEC | del NAME | "
            "enable NAME");
  EXPECT_EQ(GroupUsage("fdb"),
            "fdb: show [--port P] [--vlan V] | flush [--port P] | add PORT MAC [--vlan V] | "
            "del MAC [--vlan V]");
  EXPECT_EQ(GroupUsage("capture"),
            "capture: start PORT COUNT rx|tx|both [SECONDS] (with a file) | status | stop");
  EXPECT_EQ(GroupUsage("stats"), "stats [PORT]");
  EXPECT_EQ(GroupUsage("pmd"), "pmd");
  EXPECT_EQ(GroupUsage("config"), "config: show | save [FILE]");
}

TEST(HelpTextTest, ListsEveryCommandPeopleType) {
  absl::StatusOr<std::string> all = HelpText("");
  ASSERT_TRUE(all.ok());
  const std::string summary = CommandsSummary();
  for (const Command& c : kCommands) {
    SCOPED_TRACE(Line(c));
    const std::string entry = absl::StrCat(Line(c), "\n    ", c.help, "\n");
    if (c.runs_in == RunsIn::kWire) {
      EXPECT_THAT(*all, Not(HasSubstr(std::string(c.words))));
      EXPECT_THAT(summary, Not(HasSubstr(std::string(c.words))));
    } else {
      EXPECT_THAT(*all, HasSubstr(entry));
      EXPECT_THAT(summary, HasSubstr(Line(c)));
    }
  }
}

TEST(HelpTextTest, OneCommandOrGroup) {
  EXPECT_EQ(*HelpText("fdb add"),
            "fdb add PORT MAC [--vlan V]\n    pin a MAC to a port, at once\n");
  absl::StatusOr<std::string> port_add = HelpText("port add");
  ASSERT_TRUE(port_add.ok());
  EXPECT_THAT(*port_add, StartsWith("port add NAME TYPE KEY=VALUE...\n"));
  EXPECT_THAT(*port_add, HasSubstr("\nport add SPEC\n"));
  EXPECT_THAT(*HelpText("capture"), Not(HasSubstr("capture start")));
  EXPECT_EQ(HelpText("fdb bogus").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(HelpText("bogus").status().message(),
            "no command 'bogus' (hvswitchctl help lists them)");
}

// --- the daemon follows the table ------------------------------------------------------

class SaveConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string path = "/tmp/hvs-commands-XXXXXX";
    dir_ = mkdtemp(path.data());
    options_.runtime_dir = dir_;
    options_.ctl_socket = dir_ + "/hvswitch.ctl";
    options_.save_config = dir_ + "/saved.conf";
    PortSpec vm;
    vm.name = "vm";
    vm.driver = FindPortDriver("vhost-user");
    vm.driver_keys.Set("path", dir_ + "/vm.sock");
    ASSERT_TRUE(bridge_.AddPort(vm).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Runs `line`; true when it succeeded and wrote --save_config.
  bool SavedAfter(const std::string& line) {
    std::filesystem::remove(options_.save_config);
    ControlRequest request;
    request.line = line;
    nlohmann::json answer =
        nlohmann::json::parse(ExecuteControlCommand(bridge_, options_, request).line);
    EXPECT_TRUE(answer["ok"].get<bool>()) << line << ": " << answer.dump();
    return std::filesystem::exists(options_.save_config);
  }

  std::string dir_;
  DaemonOptions options_;
  StubBridge bridge_;
};

TEST_F(SaveConfigTest, AfterEveryCommandThatChangesIt) {
  EXPECT_TRUE(SavedAfter("port add x vhost-user path=" + dir_ + "/x.sock"));
  EXPECT_TRUE(SavedAfter("port del x"));
  EXPECT_TRUE(SavedAfter("port add x,type=vhost-user,path=" + dir_ + "/x.sock"));
  EXPECT_TRUE(SavedAfter("fdb add vm 02:00:00:00:00:09"));
  EXPECT_TRUE(SavedAfter("fdb del 02:00:00:00:00:09"));
  // Wherever the options stand (the words used to be looked at, not the command).
  EXPECT_TRUE(SavedAfter("fdb --vlan 0 add vm 02:00:00:00:00:09"));
  for (const char* line : {"port list", "port show vm", "port enable vm", "fdb show", "fdb flush",
                           "stats", "pmd", "capture status", "config show"}) {
    EXPECT_FALSE(SavedAfter(line)) << line;
  }
}

}  // namespace
}  // namespace hvswitch
