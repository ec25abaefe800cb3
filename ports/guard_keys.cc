#include "ports/guard_keys.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ports/spec_keys.h"

namespace hvswitch {
namespace {

// A count with an optional SI suffix (k, M, G: thousands, millions, billions), as
// operators write rates: 100M, 1.5G is not taken (a whole number before the suffix).
absl::Status ParseCount(const PortSpec& spec, absl::string_view key, absl::string_view value,
                        absl::string_view unit, uint64_t max, uint64_t& out) {
  uint64_t scale = 1;
  absl::string_view digits = value;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'k': scale = 1'000; break;
      case 'M': scale = 1'000'000; break;
      case 'G': scale = 1'000'000'000; break;
      default: break;
    }
    if (scale != 1) digits.remove_suffix(1);
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(digits, &n) || n == 0 || n > max / scale) {
    return SpecError(spec.name, absl::StrCat(key, " must be ", unit, " from 1 to ", max,
                                             " (k, M, G: thousands, millions, billions)"));
  }
  out = n * scale;
  return absl::OkStatus();
}

absl::Status ApplyPolicePps(absl::string_view value, PortSpec& spec) {
  return ParseCount(spec, "police_pps", value, "frames a second", kMaxGuardPps,
                    spec.guards.police_pps);
}
absl::Status ApplyPolicePpsBurst(absl::string_view value, PortSpec& spec) {
  return ParseCount(spec, "police_pps_burst", value, "a number of frames", kMaxGuardPps,
                    spec.guards.police_pps_burst);
}
absl::Status ApplyPoliceBps(absl::string_view value, PortSpec& spec) {
  return ParseCount(spec, "police_bps", value, "bits a second", kMaxGuardBps,
                    spec.guards.police_bps);
}
absl::Status ApplyPoliceBpsBurst(absl::string_view value, PortSpec& spec) {
  return ParseCount(spec, "police_bps_burst", value, "a number of bytes", kMaxGuardBps,
                    spec.guards.police_bps_burst);
}

constexpr absl::string_view kStormKeys[kStormClasses] = {"storm_broadcast", "storm_multicast",
                                                         "storm_unknown"};

template <StormClass kClass>
absl::Status ApplyStorm(absl::string_view value, PortSpec& spec) {
  const size_t c = static_cast<size_t>(kClass);
  return ParseCount(spec, kStormKeys[c], value, "frames a second", kMaxGuardPps,
                    spec.guards.storm[c]);
}

absl::Status ApplyBpduGuard(absl::string_view value, PortSpec& spec) {
  return ParseSpecFlag(spec, "bpdu_guard", value, spec.guards.bpdu_guard);
}

constexpr SpecKey kGuardKeys[] = {
    {"police_pps", ApplyPolicePps},
    {"police_pps_burst", ApplyPolicePpsBurst},
    {"police_bps", ApplyPoliceBps},
    {"police_bps_burst", ApplyPoliceBpsBurst},
    {"storm_broadcast", ApplyStorm<StormClass::kBroadcast>},
    {"storm_multicast", ApplyStorm<StormClass::kMulticast>},
    {"storm_unknown", ApplyStorm<StormClass::kUnknown>},
    {"bpdu_guard", ApplyBpduGuard},
};

}  // namespace

std::span<const SpecKey> GuardKeys() { return kGuardKeys; }

absl::Status CheckGuardKeys(const PortSpec& spec, const KeysGiven& given) {
  if (given.contains("police_pps_burst") && !given.contains("police_pps")) {
    return SpecError(spec.name, "police_pps_burst= needs police_pps=");
  }
  if (given.contains("police_bps_burst") && !given.contains("police_bps")) {
    return SpecError(spec.name, "police_bps_burst= needs police_bps=");
  }
  return absl::OkStatus();
}

void AppendGuardKeys(const GuardSpec& g, std::string& out) {
  if (g.police_pps != 0) absl::StrAppend(&out, ",police_pps=", g.police_pps);
  if (g.police_pps_burst != 0) absl::StrAppend(&out, ",police_pps_burst=", g.police_pps_burst);
  if (g.police_bps != 0) absl::StrAppend(&out, ",police_bps=", g.police_bps);
  if (g.police_bps_burst != 0) absl::StrAppend(&out, ",police_bps_burst=", g.police_bps_burst);
  for (size_t c = 0; c < kStormClasses; ++c) {
    if (g.storm[c] != 0) absl::StrAppend(&out, ",", kStormKeys[c], "=", g.storm[c]);
  }
  if (g.bpdu_guard) absl::StrAppend(&out, ",bpdu_guard=1");
}

}  // namespace hvswitch
