#include "switch/datapath/port_guards.h"

#include <rte_mbuf.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ports/port_spec.h"
#include "switch/datapath/datapath.h"

namespace hvswitch {
namespace {

// A rate and burst of `sharers` workers' meters: each an even share, never 0.
uint64_t Share(uint64_t total, uint16_t sharers) {
  return std::max<uint64_t>(1, (total + sharers - 1) / sharers);
}

absl::Status BuildMeter(GuardProfiles& out, GuardMeter m, uint64_t rate, uint64_t burst,
                        uint16_t sharers) {
  // No excess bucket (ebs 0): a frame conforms or is dropped.
  rte_meter_srtcm_params params{Share(rate, sharers), Share(burst, sharers), 0};
  const int rc = rte_meter_srtcm_profile_config(&out.profile[static_cast<size_t>(m)], &params);
  if (rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("meter rate ", rate, " burst ", burst,
                                                   ": rte_meter refused it (", rc, ")"));
  }
  out.meters |= uint8_t{1} << static_cast<size_t>(m);
  return absl::OkStatus();
}

}  // namespace

absl::Status BuildGuardProfiles(const GuardSpec& spec, uint16_t sharers, uint32_t generation,
                                GuardProfiles& out) {
  out = {};
  out.generation = generation;
  sharers = std::max<uint16_t>(sharers, 1);
  absl::Status status;
  if (spec.police_pps != 0) {
    const uint64_t burst = spec.police_pps_burst != 0 ? spec.police_pps_burst
                                                      : DefaultPacketBurst(spec.police_pps);
    status.Update(BuildMeter(out, GuardMeter::kPolicePackets, spec.police_pps, burst, sharers));
  }
  if (spec.police_bps != 0) {
    // The meter counts bytes: a rate in bits becomes one in bytes (at least one a second).
    const uint64_t burst = spec.police_bps_burst != 0 ? spec.police_bps_burst
                                                      : DefaultByteBurst(spec.police_bps);
    status.Update(BuildMeter(out, GuardMeter::kPoliceBytes,
                             std::max<uint64_t>(1, spec.police_bps / 8), burst, sharers));
  }
  for (size_t c = 0; c < kStormClasses; ++c) {
    if (spec.storm[c] == 0) continue;
    status.Update(BuildMeter(out, StormMeter(static_cast<StormClass>(c)), spec.storm[c],
                             DefaultPacketBurst(spec.storm[c]), sharers));
  }
  return status;
}

void BuildPortGuards(PortTable& table, size_t slot, const PortSpec* spec) {
  GuardProfiles& profiles = table.guards[slot];
  const uint32_t generation = profiles.generation + 1;
  if (spec == nullptr || GuardBits(spec->guards) == 0) {
    profiles.meters = 0;
    return;
  }
  uint16_t sharers = 0;
  for (const std::vector<RxQueueRef>& rx : table.rx) {
    if (std::any_of(rx.begin(), rx.end(),
                    [slot](const RxQueueRef& q) { return q.port == slot; })) {
      ++sharers;
    }
  }
  // The spec's values were checked when parsed: rte_meter takes every one of them.
  (void)BuildGuardProfiles(spec->guards, sharers, generation, profiles);
}

void BuildGuards(PortTable& table, const std::vector<const PortSpec*>& specs) {
  for (size_t p = 0; p < kMaxPorts; ++p) {
    BuildPortGuards(table, p, p < specs.size() ? specs[p] : nullptr);
  }
}

uint16_t MeterFrames(const GuardProfiles& profiles, GuardMeters& meters, GuardMeter m,
                     uint16_t n, uint64_t now) {
  rte_meter_srtcm& meter = meters.meter[static_cast<size_t>(m)];
  if (MeterFits(profiles, meters, m, n, now)) return n;
  // That check brought the bucket up to `now` and found fewer than n tokens in it: as many
  // frames pass as it holds (the bucket is rte_meter.h's public struct in DPDK 22.11).
  const auto pass = static_cast<uint16_t>(meter.tc);
  meter.tc = 0;
  return pass;
}

}  // namespace hvswitch
