#include "switch/datapath/rx_interrupts.h"

#include <rte_ethdev.h>
#include <rte_log.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace hvswitch {

RxInterrupts::~RxInterrupts() {
  Release();
  if (epfd_ >= 0) close(epfd_);
}

bool RxInterrupts::Register(const PortTable& table, uint16_t worker) {
  table_ = &table;
  worker_ = worker;
  refused_ = false;
  if (epfd_ < 0) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    wake_event_.epdata.event = EPOLLIN;
    if (epfd_ < 0 || rte_epoll_ctl(epfd_, EPOLL_CTL_ADD, wake_fd_, &wake_event_) != 0) {
      if (epfd_ >= 0) close(epfd_);
      epfd_ = -1;
      refused_ = true;  // with this table; tried again with the next
      return false;
    }
  }
  for (const RxQueueRef& q : table.rx[worker]) {
    const int rc = rte_eth_dev_rx_intr_ctl_q(q.eth_port, q.queue, epfd_, RTE_INTR_EVENT_ADD,
                                             nullptr);
    if (rc != 0) {
      // Once per table: the worker sleeps with it instead of blocking.
      RTE_LOG(WARNING, USER1,
              "hvswitch: worker %u: ethdev %u queue %u cannot wake it (%d): it sleeps instead "
              "of blocking\n", worker, q.eth_port, q.queue, rc);
      refused_ = true;
      break;
    }
    ++nb_registered_;
  }
  return !refused_;
}

bool RxInterrupts::Arm(const PortTable& table, uint16_t worker) {
  if (table_ != &table) {
    Release();
    Register(table, worker);
  }
  if (refused_) return false;
  for (const RxQueueRef& q : table.rx[worker]) {
    // ENOTSUP: a device whose event fds fire whenever frames come (net_tap).
    const int rc = rte_eth_dev_rx_intr_enable(q.eth_port, q.queue);
    if (rc != 0 && rc != -ENOTSUP) {
      Disarm();
      return false;
    }
  }
  armed_ = true;
  return true;
}

void RxInterrupts::Disarm() {
  if (table_ == nullptr) return;
  for (const RxQueueRef& q : table_->rx[worker_]) rte_eth_dev_rx_intr_disable(q.eth_port, q.queue);
  armed_ = false;
}

RxInterrupts::Wake RxInterrupts::Wait() {
  std::array<rte_epoll_event, 8> events;
  const int n = rte_epoll_wait(epfd_, events.data(), static_cast<int>(events.size()), -1);
  Wake wake = Wake::kInterrupt;
  for (int i = 0; i < n; ++i) {
    if (events[i].fd != wake_fd_) continue;
    uint64_t rings;
    [[maybe_unused]] ssize_t r = read(wake_fd_, &rings, sizeof(rings));
    wake = Wake::kControl;
  }
  return wake;
}

void RxInterrupts::Release() {
  if (table_ == nullptr) return;
  if (armed_) Disarm();
  const std::vector<RxQueueRef>& rx = table_->rx[worker_];
  for (uint16_t i = 0; i < nb_registered_ && i < rx.size(); ++i) {
    rte_eth_dev_rx_intr_ctl_q(rx[i].eth_port, rx[i].queue, epfd_, RTE_INTR_EVENT_DEL, nullptr);
  }
  nb_registered_ = 0;
  table_ = nullptr;
}

}  // namespace hvswitch
