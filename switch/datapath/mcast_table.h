// McastTable: where frames to a multicast group go under IGMP/MLD snooping
// (--mcast_snooping=1), as the control thread (switch/control/mcast_snooping.h) last
// published it: immutable, replaced whole and freed after a grace period (RCU), read by
// the workers only for frames to a group address. Keyed like the FDB, by VLAN and group
// MAC: groups whose addresses share a MAC (32 IPv4 groups a MAC) share their members, a
// superset RFC 4541 allows.
//
// A frame to a group MAC the table has goes to its members and to the VLAN's multicast
// router ports (queriers seen, mrouter=1), nowhere else; to any other group MAC it
// floods, as without snooping (unknown multicast, and the MACs the control thread never
// enters: IsUnsnoopedGroupMac).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hvswitch {

// The group MACs snooping leaves alone, their frames flooded: 01:00:5e:00:00:xx carries
// IPv4's link-local control groups 224.0.0.0/24, which must reach every port (RFC 4541
// 2.1.2: OSPF, VRRP, mDNS...), and every group mapped onto it (x.0.0.y and x.128.0.y: the
// MAC cannot tell them apart); 33:33:00:00:00:01 carries IPv6's all-nodes ff02::1 (RFC
// 4541 3: router advertisements, unsolicited neighbour advertisements) and the groups
// whose low 32 bits are 1; 33:33:ff:xx:xx:xx carries the solicited-node groups
// ff02::1:ffxx:xxxx, where neighbour solicitations go: snooped, a guest whose MLD report
// was lost (or never sent: MLD is not required for them everywhere) would be cut off from
// its neighbours, and every guest's addresses would fill the table. `mac`: FDB key layout
// (switch/datapath/mac_key.h), no VLAN.
inline bool IsUnsnoopedGroupMac(uint64_t mac) {
  return (mac & 0xffffffffff) == 0x00005e0001 || mac == 0x010000003333 ||
         (mac & 0xffffff) == 0xff3333;
}

struct McastTable {
  uint64_t static_routers = 0;  // ports with mrouter=1: router ports in every VLAN
  // Sorted FDB keys (VLAN << 48 | group MAC) with the ports that joined them, by index.
  std::vector<uint64_t> keys, members;
  // Sorted VLANs where queriers were seen, and the ports they were seen on.
  std::vector<uint16_t> router_vlans;
  std::vector<uint64_t> routers;

  // The members of the group `key` names; false: not a snooped group (it floods).
  bool Find(uint64_t key, uint64_t& ports) const {
    const auto it = std::lower_bound(keys.begin(), keys.end(), key);
    if (it == keys.end() || *it != key) return false;
    ports = members[static_cast<size_t>(it - keys.begin())];
    return true;
  }
  // The multicast router ports of `vlan`.
  uint64_t Routers(uint16_t vlan) const {
    const auto it = std::lower_bound(router_vlans.begin(), router_vlans.end(), vlan);
    if (it == router_vlans.end() || *it != vlan) return static_routers;
    return static_routers | routers[static_cast<size_t>(it - router_vlans.begin())];
  }
};

}  // namespace hvswitch
