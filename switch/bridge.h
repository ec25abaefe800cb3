// Bridge: the switch instance. Owns the mbuf pool, the ports, the FDB, the workers and
// their learn queues and counters. Created after the EAL is up. Ports are added and
// removed while the workers forward (AddPort/RemovePort): each takes a slot (its bridge
// port index) that the FDB, the counters and the flood masks use.
// Threads: everything on the control thread, except Snapshot, which any thread may call
// (the metrics endpoint calls it from its own).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "ports/port.h"
#include "switch/bridge_control.h"
#include "switch/bridge_snapshot.h"
#include "switch/datapath.h"
#include "switch/fdb.h"
#include "switch/learn_queue.h"
#include "switch/packet_capture.h"
#include "switch/options.h"
#include "switch/worker.h"
#include "switch/worker_quiescence.h"

struct rte_mempool;

namespace hvswitch {

uint32_t MonotonicSeconds();

struct BridgeConfig {
  std::vector<PortSpec> ports;
  std::vector<StaticMacSpec> static_macs;
  std::vector<unsigned> worker_lcores;  // EAL lcore ids, one worker each
  std::vector<unsigned> worker_cpus;    // the CPU each of those lcores runs on
  uint32_t fdb_capacity = 65536;
  uint32_t fdb_aging_seconds = 300;  // 0: entries never age
  // Seconds on a monotonic clock; tests inject their own.
  std::function<uint32_t()> clock = MonotonicSeconds;
  // Tunables. Frames taken from a queue per poll; ring sizes; mbufs in the pool (0: as
  // many as the rings and workers can hold); microseconds a frame may wait for a fuller
  // tx burst (0: sent at the end of the burst that brought it).
  uint16_t burst = 32;
  uint16_t rx_descriptors = 1024;
  uint16_t tx_descriptors = 1024;
  uint32_t mbufs = 0;
  uint32_t tx_flush_us = 0;
};

class Bridge : public BridgeControl {
 public:
  static absl::StatusOr<std::unique_ptr<Bridge>> Create(const BridgeConfig& config);
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  absl::Status StartWorkers();
  void StopWorkers();

  // Control thread, called about every millisecond: applies learn requests; every
  // 100 ms follows link state (logging each change, flushing the MACs of a port that
  // went down); every second ages the FDB.
  void Poll();

  BridgeSnapshot Snapshot() const override;

  // Control thread: what hvswitchctl asks for.
  //
  // Opens a port and publishes it to the workers; forwarding between the other ports goes
  // on undisturbed. Its counters start at zero.
  absl::Status AddPort(const PortSpec& spec) override;
  // Unpublishes a port, waits until no worker uses it (its queued frames sent), forgets
  // its MACs (static ones too), closes the device and frees its buffers (a quota pool
  // once every buffer is back).
  absl::Status RemovePort(absl::string_view name) override;
  int nb_ports() const { return __builtin_popcountll(table_->present); }
  const Port& port(int index) const { return *ports_[index]; }
  // The ports' specs in bridge port order: what a restart needs to bring them back.
  std::vector<PortSpec> PortSpecs() const override;
  std::string PortName(int index) const override { return ports_[index]->spec().name; }
  uint32_t now() const override {
    return datapath_.now_seconds.load(std::memory_order_relaxed);
  }
  std::vector<FdbEntryView> FdbEntries() const override;
  int PortIndex(absl::string_view name) const override;  // -1: no such port
  // Forgets the learned MACs of `port`, or of every port when -1 (static entries stay).
  void FlushFdb(int port) override;
  // A static entry, checked as at startup (the port exists and carries the VLAN).
  absl::Status AddStaticMac(const StaticMacSpec& mac) override;
  // Removes an entry, learned or static.
  absl::Status RemoveMac(uint64_t key) override;
  // Frames of a port into a pcapng file (hvswitchctl capture).
  absl::Status StartCapture(const CaptureRequest& request) override {
    return capture_->Start(request);
  }
  CaptureStatus StopCapture() override { return capture_->Stop(); }
  CaptureStatus CaptureState() const override { return capture_->State(); }

