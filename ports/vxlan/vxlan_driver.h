// type=vxlan: one VNI's VXLAN tunnel over another port (the uplink), as a bridge port of
// its own (an access port of the VLAN the VNI carries):
//
//   NAME,type=vxlan,vni=V,vlan=N,uplink=PORT,local=IP[,remote=IP[,IP...]][,udp_port=P]
//       [,udp_csum=1][,evpn=1][,queues=N][,mtu=N]
//
// local: this host's VTEP address (IPv4), on a kernel interface of hvswitch's network
// namespace (the underlay's routes and neighbours are the kernel's). remote: the static
// flood list; remote MACs are learned from what arrives (evpn=1: both come from FRR
// instead, and nothing is learned from the wire).
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ports/port_driver.h"
#include "ports/port_spec.h"

namespace hvswitch {

const PortDriver& VxlanDriver();

// A vxlan spec's own keys, for the control plane that attaches the tunnel.
struct VxlanKeys {
  uint32_t vni = 0;
  std::string uplink;
  in_addr_t local = 0;           // network order
  std::vector<in_addr_t> remotes;  // network order
  uint16_t udp_port = 4789;
  bool udp_csum = false;
  bool evpn = false;
};
VxlanKeys ReadVxlanKeys(const PortSpec& spec);

// `VNI,KEY=VALUE...` (--vxlan=, hvswitchctl vxlan add): the port `vxlanVNI` of
// type=vxlan with those keys.
absl::StatusOr<PortSpec> ParseVxlanSpec(absl::string_view text);
inline constexpr absl::string_view kVxlanPortPrefix = "vxlan";

}  // namespace hvswitch
