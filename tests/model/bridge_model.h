// The bridge's semantics in one page, for the tests to hold the fast pipeline against.
//   Ports and VLANs
//   - A port is plain (every VLAN; untagged frames are VLAN 0), an access port of VLAN A
//     (untagged frames are VLAN A; tagged frames are dropped) or a trunk of a VLAN list
//     (tagged frames of those VLANs; untagged frames are the native VLAN if it has one,
//     else dropped). A frame in a VLAN the port does not carry is dropped (reason vlan).
//     VLAN 4095 is reserved: no port carries it.
//   - A priority-tagged frame (tag with VLAN id 0) belongs where an untagged frame would
//     (dropped where untagged frames are), but stays tagged.
//   - A frame leaves untagged on a port's own VLAN (access VLAN, native VLAN, VLAN 0 on a
//     plain port) and tagged with its VLAN everywhere else. The switch carries one tag: a
//     tagged frame whose tag is followed by another is not sent where its tag would be
//     removed (dropped there, reason vlan), lest it appear in the inner tag's VLAN.
//   Forwarding (within the frame's VLAN)
//   - A group (multicast/broadcast) destination, or a unicast one not in the table, floods
//     to every other port that carries the VLAN and whose link is up.
//   - A unicast destination in the table goes to that one port, unless that port is the
//     ingress port: then the frame is dropped (hairpin).
//   - A copy whose payload (frame minus Ethernet and VLAN headers) exceeds the egress
//     port's MTU is dropped there (reason mtu); a unicast copy for a port that is down is
//     dropped there (reason link_down).
//   - A flood with no port to go to (none other up in the VLAN) is dropped (reason
//     no_destination).
//   - A frame with a group or all-zero source address (checked after its VLAN), or too
//     short for its headers, is malformed: dropped, learns nothing.
//   Port security
//   - A port with allowed MACs takes frames from those sources only; a locked port (lock)
//     takes the first source it sees and then only that one, until it goes down. Other
//     sources are dropped (reason spoofed) and learn nothing.
//   - A port's own MAC (one it allows, or the one it locked to) is not moved to another
//     port by frames arriving there while the port is up: they are forwarded, but teach
//     nothing (counted as locked_refused, once per learn request). Once the port is down
//     the MAC may move (a migrated guest).
//   Learning
//   - The switch applies learning asynchronously (its control thread drains the workers'
//     requests), so a frame is decided on the table as earlier bursts taught it, never on
//     what its own burst teaches. A worker asks once per run of alike frames in a burst
//     (same source, destination, VLAN and tagging; frames dropped for their VLAN do not
//     end a run).
//   - A unicast source teaches (VLAN, source MAC) -> ingress port and refreshes its
//     last-seen time, except that a static entry never moves, and a port holding as many
//     learned MACs as its learn limit teaches nothing new (the frame is still forwarded,
//     and counted as limited).
//   - Ageing removes learned entries not seen for the ageing time; a port going down
//     forgets its learned entries at once. Static entries stay.
//   Guardrails
//   - A policed port's frames past their VLAN check each take, in order, a token of its
//     frame meter and as many of its byte meter as they are long (before the source
//     checks). A frame that finds too few is dropped (reason policed) and learns nothing;
//     it was grouped with its neighbours all the same (it may end a run of alike frames).
//   - A frame to 802.1D's reserved group addresses 01:80:C2:00:00:00-0F is never
//     forwarded (reason reserved; its source is still learned, as for any frame past the
//     port security check).
//   - A frame that would flood (a group destination, or an unknown unicast one) takes a
//     token of its port's storm meter for its class (broadcast, other group, unknown
//     unicast), if it has one; none left: dropped (reason storm; its source learned).
//   - A BPDU (to 01:80:C2:00:00:00) from a port with BPDU guard shuts the port from the
//     next burst on, until it is enabled again: its frames are dropped (reason shut) and
//     learn nothing, and it is no destination (left out of floods, link_down for unicast).
//   - Here meters never refill (the tests freeze them): a meter is a bucket of its burst.
//   IP anti-spoofing (IPv4 here: ip= as /32 addresses, ip_learn=1's first ARP claims)
//   - A port with bindings (ip=, or ip_learn=1 even before it has any) sends IPv4 only
//     from a bound address and ARP only for a bound sender; any other such frame is
//     dropped (reason spoofed_ip) before anything else is looked at (its VLAN, its run:
//     it ends none), and teaches nothing. Other EtherTypes pass, but not a second tag
//     (what it carries cannot be checked).
//   - A learning port's refused ARP claims its sender, from and for the port's own MAC:
//     after the burst the address is bound to the port, unless a port sharing a VLAN
//     with it has it (ip= or learned) or the port has 4 learned already. A port going
//     down loses what it learned.
//   IGMP/MLD snooping (when on)
//   - A frame to a group address other than broadcast is a query, a membership report
//     (joining or leaving a group), or data.
//   - A query floods; from a router (a source other than 0.0.0.0) it makes its port a
//     router port of its VLAN.
//   - A report goes to the VLAN's router ports only (none up: no_destination); its join
//     makes the port a member of the group in the VLAN, its leave ends that at once.
//   - Data to a group address that has members in the VLAN (any group with that MAC: the
//     switch keys groups by MAC) goes to those members and the VLAN's router ports (none
//     up: no_destination); to any other group address it floods.
//   - Memberships and router ports change only after the burst (the control thread reads
//     the messages), so a burst is decided on what earlier ones taught. A port going down
//     loses both.
//   Mirroring (one session here)
//   - The analyser carries no VLAN: nothing is forwarded to it, and its own frames are
//     dropped before anything else (reason mirror_port); it is never mirrored itself.
//   - A frame received on an rx-mirrored port is copied to the analyser as it came (before
//     any check: dropped frames too); a frame sent to a tx-mirrored port is copied as it
//     was sent there (its tag as sent). With the session's VLAN, the copy gets a tag of it
//     pushed in front of its own.
//   - A copy whose payload after its Ethernet header and leading tags (two at most) exceeds
//     the analyser's MTU is dropped there (reason mtu); none is made while the analyser is
//     down (each counted link_down there).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <set>
#include <tuple>
#include <vector>

