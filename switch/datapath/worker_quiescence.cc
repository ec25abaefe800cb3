#include "switch/datapath/worker_quiescence.h"

#include <rte_errno.h>
#include <rte_malloc.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {

absl::StatusOr<std::unique_ptr<WorkerQuiescence>> WorkerQuiescence::Create(
    uint32_t max_workers) {
  size_t size = rte_rcu_qsbr_get_memsize(max_workers);
  auto* qsbr = static_cast<rte_rcu_qsbr*>(rte_zmalloc("hvs_qsbr", size, RTE_CACHE_LINE_SIZE));
  if (qsbr == nullptr) return absl::ResourceExhaustedError("cannot allocate the worker RCU");
  if (rte_rcu_qsbr_init(qsbr, max_workers) != 0) {
    rte_free(qsbr);
    return absl::InternalError(absl::StrCat("rte_rcu_qsbr_init: ", rte_strerror(rte_errno)));
  }
  for (uint32_t id = 0; id < max_workers; ++id) rte_rcu_qsbr_thread_register(qsbr, id);
  std::unique_ptr<WorkerQuiescence> quiescence(new WorkerQuiescence(qsbr));
  for (uint32_t id = 0; id < max_workers && id < kMaxWorkers; ++id) {
    quiescence->wake_fds_[id] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (quiescence->wake_fds_[id] < 0) {
      return absl::InternalError(absl::StrCat("eventfd: ", strerror(errno)));
    }
    quiescence->nb_workers_ = id + 1;
  }
  return quiescence;
}

WorkerQuiescence::~WorkerQuiescence() {
  for (int fd : wake_fds_) {
    if (fd >= 0) close(fd);
  }
  rte_free(qsbr_);
}

void WorkerQuiescence::WakeBlocked() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (uint32_t id = 0; id < nb_workers_; ++id) {
    if (!blocked_[id].load(std::memory_order_relaxed)) continue;
    const uint64_t one = 1;
    // Nonblocking: a full counter (never, in practice) has rung already.
    [[maybe_unused]] ssize_t n = write(wake_fds_[id], &one, sizeof(one));
  }
}

}  // namespace hvswitch
