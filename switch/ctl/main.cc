// hvswitchctl: the operator's command line for a running hvswitch, over its control socket.
//   hvswitchctl [--socket=PATH] [--json] COMMAND...
// Tables for people by default, the daemon's JSON with --json. An error is one line on
// stderr and exit status 1 (2 for a usage error or no daemon to talk to).
//
// The words are matched against the command table (switch/protocol/commands.h): hvswitchctl's own
// commands run here (switch/ctl/local_commands.h); the rest is sent as written, and the
// matched command's view says how its answer is shown (switch/ctl/views.h).
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "switch/ctl/client_socket.h"
#include "switch/ctl/local_commands.h"
#include "switch/ctl/views.h"
#include "switch/protocol/commands.h"
#include "switch/protocol/defaults.h"
#include "switch/protocol/version.h"

namespace hvswitch::ctl {
namespace {

int Main(int argc, char** argv) {
  std::string socket_path = absl::StrCat(kDefaultRuntimeDir, "/", kControlSocketName);
  bool as_json = false;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (words.empty() && absl::StartsWith(arg, "--socket=")) {
      socket_path = arg.substr(9);
    } else if (words.empty() && arg == "--json") {
      as_json = true;
    } else if (words.empty() && (arg == "--help" || arg == "-h")) {
      std::fputs(UsageText().c_str(), stdout);
      return 0;
    } else if (words.empty() && arg == "--version") {
      std::printf("hvswitchctl %s\n", HVSWITCH_VERSION);
      return 0;
    } else {
      words.push_back(arg);
    }
  }
  if (words.empty()) {
    std::fputs(UsageText().c_str(), stderr);
    return 2;
  }
  // A daemon that went away while we write must not kill us before we say so.
  signal(SIGPIPE, SIG_IGN);
  const absl::StatusOr<Parsed> parsed = ParseCommand(words, Parser::kClient);
  if (parsed.ok()) {
    if (std::optional<int> status = RunLocally(*parsed, socket_path, as_json)) return *status;
  }
  // Words that match no command are sent as well: the daemon's answer says what is wrong.
  nlohmann::json answer;
  if (int status = AskOk(socket_path, absl::StrJoin(words, " "), answer)) return status;
  if (answer.contains("warning")) {
    std::fprintf(stderr, "hvswitchctl: %s\n", answer["warning"].get<std::string>().c_str());
  }
  if (as_json) {
    std::printf("%s\n", answer.dump().c_str());
  } else {
    Render(parsed.ok() ? parsed->command->view : View::kNothing, answer);
  }
  return 0;
}

}  // namespace
}  // namespace hvswitch::ctl

int main(int argc, char** argv) { return hvswitch::ctl::Main(argc, argv); }
