// UnixConnectGuard: a blocking connect() to a UNIX socket on the control thread gives up
// after kConnectTimeoutMs instead of waiting for the peer.
//
// Why: DPDK 22.11's memif client connects its SOCK_SEQPACKET socket blocking
// (memif_connect_client, from rte_eth_dev_start). A memif server whose listen backlog is
// full (a guest that stops accepting) would hold the control thread in connect() for
// good: no learning, link following, ageing or control. The kernel bounds a UNIX
// socket's connect() by the socket's send timeout (SO_SNDTIMEO). hvswitch defines
// connect() itself (exported from the executable, as close() for memseg_fd_guard.h): on a
// thread that asked for it, a blocking AF_UNIX connect runs with that timeout, fails with
// EAGAIN when it expires (the memif port is tried again a second later), and the socket
// gets its own timeout back. Every other connect() goes to the kernel unchanged.
#pragma once

namespace hvswitch::unix_connect_guard {

inline constexpr long kConnectTimeoutMs = 20;

// The calling thread's blocking UNIX connects are bounded from now on (the control thread
// calls it at start).
void BoundThisThread();

}  // namespace hvswitch::unix_connect_guard
