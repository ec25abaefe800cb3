// ip_learn=1 on the workers: copies of what tells the control thread which addresses a
// learning port may use (switch/control/ip_learning.h), to the snoop queue. Out of line:
// only learning ports' frames reach it.
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <cstring>

#include "switch/datapath/forwarder.h"
#include "switch/datapath/snoop_queue.h"

namespace hvswitch {

void Forwarder::OfferClaim(uint16_t port, const rte_mbuf* m) {
  // The claim is its source MAC's: on a lock=1 port not locked yet it takes the lock, as
  // the first frame a worker sees from it would have (this one is dropped before that
  // look); from a MAC the port may not use it claims nothing.
  const PortMacs& macs = datapath_.port_macs[port];
  const uint32_t nb_macs = macs.count.load(std::memory_order_acquire);
  uint64_t src = 0;
  std::memcpy(&src, rte_pktmbuf_mtod(m, const uint8_t*) + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);
  if (nb_macs != 0 && !macs.Admits(src, nb_macs)) return;
  if (src == 0 || (src & 1) != 0) return;  // no station's: a group or the zero address
  OfferSnoop(port, m, 0, SnoopKind::kClaim);
}

void Forwarder::OfferDhcpReplies(uint16_t port, rte_mbuf* const* pkts, uint16_t n) {
  for (uint16_t i = 0; i < n; ++i) {
    const rte_mbuf* m = pkts[i];
    const auto* eth = rte_pktmbuf_mtod(m, const uint8_t*);
    if (m->data_len < RTE_ETHER_HDR_LEN + 20) continue;
    uint16_t ether_type;
    std::memcpy(&ether_type, eth + 12, 2);
    uint32_t l2 = RTE_ETHER_HDR_LEN;
    if (ether_type == kEtherVlan) {
      std::memcpy(&ether_type, eth + 16, 2);
      l2 += RTE_VLAN_HLEN;
    }
    if (!IsDhcpReply(ether_type, eth + l2, m->data_len - l2)) continue;
    // Who sent it (m->port: the ethdev it came from) decides whether it is believed.
    OfferSnoop(port, m, 0, SnoopKind::kDhcp);
  }
}

}  // namespace hvswitch
