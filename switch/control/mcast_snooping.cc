#include "switch/control/mcast_snooping.h"

#include <algorithm>
#include <iterator>

namespace hvswitch {

bool McastSnooping::Join(uint16_t vlan, const McastGroup& group, uint16_t port, uint32_t now) {
  // Keyed by MAC in the data path: a group sharing a link-local group's MAC would take
  // that group's frames from the ports that must have them. Never snooped: it floods.
  if (IsUnsnoopedGroupMac(GroupMac(group))) return false;
  const GroupKey key{vlan, group};
  auto it = groups_.find(key);
  if (it != groups_.end()) {
    const auto member = it->second.find(port);
    if (member != it->second.end()) {
      member->second = now + aging_;  // refreshed: the workers' table is the same
      return false;
    }
  }
  if (memberships_[port] >= kMaxMcastPortMemberships) {
    ++port_limit_;
    return false;
  }
  if (it == groups_.end()) {
    if (groups_.size() >= kMaxMcastGroups) {
      ++table_full_;
      return false;
    }
    it = groups_.emplace(key, std::map<uint16_t, uint32_t>{}).first;
  }
  it->second.emplace(port, now + aging_);
  ++memberships_[port];
  return true;
}

bool McastSnooping::Leave(uint16_t vlan, const McastGroup& group, uint16_t port) {
  const auto it = groups_.find({vlan, group});
  if (it == groups_.end() || it->second.erase(port) == 0) return false;
  --memberships_[port];
  if (it->second.empty()) groups_.erase(it);
  return true;
}

template <typename Pick>
bool McastSnooping::EraseMemberships(Pick gone) {
  bool changed = false;
  for (auto g = groups_.begin(); g != groups_.end();) {
    changed |= std::erase_if(g->second, [&](const auto& member) {
      if (!gone(member.first, member.second)) return false;
      --memberships_[member.first];
      return true;
    }) != 0;
    g = g->second.empty() ? groups_.erase(g) : std::next(g);
  }
  return changed;
}

bool McastSnooping::Apply(const uint8_t* frame, uint32_t len, uint16_t port, uint16_t vlan,
                          uint32_t now) {
  const McastMessage msg = ParseMcastFrame(frame, len);
  // Only what changes the workers' table matters to the caller: which ports are members
  // and routers, not until when. (A membership new to a group whose MAC the port has
  // joined already changes nothing there; it is published all the same.)
  std::unique_lock lock(mu_);
  bool changed = false;
  switch (msg.kind) {
    case McastMessage::Kind::kNone:
      ++invalid_;
      break;
    case McastMessage::Kind::kQuery:
      ++queries_;
      if (msg.from_unspecified) break;
      if ((guest_ports_ >> port) & 1) {
        ++guest_querier_;
        break;
      }
      changed = routers_[vlan].insert_or_assign(port, now + aging_).second;
      break;
    case McastMessage::Kind::kReport:
      ++reports_;
      for (const McastRecord& r : msg.records) {
        changed |= r.join ? Join(vlan, r.group, port, now) : Leave(vlan, r.group, port);
      }
      break;
  }
  return changed;
}

bool McastSnooping::Age(uint32_t now) {
  std::unique_lock lock(mu_);
  // Expired: their time is now or before (a time in the past by any amount: the clock is
  // monotonic and never wraps in a switch's life).
  bool changed = EraseMemberships([now](uint16_t, uint32_t expiry) { return expiry <= now; });
  for (auto& [vlan, ports] : routers_) {
    changed |= std::erase_if(ports, [now](const auto& p) { return p.second <= now; }) != 0;
  }
  std::erase_if(routers_, [](const auto& r) { return r.second.empty(); });
  return changed;
}

bool McastSnooping::PortGone(uint16_t port) {
  std::unique_lock lock(mu_);
  bool changed = EraseMemberships([port](uint16_t p, uint32_t) { return p == port; });
  for (auto& [vlan, ports] : routers_) changed |= ports.erase(port) != 0;
  std::erase_if(routers_, [](const auto& r) { return r.second.empty(); });
  return changed;
}

bool McastSnooping::SetStaticRouters(uint64_t ports) {
  std::unique_lock lock(mu_);
  const bool changed = ports != static_routers_;
  static_routers_ = ports;
  return changed;
}

bool McastSnooping::SetGuestPorts(uint64_t ports) {
  std::unique_lock lock(mu_);
  guest_ports_ = ports;
  bool changed = false;
  for (auto& [vlan, routers] : routers_) {
    changed |= std::erase_if(routers, [ports](const auto& r) { return (ports >> r.first) & 1; });
  }
  std::erase_if(routers_, [](const auto& r) { return r.second.empty(); });
  return changed;
}

std::unique_ptr<McastTable> McastSnooping::Table() const {
  auto table = std::make_unique<McastTable>();
  table->static_routers = static_routers_;
  // Groups that share a MAC in a VLAN share their members (a superset for each).
  std::map<uint64_t, uint64_t> by_mac;
  for (const auto& [key, ports] : groups_) {
    uint64_t& mask = by_mac[uint64_t{key.first} << 48 | GroupMac(key.second)];
    for (const auto& [port, expiry] : ports) mask |= uint64_t{1} << port;
  }
  for (const auto& [key, mask] : by_mac) {
    table->keys.push_back(key);
    table->members.push_back(mask);
  }
  for (const auto& [vlan, ports] : routers_) {
    uint64_t mask = 0;
    for (const auto& [port, expiry] : ports) mask |= uint64_t{1} << port;
    table->router_vlans.push_back(vlan);
    table->routers.push_back(mask);
  }
  return table;
}

McastSnapshot McastSnooping::Snapshot(uint32_t now) const {
  std::shared_lock lock(mu_);
  McastSnapshot snap;
  snap.enabled = true;
  auto left = [now](uint32_t expiry) { return expiry > now ? expiry - now : 0; };
  for (const auto& [key, ports] : groups_) {
    McastSnapshot::Group g{key.first, key.second, {}};
    for (const auto& [port, expiry] : ports) g.members.push_back({port, left(expiry)});
    snap.groups.push_back(std::move(g));
  }
  for (const auto& [vlan, ports] : routers_) {
    for (const auto& [port, expiry] : ports) snap.routers.push_back({vlan, port, left(expiry)});
  }
  snap.static_routers = static_routers_;
  snap.queries = queries_;
  snap.reports = reports_;
  snap.invalid = invalid_;
  snap.table_full = table_full_;
  snap.port_limit = port_limit_;
  snap.guest_querier = guest_querier_;
  return snap;
}

}  // namespace hvswitch
