// libFuzzer target over what a local user controls on the control socket: request lines
// of any bytes, from root or from a --ctl_group member, with or without a descriptor,
// executed one after another on one switch (a stub bridge: ports, FDB and captures
// without DPDK, so that every command's parsing, policy and answer rendering is reached).
// Besides memory errors it aborts when a promise of ExecuteControlCommand breaks: an
// exception escapes, an answer is not one line of JSON with a boolean "ok", a descriptor
// is leaked, or a member is let do what only root may (a dpdk port, a socket outside the
// runtime directory, a named file written).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_split.h"

#include "switch/control/command_handlers.h"
#include "switch/control/control_policy.h"
#include "tests/stub_bridge.h"

namespace {

using nlohmann::json;

void Require(bool ok, const char* what, const std::string& line) {
  if (!ok) {
    std::fprintf(stderr, "control_fuzz: broken promise: %s (request '%s')\n", what,
                 line.c_str());
    std::abort();
  }
}

int OpenFds() {
  int n = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n;
}

std::string RuntimeDir() {
  static std::string dir = [] {
    // tmpfs: `config save` syncs what it writes, which a disk makes slow.
    std::string path = "/dev/shm/hvs-control-fuzz-XXXXXX";
    return std::string(mkdtemp(path.data()));
  }();
  return dir;
}

}  // namespace

// Input: requests separated by '\n'. Each request's first byte picks the caller (bit 0:
// a group member), whether a descriptor goes along (bit 1); the rest is the line, where
// "RUN/" stands for the runtime directory.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hvswitch::DaemonOptions options;
  options.runtime_dir = RuntimeDir();
  options.ctl_socket = options.runtime_dir + "/hvswitch.ctl";
  hvswitch::StubBridge bridge;
  hvswitch::PortSpec odd;
  odd.name = "odd";
  odd.driver = hvswitch::FindPortDriver("vhost-user");
  odd.driver_keys.Set("path", "/tmp/\xff\xfe\xc3.sock");  // root may give any bytes
  bridge.AddPort(odd).IgnoreError();
  bridge.Learn(0x0000'0102'0304'0506ull, 0);
  const int fds_before = OpenFds();

  const std::string input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    const std::string request = input.substr(start, end - start);
    start = end + 1;
    if (request.empty()) continue;
    const uint8_t how = static_cast<uint8_t>(request[0]);
    // "RUN/" stands for the runtime directory (the seeds cannot know its name).
    std::string line = request.substr(1);
    for (size_t at; (at = line.find("RUN/")) != std::string::npos;) {
      line.replace(at, 3, options.runtime_dir);
    }
    const std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (!(how & 1) && words.size() >= 3 && words[0] == "config" && words[1] == "save") {
      continue;  // root may write any file: not here
    }
    hvswitch::ControlRequest r;
    r.line = line;
    r.peer.uid = (how & 1) ? 65534 : 0;
    r.file = (how & 2) ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
    std::set<std::string> names_before;
    for (const hvswitch::PortSpec& spec : bridge.PortSpecs()) names_before.insert(spec.name);
    hvswitch::ControlAnswer answer;
    try {
      answer = hvswitch::ExecuteControlCommand(bridge, options, r);
    } catch (...) {
      Require(false, "an exception escaped", line);
    }
    Require(!answer.connection_taken, "no connection was given to take", line);
    Require(answer.line.find('\n') == std::string::npos, "one line", line);
    json parsed = json::parse(answer.line, nullptr, false);
    Require(!parsed.is_discarded() && parsed.is_object() && parsed["ok"].is_boolean(),
            "a JSON object with a boolean ok", line);
    for (const hvswitch::PortSpec& spec : bridge.PortSpecs()) {
      if (names_before.count(spec.name) != 0) continue;
      Require(parsed["ok"].get<bool>(), "a refused request adds no port", line);
      // What a member added is a guest port in the runtime directory.
      const hvswitch::PortTraits traits = spec.Traits();
      Require(!(how & 1) || (!traits.root_only && traits.socket &&
                             hvswitch::IsDirectlyInside(*traits.socket, options.runtime_dir)),
              "a member added only what it may", line);
    }
  }
  Require(OpenFds() == fds_before, "every descriptor closed", input);
  // `config save` writes the daemon's own file into the runtime directory: clean it.
  DIR* dir = opendir(RuntimeDir().c_str());
  for (dirent* e; (e = readdir(dir)) != nullptr;) {
    if (e->d_name[0] != '.') unlink((RuntimeDir() + "/" + e->d_name).c_str());
  }
  closedir(dir);
  return 0;
}
