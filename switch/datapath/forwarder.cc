// The pipeline: HandleBurst and its stages, in the order the bridge's rules apply them
// (tests/model/bridge_model.h). Each stage is inlined into HandleBurst: the burst's state
// never leaves its stack frame except as values or frame pointers handed to egress.
#include "switch/datapath/forwarder.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstring>

#include "offload/egress_offload.h"
#include "ports/memif/memif_fixups.h"
#include "switch/datapath/announce.h"
#include "switch/datapath/mac_key.h"
#include "switch/datapath/port_guards.h"
#include "switch/datapath/port_mask.h"
#include "switch/datapath/verdict.h"

namespace hvswitch {
namespace {

constexpr uint16_t kPrefetchAhead = 4;
constexpr uint16_t kVlanTpid = RTE_BE16(RTE_ETHER_TYPE_VLAN);

// What follows a frame's tag is another tag (802.1Q, 802.1ad, the old QinQ TPID).
bool IsTagTpid(rte_be16_t ether_type) {
  return ether_type == kVlanTpid || ether_type == RTE_BE16(RTE_ETHER_TYPE_QINQ) ||
         ether_type == RTE_BE16(RTE_ETHER_TYPE_QINQ1);
}

// The VLAN of a frame received tagged on `in_port` (kNoVlan: the port does not carry it).
[[gnu::always_inline]] inline uint16_t TaggedVlan(const VlanTable& vlans, uint16_t in_port,
                                                  rte_mbuf* m, uint8_t& encap) {
  auto* tag = reinterpret_cast<rte_vlan_hdr*>(
      rte_pktmbuf_mtod_offset(m, uint8_t*, RTE_ETHER_HDR_LEN));
  const uint16_t tci = rte_be_to_cpu_16(tag->vlan_tci);
  const uint16_t vlan = vlans.Ingress(in_port, true, tci);
  // Priority-tagged (VLAN id 0): in the port's untagged VLAN. The tag stays, with its
  // priority, and from now on names that VLAN.
  if ((tci & 0xfff) == 0 && vlan != kNoVlan) {
    tag->vlan_tci = rte_cpu_to_be_16((tci & 0xf000) | vlan);
  }
  // hvswitch carries one tag: a second one is payload, and must not become the tag where
  // the first is removed (VLAN hopping).
  if (IsTagTpid(tag->eth_proto)) encap = kDoubleTagged;
  return vlan;
}

// A source address no station may use: a group address (802.3) or 00:00:00:00:00:00.
bool IsBadSource(uint64_t src) { return IsGroupKey(src) || src == 0; }

// A frame whose offload requests (partial checksums, super-frames) the pipeline resolves.
template <bool kOffloadPort>
[[gnu::always_inline]] inline bool HasOffload(const rte_mbuf* m) {
  return kOffloadPort &&
         ((m->ol_flags & RTE_MBUF_F_RX_LRO) ||
          (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_NONE);
}

// The run Classify is building: its keys and sums live in registers until it ends. head and tail: the first 14 bytes of its first
// frame as loaded (both MACs and the EtherType), when that frame was untagged (raw): an
// untagged frame with the same bytes continues the run without being classified again.
struct OpenRun {
  uint64_t src = 0, dst = 0, head = 0, tail = 0;
  uint32_t bytes = 0, max = 0;
  uint16_t first = 0, len = 0, vlan = 0;
  uint8_t encap = 0;
  bool offload = false, raw = false;

  void Extend(uint32_t frame_len) {
    ++len;
    bytes += frame_len;
    max = std::max(max, frame_len);
  }
  void WriteTo(Run& r) const {
    r.src = src;
    r.dst = dst;
    r.bytes = bytes;
    r.max_len = max;
    r.first = first;
    r.len = len;
    r.vlan = vlan;
    r.tagged = encap != kUntagged;
    r.double_tagged = encap == kDoubleTagged;
    r.offload = offload;
  }
};

// What Classify has found in a burst so far. A local of Classify's, whose helpers are all
// inlined: it lives in registers.
struct Classification {
  OpenRun run;
  uint64_t rx_bytes = 0, malformed = 0, wrong_vlan = 0;
  uint64_t dropped_bytes = 0;  // of the frames it drops
  // Bit r set: run r's source / destination is the port's last answer (Forwarder::last_).
  uint64_t src_known = 0, dst_known = 0;
  uint16_t nb_frames = 0, nb_runs = 0, nb_src_lookups = 0, nb_dst_lookups = 0;
  // The port's last source and destination keys: not looked up again.
  uint64_t last_src = 0, last_dst = 0;
  // IP anti-spoofing (Classify<..., true>): the port's bindings, the IPv4 source last
  // found bound (network order; 0: none), frames refused.
  const IpBindings* ips = nullptr;
  uint32_t ok4 = 0;
  uint64_t spoofed_ip = 0;
};

// A learning port's IPv4 frame that may be a DHCP server's or relay's message (UDP from
// port 67 or to port 68, which it may not send: Ipv4Allowed), or whose header is not the
// plain 20 bytes that put the ports where this looks: for the full check. The frame holds
// 38 bytes.
[[gnu::always_inline]] inline bool MaybeServer(const uint8_t* eth) {
  uint16_t sport, dport;
  std::memcpy(&sport, eth + RTE_ETHER_HDR_LEN + 20, 2);
  std::memcpy(&dport, eth + RTE_ETHER_HDR_LEN + 22, 2);
  return eth[RTE_ETHER_HDR_LEN] != 0x45 ||
         (eth[RTE_ETHER_HDR_LEN + 9] == 17 && (sport == RTE_BE16(67) || dport == RTE_BE16(68)));
}
inline constexpr uint16_t kLearnQuickLen = RTE_ETHER_HDR_LEN + 20 + 4;  // through the ports

// IP anti-spoofing in Classify, for ports with ip= (or ip_learn=1, kIp kLearn): an
// untagged IPv4 frame from the source last found bound passes on a load and a compare (a
// guest mostly sends from one address), a learning port's unless it may be a DHCP
// server's; anything else is checked in full, out of line.
template <IpMode kIp>
[[gnu::always_inline]] inline bool IpQuick(uint32_t ok4, const rte_mbuf* m, const uint8_t* eth,
                                           uint64_t tail) {
  constexpr uint16_t kLeast = kIp == IpMode::kLearn ? kLearnQuickLen : RTE_ETHER_HDR_LEN + 20;
  if ((tail >> 48) != kEtherIpv4 || ok4 == 0 || m->data_len < kLeast) return false;
  uint32_t src;
  std::memcpy(&src, eth + RTE_ETHER_HDR_LEN + 12, 4);
  return src == ok4 && (kIp != IpMode::kLearn || !MaybeServer(eth));
}

struct IpVerdict {
  bool allowed;
  uint32_t cache;  // an untagged IPv4 frame's bound source, for IpQuick; else 0
  bool claim;      // ip_learn=1: it claims an address not bound (ClaimsUnbound)
};

// The full check (ip_guard.h), past one tag. A tag cut short is not refused here: it is
// malformed, counted so where tags are read.
[[gnu::noinline]] IpVerdict IpCheck(const IpBindings& ips, const uint8_t* eth, uint32_t len) {
  uint16_t ether_type;
  std::memcpy(&ether_type, eth + 12, 2);
  uint32_t l2 = RTE_ETHER_HDR_LEN;
  if (ether_type == kEtherVlan) {
    if (len < RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN) return {true, 0, false};
    std::memcpy(&ether_type, eth + 16, 2);
    l2 += RTE_VLAN_HLEN;
  }
  const bool allowed = IpAllowed(ips, ether_type, eth + l2, len - l2);
  const bool claim = ips.learn && ClaimsUnbound(ether_type, eth + l2, len - l2, allowed);
  if (!allowed) return {false, 0, claim};
  uint32_t src = 0;
  if (l2 == RTE_ETHER_HDR_LEN && ether_type == kEtherIpv4) std::memcpy(&src, eth + 26, 4);
  return {true, src != 0 && ips.Allows4(src) ? src : 0, claim};
}

// Whether the `kFrames` frames at `m` all continue the raw run `run` (VPP's l2fwd quad
// loop): none a runt, the same first 14 bytes, the same offload state; with kIpv4Src (ip=
// or ip_learn=1 on an IPv4 run), all from `ok4`, the source last found bound (and on a
// learning port none a DHCP server's message). Their headers are read only once every one
// is known to hold them.
template <int kFrames, bool kOffloadPort, IpMode kIpv4Src>
[[gnu::always_inline]] inline bool Continue(const OpenRun& run, rte_mbuf* const* m,
                                            uint32_t ok4) {
  constexpr uint16_t kLeast = kIpv4Src == IpMode::kLearn  ? kLearnQuickLen
                              : kIpv4Src == IpMode::kBound ? RTE_ETHER_HDR_LEN + 20
                                                           : RTE_ETHER_HDR_LEN;
  bool runt = false;
#pragma GCC unroll 4
  for (int k = 0; k < kFrames; ++k) runt |= m[k]->data_len < kLeast;
  if (runt) return false;
  uint64_t differ = 0;
#pragma GCC unroll 4
  for (int k = 0; k < kFrames; ++k) {
    const auto* eth = rte_pktmbuf_mtod(m[k], const uint8_t*);
    uint64_t head, tail;
    std::memcpy(&head, eth, 8);
    std::memcpy(&tail, eth + 6, 8);
    differ |= (head ^ run.head) | (tail ^ run.tail);
    if (kOffloadPort) differ |= HasOffload<kOffloadPort>(m[k]) != run.offload;
    if (kIpv4Src != IpMode::kNone) {
      uint32_t src;
      std::memcpy(&src, eth + RTE_ETHER_HDR_LEN + 12, 4);
      differ |= src ^ ok4;
    }
    if (kIpv4Src == IpMode::kLearn) differ |= MaybeServer(eth);
  }
  return differ == 0;
}

// Frame `i` continued the raw open run: the frames after it join four at a time while all
// four continue it, then the last few one at a time; `i` is left at the last one taken.
template <bool kOffloadPort, IpMode kIpv4Src>
[[gnu::always_inline]] inline void ExtendRun(Classification& c, rte_mbuf** frames,
                                             rte_mbuf** pkts, uint16_t& i, uint16_t n) {
  OpenRun& run = c.run;
  while (i + 4 < n && Continue<4, kOffloadPort, kIpv4Src>(run, pkts + i + 1, c.ok4)) {
    // The four after these (near the burst's end, those there are).
    const uint16_t ahead = i + 1 + kPrefetchAhead;
    if (ahead + kPrefetchAhead <= n) [[likely]] {
#pragma GCC unroll 4
      for (uint16_t k = 0; k < kPrefetchAhead; ++k) {
        rte_prefetch0(rte_pktmbuf_mtod(pkts[ahead + k], void*));
      }
    } else {
      for (uint16_t k = ahead; k < n; ++k) rte_prefetch0(rte_pktmbuf_mtod(pkts[k], void*));
    }
    const uint32_t l0 = pkts[i + 1]->pkt_len, l1 = pkts[i + 2]->pkt_len,
                   l2 = pkts[i + 3]->pkt_len, l3 = pkts[i + 4]->pkt_len;
    const uint32_t sum = l0 + l1 + l2 + l3;
    c.rx_bytes += sum;
    run.len += 4;
    run.bytes += sum;
    run.max = std::max(std::max(run.max, l0), std::max(std::max(l1, l2), l3));
    std::memcpy(frames + c.nb_frames, pkts + i + 1, 4 * sizeof(rte_mbuf*));
    c.nb_frames += 4;
    i += 4;
  }
  // The burst's last frames (fewer than four left), or those before a four that breaks.
  while (i + 1 < n && Continue<1, kOffloadPort, kIpv4Src>(run, pkts + i + 1, c.ok4)) {
    const uint32_t len = pkts[i + 1]->pkt_len;
    c.rx_bytes += len;
    run.Extend(len);
    frames[c.nb_frames++] = pkts[i + 1];
    ++i;
  }
}

// The same, or nothing where ip= must look at the frames one by one: an IPv4 run continues
// from the source last found bound, frames of the other EtherTypes it reads go singly.
template <bool kOffloadPort, IpMode kIp>
[[gnu::always_inline]] inline void ExtendByFours(Classification& c, rte_mbuf** frames,
                                                 rte_mbuf** pkts, uint16_t& i, uint16_t n) {
  if (kIp != IpMode::kNone) {
    const auto ether_type = static_cast<uint16_t>(c.run.tail >> 48);
    if (ether_type == kEtherIpv4) {
      if (c.ok4 != 0) ExtendRun<kOffloadPort, kIp>(c, frames, pkts, i, n);
      return;
    }
    if (IpGuardReads(ether_type)) return;
  }
  ExtendRun<kOffloadPort, IpMode::kNone>(c, frames, pkts, i, n);
}

// A frame with keys other than the open run's (or tagged): the open run is written out
// and a new one opened. Its look-ups start here, so that their cache misses overlap with
// the rest of the burst's classification; none for what the port's last run had.
[[gnu::always_inline]] inline void OpenNewRun(Classification& c, Burst& b, const Fdb& fdb,
                                              uint64_t src_key, uint64_t dst_key, uint64_t head,
                                              uint64_t tail, uint32_t len, uint16_t vlan,
                                              uint8_t encap, bool offload) {
  if (c.nb_runs != 0) c.run.WriteTo(b.runs[c.nb_runs - 1]);
  const uint64_t bit = uint64_t{1} << c.nb_runs;
  if (src_key == c.last_src) {
    c.src_known |= bit;
  } else {
    b.keys[c.nb_src_lookups] = src_key;
    b.probes[c.nb_src_lookups++] = fdb.Probe(src_key);
  }
  if (dst_key == c.last_dst) {
    c.dst_known |= bit;
  } else {
    b.keys[kMaxBurst + c.nb_dst_lookups] = dst_key;
    b.probes[kMaxBurst + c.nb_dst_lookups++] = fdb.Probe(dst_key);
  }
  ++c.nb_runs;
  c.run.src = src_key;
  c.run.dst = dst_key;
  c.run.head = head;
  c.run.tail = tail;
  c.run.bytes = c.run.max = len;
  c.run.first = c.nb_frames;
  c.run.len = 1;
  c.run.vlan = vlan;
  c.run.encap = encap;
  c.run.offload = offload;
  c.run.raw = encap == kUntagged;
}

// A frame that does not continue the raw open run: its VLAN (runts of a tag and frames of
// a VLAN the port does not carry dropped) and keys; it continues a tagged run or opens a
// run of its own.
template <bool kOffloadPort>
[[gnu::always_inline]] inline void ClassifyAlone(Classification& c, Burst& b, const VlanTable& vlans,
                                                 const Fdb& fdb, uint16_t untagged_vlan,
                                                 rte_mbuf* m, uint64_t head, uint64_t tail,
                                                 bool offload) {
  uint8_t encap = (tail >> 48) == kVlanTpid ? kTagged : kUntagged;
  // A tag must sit in the first segment.
  if (encap != kUntagged && m->data_len < RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN) {
    ++c.malformed;
    c.dropped_bytes += m->pkt_len;
    rte_pktmbuf_free(m);
    return;
  }
  uint16_t vlan = untagged_vlan;
  if (encap != kUntagged) vlan = TaggedVlan(vlans, b.in_port, m, encap);
  if (vlan == kNoVlan) {
    ++c.wrong_vlan;
    c.dropped_bytes += m->pkt_len;
    rte_pktmbuf_free(m);
    return;
  }
  const uint64_t vlan_bits = uint64_t{vlan} << 48;
  const uint64_t src_key = KeyMac(tail) | vlan_bits;
  const uint64_t dst_key = KeyMac(head) | vlan_bits;
  const uint32_t len = m->pkt_len;
  b.frames[c.nb_frames] = m;
  // A tagged frame continuing a tagged run.
  if (((src_key ^ c.run.src) | (dst_key ^ c.run.dst)) == 0 && encap == c.run.encap &&
      (!kOffloadPort || offload == c.run.offload) && c.nb_runs != 0) {
    c.run.Extend(len);
  } else {
    OpenNewRun(c, b, fdb, src_key, dst_key, head, tail, len, vlan, encap, offload);
  }
  ++c.nb_frames;
}

// Look-ups of the runs not in `known` were made in run order into the first entries of
// `ports` and `positions` (if given), their hits in `found`: moves each to its run's
// entry, from the last run back so that none is overwritten before it moved, and gives
// the known runs `hit`, `port` and `position`. Returns the runs' hits.
// Always inlined: HandleBurst has grown past where GCC inlines it by itself (a call of its
// own cost 36 instructions a burst).
[[gnu::always_inline]] inline uint64_t Spread(uint64_t found, uint64_t known, uint16_t nb_runs,
                                              uint16_t* ports, int32_t* positions, bool hit,
                                              uint16_t port, int32_t position) {
  int k = nb_runs - __builtin_popcountll(known);
  if (k == 0) {  // every run known (a steady conversation): nothing to move
    for (uint16_t r = 0; r < nb_runs; ++r) ports[r] = port;
    if (positions != nullptr) std::fill_n(positions, nb_runs, position);
    return hit ? known : 0;
  }
  uint64_t hits = 0;
  for (int r = nb_runs - 1; r >= 0; --r) {
    const uint64_t bit = uint64_t{1} << r;
    if (known & bit) {
      if (!hit) continue;
      hits |= bit;
      ports[r] = port;
      if (positions != nullptr) positions[r] = position;
      continue;
    }
    --k;
    if (((found >> k) & 1) == 0) continue;
    hits |= bit;
    ports[r] = ports[k];
    if (positions != nullptr) positions[r] = positions[k];
  }
  return hits;
}

}  // namespace

void Forwarder::HandleBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n) {
  BurstArrays arrays;
  Burst b(in_port, counters_.ports[in_port], arrays);
  FixUp(in_port, pkts, n);                  // port quirks; the capture sees what came in
  const DatapathPort& dp = table_->ports[in_port];
  // Mirrored as it came; then what it may not send at all.
  if (dp.guards & (kGuardMirrorRx | kGuardBpdu | kGuardMirrorPort)) [[unlikely]] {
    if (dp.guards & kGuardMirrorRx) MirrorReceived(dp.mirror_rx, pkts, n);
    if (dp.guards & kGuardMirrorPort) return DropBurst<RxDrop::kMirrorPort>(b.in, pkts, n);
    if ((dp.guards & kGuardBpdu) &&
        ((datapath_.shut_mask.load(std::memory_order_relaxed) >> in_port) & 1)) {
      DropBurst<RxDrop::kShut>(b.in, pkts, n);
      return FlushMirrorCopies();
    }
  }
  // VLANs, runs; runts, foreign VLANs (and with ip=, spoofed sources) dropped.
  if (dp.guards & kGuardIp) [[unlikely]] {
    if (dp.guards & kGuardIpLearn) {
      if (dp.rx_offload) {
        Classify<true, IpMode::kLearn>(b, pkts, n);
      } else {
        Classify<false, IpMode::kLearn>(b, pkts, n);
      }
    } else if (dp.rx_offload) {
      Classify<true, IpMode::kBound>(b, pkts, n);
    } else {
      Classify<false, IpMode::kBound>(b, pkts, n);
    }
  } else if (dp.rx_offload) {
    Classify<true, IpMode::kNone>(b, pkts, n);
  } else {
    Classify<false, IpMode::kNone>(b, pkts, n);
  }
  if (b.nb_frames == 0) return FlushMirrorCopies();
  if (dp.guards & kGuardPolice) [[unlikely]] {  // what exceeds goes before any lookup
    // Mostly the burst fits whole: one call with its counts; else it is metered frame by
    // frame, and what exceeds goes.
    const PoliceFit fit = PoliceBurst(in_port, b.nb_frames, b.kept_bytes);
    if (fit == PoliceFit::kWhole) [[likely]] goto policed;
    const BurstShape shape = Police(
        in_port, b.in, {b.frames, b.runs, b.keys, b.probes},
        {b.nb_frames, b.nb_runs, b.nb_src_lookups, b.nb_dst_lookups, b.src_known, b.dst_known},
        fit == PoliceFit::kFramesPaid);
    b.nb_frames = shape.nb_frames;
    b.nb_runs = shape.nb_runs;
    b.nb_src_lookups = shape.nb_src_lookups;
    b.nb_dst_lookups = shape.nb_dst_lookups;
    b.src_known = shape.src_known;
    b.dst_known = shape.dst_known;
    if (b.nb_frames == 0) return FlushMirrorCopies();
  }
policed:
  LookUp(b);
  ReadSharedState(b);
  // Every run is decided on the table as earlier bursts taught it: the control thread
  // applies what this one asks to learn.
  Tally tally;
  for (uint16_t r = 0; r < b.nb_runs; ++r) {
    const Run& run = b.runs[r];
    rte_mbuf** frames = b.frames + run.first;
    if (!AdmitSource(b, run, frames, tally)) continue;     // malformed, spoofed
    LearnSource(b, run, r, tally);                          // asked, refreshed, limited
    Dispatch(b, run, frames, DecideRun(b, run, r), tally);  // unicast, flood, hairpin
  }
  CountDrops(b.in, tally);
  FlushByPolicy();
}

inline void Forwarder::FixUp(uint16_t in_port, rte_mbuf** pkts, uint16_t n) {
  if (table_->ports[in_port].recount_chains) RecountChains(pkts, n);
  if ((datapath_.capture_rx_mask.load(std::memory_order_relaxed) >> in_port) & 1) {
    CaptureReceived(in_port, pkts, n);
  }
}

// Frames are grouped into runs of consecutive frames with the same source, destination
// and encapsulation (a guest's burst is mostly one or two conversations).
template <bool kOffloadPort, IpMode kIp>
inline void Forwarder::Classify(Burst& b, rte_mbuf** pkts, uint16_t n) {
  constexpr bool kIpGuard = kIp != IpMode::kNone;
  const uint16_t untagged_vlan = table_->vlans.Ingress(b.in_port, false, 0);
  const Fdb& fdb = *datapath_.fdb;
  // The port's last answers hold while the FDB's version is the one they were read
  // under; read before this burst's look-ups, so a change during them shows next burst.
  LastLookup& last = last_[b.in_port];
  const uint64_t version = fdb.version();
  if (version != last.version) last = {version};
  Classification c;
  c.last_src = last.src;
  c.last_dst = last.dst;
  if (kIpGuard) {
    c.ips = &table_->ips[b.in_port];
    c.ok4 = ip_ok_[b.in_port];
  }

  for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i) {
    rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  }
  for (uint16_t i = 0; i < n; ++i) {
    // [[likely]]: laid out inline (one jump less per frame).
    if (i + kPrefetchAhead < n) [[likely]] {
      rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    }
    rte_mbuf* m = pkts[i];
    const uint32_t len = m->pkt_len;
    c.rx_bytes += len;
    const auto* eth = rte_pktmbuf_mtod(m, const uint8_t*);
    if (m->data_len < RTE_ETHER_HDR_LEN) {  // a runt: the header must be in one segment
      ++c.malformed;
      c.dropped_bytes += len;
      rte_pktmbuf_free(m);
      continue;
    }
    // Two 8-byte loads give both MACs in the FDB key layout and the EtherType.
    uint64_t head, tail;
    std::memcpy(&head, eth, 8);      // destination MAC, 2 bytes of source
    std::memcpy(&tail, eth + 6, 8);  // source MAC, EtherType
    if (kIpGuard && !IpQuick<kIp>(c.ok4, m, eth, tail)) [[unlikely]] {
      const IpVerdict ip = IpCheck(*c.ips, eth, m->data_len);
      if (ip.claim) [[unlikely]] OfferClaim(b.in_port, m);
      if (!ip.allowed) {  // before it joins a run: it neither ends one nor is looked up
        ++c.spoofed_ip;
        c.dropped_bytes += len;
        rte_pktmbuf_free(m);
        continue;
      }
      if (ip.cache != 0) c.ok4 = ip.cache;
    }
    const bool offload = HasOffload<kOffloadPort>(m);
    // [[likely]]: a frame mostly continues its run (a guest's burst is one or two
    // conversations), and the run's end is the jump.
    if (((head ^ c.run.head) | (tail ^ c.run.tail)) == 0 && c.run.raw &&
        (!kOffloadPort || offload == c.run.offload)) [[likely]] {
      b.frames[c.nb_frames++] = m;
      c.run.Extend(len);
      ExtendByFours<kOffloadPort, kIp>(c, b.frames, pkts, i, n);
      continue;
    }
    ClassifyAlone<kOffloadPort>(c, b, table_->vlans, fdb, untagged_vlan, m, head, tail, offload);
  }
  if (c.nb_runs != 0) c.run.WriteTo(b.runs[c.nb_runs - 1]);
  b.nb_frames = c.nb_frames;
  b.nb_runs = c.nb_runs;
  b.kept_bytes = c.rx_bytes - c.dropped_bytes;
  b.src_known = c.src_known;
  b.dst_known = c.dst_known;
  b.nb_src_lookups = c.nb_src_lookups;
  b.nb_dst_lookups = c.nb_dst_lookups;
  b.in.Add(PortCounter::kRxPackets, n);
  b.in.Add(PortCounter::kRxBytes, c.rx_bytes);
  if (c.malformed != 0) b.in.Drop<RxDrop::kMalformed>(c.malformed);
  if (c.wrong_vlan != 0) b.in.Drop<RxDrop::kVlan>(c.wrong_vlan);
  if (kIpGuard) {
    ip_ok_[b.in_port] = c.ok4;
    if (c.spoofed_ip != 0) b.in.Drop<RxDrop::kSpoofedIp>(c.spoofed_ip);
  }
}

