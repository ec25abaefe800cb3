// IGMP/MLD snooping in the pipeline (Forwarder::DispatchGroup): runs of frames to a group
// address, with a group table published (--mcast_snooping=1). Out of line: only multicast
// reaches it, and only where snooping is on.
#include <rte_mbuf.h>

#include <cstring>

#include "switch/datapath/forwarder.h"
#include "switch/datapath/mcast_frame.h"
#include "switch/datapath/snoop_queue.h"

namespace hvswitch {

uint16_t Forwarder::DispatchGroup(const McastTable& mcast, uint16_t in_port, PortCounters& in,
                                  const Run& run, rte_mbuf** frames, uint16_t len) {
  // Every other port up in the VLAN (analysers are in none): the most any frame gets.
  const uint64_t vlan_ports = FloodTargets(in_port, run.vlan);
  const uint64_t routers = mcast.Routers(run.vlan) & vlan_ports;
  uint64_t members = 0;
  // A snooped group: its members and the routers; any other group address floods.
  const uint64_t data_targets =
      mcast.Find(run.dst, members) ? (members & vlan_ports) | routers : vlan_ports;
  uint16_t nowhere = 0;
  for (uint16_t i = 0; i < len; ++i) {
    rte_mbuf* m = frames[i];
    McastFrame kind = McastFrame::kData;
    // Behind a second tag nothing is read (it is payload to hvswitch).
    if (!run.double_tagged && m->data_len > run.header()) {
      const auto* eth = rte_pktmbuf_mtod(m, const uint8_t*);
      uint16_t ether_type;
      std::memcpy(&ether_type, eth + run.header() - 2, 2);
      kind = ClassifyMcastFrame(ether_type, eth + run.header(), m->data_len - run.header());
    }
    uint64_t targets = data_targets;
    if (kind != McastFrame::kData) {
      OfferSnoop(in_port, m, run.vlan, SnoopKind::kMcast);
      // A query is every listener's business; a report only the routers' (RFC 4541:
      // other members hearing it would suppress their own, and go unseen).
      targets = kind == McastFrame::kQuery ? vlan_ports : routers;
    }
    if (targets == 0) {
      ++nowhere;
      rte_pktmbuf_free(m);
      continue;
    }
    FloodFrame(targets, run, m, in);
  }
  return nowhere;
}

}  // namespace hvswitch
