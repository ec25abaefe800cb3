#include "ports/bond/bond_members.h"

#include <rte_eth_bond.h>
#include <rte_eth_bond_8023ad.h>
#include <rte_ethdev.h>

#include <algorithm>
#include <array>

#include "absl/strings/str_format.h"

namespace hvswitch {
namespace {

constexpr int kMaxMembers = RTE_MAX_ETHPORTS;

std::string MacText(const rte_ether_addr& mac) {
  const uint8_t* b = mac.addr_bytes;
  return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
}

}  // namespace

std::vector<BondMemberState> ReadBondMembers(uint16_t bond_port) {
  std::vector<BondMemberState> out;
  std::array<uint16_t, kMaxMembers> all{}, link_up{};
  const int n = rte_eth_bond_slaves_get(bond_port, all.data(), kMaxMembers);
  if (n <= 0) return out;
  // net_bonding's active list: the members whose link is up.
  const int n_up = std::max(0, rte_eth_bond_active_slaves_get(bond_port, link_up.data(),
                                                              kMaxMembers));
  const int mode = rte_eth_bond_mode_get(bond_port);
  const int primary = rte_eth_bond_primary_get(bond_port);
  for (int i = 0; i < n; ++i) {
    const uint16_t id = all[i];
    BondMemberState member;
    char name[RTE_ETH_NAME_MAX_LEN] = {};
    rte_eth_dev_get_name_by_port(id, name);
    member.device = name;
    member.up = std::find(link_up.begin(), link_up.begin() + n_up, id) != link_up.begin() + n_up;
    if (mode == BONDING_MODE_8023AD) {
      LacpMemberState lacp;
      struct rte_eth_bond_8023ad_slave_info info {};
      // Only members with their link up have LACP state.
      if (member.up && rte_eth_bond_8023ad_slave_info(bond_port, id, &info) == 0) {
        lacp.selected = info.selected == SELECTED;
        lacp.actor_state = info.actor_state;
        lacp.partner_state = info.partner_state;
        lacp.partner_system = MacText(info.partner.system);
      } else {
        lacp.partner_system = "00:00:00:00:00:00";
      }
      member.active = member.up && (lacp.actor_state & kLacpDistributing) != 0;
      member.lacp = lacp;
    } else if (mode == BONDING_MODE_ACTIVE_BACKUP) {
      member.active = member.up && primary == id;
    } else {
      member.active = member.up;
    }
    out.push_back(std::move(member));
  }
  return out;
}

}  // namespace hvswitch
