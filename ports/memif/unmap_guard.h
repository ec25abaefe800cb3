// UnmapGuard: makes munmap() wait until the workers are quiescent.
//
// Why: the memif PMD of DPDK 22.11 has no synchronisation between its control path and
// its data path. When a memif guest disconnects, the EAL interrupt thread clears the
// port's "connected" flag and then unmaps the guest's shared memory at once, while a
// worker may be inside rte_eth_rx_burst/tx_burst on that memory (seen here: SIGSEGV in
// eth_memif_rx about once in 15 guest disconnects). hvswitch defines munmap() itself
// (exported from the executable, so the PMD's call binds to it): while workers run, an
// unmap from any other thread first waits for every worker to pass a quiescent point, so
// a burst that saw the port connected has finished, and a new one sees it disconnected.
// Workers never wait (they would wait for themselves). The memif driver installs it
// (PortDriver::OnWorkersRunning, OnWorkerThread).
#pragma once

#include "ports/reader_grace.h"

namespace hvswitch::unmap_guard {

// Control thread: start or stop guarding (nullptr stops). Returns once no unmap is still
// using the grace installed before: the caller may then free it. Call it with the
// workers stopped or running, never from a worker.
void Install(ReaderGrace* grace);

// Unmaps inside the guard now (tests: to know one is waiting for the workers).
int UnmapsWaiting();

// Worker thread: marks the calling thread as a worker, whose own unmaps never wait.
void MarkWorkerThread();

}  // namespace hvswitch::unmap_guard
