// LatencyProbe: one-way latency through a switch between two ports of one process (so
// both ends read the same TSC and no scheduler sits between a sender and a receiver).
// Frames stamped with the TSC as they are handed to the sending port, paced at a given
// rate, are read back on the receiving port; every frame is a probe, so the rate is the
// load the switch is measured at.
#pragma once

#include <rte_ether.h>
#include <rte_mempool.h>

#include <cstdint>
#include <string>

namespace hvswitch::guest {

struct LatencyRun {
  uint16_t tx_port = 0, rx_port = 1;
  rte_ether_addr dst{}, src{};
  uint64_t count = 0;   // frames to send
  uint64_t rate = 0;    // frames per second; 0: as fast as the port takes them
  uint16_t size = 64;   // frame length without the FCS
};

struct LatencyResult {
  uint64_t sent = 0, received = 0, foreign = 0;  // foreign: not this run's probes
  double seconds = 0;   // from the first send to the last
  double p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  std::string Json() const;
};

// Sends run.count probes and waits up to 200 ms after the last for the stragglers.
LatencyResult MeasureLatency(rte_mempool* pool, const LatencyRun& run);

}  // namespace hvswitch::guest
