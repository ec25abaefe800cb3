// bond: an uplink over several devices with DPDK's net_bonding, in active-backup, 802.3ad
// (LACP) or balance-xor mode, its members given as DPDK device strings.
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

const PortDriver& BondDriver();

}  // namespace hvswitch
