#include "switch/datapath/vlan_table.h"

namespace hvswitch {

VlanTable VlanTable::Build(const std::vector<const PortSpec*>& specs) {
  VlanTable table;
  for (size_t p = 0; p < specs.size() && p < kMaxPorts; ++p) {
    if (specs[p] == nullptr) {
      table.ports[p].native_vlan = kNoVlan;
      continue;
    }
    const PortSpec& spec = *specs[p];
    const uint64_t bit = uint64_t{1} << p;
    PortVlan& pv = table.ports[p];
    if (spec.access_vlan != 0) {
      pv.accepts_tagged = false;
      pv.native_vlan = spec.access_vlan;
      table.members[spec.access_vlan] |= bit;
    } else if (!spec.trunk_vlans.empty()) {
      pv.native_vlan = spec.native_vlan != 0 ? spec.native_vlan : kNoVlan;
      for (uint16_t v : spec.trunk_vlans) table.members[v] |= bit;
      if (spec.native_vlan != 0) table.members[spec.native_vlan] |= bit;
    } else {
      pv.native_vlan = 0;
      for (uint64_t& members : table.members) members |= bit;
    }
    if (pv.native_vlan != kNoVlan) table.untagged[pv.native_vlan] |= bit;
  }
  table.members[kVlans - 1] = 0;
  table.untagged[kVlans - 1] = 0;
  return table;
}

}  // namespace hvswitch
