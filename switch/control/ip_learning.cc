#include "switch/control/ip_learning.h"

#include <algorithm>
#include <cstring>

#include "ports/guard_keys.h"
#include "switch/control/address_claim.h"
#include "switch/control/dhcp_message.h"
#include "switch/control/log.h"

namespace hvswitch {
namespace {

constexpr uint8_t kDhcpAck = 5;
constexpr uint32_t kInfiniteLease = 0xffffffff;

bool Learns(const LearningPorts& ports, uint16_t port) {
  return port < ports.specs.size() && ports.specs[port] != nullptr &&
         ports.specs[port]->guards.ip_learn;
}

// Whether the port may send from `mac`: one of its mac=, or the one lock=1 claimed (maybe
// not published yet: the worker's claim word has it first).
bool MayUse(const PortMacs& macs, uint64_t mac) {
  const uint32_t n = macs.count.load(std::memory_order_acquire);
  if (n != PortMacs::kUnclaimed) return macs.Allows(mac, n);
  return macs.claim.load(std::memory_order_relaxed) == (mac | PortMacs::kClaimed);
}

// Whether `prefix` covers `address` (a full-length address of the same family).
bool Covers(const IpPrefix& prefix, const IpPrefix& address) {
  if (prefix.v6 != address.v6) return false;
  for (unsigned bit = 0; bit < prefix.length; ++bit) {
    const unsigned byte = bit / 8, mask = 0x80u >> (bit % 8);
    if ((prefix.addr[byte] & mask) != (address.addr[byte] & mask)) return false;
  }
  return true;
}

// The ports that carry a VLAN `port` carries (their addresses live in one subnet's reach).
uint64_t Neighbours(const PortTable& table, uint16_t port) {
  uint64_t ports = 0;
  for (uint64_t members : table.vlans.members) {
    if ((members >> port) & 1) ports |= members;
  }
  return ports & ~(uint64_t{1} << port);
}

std::string Name(const LearningPorts& ports, uint16_t port) {
  return port < ports.specs.size() && ports.specs[port] != nullptr ? ports.specs[port]->name
                                                                   : std::string("?");
}

}  // namespace

LearnEvent IpLearning::Bind(uint16_t port, const LearnedBinding& binding, uint32_t now,
                            const LearningPorts& ports, bool& changed) {
  const IpPrefix& address = binding.address;
  const bool lease = binding.source == BindingSource::kDhcp;
  for (const IpPrefix& own : ports.specs[port]->guards.ips) {
    if (Covers(own, address)) return LearnEvent::kBound;  // it has it already (ip=)
  }
  const uint64_t neighbours = Neighbours(ports.table, port);
  for (uint16_t q = 0; q < kMaxPorts; ++q) {
    if (!((neighbours >> q) & 1) || ports.specs[q] == nullptr) continue;
    // The operator gave it there. A shorter prefix (a router's subnet, fe80::/64) is what
    // that port may send from, not an address it has.
    for (const IpPrefix& prefix : ports.specs[q]->guards.ips) {
      if (prefix == address) return LearnEvent::kTaken;
    }
    auto held = std::find_if(learned_[q].begin(), learned_[q].end(),
                             [&](const LearnedBinding& b) { return b.address == address; });
    if (held == learned_[q].end()) continue;
    if (!lease) return LearnEvent::kTaken;
    // The server leased it to this port: the other one's is over.
    Log("port '%s': %s no longer bound (leased to port '%s')", Name(ports, q),
        IpPrefixString(address), Name(ports, port));
    std::unique_lock lock(mu_);
    learned_[q].erase(held);
    changed = true;
  }
  std::vector<LearnedBinding>& mine = learned_[port];
  auto it = std::find_if(mine.begin(), mine.end(),
                         [&](const LearnedBinding& b) { return b.address == address; });
  if (it != mine.end()) {
    if (lease) {  // renewed (or a claimed address leased now: it lasts as the lease does)
      std::unique_lock lock(mu_);
      it->source = binding.source;
      it->expires = binding.expires;
    }
    return LearnEvent::kBound;
  }
  size_t family = 0, claimed = 0;
  for (const LearnedBinding& b : mine) {
    if (b.address.v6 != address.v6) continue;
    ++family;
    claimed += b.source != BindingSource::kDhcp;
  }
  for (const IpPrefix& own : ports.specs[port]->guards.ips) family += own.v6 == address.v6;
  if (family >= kMaxPortIps || (!lease && claimed >= kMaxLearnedIps)) return LearnEvent::kLimit;
  {
    std::unique_lock lock(mu_);
    mine.push_back(binding);
  }
  changed = true;
  Log("port '%s': %s bound (%s%s)", Name(ports, port), IpPrefixString(address),
      kBindingSourceNames[static_cast<size_t>(binding.source)],
      binding.expires != 0 ? absl::StrFormat(", lease ends in %d s", binding.expires - now)
                           : "");
  return LearnEvent::kBound;
}

bool IpLearning::ApplyDhcp(const uint8_t* frame, uint32_t len, uint16_t port,
                           uint16_t from_ethdev, uint32_t now, const LearningPorts& ports) {
  const std::optional<DhcpMessage> msg = ParseDhcpFrame(frame, len);
  if (!msg || !msg->reply || msg->type != kDhcpAck || msg->your_ip == 0) return false;
  if (!Learns(ports, port)) return false;  // no longer a learning port
  int from = -1;
  for (uint16_t p = 0; p < kMaxPorts; ++p) {
    if (((ports.table.present >> p) & 1) && ports.table.ports[p].eth_port == from_ethdev) from = p;
  }
  if (from < 0 || Learns(ports, static_cast<uint16_t>(from))) {
    Count(LearnEvent::kUntrusted);
    return false;
  }
  if (msg->lease_seconds == 0) {
    Count(LearnEvent::kNoLease);
    return false;
  }
  if (!MayUse(ports.datapath.port_macs[port], msg->client_mac)) {
    // A broadcast ACK reaches every learning port of the VLAN, the client's among them:
    // only one sent to this port alone, for another MAC, is a foreign one.
    const bool unicast = (frame[0] & 1) == 0;
    if (unicast) Count(LearnEvent::kForeignMac);
    return false;
  }
  // A lease running past the clock's range lasts as an infinite one (a wrapped sum could
  // end it at once, or read 0: infinite after all).
  const uint64_t ends = uint64_t{now} + msg->lease_seconds;
  LearnedBinding binding{{}, BindingSource::kDhcp,
                         msg->lease_seconds == kInfiniteLease || ends > UINT32_MAX
                             ? 0
                             : static_cast<uint32_t>(ends)};
  binding.address.v6 = false;
  binding.address.length = 32;
  std::memcpy(binding.address.addr.data(), &msg->your_ip, 4);
  if (!IsUsableUnicast(binding.address)) return false;
  bool changed = false;
  Count(Bind(port, binding, now, ports, changed));
  return changed;
}

bool IpLearning::ApplyClaim(const uint8_t* frame, uint32_t len, uint16_t port, uint32_t now,
                            const LearningPorts& ports) {
  const std::optional<AddressClaim> claim = ParseAddressClaim(frame, len);
  if (!claim || !Learns(ports, port)) return false;
  // From the port's MAC, for it: not pointing an address at another station.
  if (claim->link_mac != claim->eth_src ||
      !MayUse(ports.datapath.port_macs[port], claim->eth_src)) {
    Count(LearnEvent::kForeignMac);
    return false;
  }
  const LearnedBinding binding{claim->address,
                               claim->address.v6 ? BindingSource::kNd : BindingSource::kArp, 0};
  bool changed = false;
  Count(Bind(port, binding, now, ports, changed));
  return changed;
}

bool IpLearning::Age(uint32_t now) {
  bool changed = false;
  std::unique_lock lock(mu_);
  for (std::vector<LearnedBinding>& bindings : learned_) {
    changed |= std::erase_if(bindings, [now](const LearnedBinding& b) {
                 return b.expires != 0 && b.expires <= now;
               }) != 0;
  }
  return changed;
}

bool IpLearning::PortGone(uint16_t port) {
  std::unique_lock lock(mu_);
  const bool had = !learned_[port].empty();
  learned_[port].clear();
  return had;
}

void IpLearning::WriteTo(PortTable& table) const {
  for (size_t p = 0; p < kMaxPorts; ++p) {
    for (const LearnedBinding& b : learned_[p]) table.ips[p].Add(b.address);
  }
}

IpLearning::Snapshot IpLearning::Read() const {
  std::shared_lock lock(mu_);
  Snapshot snap;
  snap.bindings = learned_;
  snap.events = events_;
  return snap;
}

}  // namespace hvswitch
