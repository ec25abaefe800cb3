#include "switch/datapath/worker.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <algorithm>

#include "ports/port_driver.h"

namespace hvswitch {

int Worker::Main(void* self) {
  static_cast<Worker*>(self)->Run();
  return 0;
}

void Worker::Run() {
  for (const PortDriver* driver : PortDrivers()) driver->OnWorkerThread();
  quiescence_.Online(id_);
  uint64_t start = rte_rdtsc();
  const PortTable* table = datapath_.table.load(std::memory_order_acquire);
  forwarder_.Use(table);
  while (!stop_.load(std::memory_order_relaxed)) {
    uint64_t now, busy = 0;
    Round(*table, now, busy);
    // What waits was meant for the old table's ports (one may be going): sent while that
    // table is still safe to use, i.e. before this round's quiescent state.
    if (datapath_.table.load(std::memory_order_relaxed) != table) LetGoOfTable();
    quiescence_.Quiescent(id_);
    // Nothing read before the quiescent state may be used after it (the control thread may
    // free it as soon as every worker has reported one): the table is read anew.
    table = datapath_.table.load(std::memory_order_acquire);
    forwarder_.Use(table);
    // As testpmd counts: busy, the poll calls that returned frames and the work they
    // caused; idle, the rest of the loop (empty polls, timed flushes, quiescent states).
    counters_[CoreCounter::kBusyCycles].Add(busy);
    counters_[CoreCounter::kIdleCycles].Add(now - start - busy);
    start = now;
  }
  LetGoOfTable();
  quiescence_.Offline(id_);
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
  if (table.reclaim_tx != 0) forwarder_.ReclaimTx();
  now = rte_rdtsc();
  if (flushes_by_time_ && forwarder_.HasPending()) forwarder_.FlushExpired(now);
  if (forwarder_.HasParked()) forwarder_.OfferParked(now);
  return received;
}

void Worker::LetGoOfTable() {
  forwarder_.FlushAll();
  forwarder_.DropParked();
}

}  // namespace hvswitch
