#include "switch/eal_args.h"

#include <algorithm>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "ports/port.h"

namespace hvswitch {
namespace {

bool HasArg(const std::vector<std::string>& args, absl::string_view prefix) {
  return std::any_of(args.begin(), args.end(),
                     [&](const std::string& a) { return absl::StartsWith(a, prefix); });
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
  // The control thread (EAL main lcore 0) floats over the CPUs the workers leave free.
  std::vector<unsigned> control;
  for (unsigned cpu : cpus) {
    if (std::find(workers.begin(), workers.end(), cpu) == workers.end()) control.push_back(cpu);
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

  std::vector<std::string> pci;
  for (const PortSpec& spec : options.ports) {
    if (spec.type == PortType::kDpdk && IsPciDevargs(spec.devargs)) pci.push_back(spec.devargs);
  }
  if (pci.empty()) {
    plan.args.push_back("--no-pci");
  } else {
    for (const std::string& device : pci) {
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
  // memif zero-copy shares hvswitch's memory with the peer by one file per memory
  // segment list, which this mode gives (--no-huge has it anyway, but the memif PMD asks
  // the flag); vhost-user works either way.
  if (!HasArg(extra, "--single-file-segments") && !HasArg(extra, "--huge-unlink")) {
    plan.args.push_back("--single-file-segments");
  }
  if (!HasArg(extra, "--log-level")) plan.args.push_back("--log-level=lib.eal:warning");
  plan.args.insert(plan.args.end(), extra.begin(), extra.end());
  return plan;
}

}  // namespace hvswitch
