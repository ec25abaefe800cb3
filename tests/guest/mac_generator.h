// MacLoop: a loopback traffic generator over many MACs, between two ports of one guest.
// Frames received on one port go out of the other with their Ethernet addresses
// rewritten: the source one of N MACs of the sending side, the destination one of N MACs
// of the other side. So a switch between the ports sees 2N stations and, in random mode,
// a new conversation on nearly every frame; in runs mode, 8-32 consecutive frames per
// (source, destination) pair, as guest traffic comes.
//
// MACs are computed from their index (02:5a:SS:II:II:II, SS the side), not read from a
// table: at a million per side a table would be 12 MB of guest cache misses per frame,
// and the generator runs on the guest's core for every switch alike, so its cost should
// be as small as possible and the same everywhere.
//
// Commands (hvs_guest's `gen ...`, each answering one JSON line):
//   gen config MACS random|runs [SIZE]  -> {"ok":1}   N MACs per side (1-16777215);
//                                       SIZE 60-1514, frame bytes without the FCS;
//                                       stops forwarding
//   gen learn RATE [SECONDS]         -> {"sent":N,"seconds":S}   one broadcast from every
//                                       MAC of each side (side 0 on port 0, side 1 on
//                                       port 1), interleaved, paced at RATE frames/s in
//                                       all (0: as fast as the ports take them), so a
//                                       learning switch knows all 2N before the loop;
//                                       stops after SECONDS (0: no limit) or when the
//                                       ports take nothing for 2 s
//   gen start BURSTS                 -> {"seeded":N}   BURSTS bursts of 32 frames on each
//                                       port, then forwards whatever comes back
//   gen stop                         -> {"ok":1}   received frames are dropped again
//   gen queues Q                     -> {"ok":1}   restarts both ports with Q queue pairs
//                                       (1-4), all received from, sent on queue 0: a
//                                       switch that transmits on a queue of its own
//                                       choosing (OVS-DPDK's PMD on a memif port: its
//                                       transmit queue 1, the guest's receive queue 1)
//   gen stats                        -> {"rx":N,"tx":N,"tx_dropped":N,"busy_cycles":N,
//                                       "gen_cycles":N,"tsc_hz":N,"links":[0|1,0|1]}
//                                       busy: cycles of polls that received frames (as
//                                       testpmd counts them); gen: of those, the address
//                                       rewriting (the generator's own cost per frame)
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <sstream>
#include <string>

namespace hvswitch::guest {

class MacLoop {
 public:
  MacLoop(rte_mempool* pool, uint16_t port0, uint16_t port1)
      : pool_(pool), ports_{port0, port1} {}

  // `gen SUBCOMMAND ...` with `in` positioned after "gen".
  std::string Command(std::istringstream& in);

  // Forwarding (after `gen start`) or draining (before): the caller polls nothing else.
  bool configured() const { return macs_ != 0; }
  // Forwards (or drains) for about a millisecond, so that the caller's check of its
  // command input costs little per frame.
  void Poll();

 private:
  enum class Pattern { kRandom, kRuns };
  struct Run {  // runs mode: the pair the next frames of one direction use
    uint32_t src = 0, dst = 0, left = 0;
  };

  uint64_t Next() {  // xorshift64
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }
  uint32_t Pick() { return static_cast<uint32_t>(((Next() >> 32) * macs_) >> 32); }

  void Rewrite(rte_mbuf** pkts, uint16_t n, int out_side);
  void Drain();
  std::string Learn(uint64_t rate, uint64_t max_seconds);
  std::string Start(unsigned bursts);
  std::string Stats() const;
  std::string Queues(uint16_t queues);
  uint16_t Receive(int side, rte_mbuf** pkts);

  rte_mempool* pool_;
  uint16_t ports_[2];
  uint16_t queues_ = 1;  // receive queues per port
  uint16_t next_queue_[2] = {0, 0};
  uint32_t macs_ = 0;
  Pattern pattern_ = Pattern::kRandom;
  uint16_t size_ = 60;
  bool forwarding_ = false;
  uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
  Run runs_[2];  // by output side
  uint64_t rx_ = 0, tx_ = 0, tx_dropped_ = 0, busy_cycles_ = 0, gen_cycles_ = 0;
};

}  // namespace hvswitch::guest
