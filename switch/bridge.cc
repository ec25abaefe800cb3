#include "switch/bridge.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <ctime>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ports/socket_path.h"
#include "switch/log.h"
#include "switch/mac_key.h"

namespace hvswitch {

uint32_t MonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint32_t>(ts.tv_sec);
}

absl::StatusOr<std::unique_ptr<Bridge>> Bridge::Create(const BridgeConfig& config) {
  std::unique_ptr<Bridge> bridge(new Bridge(config));
  absl::Status status = bridge->Init();
  if (!status.ok()) return status;
  return bridge;
}

absl::Status Bridge::Init() {
  const uint16_t nb_workers = static_cast<uint16_t>(config_.worker_lcores.size());
  if (nb_workers == 0 || nb_workers > kMaxWorkers) {
    return absl::InvalidArgumentError(absl::StrCat("need 1 to ", kMaxWorkers, " workers"));
  }
  if (config_.ports.size() > kMaxPorts) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxPorts, " ports"));
  }
  if (config_.burst == 0 || config_.burst > kMaxRxBurst) {
    return absl::InvalidArgumentError(absl::StrCat("burst must be 1 to ", kMaxRxBurst));
  }

  absl::Status status = CreatePool(nb_workers);
  if (!status.ok()) return status;

  absl::StatusOr<std::unique_ptr<Fdb>> fdb = Fdb::Create("hvs_fdb", config_.fdb_capacity);
  if (!fdb.ok()) return fdb.status();
  fdb_ = *std::move(fdb);
  datapath_.fdb = fdb_.get();
  ports_.resize(kMaxPorts);
  port_pools_.assign(kMaxPorts, nullptr);
  table_ = std::make_unique<PortTable>();
  table_->Configure(std::vector<const PortSpec*>{});
  datapath_.table.store(table_.get(), std::memory_order_release);

  counters_ = std::make_unique<WorkerCounters[]>(nb_workers);
  absl::StatusOr<std::unique_ptr<WorkerQuiescence>> quiescence =
      WorkerQuiescence::Create(nb_workers);
  if (!quiescence.ok()) return quiescence.status();
  quiescence_ = *std::move(quiescence);
  capture_ = std::make_unique<PacketCapture>(datapath_, [this] { quiescence_->Synchronize(); });
  for (uint16_t w = 0; w < nb_workers; ++w) {
    absl::StatusOr<std::unique_ptr<LearnQueue>> learn =
        LearnQueue::Create(absl::StrCat("hvs_learn", w), 4096);
    if (!learn.ok()) return learn.status();
    (*learn)->set_repeat_cycles(rte_get_tsc_hz() / 1000);
    learn_queues_.push_back(*std::move(learn));
    ForwarderOptions options;
    options.worker = w;
    options.flush_cycles = rte_get_tsc_hz() / 1000000 * config_.tx_flush_us;
    options.flush_batch = std::min(config_.burst, kMaxBurst);
    workers_.push_back(std::make_unique<Worker>(options, datapath_, *learn_queues_.back(),
                                                counters_[w], *quiescence_, config_.burst,
                                                stop_workers_));
  }
  // The startup ports are added as hvswitchctl adds ports, before the workers start.
  for (const PortSpec& spec : config_.ports) {
    status = AddPort(spec);
    if (!status.ok()) return status;
  }
  status = AddStaticMacs();
  if (!status.ok()) return status;
  FollowLinks();
  return absl::OkStatus();
}

