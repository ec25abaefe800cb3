#include "switch/datapath/snoop_queue.h"

#include <rte_atomic.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <sys/eventfd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {

absl::StatusOr<std::unique_ptr<SnoopQueue>> SnoopQueue::Create(const std::string& name,
                                                               uint32_t size) {
  const int socket = static_cast<int>(rte_socket_id());
  rte_ring* ring = rte_ring_create(name.c_str(), size, socket, RING_F_SC_DEQ);
  if (ring == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot create snoop ring ", name, ": ", rte_strerror(rte_errno)));
  }
  // As many buffers as the ring holds, and the copies the control thread has in hand.
  rte_mempool* pool = rte_pktmbuf_pool_create((name + "_pool").c_str(), size + 255, 0, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, socket);
  if (pool == nullptr) {
    rte_ring_free(ring);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot create snoop pool ", name, ": ", rte_strerror(rte_errno)));
  }
  return std::unique_ptr<SnoopQueue>(new SnoopQueue(ring, pool));
}

SnoopQueue::~SnoopQueue() {
  rte_mbuf* left[64];
  for (unsigned n; (n = Drain(left, 64)) != 0;) rte_pktmbuf_free_bulk(left, n);
  rte_ring_free(ring_);
  rte_mempool_free(pool_);
}

bool SnoopQueue::Offer(const rte_mbuf* m, uint16_t port, uint16_t vlan, SnoopKind kind) {
  if (rte_ring_full(ring_)) return false;  // no copy made for nothing
  rte_mbuf* copy = rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX);
  if (copy == nullptr) return false;
  copy->port = port;
  copy->vlan_tci = vlan;
  copy->hash.usr = static_cast<uint32_t>(kind);
  copy->hash.fdir.hi = m->port;
  if (rte_ring_mp_enqueue(ring_, copy) != 0) {
    rte_pktmbuf_free(copy);
    return false;
  }
  // The copy visible before the look at whether the control thread sleeps (it arms
  // before its last look at the ring): one of the two sees the other.
  rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (armed_.load(std::memory_order_relaxed) && armed_.exchange(false)) {
    if (wakeup_fd_ >= 0) eventfd_write(wakeup_fd_, 1);
  }
  return true;
}

unsigned SnoopQueue::Drain(rte_mbuf** out, unsigned max) {
  return rte_ring_sc_dequeue_burst(ring_, reinterpret_cast<void**>(out), max, nullptr);
}

bool SnoopQueue::ArmWakeup() {
  armed_.store(true, std::memory_order_relaxed);
  rte_atomic_thread_fence(__ATOMIC_SEQ_CST);  // see Offer
  return rte_ring_empty(ring_);
}

}  // namespace hvswitch
