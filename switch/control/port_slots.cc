#include "switch/control/port_slots.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ports/guard_keys.h"
#include "ports/socket_path.h"
#include "switch/control/log.h"
#include "switch/datapath/datapath.h"

namespace hvswitch {
PortSlots::PortSlots(uint16_t nb_workers, uint16_t rx_descriptors, uint16_t tx_descriptors,
                     std::function<PortTotals(int slot)> sums)
    : nb_workers_(nb_workers),
      rx_descriptors_(rx_descriptors),
      tx_descriptors_(tx_descriptors),
      sums_(std::move(sums)),
      ports_(kMaxPorts),
      port_pools_(kMaxPorts, nullptr) {}

PortSlots::~PortSlots() {
  CloseAll();
  for (rte_mempool* pool : port_pools_) rte_mempool_free(pool);
  for (rte_mempool* pool : retired_pools_) rte_mempool_free(pool);
  if (pool_ != nullptr) rte_mempool_free(pool_);
}

absl::Status PortSlots::CreateSharedPool(uint32_t mbufs,
                                         const std::vector<PortSpec>& startup_ports) {
  if (mbufs == 0) {
    // Enough mbufs to fill every descriptor ring, plus each worker's frames in flight and
    // waiting for a flush, and the per-lcore caches, so that a full ring never starves
    // another port. Jumbo frames take several mbufs each; they are rare enough in a ring
    // that the margin covers them.
    mbufs = 4096;
    for (const PortSpec& spec : startup_ports) {
      PortQueues q = QueuesFor(spec, nb_workers_, rx_descriptors_, tx_descriptors_);
      mbufs += q.nb_rxq * q.rx_descriptors + q.nb_txq * q.tx_descriptors;
    }
    mbufs += nb_workers_ * kMaxBurst * (kMaxPorts / 8 + 2) + (nb_workers_ + 1) * 256;
  }
  pool_ = rte_pktmbuf_pool_create("hvs_mbufs", mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                  static_cast<int>(rte_socket_id()));
  if (pool_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot create a pool of ", mbufs, " mbufs: ", rte_strerror(rte_errno),
        " (give DPDK more memory: hugepages, or --eal=\"--no-huge -m 1024\")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> PortSlots::Open(const PortSpec& spec, bool workers_running) {
  if (Find(spec.name) >= 0) {
    return absl::AlreadyExistsError(absl::StrCat("a port named '", spec.name, "' exists"));
  }
  const absl::StatusOr<int> slot = FreeSlot(spec);
  if (!slot.ok()) return slot.status();
  absl::Status status = PrepareSocketPath(spec);
  if (!status.ok()) return status;
  PortQueues queues = QueuesFor(spec, nb_workers_, rx_descriptors_, tx_descriptors_);
  queues.rx_interrupts = rx_interrupts_;
  if (workers_running && spec.Traits().fills_rx_rings && spec.quota == 0) {
    // The shared pool was sized at startup for the ports then; a NIC fills its receive
    // rings from it at once.
    const uint32_t needs = uint32_t{queues.nb_rxq} * queues.rx_descriptors + 4096;
    const uint32_t free = rte_mempool_avail_count(pool_);
    if (free < needs) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "port '", spec.name, "': the shared buffer pool has ", free, " free buffers, the "
          "port needs ", needs, ": give it a pool of its own (quota=N) or start hvswitch "
          "with more --mbufs"));
    }
  }
  absl::StatusOr<rte_mempool*> pool = CreatePortPool(spec, queues);
  if (!pool.ok()) return pool.status();
  absl::StatusOr<std::unique_ptr<Port>> port =
      Port::Open(spec, static_cast<int>(next_device_++), queues,
                 *pool != nullptr ? *pool : pool_);
  if (port.ok()) {
    if (absl::Status given = GiveSocket(spec); !given.ok()) port = given;  // closes it
  }
  if (!port.ok()) {
    if (*pool != nullptr) rte_mempool_free(*pool);
    return port.status();
  }
  std::unique_lock lock(mu_);
  // No worker counts for an empty slot: the sums are what the slot's last port left.
  counter_base_[*slot] = sums_(*slot);
  ports_[*slot] = *std::move(port);
  port_pools_[*slot] = *pool;
  return *slot;
}

