// The plugin's end of hvswitch's control socket: the requests hvswitchctl sends for
// `port add`, `port show` and `port del`, with the same client (switch/ctl/client_socket.h)
// and the same command table (switch/protocol/commands.h), and the daemon's JSON answer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hvswitch::cni {

class SwitchClient {
 public:
  // `control_socket` empty: the daemon's default (RUNTIME_DIR/hvswitch.ctl).
  explicit SwitchClient(absl::string_view control_socket);

  // The daemon's normalised spec of the port it added.
  absl::StatusOr<std::string> AddPort(absl::string_view spec);
  // The port's detail (`port show`); kPortMissing when hvswitch has no such port.
  absl::StatusOr<nlohmann::json> ShowPort(absl::string_view name);
  // kPortMissing when hvswitch has no such port.
  absl::Status DeletePort(absl::string_view name);

  const std::string& socket_path() const { return socket_; }

 private:
  // One request, one answer, as hvswitchctl does. No daemon, or none that answers in
  // time: kTryAgainLater (it may be starting; the runtime retries). A refusal:
  // kSwitchRefused with the daemon's words, kPortMissing for "no port named".
  absl::StatusOr<nlohmann::json> Ask(const std::string& request);

  std::string socket_;
};

}  // namespace hvswitch::cni
