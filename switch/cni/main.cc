// hvswitch-cni: a CNI plugin (spec 1.0.0) that attaches a pod's interface to hvswitch as a
// vhost-user or memif port, over hvswitch's control socket. A container runtime runs it
// with CNI_COMMAND and the attachment in the environment and the network configuration
// on stdin; it prints a result, or the spec's error object, on stdout.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "switch/cni/cni_commands.h"
#include "switch/cni/cni_error.h"
#include "switch/cni/cni_request.h"
#include "switch/cni/cni_result.h"

namespace hvswitch::cni {
namespace {

std::optional<std::string> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

void Print(const nlohmann::json& out) {
  std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

int Fail(const absl::Status& status, const std::string& version) {
  Print(ErrorJson(status, version.empty() ? std::string(kLatestVersion) : version));
  // The runtime logs stderr; the error object is for the runtime's code.
  std::fprintf(stderr, "hvswitch-cni: %s\n", std::string(status.message()).c_str());
  return 1;
}

int Main() {
  // A daemon that goes away while we write must not kill us before we say so.
  signal(SIGPIPE, SIG_IGN);
  const std::string input(std::istreambuf_iterator<char>(std::cin), {});
  const std::string version = VersionOf(input);
  absl::StatusOr<Command> command = ParseCommand(GetEnv);
  if (!command.ok()) return Fail(command.status(), version);
  // VERSION needs no attachment, and its input may be a bare {"cniVersion": ...}.
  if (*command == Command::kVersion) {
    Print(VersionJson());
    return 0;
  }
  absl::StatusOr<Request> request = ParseRequest(GetEnv, input);
  if (!request.ok()) return Fail(request.status(), version);
  switch (request->command) {
    case Command::kAdd: {
      absl::StatusOr<nlohmann::json> result = Add(*request);
      if (!result.ok()) return Fail(result.status(), version);
      Print(*result);
      return 0;
    }
    case Command::kDel:
      if (absl::Status status = Del(*request); !status.ok()) return Fail(status, version);
      return 0;
    case Command::kCheck:
      if (absl::Status status = Check(*request); !status.ok()) return Fail(status, version);
      return 0;
    case Command::kVersion:
      break;
  }
  return 0;
}

}  // namespace
}  // namespace hvswitch::cni

int main() {
  try {
    return hvswitch::cni::Main();
  } catch (const std::exception& e) {
    // Whatever a malformed input reaches must still end as the spec's error object.
    std::printf("{\"cniVersion\": \"1.0.0\", \"code\": 999, \"msg\": \"internal error\"}\n");
    std::fprintf(stderr, "hvswitch-cni: %s\n", e.what());
    return 1;
  }
}
