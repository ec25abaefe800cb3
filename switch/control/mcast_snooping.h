// McastSnooping: IGMP/MLD snooping's state (--mcast_snooping=1), kept by the control thread
// from the messages the workers copy to it (switch/datapath/snoop_queue.h): per VLAN, which
// ports joined which groups and until when, and which ports have a multicast router
// behind them (a querier seen there, or mrouter=1). The workers forward by a McastTable
// built from it (switch/datapath/mcast_table.h), published again whenever what they would
// forward changes.
//
// Timers, as RFC 4541 has a snooping switch follow IGMP's and MLD's (RFC 3376 8.4, RFC
// 3810 9.4): a membership lasts `aging` seconds from its last report (default 260: the
// group membership interval, robustness 2 x query interval 125 s + response time 10 s); a
// router port as long from its last query (the other querier present interval is 255 s:
// one figure for both). A query from 0.0.0.0 or :: (a snooping switch's or proxy's
// querier) refreshes nothing: it is no router.
//
// Groups whose MAC is a link-local group's (IsUnsnoopedGroupMac: 239.0.0.251 shares
// mDNS's 01:00:5e:00:00:fb) are not snooped: their frames flood, as the link-local ones'
// must; nor are IPv6 solicited-node groups (33:33:ff:..., every address's own), which
// carry neighbour discovery: a guest whose report went missing must not lose its
// neighbours.
//
// Without a querier in the VLAN, nobody asks for reports again: a membership lasts
// `aging` seconds from the guest's own unsolicited reports, then the group floods again
// (unknown), as it did before it was joined. Run a querier (a router, or the kernel
// bridge's) where groups must stay snooped.
//
// What guests may make of it is bounded: a query from a guest port (PortRole::kGuest)
// makes it no router port unless it has mrouter=1 (else a guest could draw every group's
// frames by querying), and joins beyond kMaxMcastGroups groups in all, or beyond
// kMaxMcastPortMemberships for one port, are refused (counted): their groups flood, or
// reach the port as an unknown group would.
//
// A leave (IGMPv2 leave, MLDv1 done, a v3/v2 record leaving) ends the port's membership at
// once, as Open vSwitch's snooping does: one guest behind a port is the hypervisor's case.
// Other listeners behind the same port (a bridge in a namespace) report again at the next
// query, and meanwhile the group's frames go wherever else it has members (or, with no
// member left anywhere, everywhere: an unknown group floods).
//
// Control thread only, except Snapshot (any thread).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "switch/control/mcast_message.h"
#include "switch/datapath/datapath_limits.h"
#include "switch/datapath/mcast_table.h"

namespace hvswitch {

inline constexpr uint32_t kDefaultMcastAging = 260;  // seconds: RFC 3376's GMI
inline constexpr size_t kMaxMcastGroups = 4096;         // (VLAN, group) pairs, every port's
inline constexpr uint32_t kMaxMcastPortMemberships = 256;  // groups one port may join

// A reader's copy of the state (hvswitchctl mcast show, metrics).
struct McastSnapshot {
  bool enabled = false;
  struct Member {
    uint16_t port;
    uint32_t expires_in;  // seconds
  };
  struct Group {
    uint16_t vlan;
    McastGroup group;
    std::vector<Member> members;
  };
  struct Router {
    uint16_t vlan;
    uint16_t port;
    uint32_t expires_in;  // seconds
  };
  std::vector<Group> groups;      // by VLAN, then group
  std::vector<Router> routers;    // learned from queries; by VLAN, then port
  uint64_t static_routers = 0;    // mrouter=1 ports
  // Messages read, by what they were: queries, reports (joins and leaves), and copies
  // that were no well-formed IGMP/MLD message (ignored).
  uint64_t queries = 0, reports = 0, invalid = 0;
  // Refused: joins beyond kMaxMcastGroups (table_full) or kMaxMcastPortMemberships
  // (port_limit), queries from guest ports without mrouter=1 (guest_querier).
  uint64_t table_full = 0, port_limit = 0, guest_querier = 0;
  size_t memberships() const {
    size_t n = 0;
    for (const Group& g : groups) n += g.members.size();
    return n;
  }
};

class McastSnooping {
 public:
  explicit McastSnooping(uint32_t aging_seconds) : aging_(aging_seconds) {}

  // A frame copied from `port` in `vlan` at `now` (seconds): read, and applied if it is an
  // IGMP or MLD message. True when the table the workers forward by changes.
  bool Apply(const uint8_t* frame, uint32_t len, uint16_t port, uint16_t vlan, uint32_t now);
  // Memberships and routers not refreshed for the aging time go; true if any did.
  bool Age(uint32_t now);
  // A port down or removed: what it joined and its router state go (its mrouter=1 stays
  // with its spec: SetStaticRouters). True if anything did.
  bool PortGone(uint16_t port);
  // The ports with mrouter=1; true if they changed.
  bool SetStaticRouters(uint64_t ports);
  // The guest ports (PortRole::kGuest): their queries make no router. True if a router
  // state went (a port that was learned a router is a guest's now).
  bool SetGuestPorts(uint64_t ports);

  // The workers' table for the state now.
  std::unique_ptr<McastTable> Table() const;
  McastSnapshot Snapshot(uint32_t now) const;

 private:
  using GroupKey = std::pair<uint16_t, McastGroup>;  // VLAN, group
  // True when the port's membership is new (refreshed: false) / ended.
  bool Join(uint16_t vlan, const McastGroup& group, uint16_t port, uint32_t now);
  bool Leave(uint16_t vlan, const McastGroup& group, uint16_t port);
  // Removes the memberships `gone` picks (port, expiry), and groups left empty; true if
  // any went.
  template <typename Pick>
  bool EraseMemberships(Pick gone);

  const uint32_t aging_;
  // Snapshot reads the maps from another thread (a pthread lock, for ThreadSanitizer's
  // sake, as PortSlots has); the control thread, their only writer, reads them without.
  mutable std::shared_mutex mu_;
  // Expiry time (seconds) of each port's membership / router state.
  std::map<GroupKey, std::map<uint16_t, uint32_t>> groups_;
  std::map<uint16_t, std::map<uint16_t, uint32_t>> routers_;
  uint64_t static_routers_ = 0, guest_ports_ = 0;
  std::array<uint32_t, kMaxPorts> memberships_{};  // groups each port is a member of
  uint64_t queries_ = 0, reports_ = 0, invalid_ = 0;
  uint64_t table_full_ = 0, port_limit_ = 0, guest_querier_ = 0;
};

}  // namespace hvswitch
