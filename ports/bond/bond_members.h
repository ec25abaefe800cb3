// Reading a bond's members from DPDK's net_bonding: links, which carry traffic, and what
// LACP negotiated. Control thread.
#pragma once

#include <cstdint>
#include <vector>

#include "ports/bond/bond_state.h"

namespace hvswitch {

std::vector<BondMemberState> ReadBondMembers(uint16_t bond_port);

}  // namespace hvswitch
