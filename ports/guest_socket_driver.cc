#include "ports/guest_socket_driver.h"

#include "ports/peer_socket_guard.h"
#include "ports/port_spec.h"
#include "ports/spec_keys.h"

namespace hvswitch {

PortTraits GuestSocketDriver::Traits(const PortSpec& spec) const {
  PortTraits traits;
  traits.socket = traits.endpoint = std::string(SocketPath(spec));
  traits.owns_socket = !IsClient(spec);
  return traits;
}

void GuestSocketDriver::OnControlThread() const { peer_socket_guard::BoundThisThread(); }

}  // namespace hvswitch
