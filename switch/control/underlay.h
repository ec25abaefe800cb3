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

struct mnl_socket;
struct nlmsghdr;

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
  ~Underlay();
  Underlay(const Underlay&) = delete;
  Underlay& operator=(const Underlay&) = delete;

  // The interface holding `local` (network order).
  absl::StatusOr<LocalInterface> FindLocal(in_addr_t local);
  // The next hop towards `remote` (network order) and its MAC; when the kernel does not
  // know that MAC yet, it is asked to resolve it.
  NextHop Resolve(in_addr_t remote);

 private:
  explicit Underlay(mnl_socket* nl) : nl_(nl) {}
  // Sends the request in buf_ and runs `cb` over the answers until done; errno-style
  // error (0: fine).
  int Request(int (*cb)(const ::nlmsghdr*, void*), void* data);

  mnl_socket* nl_;
  uint32_t seq_ = 0;
  std::unique_ptr<char[]> buf_;
};

std::string Ipv4Text(in_addr_t ip);  // network order
std::string MacText(const MacBytes& mac);

}  // namespace hvswitch
