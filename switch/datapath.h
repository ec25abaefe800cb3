// Datapath: what the workers read about the bridge: the ports' ethdev ids and link state,
// and the FDB. Written by the control thread (link state, FDB learning); read by workers.
// The port set is fixed while workers run.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "switch/counters.h"
#include "switch/fdb.h"

namespace hvswitch {

inline constexpr uint16_t kMaxBurst = 64;  // at most one FDB bulk lookup per burst

struct DatapathPort {
  uint16_t eth_port = 0;
  uint16_t nb_txq = 1;
};

struct Datapath {
  std::array<DatapathPort, kMaxPorts> ports{};
  uint16_t nb_ports = 0;
  const Fdb* fdb = nullptr;
  // Bit p set while port p's link is up (guest connected); written by the control thread.
  std::atomic<uint64_t> up_mask{0};
  // The control thread's clock in seconds, for FDB last-seen times.
  std::atomic<uint32_t> now_seconds{0};
};

}  // namespace hvswitch
