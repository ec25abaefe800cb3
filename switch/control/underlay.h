// Underlay: how a VXLAN tunnel's outer headers are found, from the host kernel's own
// tables over rtnetlink (as Open vSwitch's userspace tunnels take routes from the
// kernel): the local VTEP address sits on a kernel interface of hvswitch's network
// namespace, whose MAC is the outer source; the route to each remote VTEP gives the next
// hop, and the kernel's neighbour table its MAC. An unknown neighbour is resolved by the
// kernel (ARP on that interface), asked to with NTF_USE, and looked up again later.
// Control thread only; every call is one request the kernel answers at once.
#pragma once

#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "switch/control/rtnetlink.h"

namespace hvswitch {

using MacBytes = std::array<uint8_t, 6>;

struct LocalInterface {
  int ifindex = 0;
  std::string name;
  MacBytes mac{};
};

struct NextHop {
  bool resolved = false;   // dst_mac is the next hop's MAC
  in_addr_t via = 0;       // the gateway, or the VTEP itself when on-link
  int ifindex = 0;         // the interface the kernel would send on
  MacBytes dst_mac{};
  std::string problem;     // why not resolved ("no route", "neighbour incomplete")
};

class Underlay {
 public:
  static absl::StatusOr<std::unique_ptr<Underlay>> Open();

  // The interface holding `local` (network order).
  absl::StatusOr<LocalInterface> FindLocal(in_addr_t local);
  // The next hop towards `remote` (network order) and its MAC; when the kernel does not
  // know that MAC yet, it is asked to resolve it.
  NextHop Resolve(in_addr_t remote);

 private:
  explicit Underlay(std::unique_ptr<RtNetlink> nl) : nl_(std::move(nl)) {}

  std::unique_ptr<RtNetlink> nl_;
};

std::string Ipv4Text(in_addr_t ip);  // network order
std::string MacText(const MacBytes& mac);

}  // namespace hvswitch
