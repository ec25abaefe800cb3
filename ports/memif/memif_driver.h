// memif: shared-memory packet rings with a VPP, libmemif or DPDK peer (net_memif).
// hvswitch is the memif server and creates the socket, or with client=1 connects to the
// peer's, where zero_copy=1 lets the peer read and write hvswitch's buffers in place.
// DPDK 22.11's memif PMD needs workarounds: ports/memif/memif_fixups.h and the guards
// beside it.
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

const PortDriver& MemifDriver();

}  // namespace hvswitch
