// The guardrail keys every port type has (police_*, storm_*, bpdu_guard=, ip=): parsed into
// PortSpec::guards, checked together, and written back for ToString.
#pragma once

#include <span>
#include <string>

#include "absl/status/status.h"
#include "ports/port_driver.h"
#include "ports/port_spec.h"

namespace hvswitch {

std::span<const SpecKey> GuardKeys();
// The combinations: a burst needs its rate.
absl::Status CheckGuardKeys(const PortSpec& spec, const KeysGiven& given);
// `,police_pps=N...` for the keys that differ from the defaults.
void AppendGuardKeys(const GuardSpec& guards, std::string& out);
// "10.0.0.5", "2001:db8::/64": as ip= takes it.
std::string IpPrefixString(const IpPrefix& prefix);

// The largest rates and bursts a key takes: 1 Tbit/s, 10^9 frames a second.
inline constexpr uint64_t kMaxGuardBps = 1'000'000'000'000;
inline constexpr uint64_t kMaxGuardPps = 1'000'000'000;

}  // namespace hvswitch
