#include "switch/ctl/local_commands.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "switch/ctl/client_socket.h"
#include "switch/ctl/top.h"
#include "switch/ctl/views.h"
#include "switch/protocol/atomic_file.h"
#include "switch/protocol/defaults.h"

namespace hvswitch::ctl {
namespace {

using nlohmann::json;

std::atomic<bool> g_interrupted{false};

// `help [COMMAND]`: every command, or those starting with COMMAND's words.
int Help(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  absl::StatusOr<std::string> text = HelpText(absl::StrJoin(args, " "));
  if (!text.ok()) return Fail(std::string(text.status().message()), 2);
  std::fputs(text->c_str(), stdout);
  return 0;
}

// `capture PORT [--count N] [--direction rx|tx|both] -w FILE [--timeout S]`: the file is
// opened here, with the caller's rights, and handed to the daemon with the request; the
// connection stays open while the daemon writes frames into the file, until it has N,
// the timeout passes or Ctrl-C (which sends "stop"). If this process dies, the daemon
// sees the connection close and ends the capture. `capture stop` ends anyone's capture;
// `capture status` tells whether one runs (both asked of the daemon like any command).
int Capture(const std::string& socket_path, const std::vector<std::string>& args,
            bool as_json) {
  std::string port, file, direction = "both";
  uint64_t count = 100;
  double timeout = 60;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    const bool has_value = i + 1 < args.size();
    if ((w == "--count" || w == "-c") && has_value) {
      if (!absl::SimpleAtoi(args[++i], &count) || count == 0) {
        return Fail("--count must be a positive number", 1);
      }
    } else if (w == "--direction" && has_value) {
      direction = args[++i];
    } else if (w == "-w" && has_value) {
      file = args[++i];
    } else if (w == "--timeout" && has_value) {
      if (!absl::SimpleAtod(args[++i], &timeout) || !(timeout > 0 && timeout <= 86400)) {
        return Fail("--timeout must be 0 to 86400 seconds", 1);
      }
    } else if (!absl::StartsWith(w, "-") && port.empty()) {
      port = w;
    } else {
      return Fail(absl::StrCat("capture: unexpected '", w, "'"), 1);
    }
  }
  if (port.empty() || file.empty()) {
    const Command& capture = CommandFor(CommandId::kCapture);
    return Fail(absl::StrCat(capture.words, " ", capture.synopsis), 1);
  }
  // O_NONBLOCK: a FIFO without a reader must not hang us; it is refused below anyway.
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) return Fail(absl::StrCat("cannot create ", file, ": ", strerror(errno)), 1);
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Fail(absl::StrCat(file, ": the capture file must be a regular file"), 1);
  }
  std::string error;
  const int sock = Connect(socket_path, &error);
  if (sock < 0) {
    close(fd);
    return Fail(error, 2);
  }
  const bool sent = SendRequest(
      sock, absl::StrCat("capture start ", port, " ", count, " ", direction, " ", timeout), fd);
  close(fd);  // the daemon has its own
  auto answer = [&]() -> std::optional<json> {
    json parsed = json::parse(ReadLine(sock), nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
    return parsed;
  };
  std::optional<json> started = sent ? answer() : std::nullopt;
  if (!started) {
    close(sock);
    return Fail("no answer from hvswitch", 2);
  }
  if (!started->value("ok", false)) {
    close(sock);
    return Refused(*started);
  }
  signal(SIGINT, [](int) { g_interrupted.store(true); });
  // The daemon ends the capture at its timeout; this end asks once more a little later.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout + 5);
  bool asked_to_stop = false;
  while (true) {
    pollfd p{sock, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) break;
    if (!asked_to_stop &&
        (g_interrupted.load() || std::chrono::steady_clock::now() > give_up)) {
      SendRequest(sock, "stop", -1);
      asked_to_stop = true;
    }
  }
  std::optional<json> ended = answer();
  close(sock);
  if (!ended) return Fail("the capture ended without an answer", 1);
  if (as_json) {
    std::printf("%s\n", ended->dump().c_str());
  } else {
    std::printf("captured %s frames to %s\n", Text((*ended)["captured"]).c_str(), file.c_str());
  }
  return 0;
}

// `config save FILE`: the daemon's configuration, written here with the caller's rights.
int SaveConfig(const std::string& socket_path, const std::string& path, bool as_json) {
  json shown;
  if (int status = AskOk(socket_path, "config show", shown)) return status;
  absl::Status written = WriteFileAtomically(path, shown.value("config", std::string()));
  if (!written.ok()) return Fail(std::string(written.message()), 1);
  const json saved = {{"ok", true}, {"path", path}};
  if (as_json) {
    std::printf("%s\n", saved.dump().c_str());
  } else {
    Render(CommandFor(CommandId::kConfigSave).view, saved);
  }
  return 0;
}

}  // namespace

std::string UsageText() {
  return absl::StrCat("Usage: hvswitchctl [--socket=PATH] [--json] COMMAND\n\n",
                      "Options:\n"
                      "  --socket=PATH  the daemon's control socket (default ",
                      kDefaultRuntimeDir, "/", kControlSocketName, ")\n"
                      "  --json         the daemon's answer as JSON, not a table\n"
                      "  --help         this text\n"
                      "  --version      hvswitchctl's version\n"
                      "\nCommands (hvswitchctl help COMMAND: how one is written):\n\n",
                      *HelpText(""));
}

std::optional<int> RunLocally(const Parsed& parsed, const std::string& socket_path,
                              bool as_json) {
  switch (parsed.command->id) {
    case CommandId::kHelp:
      return Help(parsed.args);
    case CommandId::kCapture:
      return Capture(socket_path, parsed.args, as_json);
    case CommandId::kTop:
      return Top(socket_path, parsed.args, as_json);
    case CommandId::kConfigSave:  // the daemon writes only its own file
      if (parsed.args.size() == 1) return SaveConfig(socket_path, parsed.args[0], as_json);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace hvswitch::ctl
