// How hvswitchctl shows the daemon's answers to people: the view is the one of the
// command hvswitchctl's words matched (switch/protocol/commands.h), never guessed from the answer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "switch/protocol/commands.h"

namespace hvswitch::ctl {

// A JSON value as a table cell: strings as they are, anything else as JSON.
std::string Text(const nlohmann::json& value);

// Prints a successful `answer` on stdout as `view` says.
void Render(View view, const nlohmann::json& answer);

}  // namespace hvswitch::ctl
