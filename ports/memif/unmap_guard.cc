#include "ports/memif/unmap_guard.h"

#include <sys/mman.h>

#include <atomic>
#include <thread>

#include "ports/interposed_call.h"

namespace hvswitch::unmap_guard {
namespace {

std::atomic<ReaderGrace*> g_grace{nullptr};
// Unmaps that may be using the installed grace. Install() waits for them to leave,
// so that its caller may free the one it replaced: the memif PMD unmaps on the interrupt
// thread whenever a peer goes, also while the switch stops (ThreadSanitizer saw
// Synchronize() read a WorkerQuiescence that ~Bridge was deleting).
std::atomic<int> g_unmaps_inside{0};
thread_local bool t_is_worker = false;

}  // namespace

void Install(ReaderGrace* grace) {
  g_grace.store(grace);
  while (g_unmaps_inside.load() != 0) std::this_thread::yield();
}

int UnmapsWaiting() { return g_unmaps_inside.load(); }

void MarkWorkerThread() { t_is_worker = true; }

}  // namespace hvswitch::unmap_guard

extern "C" int munmap(void* addr, size_t length) noexcept {
  using namespace hvswitch::unmap_guard;
  if (!t_is_worker) {
    // Counted before the load: Install() either sees this unmap inside, or this unmap
    // sees what Install() stored (both sequentially consistent).
    g_unmaps_inside.fetch_add(1);
    hvswitch::ReaderGrace* grace = g_grace.load();
    if (grace != nullptr) grace->WaitForReaders();
    g_unmaps_inside.fetch_sub(1);
  }
  return hvswitch::interposed::Munmap(addr, length);
}
