// hvswitchctl: the operator's command line for a running hvswitch, over its control socket.
//   hvswitchctl [--socket=PATH] [--json] COMMAND...
// Tables for people by default, the daemon's JSON with --json. An error is one line on
// stderr and exit status 1 (2 for a usage error or no daemon to talk to).
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "switch/atomic_file.h"
#include "switch/control_commands.h"
#include "switch/options.h"

namespace {

using nlohmann::json;

constexpr char kUsage[] =
    "usage: hvswitchctl [--socket=PATH] [--json] COMMAND\n"
    "commands: port list | port show NAME | port add NAME TYPE KEY=VALUE... |\n"
    "          port add SPEC (the --port grammar) | port del NAME |\n"
    "          fdb show [--port P] [--vlan V] |\n"
    "          fdb flush [--port P] | fdb add PORT MAC [--vlan V] | fdb del MAC [--vlan V] |\n"
    "          stats [PORT] | pmd | config show | config save [FILE] |\n"
    "          capture PORT [--count N] [--direction rx|tx|both] -w FILE.pcapng [--timeout S] |\n"
    "          capture stop | capture status\n";

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "hvswitchctl: %s\n", message.c_str());
  return code;
}

// A connection to the daemon, or -1 with `error` set.
int Connect(const std::string& path, std::string* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    *error = "socket path too long";
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    *error = absl::StrCat("cannot connect to ", path, ": ", strerror(errno),
                          errno == EACCES ? " (root or the daemon's --ctl_group only)"
                                          : errno == ENOENT ? " (is hvswitch running?)" : "");
    if (sock >= 0) close(sock);
    return -1;
  }
  return sock;
}