absl::Status Bridge::AddPort(const PortSpec& spec) {
  if (PortIndex(spec.name) >= 0) {
    return absl::AlreadyExistsError(absl::StrCat("a port named '", spec.name, "' exists"));
  }
  int slot = -1;
  for (size_t p = ports_.size(); p-- > 0;) {
    if (ports_[p] == nullptr) {
      slot = static_cast<int>(p);  // the lowest free one, in the end
    } else if (spec.Traits().socket &&
               ports_[p]->spec().Traits().socket == spec.Traits().socket) {
      return absl::AlreadyExistsError(absl::StrCat("port '", spec.name, "': socket ",
                                                   spec.path, " belongs to port '",
                                                   ports_[p]->spec().name, "'"));
    }
  }
  if (slot < 0) {
    return absl::ResourceExhaustedError(absl::StrCat("at most ", kMaxPorts, " ports"));
  }
  absl::Status status = PrepareSocketPath(spec);
  if (!status.ok()) return status;
  const uint16_t nb_workers = static_cast<uint16_t>(workers_.size());
  const PortQueues queues =
      QueuesFor(spec, nb_workers, config_.rx_descriptors, config_.tx_descriptors);
  if (workers_running_ && spec.Traits().fills_rx_rings && spec.quota == 0) {
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
  if (!port.ok()) {
    if (*pool != nullptr) rte_mempool_free(*pool);
    return port.status();
  }
  std::unique_ptr<PortTable> table = NextTable(slot, &spec, port->get());
  const DatapathPort& dp = table->ports[slot];
  if ((*port)->device_mtu() < spec.mtu) {
    Log("port '%s': device reports MTU %d at most; it was configured so, and mtu=%d "
        "still decides what hvswitch sends it", spec.name, (*port)->device_mtu(), spec.mtu);
  }
  if (dp.shared_tx) {
    Log("port '%s': %d tx queues for %d workers: workers share them under a lock",
        spec.name, dp.nb_txq, nb_workers);
  }
  {
    std::unique_lock lock(ports_mu_);
    // No worker counts for an empty slot: the sums are what the slot's last port left.
    PortTotals base;
    for (size_t w = 0; w < workers_.size(); ++w) base.AddFrom(counters_[w].ports[slot]);
    base[PortCounter::kLearnLimited] += learn_refused_[slot].load(std::memory_order_relaxed);
    base[PortCounter::kLearnTableFull] +=
        learn_full_refused_[slot].load(std::memory_order_relaxed);
    counter_base_[slot] = base;
    ports_[slot] = *std::move(port);
    port_pools_[slot] = *pool;
  }
  if (spec.lock_mac) {
    ArmLock(static_cast<uint16_t>(slot));
  } else {
    PublishAllowedMacs(static_cast<uint16_t>(slot), spec.allowed_macs);
  }
  Publish(std::move(table));
  Log("port '%s' (%s %s): ready, ethdev %d, mac %s", spec.name, spec.type_name(),
      spec.Traits().endpoint, dp.eth_port,
      ports_[slot]->mac());
  if (ports_[slot]->reconnect().enabled) {
    const bool started = ports_[slot]->started();
    reconnect_at_[slot] =
        std::chrono::steady_clock::now() + ports_[slot]->reconnect().After(started);
    reconnect_failing_[slot] = !started;
    if (!started) {
      Log("port '%s': %s yet: trying every second", spec.name,
          ports_[slot]->reconnect().waiting);
    }
  }
  return absl::OkStatus();
}

absl::Status Bridge::RemovePort(absl::string_view name) {
  const int slot = PortIndex(name);
  if (slot < 0) return absl::NotFoundError(absl::StrCat("no port named '", name, "'"));
  const uint16_t p = static_cast<uint16_t>(slot);
  if (capture_->active() && capture_->port() == p) capture_->Stop();
  // From here on no worker polls the port, sends to it or holds a frame for it.
  Publish(NextTable(slot, nullptr, nullptr));
  // Learn requests the workers made before: applied now, then flushed with the rest.
  ApplyLearnRequests(datapath_.now_seconds.load(std::memory_order_relaxed));
  fdb_->FlushPort(p);
  for (const FdbEntryView& e : FdbEntries()) {
    if (e.port == p && e.is_static) {
      (void)fdb_->Remove(e.key, [this] { quiescence_->Synchronize(); });
    }
  }
  UpdateLearnLimits();
  PublishAllowedMacs(p, {});
  const uint64_t keep = ~(uint64_t{1} << p);
  lock_armed_ &= keep;
  datapath_.up_mask.fetch_and(keep, std::memory_order_relaxed);
  datapath_.csum_capable_mask.fetch_and(keep, std::memory_order_relaxed);
  datapath_.tso4_capable_mask.fetch_and(keep, std::memory_order_relaxed);
  datapath_.tso6_capable_mask.fetch_and(keep, std::memory_order_relaxed);
  std::unique_ptr<Port> port;
  rte_mempool* pool = nullptr;
  {
    std::unique_lock lock(ports_mu_);
    port = std::move(ports_[slot]);
    pool = port_pools_[slot];
    port_pools_[slot] = nullptr;
  }
  const std::string port_name = port->spec().name;
  port.reset();  // stops and closes the device, removes a socket hvswitch created
  RetirePool(pool);
  Log("port '%s': removed", port_name);
  return absl::OkStatus();
}

std::unique_ptr<PortTable> Bridge::NextTable(int slot, const PortSpec* spec, const Port* port,
                                             bool polled) const {
  auto table = std::make_unique<PortTable>(*table_);
  std::vector<const PortSpec*> specs(kMaxPorts, nullptr);
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] != nullptr) specs[p] = &ports_[p]->spec();
  }
  specs[slot] = spec;
  table->Configure(specs);
  for (std::vector<RxQueueRef>& rx : table->rx) {
    std::erase_if(rx, [slot](const RxQueueRef& q) { return q.port == slot; });
  }
  if (port == nullptr) return table;
  const uint16_t nb_workers = static_cast<uint16_t>(workers_.size());
  DatapathPort& dp = table->ports[slot];
  dp.eth_port = port->eth_port();
  dp.nb_txq = port->queues().nb_txq;
  dp.shared_tx = dp.nb_txq < nb_workers;
  dp.rx_offload = port->flags().rx_offload;
  dp.tx_prepare = port->flags().tx_prepare;
  dp.recount_chains = port->flags().recount_chains;
  dp.reclaim_tx = port->flags().reclaim_tx;
  // Each receive queue goes to the worker that polls the fewest; the others stay where
  // they are. A device that is not started (a memif client without its server) is not
  // polled.
  for (uint16_t q = 0; polled && port->started() && q < port->queues().nb_rxq; ++q) {
    auto least = std::min_element(table->rx.begin(), table->rx.begin() + nb_workers,
                                  [](const auto& a, const auto& b) { return a.size() < b.size(); });
    least->push_back({static_cast<uint16_t>(slot), port->eth_port(), q});
  }
  return table;
}

