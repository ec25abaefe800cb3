// Learner: the control thread's half of learning. It applies the learn requests the
// workers queue to the FDB under the ports' learn limits and port security (mac=, lock=1),
// tells the workers which ports may not learn more, flushes and ages the table, keeps the
// static entries, and counts all of it (the fdb_* statistics and the per-port refusals).
// Threads: control thread only, except Stat and AddRefusals (any thread: Snapshot).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ports/port_spec.h"
#include "switch/control/wakeup.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/learn_queue.h"

namespace hvswitch {

class Learner {
 public:
  Learner(Fdb& fdb, Datapath& datapath, std::vector<LearnQueue*> queues);
  Learner(const Learner&) = delete;
  Learner& operator=(const Learner&) = delete;

  // A port in slot `port`: its learn limit and name (for the log) kept, its security
  // published (mac=, or lock=1 armed for the first source).
  void AddPort(uint16_t port, const PortSpec& spec);
  // Once no worker polls the port: the requests queued before are applied, then the
  // port's MACs forgotten (static ones too) and its security lifted.
  void RemovePort(uint16_t port);
  // The port's link went down: its learned MACs go, and a lock=1 port takes the next
  // guest's first source anew.
  void PortDown(uint16_t port);
  // Forgets the learned MACs of `port`, or of every port when -1 (static entries stay).
  void Flush(int port);
  // Whenever the control thread runs: claimed locks published, learn requests applied,
  // then the ports that may not learn more published to the workers. Returns how soon it
  // must run again: zero when a ring still holds requests (it took a ring's worth of each),
  // a millisecond when requests came (more are likely: the workers ring only once a ring
  // is half full), else ControlClock::duration::max() (a worker rings at its next request).
  // The queues' wake-ups are armed accordingly.
  ControlClock::duration Poll(uint32_t now);
  // Removes entries of flushed ports and entries not seen for `max_age` seconds (0: none):
  // in the whole table (Age), or in the next `buckets` of its buckets (AgeSlice).
  void Age(uint32_t now, uint32_t max_age) { AgeSlice(now, max_age, fdb_.buckets()); }
  void AgeSlice(uint32_t now, uint32_t max_age, uint32_t buckets);
  // One of `ticks_per_second` ageing ticks a second: a slice such that the whole table is
  // passed once a second while entries of a flushed port hold slots, else once every
  // max_age / 8 seconds (at least one; not at all when nothing ages). Entries go at most
  // an eighth of max_age late, and a large table is not read through every second (64 MB
  // a second at 4M entries, on a CPU the guests use) for an ageing time of minutes.
  void AgeTick(uint32_t now, uint32_t max_age, uint32_t ticks_per_second);
  absl::Status AddStatic(uint64_t key, uint16_t port);
  // A MAC the control plane knows is behind `port` (a remote MAC EVPN imported for a
  // tunnel port): learned there as the workers' requests are, or refreshed (it does not
  // age while the control plane keeps saying so).
  void LearnRemote(uint64_t key, uint16_t port, uint32_t now) { Apply(key, port, now, 0); }
  // Every current entry, learned or static, in table order.
  std::vector<FdbEntryView> Entries() const;
  // Removes an entry, learned or static.
  absl::Status Remove(uint64_t key);

  // Any thread: kFdbLearned, kFdbMoves, kFdbAged, kFdbFlushed, kFdbStaticRefused,
  // kFdbLockedRefused (0 for the statistics the learner does not count).
  uint64_t Stat(SwitchStat stat) const {
    return stats_[static_cast<size_t>(stat)].load(std::memory_order_relaxed);
  }
  // Any thread: adds the frames of `port` whose learn requests were refused here (learn
  // limit, full table), which the workers did not count.
  void AddRefusals(uint16_t port, PortTotals& totals) const;

 private:
  struct PortState {
    std::string name;
    uint32_t learn_limit = 0;
    bool lock_mac = false;
  };

  void Count(SwitchStat stat, uint64_t n = 1) {
    stats_[static_cast<size_t>(stat)].fetch_add(n, std::memory_order_relaxed);
  }
  // Returns Poll's answer.
  ControlClock::duration ApplyLearnRequests(uint32_t now);
  void ApplyLearnRequests(const LearnRequest* requests, unsigned n, uint32_t now);
  // One request: `frames` are counted as refused if the port may not learn it.
  void Apply(uint64_t key, uint16_t port, uint32_t now, uint32_t frames);
  void UpdateLearnLimits();
  void LogMove(uint64_t key, uint16_t to_port, uint32_t now);
  // Port security: what the workers accept as sources from `port` (mac=, or the MAC a
  // lock=1 port was locked to).
  void PublishAllowedMacs(uint16_t port, const std::vector<uint64_t>& macs);
  // A lock=1 port without a MAC: the first source a worker sees claims it (PortMacs).
  void ArmLock(uint16_t port);
  // Publishes the MAC a worker claimed on an armed lock=1 port (logged "locked to"); for
  // every armed port / one.
  void PublishLockClaims();
  void PublishLockClaim(uint16_t port);
  // False when a learn request must not be applied: a source the port may not use (its
  // frames are dropped from now on), or a connected secured guest's own MAC seen on
  // another port.
  bool SecurityAllowsLearn(uint64_t key, uint16_t port);

  Fdb& fdb_;
  Datapath& datapath_;
  std::vector<LearnQueue*> queues_;
  std::array<PortState, kMaxPorts> ports_;
  uint64_t present_ = 0;  // bit p set while slot p holds a port
  std::array<std::atomic<uint64_t>, kSwitchStats> stats_{};
  // Learn requests refused for the learn limit / a full table (frames the workers did not
  // catch). Per slot, never reset: a new port's counters start from the sums (PortSlots).
  std::array<std::atomic<uint64_t>, kMaxPorts> learn_refused_{}, learn_full_refused_{};
  // Bit p set while port p has allowed source MACs (mac=, or locked under lock=1).
  uint64_t secured_ports_ = 0;
  // Bit p set while lock=1 port p waits for its first source (PortMacs::ArmLock).
  uint64_t lock_armed_ = 0;
  uint32_t move_log_second_ = 0, move_logs_this_second_ = 0;
};

}  // namespace hvswitch
