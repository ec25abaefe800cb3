// The munmap() guard of ports/memif/unmap_guard.h against a worker that has not reported
// yet.
#include "ports/memif/unmap_guard.h"

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "switch/datapath/worker_quiescence.h"

namespace hvswitch {
namespace {

void* MapPage() {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(page, MAP_FAILED);
  return page;
}

TEST(UnmapGuardTest, AnUnmapWaitsForTheWorkersReport) {
  auto quiescence = WorkerQuiescence::Create(1);
  ASSERT_TRUE(quiescence.ok()) << quiescence.status();
  (*quiescence)->Online(0);  // a worker inside a burst: it has not reported yet
  unmap_guard::Install(quiescence->get());
  void* page = MapPage();
  std::atomic<bool> unmapped{false};
  std::thread control([&] {
    munmap(page, 4096);
    unmapped.store(true);
  });
  while (unmap_guard::UnmapsWaiting() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(unmapped.load()) << "the memory went while the worker could still use it";
  while (!unmapped.load()) (*quiescence)->Quiescent(0);  // the worker's next rounds
  control.join();
  EXPECT_TRUE(unmapped.load());
  unmap_guard::Install(nullptr);
  (*quiescence)->Offline(0);
}

// Stopping the guard must not leave an unmap inside Synchronize() on a quiescence its
// owner frees next (~Bridge: Install(nullptr), then the WorkerQuiescence is deleted).
TEST(UnmapGuardTest, UninstallWaitsForUnmapsStillInside) {
  auto quiescence = WorkerQuiescence::Create(1);
  ASSERT_TRUE(quiescence.ok()) << quiescence.status();
  std::unique_ptr<WorkerQuiescence> owned = std::move(*quiescence);
  owned->Online(0);
  unmap_guard::Install(owned.get());
  void* page = MapPage();
  std::thread control([&] { munmap(page, 4096); });
  while (unmap_guard::UnmapsWaiting() == 0) std::this_thread::yield();
  std::atomic<bool> reported{false};
  std::atomic<bool> uninstalled{false};
  std::thread stopper([&] {
    unmap_guard::Install(nullptr);
    uninstalled.store(true);
    // What ~Bridge may do now: the unmap must be out of Synchronize() already.
    EXPECT_TRUE(reported.load()) << "Install(nullptr) returned while an unmap still used "
                                    "the quiescence it replaced";
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  reported.store(true);
  while (!uninstalled.load()) owned->Quiescent(0);
  stopper.join();
  control.join();
  owned->Offline(0);
  owned.reset();
}

}  // namespace
}  // namespace hvswitch