// The looked-up sources in keys[0..), destinations from keys[kMaxBurst]: one bulk
// look-up each; the known ones filled in from the port's last answers, which then take
// the last run's destination.
inline void Forwarder::LookUp(Burst& b) {
  const Fdb& fdb = *datapath_.fdb;
  const uint16_t nb_runs = b.nb_runs;
  LastLookup& last = last_[b.in_port];
  const uint64_t src_found =
      b.nb_src_lookups == 0 ? 0 : fdb.Resolve(b.keys, b.probes, b.nb_src_lookups, b.ports, b.positions);
  const uint64_t dst_found =
      b.nb_dst_lookups == 0 ? 0
                            : fdb.Resolve(b.keys + kMaxBurst, b.probes + kMaxBurst,
                                          b.nb_dst_lookups, b.ports + kMaxBurst);
  b.src_hits = b.src_known == 0 ? src_found
                                : Spread(src_found, b.src_known, nb_runs, b.ports, b.positions,
                                         true, b.in_port, last.src_position);
  b.dst_hits = b.dst_known == 0 ? dst_found
                                : Spread(dst_found, b.dst_known, nb_runs, b.ports + kMaxBurst,
                                         nullptr, last.dst_hit, last.dst_port, 0);
  // The last run's answers are the port's from now on; its source only when current here
  // (refreshed by LearnSource).
  const uint16_t r = nb_runs - 1;
  last.dst = b.runs[r].dst;
  last.dst_hit = (b.dst_hits >> r) & 1;
  last.dst_port = last.dst_hit ? b.ports[kMaxBurst + r] : 0;
  if (((b.src_hits >> r) & 1) && b.ports[r] == b.in_port && b.runs[r].src != last.src) {
    last.src = b.runs[r].src;
    last.src_position = b.positions[r];
    last.touched = kNeverTouched;
  }
}

