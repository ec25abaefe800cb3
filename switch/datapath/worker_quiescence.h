// WorkerQuiescence: the workers' RCU (rte_rcu_qsbr). Each worker reports a quiescent
// state once per poll-loop iteration, outside any packet processing; the control thread
// (or any non-worker thread) waits in Synchronize() until every online worker has done
// so, after which nothing a worker read before the call is still in use.
// Threads: Online/Quiescent/Offline from worker `id` only; Synchronize from non-workers.
#pragma once

#include <rte_rcu_qsbr.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ports/reader_grace.h"

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
      rte_rcu_qsbr_check(qsbr_, rte_rcu_qsbr_start(qsbr_), true);
    }
  }

  void WaitForReaders() override { Synchronize(); }

  rte_rcu_qsbr* qsbr() { return qsbr_; }

 private:
  explicit WorkerQuiescence(rte_rcu_qsbr* qsbr) : qsbr_(qsbr) {}
  rte_rcu_qsbr* qsbr_;
};

}  // namespace hvswitch
