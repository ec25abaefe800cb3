// net_hvs_tap and net_hvs_packet: hvswitch's own DPDK virtual devices for the kernel's
// network stack, whose frames carry a virtio-net header so that partial checksums and TCP
// super-frames cross between hvswitch and the kernel whole, in both directions (what
// QEMU's tap backend and Open vSwitch's userspace tap ports do; DPDK 22.11's net_tap has
// no such header, its net_af_packet ignores the kernel's checksum state, and its
// virtio_user exception path needs /dev/vhost-net, which many hosts lack).
//
//   net_hvs_tapN,iface=NAME[,netns=NS][,queues=N]     a tap hvswitch creates (type=host)
//   net_hvs_packetN,iface=NAME[,netns=NS][,queues=N]  an interface that exists (type=netdev)
//
// iface: net_hvs_tap: the interface to create (it must not exist); net_hvs_packet: the
// one to attach to (a veth end, any Ethernet netdev). netns: a name under /run/netns or a
// path such as /proc/PID/ns/net (default: hvswitch's own namespace). queues: Rx queues: a
// tap's IFF_MULTI_QUEUE, or packet sockets in a PACKET_FANOUT group, the kernel spreading
// flows over them. Tx queues may be more than queues: they share descriptors, whose
// writes the kernel serialises.
//
// Rx offloads (what the kernel may hand over): TCP/UDP checksum (partial checksums arrive
// as RTE_MBUF_F_RX_L4_CKSUM_NONE) and TCP LRO (super-frames arrive as RTE_MBUF_F_RX_LRO
// with tso_segsz, as chains). A tap is asked for them (TUN_F_CSUM, TUN_F_TSO4/6) and
// completes and segments itself what is not enabled; a packet socket hands over whatever
// the kernel has, and the device completes partial checksums the application did not
// enable and drops super-frames it did not (counted: bad_offload). Tx: TCP/UDP checksum
// and TCP TSO requests always go to the kernel in the header.
//
// A tap takes the port's MTU, is set up when the port starts and down when it stops, and
// disappears when the port closes. An attached interface keeps its owner's MTU (the
// device's maximum), addresses and offloads; it is set up at start if it was down (and
// down again at stop) and promiscuous while the port is open. Its VLAN tags, which the
// kernel hands a packet socket beside the frame, are put back into the frame.
#pragma once

namespace hvswitch {

// "net_hvs_tap", "net_hvs_packet". Referencing either links the drivers (and their
// registration) into a program.
const char* HostTapPmdName();
const char* PacketSocketPmdName();

}  // namespace hvswitch
