#include "switch/datapath/worker.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <sys/prctl.h>

#include <algorithm>
#include <ctime>

#include "ports/port_driver.h"

namespace hvswitch {

int Worker::Main(void* self) {
  static_cast<Worker*>(self)->Run();
  return 0;
}

void Worker::Run() {
  for (const PortDriver* driver : PortDrivers()) driver->OnWorkerThread();
  // A sleep ends when it is due, not up to 50 us later (the default timer slack).
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  quiescence_.Online(id_);
  uint64_t start = rte_rdtsc();
  const PortTable* table = datapath_.table.load(std::memory_order_acquire);
  forwarder_.Use(table);
  while (!stop_.load(std::memory_order_relaxed)) {
    uint64_t now, busy = 0;
    const uint32_t received = Round(*table, now, busy);
    // What waits was meant for the old table's ports (one may be going): sent while that
    // table is still safe to use, i.e. before this round's quiescent state.
    const bool table_changed = datapath_.table.load(std::memory_order_relaxed) != table;
    if (table_changed) LetGoOfTable();
    const uint32_t max_ns = table->max_sleep_ns[id_];
    uint32_t sleep_ns = idle_.Next(
        received, table_changed || forwarder_.HasPending() || forwarder_.HasParked(), max_ns,
        now);
    const bool block = BlockNext(*table, sleep_ns, max_ns);
    if (block) quiescence_.Block(id_);  // before the report: see WorkerQuiescence::Block
    quiescence_.Quiescent(id_);
    if (block) {
      Block();
    } else if (sleep_ns != 0) {
      Sleep(sleep_ns);
    }
    // Nothing read before the quiescent state may be used after it (the control thread may
    // free it as soon as every worker has reported one): the table is read anew.
    table = datapath_.table.load(std::memory_order_acquire);
    forwarder_.Use(table);
    // The queues registered for interrupts are the last table's: let go of them before the
    // next report, as of the frames that waited for its ports.
    if (interrupts_.registered() != nullptr && interrupts_.registered() != table) {
      interrupts_.Release();
    }
    // As testpmd counts: busy, the poll calls that returned frames and the work they
    // caused; idle, the rest of the loop (empty polls, timed flushes, quiescent states).
    counters_[CoreCounter::kBusyCycles].Add(busy);
    counters_[CoreCounter::kIdleCycles].Add(now - start - busy);
    start = now;
  }
  LetGoOfTable();
  interrupts_.Release();
  quiescence_.Offline(id_);
}

bool Worker::BlockNext(const PortTable& table, uint32_t& sleep_ns, uint32_t max_ns) {
  if (interrupts_.armed()) {
    // The round after arming found nothing: whatever comes now raises an interrupt.
    if (sleep_ns != 0) return true;
    interrupts_.Disarm();
    return false;
  }
  // Sleeps at their longest, and every queue of this worker can interrupt: armed, then
  // one more round before blocking (frames that came before the arming raise nothing).
  if (sleep_ns != 0 && sleep_ns == max_ns && ((table.blocks >> id_) & 1) &&
      interrupts_.Arm(table, id_)) {
    sleep_ns = 0;
  }
  return false;
}

void Worker::Block() {
  const uint64_t before = rte_rdtsc();
  // Stopping rings only blocked workers: a stop set before Block was seen is seen here.
  if (!stop_.load(std::memory_order_seq_cst)) {
    counters_.blocked_since.store(before, std::memory_order_relaxed);
    const RxInterrupts::Wake wake = interrupts_.Wait();
    counters_[wake == RxInterrupts::Wake::kControl ? CoreCounter::kWakeupsControl
                                                   : CoreCounter::kWakeupsInterrupt]
        .Add(1);
  }
  quiescence_.Unblock(id_);
  interrupts_.Disarm();
  counters_.EndBlock(rte_rdtsc() - before);
}

uint32_t Worker::Round(const PortTable& table, uint64_t& now, uint64_t& busy) {
  rte_mbuf* pkts[kMaxRxBurst];
  uint32_t received = 0;
  uint64_t polled = rte_rdtsc();  // when the next poll call starts: one read per call
  // Kernel and NIC ports with frames parked for a full destination: theirs wait in their
  // own queues meanwhile (Forwarder::PausedSources).
  const uint64_t paused = forwarder_.PausedSources();
  for (const RxQueueRef& q : table.rx[id_]) {
    if ((paused >> q.port) & 1) continue;
    uint16_t n = rte_eth_rx_burst(q.eth_port, q.queue, pkts, burst_);
    if (n == 0) {
      polled = rte_rdtsc();
      continue;
    }
    counters_.rx_bursts[BurstBucket(n)].Add(1);
    forwarder_.Received(polled);  // its frames' residence counts from the call's start
    // The forwarder takes at most kMaxBurst frames at a time (one bulk FDB lookup).
    for (uint16_t off = 0; off < n; off += kMaxBurst) {
      forwarder_.HandleBurst(q.port, pkts + off, std::min<uint16_t>(kMaxBurst, n - off));
    }
    received += n;
    const uint64_t done = rte_rdtsc();
    busy += done - polled;
    counters_.ports[q.port].Add(PortCounter::kCpuCycles, done - polled);
    polled = done;
  }
  if (received != 0) counters_[CoreCounter::kPackets].Add(received);
  if (table.tx_each_round != 0) forwarder_.TxEachRound();
  now = rte_rdtsc();
  if (flushes_by_time_ && forwarder_.HasPending()) forwarder_.FlushExpired(now);
  if (forwarder_.HasParked()) forwarder_.OfferParked(now);
  return received;
}

void Worker::Sleep(uint32_t ns) {
  // Offline: a publication does not wait for this sleep; the table is read anew after it.
  quiescence_.Offline(id_);
  const uint64_t before = rte_rdtsc();
  const timespec duration{0, static_cast<long>(ns)};
  clock_nanosleep(CLOCK_MONOTONIC, 0, &duration, nullptr);
  counters_[CoreCounter::kSleepCycles].Add(rte_rdtsc() - before);
  counters_[CoreCounter::kWakeupsTimer].Add(1);
  quiescence_.Online(id_);
}

void Worker::LetGoOfTable() {
  forwarder_.FlushAll();
  forwarder_.DropParked();
}

}  // namespace hvswitch
