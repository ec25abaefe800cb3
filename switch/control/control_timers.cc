#include "switch/control/control_timers.h"

#include <algorithm>
#include <tuple>

namespace hvswitch {

ControlTimers::Due ControlTimers::Take(ControlClock::time_point now) {
  Due due;
  for (auto [when, period, flag] : {std::tuple{&age_, kAgePeriod, &due.age},
                                    std::tuple{&links_, kLinkPeriod, &due.links},
                                    std::tuple{&pools_, kPoolPeriod, &due.pools}}) {
    if (now < *when) continue;
    *flag = true;
    // On the period's grid, so that jobs due together stay together (one wake-up); from
    // now when the thread is a whole period late.
    *when += period;
    if (*when <= now) *when = now + period;
  }
  return due;
}

ControlClock::time_point ControlTimers::Next(ControlClock::time_point now, bool watching) const {
  ControlClock::time_point next = std::min({age_, links_, pools_});
  if (watching) next = std::min(next, now + kWatchPeriod);
  return next;
}

}  // namespace hvswitch