void Bridge::Reconnect(int slot) {
  const auto now = std::chrono::steady_clock::now();
  if (now < reconnect_at_[slot]) return;
  Port& port = *ports_[slot];
  // The device is stopped and started only while no worker polls it (its link is down, so
  // none sends to it either).
  Publish(NextTable(slot, &port.spec(), &port, /*polled=*/false));
  const bool started = port.Reconnect();
  Publish(NextTable(slot, &port.spec(), &port));
  reconnect_at_[slot] = now + port.reconnect().After(started);
  if (!started && !reconnect_failing_[slot]) {
    Log("port '%s': %s: trying every second", port.spec().name,
        port.reconnect().waiting);
  }
  reconnect_failing_[slot] = !started;
}

void Bridge::Publish(std::unique_ptr<PortTable> table) {
  std::unique_ptr<PortTable> old = std::move(table_);
  table->Seal();
  table_ = std::move(table);
  datapath_.table.store(table_.get(), std::memory_order_release);
  quiescence_->Synchronize();
}

void Bridge::RetirePool(rte_mempool* pool) {
  if (pool == nullptr) return;
  retired_pools_.push_back(pool);
  FreeReturnedPools();
}

void Bridge::FreeReturnedPools() {
  std::erase_if(retired_pools_, [](rte_mempool* pool) {
    if (rte_mempool_in_use_count(pool) != 0) return false;
    rte_mempool_free(pool);
    return true;
  });
}

std::vector<PortSpec> Bridge::PortSpecs() const {
  std::vector<PortSpec> specs;
  for (const auto& port : ports_) {
    if (port != nullptr) specs.push_back(port->spec());
  }
  return specs;
}

