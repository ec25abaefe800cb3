// CNI errors as absl::Status: the spec's error code travels with the status (a payload),
// so that every layer can return an ordinary Status and only main() turns it into the
// spec's error object on stdout.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hvswitch::cni {

// The spec's well-known codes (CNI 1.0.0, "Error"), and ours from 100 up.
enum Code : int {
  kIncompatibleVersion = 1,
  kUnsupportedField = 2,
  kUnknownContainer = 3,
  kInvalidEnvironment = 4,
  kIoFailure = 5,
  kDecodingFailure = 6,
  kInvalidNetworkConfig = 7,
  kTryAgainLater = 11,
  // The port this attachment should have is not in hvswitch (CHECK).
  kPortMissing = 100,
  // A port of that name is there but is not the one ADD made (CHECK).
  kPortDiffers = 101,
  // hvswitch refused the request; its words are in the message.
  kSwitchRefused = 102,
  kInternal = 999,
};

// A status carrying `code`; `details` is the spec's optional longer text.
absl::Status Error(int code, absl::string_view msg, absl::string_view details = "");

// The CNI code a status carries; kInternal for a status made elsewhere.
int CodeOf(const absl::Status& status);
std::string DetailsOf(const absl::Status& status);

// {"cniVersion", "code", "msg"[, "details"]}: what a failed plugin prints on stdout.
nlohmann::json ErrorJson(const absl::Status& status, absl::string_view cni_version);

}  // namespace hvswitch::cni
