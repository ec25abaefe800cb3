// net_hvs_tap: hvswitch's own DPDK virtual device for the host kernel, a tap whose frames
// carry a virtio-net header so that partial checksums and TCP super-frames cross between
// hvswitch and the kernel whole, in both directions (what QEMU's tap backend and Open
// vSwitch's userspace tap ports do; DPDK 22.11's net_tap has no such header, and its
// virtio_user exception path needs /dev/vhost-net, which many hosts lack).
//
//   net_hvs_tapN,iface=NAME[,netns=NS][,queues=N]
//
// iface: the interface to create (it must not exist); netns: a name under /run/netns or a
// path such as /proc/PID/ns/net (default: hvswitch's own namespace); queues: Rx queues,
// IFF_MULTI_QUEUE when more than 1 (the kernel spreads flows over them). Tx queues may be
// more than queues: they share descriptors, whose writes the kernel serialises.
//
// Rx offloads (what the kernel may hand over): TCP/UDP checksum (TUN_F_CSUM: partial
// checksums arrive as RTE_MBUF_F_RX_L4_CKSUM_NONE) and TCP LRO (TUN_F_TSO4/6: super-frames
// arrive as RTE_MBUF_F_RX_LRO with tso_segsz, as chains); not enabled, the kernel
// completes and segments itself. Tx: TCP/UDP checksum and TCP TSO requests always go to
// the kernel in the header. The interface takes the port's MTU, is set up when the port
// starts and down when it stops, and disappears when the port closes.
#pragma once

namespace hvswitch {

// "net_hvs_tap". Referencing it links the driver (and its registration) into a program.
const char* HostTapPmdName();

}  // namespace hvswitch
