// LinkLogLimit: the link lines of the log (link up, link down, peer offloads) are at most
// kLinesPerWindow per port a second: a guest that resets its virtio device in a loop could
// otherwise make the daemon write two lines per port per event, thousands a second. The
// changes past the limit are counted and told in one line once their second is over
// (Expired). Times come from the caller (tests inject them). Control thread only.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "switch/control/wakeup.h"
#include "switch/datapath/datapath_limits.h"

namespace hvswitch {

class LinkLogLimit {
 public:
  static constexpr int kLinesPerWindow = 20;
  static constexpr ControlClock::duration kWindow = std::chrono::seconds(1);

  struct HeldBack {
    int port;
    uint64_t lines;
  };

  // Whether a link line of `port` may be written at `now`; false: it is counted instead.
  bool Allow(int port, ControlClock::time_point now);
  // The ports whose second is over with lines held back, and how many; their counts
  // start again from zero.
  std::vector<HeldBack> Expired(ControlClock::time_point now);
  // The port's slot is emptied: returns the lines held back (not yet told), and forgets.
  uint64_t Forget(int port);

 private:
  struct Window {
    ControlClock::time_point start;
    int lines = 0;
    uint64_t held = 0;
  };
  std::array<Window, kMaxPorts> windows_{};
};

}  // namespace hvswitch
