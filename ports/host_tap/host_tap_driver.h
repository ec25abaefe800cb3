// host: a kernel interface for the host's own traffic (or a namespace's, a container's),
// over hvswitch's net_hvs_tap device: frames carry a virtio-net header, so partial
// checksums and TCP super-frames cross between guests and the host kernel whole
// (host_tap_pmd.h). Prefer it to type=dpdk,devargs=net_tap... wherever the kernel side is
// a Linux stack: net_tap makes the kernel complete and segment everything, and hvswitch
// segment guests' super-frames in software, one system call per segment. For an
// interface that exists already (a veth end), type=netdev (netdev_driver.h).
//
//   --port=NAME,type=host,iface=IFACE[,netns=NS][,queues=N]
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

const PortDriver& HostTapDriver();

}  // namespace hvswitch
