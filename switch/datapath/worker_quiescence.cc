#include "switch/datapath/worker_quiescence.h"

#include <rte_errno.h>
#include <rte_malloc.h>

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
  return std::unique_ptr<WorkerQuiescence>(new WorkerQuiescence(qsbr));
}

WorkerQuiescence::~WorkerQuiescence() { rte_free(qsbr_); }

}  // namespace hvswitch
