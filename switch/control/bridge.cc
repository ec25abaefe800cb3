#include "switch/control/bridge.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <ctime>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ports/guard_keys.h"
#include "switch/control/log.h"
#include "switch/control/rx_hold.h"
#include "switch/datapath/mac_key.h"

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

  link_events_ = std::make_unique<LinkEvents>(datapath_, config_.wakeup_fd);
  slots_ = std::make_unique<PortSlots>(nb_workers, config_.rx_descriptors,
                                       config_.tx_descriptors,
                                       [this](int slot) { return SlotSums(slot); });
  absl::Status status = slots_->SetSocketGroup(config_.socket_group);
  if (!status.ok()) return status;
  status = slots_->CreateSharedPool(config_.mbufs, config_.ports);
  if (!status.ok()) return status;

  absl::StatusOr<std::unique_ptr<Fdb>> fdb = Fdb::Create("hvs_fdb", config_.fdb_capacity);
  if (!fdb.ok()) return fdb.status();
  fdb_ = *std::move(fdb);
  datapath_.fdb = fdb_.get();
  table_ = std::make_unique<PortTable>();
  table_->Configure(std::vector<const PortSpec*>{});
  table_->idle_max_ns = config_.idle != IdleMode::kPoll ? config_.idle_max_us * 1000 : 0;
  table_->idle_interrupt = config_.idle == IdleMode::kInterrupt;
  slots_->set_rx_interrupts(table_->idle_interrupt);
  datapath_.table.store(table_.get(), std::memory_order_release);

  counters_ = std::make_unique<WorkerCounters[]>(nb_workers);
  absl::StatusOr<std::unique_ptr<WorkerQuiescence>> quiescence =
      WorkerQuiescence::Create(nb_workers);
  if (!quiescence.ok()) return quiescence.status();
  quiescence_ = *std::move(quiescence);
  capture_ = std::make_unique<PacketCapture>(datapath_, [this] { quiescence_->Synchronize(); });
  for (uint16_t w = 0; w < nb_workers; ++w) {
    absl::StatusOr<std::unique_ptr<LearnQueue>> learn =
        LearnQueue::Create(absl::StrCat("hvs_learn", w), LearnQueue::kRingSize);
    if (!learn.ok()) return learn.status();
    (*learn)->set_repeat_cycles(rte_get_tsc_hz() / 1000);
    (*learn)->set_wakeup_fd(config_.wakeup_fd);
    learn_queues_.push_back(*std::move(learn));
    ForwarderOptions options;
    options.worker = w;
    options.flush_cycles = rte_get_tsc_hz() / 1000000 * config_.tx_flush_us;
    options.flush_batch = std::min(config_.burst, kMaxBurst);
    options.retry_window_cycles = rte_get_tsc_hz() / 1000000 * kTxRetryWindowUs;
    options.park_window_cycles = rte_get_tsc_hz() / 1000000 * kParkWindowUs;
    options.pause_period_cycles = rte_get_tsc_hz() / 1000000 * kPausePeriodUs;
    options.pause_budget_cycles = rte_get_tsc_hz() / 1000000 * kPauseBudgetUs;
    workers_.push_back(std::make_unique<Worker>(options, datapath_, *learn_queues_.back(),
                                                counters_[w], *quiescence_, config_.burst,
                                                stop_workers_));
  }
  std::vector<LearnQueue*> queues;
  for (const auto& queue : learn_queues_) queues.push_back(queue.get());
  learner_ = std::make_unique<Learner>(*fdb_, datapath_, std::move(queues));
  TunnelFdb tunnel_fdb;
  tunnel_fdb.port_of = [this](uint64_t key) {
    uint16_t port = 0;
    return fdb_->LookupBulk(&key, 1, &port) == 1 ? int{port} : -1;
  };
  tunnel_fdb.version = [this] { return fdb_->version(); };
  tunnel_fdb.for_each = [this](absl::FunctionRef<void(const FdbEntryView&)> fn) {
    fdb_->ForEach(fn);
  };
  tunnel_fdb.learn_remote = [this](uint64_t key, int slot) {
    learner_->LearnRemote(key, static_cast<uint16_t>(slot), config_.clock());
  };
  tunnel_fdb.remove = [this](uint64_t key) { learner_->Remove(key).IgnoreError(); };
  tunnels_ = std::make_unique<VxlanTunnels>(*quiescence_, std::move(tunnel_fdb));
  absl::StatusOr<std::unique_ptr<SnoopQueue>> snoop = SnoopQueue::Create("hvs_snoop");
  if (!snoop.ok()) return snoop.status();
  snoop_ = *std::move(snoop);
  snoop_->set_wakeup_fd(config_.wakeup_fd);
  datapath_.snoop = snoop_.get();
  if (config_.mcast_snooping) {
    mcast_ = std::make_unique<McastSnooping>(config_.mcast_aging);
    PublishMcast();  // an empty table: every group floods until it is joined
  }
  // Copies in flight: an analyser's transmit rings, the workers' buffers for it.
  mirrors_ = std::make_unique<Mirrors>(
      datapath_, std::max<uint32_t>(4095, 2u * config_.tx_descriptors * nb_workers));
  // The startup ports are added as hvswitchctl adds ports, before the workers start;
  // tunnels after the rest, whatever the order given: their uplinks must exist.
  for (const bool tunnels : {false, true}) {
    for (const PortSpec& spec : config_.ports) {
      if ((spec.driver == &VxlanDriver()) != tunnels) continue;
      status = AddPort(spec);
      if (!status.ok()) return status;
    }
  }
  for (const StaticMacSpec& mac : config_.static_macs) {
    status = AddStaticMac(mac);
    if (!status.ok()) return status;
  }
  for (const MirrorSpec& mirror : config_.mirrors) {
    status = AddMirror(mirror);
    if (!status.ok()) return status;
  }
  FollowLinks(ControlClock::now());
  return absl::OkStatus();
}

