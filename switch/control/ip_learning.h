// IpLearning: the IP bindings of ip_learn=1 ports, learned by the control thread from the
// frames the workers copy to it (switch/datapath/snoop_queue.h), and written into every
// port table the bridge publishes, beside the static ones (ip=):
//   - DHCP snooping: a server's ACK sent to a learning port, for a client MAC the port may
//     use, binds its address (yiaddr) for the lease, renewed by the next ACK. Only a
//     port without ip_learn is believed as a server (the workers refuse a learning port's
//     server messages): the uplink, the host, a router guest. The server decides who has
//     an address: the one it leases is taken from any other learning port.
//   - First come, first served (as SAVI-FCFS, RFC 6620): an ARP or neighbour discovery
//     message of a learning port claiming an address (address_claim.h), from a MAC the
//     port may use and for that same MAC, binds it unless a port sharing a VLAN with it
//     has it already (ip=, learned or leased), up to kMaxLearnedIps a family. Kept until
//     the port goes down or away (its guest gone: the next one claims afresh).
// What a port may not have is refused and counted (LearnEvent), the frame claiming it
// dropped by the workers (spoofed_ip) as before.
// Control thread only, except Snapshot (any thread).
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "ports/guard_spec.h"
#include "ports/port_spec.h"
#include "switch/datapath/datapath.h"

namespace hvswitch {

// What became of what a learning port's frames (or the DHCP replies it was sent) said.
enum class LearnEvent : uint8_t {
  kBound,       // an address bound (or a lease renewed)
  kTaken,       // claimed, but another port sharing a VLAN has it
  kLimit,       // the port has as many learned addresses of the family as it may
  kForeignMac,  // from or for a MAC the port may not use
  kUntrusted,   // a DHCP reply from another learning port (the workers drop those)
  kNoLease,     // a DHCP ACK without a lease time: nothing to bind for
  kCount
};
inline constexpr const char* kLearnEventNames[] = {"bound",     "taken",    "limit",
                                                   "foreign_mac", "untrusted", "no_lease"};
inline constexpr size_t kLearnEvents = static_cast<size_t>(LearnEvent::kCount);
static_assert(std::size(kLearnEventNames) == kLearnEvents);

// Where a learned binding came from.
enum class BindingSource : uint8_t { kDhcp, kArp, kNd };
inline constexpr const char* kBindingSourceNames[] = {"dhcp", "arp", "nd"};

struct LearnedBinding {
  IpPrefix address;  // length 32 or 128
  BindingSource source;
  uint32_t expires;  // control clock seconds; 0: until the port goes (claims, infinite leases)
};

// What IpLearning needs to know of the ports when a frame comes: their specs (by slot,
// null: none), the table the workers have (VLANs, devices) and the ports' MACs.
struct LearningPorts {
  const std::vector<const PortSpec*>& specs;
  const PortTable& table;
  const Datapath& datapath;
};

class IpLearning {
 public:
  // A copy the workers made for `port` (SnoopKind kDhcp: a reply it was sent, which came
  // in on ethdev `from_ethdev`; kClaim: its own claim) at `now`. True when the bindings
  // changed (the caller publishes a new table).
  bool ApplyDhcp(const uint8_t* frame, uint32_t len, uint16_t port, uint16_t from_ethdev,
                 uint32_t now, const LearningPorts& ports);
  bool ApplyClaim(const uint8_t* frame, uint32_t len, uint16_t port, uint32_t now,
                  const LearningPorts& ports);
  // Leases past their end go; true if any did.
  bool Age(uint32_t now);
  // The port went down or away: what it learned goes. True if anything did.
  bool PortGone(uint16_t port);

  // Every table the bridge publishes gets the learned bindings (after Configure put the
  // static ones in).
  void WriteTo(PortTable& table) const;

  struct Snapshot {
    std::array<std::vector<LearnedBinding>, kMaxPorts> bindings;
    std::array<uint64_t, kLearnEvents> events{};
  };
  Snapshot Read() const;

 private:
  // Binds `binding` to `port` (a lease renewed, a claim of an address it has: no change);
  // kTaken / kLimit when it may not. A lease takes the address from other learning ports.
  // `changed`: set when the bindings changed.
  LearnEvent Bind(uint16_t port, const LearnedBinding& binding, uint32_t now,
                  const LearningPorts& ports, bool& changed);
  void Count(LearnEvent event) {
    std::unique_lock lock(mu_);
    ++events_[static_cast<size_t>(event)];
  }

  // Read by Snapshot from another thread (a pthread lock, for ThreadSanitizer's sake);
  // the control thread, the only writer, reads without.
  mutable std::shared_mutex mu_;
  std::array<std::vector<LearnedBinding>, kMaxPorts> learned_;
  std::array<uint64_t, kLearnEvents> events_{};
};

}  // namespace hvswitch
