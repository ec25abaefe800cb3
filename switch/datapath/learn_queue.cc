#include "switch/datapath/learn_queue.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring_elem.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {

absl::StatusOr<std::unique_ptr<LearnQueue>> LearnQueue::Create(const std::string& name,
                                                               uint32_t size) {
  rte_ring* ring = rte_ring_create_elem(name.c_str(), sizeof(LearnRequest), size,
                                        static_cast<int>(rte_socket_id()),
                                        RING_F_SP_ENQ | RING_F_SC_DEQ);
  if (ring == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot create learn ring ", name, ": ", rte_strerror(rte_errno)));
  }
  return std::unique_ptr<LearnQueue>(new LearnQueue(ring));
}

LearnQueue::~LearnQueue() { rte_ring_free(ring_); }

bool LearnQueue::Request(uint64_t key, uint16_t port, uint64_t now, uint32_t frames) {
  Recent& recent = recent_[(key ^ (key >> 17) ^ (key >> 40)) & (recent_.size() - 1)];
  if (recent.key == key && recent.port == port && now - recent.when < repeat_cycles_) {
    return true;
  }
  recent = {key, now, port};
  LearnRequest request{key, port, frames};
  return rte_ring_sp_enqueue_elem(ring_, &request, sizeof(request)) == 0;
}

unsigned LearnQueue::Drain(LearnRequest* out, unsigned max) {
  return rte_ring_sc_dequeue_burst_elem(ring_, out, sizeof(LearnRequest), max, nullptr);
}

}  // namespace hvswitch
