#include "ports/memif/memseg_fd_guard.h"

#include "ports/interposed_call.h"

#include <rte_memory.h>
#include <unistd.h>

#include <array>
#include <atomic>

namespace hvswitch::memseg_fd_guard {
namespace {

// One descriptor per memory segment list at most (single-file segments).
constexpr int kMaxFds = RTE_MAX_MEMSEG_LISTS;
std::array<std::atomic<int>, kMaxFds> g_fds;
std::atomic<int> g_count{0};

void Add(int fd) {
  const int n = g_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (g_fds[i].load(std::memory_order_relaxed) == fd) return;
  }
  if (n == kMaxFds) return;
  g_fds[n].store(fd, std::memory_order_relaxed);
  g_count.store(n + 1, std::memory_order_release);
}

}  // namespace

void ProtectMemsegFds() {
  // Inside a walk the EAL's memory lock is held: the thread-unsafe getter is the one to use.
  rte_memseg_walk(
      [](const rte_memseg_list*, const rte_memseg* ms, void*) {
        const int fd = rte_memseg_get_fd_thread_unsafe(ms);
        if (fd >= 0) Add(fd);
        return 0;
      },
      nullptr);
}

bool Protects(int fd) {
  const int n = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (g_fds[i].load(std::memory_order_relaxed) == fd) return true;
  }
  return false;
}

}  // namespace hvswitch::memseg_fd_guard

extern "C" int close(int fd) {
  if (fd >= 0 && hvswitch::memseg_fd_guard::Protects(fd)) return 0;
  return hvswitch::interposed::Close(fd);
}
