#include "switch/cni/cni_error.h"


#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hvswitch::cni {
namespace {

constexpr absl::string_view kCodeUrl = "hvswitch.cni/code";
constexpr absl::string_view kDetailsUrl = "hvswitch.cni/details";

// Only for readers of the status in logs and tests; the CNI code is what the runtime sees.
absl::StatusCode StatusCodeFor(int code) {
  switch (code) {
    case kIncompatibleVersion: return absl::StatusCode::kFailedPrecondition;
    case kUnsupportedField:
    case kInvalidEnvironment:
    case kDecodingFailure:
    case kInvalidNetworkConfig: return absl::StatusCode::kInvalidArgument;
    case kTryAgainLater: return absl::StatusCode::kUnavailable;
    case kUnknownContainer:
    case kPortMissing: return absl::StatusCode::kNotFound;
    case kPortDiffers: return absl::StatusCode::kAlreadyExists;
    case kSwitchRefused: return absl::StatusCode::kFailedPrecondition;
    default: return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status Error(int code, absl::string_view msg, absl::string_view details) {
  absl::Status status(StatusCodeFor(code), msg);
  status.SetPayload(kCodeUrl, absl::Cord(absl::StrCat(code)));
  if (!details.empty()) status.SetPayload(kDetailsUrl, absl::Cord(details));
  return status;
}

int CodeOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kCodeUrl);
  int code = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &code)) return kInternal;
  return code;
}

std::string DetailsOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kDetailsUrl);
  return payload ? std::string(*payload) : std::string();
}

nlohmann::json ErrorJson(const absl::Status& status, absl::string_view cni_version) {
  nlohmann::json error = {{"cniVersion", std::string(cni_version)},
                          {"code", CodeOf(status)},
                          {"msg", std::string(status.message())}};
  if (std::string details = DetailsOf(status); !details.empty()) error["details"] = details;
  return error;
}

}  // namespace hvswitch::cni
