// RxInterrupts: what a worker blocks on when quiet under --idle=interrupt. Its own epoll
// set holds the receive-interrupt event fds of the queues it polls
// (rte_eth_dev_rx_intr_ctl_q) and its wake-up eventfd (WorkerQuiescence::wake_fd). Arming
// enables the queues' interrupts (a vhost-user guest kicks again, a NIC raises them);
// Wait blocks until one fires or the control thread rings; Disarm turns them off again,
// so that a busy guest does not kick a worker that polls anyway.
//
// The queues are registered for one port table at a time: Release drops the registrations
// while that table's ports are still safe to use (before the worker's next quiescent
// state), so that no port closes with a worker's epoll set still naming its queues.
// Worker thread only; data path (no allocation after construction).
#pragma once

#include <rte_interrupts.h>

#include <cstdint>

#include "switch/datapath/datapath.h"

namespace hvswitch {

class RxInterrupts {
 public:
  enum class Wake : uint8_t { kInterrupt, kControl };

  // `wake_fd`: the eventfd the control thread rings. The epoll set is made on first use.
  explicit RxInterrupts(int wake_fd) : wake_fd_(wake_fd) {}
  ~RxInterrupts();
  RxInterrupts(const RxInterrupts&) = delete;
  RxInterrupts& operator=(const RxInterrupts&) = delete;

  // Enables the interrupts of worker `worker`'s queues in `table` (registering them first
  // if they are not yet). False when one cannot interrupt (logged once per table): the
  // worker then sleeps instead of blocking, and nothing is left enabled.
  bool Arm(const PortTable& table, uint16_t worker);
  // Turns the queues' interrupts off again (after a wait, or when the round after Arm
  // found frames).
  void Disarm();
  // Blocks until a queue's interrupt or a ring of wake_fd; says which woke it (a ring
  // counts first: the control thread has news). Only while armed.
  Wake Wait();
  // Drops the registrations (they name the queues of `registered()`).
  void Release();
  // The table whose queues are registered (null: none).
  const PortTable* registered() const { return table_; }
  bool armed() const { return armed_; }

 private:
  bool Register(const PortTable& table, uint16_t worker);

  int wake_fd_;
  int epfd_ = -1;
  rte_epoll_event wake_event_{};
  const PortTable* table_ = nullptr;
  uint16_t worker_ = 0;
  // Queues of table_->rx[worker_] registered so far (all of them, unless one refused).
  uint16_t nb_registered_ = 0;
  bool refused_ = false;  // one of table_'s queues cannot interrupt
  bool armed_ = false;
};

}  // namespace hvswitch