namespace hvswitch::model {

inline bool IsGroup(uint64_t mac) { return mac & 1; }  // first octet's low bit

struct PortConfig {
  uint16_t access = 0;        // access VLAN; 0: none
  std::set<uint16_t> trunk;   // trunk VLANs; empty: not a trunk
  uint16_t native = 0;        // a trunk's untagged VLAN; 0: none
  uint16_t mtu = 1500;
  uint32_t learn_limit = 0;   // 0: none
  std::set<uint64_t> allowed;  // allowed source MACs; empty: any (unless locked)
  bool lock = false;           // the first source seen is the only one allowed
  // Guardrails: meters as buckets that never refill (0: no meter).
  uint64_t police_frames = 0, police_bytes = 0;
  std::array<uint64_t, 3> storm{};  // broadcast, other group, unknown unicast
  bool bpdu_guard = false;
  std::set<uint32_t> ips4;  // ip= (IPv4 addresses)
  bool ip_learn = false;

  bool Carries(int vlan) const {
    if (vlan < 0 || vlan >= 4095) return false;
    if (access != 0) return vlan == access;
    if (!trunk.empty()) return trunk.count(vlan) != 0 || (native != 0 && vlan == native);
    return true;
  }
  bool SendsUntagged(int vlan) const {
    if (access != 0) return vlan == access;
    if (!trunk.empty()) return native != 0 && vlan == native;
    return vlan == 0;
  }
  // The VLAN of a frame received with `tag` (-1: untagged, 0: priority-tagged), or -1 when
  // it is dropped.
  int Ingress(int tag) const {
    int vlan;
    if (tag <= 0) {
      vlan = access != 0 ? access : !trunk.empty() ? (native != 0 ? native : -1) : 0;
    } else {
      vlan = access != 0 ? -1 : tag;
    }
    return Carries(vlan) ? vlan : -1;
  }
};

// What a frame to a group address is to IGMP/MLD snooping.
enum class McastKind : uint8_t { kData, kQuery, kJoin, kLeave };

struct Frame {
  uint64_t src, dst;
  int tag = -1;          // VLAN id in an 802.1Q tag; -1: untagged
  uint32_t payload = 50;  // bytes after the Ethernet (and VLAN) header
  bool inner_tag = false;  // tagged, and a second tag follows the first
  McastKind mcast = McastKind::kData;
  int group = -1;         // kJoin, kLeave: the group (an id; its MAC by SetGroupMac)
  bool router = true;     // kQuery: from a router (not from 0.0.0.0)
  uint32_t ip4 = 0;       // not 0: IPv4 from this address, or ARP from it with `arp`
  bool arp = false;
};

enum class Outcome {
  kForwarded, kHairpin, kMalformed, kVlan, kSpoofed, kNoDestination,
  kPoliced, kStorm, kReserved, kShut, kMirrorPort, kSpoofedIp
};

struct MirrorConfig {
  std::set<uint16_t> rx, tx;  // ports whose received / sent frames are copied
  int to = -1;                // the analyser; -1: no session
  int vlan = 0;               // pushed on each copy; 0: none
};

struct Copy {
  uint16_t port;
  int tag;  // -1: untagged
  auto operator<=>(const Copy&) const = default;
};

inline void PrintTo(const Copy& c, std::ostream* os) {
  *os << "port " << c.port << (c.tag < 0 ? " untagged" : " tag " + std::to_string(c.tag));
}

struct Result {
  Outcome outcome = Outcome::kForwarded;
  std::vector<Copy> copies;         // ascending by port
  // Mirror copies at the analyser, outermost tag as it gets them (copies of the frame as
  // received first, then of its copies to the tx-mirrored ports, in port order).
  std::vector<Copy> mirrored;
  std::vector<uint16_t> mtu_drops;  // ports that dropped their copy for its size
  std::vector<uint16_t> vlan_drops;  // ports that would have removed its tag of two
  std::vector<uint16_t> link_down;   // a unicast destination that is down
};

struct Entry {
  uint16_t port;
  uint32_t last_seen;
  bool is_static;
  bool operator==(const Entry&) const = default;
};

class BridgeModel {
 public:
  explicit BridgeModel(std::vector<PortConfig> ports) : ports_(std::move(ports)) {}
  explicit BridgeModel(uint16_t nb_ports) : ports_(nb_ports) {}

