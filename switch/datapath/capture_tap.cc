// Capture tap: copies of what a captured port receives and sends (hvswitchctl capture),
// handed to the control thread through Datapath::capture_ring.
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>

#include "switch/datapath/forwarder.h"

namespace hvswitch {

void Forwarder::CaptureReceived(uint16_t port, rte_mbuf* const* pkts, uint16_t n) {
  rte_mbuf* copies[kMaxBurst];
  EnqueueCaptured(copies, CopyForCapture(port, pkts, n, copies, true));
}

uint16_t Forwarder::CopyForCapture(uint16_t port, rte_mbuf* const* pkts, uint16_t n,
                                   rte_mbuf** copies, bool rx) {
  const uint64_t now = rte_get_tsc_cycles();
  const uint16_t eth_port = table_->ports[port].eth_port;
  uint16_t copied = 0;
  for (; copied < n; ++copied) {
    copies[copied] = rte_pcapng_copy(eth_port, 0, pkts[copied], datapath_.capture_pool,
                                     UINT32_MAX, now,
                                     rx ? RTE_PCAPNG_DIRECTION_IN : RTE_PCAPNG_DIRECTION_OUT);
    if (copies[copied] == nullptr) break;
  }
  if (copied < n) counters_.capture_missed.Add(n - copied);
  return copied;
}

void Forwarder::EnqueueCaptured(rte_mbuf** copies, uint16_t n) {
  if (n == 0) return;
  const unsigned queued =
      rte_ring_mp_enqueue_burst(datapath_.capture_ring, reinterpret_cast<void**>(copies), n,
                                nullptr);
  if (queued < n) {
    rte_pktmbuf_free_bulk(copies + queued, n - queued);
    counters_.capture_missed.Add(n - queued);
  }
}

}  // namespace hvswitch
