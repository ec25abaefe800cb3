// The bridge's part in snooping: the copies the workers queue (switch/datapath/
// snoop_queue.h) read by the control thread, and the group table published from what
// IGMP/MLD snooping (McastSnooping) makes of them.
#include <rte_mbuf.h>

#include <vector>

#include "switch/control/bridge.h"

namespace hvswitch {

bool Bridge::DrainSnooped(uint32_t now) {
  bool mcast_changed = false, bindings_changed = false;
  const std::vector<const PortSpec*> specs = slots_->SpecSlots();
  const LearningPorts ports{specs, *table_, datapath_};
  std::vector<uint8_t> bytes;
  rte_mbuf* copies[64];
  // A bounded number a look: a flood of reports waits for the next, the rest of the
  // control thread's work goes on.
  unsigned drained = 0;
  for (unsigned n; drained < SnoopQueue::kRingSize && (n = snoop_->Drain(copies, 64)) != 0;
       drained += n) {
    for (unsigned i = 0; i < n; ++i) {
      rte_mbuf* m = copies[i];
      bytes.resize(m->pkt_len);
      const auto* frame =
          static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data()));
      if (frame != nullptr) {
        switch (SnoopedKind(m)) {
          case SnoopKind::kMcast:
            if (mcast_ == nullptr) break;  // snooping was never on: nothing sends these
            mcast_changed |=
                mcast_->Apply(frame, m->pkt_len, SnoopedPort(m), SnoopedVlan(m), now);
            break;
          case SnoopKind::kDhcp:
            bindings_changed |= ip_learning_.ApplyDhcp(frame, m->pkt_len, SnoopedPort(m),
                                                       SnoopedFromEthdev(m), now, ports);
            break;
          case SnoopKind::kClaim:
            bindings_changed |=
                ip_learning_.ApplyClaim(frame, m->pkt_len, SnoopedPort(m), now, ports);
            break;
        }
      }
      rte_pktmbuf_free(m);
    }
  }
  if (now != snoop_aged_at_) {
    snoop_aged_at_ = now;
    if (mcast_ != nullptr) mcast_changed |= mcast_->Age(now);
    bindings_changed |= ip_learning_.Age(now);
  }
  if (mcast_changed) PublishMcast();
  if (bindings_changed) Publish(RebuiltTable());
  return drained >= SnoopQueue::kRingSize || !snoop_->ArmWakeup();
}

void Bridge::PublishMcast() {
  std::unique_ptr<McastTable> next = mcast_->Table();
  datapath_.mcast.store(next.get(), std::memory_order_release);
  quiescence_->Synchronize();  // no worker reads the old one any more
  mcast_table_ = std::move(next);
}

void Bridge::UpdateMcastPorts() {
  if (mcast_ == nullptr) return;
  uint64_t routers = 0, guests = 0;
  for (int p = 0; p < kMaxPorts; ++p) {
    const Port* port = slots_->port(p);
    if (port == nullptr) continue;
    if (port->spec().mrouter) routers |= uint64_t{1} << p;
    // A guest with mrouter=1 is a router the operator vouched for.
    if (port->spec().role() == PortRole::kGuest && !port->spec().mrouter) {
      guests |= uint64_t{1} << p;
    }
  }
  const bool routers_changed = mcast_->SetStaticRouters(routers);
  if (mcast_->SetGuestPorts(guests) || routers_changed) PublishMcast();
}

}  // namespace hvswitch
