// dpdk: any other DPDK device, by its devargs (a PCI address, or a vdev string such as
// net_tap0,iface=x), taken verbatim: NICs, af_packet, tap, pcap, null...
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

const PortDriver& DpdkDriver();

// Shared with the devices built on such devices (type=bond):
// Tx checksum and TSO offloads turned on in `conf` where the device has them.
DeviceSetup NicOffloadSetup(const rte_eth_dev_info& info, rte_eth_conf& conf);
// A known flaw of a DPDK driver, logged when its port opens; empty for none.
absl::string_view DeviceCaveat(absl::string_view driver_name);

}  // namespace hvswitch
