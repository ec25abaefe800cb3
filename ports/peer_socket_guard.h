// PeerSocketGuard: no thread of hvswitch waits long for the peer of a UNIX socket.
//
// Why: DPDK 22.11 talks to guests' peers (QEMU over vhost-user, a memif peer) with
// blocking sockets, and a peer that stops cooperating would hold a thread for good:
//   - the memif client connects blocking (memif_connect_client, from rte_eth_dev_start
//     on the control thread): a server whose listen backlog is full holds it in
//     connect(), and with it learning, link following, ageing and control;
//   - the vhost library's one event thread ("vhost-events") reads a message's payload
//     with a blocking read() once its header came, and sends replies blocking: a peer
//     that sends a header and nothing more, or never reads, holds the thread that serves
//     every vhost-user socket (no guest connects or renegotiates any more), and a
//     `port del` of that port then waits for it for ever.
// The kernel bounds a UNIX socket's connect() and sends by its send timeout
// (SO_SNDTIMEO) and its reads by its receive timeout (SO_RCVTIMEO). hvswitch defines
// connect() and accept() itself (exported from the executable, as close() for
// memif/memseg_fd_guard.h):
//   - on the control thread (which asks for it at start) a blocking AF_UNIX connect
//     gives up after kConnectTimeoutMs (EAGAIN: the memif port is tried again a second
//     later);
//   - a UNIX socket connected by the control thread or the vhost library's reconnect
//     thread, or accepted by the vhost event thread or the EAL's interrupt thread (where
//     the memif PMD accepts), gets kPeerIoTimeoutMs on its reads and sends: a peer that
//     stalls a message is disconnected by the library instead.
// Every other connect() and accept() goes to the kernel unchanged.
#pragma once

namespace hvswitch::peer_socket_guard {

inline constexpr long kConnectTimeoutMs = 20;
inline constexpr long kPeerIoTimeoutMs = 1000;

// The calling thread is the control thread: its UNIX connects are bounded and its
// sockets get peer timeouts from now on.
void BoundThisThread();

}  // namespace hvswitch::peer_socket_guard