  void SetMirror(MirrorConfig mirror) { mirror_ = std::move(mirror); }
  // IGMP/MLD snooping on, with each group id's MAC (a group not listed is never snooped:
  // a link-local one).
  void SetSnooping(std::map<int, uint64_t> group_macs) {
    snooping_ = true;
    group_macs_ = std::move(group_macs);
  }
  // Snooping: a port that went down (or away) is no member and no router any more.
  void PortGone(uint16_t port) {
    for (auto& [key, members] : joined_) members.erase(port);
    for (auto& [vlan, ports] : routers_) ports.erase(port);
  }
  // The ports that joined groups with `mac` in `vlan`.
  std::set<uint16_t> Members(int vlan, uint64_t mac) const {
    std::set<uint16_t> ports;
    for (const auto& [key, members] : joined_) {
      if (key.first == vlan && group_macs_.at(key.second) == mac) {
        ports.insert(members.begin(), members.end());
      }
    }
    return ports;
  }

  // One burst from port `in` at time `now`: every frame is decided first, then the
  // burst's sources are learned.
  std::vector<Result> ForwardBurst(uint16_t in, const std::vector<Frame>& frames,
                                   uint64_t up_mask, uint32_t now = 0) {
    std::vector<Result> results;
    const bool shut = shut_.count(in) != 0;  // as it was when the burst came
    bool bpdu = false;
    for (const Frame& f : frames) {
      Result r;
      if (mirror_.to == in) {
        r.outcome = Outcome::kMirrorPort;
      } else if (shut) {
        r.outcome = Outcome::kShut;
      } else if (IpGuarded(in) && ((f.ip4 != 0 && !IpBound(in, f.ip4)) ||
                                   (f.tag >= 0 && f.inner_tag))) {
        r.outcome = Outcome::kSpoofedIp;
      } else {
        r = Decide(in, f, up_mask & ~ShutMask());
        bpdu = bpdu || (r.outcome == Outcome::kReserved && f.dst == kStp);
      }
      Mirror(in, f, r, up_mask & ~ShutMask());
      results.push_back(r);
    }
    if (bpdu && ports_[in].bpdu_guard) shut_.insert(in);
    if (snooping_) Snoop(in, frames, results);
    for (size_t i = 0; i < frames.size(); ++i) {
      if (results[i].outcome == Outcome::kSpoofedIp && frames[i].arp) Claim(in, frames[i]);
    }
    const Frame* last = nullptr;  // the current run's last frame
    for (size_t i = 0; i < frames.size(); ++i) {
      const Outcome o = results[i].outcome;
      // Dropped before classification: they neither end a run nor teach.
      if (o == Outcome::kVlan || o == Outcome::kShut || o == Outcome::kMirrorPort ||
          o == Outcome::kSpoofedIp) {
        continue;
      }
      const bool asks = last == nullptr || !SameRun(in, *last, frames[i]);
      last = &frames[i];
      if (o == Outcome::kMalformed || o == Outcome::kSpoofed || o == Outcome::kPoliced) {
        continue;
      }
      Learn(in, Key(ports_[in].Ingress(frames[i].tag), frames[i].src), now, up_mask, asks);
    }
    return results;
  }

