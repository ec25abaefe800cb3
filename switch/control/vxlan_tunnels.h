// VxlanTunnels: the control side of the bridge's VXLAN ports (type=vxlan, net_hvs_vxlan):
// attaches each to its uplink (the uplink's receive demux, its transmit queues), finds the
// outer headers of every remote VTEP from the kernel's routes and neighbours (Underlay),
// publishes them to the workers, and keeps the remote MACs and flood list: learned from
// what arrives (notes from the workers, aged with the bridge's FDB), or with evpn=1 taken
// from FRR through the tunnel's shadow VTEP (EvpnShadow), to which the MACs the bridge has
// on its local ports in the tunnel's VLAN are published.
// Threads: the control thread, except Snapshot (any thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
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
#include "switch/control/evpn_shadow.h"
#include "switch/control/rtnetlink.h"
#include "switch/control/underlay.h"
#include "switch/control/vxlan_snapshot.h"
#include "switch/datapath/fdb.h"

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

// What the tunnels need of the bridge's FDB (keys: switch/datapath/mac_key.h's layout).
struct TunnelFdb {
  // The port `key` is on; -1: none.
  std::function<int(uint64_t key)> port_of;
  // Moves on with every change (Fdb::version).
  std::function<uint64_t()> version;
  std::function<void(absl::FunctionRef<void(const FdbEntryView&)>)> for_each;
  // A remote MAC (EVPN) on a tunnel's port: learned there, or refreshed.
  std::function<void(uint64_t key, int slot)> learn_remote;
  std::function<void(uint64_t key)> remove;
};

class VxlanTunnels {
 public:
  VxlanTunnels(ReaderGrace& grace, TunnelFdb fdb) : grace_(grace), fdb_(std::move(fdb)) {}
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
    // evpn=1: the shadow VTEP; the local MACs written there; the remote MACs as last read
    // (and installed); the FDB's version when the local MACs were last compared.
    std::unique_ptr<EvpnShadow> evpn;
    std::set<uint64_t> published;
    std::map<uint64_t, in_addr_t> remote;
    uint64_t fdb_version = ~uint64_t{0};
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
  // evpn=1: the MACs the FDB has on local ports in the tunnel's VLAN, published; the
  // remote MACs and flood list zebra installed, taken.
  void PublishLocal(Tunnel& t);
  void ImportRemote(Tunnel& t, std::chrono::steady_clock::time_point now);
  // Whether a notification about a shadow device came (or some were lost).
  bool EvpnEventsCame();

  ReaderGrace& grace_;
  TunnelFdb fdb_;
  std::unique_ptr<Underlay> underlay_;
  mutable absl::Mutex mu_;  // tunnels_ and demuxes_ against Snapshot
  std::map<int, Tunnel> tunnels_ ABSL_GUARDED_BY(mu_);
  std::map<uint16_t, Demux> demuxes_ ABSL_GUARDED_BY(mu_);  // by uplink ethdev
  // Bound UDP sockets on local VTEP endpoints, never read: a kernel interface that also
  // receives the tunnel's frames (type=netdev, type=host uplinks) answers none of them
  // with ICMP port unreachable. By (address, port).
  std::map<std::pair<in_addr_t, uint16_t>, int> quiet_sockets_;
  std::chrono::steady_clock::time_point next_resolve_{}, next_full_resolve_{}, next_age_{};
  // evpn=1: neighbour notifications (zebra's writes), and when remote MACs were last read
  // and refreshed in the FDB regardless.
  std::unique_ptr<RtNetlink> evpn_events_;
  std::chrono::steady_clock::time_point next_import_{}, next_refresh_{};
};

}  // namespace hvswitch
