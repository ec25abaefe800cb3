// PortSlots: the bridge's ports by slot (the bridge port index that the FDB, the counters
// and the flood masks use) and what a slot holds besides its device: its buffer pool (the
// shared pool, or its own under quota=N), the counter sums its port's counts start from,
// and when a memif client port may be started again. Also the shared pool, and the pools
// of removed ports that still have buffers out.
// Threads: control thread, except Snapshot (any thread). The control thread changes the
// slots under a lock and reads them without it: it is the only writer.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ports/port.h"
#include "switch/control/bridge_snapshot.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/datapath_limits.h"

struct rte_mempool;

namespace hvswitch {

class PortSlots {
 public:
  using Clock = std::chrono::steady_clock;

  // `sums(slot)`: everything counted for a slot so far (the workers' counters and the
  // learner's refusals). A slot's counters are never reset; a port's are the difference
  // from the sums when it was opened.
  PortSlots(uint16_t nb_workers, uint16_t rx_descriptors, uint16_t tx_descriptors,
            std::function<PortTotals(int slot)> sums);
  ~PortSlots();  // CloseAll, then every pool freed
  PortSlots(const PortSlots&) = delete;
  PortSlots& operator=(const PortSlots&) = delete;

  // Devices opened from now on are configured for receive interrupts where they have them
  // (--idle=interrupt).
  void set_rx_interrupts(bool on) { rx_interrupts_ = on; }
  // The guest sockets hvswitch creates from now on are given to `group`, mode 0660
  // (--socket_group; empty: left as they are).
  absl::Status SetSocketGroup(const std::string& group);

  // The pool of the ports without a quota: `mbufs` buffers, or when 0 enough for the
  // rings of `startup_ports` and the workers.
  absl::Status CreateSharedPool(uint32_t mbufs, const std::vector<PortSpec>& startup_ports);
  // Opens a port of `spec` in the lowest free slot (a unique name and socket, its socket
  // path prepared, its own pool under a quota, its device); its counts start from zero.
  // Not yet published to the workers.
  absl::StatusOr<int> Open(const PortSpec& spec, bool workers_running);
  // Empties the slot: closes the device (removing a socket hvswitch created) and frees its
  // pool, or keeps it until its buffers are back (FreeReturnedPools).
  void Close(int slot);
  // Closes every device (before the pools their buffers come from go).
  void CloseAll();
  void FreeReturnedPools();

  int Find(absl::string_view name) const;  // -1: no such port
  Port* port(int slot) const { return ports_[slot].get(); }
  // The ports' specs in slot order: what a restart needs to bring them back.
  std::vector<PortSpec> Specs() const;
  // Per slot (kMaxPorts), the port's spec or null.
  std::vector<const PortSpec*> SpecSlots() const;
  rte_mempool* shared_pool() const { return pool_; }
  // Any thread: every port as BridgeSnapshot shows it, except `up` and `fdb_learned`.
  std::vector<PortSnapshot> Snapshot() const;

  // A memif client port (Port::reconnects): whether it may be started again at `now`.
  bool ReconnectDue(int slot, Clock::time_point now) const { return now >= reconnect_at_[slot]; }
  // Its start at `now` (`first`: when it was opened) connected or not: when it may be
  // started again (logged when it starts failing).
  void ScheduleReconnect(int slot, bool started, bool first, Clock::time_point now);
  // Connected: no handshake to protect any more, a peer that goes is retried at once.
  void Connected(int slot) { reconnect_at_[slot] = {}; }

 private:
  absl::StatusOr<int> FreeSlot(const PortSpec& spec) const;
  absl::Status GiveSocket(const PortSpec& spec) const;
  absl::StatusOr<rte_mempool*> CreatePortPool(const PortSpec& spec, const PortQueues& queues);
  // Frees a removed port's pool, or keeps it until its buffers are back (frames it held
  // may still sit in a NIC's transmit ring).
  void RetirePool(rte_mempool* pool);

  const uint16_t nb_workers_, rx_descriptors_, tx_descriptors_;
  bool rx_interrupts_ = false;
  std::optional<gid_t> socket_gid_;
  const std::function<PortTotals(int slot)> sums_;
  rte_mempool* pool_ = nullptr;
  // Snapshot reads the slots from another thread. A pthread lock, not absl::Mutex:
  // Debian's Abseil is not built for ThreadSanitizer, which would not see it.
  mutable std::shared_mutex mu_;
  // Indexed by slot (kMaxPorts), null where no port is.
  std::vector<std::unique_ptr<Port>> ports_;
  // Per slot: the port's own pool when it has a quota (quota=N), else null (the shared pool).
  std::vector<rte_mempool*> port_pools_;
  // Per slot: the counters' sums when the port was added.
  std::array<PortTotals, kMaxPorts> counter_base_;
  std::vector<rte_mempool*> retired_pools_;
  // Per slot: when a memif client port may be started again; whether its last try failed.
  std::array<Clock::time_point, kMaxPorts> reconnect_at_{};
  std::array<bool, kMaxPorts> reconnect_failing_{};
  uint32_t next_device_ = 0, next_pool_ = 0;  // unique vdev and pool names
};

}  // namespace hvswitch