PortTotals Bridge::SlotSums(int slot) const {
  PortTotals sums;
  for (size_t w = 0; w < workers_.size(); ++w) sums.AddFrom(counters_[w].ports[slot]);
  learner_->AddRefusals(static_cast<uint16_t>(slot), sums);
  return sums;
}

absl::Status Bridge::AddPort(const PortSpec& spec) {
  const absl::StatusOr<int> opened = slots_->Open(spec, workers_running_);
  if (!opened.ok()) return opened.status();
  const int slot = *opened;
  const Port& port = *slots_->port(slot);
  std::unique_ptr<PortTable> table = NextTable(slot, &spec, &port);
  const DatapathPort& dp = table->ports[slot];
  // A device ring that fills before the longest sleep ends (idle_max_ns is 0 in poll mode).
  if (dp.rx_hold_ns < table->idle_max_ns) {
    const std::string why =
        absl::StrFormat("port '%s': its receive ring of %d descriptors holds %.1f us of "
                        "64-byte frames at line rate",
                        spec.name, port.queues().rx_descriptors, dp.rx_hold_ns / 1e3);
    if (config_.idle_max_us_given) {
      slots_->Close(slot);
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s, less than --idle_max_us=%d: raise --rx_descriptors or lower --idle_max_us", why,
          config_.idle_max_us));
    }
    Log("%s: the workers polling it sleep at most that long", why);
  }
  if (table->idle_interrupt && !port.rx_interrupts() && port.started()) {
    Log("port '%s': its device has no receive interrupts: the workers polling it sleep "
        "(at most %.0f us) instead of blocking", spec.name, table->idle_max_ns / 1e3);
  }
  link_events_->Map(port.eth_port(), slot);
  // A device that reports no link changes (memif) is looked at by the control thread.
  rte_eth_dev_info info{};
  const bool reports_links = rte_eth_dev_info_get(port.eth_port(), &info) == 0 &&
                             info.dev_flags != nullptr &&
                             (*info.dev_flags & RTE_ETH_DEV_INTR_LSC);
  if (!reports_links && spec.role() == PortRole::kGuest) watched_ |= uint64_t{1} << slot;
  if (port.device_mtu() < spec.mtu) {
    Log("port '%s': device reports MTU %d at most; it was configured so, and mtu=%d "
        "still decides what hvswitch sends it", spec.name, port.device_mtu(), spec.mtu);
  }
  if (!port.setup().note.empty()) Log("port '%s': %s", spec.name, port.setup().note);
  if (!port.setup().caveat.empty()) Log("port '%s': %s", spec.name, port.setup().caveat);
  if (dp.shared_tx) {
    Log("port '%s': %d tx queues for %d workers: workers share them under a lock",
        spec.name, dp.nb_txq, workers_.size());
  }
  if (spec.driver == &VxlanDriver()) {
    // A tunnel sends on its uplink and receives from it: attached before any worker
    // sees it. An analyser's frames are dropped and it takes only copies: no uplink.
    const UplinkView uplink = Uplink(spec, *table);
    if (uplink.slot >= 0 && mirrors_->IsAnalyser(uplink.slot)) {
      slots_->Close(slot);
      return absl::FailedPreconditionError(
          absl::StrCat("port '", spec.name, "': its uplink '", uplink.name,
                       "' is a mirror session's analyser: it cannot carry a tunnel"));
    }
    if (absl::Status attached = tunnels_->Attach(slot, port, uplink); !attached.ok()) {
      slots_->Close(slot);
      return attached;
    }
  }
  learner_->AddPort(static_cast<uint16_t>(slot), spec);
  Publish(std::move(table));
  UpdateMcastPorts();
  Log("port '%s' (%s %s): ready, ethdev %d, mac %s", spec.name, spec.type_name(),
      spec.Traits().endpoint, dp.eth_port, port.mac());
  if (port.reconnect().enabled) {
    slots_->ScheduleReconnect(slot, port.started(), /*first=*/true,
                              std::chrono::steady_clock::now());
  }
  return absl::OkStatus();
}

