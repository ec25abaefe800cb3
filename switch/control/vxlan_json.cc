#include "switch/control/vxlan_json.h"

namespace hvswitch {
namespace {

using json = nlohmann::json;

json VtepCounters(const VtepTotals& totals) {
  json out = json::object();
  size_t i = 0;
#define X(name, help) out[#name] = totals[i++];
  VXLAN_VTEP_COUNTERS(X)
#undef X
  return out;
}

}  // namespace

json VxlanJson(const VxlanTunnelsSnapshot& snap) {
  json tunnels = json::array();
  for (const VxlanSnapshot& t : snap.tunnels) {
    json counters = json::object();
    size_t i = 0;
#define X(name, help) counters[#name] = t.totals[i++];
    VXLAN_TUNNEL_COUNTERS(X)
#undef X
    json vteps = json::array();
    for (const VtepSnapshot& v : t.vteps) {
      json vtep = {{"ip", v.ip}, {"flood", v.flood}, {"resolved", v.resolved},
                   {"counters", VtepCounters(v.totals)}};
      if (!v.next_hop.empty()) vtep["next_hop"] = v.next_hop;
      if (!v.next_hop_mac.empty()) vtep["next_hop_mac"] = v.next_hop_mac;
      if (!v.resolved && !v.problem.empty()) vtep["problem"] = v.problem;
      vteps.push_back(std::move(vtep));
    }
    tunnels.push_back({{"port", t.port},
                       {"vni", t.vni},
                       {"vlan", t.vlan},
                       {"uplink", t.uplink},
                       {"local", t.local},
                       {"local_iface", t.local_iface},
                       {"udp_port", t.udp_port},
                       {"evpn", t.evpn},
                       {"remote_macs", t.remote_macs},
                       {"flood_vteps", std::count_if(t.vteps.begin(), t.vteps.end(),
                                                     [](const VtepSnapshot& v) { return v.flood; })},
                       {"counters", counters},
                       {"unknown_source", VtepCounters(t.unknown_source)},
                       {"vteps", vteps}});
  }
  json uplinks = json::array();
  for (const UplinkDecapSnapshot& u : snap.uplinks) {
    json decap = json::object();
    size_t i = 0;
#define X(name, help) decap[#name] = u.totals[i++];
    VXLAN_DECAP_COUNTERS(X)
#undef X
    uplinks.push_back({{"uplink", u.uplink}, {"decap", decap}});
  }
  return {{"tunnels", tunnels}, {"uplinks", uplinks}};
}

}  // namespace hvswitch
