// net_hvs_vxlan: one VNI's VXLAN tunnel as a DPDK ethdev, so that the bridge treats it as
// one more port (an access port of the VLAN the VNI carries): its FDB entries, floods,
// MTU checks and offload emulation apply unchanged.
//
//   net_hvs_vxlanN,vni=V[,queues=N][,udp_csum=0|1][,learn=0|1]
//
// Transmit (workers): each frame's destination MAC is looked up in the VNI's remote MACs
// (MAC -> remote VTEP); a hit is encapsulated (vxlan_frame.h) towards that VTEP, a miss
// or a group address is replicated head-end to every VTEP of the flood list; frames leave
// on the uplink's transmit queue of the same worker. Receive: frames the uplink's demux
// (uplink_demux.h) took out for this VNI, waiting in one ring per queue; `learn=1` (no
// EVPN): an inner source MAC seen from another VTEP than the table says is noted for the
// control thread (DrainLearnNotes), which teaches the table.
//
// The control thread attaches the uplink (AttachUplink) before the port is published to
// the workers and publishes the VTEPs (routes: outer headers resolved from the underlay)
// whole, RCU-style: the previous VxlanRoutes is the caller's to free after a grace period.
#pragma once

#include <rte_spinlock.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "ports/vxlan/vxlan_frame.h"

struct rte_mbuf;

namespace hvswitch {

inline constexpr uint16_t kMaxVteps = 128;  // remote VTEPs one VNI sends to
inline constexpr uint16_t kNoVtep = UINT16_MAX;
inline constexpr uint32_t kMaxRemoteMacs = 16384;  // per VNI

// One remote VTEP as the workers send to it.
struct VtepRoute {
  rte_be32_t ip = 0;      // 0: the id is free
  bool resolved = false;  // the next hop's MAC is known: `header` is valid
  OuterTemplate header{};
};

// The VNI's remote VTEPs and flood list, published whole.
struct VxlanRoutes {
  std::array<VtepRoute, kMaxVteps> vteps{};  // by VTEP id
  uint16_t nb_flood = 0;
  std::array<uint16_t, kMaxVteps> flood{};  // ids, head-end replication
};

// Where encapsulated frames leave: the uplink port's device and transmit queues. `locks`:
// one per queue when workers share them (the bridge's own locks for that port), else null.
struct VxlanUplinkRef {
  uint16_t eth_port = 0;
  uint16_t nb_txq = 1;
  rte_spinlock_t* locks = nullptr;
};

// Per remote VTEP (and, at index kMaxVteps, frames from an address that is none).
#define VXLAN_VTEP_COUNTERS(X)                                                          \
  X(tx_packets, "frames sent to the VTEP, encapsulated")                                \
  X(tx_bytes, "bytes of those frames, outer headers included")                          \
  X(rx_packets, "frames received from the VTEP, decapsulated")                          \
  X(rx_bytes, "bytes of the inner frames received")                                     \
  X(unresolved, "frames dropped: the VTEP's next hop has no known MAC yet")             \
  X(no_mbuf, "frames dropped: no buffer for a flooded copy or its headers")             \
  X(uplink_full, "frames dropped: the uplink's transmit queue was full")
enum class VtepCounter : uint8_t {
#define X(name, help) k_##name,
  VXLAN_VTEP_COUNTERS(X)
#undef X
  kCount
};
inline constexpr size_t kNbVtepCounters = static_cast<size_t>(VtepCounter::kCount);
using VtepTotals = std::array<uint64_t, kNbVtepCounters>;

// Per VNI, beyond the VTEPs'.
#define VXLAN_TUNNEL_COUNTERS(X)                                                        \
  X(flooded, "frames replicated to the flood list (group or unknown destination)")      \
  X(no_flood_list, "frames dropped: a flood with no remote VTEP to send to")            \
  X(no_uplink, "frames dropped: the uplink is not attached or down")                    \
  X(learn_notes_lost, "remote MACs not learned: the note queue to the control thread was full")
enum class TunnelCounter : uint8_t {
#define X(name, help) k_##name,
  VXLAN_TUNNEL_COUNTERS(X)
#undef X
  kCount
};
inline constexpr size_t kNbTunnelCounters = static_cast<size_t>(TunnelCounter::kCount);
using TunnelTotals = std::array<uint64_t, kNbTunnelCounters>;

// A remote MAC seen behind a VTEP (learn=1).
struct LearnNote {
  uint64_t mac;       // MAC in bits 0-47 (switch/datapath/mac_key.h's layout)
  rte_be32_t vtep_ip;
  uint32_t unused;
};

struct VxlanPrivate;

// A handle on one device (it stays valid while the ethdev exists).
class VxlanDevice {
 public:
  // The device of ethdev `eth_port`; nullopt when it is not a net_hvs_vxlan.
  static std::optional<VxlanDevice> Of(uint16_t eth_port);

  uint32_t vni() const;
  // Control thread, before the port is published: where its frames leave.
  void AttachUplink(const VxlanUplinkRef& uplink);
  // Control thread: the new VTEP set; returns the previous one (free it after a grace
  // period). Null: none yet.
  const VxlanRoutes* PublishRoutes(const VxlanRoutes* routes);
  const VxlanRoutes* routes() const;

  // Remote MACs (control thread): set or replace; false when the table is full.
  bool SetRemoteMac(uint64_t mac, uint16_t vtep);
  void RemoveRemoteMac(uint64_t mac);
  // After a grace period that began after the removals: their slots may be reused.
  void ReclaimRemoved();
  std::optional<uint16_t> RemoteMac(uint64_t mac) const;
  void ForEachRemoteMac(absl::FunctionRef<void(uint64_t mac, uint16_t vtep)> visit) const;
  size_t nb_remote_macs() const;

  // Control thread: the remote MACs the workers saw behind other VTEPs (learn=1).
  size_t DrainLearnNotes(LearnNote* out, size_t max);

  VtepTotals VtepSums(uint16_t vtep) const;  // kMaxVteps: from unknown addresses
  TunnelTotals TunnelSums() const;

  // Worker (the uplink's demux): hands over decapsulated frames for receive queue
  // `queue` (any of the uplink's queues may): each frame's hash.usr holds the outer
  // source address. Returns how many it took; the rest are the caller's.
  uint16_t Deliver(uint16_t queue, rte_mbuf** pkts, uint16_t n) const;
  uint16_t nb_rx_queues() const;

 private:
  explicit VxlanDevice(VxlanPrivate* p) : p_(p) {}
  VxlanPrivate* p_;
};

const char* VxlanPmdName();  // "net_hvs_vxlan"

}  // namespace hvswitch