uint64_t Forwarder::PolledLinksUp(uint64_t polled) const {
  uint64_t up = 0;
  ForEachBit(polled, [&](uint16_t p) {
    rte_eth_link link{};  // memif: a copy of what its control thread last wrote
    if (rte_eth_link_get_nowait(table_->ports[p].eth_port, &link) == 0 &&
        link.link_status == RTE_ETH_LINK_UP) {
      up |= uint64_t{1} << p;
    }
  });
  return up;
}

inline void Forwarder::ReadSharedState(Burst& b) {
  up_mask_ = LoadUpMask();
  LoadTxTaps();
  b.learn_blocked =
      (datapath_.learn_blocked_mask.load(std::memory_order_relaxed) >> b.in_port) & 1;
  b.now_seconds = datapath_.now_seconds.load(std::memory_order_relaxed);
  b.now_tsc = options_.flush_cycles != 0 ? rte_rdtsc() : 0;
  now_ = b.now_tsc;
  b.allowed = &datapath_.port_macs[b.in_port];
  b.nb_allowed = b.allowed->count.load(std::memory_order_acquire);
}

// A source no station may use is malformed: checked once per run, whose frames share it.
// Neither it nor a source the port does not allow is learned or forwarded.
inline bool Forwarder::AdmitSource(const Burst& b, const Run& run, rte_mbuf** frames,
                                   Tally& tally) {
  if (IsBadSource(KeyMac(run.src))) {
    tally.bad_source += run.len;
    rte_pktmbuf_free_bulk(frames, run.len);
    return false;
  }
  if (b.nb_allowed != 0 && !b.allowed->Admits(KeyMac(run.src), b.nb_allowed)) {
    tally.spoofed += run.len;
    rte_pktmbuf_free_bulk(frames, run.len);
    return false;
  }
  return true;
}

