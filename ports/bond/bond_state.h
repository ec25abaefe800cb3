// What a bond port (type=bond) reports of itself: its mode and hash, and each member's
// link, whether it carries traffic, and under 802.3ad what LACP negotiated. Read by the
// control thread for `hvswitchctl bond show`, the metrics and the member log lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hvswitch {

// LACP state bits (IEEE 802.1AX-2014 6.4.2.3).
inline constexpr uint8_t kLacpSynchronized = 0x08;
inline constexpr uint8_t kLacpCollecting = 0x10;
inline constexpr uint8_t kLacpDistributing = 0x20;

struct LacpMemberState {
  bool selected = false;       // attached to the bond's aggregator
  uint8_t actor_state = 0;     // what hvswitch says of the member
  uint8_t partner_state = 0;   // what the other end says of its port
  std::string partner_system;  // the other end's system MAC; 00:00:00:00:00:00 if none
  bool operator==(const LacpMemberState&) const = default;
};

struct BondMemberState {
  std::string device;  // the member's DPDK device name
  bool up = false;     // its link
  // Carries the bond's traffic: the current primary (active-backup), distributing
  // (802.3ad), link up (balance-xor).
  bool active = false;
  std::optional<LacpMemberState> lacp;  // 802.3ad only
  bool operator==(const BondMemberState&) const = default;
};

struct BondState {
  std::string mode;  // active-backup, 802.3ad or balance-xor
  std::string hash;  // l2, l23 or l34
  std::vector<BondMemberState> members;
};

}  // namespace hvswitch