  Result Forward(uint16_t in, uint64_t src, uint64_t dst, uint64_t up_mask) {
    return ForwardBurst(in, {{src, dst}}, up_mask)[0];
  }

  void AddStatic(uint16_t vlan, uint64_t mac, uint16_t port) {
    table_[Key(vlan, mac)] = {port, 0, true};
  }
  // The port's link went down: its learned MACs and its lock go, and what it learned of
  // addresses.
  void Flush(uint16_t port) {
    std::erase_if(table_, [&](const auto& kv) {
      return kv.second.port == port && !kv.second.is_static;
    });
    locked_.erase(port);
    learned_ips_.erase(port);
  }
  const std::set<uint32_t>& LearnedIps(uint16_t port) { return learned_ips_[port]; }
  // Removes learned entries not seen for max_age seconds (0: none).
  void Age(uint32_t now, uint32_t max_age) {
    if (max_age == 0) return;
    std::erase_if(table_, [&](const auto& kv) {
      return !kv.second.is_static && now - kv.second.last_seen >= max_age;
    });
  }

  uint32_t Learned(uint16_t port) const {
    uint32_t n = 0;
    for (const auto& [key, e] : table_) n += e.port == port && !e.is_static;
    return n;
  }
  uint64_t limited(uint16_t port) const {
    auto it = limited_.find(port);
    return it == limited_.end() ? 0 : it->second;
  }
  // Learn requests refused because the MAC is another port's own.
  uint64_t locked_refused() const { return locked_refused_; }
  // Keyed by (VLAN << 48 | MAC), like the switch's FDB.
  const std::map<uint64_t, Entry>& table() const { return table_; }
  const PortConfig& port(uint16_t p) const { return ports_[p]; }

  static uint64_t Key(int vlan, uint64_t mac) { return uint64_t(vlan) << 48 | mac; }
  static constexpr uint64_t kStp = 0x0000c28001;  // 01:80:C2:00:00:00
  static bool IsReserved(uint64_t mac) { return (mac & 0xf0ffffffffff) == kStp; }

  // hvswitchctl port enable: a shut port forwards again.
  void Enable(uint16_t port) { shut_.erase(port); }
  bool shut(uint16_t port) const { return shut_.count(port) != 0; }
  uint64_t ShutMask() const {
    uint64_t mask = 0;
    for (uint16_t p : shut_) mask |= uint64_t{1} << p;
    return mask;
  }

