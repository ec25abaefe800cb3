// vhost-user: a QEMU guest's virtio-net device over DPDK's vhost PMD (net_vhost). hvswitch
// creates the socket, or connects to QEMU's with client=1.
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

const PortDriver& VhostUserDriver();

}  // namespace hvswitch
