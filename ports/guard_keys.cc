#include "ports/guard_keys.h"

#include <arpa/inet.h>

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

// `ADDR[/LENGTH]`, IPv4 or IPv6.
bool ParsePrefix(absl::string_view text, IpPrefix& out) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(text, absl::MaxSplits('/', 1));
  const std::string addr(parts.first);
  if (inet_pton(AF_INET, addr.c_str(), out.addr.data()) == 1) {
    out.v6 = false;
  } else if (inet_pton(AF_INET6, addr.c_str(), out.addr.data()) == 1) {
    out.v6 = true;
  } else {
    return false;
  }
  const uint32_t max = out.v6 ? 128 : 32;
  uint32_t length = max;
  if (text.find('/') != absl::string_view::npos &&
      (!absl::SimpleAtoi(parts.second, &length) || length > max)) {
    return false;
  }
  out.length = static_cast<uint8_t>(length);
  return true;
}

absl::Status ApplyIps(absl::string_view value, PortSpec& spec) {
  size_t v4 = 0, v6 = 0;
  for (absl::string_view text : absl::StrSplit(value, ',')) {
    IpPrefix prefix;
    if (!ParsePrefix(text, prefix)) {
      return SpecError(spec.name, absl::StrCat("ip: '", text, "' is not an IPv4 or IPv6 "
                                                        "address or prefix (ADDR[/LENGTH])"));
    }
    (prefix.v6 ? v6 : v4)++;
    spec.guards.ips.push_back(prefix);
  }
  if (v4 > kMaxPortIps || v6 > kMaxPortIps) {
    return SpecError(spec.name, absl::StrCat("ip: at most ", kMaxPortIps, " of each family"));
  }
  return absl::OkStatus();
}

absl::Status ApplyBpduGuard(absl::string_view value, PortSpec& spec) {
  return ParseSpecFlag(spec, "bpdu_guard", value, spec.guards.bpdu_guard);
}

absl::Status ApplyIpLearn(absl::string_view value, PortSpec& spec) {
  return ParseSpecFlag(spec, "ip_learn", value, spec.guards.ip_learn);
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
    {"ip", ApplyIps},
    {"ip_learn", ApplyIpLearn},
};

}  // namespace

std::span<const SpecKey> GuardKeys() { return kGuardKeys; }

std::string IpPrefixString(const IpPrefix& prefix) {
  char text[INET6_ADDRSTRLEN];
  inet_ntop(prefix.v6 ? AF_INET6 : AF_INET, prefix.addr.data(), text, sizeof(text));
  if (prefix.length == (prefix.v6 ? 128 : 32)) return text;
  return absl::StrCat(text, "/", prefix.length);
}

absl::Status CheckGuardKeys(const PortSpec& spec, const KeysGiven& given) {
  if (given.contains("police_pps_burst") && !given.contains("police_pps")) {
    return SpecError(spec.name, "police_pps_burst= needs police_pps=");
  }
  if (given.contains("police_bps_burst") && !given.contains("police_bps")) {
    return SpecError(spec.name, "police_bps_burst= needs police_bps=");
  }
  // A binding ties addresses to the port's MAC: a DHCP lease is the MAC's, a claim is made
  // from it. Without one fixed, any MAC could take the port's addresses.
  if (spec.guards.ip_learn && spec.allowed_macs.empty() && !spec.lock_mac) {
    return SpecError(spec.name, "ip_learn=1 needs the port's MAC fixed: mac= or lock=1");
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
  for (size_t i = 0; i < g.ips.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? ",ip=" : ",", IpPrefixString(g.ips[i]));
  }
  if (g.ip_learn) absl::StrAppend(&out, ",ip_learn=1");
}

}  // namespace hvswitch
