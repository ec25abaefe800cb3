// RtNetlink: one rtnetlink socket of the control thread (libmnl), for requests the kernel
// answers at once (Request) or for the notifications of some groups (Drain). Shared by
// the VXLAN underlay (routes, neighbours) and the EVPN shadow VTEP (links, FDB entries).
#pragma once

#include <libmnl/libmnl.h>

#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace hvswitch {

class RtNetlink {
 public:
  // `groups`: a bit per RTNLGRP_* - 1 to be notified of (0: requests only).
  static absl::StatusOr<std::unique_ptr<RtNetlink>> Open(uint32_t groups = 0);
  ~RtNetlink();
  RtNetlink(const RtNetlink&) = delete;
  RtNetlink& operator=(const RtNetlink&) = delete;

  // A new request of `type` in the socket's buffer (with a fresh sequence number).
  nlmsghdr* Start(uint16_t type, uint16_t flags);
  // Sends the request Start began and runs `cb` over the answers until the last (a dump's
  // DONE, an ack, or the one answer of a plain request); 0 or an errno.
  int Run(mnl_cb_t cb = nullptr, void* data = nullptr);
  // Notifications waiting (never blocks): `cb` over each. False when the kernel dropped
  // some (ENOBUFS: the socket's buffer overflowed): the caller must read its state anew.
  bool Drain(mnl_cb_t cb, void* data);

 private:
  RtNetlink(mnl_socket* nl, std::unique_ptr<char[]> buf) : nl_(nl), buf_(std::move(buf)) {}

  mnl_socket* nl_;
  std::unique_ptr<char[]> buf_;
  uint32_t seq_ = 0;
};

// Fills tb[type] for each attribute of a message, up to `max` (mnl_attr_parse's callback
// for any family, with the table and its size passed as AttrTable).
struct AttrTable {
  const nlattr** tb;
  uint16_t max;
};
int CollectAttr(const nlattr* attr, void* table);

}  // namespace hvswitch