absl::Status PortSlots::SetSocketGroup(const std::string& group) {
  if (group.empty()) return absl::OkStatus();
  const struct group* g = getgrnam(group.c_str());
  if (g == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--socket_group: no group '", group, "'"));
  }
  socket_gid_ = g->gr_gid;
  return absl::OkStatus();
}

// The socket the device just created (bound when it started), for QEMU's group. Through
// a descriptor of the file itself: its folder may be QEMU's group's to write (RUNTIME_DIR/
// qemu), and a path could be swapped for a symbolic link to any file between the bind and
// the chown.
absl::Status PortSlots::GiveSocket(const PortSpec& spec) const {
  const PortTraits traits = spec.Traits();
  if (!socket_gid_ || !traits.owns_socket || !traits.socket) return absl::OkStatus();
  const int fd = open(traits.socket->c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st{};
  bool given = fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
               fchownat(fd, "", static_cast<uid_t>(-1), *socket_gid_, AT_EMPTY_PATH) == 0;
  // chmod has no descriptor form for an O_PATH file; its /proc link names this very inode.
  given = given && chmod(absl::StrCat("/proc/self/fd/", fd).c_str(), 0660) == 0;
  const int error = errno;
  if (fd >= 0) close(fd);
  if (!given) {
    return absl::InternalError(absl::StrCat("port '", spec.name, "': cannot give socket ",
                                            *traits.socket, " to --socket_group: ",
                                            fd >= 0 && !S_ISSOCK(st.st_mode)
                                                ? "not a socket"
                                                : strerror(error)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> PortSlots::FreeSlot(const PortSpec& spec) const {
  const std::optional<std::string> socket = spec.Traits().socket;
  int slot = -1;
  for (size_t p = ports_.size(); p-- > 0;) {
    if (ports_[p] == nullptr) {
      slot = static_cast<int>(p);  // the lowest free one, in the end
    } else if (socket && ports_[p]->spec().Traits().socket == socket) {
      return absl::AlreadyExistsError(absl::StrCat("port '", spec.name, "': socket ",
                                                   *socket, " belongs to port '",
                                                   ports_[p]->spec().name, "'"));
    }
  }
  if (slot < 0) {
    return absl::ResourceExhaustedError(absl::StrCat("at most ", kMaxPorts, " ports"));
  }
  return slot;
}

// A port with a quota receives into a pool of its own of that many buffers: what its
// frames hold (in flight, queued, copies made for floods and tags, segments) comes out of
// it, and when it is empty the port's own traffic waits or is dropped, not the others'.
absl::StatusOr<rte_mempool*> PortSlots::CreatePortPool(const PortSpec& spec,
                                                       const PortQueues& queues) {
  if (spec.quota == 0) return nullptr;
  // A NIC fills its receive rings with buffers up front.
  const uint32_t ring = spec.Traits().fills_rx_rings
                            ? uint32_t{queues.nb_rxq} * queues.rx_descriptors
                            : 0;
  if (spec.quota < ring + kMaxRxBurst) {
    return absl::InvalidArgumentError(absl::StrCat(
        "port '", spec.name, "': quota=", spec.quota, " is less than its receive rings hold (",
        ring, ") plus a burst (", kMaxRxBurst, ")"));
  }
  // Named uniquely: a removed port's pool may outlive it while its buffers come back.
  const std::string name = absl::StrCat("hvs_q", next_pool_++);
  rte_mempool* pool = rte_pktmbuf_pool_create(
      name.c_str(), spec.quota, std::min<uint32_t>(64, spec.quota / 8), 0,
      RTE_MBUF_DEFAULT_BUF_SIZE, static_cast<int>(rte_socket_id()));
  if (pool == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "port '", spec.name, "': cannot create its pool of ", spec.quota, " buffers: ",
        rte_strerror(rte_errno)));
  }
  return pool;
}

void PortSlots::Close(int slot) {
  std::unique_ptr<Port> port;
  rte_mempool* pool = nullptr;
  {
    std::unique_lock lock(mu_);
    port = std::move(ports_[slot]);
    pool = port_pools_[slot];
    port_pools_[slot] = nullptr;
  }
  port.reset();  // stops and closes the device, removes a socket hvswitch created
  RetirePool(pool);
}

void PortSlots::CloseAll() {
  for (std::unique_ptr<Port>& port : ports_) port.reset();
}

void PortSlots::RetirePool(rte_mempool* pool) {
  if (pool == nullptr) return;
  retired_pools_.push_back(pool);
  FreeReturnedPools();
}

void PortSlots::FreeReturnedPools() {
  std::erase_if(retired_pools_, [](rte_mempool* pool) {
    if (rte_mempool_in_use_count(pool) != 0) return false;
    rte_mempool_free(pool);
    return true;
  });
}

int PortSlots::Find(absl::string_view name) const {
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] != nullptr && ports_[p]->spec().name == name) return static_cast<int>(p);
  }
  return -1;
}

