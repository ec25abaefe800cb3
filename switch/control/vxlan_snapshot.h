// What hvswitchctl's `vxlan show` and the metrics read of the VXLAN tunnels: plain data
// (VxlanTunnels::Snapshot fills it in).
#pragma once

#include <string>
#include <vector>

#include "ports/vxlan/uplink_demux.h"
#include "ports/vxlan/vxlan_device.h"

namespace hvswitch {

struct VtepSnapshot {
  std::string ip;
  bool flood = false;    // in the flood list (remote= or EVPN type-3)
  bool resolved = false;
  std::string next_hop, next_hop_mac, problem;
  VtepTotals totals{};
};

struct VxlanSnapshot {
  std::string port, uplink, local, local_iface;
  uint32_t vni = 0;
  uint16_t vlan = 0, udp_port = 0;
  bool evpn = false;
  size_t remote_macs = 0;
  TunnelTotals totals{};
  VtepTotals unknown_source{};  // frames from an address that is no known VTEP
  std::vector<VtepSnapshot> vteps;
};

struct UplinkDecapSnapshot {
  std::string uplink;
  DecapTotals totals{};
};

struct VxlanTunnelsSnapshot {
  std::vector<VxlanSnapshot> tunnels;
  std::vector<UplinkDecapSnapshot> uplinks;
};

}  // namespace hvswitch
