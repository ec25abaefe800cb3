// Copies for the control thread's snooping (IGMP/MLD, DHCP replies, address claims), each
// charged to a port's budget: rte_meter's token bucket counting messages, not bytes.
#include <rte_cycles.h>
#include <rte_meter.h>

#include "switch/datapath/forwarder.h"
#include "switch/datapath/snoop_queue.h"

namespace hvswitch {

void Forwarder::OfferSnoop(uint16_t port, const rte_mbuf* m, uint16_t vlan, SnoopKind kind) {
  if (!snoop_profile_ready_) {
    // A message is one "byte": the committed rate is messages a second, the burst its size.
    rte_meter_srtcm_params params{options_.snoops_per_second, options_.snoop_burst, 0};
    if (rte_meter_srtcm_profile_config(&snoop_profile_, &params) != 0) return;
    snoop_profile_ready_ = true;
  }
  const uint64_t bit = uint64_t{1} << port;
  if (!(snoop_budgeted_ & bit)) {
    rte_meter_srtcm_config(&snoop_budget_[port], &snoop_profile_);  // a full bucket
    snoop_budgeted_ |= bit;
  }
  if (rte_meter_srtcm_color_blind_check(&snoop_budget_[port], &snoop_profile_, rte_rdtsc(), 1) !=
      RTE_COLOR_GREEN) {
    counters_.ports[port][PortCounter::kSnoopLimited].Add(1);
    return;
  }
  if (!datapath_.snoop->Offer(m, port, vlan, kind)) {
    counters_[CoreCounter::kSnoopQueueDrops].Add(1);
  }
}

}  // namespace hvswitch
