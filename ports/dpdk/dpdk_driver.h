// dpdk: any other DPDK device, by its devargs (a PCI address, or a vdev string such as
// net_tap0,iface=x), taken verbatim: NICs, af_packet, tap, pcap, null...
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

const PortDriver& DpdkDriver();

}  // namespace hvswitch