absl::Status Bridge::CreatePool(uint16_t nb_workers) {
  uint32_t mbufs = config_.mbufs;
  if (mbufs == 0) {
    // Enough mbufs to fill every descriptor ring, plus each worker's frames in flight and
    // waiting for a flush, and the per-lcore caches, so that a full ring never starves
    // another port. Jumbo frames take several mbufs each; they are rare enough in a ring
    // that the margin covers them.
    mbufs = 4096;
    for (const PortSpec& spec : config_.ports) {
      PortQueues q =
          QueuesFor(spec, nb_workers, config_.rx_descriptors, config_.tx_descriptors);
      mbufs += q.nb_rxq * q.rx_descriptors + q.nb_txq * q.tx_descriptors;
    }
    mbufs += nb_workers * kMaxBurst * (kMaxPorts / 8 + 2) + (nb_workers + 1) * 256;
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

// A port with a quota receives into a pool of its own of that many buffers: what its
// frames hold (in flight, queued, copies made for floods and tags, segments) comes out of
// it, and when it is empty the port's own traffic waits or is dropped, not the others'.
absl::StatusOr<rte_mempool*> Bridge::CreatePortPool(const PortSpec& spec,
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

absl::Status Bridge::AddStaticMacs() {
  for (const StaticMacSpec& mac : config_.static_macs) {
    absl::Status status = AddStaticMac(mac);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status Bridge::AddStaticMac(const StaticMacSpec& mac) {
  const int p = PortIndex(mac.port);
  if (p < 0) {
    return absl::InvalidArgumentError(absl::StrCat("static MAC ", KeyMacString(mac.key),
                                                   ": no port named '", mac.port, "'"));
  }
  uint16_t vlan = KeyVlan(mac.key);
  if (!((table_->vlans.members[vlan] >> p) & 1)) {
    return absl::InvalidArgumentError(absl::StrCat("static MAC ", KeyMacString(mac.key),
                                                   ": port '", mac.port,
                                                   "' does not carry VLAN ", vlan));
  }
  return fdb_->AddStatic(mac.key, static_cast<uint16_t>(p));
}

int Bridge::PortIndex(absl::string_view name) const {
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] != nullptr && ports_[p]->spec().name == name) return static_cast<int>(p);
  }
  return -1;
}

std::vector<FdbEntryView> Bridge::FdbEntries() const {
  std::vector<FdbEntryView> entries;
  fdb_->ForEach([&](const FdbEntryView& e) { entries.push_back(e); });
  return entries;
}

void Bridge::FlushFdb(int port) {
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] != nullptr && (port < 0 || static_cast<size_t>(port) == p)) {
      fdb_->FlushPort(static_cast<uint16_t>(p));
    }
  }
}

absl::Status Bridge::RemoveMac(uint64_t key) {
  return fdb_->Remove(key, [this] { quiescence_->Synchronize(); });
}

absl::Status Bridge::StartWorkers() {
  stop_workers_.store(false);
  for (const PortDriver* driver : PortDrivers()) driver->OnWorkersRunning(quiescence_.get());
  for (size_t w = 0; w < workers_.size(); ++w) {
    int rc = rte_eal_remote_launch(&Worker::Main, workers_[w].get(), config_.worker_lcores[w]);
    if (rc != 0) {
      StopWorkers();
      return absl::InternalError(absl::StrCat("cannot launch worker on lcore ",
                                              config_.worker_lcores[w], ": ", rte_strerror(-rc)));
    }
    workers_running_ = true;
    std::string queues;
    for (const RxQueueRef& q : table_->rx[w]) {
      absl::StrAppend(&queues, queues.empty() ? "" : " ", ports_[q.port]->spec().name, "/", q.queue);
    }
    Log("worker %d on lcore %d polls %s", w, config_.worker_lcores[w], queues);
  }
  return absl::OkStatus();
}

void Bridge::StopWorkers() {
  stop_workers_.store(true);
  if (workers_running_) {
    for (unsigned lcore : config_.worker_lcores) rte_eal_wait_lcore(lcore);
    workers_running_ = false;
    // rte_eal_wait_lcore synchronises inside DPDK, out of ThreadSanitizer's sight; the
    // workers' last (offline) report, read here, tells it too that they are done.
    quiescence_->Synchronize();
  }
}

Bridge::~Bridge() {
  StopWorkers();
  for (const PortDriver* driver : PortDrivers()) driver->OnWorkersRunning(nullptr);
  ports_.clear();  // stops and closes the devices before their mbufs' pool goes
  workers_.clear();
  learn_queues_.clear();
  fdb_.reset();
  for (rte_mempool* pool : port_pools_) rte_mempool_free(pool);
  for (rte_mempool* pool : retired_pools_) rte_mempool_free(pool);
  if (pool_ != nullptr) rte_mempool_free(pool_);
}

