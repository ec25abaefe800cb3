// ControlTimers: when the control thread's periodic jobs are due. Between them, and
// between the events that wake it (Wakeup), the control thread sleeps: idle, it runs
// kAgeSlices times a second instead of once a millisecond.
//   age    a slice of the FDB every kAgePeriod (kAgeSlices a second), each short: the
//          whole table once a second after a flush, else once per ageing time / 8
//          (Learner::AgeTick)
//   links  every link followed every kLinkPeriod, whatever the devices reported (a guest's
//          offloads may change without its link; a kernel interface reports nothing)
//   pools  port pools whose buffers are all back freed, every second
//   watch  every kWatchPeriod while a port whose device reports no link events (memif)
//          is down: how late a guest that connects to it is seen at the latest
// Times come from the caller (tests inject them). Control thread only.
#pragma once

#include <chrono>
#include <cstdint>

#include "switch/control/wakeup.h"

namespace hvswitch {

class ControlTimers {
 public:
  static constexpr ControlClock::duration kAgePeriod = std::chrono::milliseconds(50);
  static constexpr uint32_t kAgeSlices = 20;
  static constexpr ControlClock::duration kLinkPeriod = std::chrono::milliseconds(100);
  static constexpr ControlClock::duration kPoolPeriod = std::chrono::seconds(1);
  static constexpr ControlClock::duration kWatchPeriod = std::chrono::milliseconds(10);

  struct Due {
    bool age = false;
    bool links = false;
    bool pools = false;
  };

  // Every job first due one period after `start`.
  explicit ControlTimers(ControlClock::time_point start)
      : age_(start + kAgePeriod), links_(start + kLinkPeriod), pools_(start + kPoolPeriod) {}

  // The jobs due at `now`, each then scheduled a period later (a period from now when the
  // control thread is a whole period late: it does not catch up in a burst).
  Due Take(ControlClock::time_point now);
  // When the next job is due; `watching`: a port is watched (kWatchPeriod from `now`).
  ControlClock::time_point Next(ControlClock::time_point now, bool watching) const;

 private:
  ControlClock::time_point age_, links_, pools_;
};

}  // namespace hvswitch