absl::Status Bridge::RemovePort(absl::string_view name) {
  const int slot = slots_->Find(name);
  if (slot < 0) return absl::NotFoundError(absl::StrCat("no port named '", name, "'"));
  const uint16_t p = static_cast<uint16_t>(slot);
  if (const std::string tunnel = tunnels_->TunnelOver(slot); !tunnel.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("port '", name, "' is the uplink of "
                                                      "vxlan port '", tunnel,
                                                      "': remove that first"));
  }
  // An analyser is refused; a mirrored port leaves its sessions with it.
  const absl::StatusOr<std::vector<std::string>> mirrors = mirrors_->PortRemoved(slot, name);
  if (!mirrors.ok()) return mirrors.status();
  for (const std::string& change : *mirrors) Log("%s", change);
  if (capture_->active() && capture_->port() == p) capture_->Stop();
  ip_learning_.PortGone(p);  // its bindings are not the next port's in the slot
  known_members_[p].clear();
  // From here on no worker polls the port, sends to it or holds a frame for it.
  Publish(NextTable(slot, nullptr, nullptr));
  tunnels_->Detach(slot);  // nor does its uplink's demux hand it frames
  learner_->RemovePort(p);
  if (mcast_ != nullptr && mcast_->PortGone(p)) PublishMcast();
  link_events_->Map(slots_->port(slot)->eth_port(), -1);
  for (std::atomic<uint64_t>* mask :
       {&datapath_.up_mask, &datapath_.csum_capable_mask, &datapath_.tso4_capable_mask,
        &datapath_.tso6_capable_mask, &datapath_.shut_mask}) {
    mask->fetch_and(~(uint64_t{1} << p), std::memory_order_relaxed);
  }
  known_up_ &= ~(uint64_t{1} << p);
  known_shut_ &= ~(uint64_t{1} << p);
  watched_ &= ~(uint64_t{1} << p);
  const std::string port_name = slots_->port(slot)->spec().name;
  if (const uint64_t held = link_log_.Forget(slot); held != 0) {
    Log("port '%s': link flapped: %d more link lines not logged", port_name, held);
  }
  slots_->Close(slot);
  UpdateMcastPorts();  // its slot is empty now
  Log("port '%s': removed", port_name);
  return absl::OkStatus();
}