void Bridge::Poll() {
  uint32_t now = config_.clock();
  datapath_.now_seconds.store(now, std::memory_order_relaxed);
  PublishLockClaims();
  ApplyLearnRequests(now);
  UpdateLearnLimits();
  capture_->Poll();
  ++polls_;
  if (polls_ % 100 == 0) FollowLinks();
  if (polls_ % 1000 == 0) {
    AgeResult aged = fdb_->Age(now, config_.fdb_aging_seconds,
                               [this] { quiescence_->Synchronize(); });
    fdb_aged_.fetch_add(aged.aged, std::memory_order_relaxed);
    fdb_flushed_.fetch_add(aged.flushed, std::memory_order_relaxed);
    UpdateLearnLimits();
    FreeReturnedPools();
  }
}

// Moves are logged, at most 10 lines a second: a loop can move a MAC thousands of
// times a second, and the counter tells the rate.
void Bridge::LogMove(uint64_t key, uint16_t to_port, uint32_t now) {
  if (now != move_log_second_) {
    move_log_second_ = now;
    move_logs_this_second_ = 0;
  }
  if (++move_logs_this_second_ > 10) return;
  Log("fdb: %s (vlan %d) moved to port '%s'", KeyMacString(key), KeyVlan(key),
      ports_[to_port]->spec().name);
}

void Bridge::PublishAllowedMacs(uint16_t port, const std::vector<uint64_t>& macs) {
  datapath_.port_macs[port].Set(macs);
  const uint64_t bit = uint64_t{1} << port;
  secured_ports_ = macs.empty() ? secured_ports_ & ~bit : secured_ports_ | bit;
}

void Bridge::ArmLock(uint16_t port) {
  datapath_.port_macs[port].ArmLock();
  secured_ports_ &= ~(uint64_t{1} << port);
  lock_armed_ |= uint64_t{1} << port;
}

void Bridge::PublishLockClaim(uint16_t port) {
  const uint64_t mac = datapath_.port_macs[port].PublishClaim();
  if (mac == 0) return;
  secured_ports_ |= uint64_t{1} << port;
  lock_armed_ &= ~(uint64_t{1} << port);
  Log("port '%s': locked to %s", ports_[port]->spec().name, KeyMacString(mac));
}

void Bridge::PublishLockClaims() {
  for (uint64_t armed = lock_armed_; armed != 0; armed &= armed - 1) {
    PublishLockClaim(static_cast<uint16_t>(__builtin_ctzll(armed)));
  }
}

