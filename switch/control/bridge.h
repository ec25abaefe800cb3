// Bridge: the switch instance. Owns the ports and their pools (PortSlots), the FDB and
// its learning (Learner), the workers and their learn queues and counters. Created after
// the EAL is up. Ports are added and removed while the workers forward
// (AddPort/RemovePort): each takes a slot (its bridge port index) that the FDB, the
// counters and the flood masks use.
// Threads: everything on the control thread, except Snapshot, which any thread may call
// (the metrics endpoint calls it from its own).
#pragma once

#include <array>
#include <atomic>
#include <string>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ports/port.h"
#include "switch/control/bridge_control.h"
#include "switch/control/bridge_snapshot.h"
#include "switch/control/control_timers.h"
#include "switch/control/learner.h"
#include "switch/control/link_events.h"
#include "switch/control/ip_learning.h"
#include "switch/control/link_log_limit.h"
#include "switch/control/mcast_snooping.h"
#include "switch/control/mirrors.h"
#include "switch/control/options.h"
#include "switch/control/packet_capture.h"
#include "switch/control/port_slots.h"
#include "switch/control/vxlan_tunnels.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/snoop_queue.h"
#include "switch/datapath/worker.h"
#include "switch/datapath/worker_quiescence.h"

namespace hvswitch {

uint32_t MonotonicSeconds();

struct BridgeConfig {
  std::vector<PortSpec> ports;
  std::vector<StaticMacSpec> static_macs;
  std::vector<MirrorSpec> mirrors;  // added after the ports
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
  // Between rounds that find nothing: spin, or sleep up to idle_max_us (less where a
  // device's receive ring fills sooner at line rate; with idle_max_us_given such a port
  // is refused instead), and under kInterrupt then block until a receive interrupt where
  // every queue a worker polls has them.
  IdleMode idle = IdleMode::kSleep;
  uint32_t idle_max_us = 250;
  bool idle_max_us_given = false;
  // The control thread's eventfd (Wakeup), rung by link events and the workers' learn
  // requests; -1: nobody rings, the caller polls on its own schedule.
  int wakeup_fd = -1;
  // IGMP/MLD snooping (McastSnooping); its memberships' and routers' lifetime.
  bool mcast_snooping = false;
  uint32_t mcast_aging = kDefaultMcastAging;
  // The group of the guest sockets hvswitch creates (0660); empty: root's.
  std::string socket_group;
};

class Bridge : public BridgeControl {
 public:
  static absl::StatusOr<std::unique_ptr<Bridge>> Create(const BridgeConfig& config);
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  absl::Status StartWorkers();
  void StopWorkers();

  // Control thread, whenever it wakes: applies learn requests; follows link state when a
  // device reported a change, when a port whose device reports nothing (memif) moved, and
  // every 100 ms in any case (logging each change, flushing the MACs of a port that went
  // down); ages a slice of the FDB when one is due (ControlTimers). Returns when it must
  // run again at the latest, if nothing rings the wake-up before.
  ControlClock::time_point Poll();

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
  const Port& port(int index) const { return *slots_->port(index); }
  // The ports' specs in bridge port order: what a restart needs to bring them back.
  std::vector<PortSpec> PortSpecs() const override { return slots_->Specs(); }
  std::string PortName(int index) const override { return slots_->port(index)->spec().name; }
  uint32_t now() const override {
    return datapath_.now_seconds.load(std::memory_order_relaxed);
  }
  std::vector<FdbEntryView> FdbEntries() const override { return learner_->Entries(); }
  // -1: no such port.
  int PortIndex(absl::string_view name) const override { return slots_->Find(name); }
  // Forgets the learned MACs of `port`, or of every port when -1 (static entries stay).
  void FlushFdb(int port) override { learner_->Flush(port); }
  // A static entry, checked as at startup (the port exists and carries the VLAN).
  absl::Status AddStaticMac(const StaticMacSpec& mac) override;
  // Removes an entry, learned or static.
  absl::Status RemoveMac(uint64_t key) override { return learner_->Remove(key); }
  // Frames of a port into a pcapng file (hvswitchctl capture).
  absl::Status StartCapture(const CaptureRequest& request) override {
    return capture_->Start(request);
  }
  CaptureStatus StopCapture() override { return capture_->Stop(); }
  CaptureStatus CaptureState() const override { return capture_->State(); }
  // Ends a bpdu_guard shut (nothing to do for a port that is not shut).
  absl::Status EnablePort(absl::string_view name) override;
  // A mirror session: checked against the ports; from then on its analyser takes only
  // its copies (its learned MACs flushed; a port with static MACs is refused).
  absl::Status AddMirror(const MirrorSpec& spec) override;
  absl::Status RemoveMirror(absl::string_view name) override;
  std::vector<MirrorSpec> MirrorSpecs() const override { return mirrors_->Specs(); }