inline void Forwarder::LearnSource(Burst& b, const Run& run, uint16_t r, Tally& tally) {
  const bool src_hit = (b.src_hits >> r) & 1;
  if (src_hit && !WantsLearn(b.in_port, false, true, b.ports[r])) {
    // Current here: refreshed; the port's last source (known) once a second.
    if (((b.src_known >> r) & 1) == 0) {
      datapath_.fdb->Touch(b.positions[r], run.src, b.now_seconds);
      return;
    }
    LastLookup& last = last_[b.in_port];
    if (b.now_seconds != last.touched) {
      datapath_.fdb->Touch(b.positions[r], run.src, b.now_seconds);
      last.touched = b.now_seconds;
    }
    return;
  }
  // A port at its limit, or beyond its reserve of a full table, learns no new MAC; a move
  // (rare) still goes to the control thread, which knows whether the entry is static.
  if (b.learn_blocked && !src_hit) {
    const bool full =
        (datapath_.learn_full_mask.load(std::memory_order_relaxed) >> b.in_port) & 1;
    (full ? tally.table_full : tally.limited) += run.len;
    return;
  }
  if (b.now_tsc == 0) b.now_tsc = rte_rdtsc();
  if (!learn_.Request(run.src, b.in_port, b.now_tsc, run.len)) {
    counters_[CoreCounter::kLearnQueueDrops].Add(1);
  }
}

