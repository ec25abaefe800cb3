#include "switch/control/packet_capture.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace hvswitch {
namespace {

constexpr unsigned kRingSize = 4096;
constexpr unsigned kCopies = 8191;  // buffers for copies in flight; chains for jumbo frames

}  // namespace

PacketCapture::~PacketCapture() {
  Stop("hvswitch is stopping");
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

absl::Status PacketCapture::Start(const CaptureRequest& request) {
  struct stat st{};
  absl::Status status;
  if (active()) {
    status = absl::FailedPreconditionError("a capture is running already");
  } else if (fstat(request.file, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError("the capture file must be a regular file");
  } else if (status = CreateRingAndPool(); status.ok()) {
    file_ = rte_pcapng_fdopen(request.file, nullptr, nullptr, "hvswitch", nullptr);
    if (file_ == nullptr) {
      status = absl::InternalError(
          absl::StrCat("cannot write the capture file: ", rte_strerror(rte_errno)));
    }
  }
  if (!status.ok()) {
    close(request.file);
    return status;
  }
  file_fd_ = request.file;
  port_ = request.port;
  client_ = request.client;
  deadline_ = absl::Now() + request.timeout;
  wanted_ = request.count;
  captured_ = 0;
  write_failed_ = false;
  Tell(R"({"ok":true,"active":true})");
  const uint64_t bit = uint64_t{1} << request.port;
  if (request.rx) datapath_.capture_rx_mask.store(bit, std::memory_order_relaxed);
  if (request.tx) datapath_.capture_tx_mask.store(bit, std::memory_order_relaxed);
  return absl::OkStatus();
}

void PacketCapture::Tell(const std::string& line) {
  if (client_ < 0) return;
  // A line this short fits an empty socket buffer; a client that filled it loses it.
  const std::string text = line + "\n";
  send(client_, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool PacketCapture::Drain(bool write) {
  rte_mbuf* pkts[64];
  unsigned n;
  bool ok = true;
  while ((n = rte_ring_sc_dequeue_burst(datapath_.capture_ring, reinterpret_cast<void**>(pkts),
                                        64, nullptr)) != 0) {
    const unsigned keep =
        write && ok ? static_cast<unsigned>(std::min<uint64_t>(n, wanted_ - captured_)) : 0;
    if (keep != 0) {
      if (rte_pcapng_write_packets(file_, pkts, keep) >= 0) {
        captured_ += keep;
      } else {
        ok = false;
      }
    }
    rte_pktmbuf_free_bulk(pkts, n);
    write = write && captured_ < wanted_;
  }
  return ok;
}

std::string PacketCapture::EndReason() {
  if (write_failed_) return "write error";
  if (captured_ >= wanted_) return "count";
  if (absl::Now() >= deadline_) return "timeout";
  struct stat st{};
  if (fstat(file_fd_, &st) != 0 || st.st_nlink == 0) return "file removed";
  if (client_ >= 0) {
    char buf[64];
    const ssize_t n = recv(client_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return "client gone";
    }
    if (n > 0 && absl::StrContains(absl::string_view(buf, static_cast<size_t>(n)), "stop")) {
      return "stopped";
    }
  }
  return {};
}

void PacketCapture::Poll() {
  if (!active()) return;
  if (!Drain(true)) write_failed_ = true;
  const std::string why = EndReason();
  if (!why.empty()) Stop(why);
}

CaptureStatus PacketCapture::Stop(const std::string& why) {
  if (!active()) return State();
  datapath_.capture_rx_mask.store(0, std::memory_order_relaxed);
  datapath_.capture_tx_mask.store(0, std::memory_order_relaxed);
  wait_for_workers_();  // no copy is on its way into the ring any more
  if (!Drain(captured_ < wanted_ && !write_failed_)) write_failed_ = true;
  rte_pcapng_close(file_);  // closes the file
  file_ = nullptr;
  file_fd_ = -1;
  Tell(absl::StrCat(R"({"ok":true,"active":false,"captured":)", captured_, R"(,"ended":")",
                    write_failed_ ? "write error" : why, "\"}"));
  if (client_ >= 0) close(client_);
  client_ = -1;
  return State();
}

}  // namespace hvswitch