std::vector<PortSpec> PortSlots::Specs() const {
  std::vector<PortSpec> specs;
  for (const auto& port : ports_) {
    if (port != nullptr) specs.push_back(port->spec());
  }
  return specs;
}

std::vector<const PortSpec*> PortSlots::SpecSlots() const {
  std::vector<const PortSpec*> specs(kMaxPorts, nullptr);
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] != nullptr) specs[p] = &ports_[p]->spec();
  }
  return specs;
}

std::vector<PortSnapshot> PortSlots::Snapshot() const {
  std::vector<PortSnapshot> snaps;
  std::shared_lock lock(mu_);
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] == nullptr) continue;
    const Port& port = *ports_[p];
    PortSnapshot ps;
    ps.index = static_cast<uint16_t>(p);
    ps.name = port.spec().name;
    ps.spec = port.spec().ToString();
    for (const IpPrefix& prefix : port.spec().guards.ips) {
      ps.ip_bindings.push_back(IpPrefixString(prefix));
    }
    ps.type = std::string(port.spec().type_name());
    ps.mac = port.mac();
    ps.path = port.spec().Traits().endpoint;
    ps.mtu = port.spec().mtu;
    ps.totals = sums_(static_cast<int>(p));
    ps.totals -= counter_base_[p];
    // The device's own drops: frames no worker saw (a new port's device counts from 0).
    const DeviceRxDrops device = port.RxDrops();
    ps.totals[RxDrop::kMissed] = device.missed;
    ps.totals[RxDrop::kRxError] = device.errors;
    ps.totals[RxDrop::kNoMbuf] = device.no_mbuf;
    ps.queue_stats = port.QueueStats();
    ps.bond = port.Bond();
    if (port_pools_[p] != nullptr) {
      ps.quota = port_pools_[p]->size;
      ps.buffers_in_use = rte_mempool_in_use_count(port_pools_[p]);
    }
    snaps.push_back(std::move(ps));
  }
  return snaps;
}

void PortSlots::ScheduleReconnect(int slot, bool started, bool first, Clock::time_point now) {
  const Port& port = *ports_[slot];
  reconnect_at_[slot] = now + port.reconnect().After(started);
  if (!started && first) {
    Log("port '%s': %s yet: trying every second", port.spec().name, port.reconnect().waiting);
  } else if (!started && !reconnect_failing_[slot]) {
    Log("port '%s': %s: trying every second", port.spec().name, port.reconnect().waiting);
  }
  reconnect_failing_[slot] = !started;
}

}  // namespace hvswitch
