#include "switch/unmap_guard.h"

#include <sys/mman.h>

#include <atomic>

#include "ports/interposed_call.h"

namespace hvswitch::unmap_guard {
namespace {

std::atomic<WorkerQuiescence*> g_quiescence{nullptr};
thread_local bool t_is_worker = false;

}  // namespace

void Install(WorkerQuiescence* quiescence) { g_quiescence.store(quiescence); }

void MarkWorkerThread() { t_is_worker = true; }

}  // namespace hvswitch::unmap_guard

extern "C" int munmap(void* addr, size_t length) noexcept {
  using namespace hvswitch::unmap_guard;
  hvswitch::WorkerQuiescence* quiescence = g_quiescence.load();
  if (quiescence != nullptr && !t_is_worker) quiescence->Synchronize();
  return hvswitch::interposed::Munmap(addr, length);
}
