// The EAL command line hvswitch starts DPDK with, derived from its options. Pure function
// of its inputs so that the PCI rule (never probe an unconfigured device) is tested.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "switch/control/options.h"

namespace hvswitch {

struct EalPlan {
  std::vector<std::string> args;        // argv for rte_eal_init, program name first
  std::vector<unsigned> worker_lcores;  // EAL lcore id of each worker
  std::vector<unsigned> worker_cpus;    // the CPU each worker is pinned to
};

// `cpus`: the CPUs this process may run on. `free_hugepages`: whether any are free; if
// none are and the operator gave no memory options, DPDK runs on ordinary memory.
absl::StatusOr<EalPlan> PlanEal(const DaemonOptions& options, const std::vector<unsigned>& cpus,
                                bool free_hugepages);

}  // namespace hvswitch