UplinkView Bridge::Uplink(const PortSpec& tunnel, const PortTable& table) {
  UplinkView view;
  view.name = ReadVxlanKeys(tunnel).uplink;
  const int slot = slots_->Find(view.name);
  if (slot < 0 || slots_->port(slot)->spec().driver == &VxlanDriver()) return view;
  const Port& uplink = *slots_->port(slot);
  const DatapathPort& dp = table.ports[slot];
  view.slot = slot;
  view.eth_port = uplink.eth_port();
  view.nb_rxq = uplink.queues().nb_rxq;
  view.nb_txq = dp.nb_txq;
  // The workers' own locks for the uplink's queues: a tunnel and the bridge send on them.
  view.locks = dp.shared_tx ? datapath_.tx_locks[slot].data() : nullptr;
  view.mtu = uplink.spec().mtu;
  return view;
}

std::unique_ptr<PortTable> Bridge::NextTable(int slot, const PortSpec* spec, const Port* port,
                                             bool polled) const {
  auto table = std::make_unique<PortTable>(*table_);
  std::vector<const PortSpec*> specs = slots_->SpecSlots();
  specs[slot] = spec;
  table->Configure(specs);
  for (std::vector<RxQueueRef>& rx : table->rx) {
    std::erase_if(rx, [slot](const RxQueueRef& q) { return q.port == slot; });
  }
  if (port == nullptr) {
    BuildPortGuards(*table, slot, nullptr);
    return table;
  }
  const uint16_t nb_workers = static_cast<uint16_t>(workers_.size());
  DatapathPort& dp = table->ports[slot];
  dp.eth_port = port->eth_port();
  dp.nb_txq = port->queues().nb_txq;
  dp.shared_tx = dp.nb_txq < nb_workers;
  dp.rx_offload = port->flags().rx_offload;
  dp.tx_prepare = port->flags().tx_prepare;
  dp.recount_chains = port->flags().recount_chains;
  dp.tx_each_round = port->flags().tx_each_round;
  dp.rx_backpressure = port->flags().rx_backpressure;
  dp.link_polled = port->flags().link_polled;
  dp.rx_hold_ns = RxHoldNs(*port);
  dp.rx_interrupts = port->rx_interrupts();
  // Each receive queue goes to the worker that polls the fewest; the others stay where
  // they are. A device that is not started (a memif client without its server) is not
  // polled.
  for (uint16_t q = 0; polled && port->started() && q < port->queues().nb_rxq; ++q) {
    auto least = std::min_element(table->rx.begin(), table->rx.begin() + nb_workers,
                                  [](const auto& a, const auto& b) { return a.size() < b.size(); });
    least->push_back({static_cast<uint16_t>(slot), port->eth_port(), q});
  }
  BuildPortGuards(*table, slot, spec);  // its meters split between the workers polling it
  return table;
}

void Bridge::Reconnect(int slot) {
  const auto now = std::chrono::steady_clock::now();
  if (!slots_->ReconnectDue(slot, now)) return;
  Port& port = *slots_->port(slot);
  // The device is stopped and started only while no worker polls it (its link is down, so
  // none sends to it either).
  Publish(NextTable(slot, &port.spec(), &port, /*polled=*/false));
  const bool started = port.Reconnect();
  Publish(NextTable(slot, &port.spec(), &port));
  slots_->ScheduleReconnect(slot, started, /*first=*/false, now);
}

std::unique_ptr<PortTable> Bridge::RebuiltTable() const {
  auto table = std::make_unique<PortTable>(*table_);
  table->Configure(slots_->SpecSlots());
  return table;
}

void Bridge::Publish(std::unique_ptr<PortTable> table) {
  mirrors_->WriteTo(*table);
  ip_learning_.WriteTo(*table);
  table->Seal();
  std::unique_ptr<PortTable> old = std::move(table_);
  table_ = std::move(table);
  datapath_.table.store(table_.get(), std::memory_order_release);
  quiescence_->Synchronize();
}

