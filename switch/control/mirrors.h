// Mirrors: the port mirroring sessions (hvswitchctl mirror add/del, --mirror=): their
// specs by slot (the slot is a session's index in PortTable::mirrors and in the workers'
// mirror counters), checked against the ports and each other, written into every port
// table the bridge publishes, and counted. Owns the pool the workers copy frames into.
// Control thread only, except Snapshot (any thread).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "switch/control/bridge_snapshot.h"
#include "switch/control/mirror_spec.h"
#include "switch/datapath/datapath.h"

namespace hvswitch {

class Mirrors {
 public:
  // `pool_size`: buffers for copies in flight (the analysers' rings and the workers'
  // transmit buffers), allocated when the first session is added.
  Mirrors(Datapath& datapath, uint32_t pool_size) : datapath_(datapath), pool_size_(pool_size) {}
  ~Mirrors();
  Mirrors(const Mirrors&) = delete;
  Mirrors& operator=(const Mirrors&) = delete;

  // What a session needs of the ports: slot by name (-1: none).
  using FindPort = std::function<int(absl::string_view)>;

  // `spec` as the workers will see it: its ports exist, it has a free slot and a name of
  // its own, its analyser is no other session's source and none of its sources is
  // another's analyser. Nothing changes.
  absl::StatusOr<MirrorSession> Check(const MirrorSpec& spec, const FindPort& find) const;
  // Takes a slot for a checked session (the mirror pool made first, if it is not yet);
  // `counted`: what the workers counted so far in that slot (the session starts from it).
  absl::Status Add(const MirrorSpec& spec, const MirrorSession& session,
                   const std::function<MirrorTotals(int)>& counted);
  // NotFound for no such session.
  absl::Status Remove(absl::string_view name);
  // The port in `slot`, named `name`, is going: FailedPrecondition while it is a session's
  // analyser; else it leaves the sessions it is mirrored by, and a session left without a
  // port is removed. Returns what changed, for the log.
  absl::StatusOr<std::vector<std::string>> PortRemoved(int slot, absl::string_view name);
  // Whether the port in `slot` is a session's analyser.
  bool IsAnalyser(int slot) const;

  // Every table the bridge publishes gets the sessions (PortTable::Seal derives the rest).
  void WriteTo(PortTable& table) const;
  std::vector<MirrorSpec> Specs() const;
  // `counted(slot)`: the workers' sums for a slot.
  std::vector<MirrorSnapshot> Snapshot(const std::function<MirrorTotals(int)>& counted) const;

 private:
  struct Slot {
    MirrorSpec spec;
    MirrorSession session;
    MirrorTotals base;  // what the slot had counted before the session took it
  };
  int Find(absl::string_view name) const;

  Datapath& datapath_;
  const uint32_t pool_size_;
  // Snapshot reads the slots from another thread (a pthread lock, as PortSlots has, for
  // ThreadSanitizer's sake); the control thread, their only writer, reads them without.
  mutable std::shared_mutex mu_;
  std::array<std::optional<Slot>, kMaxMirrors> slots_;
};

}  // namespace hvswitch
