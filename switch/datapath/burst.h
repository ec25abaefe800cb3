// What one Forwarder::HandleBurst call carries from stage to stage (forwarder.cc): the
// burst's frames grouped into runs, their lookups, and the shared state read for it.
// Lives on HandleBurst's stack; the stages are inlined into it, so nothing here is seen
// by another function except the frames and runs handed to egress by value or pointer.
#pragma once

#include <rte_ether.h>

#include <cstdint>

#include "switch/datapath/counters.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb_table.h"

struct rte_mbuf;

namespace hvswitch {

// A frame's encapsulation as classified: untagged, one tag, or a tag followed by another
// (a second tag is payload to hvswitch, which carries one).
inline constexpr uint8_t kUntagged = 0, kTagged = 1, kDoubleTagged = 3;

// Consecutive frames of a burst with the same keys and encapsulation: lookups, learning
// and the verdict happen once per run.
struct Run {
  uint64_t src, dst;  // FDB keys (VLAN and MAC)
  uint32_t bytes, max_len;
  uint16_t first, len;  // frames[first .. first + len)
  uint16_t vlan;
  bool tagged;
  bool double_tagged;  // tagged, and the tag is followed by another
  bool offload;  // offload requests (partial checksums, super-frames) to resolve
  uint32_t header() const { return RTE_ETHER_HDR_LEN + (tagged ? RTE_VLAN_HLEN : 0); }
};

// What a burst's stages write into arrays: handed to egress and to the FDB, so their
// address leaves HandleBurst. Kept apart from Burst for that reason: a struct holding both
// would be read again from memory after every such call; Burst's scalars stay in registers.
struct BurstArrays {
  rte_mbuf* frames[kMaxBurst];
  Run runs[kMaxBurst];
  // Classify: the sources (keys[0..)) and destinations (keys[kMaxBurst..)) of the runs
  // whose answer Forwarder::last_ does not hold, in run order, and their FDB look-ups,
  // started as the run opens (Fdb::Probe) and finished by LookUp.
  uint64_t keys[2 * kMaxBurst];
  FdbTable::Probe probes[2 * kMaxBurst];
  uint16_t ports[2 * kMaxBurst];
  int32_t positions[2 * kMaxBurst];
};

struct Burst {
  // Sets only what every burst needs before Classify; the arrays are written before they
  // are read (value-initialising them would clear kilobytes per burst).
  Burst(uint16_t port, PortCounters& counters, BurstArrays& arrays)
      : in_port(port), in(counters), frames(arrays.frames), runs(arrays.runs),
        keys(arrays.keys), probes(arrays.probes), ports(arrays.ports),
        positions(arrays.positions) {}

  const uint16_t in_port;
  PortCounters& in;  // in_port's counters
  // Classify: the frames kept (the rest are freed and counted), as runs of frames.
  rte_mbuf** const frames;
  Run* const runs;
  uint64_t* const keys;
  FdbTable::Probe* const probes;
  uint16_t nb_frames = 0, nb_runs = 0;
  // Bit r set: run r's source / destination is the port's last (Forwarder::last_).
  uint64_t src_known = 0, dst_known = 0;
  uint16_t nb_src_lookups = 0, nb_dst_lookups = 0;  // the rest, in keys and probes
  uint64_t kept_bytes = 0;  // of the frames kept
  // LookUp: bit r of src_hits/dst_hits set when run r's source/destination is in the FDB;
  // ports[r] / ports[kMaxBurst + r] its port, positions[r] the source entry's (for Touch),
  // whether looked up or known.
  uint16_t* const ports;
  int32_t* const positions;
  uint64_t src_hits, dst_hits;
  // ReadSharedState: as read once for the whole burst.
  bool learn_blocked;  // in_port may not learn a new MAC now
  uint32_t now_seconds;  // the control thread's clock (FDB last-seen times)
  uint64_t now_tsc;  // TSC when flushing by time, else 0 until a learn request needs it
  const PortMacs* allowed;  // in_port's allowed sources
  uint32_t nb_allowed;      // their count (0: any source)
};

// Frames dropped or not learned, by why, counted into the ingress port once per burst.
struct Tally {
  uint64_t bad_source = 0, hairpin = 0, spoofed = 0, no_destination = 0, limited = 0,
           table_full = 0, storm = 0, reserved = 0;
};

}  // namespace hvswitch
