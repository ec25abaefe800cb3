// Benchmark 4 of issue 15: how fast the FDB learns, and how fast it forgets.
//
//   learn_bench [--resident=N] [--new=N] [--flush=N]
//
// One worker on its own lcore forwards frames from ring port A to ring port B (a static
// MAC) while a thread plays the daemon's control thread as hvswitch's main loop runs it:
// it sleeps on a Wakeup that the worker's learn queue rings, applies the learn requests
// (Learner::Poll) and sleeps again as long as Poll says (at most 50 ms: the daemon's
// ageing tick). The main thread keeps A's receive ring full (on the control thread's CPU,
// as guests share the daemon's control CPUs). The table holds `resident` learned MACs first (default 1,000,000, on port
// B); then `new` frames (default 200,000), each from a source MAC never seen, are sent as
// fast as the worker takes them. Printed: how long until every new MAC was learned (or
// the run gave up), the rate, and what was lost on the way (learn requests the worker's
// ring refused, counted as hvswitch_core_learn_queue_drops_total). Then `flush` MACs
// (default 100,000) of one port are flushed: the flush itself (O(1)) and the ageing
// sweep that frees their slots, timed.
//
// Not a pass/fail test: figures for tests/perf/results.md.
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "switch/control/control_timers.h"
#include "switch/control/learner.h"
#include "switch/control/wakeup.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/worker.h"
#include "switch/datapath/worker_quiescence.h"
#include "tests/integration/ring_port.h"