absl::Status Bridge::AddStaticMac(const StaticMacSpec& mac) {
  const int p = slots_->Find(mac.port);
  if (p < 0) {
    return absl::InvalidArgumentError(absl::StrCat("static MAC ", KeyMacString(mac.key),
                                                   ": no port named '", mac.port, "'"));
  }
  if (mirrors_->IsAnalyser(p)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "static MAC ", KeyMacString(mac.key), ": port '", mac.port,
        "' takes a mirror's copies and nothing else"));
  }
  uint16_t vlan = KeyVlan(mac.key);
  if (!((table_->vlans.members[vlan] >> p) & 1)) {
    return absl::InvalidArgumentError(absl::StrCat("static MAC ", KeyMacString(mac.key),
                                                   ": port '", mac.port,
                                                   "' does not carry VLAN ", vlan));
  }
  return learner_->AddStatic(mac.key, static_cast<uint16_t>(p));
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
      absl::StrAppend(&queues, queues.empty() ? "" : " ", slots_->port(q.port)->spec().name,
                      "/", q.queue);
    }
    Log("worker %d on lcore %d polls %s", w, config_.worker_lcores[w], queues);
  }
  return absl::OkStatus();
}

void Bridge::StopWorkers() {
  stop_workers_.store(true);
  quiescence_->WakeBlocked();
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
  tunnels_.reset();  // its receive callbacks sit on uplinks: before those close
  if (slots_ != nullptr) slots_->CloseAll();  // the devices, before their mbufs' pools go
  mirrors_.reset();  // its pool, once no device holds a copy
  datapath_.snoop = nullptr;
  snoop_.reset();
  link_events_.reset();  // after the devices: closing one may still report its link
  workers_.clear();
  learner_.reset();
  learn_queues_.clear();
  fdb_.reset();
  slots_.reset();
}

ControlClock::time_point Bridge::Poll() {
  const ControlClock::time_point now = ControlClock::now();
  const uint32_t seconds = config_.clock();
  datapath_.now_seconds.store(seconds, std::memory_order_relaxed);
  ControlClock::time_point next = ControlClock::time_point::max();
  if (const ControlClock::duration learn = learner_->Poll(seconds);
      learn != ControlClock::duration::max()) {
    next = now + learn;
  }
  capture_->Poll();
  // The workers' copies wait in a ring: drained every millisecond while a capture runs.
  if (capture_->active()) next = std::min(next, now + std::chrono::milliseconds(1));
  const ControlTimers::Due due = timers_.Take(now);
  // At once when a device reported a change (LinkEvents has already set the workers' up
  // mask), when a link moved on a device that reports nothing (memif: a memory read, no
  // system call), and every 100 ms in any case (a guest's offloads may change without its
  // link; a kernel interface's link, an ioctl, is read only then).
  if (link_events_->TakePending() || due.links ||
      LinksUp(watched_) != (known_up_ & watched_)) {
    FollowLinks(now);
  }
  // LACP negotiates in net_bonding's own alarm thread: looked at as links are.
  if (due.links) FollowBonds();
  // A slice of the table at a time: ageing a large table never holds the control thread
  // for long, nor reads it through more often than ageing needs (Learner::AgeTick).
  if (due.age) {
    learner_->AgeTick(seconds, config_.fdb_aging_seconds, ControlTimers::kAgeSlices);
  }
  if (due.pools) slots_->FreeReturnedPools();
  if (datapath_.shut_mask.load(std::memory_order_relaxed) != known_shut_) FollowShut();
  if (DrainSnooped(seconds)) next = now;  // more wait: look again at once
  // Memberships age by the second.
  if (mcast_ != nullptr) next = std::min(next, now + std::chrono::seconds(1));
  tunnels_->Poll(now);
  return std::min(next, timers_.Next(now, (watched_ & ~known_up_) != 0));
}

