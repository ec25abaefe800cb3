// SnoopQueue: copies of frames the control thread reads for what they say, not where they
// go: IGMP and MLD messages (multicast snooping), and, for ports with ip_learn=1, DHCP
// replies and ARP / neighbour discovery claims (IP bindings). The workers copy such a
// frame (from the queue's own pool, so that a flood of them costs no port its buffers)
// and forward the original as usual; the control thread parses the copies
// (switch/control/) and frees them. Any worker may offer (a ring with several producers:
// such frames are rare), one control thread drains.
//
// Wake-up as LearnQueue's: the control thread arms the queue before it sleeps, and the
// first copy offered after that rings it (one eventfd write); no more until it is armed
// again.
#pragma once

#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct rte_mempool;
struct rte_ring;

namespace hvswitch {

// Why a frame was copied; kept in the copy's hash.usr.
enum class SnoopKind : uint32_t { kMcast = 1, kDhcp = 2, kClaim = 3 };

// A copy's origin, as SnoopQueue::Offer records them: the bridge port it is about (in
// `port`: where it was received, or for a DHCP reply the port it is sent to), its VLAN (in
// `vlan_tci`; 0 where the worker did not read it), and the ethdev the frame came in on
// (in hash.fdir.hi).
inline uint16_t SnoopedPort(const rte_mbuf* m) { return m->port; }
inline uint16_t SnoopedVlan(const rte_mbuf* m) { return m->vlan_tci; }
inline uint16_t SnoopedFromEthdev(const rte_mbuf* m) {
  return static_cast<uint16_t>(m->hash.fdir.hi);
}
inline SnoopKind SnoopedKind(const rte_mbuf* m) { return static_cast<SnoopKind>(m->hash.usr); }

class SnoopQueue {
 public:
  // Copies a snooping control thread may be behind by: a burst of reports from every
  // guest at once (a querier's general query answered).
  static constexpr uint32_t kRingSize = 1024;

  static absl::StatusOr<std::unique_ptr<SnoopQueue>> Create(const std::string& name,
                                                            uint32_t size = kRingSize);
  ~SnoopQueue();
  SnoopQueue(const SnoopQueue&) = delete;
  SnoopQueue& operator=(const SnoopQueue&) = delete;

  // Worker: a copy of `m`, received on bridge port `port` in `vlan`, for the control
  // thread. False when there was no buffer or no room in the ring (the caller counts it;
  // the frame itself goes on).
  bool Offer(const rte_mbuf* m, uint16_t port, uint16_t vlan, SnoopKind kind);

  // Control thread: up to `max` copies, oldest first; the caller frees them.
  unsigned Drain(rte_mbuf** out, unsigned max);
  // Control thread, before it sleeps: the next Offer rings the wake-up eventfd. False
  // when copies wait already: the caller must not sleep.
  bool ArmWakeup();
  // The eventfd to ring (-1: none; the control thread looks on its own schedule).
  void set_wakeup_fd(int fd) { wakeup_fd_ = fd; }

 private:
  SnoopQueue(rte_ring* ring, rte_mempool* pool) : ring_(ring), pool_(pool) {}

  rte_ring* ring_;
  rte_mempool* pool_;
  int wakeup_fd_ = -1;
  alignas(64) std::atomic<bool> armed_{false};
};

}  // namespace hvswitch
