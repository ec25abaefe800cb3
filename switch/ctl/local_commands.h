// What hvswitchctl does itself rather than ask the daemon: help, a capture (the file is
// opened here, with the caller's rights) and `config save FILE` (written here, likewise).
#pragma once

#include <optional>
#include <string>

#include "switch/protocol/commands.h"

namespace hvswitch::ctl {

// `usage: hvswitchctl ...` and every command, for --help and `hvswitchctl help`.
std::string UsageText();

// Runs `parsed` here when it is one of hvswitchctl's own; its exit status, or nullopt
// when the daemon answers it.
std::optional<int> RunLocally(const Parsed& parsed, const std::string& socket_path,
                              bool as_json);

}  // namespace hvswitch::ctl
