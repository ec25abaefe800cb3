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

absl::Status StoreSpecNumber(PortSpec& spec, absl::string_view key, absl::string_view value,
                             absl::string_view what, uint32_t min, uint32_t max,
                             uint32_t fallback) {
  uint32_t number = 0;
  absl::Status status = ParseSpecNumber(spec, key, value, what, min, max, number);
  if (!status.ok()) return status;
  if (number == fallback) {
    spec.driver_keys.Erase(key);
  } else {
    spec.driver_keys.Set(key, absl::StrCat(number));
  }
  return status;
}

absl::Status StoreSpecFlag(PortSpec& spec, absl::string_view key, absl::string_view value) {
  bool flag = false;
  absl::Status status = ParseSpecFlag(spec, key, value, flag);
  if (!status.ok()) return status;
  if (flag) {
    spec.driver_keys.Set(key, "1");
  } else {
    spec.driver_keys.Erase(key);
  }
  return status;
}

absl::Status ApplyPath(absl::string_view value, PortSpec& spec) {
  if (value.empty()) return SpecError(spec.name, "empty path");
  spec.driver_keys.Set("path", value);
  return absl::OkStatus();
}

absl::Status ApplyClient(absl::string_view value, PortSpec& spec) {
  return StoreSpecFlag(spec, "client", value);
}

absl::Status ApplyQueues(absl::string_view value, PortSpec& spec) {
  return StoreSpecNumber(spec, "queues", value, "a number", 1, kMaxQueuesPerPort,
                         kDefaultQueues);
}

}  // namespace hvswitch
