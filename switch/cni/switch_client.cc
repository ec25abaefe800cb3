#include "switch/cni/switch_client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "switch/cni/cni_error.h"
#include "switch/ctl/client_socket.h"
#include "switch/protocol/commands.h"
#include "switch/protocol/defaults.h"

namespace hvswitch::cni {
namespace {

using nlohmann::json;

// A runtime kills a plugin that hangs only after minutes (or never): a daemon that takes
// the connection but does not answer must not hold the pod's start that long. The daemon
// itself gives a client 1 s to send and 2 s to take its answer.
constexpr int kAnswerTimeoutSeconds = 10;

std::string Words(CommandId id, absl::string_view arg) {
  return absl::StrCat(CommandFor(id).words, " ", arg);
}

}  // namespace

SwitchClient::SwitchClient(absl::string_view control_socket)
    : socket_(control_socket.empty()
                  ? absl::StrCat(kDefaultRuntimeDir, "/", kControlSocketName)
                  : std::string(control_socket)) {}

absl::StatusOr<json> SwitchClient::Ask(const std::string& request) {
  std::string error;
  const int sock = ctl::Connect(socket_, &error);
  if (sock < 0) return Error(kTryAgainLater, absl::StrCat("hvswitch: ", error));
  timeval timeout{kAnswerTimeoutSeconds, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::string line;
  if (ctl::SendRequest(sock, request, -1)) line = ctl::ReadLine(sock);
  close(sock);
  if (line.empty()) {
    return Error(kTryAgainLater, absl::StrCat("hvswitch did not answer on ", socket_));
  }
  json answer = json::parse(line, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) {
    return Error(kInternal, "hvswitch's answer is not JSON", line);
  }
  if (answer.value("ok", false)) return answer;
  const std::string refusal = answer.contains("error") && answer["error"].is_string()
                                  ? answer["error"].get<std::string>()
                                  : std::string("refused");
  if (absl::StartsWith(refusal, "no port named")) {
    return Error(kPortMissing, absl::StrCat("hvswitch: ", refusal));
  }
  return Error(kSwitchRefused, absl::StrCat("hvswitch: ", refusal), request);
}

absl::StatusOr<std::string> SwitchClient::AddPort(absl::string_view spec) {
  absl::StatusOr<json> answer = Ask(Words(CommandId::kPortAddSpec, spec));
  if (!answer.ok()) return answer.status();
  return answer->value("spec", std::string(spec));
}

absl::StatusOr<json> SwitchClient::ShowPort(absl::string_view name) {
  absl::StatusOr<json> answer = Ask(Words(CommandId::kPortShow, name));
  if (!answer.ok()) return answer.status();
  if (!answer->contains("port") || !(*answer)["port"].is_object()) {
    return Error(kInternal, "hvswitch's port show answer has no port");
  }
  return (*answer)["port"];
}

absl::Status SwitchClient::DeletePort(absl::string_view name) {
  return Ask(Words(CommandId::kPortDel, name)).status();
}

}  // namespace hvswitch::cni
