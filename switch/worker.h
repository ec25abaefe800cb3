// Worker: a poll-mode loop on one lcore. It polls its receive queues in turn and hands
// every burst to its Forwarder, and reports a quiescent state after every round. Runs
// until `stop` is set by the control thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "switch/forwarder.h"
#include "switch/worker_quiescence.h"

namespace hvswitch {

struct RxQueueRef {
  uint16_t port;      // bridge port index
  uint16_t eth_port;  // ethdev id
  uint16_t queue;
};

class Worker {
 public:
  Worker(const ForwarderOptions& options, const Datapath& datapath, LearnQueue& learn,
         WorkerCounters& counters, WorkerQuiescence& quiescence,
         std::vector<RxQueueRef> rx_queues, uint16_t burst, const std::atomic<bool>& stop)
      : id_(options.worker), forwarder_(datapath, options, counters, learn),
        flushes_by_time_(options.flush_cycles != 0), counters_(counters),
        quiescence_(quiescence),
        rx_queues_(std::move(rx_queues)), burst_(burst), stop_(stop) {}

  uint16_t id() const { return id_; }
  const std::vector<RxQueueRef>& rx_queues() const { return rx_queues_; }

  // The lcore entry point for rte_eal_remote_launch; `self` is the Worker.
  static int Main(void* self);

 private:
  void Run();

  uint16_t id_;
  Forwarder forwarder_;
  bool flushes_by_time_;
  WorkerCounters& counters_;
  WorkerQuiescence& quiescence_;
  std::vector<RxQueueRef> rx_queues_;
  uint16_t burst_;
  const std::atomic<bool>& stop_;
};

}  // namespace hvswitch
