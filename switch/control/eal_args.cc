#include "switch/control/eal_args.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "ports/port_spec.h"

namespace hvswitch {
namespace {

bool HasArg(const std::vector<std::string>& args, absl::string_view prefix) {
  return std::any_of(args.begin(), args.end(),
                     [&](const std::string& a) { return absl::StartsWith(a, prefix); });
}

// What the port types need, each asked with its configured ports.
EalNeeds PortEalNeeds(const std::vector<PortSpec>& ports) {
  EalNeeds needs;
  for (const PortDriver* driver : PortDrivers()) {
    std::vector<const PortSpec*> mine;
    for (const PortSpec& spec : ports) {
      if (spec.driver == driver) mine.push_back(&spec);
    }
    driver->AddEalNeeds(mine, needs);
  }
  return needs;
}

}  // namespace

absl::StatusOr<EalPlan> PlanEal(const DaemonOptions& options, const std::vector<unsigned>& cpus,
                                bool free_hugepages) {
  if (cpus.empty()) return absl::InternalError("no CPU available");
  std::vector<unsigned> workers = options.worker_cpus;
  if (workers.empty()) workers.push_back(cpus.back());
  for (unsigned cpu : workers) {
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--lcores: CPU ", cpu, " is not available to this process"));
    }
  }
  // The control thread (EAL main lcore 0), and with it the threads DPDK creates (they take
  // its CPUs), floats over --control_cpus, by default the CPUs the workers leave free.
  std::vector<unsigned> control = options.control_cpus;
  for (unsigned cpu : control) {
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--control_cpus: CPU ", cpu, " is not available to this process"));
    }
  }
  if (control.empty()) {
    for (unsigned cpu : cpus) {
      if (std::find(workers.begin(), workers.end(), cpu) == workers.end()) control.push_back(cpu);
    }
  }
  if (control.empty()) control = cpus;

  EalPlan plan;
  plan.args.push_back("hvswitch");
  std::string lcores = absl::StrCat("0@(", absl::StrJoin(control, ","), ")");
  for (size_t w = 0; w < workers.size(); ++w) {
    absl::StrAppend(&lcores, ",", w + 1, "@", workers[w]);
    plan.worker_lcores.push_back(static_cast<unsigned>(w + 1));
    plan.worker_cpus.push_back(workers[w]);
  }
  plan.args.push_back(absl::StrCat("--lcores=", lcores));
  plan.args.push_back("--main-lcore=0");

  const EalNeeds needs = PortEalNeeds(options.ports);
  if (needs.pci_allow.empty()) {
    plan.args.push_back("--no-pci");
  } else {
    for (const std::string& device : needs.pci_allow) {
      plan.args.push_back("-a");
      plan.args.push_back(device);
    }
  }
  const std::vector<std::string>& extra = options.eal_args;
  if (!HasArg(extra, "--file-prefix") && !HasArg(extra, "--in-memory")) {
    plan.args.push_back("--file-prefix=hvswitch");
  }
  if (!free_hugepages && !HasArg(extra, "--no-huge") && !HasArg(extra, "-m") &&
      !HasArg(extra, "--socket-mem")) {
    plan.args.push_back("--no-huge");
    plan.args.push_back("-m");
    plan.args.push_back("512");
  }
  if (needs.single_file_segments && !HasArg(extra, "--single-file-segments") &&
      !HasArg(extra, "--huge-unlink")) {
    plan.args.push_back("--single-file-segments");
  }
  if (!HasArg(extra, "--log-level")) plan.args.push_back("--log-level=lib.eal:warning");
  plan.args.insert(plan.args.end(), extra.begin(), extra.end());
  return plan;
}

}  // namespace hvswitch
