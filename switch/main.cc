// hvswitch daemon: parses options, starts DPDK and the bridge, serves metrics, and runs
// the control loop on the main thread until SIGINT/SIGTERM. The loop sleeps until
// something needs it (Wakeup): a link event, a worker's learn request, an hvswitchctl
// connection, a signal, or the bridge's next periodic job.
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/exposer.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "ports/port_driver.h"
#include "ports/socket_path.h"
#include "switch/control/bridge.h"
#include "switch/control/command_handlers.h"
#include "switch/control/control_socket.h"
#include "switch/control/eal_args.h"
#include "switch/control/log.h"
#include "switch/control/metrics.h"
#include "switch/control/options.h"
#include "switch/control/telemetry_commands.h"
#include "switch/control/wakeup.h"
#include "switch/protocol/version.h"

namespace hvswitch {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_wakeup_fd{-1};  // the control loop's, once it has one

void OnSignal(int) {
  g_stop.store(true);
  Wakeup::Ring(g_wakeup_fd.load());
}

std::vector<unsigned> AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<unsigned> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {0};
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

bool HugepagesFree() {
  for (const char* path : {"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
                           "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages"}) {
    std::ifstream in(path);
    long pages = 0;
    if (in >> pages && pages > 0) return true;
  }
  return false;
}

void PrintDefaultConfigurationHelp(const DaemonOptions& options) {
  const std::string& dir = options.runtime_dir;
  absl::FPrintF(stderr, R"(
hvswitch is running its default configuration:
  vm1   vhost-user  %s/vm1.sock   (hvswitch is the server)
  vm2   vhost-user  %s/vm2.sock
  mem1  memif       %s/memif.sock (hvswitch is the memif server, id 0)
Attach a QEMU guest (guest memory must be shared):
  qemu-system-x86_64 ... -object memory-backend-memfd,id=mem,size=1G,share=on \
    -numa node,memdev=mem -chardev socket,id=chr0,path=%s/vm1.sock \
    -netdev vhost-user,id=net0,chardev=chr0 -device virtio-net-pci,netdev=net0
Attach a dpdk-testpmd guest over vhost-user:
  dpdk-testpmd --no-pci --file-prefix=guest1 --no-huge -m 512 \
    --vdev=net_virtio_user0,path=%s/vm2.sock -- -i --total-num-mbufs=8192
Attach a dpdk-testpmd guest over memif:
  dpdk-testpmd --no-pci --file-prefix=guest2 --no-huge -m 512 \
    --vdev=net_memif0,role=client,socket=%s/memif.sock,socket-abstract=no \
    -- -i --total-num-mbufs=8192
Metrics: %s
)",
               dir, dir, dir, dir, dir, dir,
               options.metrics_address.empty() ? std::string("off")
                                               : "http://" + options.metrics_address + "/metrics");
}

// Everything after EAL start-up; returns the exit code. Objects are destroyed in reverse
// order of creation: the metrics endpoint before the bridge it reads.
int RunSwitch(const DaemonOptions& options, const EalPlan& plan) {
  absl::StatusOr<std::unique_ptr<Wakeup>> wakeup = Wakeup::Create();
  if (!wakeup.ok()) {
    Log("%s", wakeup.status().message());
    return 1;
  }
  g_wakeup_fd.store((*wakeup)->fd());
  // Before the eventfd closes: a late signal must not write to a descriptor reused since.
  absl::Cleanup forget_wakeup = [] { g_wakeup_fd.store(-1); };
  BridgeConfig config;
  config.wakeup_fd = (*wakeup)->fd();
  config.ports = options.ports;
  config.worker_lcores = plan.worker_lcores;
  config.worker_cpus = plan.worker_cpus;
  config.fdb_capacity = options.fdb_capacity;
  config.fdb_aging_seconds = options.fdb_aging_seconds;
  config.static_macs = options.static_macs;
  config.mirrors = options.mirrors;
  config.mcast_snooping = options.mcast_snooping;
  config.mcast_aging = options.mcast_aging;
  config.burst = options.burst;
  config.rx_descriptors = options.rx_descriptors;
  config.tx_descriptors = options.tx_descriptors;
  config.mbufs = options.mbufs;
  config.tx_flush_us = options.tx_flush_us;
  config.idle = options.idle;
  config.idle_max_us = options.idle_max_us;
  config.idle_max_us_given = options.idle_max_us_given;
  config.socket_group = options.socket_group;
  absl::StatusOr<std::unique_ptr<Bridge>> bridge = Bridge::Create(config);
  if (!bridge.ok()) {
    Log("%s", bridge.status().message());
    return 1;
  }

  std::shared_ptr<MetricsCollector> collector;
  std::unique_ptr<prometheus::Exposer> exposer;
  if (!options.metrics_address.empty()) {
    try {
      // Civetweb gives each connection a thread until its request is in: more threads
      // than scrapers, and a connection that sends nothing is closed after two seconds,
      // so that idle connections cannot keep Prometheus out for long.
      exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
          "listening_ports", options.metrics_address, "num_threads", "8",
          "request_timeout_ms", "2000"});
    } catch (const std::exception& e) {
      Log("cannot serve metrics on %s: %s", options.metrics_address, e.what());
      return 1;
    }
    Bridge* b = bridge->get();
    collector = std::make_shared<MetricsCollector>([b] { return b->Snapshot(); });
    exposer->RegisterCollectable(collector);
    Log("metrics at http://%s/metrics", options.metrics_address);
  }

  Bridge* served = bridge->get();
  telemetry_commands::Serve([served] { return served->Snapshot(); });
  // Before the bridge goes, whichever way this function returns.
  absl::Cleanup stop_serving = [] { telemetry_commands::Serve(nullptr); };
  absl::Status started = (*bridge)->StartWorkers();
  if (!started.ok()) {
    Log("%s", started.message());
    return 1;
  }
  std::unique_ptr<ControlSocket> control;
  if (!options.ctl_socket.empty()) {
    // Only the last directory level is created, as for the runtime directory.
    std::string dir = options.ctl_socket.substr(0, options.ctl_socket.rfind('/'));
    if (!dir.empty()) mkdir(dir.c_str(), 0755);
    absl::StatusOr<std::unique_ptr<ControlSocket>> socket =
        ControlSocket::Listen(options.ctl_socket, options.ctl_group);
    if (!socket.ok()) {
      Log("%s", socket.status().message());
      (*bridge)->StopWorkers();
      return 1;
    }
    control = *std::move(socket);
    Log("hvswitchctl socket at %s", options.ctl_socket);
  }
  if (options.uses_default_ports) PrintDefaultConfigurationHelp(options);
  Log("forwarding between %d ports", (*bridge)->nb_ports());

  std::vector<pollfd> fds;
  while (!g_stop.load()) {
    // The commands first: the bridge's next deadline then counts what they changed (a
    // port added that must be watched).
    fds.clear();
    ControlClock::time_point deadline = ControlClock::time_point::max();
    if (control) {
      control->Poll([&](const ControlRequest& request) {
        return ExecuteControlCommand(**bridge, options, request);
      });
      control->AddPollFds(fds);
      deadline = control->NextDeadline();
    }
    deadline = std::min(deadline, (*bridge)->Poll());
    (*wakeup)->Wait(fds, deadline);
  }
  Log("stopping");
  control.reset();
  (*bridge)->StopWorkers();
  exposer.reset();
  return 0;
}

