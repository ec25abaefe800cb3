#include "switch/control/mcast_snooping.h"

#include <algorithm>

namespace hvswitch {

void McastSnooping::Join(uint16_t vlan, const McastGroup& group, uint16_t port, uint32_t now) {
  // Keyed by MAC in the data path: a group sharing a link-local group's MAC would take
  // that group's frames from the ports that must have them. Never snooped: it floods.
  if (IsUnsnoopedGroupMac(GroupMac(group))) return;
  groups_[{vlan, group}][port] = now + aging_;
}

void McastSnooping::Leave(uint16_t vlan, const McastGroup& group, uint16_t port) {
  const auto it = groups_.find({vlan, group});
  if (it == groups_.end()) return;
  it->second.erase(port);
  if (it->second.empty()) groups_.erase(it);
}

bool McastSnooping::Apply(const uint8_t* frame, uint32_t len, uint16_t port, uint16_t vlan,
                          uint32_t now) {
  const McastMessage msg = ParseMcastFrame(frame, len);
  // Only what changes the workers' table matters to the caller: which ports are members
  // and routers, not until when.
  const std::unique_ptr<McastTable> before = Table();
  std::unique_lock lock(mu_);
  switch (msg.kind) {
    case McastMessage::Kind::kNone:
      ++invalid_;
      return false;
    case McastMessage::Kind::kQuery:
      ++queries_;
      if (msg.from_unspecified) return false;
      routers_[vlan][port] = now + aging_;
      break;
    case McastMessage::Kind::kReport:
      ++reports_;
      for (const McastRecord& r : msg.records) {
        if (r.join) {
          Join(vlan, r.group, port, now);
        } else {
          Leave(vlan, r.group, port);
        }
      }
      break;
  }
  lock.unlock();
  const std::unique_ptr<McastTable> after = Table();
  return before->keys != after->keys || before->members != after->members ||
         before->router_vlans != after->router_vlans || before->routers != after->routers;
}

bool McastSnooping::Age(uint32_t now) {
  std::unique_lock lock(mu_);
  bool changed = false;
  // Expired: their time is now or before (a time in the past by any amount: the clock is
  // monotonic and never wraps in a switch's life).
  auto expire = [&](auto& ports) {
    changed |= std::erase_if(ports, [now](const auto& p) { return p.second <= now; }) != 0;
  };
  for (auto& [key, ports] : groups_) expire(ports);
  for (auto& [vlan, ports] : routers_) expire(ports);
  std::erase_if(groups_, [](const auto& g) { return g.second.empty(); });
  std::erase_if(routers_, [](const auto& r) { return r.second.empty(); });
  return changed;
}

bool McastSnooping::PortGone(uint16_t port) {
  std::unique_lock lock(mu_);
  bool changed = false;
  for (auto& [key, ports] : groups_) changed |= ports.erase(port) != 0;
  for (auto& [vlan, ports] : routers_) changed |= ports.erase(port) != 0;
  std::erase_if(groups_, [](const auto& g) { return g.second.empty(); });
  std::erase_if(routers_, [](const auto& r) { return r.second.empty(); });
  return changed;
}

bool McastSnooping::SetStaticRouters(uint64_t ports) {
  std::unique_lock lock(mu_);
  const bool changed = ports != static_routers_;
  static_routers_ = ports;
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
  return snap;
}

}  // namespace hvswitch