inline Verdict Forwarder::DecideRun(const Burst& b, const Run& run, uint16_t r) const {
  // The port is read only for a hit (a miss leaves it unwritten).
  if (((b.dst_hits >> r) & 1) == 0) return Decide(b.in_port, IsGroupKey(run.dst), false, 0);
  return Decide(b.in_port, IsGroupKey(run.dst), true, b.ports[kMaxBurst + r]);
}

inline void Forwarder::Dispatch(const Burst& b, const Run& run, rte_mbuf** run_frames,
                                Verdict verdict, Tally& tally) {
  switch (verdict.kind) {
    case VerdictKind::kUnicast:
      if (run.offload) {
        // Rare (guests with offloads): settle each frame, then send what it became.
        const uint64_t target = uint64_t{1} << verdict.port;
        const bool retag = run.tagged == table_->vlans.SendsUntagged(run.vlan, verdict.port);
        for (uint16_t i = 0; i < run.len; ++i) {
          rte_mbuf* out[kMaxSegments];
          const uint16_t nb = ResolveOffload(target, run_frames[i], b.in, out);
          for (uint16_t k = 0; k < nb; ++k) UnicastFrame(verdict.port, out[k], run, retag);
        }
      } else {
        UnicastRun(verdict.port, run, run_frames);
      }
      break;
    case VerdictKind::kFlood: {
      uint16_t len = run.len;
      // 802.1D's bridge protocols never cross a bridge (and a BPDU may shut its port); a
      // storm-controlled port's floods are metered. What goes on: the first `len` frames.
      if (IsReservedKey(run.dst) || (table_->ports[b.in_port].guards & kGuardStorm))
          [[unlikely]] {
        const FloodGuard guard = GuardFlood(b.in_port, b.in, run, run_frames);
        tally.reserved += guard.reserved;
        tally.storm += guard.storm;
        len = guard.pass;
        if (len == 0) break;
      }
      if (MayBeAnnouncement(KeyMac(run.dst))) CountAnnouncements(b.in, run_frames, len);
      // A group address under IGMP/MLD snooping: its members, not every port.
      if (IsGroupKey(run.dst) && KeyMac(run.dst) != kBroadcastKey) [[unlikely]] {
        if (const McastTable* mcast = datapath_.mcast.load(std::memory_order_acquire)) {
          tally.no_destination += DispatchGroup(*mcast, b.in_port, b.in, run, run_frames, len);
          break;
        }
      }
      // Every other port that is up and carries the VLAN; none: received, sent nowhere.
      const uint64_t targets = FloodTargets(b.in_port, run.vlan);
      if (targets == 0) {
        tally.no_destination += len;
        rte_pktmbuf_free_bulk(run_frames, len);
        break;
      }
      for (uint16_t i = 0; i < len; ++i) FloodFrame(targets, run, run_frames[i], b.in);
      break;
    }
    case VerdictKind::kHairpinDrop:
      tally.hairpin += run.len;
      rte_pktmbuf_free_bulk(run_frames, run.len);
      break;
  }
}