 private:
  explicit Bridge(const BridgeConfig& config) : config_(config) {}
  absl::Status Init();
  // What the workers and the learner counted for a slot, over its ports' lifetimes.
  PortTotals SlotSums(int slot) const;
  // The table with slot `slot` given `spec` (null: emptied) and its device (null: none);
  // `polled`: its receive queues go to workers.
  std::unique_ptr<PortTable> NextTable(int slot, const PortSpec* spec, const Port* port,
                                       bool polled = true) const;
  // The current table with every slot's spec applied again (VLANs, MTUs, guards): for a
  // change of something other than one port (a mirror session).
  std::unique_ptr<PortTable> RebuiltTable() const;
  // What the workers counted in mirror session slot `slot`.
  MirrorTotals MirrorSums(int slot) const;
  // Snooping (bridge_snooping.cc): the copies the workers queued, read (IGMP/MLD into
  // mcast_, DHCP replies and address claims into ip_learning_) and freed; the group table,
  // or the port table, published again when what it says changed.
  // Returns whether copies may still wait (the caller must not sleep).
  bool DrainSnooped(uint32_t now);
  void PublishMcast();
  // The ports with mrouter=1, and the guest ports (whose queries make no router), as the
  // slots have them now, to snooping.
  void UpdateMcastPorts();
  // The uplink a vxlan port's spec names, as `table` has it (slot -1: no such port, or a
  // vxlan port itself).
  UplinkView Uplink(const PortSpec& tunnel, const PortTable& table);
  // A memif client port that is down: started again (it connects only then), at most
  // every second, and not while a handshake may be under way.
  void Reconnect(int slot);
  // Swaps the workers' table and waits until none uses the old one.
  void Publish(std::unique_ptr<PortTable> table);
  void FollowLinks(ControlClock::time_point now);
  // Bond members that started or stopped carrying traffic since the last look: logged.
  void FollowBonds();
  // Ports the workers shut (bpdu_guard) since the last look: logged, their MACs flushed.
  void FollowShut();
  // The ports among `ports` whose link is up now (a netdev port's costs an ioctl).
  uint64_t LinksUp(uint64_t ports = ~uint64_t{0}) const;
  // Link lines of the log, at most LinkLogLimit's per port a second.
  void LogLinkChange(int port, bool up, ControlClock::time_point now);

  BridgeConfig config_;
  std::unique_ptr<PortSlots> slots_;
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<PortTable> table_;  // the one the workers read
  Datapath datapath_;
  std::vector<std::unique_ptr<LearnQueue>> learn_queues_;
  std::unique_ptr<WorkerCounters[]> counters_;
  std::unique_ptr<WorkerQuiescence> quiescence_;
  std::unique_ptr<PacketCapture> capture_;  // after quiescence_: it waits on it
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<Learner> learner_;
  std::unique_ptr<VxlanTunnels> tunnels_;  // after quiescence_: it waits on it
  std::unique_ptr<Mirrors> mirrors_;
  std::unique_ptr<SnoopQueue> snoop_;
  std::unique_ptr<McastSnooping> mcast_;  // null: --mcast_snooping=0
  std::unique_ptr<McastTable> mcast_table_;  // the one the workers read
  uint32_t snoop_aged_at_ = 0;  // the control clock's second of the last ageing
  IpLearning ip_learning_;  // ip_learn=1 ports' bindings
  std::unique_ptr<LinkEvents> link_events_;
  uint64_t known_up_ = 0;  // the ports FollowLinks last saw up
  uint64_t known_shut_ = 0;  // the shut ports FollowShut last saw
  // The bond ports' members as FollowBonds last saw them, by slot.
  std::array<std::vector<BondMemberState>, kMaxPorts> known_members_;
  // Guest ports whose device reports no link events (memif): their links, a memory read,
  // are looked at whenever the control thread runs, and every 10 ms while one is down.
  uint64_t watched_ = 0;
  ControlTimers timers_{ControlClock::now()};
  LinkLogLimit link_log_;
  std::atomic<bool> stop_workers_{false};
  bool workers_running_ = false;
};

}  // namespace hvswitch
