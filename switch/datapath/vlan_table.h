// VlanTable: which port carries which VLAN and how (tagged or untagged), built from the
// port specs by the control thread and read by the workers. Pure data and functions, no
// DPDK, so the rules can be tested on their own.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ports/port_spec.h"
#include "switch/datapath/datapath_limits.h"

namespace hvswitch {

inline constexpr uint16_t kVlans = 4096;
inline constexpr uint16_t kNoVlan = 0xffff;

struct PortVlan {
  bool accepts_tagged = true;  // false on access ports: tagged frames are dropped
  uint16_t native_vlan = 0;    // VLAN of untagged frames; kNoVlan: they are dropped
};

// Slots for specs that fill every slot: specs[p] is port p's.
inline std::vector<const PortSpec*> SpecSlots(const std::vector<PortSpec>& specs) {
  std::vector<const PortSpec*> slots;
  for (const PortSpec& spec : specs) slots.push_back(&spec);
  return slots;
}

struct VlanTable {
  // Bit p of members[v]: port p carries VLAN v; of untagged[v]: it sends VLAN v untagged.
  std::array<uint64_t, kVlans> members{};
  std::array<uint64_t, kVlans> untagged{};
  std::array<PortVlan, kMaxPorts> ports{};

  // Plain ports carry every VLAN (untagged frames in VLAN 0), access ports one VLAN
  // untagged, trunks their list tagged and their native VLAN untagged. VLAN 4095 is
  // reserved and carried by none.
  // specs[p]: port p's spec, or null for an empty slot (carries nothing).
  static VlanTable Build(const std::vector<const PortSpec*>& specs);
  static VlanTable Build(const std::vector<PortSpec>& specs) { return Build(SpecSlots(specs)); }

  // The VLAN of a frame received on `port` (with its tag's TCI when tagged), or kNoVlan
  // when the port does not take it. A priority-tagged frame (VLAN id 0, 802.1Q) is in the
  // port's untagged VLAN, like an untagged one.
  uint16_t Ingress(uint16_t port, bool tagged, uint16_t tci) const {
    const PortVlan& pv = ports[port];
    const uint16_t vid = tci & 0xfff;
    uint16_t vlan = !tagged || vid == 0 ? pv.native_vlan : pv.accepts_tagged ? vid : kNoVlan;
    return vlan < kVlans && ((members[vlan] >> port) & 1) ? vlan : kNoVlan;
  }
  bool SendsUntagged(uint16_t vlan, uint16_t port) const { return (untagged[vlan] >> port) & 1; }
};

}  // namespace hvswitch
