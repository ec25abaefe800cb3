// netdev: a kernel interface that exists already — a veth end whose peer is a namespace's
// or a container's, a NIC the kernel drives — attached over hvswitch's net_hvs_packet
// device: packet sockets with a virtio-net header, so the kernel's partial checksums and
// TCP super-frames cross whole in both directions (host_tap_pmd.h). Use it instead of
// type=dpdk,devargs=net_af_packet...: DPDK 22.11's af_packet PMD forwards the partial
// checksums a veth hands over (its default transmit checksum offload) as they are, and
// the receiver drops them. type=host is the other kernel port: there hvswitch creates the
// interface (a tap) itself.
//
//   --port=NAME,type=netdev,iface=IFACE[,netns=NS][,queues=N]
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

const PortDriver& NetdevDriver();

}  // namespace hvswitch