bool Bridge::SecurityAllowsLearn(uint64_t key, uint16_t port) {
  const uint64_t mac = KeyMac(key);
  PortMacs& allowed = datapath_.port_macs[port];
  // A worker claimed the lock before asking: the claim is the port's MAC from now on.
  if ((lock_armed_ >> port) & 1) PublishLockClaim(port);
  const uint32_t n = allowed.count.load(std::memory_order_relaxed);
  if (n != 0 && !allowed.Allows(mac, n)) return false;
  // Another port's own MAC may only be at stake where some other port is secured: no
  // second lookup per learn request on a switch without port security.
  if ((secured_ports_ & ~(uint64_t{1} << port)) == 0) return true;
  uint16_t owner = 0;
  if ((fdb_->LookupBulk(&key, 1, &owner) & 1) && owner != port &&
      ((datapath_.up_mask.load(std::memory_order_relaxed) >> owner) & 1)) {
    const PortMacs& owners = datapath_.port_macs[owner];
    const uint32_t owner_n = owners.count.load(std::memory_order_relaxed);
    if (owner_n != 0 && owners.Allows(mac, owner_n)) {
      fdb_locked_refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  return true;
}

void Bridge::ApplyLearnRequests(uint32_t now) {
  LearnRequest requests[256];
  for (auto& queue : learn_queues_) {
    unsigned n = queue->Drain(requests, 256);
    for (unsigned i = 0; i < n; ++i) {
      uint16_t port = static_cast<uint16_t>(requests[i].port);
      // A request from a port removed meanwhile.
      if (ports_[port] == nullptr || !SecurityAllowsLearn(requests[i].key, port)) continue;
      switch (fdb_->Learn(requests[i].key, port, now, ports_[port]->spec().LearnLimit())) {
        case LearnResult::kAdded:
          fdb_learned_.fetch_add(1, std::memory_order_relaxed);
          break;
        case LearnResult::kMoved:
          fdb_moves_.fetch_add(1, std::memory_order_relaxed);
          LogMove(requests[i].key, port, now);
          break;
        case LearnResult::kLimited:
          learn_refused_[port].fetch_add(requests[i].frames, std::memory_order_relaxed);
          break;
        case LearnResult::kStatic:
          fdb_static_refused_.fetch_add(1, std::memory_order_relaxed);
          break;
        case LearnResult::kFull:
          learn_full_refused_[port].fetch_add(requests[i].frames, std::memory_order_relaxed);
          break;
        case LearnResult::kCurrent:
          break;
      }
    }
  }
}

// Workers stop asking to learn on a port at its limit, or beyond its reserve of a full
// table (and count the frames instead), so that a guest flooding new source MACs costs the
// control thread nothing and cannot fill the learn rings that other ports' requests share.
void Bridge::UpdateLearnLimits() {
  uint64_t blocked = 0, full = 0;
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] == nullptr) continue;
    switch (fdb_->Room(static_cast<uint16_t>(p), ports_[p]->spec().LearnLimit())) {
      case LearnRoom::kYes:
        break;
      case LearnRoom::kFull:
        full |= uint64_t{1} << p;
        [[fallthrough]];
      case LearnRoom::kLimited:
        blocked |= uint64_t{1} << p;
        break;
    }
  }
  // The reason first: a worker seeing the bit in learn_blocked_mask reads it next.
  datapath_.learn_full_mask.store(full, std::memory_order_relaxed);
  datapath_.learn_blocked_mask.store(blocked, std::memory_order_relaxed);
}

void Bridge::FollowLinks() {
  uint64_t old_mask = datapath_.up_mask.load(std::memory_order_relaxed);
  uint64_t mask = 0, csum = 0, tso4 = 0, tso6 = 0;
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] == nullptr || !ports_[p]->LinkUp()) continue;
    const uint64_t bit = uint64_t{1} << p;
    mask |= bit;
    // Asked every time: a guest may reconnect with other features between two looks.
    const PeerOffloads offloads = ports_[p]->Offloads();
    if (offloads.csum) csum |= bit;
    if (offloads.tso4) tso4 |= bit;
    if (offloads.tso6) tso6 |= bit;
  }
  const uint64_t changed_offloads =
      ((csum ^ datapath_.csum_capable_mask.load(std::memory_order_relaxed)) |
       (tso4 ^ datapath_.tso4_capable_mask.load(std::memory_order_relaxed)) |
       (tso6 ^ datapath_.tso6_capable_mask.load(std::memory_order_relaxed))) & mask;
  datapath_.csum_capable_mask.store(csum, std::memory_order_relaxed);
  datapath_.tso4_capable_mask.store(tso4, std::memory_order_relaxed);
  datapath_.tso6_capable_mask.store(tso6, std::memory_order_relaxed);
  for (uint64_t changed = changed_offloads; changed != 0; changed &= changed - 1) {
    size_t p = static_cast<size_t>(__builtin_ctzll(changed));
    auto yes = [p](uint64_t m) { return (m >> p) & 1 ? "yes" : "no"; };
    Log("port '%s': peer offloads: csum=%s tso4=%s tso6=%s", ports_[p]->spec().name,
        yes(csum), yes(tso4), yes(tso6));
  }
  datapath_.up_mask.store(mask, std::memory_order_relaxed);
  // A port that went down forgets its MACs (and its lock) at once; reconnecting memif
  // clients, which may take a while, comes after.
  for (uint64_t changed = mask ^ old_mask; changed != 0; changed &= changed - 1) {
    size_t p = static_cast<size_t>(__builtin_ctzll(changed));
    bool up = (mask >> p) & 1;
    const PortSpec& spec = ports_[p]->spec();
    bool guest = spec.role() == PortRole::kGuest;
    if (!up) fdb_->FlushPort(static_cast<uint16_t>(p));
    if (!up && spec.lock_mac) {
      const PortMacs& macs = datapath_.port_macs[p];
      const bool held = !macs.Armed() || macs.claim.load(std::memory_order_relaxed) != 0;
      ArmLock(static_cast<uint16_t>(p));  // the next guest locks anew
      if (held) Log("port '%s': MAC lock released", spec.name);
    }
    Log("port '%s': %s", spec.name,
        up ? (guest ? "guest connected, link up" : "link up")
           : (guest ? "guest disconnected, link down, its MACs flushed"
                    : "link down, its MACs flushed"));
  }
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] == nullptr || !ports_[p]->reconnect().enabled) continue;
    if ((mask >> p) & 1) {
      // Connected: no handshake to protect any more, a peer that goes is retried at once.
      reconnect_at_[p] = {};
    } else {
      Reconnect(static_cast<int>(p));
    }
  }
}