 private:
  Result Decide(uint16_t in, const Frame& f, uint64_t up_mask) {
    Result r;
    int vlan = ports_[in].Ingress(f.tag);
    if (vlan < 0) {
      r.outcome = Outcome::kVlan;
      return r;
    }
    const uint64_t len = 14 + (f.tag >= 0 ? 4 : 0) + f.payload;
    // A frame takes its frame token even where its bytes then do not fit (the switch's
    // frame meter is checked first).
    if (!Take(police_[in][0], ports_[in].police_frames, 1) ||
        !Take(police_[in][1], ports_[in].police_bytes, len)) {
      r.outcome = Outcome::kPoliced;
      return r;
    }
    if (IsGroup(f.src) || f.src == 0) {
      r.outcome = Outcome::kMalformed;
      return r;
    }
    const PortConfig& in_port = ports_[in];
    if (in_port.lock && !locked_.count(in)) locked_[in] = f.src;
    if ((!in_port.allowed.empty() && !in_port.allowed.count(f.src)) ||
        (in_port.lock && locked_.at(in) != f.src)) {
      r.outcome = Outcome::kSpoofed;
      return r;
    }
    std::vector<uint16_t> targets;
    auto it = table_.find(Key(vlan, f.dst));
    if (IsReserved(f.dst)) {
      r.outcome = Outcome::kReserved;
      return r;
    }
    if (IsGroup(f.dst) || it == table_.end()) {
      const size_t storm_class = !IsGroup(f.dst) ? 2 : f.dst == 0xffffffffffff ? 0 : 1;
      if (!Take(storm_[in][storm_class], in_port.storm[storm_class], 1)) {
        r.outcome = Outcome::kStorm;
        return r;
      }
      // Under snooping, a report only to routers, data to a known group's members and
      // routers; queries and the rest flood.
      std::set<uint16_t> only;
      bool restricted = false;
      if (snooping_ && IsGroup(f.dst) && f.dst != 0xffffffffffff && !f.inner_tag) {
        const std::set<uint16_t> members = Members(vlan, f.dst);
        if (f.mcast == McastKind::kJoin || f.mcast == McastKind::kLeave) {
          restricted = true;
          only = RouterPorts(vlan);
        } else if (f.mcast == McastKind::kData && !members.empty()) {
          restricted = true;
          only = RouterPorts(vlan);
          only.insert(members.begin(), members.end());
        }
      }
      for (uint16_t p = 0; p < ports_.size(); ++p) {
        if (p != in && ((up_mask >> p) & 1) && ports_[p].Carries(vlan) && !IsAnalyser(p) &&
            (!restricted || only.count(p))) {
          targets.push_back(p);
        }
      }
      if (targets.empty()) {
        r.outcome = Outcome::kNoDestination;
        return r;
      }
    } else if (it->second.port == in) {
      r.outcome = Outcome::kHairpin;
      return r;
    } else {
      targets.push_back(it->second.port);
    }
    for (uint16_t p : targets) {
      const bool untagged = ports_[p].SendsUntagged(vlan);
      if (f.payload > ports_[p].mtu) {
        r.mtu_drops.push_back(p);
      } else if (f.tag >= 0 && f.inner_tag && untagged) {
        r.vlan_drops.push_back(p);
      } else if (!((up_mask >> p) & 1)) {
        r.link_down.push_back(p);
      } else {
        r.copies.push_back({p, untagged ? -1 : vlan});
      }
    }
    return r;
  }

  // Whether `n` tokens can be taken from a bucket of `size` (0: no meter) that has had
  // `used` taken; takes them if so.
  static bool Take(uint64_t& used, uint64_t size, uint64_t n) {
    if (size == 0) return true;
    if (used + n > size) return false;
    used += n;
    return true;
  }

  // The session's copies of frame `f` received on `in` with result `r`: appended to
  // r.mirrored, or to r.mtu_drops / r.link_down at the analyser.
  void Mirror(uint16_t in, const Frame& f, Result& r, uint64_t up_mask) const {
    if (mirror_.to < 0) return;
    const auto to = static_cast<uint16_t>(mirror_.to);
    // `tag`, `inner`: the frame's tags where it was seen (-1: none).
    auto copy = [&](int tag, bool inner) {
      if (!((up_mask >> to) & 1)) {
        r.link_down.push_back(to);
        return;
      }
      const int pushed = mirror_.vlan != 0 ? 1 : 0;
      const int tags = pushed + (tag >= 0 ? 1 + (inner ? 1 : 0) : 0);
      const uint64_t len = 14 + 4 * (pushed + (tag >= 0 ? 1 : 0)) + f.payload;
      if (len - 14 - 4 * std::min(tags, 2) > ports_[to].mtu) {
        r.mtu_drops.push_back(to);
        return;
      }
      r.mirrored.push_back({to, pushed ? mirror_.vlan : tag});
    };
    if (mirror_.rx.count(in) && in != to) copy(f.tag, f.inner_tag);
    for (const Copy& c : r.copies) {
      if (mirror_.tx.count(c.port) && c.port != to) copy(c.tag, f.inner_tag);
    }
  }
  bool IsAnalyser(uint16_t p) const { return mirror_.to == p; }

