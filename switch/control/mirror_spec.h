// MirrorSpec: a port mirroring session (SPAN) as an operator writes it, on the command
// line and in a configuration file
//   --mirror=NAME,from=PORT[,PORT...],to=PORT[,direction=rx|tx|both][,vlan=V]
// and as hvswitchctl takes it
//   mirror add NAME --from PORT[,PORT...] --to PORT [--direction rx|tx|both] [--vlan V]
// Copies of what the `from` ports receive (rx) and are sent (tx) go to port `to`, the
// analyser, which then takes nothing else; with `vlan`, each copy gets an 802.1Q tag of
// that VLAN pushed in front. Plain data, checked here for its own sake only; the bridge
// checks it against the ports (switch/control/mirrors.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hvswitch {

struct MirrorSpec {
  std::string name;
  std::vector<std::string> from;
  bool rx = true, tx = true;  // direction: rx, tx or both (the default)
  std::string to;
  uint16_t vlan = 0;  // 1-4094; 0: the copies go as they are

  const char* direction() const { return rx && tx ? "both" : rx ? "rx" : "tx"; }
  // In the --mirror grammar (ParseMirrorSpec reads it back).
  std::string ToString() const;
  bool operator==(const MirrorSpec&) const = default;
};

inline constexpr size_t kMaxMirrorSources = 64;

// `--mirror=` text.
absl::StatusOr<MirrorSpec> ParseMirrorSpec(absl::string_view text);

// hvswitchctl's words: the name and the options' values (a comma-separated port list,
// the analyser, and the optional direction and VLAN as given).
absl::StatusOr<MirrorSpec> MirrorSpecFromWords(absl::string_view name, absl::string_view from,
                                               absl::string_view to,
                                               const std::optional<std::string>& direction,
                                               const std::optional<std::string>& vlan);

}  // namespace hvswitch
