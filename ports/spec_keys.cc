#include "ports/spec_keys.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {

absl::Status SpecError(absl::string_view port_name, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("port '", port_name, "': ", problem));
}

absl::Status ParseSpecNumber(const PortSpec& spec, absl::string_view key, absl::string_view value,
                             absl::string_view what, uint32_t min, uint32_t max, uint32_t& out) {
  if (absl::SimpleAtoi(value, &out) && out >= min && out <= max) return absl::OkStatus();
  return SpecError(spec.name, absl::StrCat(key, " must be ", what, " from ", min, " to ", max));
}

absl::Status ParseSpecFlag(const PortSpec& spec, absl::string_view key, absl::string_view value,
                           bool& out) {
  if (value != "0" && value != "1") return SpecError(spec.name, absl::StrCat(key, " must be 0 or 1"));
  out = value == "1";
  return absl::OkStatus();
}

absl::Status ApplyPath(absl::string_view value, PortSpec& spec) {
  if (value.empty()) return SpecError(spec.name, "empty path");
  spec.path = std::string(value);
  return absl::OkStatus();
}

absl::Status ApplyClient(absl::string_view value, PortSpec& spec) {
  return ParseSpecFlag(spec, "client", value, spec.client);
}

absl::Status ApplyQueues(absl::string_view value, PortSpec& spec) {
  uint32_t queues = 0;
  absl::Status status =
      ParseSpecNumber(spec, "queues", value, "a number", 1, kMaxQueuesPerPort, queues);
  if (status.ok()) spec.queues = static_cast<uint16_t>(queues);
  return status;
}

}  // namespace hvswitch