uint64_t Bridge::LinksUp(uint64_t ports) const {
  uint64_t mask = 0;
  for (int p = 0; p < kMaxPorts; ++p) {
    if (!((ports >> p) & 1)) continue;
    const Port* port = slots_->port(p);
    if (port != nullptr && port->LinkUp()) mask |= uint64_t{1} << p;
  }
  return mask;
}

void Bridge::LogLinkChange(int p, bool up, ControlClock::time_point now) {
  if (!link_log_.Allow(p, now)) return;
  const Port& port = *slots_->port(p);
  const PortSpec& spec = port.spec();
  const bool guest = spec.role() == PortRole::kGuest;
  const std::string features = up ? port.PeerFeatures() : "";
  Log("port '%s': %s%s%s", spec.name,
      up ? (guest ? "guest connected, link up" : "link up")
         : (guest ? "guest disconnected, link down, its MACs flushed"
                  : "link down, its MACs flushed"),
      features.empty() ? "" : "; ", features);
}

void Bridge::FollowBonds() {
  for (int p = 0; p < kMaxPorts; ++p) {
    const Port* port = slots_->port(p);
    if (port == nullptr) continue;
    const std::optional<BondState> bond = port->Bond();
    if (!bond) continue;
    for (const BondMemberState& m : bond->members) {
      const BondMemberState* was = nullptr;
      for (const BondMemberState& old : known_members_[p]) {
        if (old.device == m.device) was = &old;
      }
      // A member first seen down says nothing yet (its bond starting).
      if (was == nullptr ? !m.up : was->active == m.active && was->up == m.up) continue;
      const std::string lacp =
          m.lacp && m.up ? absl::StrFormat(", LACP partner %s state 0x%02x",
                                           m.lacp->partner_system, m.lacp->partner_state)
                         : "";
      Log("port '%s': member %s %s (link %s%s)", port->spec().name, m.device,
          m.active ? "active" : "inactive", m.up ? "up" : "down", lacp);
    }
    known_members_[p] = bond->members;
  }
}

void Bridge::FollowLinks(ControlClock::time_point now) {
  // What was last seen here, not the workers' mask, which LinkEvents may have moved on.
  const uint64_t old_mask = known_up_;
  const uint64_t mask = LinksUp();
  for (const LinkLogLimit::HeldBack& held : link_log_.Expired(now)) {
    Log("port '%s': link flapped: %d more link lines in a second not logged (at most %d a "
        "second per port); link %s now", slots_->port(held.port)->spec().name, held.lines,
        LinkLogLimit::kLinesPerWindow, (mask >> held.port) & 1 ? "up" : "down");
  }
  uint64_t csum = 0, tso4 = 0, tso6 = 0;
  for (uint64_t up = mask; up != 0; up &= up - 1) {
    const int p = __builtin_ctzll(up);
    const Port* port = slots_->port(p);
    const uint64_t bit = uint64_t{1} << p;
    // Asked every time: a guest may reconnect with other features between two looks.
    const PeerOffloads offloads = port->Offloads();
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
    if (!link_log_.Allow(static_cast<int>(p), now)) continue;
    auto yes = [p](uint64_t m) { return (m >> p) & 1 ? "yes" : "no"; };
    Log("port '%s': peer offloads: csum=%s tso4=%s tso6=%s",
        slots_->port(static_cast<int>(p))->spec().name, yes(csum), yes(tso4), yes(tso6));
  }
  datapath_.up_mask.store(mask, std::memory_order_relaxed);
  known_up_ = mask;
  // A vhost-user guest that connected had its notifications turned off by the vhost PMD:
  // a worker blocked on its kicks would not hear of its frames. Woken, it arms again.
  if ((mask & ~old_mask) != 0) quiescence_->WakeBlocked();
  // A port that went down forgets its MACs (and its lock) at once; reconnecting memif
  // clients, which may take a while, comes after.
  bool mcast_changed = false, bindings_changed = false;
  for (uint64_t changed = mask ^ old_mask; changed != 0; changed &= changed - 1) {
    const int p = __builtin_ctzll(changed);
    const bool up = (mask >> p) & 1;
    if (!up) learner_->PortDown(static_cast<uint16_t>(p));
    // A guest that went is no listener any more (nor a router), and what it learned of
    // addresses is not the next guest's.
    if (!up && mcast_ != nullptr) mcast_changed |= mcast_->PortGone(static_cast<uint16_t>(p));
    if (!up) bindings_changed |= ip_learning_.PortGone(static_cast<uint16_t>(p));
    LogLinkChange(p, up, now);
  }
  if (mcast_changed) PublishMcast();
  if (bindings_changed) Publish(RebuiltTable());
  for (int p = 0; p < kMaxPorts; ++p) {
    const Port* port = slots_->port(p);
    if (port == nullptr || !port->reconnect().enabled) continue;
    if ((mask >> p) & 1) {
      slots_->Connected(p);
    } else {
      Reconnect(p);
    }
  }
}