 private:
  explicit Bridge(const BridgeConfig& config) : config_(config) {}
  absl::Status Init();
  absl::Status CreatePool(uint16_t nb_workers);
  absl::StatusOr<rte_mempool*> CreatePortPool(const PortSpec& spec, const PortQueues& queues);
  // Frees a removed port's pool, or keeps it until its buffers are back (frames it held
  // may still sit in a NIC's transmit ring).
  void RetirePool(rte_mempool* pool);
  void FreeReturnedPools();
  // The table with slot `slot` given `spec` (null: emptied) and its device (null: none);
  // `polled`: its receive queues go to workers.
  std::unique_ptr<PortTable> NextTable(int slot, const PortSpec* spec, const Port* port,
                                       bool polled = true) const;
  // A memif client port that is down: started again (it connects only then), at most
  // every second, and not while a handshake may be under way.
  void Reconnect(int slot);
  // Swaps the workers' table and waits until none uses the old one.
  void Publish(std::unique_ptr<PortTable> table);
  absl::Status AddStaticMacs();
  void ApplyLearnRequests(uint32_t now);
  void UpdateLearnLimits();
  void FollowLinks();
  void LogMove(uint64_t key, uint16_t to_port, uint32_t now);
  // Port security: what the workers accept as sources from `port` (mac=, or the MAC a
  // lock=1 port was locked to).
  void PublishAllowedMacs(uint16_t port, const std::vector<uint64_t>& macs);
  // A lock=1 port without a MAC: the first source a worker sees claims it (PortMacs).
  void ArmLock(uint16_t port);
  // Publishes the MAC a worker claimed on an armed lock=1 port (logged "locked to"); for
  // every armed port / one.
  void PublishLockClaims();
  void PublishLockClaim(uint16_t port);
  // False when a learn request must not be applied: a source the port may not use (its
  // frames are dropped from now on), or a connected secured guest's own MAC seen on
  // another port.
  bool SecurityAllowsLearn(uint64_t key, uint16_t port);

  BridgeConfig config_;
  rte_mempool* pool_ = nullptr;
  // Snapshot reads the ports from another thread; the control thread takes the lock to
  // change them (and reads them without it: it is the only writer). A pthread lock, not
  // absl::Mutex: Debian's Abseil is not built for ThreadSanitizer, which would not see it.
  mutable std::shared_mutex ports_mu_;
  // Indexed by slot (kMaxPorts), null where no port is.
  std::vector<std::unique_ptr<Port>> ports_;
  // Per slot: the port's own pool when it has a quota (quota=N), else null (the shared pool).
  std::vector<rte_mempool*> port_pools_;
  // Per slot: the counters' sums when the port was added (a slot's counters are never
  // reset; a port's are the difference).
  std::array<PortTotals, kMaxPorts> counter_base_;
  std::vector<rte_mempool*> retired_pools_;
  // Per slot: when a memif client port may be started again; whether its last try failed.
  std::array<std::chrono::steady_clock::time_point, kMaxPorts> reconnect_at_{};
  std::array<bool, kMaxPorts> reconnect_failing_{};
  uint32_t next_device_ = 0, next_pool_ = 0;  // unique vdev and pool names
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<PortTable> table_;  // the one the workers read
  Datapath datapath_;
  std::vector<std::unique_ptr<LearnQueue>> learn_queues_;
  std::unique_ptr<WorkerCounters[]> counters_;
  std::unique_ptr<WorkerQuiescence> quiescence_;
  std::unique_ptr<PacketCapture> capture_;  // after quiescence_: it waits on it
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> stop_workers_{false};
  bool workers_running_ = false;
  uint64_t polls_ = 0;
  std::atomic<uint64_t> fdb_learned_{0}, fdb_moves_{0}, fdb_aged_{0}, fdb_flushed_{0},
      fdb_static_refused_{0}, fdb_locked_refused_{0};
  // Learn requests refused for the learn limit / a full table (frames the workers did not
  // catch).
  std::array<std::atomic<uint64_t>, kMaxPorts> learn_refused_{}, learn_full_refused_{};
  // Bit p set while port p has allowed source MACs (mac=, or locked under lock=1).
  uint64_t secured_ports_ = 0;
  // Bit p set while lock=1 port p waits for its first source (PortMacs::ArmLock).
  uint64_t lock_armed_ = 0;
  uint32_t move_log_second_ = 0, move_logs_this_second_ = 0;
};

}  // namespace hvswitch
