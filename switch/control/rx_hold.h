// How long a port's receive rings hold frames that arrive at its line rate while no worker
// polls them: what bounds a worker's sleep (--idle=sleep) so that sleeping loses nothing.
#pragma once

#include <cstdint>

namespace hvswitch {

class Port;

// In ns: the port's receive descriptors over the rate of 64-byte frames at its link speed
// (the link's if up, else the fastest the device supports, else 10 Gb/s);
// DatapathPort::kRingWaits for a ring that is the peer's (a guest, whose sender waits for
// room rather than dropping).
uint32_t RxHoldNs(const Port& port);

// The same, from a ring size and a link speed in Mb/s (0: unknown, taken as 10 Gb/s).
uint32_t RxHoldNs(uint32_t descriptors, uint32_t link_mbps);

}  // namespace hvswitch
