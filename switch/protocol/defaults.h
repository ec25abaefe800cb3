// Where the daemon and hvswitchctl meet when nobody says otherwise: both sides of the
// control socket need the same defaults, and hvswitchctl must not link the daemon's
// option parser to know them.
#pragma once

#include "absl/strings/string_view.h"

namespace hvswitch {

inline constexpr absl::string_view kDefaultMetricsAddress = "127.0.0.1:9417";
inline constexpr absl::string_view kDefaultRuntimeDir = "/run/hvswitch";
// The control socket's name inside the runtime directory.
inline constexpr absl::string_view kControlSocketName = "hvswitch.ctl";

}  // namespace hvswitch