// Sends one request line, with `fd` attached when >= 0.
bool SendRequest(int sock, const std::string& request, int fd) {
  std::string line = request + "\n";
  iovec iov{line.data(), line.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
}

// Reads one answer line (without its newline); empty when none came.
std::string ReadLine(int sock) {
  std::string line;
  char c;
  while (read(sock, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

// Sends one request line (with `fd` attached when >= 0), returns the answer line; empty
// with `error` set on failure.
std::string Ask(const std::string& path, const std::string& request, std::string* error,
                int fd = -1) {
  const int sock = Connect(path, error);
  if (sock < 0) return {};
  std::string answer;
  if (SendRequest(sock, request, fd)) {
    char buf[65536];
    for (ssize_t n; (n = read(sock, buf, sizeof(buf))) > 0;) {
      answer.append(buf, static_cast<size_t>(n));
    }
  }
  close(sock);
  if (answer.empty()) *error = "no answer from hvswitch";
  return answer;
}

// The exit status for a refused request: 2 when the caller may not ask it.
int Refused(const json& answer) {
  return Fail(answer.value("error", "failed"), answer.value("denied", false) ? 2 : 1);
}

// Columns padded to their widest cell.
void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void PrintPortDetail(const json& port) {
  for (const auto& [key, value] : port.items()) {
    if (value.is_object()) {
      std::vector<std::string> parts;
      for (const auto& [k, v] : value.items()) parts.push_back(absl::StrCat(k, "=", Text(v)));
      std::printf("%-14s %s\n", (key + ":").c_str(), absl::StrJoin(parts, " ").c_str());
    } else {
      std::printf("%-14s %s\n", (key + ":").c_str(), Text(value).c_str());
    }
  }
}

void Render(const std::vector<std::string>& words, const json& answer) {
  if (answer.contains("config")) {
    std::fputs(answer["config"].get<std::string>().c_str(), stdout);
  } else if (answer.contains("path")) {
    std::printf("saved %s\n", answer["path"].get<std::string>().c_str());
  } else if (answer.contains("spec")) {  // port add
    std::printf("added %s\n", answer["spec"].get<std::string>().c_str());
  } else if (answer.contains("entries")) {
    std::vector<std::vector<std::string>> rows = {{"MAC", "VLAN", "PORT", "TYPE", "AGE"}};
    for (const json& e : answer["entries"]) {
      rows.push_back({e["mac"], Text(e["vlan"]), e["port"],
                      e["static"].get<bool>() ? "static" : "learned",
                      e.contains("age") ? Text(e["age"]) + "s" : "-"});
    }
    PrintTable(rows);
  } else if (answer.contains("port")) {
    PrintPortDetail(answer["port"]);
  } else if (answer.contains("ports") && words[0] == "port") {
    std::vector<std::vector<std::string>> rows = {
        {"NAME", "TYPE", "LINK", "MTU", "MAC", "RX", "TX", "MACS"}};
    for (const json& p : answer["ports"]) {
      rows.push_back({p["name"], p["type"], p["up"].get<bool>() ? "up" : "down",
                      Text(p["mtu"]), p["mac"], Text(p["rx_packets"]), Text(p["tx_packets"]),
                      Text(p["fdb_learned"])});
    }
    PrintTable(rows);
  } else if (answer.contains("cores")) {  // pmd
    std::vector<std::vector<std::string>> rows = {
        {"CORE", "BUSY%", "PACKETS", "CYC/PKT", "AVG BURST", "BURSTS (<=1 2 4 8 16 32 64 128 256)"}};
    for (const json& c : answer["cores"]) {
      std::vector<std::string> sizes;
      for (const json& b : c["bursts"]) sizes.push_back(Text(b["count"]));
      rows.push_back({Text(c["core"]), absl::StrFormat("%.1f", c["busy_percent"].get<double>()),
                      Text(c["packets"]),
                      absl::StrFormat("%.0f", c["cycles_per_packet"].get<double>()),
                      absl::StrFormat("%.1f", c["mean_burst"].get<double>()),
                      absl::StrJoin(sizes, " ")});
    }
    PrintTable(rows);
  } else if (answer.contains("ports")) {  // stats
    std::vector<std::vector<std::string>> rows = {
        {"PORT", "RX", "RX BYTES", "TX", "TX BYTES", "RX DROPS", "TX DROPS"}};
    for (const json& p : answer["ports"]) {
      uint64_t rx_drops = 0, tx_drops = 0;
      for (const auto& [k, v] : p["rx_drops"].items()) rx_drops += v.get<uint64_t>();
      for (const auto& [k, v] : p["tx_drops"].items()) tx_drops += v.get<uint64_t>();
      rows.push_back({p["name"], Text(p["rx_packets"]), Text(p["rx_bytes"]),
                      Text(p["tx_packets"]), Text(p["tx_bytes"]), std::to_string(rx_drops),
                      std::to_string(tx_drops)});
    }
    PrintTable(rows);
    const json& fdb = answer["fdb"];
    std::printf("fdb: %s entries (%s static), learned %s, moves %s, aged %s, flushed %s\n",
                Text(fdb["entries"]).c_str(), Text(fdb["static"]).c_str(),
                Text(fdb["learned_total"]).c_str(), Text(fdb["moves_total"]).c_str(),
                Text(fdb["aged_total"]).c_str(), Text(fdb["flushed_total"]).c_str());
  }
}

std::atomic<bool> g_interrupted{false};

// `capture PORT [--count N] [--direction rx|tx|both] -w FILE [--timeout S]`: the file is
// opened here, with the caller's rights, and handed to the daemon with the request; the
// connection stays open while the daemon writes frames into the file, until it has N,
// the timeout passes or Ctrl-C (which sends "stop"). If this process dies, the daemon
// sees the connection close and ends the capture. `capture stop` ends anyone's capture;
// `capture status` tells whether one runs.
int Capture(const std::string& socket_path, const std::vector<std::string>& words,
            bool as_json) {
  if (words.size() == 2 && (words[1] == "stop" || words[1] == "status")) {
    std::string error;
    const std::string answer = Ask(socket_path, "capture " + words[1], &error);
    if (answer.empty()) return Fail(error, 2);
    json parsed = json::parse(answer, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return Fail("unreadable answer", 1);
    if (!parsed.value("ok", false)) return Refused(parsed);
    if (as_json) {
      std::printf("%s\n", parsed.dump().c_str());
    } else {
      std::printf("%s\n", parsed.value("active", false) ? "a capture is running"
                                                        : "no capture is running");
    }
    return 0;
  }
  std::string port, file, direction = "both";
  uint64_t count = 100;
  double timeout = 60;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool has_value = i + 1 < words.size();
    if ((w == "--count" || w == "-c") && has_value) {
      if (!absl::SimpleAtoi(words[++i], &count) || count == 0) {
        return Fail("--count must be a positive number", 1);
      }
    } else if (w == "--direction" && has_value) {
      direction = words[++i];
    } else if (w == "-w" && has_value) {
      file = words[++i];
    } else if (w == "--timeout" && has_value) {
      if (!absl::SimpleAtod(words[++i], &timeout) || !(timeout > 0 && timeout <= 86400)) {
        return Fail("--timeout must be 0 to 86400 seconds", 1);
      }
    } else if (!absl::StartsWith(w, "-") && port.empty()) {
      port = w;
    } else {
      return Fail(absl::StrCat("capture: unexpected '", w, "'"), 1);
    }
  }
  if (port.empty() || file.empty()) {
    return Fail("capture PORT [--count N] [--direction rx|tx|both] -w FILE [--timeout S]", 1);
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
  std::string error;
  const std::string answer = Ask(socket_path, "config show", &error);
  if (answer.empty()) return Fail(error, 2);
  json parsed = json::parse(answer, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return Fail("unreadable answer", 1);
  if (!parsed.value("ok", false)) return Refused(parsed);
  absl::Status written =
      hvswitch::WriteFileAtomically(path, parsed.value("config", std::string()));
  if (!written.ok()) return Fail(std::string(written.message()), 1);
  const json saved = {{"ok", true}, {"path", path}};
  if (as_json) {
    std::printf("%s\n", saved.dump().c_str());
  } else {
    std::printf("saved %s\n", path.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path = absl::StrCat(hvswitch::kDefaultRuntimeDir, "/hvswitch.ctl");
  bool as_json = false;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (words.empty() && absl::StartsWith(arg, "--socket=")) {
      socket_path = arg.substr(9);
    } else if (words.empty() && arg == "--json") {
      as_json = true;
    } else if (words.empty() && (arg == "--help" || arg == "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      words.push_back(arg);
    }
  }
  if (words.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // A daemon that went away while we write must not kill us before we say so.
  signal(SIGPIPE, SIG_IGN);
  if (words[0] == "capture") return Capture(socket_path, words, as_json);
  if (words.size() == 3 && words[0] == "config" && words[1] == "save") {
    return SaveConfig(socket_path, words[2], as_json);
  }
  std::string error;
  std::string answer = Ask(socket_path, absl::StrJoin(words, " "), &error);
  if (answer.empty()) return Fail(error, 2);
  json parsed = json::parse(answer, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return Fail("unreadable answer", 1);
  if (!parsed.value("ok", false)) return Refused(parsed);
  if (parsed.contains("warning")) {
    std::fprintf(stderr, "hvswitchctl: %s\n", parsed["warning"].get<std::string>().c_str());
  }
  if (as_json) {
    std::printf("%s\n", parsed.dump().c_str());
  } else {
    Render(words, parsed);
  }
  return 0;
}