void Bridge::FollowShut() {
  const uint64_t shut = datapath_.shut_mask.load(std::memory_order_relaxed);
  // Only workers set bits (a BPDU seen); the control thread clears them itself.
  for (uint64_t fresh = shut & ~known_shut_; fresh != 0; fresh &= fresh - 1) {
    const int p = __builtin_ctzll(fresh);
    const std::string& name = slots_->port(p)->spec().name;
    learner_->Flush(p);
    Log("port '%s': shut: it sent a BPDU (bpdu_guard=1): its frames are dropped and none "
        "are sent to it, its MACs flushed, until hvswitchctl port enable %s", name, name);
  }
  known_shut_ = shut;
}

absl::Status Bridge::EnablePort(absl::string_view name) {
  const int p = slots_->Find(name);
  if (p < 0) return absl::NotFoundError(absl::StrCat("no port named '", name, "'"));
  const uint64_t bit = uint64_t{1} << p;
  if (!(datapath_.shut_mask.load(std::memory_order_relaxed) & bit)) return absl::OkStatus();
  FollowShut();  // logged as shut first, should it have happened since the last look
  datapath_.shut_mask.fetch_and(~bit, std::memory_order_relaxed);
  known_shut_ &= ~bit;
  Log("port '%s': enabled (it was shut by bpdu_guard)", name);
  return absl::OkStatus();
}

absl::Status Bridge::AddMirror(const MirrorSpec& spec) {
  const absl::StatusOr<MirrorSession> session =
      mirrors_->Check(spec, [this](absl::string_view name) { return slots_->Find(name); });
  if (!session.ok()) return session.status();
  const int to = session->to;
  auto refused = [&](absl::string_view why) {
    return absl::FailedPreconditionError(absl::StrCat("mirror '", spec.name, "': port '",
                                                      spec.to, "' ", why));
  };
  if (slots_->port(to)->spec().driver == &VxlanDriver()) {
    return refused("is a VXLAN tunnel: it cannot take a mirror's copies");
  }
  if (const std::string tunnel = tunnels_->TunnelOver(to); !tunnel.empty()) {
    return refused(absl::StrCat("is the uplink of vxlan port '", tunnel,
                                "': it cannot take a mirror's copies"));
  }
  for (const FdbEntryView& e : learner_->Entries()) {
    if (e.is_static && e.port == to) {
      return refused(absl::StrCat("has static MACs (", KeyMacString(e.key),
                                  "): nothing but copies goes to an analyser; remove them "
                                  "first"));
    }
  }
  absl::Status status = mirrors_->Add(spec, *session, [this](int s) { return MirrorSums(s); });
  if (!status.ok()) return status;
  Publish(RebuiltTable());
  // Its frames are dropped from now on: what it taught the FDB goes, with what its frames
  // asked before that table and the learn queues still hold (one poll takes a ring's
  // worth, more than a ring held then).
  learner_->Poll(config_.clock());
  learner_->Flush(to);
  Log("mirror '%s': %s of %s to port '%s'%s", spec.name,
      spec.rx && spec.tx ? "frames received and sent" : spec.rx ? "frames received" : "frames sent",
      absl::StrJoin(spec.from, ", "), spec.to,
      spec.vlan != 0 ? absl::StrCat(", tagged with VLAN ", spec.vlan) : "");
  return absl::OkStatus();
}