// Few frames go to broadcast or all-nodes, and each is copied to every port: reading its
// headers once more costs little.
void Forwarder::CountAnnouncements(PortCounters& in, rte_mbuf* const* frames, uint16_t len) {
  uint64_t n = 0;
  for (uint16_t i = 0; i < len; ++i) {
    n += IsAnnouncement(rte_pktmbuf_mtod(frames[i], const uint8_t*), frames[i]->data_len);
  }
  if (n != 0) in.Add(PortCounter::kAnnouncements, n);
}

inline void Forwarder::CountDrops(PortCounters& in, const Tally& tally) {
  if (tally.bad_source != 0) in.Drop<RxDrop::kMalformed>(tally.bad_source);
  if (tally.hairpin != 0) in.Drop<RxDrop::kHairpin>(tally.hairpin);
  if (tally.spoofed != 0) in.Drop<RxDrop::kSpoofed>(tally.spoofed);
  if (tally.no_destination != 0) in.Drop<RxDrop::kNoDestination>(tally.no_destination);
  if (tally.storm != 0) in.Drop<RxDrop::kStorm>(tally.storm);
  if (tally.reserved != 0) in.Drop<RxDrop::kReserved>(tally.reserved);
  if (tally.limited != 0) in.Add(PortCounter::kLearnLimited, tally.limited);
  if (tally.table_full != 0) in.Add(PortCounter::kLearnTableFull, tally.table_full);
}

