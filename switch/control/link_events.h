// LinkEvents: the devices' link-state-change events (a vhost-user guest that connects or
// goes, a memif peer, a NIC's carrier), applied to the workers' up mask the moment DPDK
// reports them, instead of at the control thread's next look (every 100 ms), so that no
// frame is flooded past a guest that is already there or sent to one that is gone.
//
// Threads: the event arrives on whatever thread DPDK reports it from (the vhost library's
// event thread, the EAL's interrupt thread), and only touches atomics there: the up mask
// (a port that came up is set, one that went down cleared, with its offload capabilities,
// which a reconnecting guest may no longer have) and a flag the control thread takes to
// follow the links in full (logging, MAC flushes, offload capabilities, reconnects), and it
// rings the control thread's wake-up so that it does so at once. The ethdev -> bridge port
// map is written by the control thread as ports open and close.
#pragma once

#include <rte_build_config.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "switch/datapath/datapath.h"

namespace hvswitch {

class LinkEvents {
 public:
  // Registered for every ethdev, those created later included, until destroyed.
  // `wakeup_fd`: the control thread's eventfd (Wakeup), rung at every event; -1: none.
  explicit LinkEvents(Datapath& datapath, int wakeup_fd = -1);
  ~LinkEvents();
  LinkEvents(const LinkEvents&) = delete;
  LinkEvents& operator=(const LinkEvents&) = delete;

  // Control thread: ethdev `eth_port` is bridge port `slot` (-1: none any more).
  void Map(uint16_t eth_port, int slot);
  // Control thread: whether an event came since the last call.
  bool TakePending() { return pending_.exchange(false, std::memory_order_acquire); }

  // What DPDK calls (public for tests): ethdev `eth_port`'s link is now `up`.
  void OnLinkChange(uint16_t eth_port, bool up);

 private:
  Datapath& datapath_;
  int wakeup_fd_;
  std::array<std::atomic<int8_t>, RTE_MAX_ETHPORTS> slot_of_;
  std::atomic<bool> pending_{false};
};

}  // namespace hvswitch
