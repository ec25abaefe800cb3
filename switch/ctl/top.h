// `hvswitchctl top`: per-port rates, live — the daemon's `stats` asked every interval and
// the differences shown a second. What the quick start's demo shows.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hvswitch::ctl {

// One interval's rates from two `stats` answers `seconds` apart: per port frames, Mbit/s
// and drops a second, and the reason of most of its drops ("tx queue_full"; "" without
// drops). Ports in `now` only (added meanwhile) count from zero.
nlohmann::json PortRates(const nlohmann::json& before, const nlohmann::json& now,
                         double seconds);

// `top [--interval S] [--count N]`: until Ctrl-C or N tables; with --json one line of
// PortRates a table. Its exit status.
int Top(const std::string& socket_path, const std::vector<std::string>& args, bool as_json);

}  // namespace hvswitch::ctl
