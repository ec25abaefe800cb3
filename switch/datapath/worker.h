// Worker: a poll-mode loop on one lcore. It polls its receive queues (its share of the
// published PortTable) in turn and hands every burst to its Forwarder, and reports a
// quiescent state after every round; a new table is taken between rounds. Runs until
// `stop` is set by the control thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "switch/datapath/forwarder.h"
#include "switch/datapath/worker_quiescence.h"

namespace hvswitch {

class Worker {
 public:
  Worker(const ForwarderOptions& options, const Datapath& datapath, LearnQueue& learn,
         WorkerCounters& counters, WorkerQuiescence& quiescence, uint16_t burst,
         const std::atomic<bool>& stop)
      : id_(options.worker), datapath_(datapath), forwarder_(datapath, options, counters, learn),
        flushes_by_time_(options.flush_cycles != 0), counters_(counters),
        quiescence_(quiescence), burst_(burst), stop_(stop) {}

  uint16_t id() const { return id_; }

  // The lcore entry point for rte_eal_remote_launch; `self` is the Worker.
  static int Main(void* self);

 private:
  void Run();

  uint16_t id_;
  const Datapath& datapath_;
  Forwarder forwarder_;
  bool flushes_by_time_;
  WorkerCounters& counters_;
  WorkerQuiescence& quiescence_;
  uint16_t burst_;
  const std::atomic<bool>& stop_;
};

}  // namespace hvswitch
