// One line to stderr per event, prefixed with the program name; journald adds the time.
// Control thread and start-up code only: never from a worker's packet path.
#pragma once

#include <cstdio>

#include "absl/strings/str_format.h"

namespace hvswitch {

template <typename... Args>
void Log(const absl::FormatSpec<Args...>& format, const Args&... args) {
  std::fprintf(stderr, "hvswitch: %s\n", absl::StrFormat(format, args...).c_str());
  std::fflush(stderr);
}

}  // namespace hvswitch
