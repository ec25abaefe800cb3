// The control protocol's JSON of the VXLAN tunnels (vxlan show): each tunnel with its
// counters and VTEPs, each uplink's decapsulation. Keys come from the counter lists in
// ports/vxlan/ (VXLAN_VTEP_COUNTERS, VXLAN_TUNNEL_COUNTERS, VXLAN_DECAP_COUNTERS).
#pragma once

#include <nlohmann/json.hpp>

#include "switch/control/vxlan_snapshot.h"

namespace hvswitch {

nlohmann::json VxlanJson(const VxlanTunnelsSnapshot& snap);

}  // namespace hvswitch
