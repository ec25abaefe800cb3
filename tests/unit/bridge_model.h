// The bridge's semantics in one page, for the tests to hold the fast pipeline against.
//   - A frame from a unicast source teaches the table: source MAC -> ingress port. The
//     switch applies learning asynchronously (its control thread drains the workers'
//     requests), so a frame is decided on the table as earlier bursts taught it, never
//     on what its own burst teaches.
//   - A group (multicast/broadcast) destination, or a unicast one not in the table, floods
//     to every other port whose link is up.
//   - A unicast destination in the table goes to that one port, unless that port is the
//     ingress port: then the frame is dropped (hairpin).
//   - A frame with a group source address is malformed: dropped, learns nothing.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace hvswitch::model {

inline bool IsGroup(uint64_t mac) { return mac & 1; }  // first octet's low bit

enum class Outcome { kForwarded, kHairpin, kMalformed };

struct Result {
  Outcome outcome = Outcome::kForwarded;
  std::vector<uint16_t> ports;  // where copies go (ascending)
};

struct Frame {
  uint64_t src, dst;
};

class BridgeModel {
 public:
  explicit BridgeModel(uint16_t nb_ports) : nb_ports_(nb_ports) {}

  // One burst from port `in`: every frame is decided first, then the burst's sources are
  // learned.
  std::vector<Result> ForwardBurst(uint16_t in, const std::vector<Frame>& frames,
                                   uint64_t up_mask) {
    std::vector<Result> results;
    for (const Frame& f : frames) results.push_back(Decide(in, f, up_mask));
    for (const Frame& f : frames) {
      if (!IsGroup(f.src)) table_[f.src] = in;
    }
    return results;
  }

  Result Forward(uint16_t in, uint64_t src, uint64_t dst, uint64_t up_mask) {
    return ForwardBurst(in, {{src, dst}}, up_mask)[0];
  }

  const std::map<uint64_t, uint16_t>& table() const { return table_; }

 private:
  Result Decide(uint16_t in, const Frame& f, uint64_t up_mask) const {
    Result r;
    if (IsGroup(f.src)) {
      r.outcome = Outcome::kMalformed;
      return r;
    }
    auto it = table_.find(f.dst);
    if (IsGroup(f.dst) || it == table_.end()) {
      for (uint16_t p = 0; p < nb_ports_; ++p) {
        if (p != in && ((up_mask >> p) & 1)) r.ports.push_back(p);
      }
    } else if (it->second == in) {
      r.outcome = Outcome::kHairpin;
    } else {
      r.ports.push_back(it->second);
    }
    return r;
  }

  uint16_t nb_ports_;
  std::map<uint64_t, uint16_t> table_;
};

}  // namespace hvswitch::model