absl::Status Bridge::RemoveMirror(absl::string_view name) {
  absl::Status status = mirrors_->Remove(name);
  if (!status.ok()) return status;
  Publish(RebuiltTable());
  Log("mirror '%s': removed", name);
  return absl::OkStatus();
}

MirrorTotals Bridge::MirrorSums(int slot) const {
  MirrorTotals sums;
  for (size_t w = 0; w < workers_.size(); ++w) {
    const auto& c = counters_[w].mirrors[slot];
    sums.rx += c.rx.Read();
    sums.tx += c.tx.Read();
    sums.failed += c.failed.Read();
  }
  return sums;
}

BridgeSnapshot Bridge::Snapshot() const {
  BridgeSnapshot snap;
  snap.tsc_hz = rte_get_tsc_hz();
  snap[SwitchStat::kMbufs] = slots_->shared_pool()->size;
  snap[SwitchStat::kMbufsInUse] = rte_mempool_in_use_count(slots_->shared_pool());
  uint64_t up_mask = datapath_.up_mask.load(std::memory_order_relaxed);
  const uint64_t shut_mask = datapath_.shut_mask.load(std::memory_order_relaxed);
  snap.ports = slots_->Snapshot();
  const IpLearning::Snapshot learned = ip_learning_.Read();
  snap.ip_learn_events = learned.events;
  const uint32_t seconds = now();
  for (PortSnapshot& ps : snap.ports) {
    for (const LearnedBinding& b : learned.bindings[ps.index]) {
      ps.ip_learned.push_back({IpPrefixString(b.address),
                               kBindingSourceNames[static_cast<size_t>(b.source)],
                               b.expires == 0 ? 0 : b.expires > seconds ? b.expires - seconds : 0});
    }
    ps.up = (up_mask >> ps.index) & 1;
    ps.shut = (shut_mask >> ps.index) & 1;
    ps.fdb_learned = fdb_->learned(ps.index);
  }
  for (size_t w = 0; w < workers_.size(); ++w) {
    CoreSnapshot core;
    core.cpu = w < config_.worker_cpus.size() ? config_.worker_cpus[w] : 0;
    for (size_t i = 0; i < kCoreCounters; ++i) core.counts[i] = counters_[w].core[i].Read();
    core[CoreCounter::kSleepCycles] = counters_[w].SleptCycles(rte_rdtsc());
    core.max_sleep_ns = table_->max_sleep_ns[w];
    core.mode = table_->WorkerIdle(w);
    snap[SwitchStat::kCaptureMissed] += counters_[w].capture_missed.Read();
    for (size_t b = 0; b < core.rx_bursts.size(); ++b) {
      core.rx_bursts[b] = counters_[w].rx_bursts[b].Read();
    }
    snap.cores.push_back(core);
  }
  snap[SwitchStat::kFdbEntries] = fdb_->size();
  snap[SwitchStat::kFdbStatic] = fdb_->statics();
  for (SwitchStat s : {SwitchStat::kFdbLearned, SwitchStat::kFdbMoves, SwitchStat::kFdbAged,
                       SwitchStat::kFdbFlushed, SwitchStat::kFdbStaticRefused,
                       SwitchStat::kFdbLockedRefused}) {
    snap[s] = learner_->Stat(s);
  }
  snap.vxlan = tunnels_->Snapshot();
  snap.mirrors = mirrors_->Snapshot([this](int s) { return MirrorSums(s); });
  if (mcast_ != nullptr) snap.mcast = mcast_->Snapshot(now());
  for (const MirrorSnapshot& m : snap.mirrors) {
    for (PortSnapshot& ps : snap.ports) {
      if (ps.name == m.spec.to) ps.analyser_of.push_back(m.spec.name);
    }
  }
  return snap;
}

}  // namespace hvswitch
