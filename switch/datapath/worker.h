// Worker: a poll-mode loop on one lcore. It polls its receive queues (its share of the
// published PortTable) in turn, except those of ports its Forwarder paused for
// backpressure, hands every burst to the Forwarder, and reports a quiescent state after
// every round; a new table is taken between rounds. Between rounds that find nothing it
// may sleep (IdleBackoff, up to PortTable::max_sleep_ns), and under --idle=interrupt, once
// its sleeps reach their longest, block until a receive interrupt (RxInterrupts). Runs
// until `stop` is set by the control thread (which then rings blocked workers).
#pragma once

#include <rte_cycles.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "switch/datapath/forwarder.h"
#include "switch/datapath/idle_backoff.h"
#include "switch/datapath/rx_interrupts.h"
#include "switch/datapath/worker_quiescence.h"

namespace hvswitch {

class Worker {
 public:
  Worker(const ForwarderOptions& options, const Datapath& datapath, LearnQueue& learn,
         WorkerCounters& counters, WorkerQuiescence& quiescence, uint16_t burst,
         const std::atomic<bool>& stop)
      : id_(options.worker), datapath_(datapath), forwarder_(datapath, options, counters, learn),
        flushes_by_time_(options.flush_cycles != 0), counters_(counters),
        quiescence_(quiescence), burst_(burst), stop_(stop), idle_(rte_get_tsc_hz()),
        interrupts_(quiescence.wake_fd(options.worker)) {}

  uint16_t id() const { return id_; }

  // The lcore entry point for rte_eal_remote_launch; `self` is the Worker.
  static int Main(void* self);

  // One poll round over `table` (the one the forwarder uses): every receive queue of this
  // worker whose port is not paused for backpressure, then the transmits that are due.
  // Returns the frames received, sets `now` (TSC, after the polls) and adds to `busy` the
  // cycles of the poll calls that returned frames and of the work they caused. Worker
  // thread, or a test that stands in for it (the worker not launched).
  uint32_t Round(const PortTable& table, uint64_t& now, uint64_t& busy);
  // What the worker does before it lets go of the table it forwarded with: sends what
  // waits, drops what is parked (worker thread, or a test standing in for it).
  void LetGoOfTable();

 private:
  void Run();
  // Sleeps `ns` between rounds (--idle=sleep), counted; offline meanwhile.
  void Sleep(uint32_t ns);
  // --idle=interrupt, after a round over `table` that chose to sleep `sleep_ns` (its
  // longest: max_ns): true to block now (armed by the round before, which found nothing).
  // Arms the interrupts when the sleeps reached their longest (then sleep_ns becomes 0:
  // one more round first), and disarms them when the round after arming found frames.
  bool BlockNext(const PortTable& table, uint32_t& sleep_ns, uint32_t max_ns);
  // Blocks until a receive interrupt or the control thread's ring, counted as a sleep;
  // online meanwhile (WorkerQuiescence::Block).
  void Block();

  uint16_t id_;
  const Datapath& datapath_;
  Forwarder forwarder_;
  bool flushes_by_time_;
  WorkerCounters& counters_;
  WorkerQuiescence& quiescence_;
  uint16_t burst_;
  const std::atomic<bool>& stop_;
  IdleBackoff idle_;
  RxInterrupts interrupts_;
};

}  // namespace hvswitch
