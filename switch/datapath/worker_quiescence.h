// WorkerQuiescence: the workers' RCU (rte_rcu_qsbr). Each worker reports a quiescent
// state once per poll-loop iteration, outside any packet processing; the control thread
// (or any non-worker thread) waits in Synchronize() until every online worker has done
// so, after which nothing a worker read before the call is still in use.
//
// A worker that blocks until a receive interrupt (--idle=interrupt) stays online: the
// queues it waits on belong to the table it read, and it must let go of them before a
// port can close. Each worker has an eventfd it also waits on; Synchronize rings the
// blocked ones, so that they wake, take the new table and report.
// Threads: Online/Quiescent/Offline/Block/Unblock from worker `id` only; Synchronize and
// WakeBlocked from non-workers.
#pragma once

#include <rte_rcu_qsbr.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ports/reader_grace.h"
#include "switch/datapath/datapath_limits.h"

namespace hvswitch {

class WorkerQuiescence final : public ReaderGrace {
 public:
  static absl::StatusOr<std::unique_ptr<WorkerQuiescence>> Create(uint32_t max_workers);
  ~WorkerQuiescence();
  WorkerQuiescence(const WorkerQuiescence&) = delete;
  WorkerQuiescence& operator=(const WorkerQuiescence&) = delete;

  void Online(uint32_t id) { rte_rcu_qsbr_thread_online(qsbr_, id); }
  void Quiescent(uint32_t id) { rte_rcu_qsbr_quiescent(qsbr_, id); }
  void Offline(uint32_t id) { rte_rcu_qsbr_thread_offline(qsbr_, id); }

  // Worker `id` is about to block on wake_fd(id); called before its last report. Either
  // that report sees a grace period begun meanwhile, or the period's Synchronize sees the
  // worker blocked and rings it (a fence on each side, between the store and the load).
  void Block(uint32_t id) {
    blocked_[id].store(true, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  void Unblock(uint32_t id) { blocked_[id].store(false, std::memory_order_relaxed); }
  // The eventfd worker `id` waits on beside its receive interrupts (nonblocking).
  int wake_fd(uint32_t id) const { return wake_fds_[id]; }
  // Rings every blocked worker: after a grace period began, or after `stop` was set.
  void WakeBlocked();

  // Two grace periods. A worker loads the port table just before it reports (it must
  // flush what it queued for the old table's ports first), so a report can acknowledge a
  // publication whose table the worker has not seen yet: it then uses the old table for
  // one more round. Only its next report proves it let go (found by ThreadSanitizer in
  // the port-churn test: the old table freed while a worker still read it).
  // rte_rcu_qsbr_start/check are the header's inline functions that
  // rte_rcu_qsbr_synchronize() calls in the library: inline, ThreadSanitizer sees the
  // acquire of each worker's report (DPDK itself is not instrumented).
  void Synchronize() {
    for (int period = 0; period < 2; ++period) {
      const uint64_t token = rte_rcu_qsbr_start(qsbr_);
      WakeBlocked();
      rte_rcu_qsbr_check(qsbr_, token, true);
    }
  }

  void WaitForReaders() override { Synchronize(); }

  rte_rcu_qsbr* qsbr() { return qsbr_; }

 private:
  explicit WorkerQuiescence(rte_rcu_qsbr* qsbr) : qsbr_(qsbr) { wake_fds_.fill(-1); }
  rte_rcu_qsbr* qsbr_;
  uint32_t nb_workers_ = 0;
  std::array<int, kMaxWorkers> wake_fds_;
  std::array<std::atomic<bool>, kMaxWorkers> blocked_{};
};

}  // namespace hvswitch