  bool IpGuarded(uint16_t p) const { return !ports_[p].ips4.empty() || ports_[p].ip_learn; }
  bool IpBound(uint16_t p, uint32_t addr) const {
    auto learned = learned_ips_.find(p);
    return ports_[p].ips4.count(addr) != 0 ||
           (learned != learned_ips_.end() && learned->second.count(addr) != 0);
  }
  bool ShareAVlan(uint16_t p, uint16_t q) const {
    for (int v = 0; v < 4095; ++v) {
      if (ports_[p].Carries(v) && ports_[q].Carries(v)) return true;
    }
    return false;
  }
  // A learning port's ARP claiming its sender (its refused frame).
  void Claim(uint16_t in, const Frame& f) {
    const PortConfig& c = ports_[in];
    auto locked = locked_.find(in);
    const bool own_mac = c.allowed.count(f.src) != 0 ||
                         (c.lock && locked != locked_.end() && locked->second == f.src);
    if (!c.ip_learn || !own_mac || IpBound(in, f.ip4)) return;
    for (uint16_t q = 0; q < ports_.size(); ++q) {
      if (q != in && IpBound(q, f.ip4) && ShareAVlan(in, q)) return;  // taken
    }
    if (learned_ips_[in].size() >= 4) return;  // the limit
    learned_ips_[in].insert(f.ip4);
  }

  std::set<uint16_t> RouterPorts(int vlan) const {
    auto it = routers_.find(vlan);
    return it == routers_.end() ? std::set<uint16_t>{} : it->second;
  }
  // After a burst: what its IGMP/MLD messages taught (those the switch read: not dropped
  // before it could, nor behind a second tag).
  void Snoop(uint16_t in, const std::vector<Frame>& frames, const std::vector<Result>& results) {
    for (size_t i = 0; i < frames.size(); ++i) {
      const Frame& f = frames[i];
      const Outcome o = results[i].outcome;
      if (f.mcast == McastKind::kData || !IsGroup(f.dst) || f.dst == 0xffffffffffff ||
          f.inner_tag) {
        continue;
      }
      if (o != Outcome::kForwarded && o != Outcome::kNoDestination) continue;
      const int vlan = ports_[in].Ingress(f.tag);
      if (f.mcast == McastKind::kQuery) {
        if (f.router) routers_[vlan].insert(in);
      } else if (group_macs_.count(f.group)) {
        if (f.mcast == McastKind::kJoin) {
          joined_[{vlan, f.group}].insert(in);
        } else {
          joined_[{vlan, f.group}].erase(in);
        }
      }
    }
  }

  bool SameRun(uint16_t in, const Frame& a, const Frame& b) const {
    return a.src == b.src && a.dst == b.dst && (a.tag >= 0) == (b.tag >= 0) &&
           a.inner_tag == b.inner_tag && ports_[in].Ingress(a.tag) == ports_[in].Ingress(b.tag);
  }
  // Whether `mac` is port p's own: one it allows, or the one it locked to.
  bool Owns(uint16_t p, uint64_t mac) const {
    auto locked = locked_.find(p);
    return ports_[p].allowed.count(mac) != 0 || (locked != locked_.end() && locked->second == mac);
  }

  // `asks`: the frame starts a run (a learn request); the others of its run follow it.
  void Learn(uint16_t in, uint64_t key, uint32_t now, uint64_t up_mask, bool asks) {
    auto it = table_.find(key);
    if (it != table_.end() && it->second.port == in) {
      it->second.last_seen = now;
      return;
    }
    const uint64_t mac = key & 0xffffffffffff;
    if (it != table_.end() && ((up_mask >> it->second.port) & 1) && Owns(it->second.port, mac)) {
      locked_refused_ += asks;
      return;
    }
    if (it != table_.end() && it->second.is_static) return;
    if (ports_[in].learn_limit != 0 && Learned(in) >= ports_[in].learn_limit) {
      ++limited_[in];
      return;
    }
    table_[key] = {in, now, false};
  }

  std::vector<PortConfig> ports_;
  std::map<uint64_t, Entry> table_;
  std::map<uint16_t, uint64_t> limited_;
  std::map<uint16_t, uint64_t> locked_;  // lock ports that saw their first source
  // Tokens taken from each port's meters: police frames, bytes; storm by class.
  std::map<uint16_t, std::array<uint64_t, 2>> police_;
  std::map<uint16_t, std::array<uint64_t, 3>> storm_;
  std::set<uint16_t> shut_;
  uint64_t locked_refused_ = 0;
  std::map<uint16_t, std::set<uint32_t>> learned_ips_;
  MirrorConfig mirror_;
  bool snooping_ = false;
  std::map<int, uint64_t> group_macs_;
  std::map<std::pair<int, int>, std::set<uint16_t>> joined_;  // (VLAN, group) -> ports
  std::map<int, std::set<uint16_t>> routers_;                 // VLAN -> router ports
};

}  // namespace hvswitch::model