inline void Forwarder::FlushByPolicy() {
  if (options_.flush_cycles == 0) {
    FlushAll();
    return;
  }
  uint64_t full = 0;
  ForEachBit(pending_, [&](uint16_t p) {
    if (tx_[p].n >= options_.flush_batch) full |= uint64_t{1} << p;
  });
  ForEachBit(full, [&](uint16_t p) { FlushPort(p); });
}

template <RxDrop kReason>
void Forwarder::DropBurst(PortCounters& in, rte_mbuf** pkts, uint16_t n) {
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) bytes += pkts[i]->pkt_len;
  in.Add(PortCounter::kRxPackets, n);
  in.Add(PortCounter::kRxBytes, bytes);
  in.Drop<kReason>(n);
  rte_pktmbuf_free_bulk(pkts, n);
}

Forwarder::PoliceFit Forwarder::PoliceBurst(uint16_t in_port, uint16_t frames, uint64_t bytes) {
  const GuardProfiles& profiles = table_->guards[in_port];
  GuardMeters& meters = CurrentMeters(profiles, meters_[in_port]);
  // Read after a (re)configuration, which starts the meters at the TSC: never before it.
  const uint64_t now = rte_rdtsc();
  constexpr GuardMeter kFrames = GuardMeter::kPolicePackets, kBytes = GuardMeter::kPoliceBytes;
  // The whole burst at once: its frames, then (if they fit) its bytes. A check that fails
  // takes no tokens, so that the frames are metered one by one from where it left.
  if (profiles.has(kFrames) && !MeterFits(profiles, meters, kFrames, frames, now)) {
    return PoliceFit::kNone;
  }
  if (profiles.has(kBytes) &&
      (bytes > UINT32_MAX ||
       !MeterFits(profiles, meters, kBytes, static_cast<uint32_t>(bytes), now))) {
    return PoliceFit::kFramesPaid;
  }
  return PoliceFit::kWhole;
}

