// What vhost-user and memif share: a guest behind a UNIX socket (path=, client=).
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

class GuestSocketDriver : public PortDriver {
 public:
  PortRole role() const override { return PortRole::kGuest; }
  // The socket is path=; hvswitch creates it unless client=1 (the guest's side serves it).
  PortTraits Traits(const PortSpec& spec) const override;
  // No guest's peer may hold the control thread (ports/peer_socket_guard.h).
  void OnControlThread() const override;
};

}  // namespace hvswitch