int Main(int argc, char** argv) {
  absl::StatusOr<DaemonOptions> options =
      ParseDaemonOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) {
    Log("%s", options.status().message());
    return 2;
  }
  if (options->help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  if (options->version) {
    std::printf("hvswitch %s\n", HVSWITCH_VERSION);
    return 0;
  }
  if (options->uses_default_ports) {
    // Only the last directory level is created: the runtime directory's parent is the
    // system's (/run) or the operator's.
    if (mkdir(options->runtime_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      Log("cannot create runtime directory %s: %s", options->runtime_dir, strerror(errno));
      return 1;
    }
  }
  // Where QEMU, not root under libvirt, creates the sockets of client=1 ports: the
  // runtime directory itself stays root's.
  if (!options->socket_group.empty()) {
    const std::string qemu_dir = options->runtime_dir + "/qemu";
    const struct group* g = getgrnam(options->socket_group.c_str());
    if (g == nullptr) {
      Log("--socket_group: no group '%s'", options->socket_group);
      return 1;
    }
    if ((mkdir(qemu_dir.c_str(), 0770) != 0 && errno != EEXIST) ||
        chown(qemu_dir.c_str(), 0, g->gr_gid) != 0 || chmod(qemu_dir.c_str(), 0770) != 0) {
      Log("cannot create %s for --socket_group: %s", qemu_dir, strerror(errno));
      return 1;
    }
  }
  // A reboot empties the runtime directory: the folders that a CNI plugin or a VM
  // launcher made below it went with the guests that used them. Started again from what it
  // saved, hvswitch leaves those ports out (whoever made them makes them again) rather than
  // refusing to start; anywhere else a missing folder is an error below.
  if (!options->save_config.empty()) {
    std::erase_if(options->ports, [&](const PortSpec& spec) {
      if (!SocketFolderGone(spec, options->runtime_dir)) return false;
      Log("port '%s': left out: the folder of its socket %s is gone (a reboot emptied %s)",
          spec.name, *spec.Traits().socket, options->runtime_dir);
      return true;
    });
  }
  for (const PortSpec& spec : options->ports) {
    absl::Status status = PrepareSocketPath(spec);
    if (!status.ok()) {
      Log("%s", status.message());
      return 1;
    }
  }
  absl::StatusOr<EalPlan> plan = PlanEal(*options, AvailableCpus(), HugepagesFree());
  if (!plan.ok()) {
    Log("%s", plan.status().message());
    return 2;
  }

  std::vector<char*> eal_argv;
  for (std::string& arg : plan->args) eal_argv.push_back(arg.data());
  if (rte_eal_init(static_cast<int>(eal_argv.size()), eal_argv.data()) < 0) {
    Log("cannot start DPDK (EAL): %s", rte_strerror(rte_errno));
    return 1;
  }
  struct sigaction action{};
  action.sa_handler = OnSignal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A client that goes before its answer is written must cost a failed write, not the
  // process (the metrics server ignores SIGPIPE too, but may be off).
  signal(SIGPIPE, SIG_IGN);
  // This thread runs the control loop: the port types set it up (no guest's peer may hold
  // it: connect() bounded), before the first port opens.
  for (const PortDriver* driver : PortDrivers()) driver->OnControlThread();

  int code = RunSwitch(*options, *plan);
  rte_eal_cleanup();
  // A port that failed half-way may have left its socket: remove every socket we own.
  for (const PortSpec& spec : options->ports) {
    if (spec.OwnsSocket()) RemoveSocketFile(*spec.Traits().socket);
  }
  return code;
}

}  // namespace
}  // namespace hvswitch

int main(int argc, char** argv) { return hvswitch::Main(argc, argv); }
