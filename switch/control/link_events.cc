#include "switch/control/link_events.h"

#include <rte_ethdev.h>

#include "switch/control/wakeup.h"

namespace hvswitch {
namespace {

int OnEvent(uint16_t eth_port, rte_eth_event_type, void* self, void*) {
  rte_eth_link link{};
  const bool up = rte_eth_link_get_nowait(eth_port, &link) == 0 &&
                  link.link_status == RTE_ETH_LINK_UP;
  static_cast<LinkEvents*>(self)->OnLinkChange(eth_port, up);
  return 0;
}

}  // namespace

LinkEvents::LinkEvents(Datapath& datapath, int wakeup_fd)
    : datapath_(datapath), wakeup_fd_(wakeup_fd) {
  for (std::atomic<int8_t>& slot : slot_of_) slot.store(-1, std::memory_order_relaxed);
  rte_eth_dev_callback_register(RTE_ETH_ALL, RTE_ETH_EVENT_INTR_LSC, OnEvent, this);
}

LinkEvents::~LinkEvents() {
  // Waits for a callback under way (DPDK retries while it runs).
  rte_eth_dev_callback_unregister(RTE_ETH_ALL, RTE_ETH_EVENT_INTR_LSC, OnEvent, this);
}

void LinkEvents::Map(uint16_t eth_port, int slot) {
  if (eth_port < slot_of_.size()) {
    slot_of_[eth_port].store(static_cast<int8_t>(slot), std::memory_order_release);
  }
}

void LinkEvents::OnLinkChange(uint16_t eth_port, bool up) {
  const int slot = eth_port < slot_of_.size()
                       ? slot_of_[eth_port].load(std::memory_order_acquire)
                       : -1;
  if (slot >= 0) {
    const uint64_t bit = uint64_t{1} << slot;
    if (up) {
      datapath_.up_mask.fetch_or(bit, std::memory_order_relaxed);
    } else {
      // Capabilities first: a frame must never go to a guest with offloads it has not
      // negotiated (software offload is always safe).
      for (std::atomic<uint64_t>* mask : {&datapath_.csum_capable_mask,
                                          &datapath_.tso4_capable_mask,
                                          &datapath_.tso6_capable_mask, &datapath_.up_mask}) {
        mask->fetch_and(~bit, std::memory_order_relaxed);
      }
    }
  }
  pending_.store(true, std::memory_order_release);
  Wakeup::Ring(wakeup_fd_);
}

}  // namespace hvswitch