namespace hvswitch {
namespace {

using testing::MakeFrame;
using testing::RingPort;

constexpr uint64_t kDestination = 0x0b00;

uint64_t SourceMac(uint32_t i) { return (uint64_t{i + 1} << 16) | 0x0200; }
uint64_t ResidentMac(uint32_t i) { return (uint64_t{i + 1} << 16) | 0x0600; }

double Seconds(uint64_t cycles) { return static_cast<double>(cycles) / rte_get_tsc_hz(); }

}  // namespace

int RunLearning(uint32_t resident, uint32_t fresh, uint32_t flush) {
  const unsigned lcore = rte_get_next_lcore(-1, 1, 0);
  if (lcore >= RTE_MAX_LCORE) {
    std::fprintf(stderr, "needs a second lcore\n");
    return 1;
  }
  rte_mempool* pool = rte_pktmbuf_pool_create("learn_pool", 16383, 256, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  std::unique_ptr<Fdb> fdb = *Fdb::Create("learn_fdb", resident + fresh + flush + kMaxPorts * 256);
  std::unique_ptr<RingPort> a = RingPort::Create("la", 1, 1, 4096, pool);
  std::unique_ptr<RingPort> b = RingPort::Create("lb", 1, 1, 4096, pool, 32768);
  if (pool == nullptr || a == nullptr || b == nullptr) return 1;
  std::vector<PortSpec> specs(3);
  PortTable table;
  table.Configure(specs);
  table.ports[0].eth_port = a->eth_port();
  table.ports[1].eth_port = b->eth_port();
  table.rx[0].push_back({0, a->eth_port(), 0});
  Datapath datapath;
  datapath.fdb = fdb.get();
  datapath.table.store(&table);
  datapath.up_mask.store(0b111);
  std::unique_ptr<LearnQueue> learn = *LearnQueue::Create("learn_q", LearnQueue::kRingSize);
  learn->set_repeat_cycles(rte_get_tsc_hz() / 1000);
  std::unique_ptr<Wakeup> wakeup = *Wakeup::Create();
  learn->set_wakeup_fd(wakeup->fd());
  Learner learner(*fdb, datapath, {learn.get()});
  for (uint16_t p = 0; p < specs.size(); ++p) learner.AddPort(p, specs[p]);
  if (!fdb->AddStatic(kDestination, 1).ok()) return 1;
  uint64_t start = rte_get_tsc_cycles();
  for (uint32_t i = 0; i < resident; ++i) fdb->Learn(ResidentMac(i), 1, 0);
  std::printf("resident: %u MACs in %.3f s\n", resident, Seconds(rte_get_tsc_cycles() - start));

  std::unique_ptr<WorkerQuiescence> quiescence = *WorkerQuiescence::Create(1);
  WorkerCounters counters;
  std::atomic<bool> stop{false};
  ForwarderOptions options;
  Worker worker(options, datapath, *learn, counters, *quiescence, 32, stop);
  if (rte_eal_remote_launch(&Worker::Main, &worker, lcore) != 0) return 1;

  const uint32_t base = fdb->learned(0);
  const uint64_t hz = rte_get_tsc_hz();
  start = rte_get_tsc_cycles();
  std::atomic<uint64_t> sent_done{0};
  std::atomic<bool> done{false};
  uint64_t end = 0, wakes = 0;
  std::thread control([&] {
    uint64_t last_change = start;
    uint32_t last_learned = 0;
    std::vector<pollfd> no_fds;
    while (true) {
      const ControlClock::duration again = learner.Poll(0);
      const uint64_t now = rte_get_tsc_cycles();
      const uint32_t learned = fdb->learned(0) - base;
      if (learned != last_learned) last_change = now;
      last_learned = learned;
      // Done, or given up: nothing new learned for a second after the last frame went.
      const uint64_t sent = sent_done.load();
      if (learned == fresh || (sent != 0 && now - last_change > hz)) break;
      wakeup->Wait(no_fds, ControlClock::now() + std::min(again, ControlTimers::kAgePeriod));
      ++wakes;
    }
    end = rte_get_tsc_cycles();
    done.store(true);
  });
  uint32_t next = 0;
  while (!done.load(std::memory_order_relaxed)) {
    if (next < fresh) {
      rte_mbuf* burst[32];
      const uint32_t n = std::min<uint32_t>(32, fresh - next);
      for (uint32_t i = 0; i < n; ++i) burst[i] = MakeFrame(pool, {SourceMac(next + i), kDestination});
      const unsigned in = a->Inject(0, burst, n);
      for (unsigned i = in; i < n; ++i) rte_pktmbuf_free(burst[i]);
      next += in;
      if (next == fresh) sent_done.store(rte_get_tsc_cycles());
    }
    for (rte_mbuf* m : b->TakeSent()) rte_pktmbuf_free(m);
  }
  control.join();
  stop.store(true);
  rte_eal_wait_lcore(lcore);
  for (rte_mbuf* m : b->TakeSent()) rte_pktmbuf_free(m);
  const uint32_t learned = fdb->learned(0) - base;
  const uint64_t drops = counters[CoreCounter::kLearnQueueDrops].Read();
  std::printf("new: %u sources sent in %.3f s, %u learned in %.3f s (%.2f M/s), "
              "learn requests refused by the ring: %llu, not learned: %u; the control "
              "thread woke %llu times\n",
              fresh, Seconds(sent_done.load() - start), learned, Seconds(end - start),
              learned / Seconds(end - start) / 1e6, static_cast<unsigned long long>(drops),
              fresh - learned, static_cast<unsigned long long>(wakes));

  // Forgetting: `flush` MACs learned on port 2, flushed.
  for (uint32_t i = 0; i < flush; ++i) fdb->Learn(SourceMac(fresh + i), 2, 0);
  start = rte_get_tsc_cycles();
  learner.Flush(2);
  const uint64_t flushed = rte_get_tsc_cycles();
  learner.Age(0, 0);
  const uint64_t aged = rte_get_tsc_cycles();
  std::printf("flush: %u MACs of a port forgotten in %.1f us (generation), their slots freed "
              "by a whole ageing sweep in %.3f s (%u buckets; the daemon spreads it over a "
              "second)\n",
              flush, Seconds(flushed - start) * 1e6, Seconds(aged - flushed), fdb->buckets());
  return 0;
}

}  // namespace hvswitch

int main(int argc, char** argv) {
  const char* eal[] = {"learn_bench", "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
                       "-l", "0-1", "--log-level=lib.eal:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "cannot init EAL\n");
    return 1;
  }
  uint32_t resident = 1000000, fresh = 200000, flush = 100000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--resident=", 11) == 0) resident = std::atoi(argv[i] + 11);
    if (std::strncmp(argv[i], "--new=", 6) == 0) fresh = std::atoi(argv[i] + 6);
    if (std::strncmp(argv[i], "--flush=", 8) == 0) flush = std::atoi(argv[i] + 8);
  }
  const int rc = hvswitch::RunLearning(resident, fresh, flush);
  rte_eal_cleanup();
  return rc;
}
