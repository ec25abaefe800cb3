#include "switch/packet_capture.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

constexpr unsigned kRingSize = 4096;
constexpr unsigned kCopies = 8191;  // buffers for copies in flight; chains for jumbo frames

}  // namespace

PacketCapture::~PacketCapture() {
  Stop();
  if (datapath_.capture_ring != nullptr) rte_ring_free(datapath_.capture_ring);
  if (datapath_.capture_pool != nullptr) rte_mempool_free(datapath_.capture_pool);
}

absl::Status PacketCapture::CreateRingAndPool() {
  if (datapath_.capture_ring != nullptr) return absl::OkStatus();
  const int socket = static_cast<int>(rte_socket_id());
  rte_mempool* pool = rte_pktmbuf_pool_create("hvs_capture", kCopies, 256, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, socket);
  if (pool == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("no memory for capture buffers: ", rte_strerror(rte_errno)));
  }
  rte_ring* ring = rte_ring_create("hvs_capture", kRingSize, socket, RING_F_SC_DEQ);
  if (ring == nullptr) {
    rte_mempool_free(pool);
    return absl::ResourceExhaustedError(
        absl::StrCat("no memory for the capture ring: ", rte_strerror(rte_errno)));
  }
  datapath_.capture_pool = pool;
  datapath_.capture_ring = ring;
  return absl::OkStatus();
}

absl::Status PacketCapture::Start(uint16_t port, bool rx, bool tx, uint64_t count, int fd) {
  if (active()) {
    close(fd);
    return absl::FailedPreconditionError("a capture is running already");
  }
  absl::Status status = CreateRingAndPool();
  if (!status.ok()) {
    close(fd);
    return status;
  }
  file_ = rte_pcapng_fdopen(fd, nullptr, nullptr, "hvswitch", nullptr);
  if (file_ == nullptr) {
    close(fd);
    return absl::InternalError(
        absl::StrCat("cannot write the capture file: ", rte_strerror(rte_errno)));
  }
  port_ = port;
  wanted_ = count;
  captured_ = 0;
  const uint64_t bit = uint64_t{1} << port;
  if (rx) datapath_.capture_rx_mask.store(bit, std::memory_order_relaxed);
  if (tx) datapath_.capture_tx_mask.store(bit, std::memory_order_relaxed);
  return absl::OkStatus();
}

void PacketCapture::Drain(bool write) {
  rte_mbuf* pkts[64];
  unsigned n;
  while ((n = rte_ring_sc_dequeue_burst(datapath_.capture_ring, reinterpret_cast<void**>(pkts),
                                        64, nullptr)) != 0) {
    const unsigned keep =
        write ? static_cast<unsigned>(std::min<uint64_t>(n, wanted_ - captured_)) : 0;
    if (keep != 0 && rte_pcapng_write_packets(file_, pkts, keep) >= 0) captured_ += keep;
    rte_pktmbuf_free_bulk(pkts, n);
    write = write && captured_ < wanted_;
  }
}

void PacketCapture::Poll() {
  if (!active()) return;
  Drain(true);
  if (captured_ >= wanted_) Stop();
}

void PacketCapture::Stop() {
  if (!active()) return;
  datapath_.capture_rx_mask.store(0, std::memory_order_relaxed);
  datapath_.capture_tx_mask.store(0, std::memory_order_relaxed);
  wait_for_workers_();  // no copy is on its way into the ring any more
  Drain(captured_ < wanted_);
  rte_pcapng_close(file_);  // closes the file
  file_ = nullptr;
}

}  // namespace hvswitch
