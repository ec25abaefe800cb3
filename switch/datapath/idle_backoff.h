// What a worker does between rounds that find nothing (--idle), and IdleBackoff, the
// sleep mode's schedule. Data path: one per worker, no shared state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace hvswitch {

enum class IdleMode : uint8_t {
  kPoll,       // spins: the lowest latency, a whole CPU at all hours
  kSleep,      // sleeps between empty rounds, backing off up to --idle_max_us
  kInterrupt,  // sleeps as kSleep, then blocks until a receive interrupt (RxInterrupts)
};
inline constexpr IdleMode kIdleModes[] = {IdleMode::kPoll, IdleMode::kSleep,
                                          IdleMode::kInterrupt};

inline constexpr std::string_view IdleModeName(IdleMode mode) {
  switch (mode) {
    case IdleMode::kPoll: return "poll";
    case IdleMode::kSleep: return "sleep";
    case IdleMode::kInterrupt: return "interrupt";
  }
  return "?";
}

// Once its rounds have found nothing for kQuietNs a worker sleeps kFirstSleepNs, each
// further sleep twice the last, up to its longest (PortTable::max_sleep_ns); a round that
// receives frames, or leaves some waiting to be sent, returns it to polling at once.
// Doubling keeps a frame's added delay near the quiet time before it; kQuietNs keeps
// traffic whose frames come closer than that from meeting a sleep at all (a short sleep
// is not short everywhere: on this project's VM one of 1-4 µs lasts 12-60 µs,
// tests/perf/results.md "Idle"). A quiet host costs a wake-up every longest sleep.
class IdleBackoff {
 public:
  static constexpr uint32_t kQuietNs = 50'000;
  static constexpr uint32_t kFirstSleepNs = 1000;

  explicit IdleBackoff(uint64_t tsc_hz) : quiet_cycles_(tsc_hz / 1'000'000'000.0 * kQuietNs) {}

  // After a round that ended at TSC `now`: how long to sleep before the next, in ns (0:
  // poll on). `received`: the frames the round took; `waiting`: frames wait in a transmit
  // buffer or are parked (a sleep would hold them); `max_ns`: the worker's longest sleep
  // now (0: never sleeps).
  uint32_t Next(uint32_t received, bool waiting, uint32_t max_ns, uint64_t now) {
    if (received != 0 || waiting || max_ns == 0) {
      quiet_since_ = 0;
      next_ns_ = kFirstSleepNs;
      return 0;
    }
    if (quiet_since_ == 0) quiet_since_ = now;
    if (now - quiet_since_ < quiet_cycles_) return 0;
    const uint32_t ns = std::min(next_ns_, max_ns);
    next_ns_ = next_ns_ > max_ns / 2 ? max_ns : next_ns_ * 2;  // never past max_ns
    return ns;
  }

 private:
  uint64_t quiet_cycles_;
  uint64_t quiet_since_ = 0;  // TSC of the first empty round in a row; 0: not quiet
  uint32_t next_ns_ = kFirstSleepNs;
};

}  // namespace hvswitch
