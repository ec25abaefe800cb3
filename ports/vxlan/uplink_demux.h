// UplinkDemux: takes the VXLAN frames addressed to a local VTEP out of an uplink port's
// receive bursts (a DPDK receive callback on each of its queues, run by the worker that
// polls the queue, inside rte_eth_rx_burst), checks their outer headers (every length,
// the checksum, fragments, the I flag, the VNI), strips them and hands the inner frames
// to their VNI's tunnel device (VxlanDevice::Deliver). What is not VXLAN to a local VTEP
// stays in the burst: the bridge forwards it as any frame of the uplink. What is, but
// cannot be decapsulated, is counted under why and dropped.
//
// Control thread: one per uplink that carries tunnels; the tunnels published whole
// (Publish). Retired tables, and the callbacks after Uninstall, are freed only after a
// grace period of the workers (the caller's ReaderGrace).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ports/queue_counter.h"
#include "ports/reader_grace.h"
#include "ports/vxlan/vxlan_device.h"
#include "ports/vxlan/vxlan_frame.h"

struct rte_eth_rxtx_callback;

namespace hvswitch {

#define VXLAN_DECAP_COUNTERS(X)                                                        \
  X(packets, "VXLAN frames taken from the uplink and decapsulated")                    \
  X(bytes, "bytes of those frames, outer headers included")                           \
  X(short_frame, "dropped: shorter than its outer headers say (or they are not all in "  \
                 "the first buffer)")                                                  \
  X(bad_ip, "dropped: outer IPv4 header's length field or checksum wrong")              \
  X(fragment, "dropped: an outer IPv4 fragment")                                       \
  X(bad_udp, "dropped: UDP length wrong, or too short for VXLAN and an Ethernet header") \
  X(bad_flags, "dropped: VXLAN I flag not set")                                        \
  X(unknown_vni, "dropped: no tunnel of that VNI at the destination address")          \
  X(ring_full, "dropped: the tunnel's receive ring was full")
enum class DecapCounter : uint8_t {
#define X(name, help) k_##name,
  VXLAN_DECAP_COUNTERS(X)
#undef X
  kCount
};
inline constexpr size_t kNbDecapCounters = static_cast<size_t>(DecapCounter::kCount);
using DecapTotals = std::array<uint64_t, kNbDecapCounters>;

class UplinkDemux {
 public:
  struct Tunnel {
    uint32_t vni = 0;
    rte_be32_t local_ip = 0;
    uint16_t udp_port = kVxlanUdpPort;  // host order
    VxlanDevice device;
  };

  // Installed on the `nb_rxq` receive queues of ethdev `eth_port`.
  static absl::StatusOr<std::unique_ptr<UplinkDemux>> Install(uint16_t eth_port,
                                                              uint16_t nb_rxq,
                                                              ReaderGrace& grace);
  // Removes the callbacks and waits for the workers before freeing anything.
  ~UplinkDemux();
  UplinkDemux(const UplinkDemux&) = delete;
  UplinkDemux& operator=(const UplinkDemux&) = delete;

  uint16_t eth_port() const { return eth_port_; }
  // The tunnels over this uplink from now on (at most LocalVteps::kMax addresses);
  // waits for the workers before it frees the previous set.
  void Publish(const std::vector<Tunnel>& tunnels);
  DecapTotals Sums() const;

  struct Table;
  const Table* LoadTable() const { return table_.load(std::memory_order_acquire); }
  struct Queue;

 private:
  UplinkDemux(uint16_t eth_port, ReaderGrace& grace);

  const uint16_t eth_port_;
  ReaderGrace& grace_;
  std::atomic<const Table*> table_{nullptr};
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<const rte_eth_rxtx_callback*> callbacks_;
};

}  // namespace hvswitch
