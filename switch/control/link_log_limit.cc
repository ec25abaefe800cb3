#include "switch/control/link_log_limit.h"

namespace hvswitch {

bool LinkLogLimit::Allow(int port, ControlClock::time_point now) {
  Window& w = windows_[static_cast<size_t>(port)];
  // Lines held back and not yet told when a new second starts stay counted: Expired tells
  // them with the new second's.
  if (w.lines == 0 || now - w.start >= kWindow) {
    w.start = now;
    w.lines = 0;
  }
  if (w.lines < kLinesPerWindow) {
    ++w.lines;
    return true;
  }
  ++w.held;
  return false;
}

std::vector<LinkLogLimit::HeldBack> LinkLogLimit::Expired(ControlClock::time_point now) {
  std::vector<HeldBack> out;
  for (size_t p = 0; p < windows_.size(); ++p) {
    Window& w = windows_[p];
    if (w.held == 0 || now - w.start < kWindow) continue;
    out.push_back({static_cast<int>(p), w.held});
    w = Window{};
  }
  return out;
}

uint64_t LinkLogLimit::Forget(int port) {
  Window& w = windows_[static_cast<size_t>(port)];
  const uint64_t held = w.held;
  w = Window{};
  return held;
}

}  // namespace hvswitch