Forwarder::BurstShape Forwarder::Police(uint16_t in_port, PortCounters& in,
                                        const BurstView& burst, BurstShape shape,
                                        bool frames_paid) {
  const GuardProfiles& profiles = table_->guards[in_port];
  GuardMeters& meters = meters_[in_port];  // made current by PoliceBurst
  const uint64_t now = rte_rdtsc();
  constexpr GuardMeter kFrames = GuardMeter::kPolicePackets, kBytes = GuardMeter::kPoliceBytes;
  // Frame by frame in order (a frame that does not fit is dropped, a smaller one after it
  // may pass); the runs, their frames and look-ups are moved down over what went. Every
  // write goes to an index at or before the one read.
  BurstShape out{};
  uint16_t src_at = 0, dst_at = 0;
  uint64_t dropped = 0;
  for (uint16_t r = 0; r < shape.nb_runs; ++r) {
    const Run run = burst.runs[r];
    const uint64_t bit = uint64_t{1} << r;
    const bool src_looked = !(shape.src_known & bit), dst_looked = !(shape.dst_known & bit);
    Run kept = run;
    kept.first = out.nb_frames;
    kept.len = 0;
    kept.bytes = 0;
    for (uint16_t i = run.first; i < run.first + run.len; ++i) {
      rte_mbuf* m = burst.frames[i];
      if ((frames_paid || MeterFits(profiles, meters, kFrames, 1, now)) &&
          (!profiles.has(kBytes) || MeterFits(profiles, meters, kBytes, m->pkt_len, now))) {
        burst.frames[out.nb_frames++] = m;
        ++kept.len;
        kept.bytes += m->pkt_len;
      } else {
        rte_pktmbuf_free(m);
        ++dropped;
      }
    }
    if (kept.len != 0) {
      const uint64_t to = uint64_t{1} << out.nb_runs;
      if (src_looked) {
        burst.keys[out.nb_src_lookups] = burst.keys[src_at];
        burst.probes[out.nb_src_lookups++] = burst.probes[src_at];
      } else {
        out.src_known |= to;
      }
      if (dst_looked) {
        burst.keys[kMaxBurst + out.nb_dst_lookups] = burst.keys[kMaxBurst + dst_at];
        burst.probes[kMaxBurst + out.nb_dst_lookups++] = burst.probes[kMaxBurst + dst_at];
      } else {
        out.dst_known |= to;
      }
      burst.runs[out.nb_runs++] = kept;
    }
    src_at += src_looked;
    dst_at += dst_looked;
  }
  in.Drop<RxDrop::kPoliced>(dropped);
  return out;
}

Forwarder::FloodGuard Forwarder::GuardFlood(uint16_t in_port, PortCounters& in, const Run& run,
                                            rte_mbuf** frames) {
  if (IsReservedKey(run.dst)) {
    rte_pktmbuf_free_bulk(frames, run.len);
    // Shut from the next burst on; the control thread logs it and flushes the port's MACs.
    // Several workers may see BPDUs of one port: the one that shut it counts it.
    if (IsStpKey(run.dst) && (table_->ports[in_port].guards & kGuardBpdu)) {
      const uint64_t bit = uint64_t{1} << in_port;
      if (!(datapath_.shut_mask.fetch_or(bit, std::memory_order_relaxed) & bit)) {
        in.Add(PortCounter::kBpduGuardShutdowns, 1);
      }
    }
    return {0, 0, run.len};
  }
  const StormClass c = !IsGroupKey(run.dst)                ? StormClass::kUnknown
                       : KeyMac(run.dst) == kBroadcastKey ? StormClass::kBroadcast
                                                           : StormClass::kMulticast;
  const GuardProfiles& profiles = table_->guards[in_port];
  const GuardMeter meter = StormMeter(c);
  if (!profiles.has(meter)) return {run.len, 0, 0};
  GuardMeters& meters = CurrentMeters(profiles, meters_[in_port]);
  const uint16_t pass = MeterFrames(profiles, meters, meter, run.len, rte_rdtsc());
  if (pass != run.len) rte_pktmbuf_free_bulk(frames + pass, run.len - pass);
  return {pass, static_cast<uint16_t>(run.len - pass), 0};
}

}  // namespace hvswitch