BridgeSnapshot Bridge::Snapshot() const {
  BridgeSnapshot snap;
  snap[SwitchStat::kMbufs] = pool_->size;
  snap[SwitchStat::kMbufsInUse] = rte_mempool_in_use_count(pool_);
  uint64_t up_mask = datapath_.up_mask.load(std::memory_order_relaxed);
  std::shared_lock lock(ports_mu_);
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ports_[p] == nullptr) continue;
    const Port& port = *ports_[p];
    PortSnapshot ps;
    ps.index = static_cast<uint16_t>(p);
    ps.name = port.spec().name;
    ps.spec = port.spec().ToString();
    ps.type = std::string(port.spec().type_name());
    ps.mac = port.mac();
    ps.path = port.spec().Traits().endpoint;
    ps.up = (up_mask >> p) & 1;
    ps.mtu = port.spec().mtu;
    for (size_t w = 0; w < workers_.size(); ++w) ps.totals.AddFrom(counters_[w].ports[p]);
    ps.totals[PortCounter::kLearnLimited] += learn_refused_[p].load(std::memory_order_relaxed);
    ps.totals[PortCounter::kLearnTableFull] +=
        learn_full_refused_[p].load(std::memory_order_relaxed);
    ps.totals -= counter_base_[p];
    ps.fdb_learned = fdb_->learned(static_cast<uint16_t>(p));
    // The device's own drops: frames no worker saw (a new port's device counts from 0).
    const DeviceRxDrops device = port.RxDrops();
    ps.totals[RxDrop::kMissed] = device.missed;
    ps.totals[RxDrop::kRxError] = device.errors;
    ps.totals[RxDrop::kNoMbuf] = device.no_mbuf;
    ps.queue_stats = port.QueueStats();
    if (port_pools_[p] != nullptr) {
      ps.quota = port_pools_[p]->size;
      ps.buffers_in_use = rte_mempool_in_use_count(port_pools_[p]);
    }
    snap.ports.push_back(std::move(ps));
  }
  for (size_t w = 0; w < workers_.size(); ++w) {
    CoreSnapshot core;
    core.cpu = w < config_.worker_cpus.size() ? config_.worker_cpus[w] : 0;
    for (size_t i = 0; i < kCoreCounters; ++i) core.counts[i] = counters_[w].core[i].Read();
    snap[SwitchStat::kCaptureMissed] += counters_[w].capture_missed.Read();
    for (size_t b = 0; b < core.rx_bursts.size(); ++b) {
      core.rx_bursts[b] = counters_[w].rx_bursts[b].Read();
    }
    snap.cores.push_back(core);
  }
  snap[SwitchStat::kFdbEntries] = fdb_->size();
  snap[SwitchStat::kFdbLearned] = fdb_learned_.load(std::memory_order_relaxed);
  snap[SwitchStat::kFdbMoves] = fdb_moves_.load(std::memory_order_relaxed);
  snap[SwitchStat::kFdbAged] = fdb_aged_.load(std::memory_order_relaxed);
  snap[SwitchStat::kFdbFlushed] = fdb_flushed_.load(std::memory_order_relaxed);
  snap[SwitchStat::kFdbStatic] = fdb_->statics();
  snap[SwitchStat::kFdbStaticRefused] = fdb_static_refused_.load(std::memory_order_relaxed);
  snap[SwitchStat::kFdbLockedRefused] = fdb_locked_refused_.load(std::memory_order_relaxed);
  return snap;
}

}  // namespace hvswitch
