// VxlanTunnels: the control side of the bridge's VXLAN ports (type=vxlan, net_hvs_vxlan):
// attaches each to its uplink (the uplink's receive demux, its transmit queues), finds the
// outer headers of every remote VTEP from the kernel's routes and neighbours (Underlay),
// publishes them to the workers, and keeps the remote MACs: learned from what arrives
// (notes from the workers, aged with the bridge's FDB).
// Threads: the control thread, except Snapshot (any thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "ports/port.h"
#include "ports/reader_grace.h"
#include "ports/vxlan/uplink_demux.h"
#include "ports/vxlan/vxlan_device.h"
#include "ports/vxlan/vxlan_driver.h"
#include "switch/control/underlay.h"
#include "switch/control/vxlan_snapshot.h"

namespace hvswitch {

// The uplink port as the bridge has it.
struct UplinkView {
  int slot = -1;
  std::string name;
  uint16_t eth_port = 0;
  uint16_t nb_rxq = 1, nb_txq = 1;
  rte_spinlock_t* locks = nullptr;  // per tx queue, when workers share them
  uint16_t mtu = 1500;
};

class VxlanTunnels {
 public:
  // `fdb_has(slot, vlan, mac)`: whether the bridge's FDB has that MAC on that port.
  using FdbHas = std::function<bool(int slot, uint16_t vlan, uint64_t mac)>;
  VxlanTunnels(ReaderGrace& grace, FdbHas fdb_has) : grace_(grace), fdb_has_(std::move(fdb_has)) {}
  ~VxlanTunnels();

  // Port `slot` (type=vxlan, opened, not yet published): checked against its uplink, then
  // sending and receiving. On error nothing was changed.
  absl::Status Attach(int slot, const Port& port, const UplinkView& uplink);
  // Port `slot` no longer receives (its demux entry gone, the workers past it).
  void Detach(int slot);
  // The name of a tunnel that `slot` is the uplink of; empty if none.
  std::string TunnelOver(int slot) const;
  // Control thread, whenever it runs: learn notes, the underlay, ageing (each on its own
  // schedule).
  void Poll(std::chrono::steady_clock::time_point now);
  VxlanTunnelsSnapshot Snapshot() const;

 private:
  struct Vtep {
    in_addr_t ip = 0;
    bool flood = false;
    bool learned = false;  // added by a learn note (unicast only)
    NextHop hop;
  };
  struct Tunnel {
    explicit Tunnel(VxlanDevice d) : device(d) {}
    int slot = -1;
    std::string name;
    uint16_t vlan = 0;
    VxlanKeys keys;
    VxlanDevice device;
    UplinkView uplink;
    LocalInterface local;
    std::vector<Vtep> vteps;  // by VTEP id
    std::unique_ptr<VxlanRoutes> routes;  // the published set
    // Learned remote MACs and when they were learned (ageing spares the young).
    std::map<uint64_t, std::chrono::steady_clock::time_point> learned;
  };
  struct Demux {
    std::unique_ptr<UplinkDemux> demux;
    std::string uplink;
    int nb_tunnels = 0;
  };

  absl::Status EnsureUnderlay();
  void PublishDemux(uint16_t uplink_eth);
  // Routes from the tunnel's VTEPs, published; the old set freed after a grace period.
  void PublishRoutes(Tunnel& t);
  // Resolves the tunnel's VTEPs (all, or the unresolved only); true if any changed.
  bool Resolve(Tunnel& t, bool all);
  int AddVtep(Tunnel& t, in_addr_t ip, bool flood);  // -1: no room
  void ApplyLearnNotes(Tunnel& t, std::chrono::steady_clock::time_point now);
  void AgeLearned(Tunnel& t, std::chrono::steady_clock::time_point now);
  void OpenQuietSocket(in_addr_t local, uint16_t port);

  ReaderGrace& grace_;
  FdbHas fdb_has_;
  std::unique_ptr<Underlay> underlay_;
  mutable absl::Mutex mu_;  // tunnels_ and demuxes_ against Snapshot
  std::map<int, Tunnel> tunnels_ ABSL_GUARDED_BY(mu_);
  std::map<uint16_t, Demux> demuxes_ ABSL_GUARDED_BY(mu_);  // by uplink ethdev
  // Bound UDP sockets on local VTEP endpoints, never read: a kernel interface that also
  // receives the tunnel's frames (type=netdev, type=host uplinks) answers none of them
  // with ICMP port unreachable. By (address, port).
  std::map<std::pair<in_addr_t, uint16_t>, int> quiet_sockets_;
  std::chrono::steady_clock::time_point next_resolve_{}, next_full_resolve_{}, next_age_{};
};

}  // namespace hvswitch
