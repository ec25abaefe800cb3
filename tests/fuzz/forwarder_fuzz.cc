// libFuzzer target over the forwarder (Forwarder::HandleBurst: classify, learn requests,
// verdict, VLAN re-tagging, MTU, floods, offload resolution, capture and mirror copies,
// IGMP/MLD snooping's dispatch, ip_learn's copies, transmit) on net_ring ports: what guests
// and the wire control (frame bytes, mbuf chains, offload metadata) against what an
// operator configures (VLAN access/trunk/native, MTU, link up or down, learn limits,
// mac=/lock=1, peer offloads, captures, guards, ip_learn=1, mrouter=1, mirror sessions, a
// group table). Built with ASan+UBSan (deploy/fuzz.sh forwarder); one EAL per process
// (--no-huge --no-pci), ports and pools made once and reset between inputs. The fuzzer
// plays the control thread between bursts: it applies learn requests (learn limits; lock=1
// armed, the MAC a worker locked a port to published), links going up and down, flushes
// and ageing; it drains the snoop queue and, with the control loop on, has McastSnooping
// and IpLearning read the copies and publishes their group table and bindings as the
// bridge does (bridge_snooping.cc).
//
// Besides memory errors and undefined behaviour it aborts on a broken promise:
//  - every mbuf back in its pool after each input (the frames', capture, mirror and snoop
//    pools);
//  - each burst's frames counted received on their port (packets and bytes); a lock=1
//    port's learned only from the MAC it locked to;
//  - what a port's ring took is what its transmit counters say (packets and bytes);
//  - nothing sent to the port it came from, nor to a port whose link is down; without a
//    flush interval nothing waits after a burst;
//  - every sent frame a sane mbuf chain, within the port's MTU unless left to the port
//    to segment (TSO), and tagged on a trunk port only with a VLAN of its trunk;
//  - an analyser (a mirror session's destination, in no VLAN) is sent copies only: each
//    frame it gets is one its sessions' ports received or were sent (the session's tag
//    pushed), and once nothing waits, what it was sent or dropped is what they copied for
//    it (their rx and tx counts) and what they did not copy while it was down; its own
//    frames are counted mirror_port and go nowhere (no port, no learning, no snooping);
//  - while the mirror pool has the buffers, a session copies every frame its ports
//    receive (but an empty one, or one too short for its tag);
//  - a frame to a group address other than broadcast, under a group table, reaches only
//    ports of its VLAN, and of those: a snooped group's data its members and the VLAN's
//    router ports, a report the router ports (a query, or an unsnooped group, any);
//  - every snoop copy names a port and a kind: an IGMP/MLD message (to a group, in a VLAN
//    of its port, read as such by the worker's rules), or a claim or DHCP reply of an
//    ip_learn=1 port (the reply from another port's device, or a mirror copy sent to an
//    analyser).
//
// Input (every field a byte unless said; an input that ends early ends the run):
//   global: [ports: 2 + b % 7, bit 7: wait for fuller tx bursts] [static MACs: b & 3,
//     mirror sessions: bits 2-3, bit 4 a group table (snooping on), bit 5 the control loop
//     (snooped copies applied and published)]
//     each static: [MAC index | VLAN index << 4] [port]
//     each mirror session: [rx ports, bitmask] [tx ports, bitmask] [analyser port in bits
//       0-3 (% ports) | tag pushed in bits 4-7: 0 none, else port VLAN index + 1] (kept as
//       the bridge would: no analyser mirrored, none mirrored to itself, no empty session)
//     with a group table: [groups: b & 7, router VLANs: bits 3-4]
//       each group: [group MAC index in bits 0-2 | VLAN index << 4] [members, bitmask]
//       each router VLAN: [VLAN index in bits 0-3] [router ports, bitmask]
//   each port: [VLAN mode: b & 3 = none/access/trunk/trunk+native, access/native VLAN
//     index in bits 2-4 / 5-7] [trunk VLAN set, bitmask in bits 0-5; bit 6 ip_learn=1
//     (with lock=1 unless mac= or lock=1), bit 7 mrouter=1] [MTU index] [flags: up, rx
//     offloads, csum, tso4, tso6, memif chain recount, lock=1, mac=] [learn limit in
//     bits 0-2, mac= set in bits 3-7] [capture: bit 0 rx, bit 1 tx; guards: bit 2 police_pps,
//     bit 3 police_bps, bit 4 storm_broadcast, bit 5 storm_unknown, bit 6 bpdu_guard,
//     bit 7 ip=10.0.0.0/8,fe80::/64]
//   then bursts: [in port] [frames: 1 + b % 64] [control: bit 0 toggle a port's link,
//     bit 1 flush its MACs, bit 2 a second passes, bit 3 age, port in bits 4-7]
//     each frame: [flags: 0 MACs and tags from the tables below, 1 outer tag, 2 inner
//     tag, 3 inner TPID 0x88a8, 4 partial checksum, 5 super-frame, 6 checksum good, 7
//     bad] [dst MAC index | src index << 4] [outer VLAN index | inner << 4] [segment size:
//     0 one buffer, else bytes] [length, 2 bytes LE] [TSO segment size, 2 bytes LE]
//     then `length` bytes of frame (after the table header when bit 0).
// IpLearning logs every binding: stderr is /dev/null while it runs, unless
// FORWARDER_FUZZ_VERBOSE is set (to read a crash there, run the input with it).
#include <fcntl.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ports/port_spec.h"
#include "switch/control/address_claim.h"
#include "switch/control/dhcp_message.h"
#include "switch/control/ip_learning.h"
#include "switch/control/mcast_message.h"
#include "switch/control/mcast_snooping.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/forwarder.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/mac_key.h"
#include "switch/datapath/mcast_frame.h"
#include "switch/datapath/snoop_queue.h"
#include "tests/integration/ring_port.h"

namespace {

using hvswitch::Datapath;
using hvswitch::McastFrame;
using hvswitch::McastTable;
using hvswitch::MirrorSession;
using hvswitch::PortCounter;
using hvswitch::PortSpec;
using hvswitch::PortTable;
using hvswitch::PortTotals;

constexpr uint16_t kPorts = 8;
constexpr uint32_t kFdbCapacity = 64;  // small, so that the table fills
constexpr uint16_t kMaxChainSegments = 40;
constexpr std::array<uint16_t, 6> kPortVlans = {1, 2, 10, 20, 100, 4094};
constexpr std::array<uint16_t, 16> kFrameVlans = {0,  1,  2,    10,   20, 100, 4094, 4095,
                                                  10, 20, 1, 2, 100, 5,  0,    4000};
constexpr std::array<uint16_t, 8> kMtus = {68, 100, 576, 1500, 1500, 1400, 9000, 200};
// First octet in the low byte (the FDB key layout): unicast, then group and zero sources;
// the groups are those the captured IGMPv3 and MLDv2 joins join (239.1.2.3, ff05::1:3).
constexpr std::array<uint64_t, 16> kMacs = {
    0x0100000002, 0x0200000002, 0x0300000002, 0x0400000002, 0x0500000002, 0x0600000002,
    0x0700000002, 0x0800000002, 0x010000000a, 0x02000000ae, 0xffffffffffff, 0x0302015e0001,
    0x030001003333, 0x000000000000, 0x0000c28001 /* a BPDU's */, 0x0a00000002};
// A group table's groups: kMacs' two, the captures' others (232.1.1.1, 239.4.5.6,
// ff05::4:5:6), 239.255.255.250, a solicited-node group (ff02::1:ff00:1) and ff02::fb.
constexpr std::array<uint64_t, 8> kGroupMacs = {
    kMacs[11],      kMacs[12],      0x0101015e0001, 0x0605045e0001,
    0x060005003333, 0xfaff7f5e0001, 0x010000ff3333, 0xfb0000003333};
// Snooping's ageing, in seconds of the fuzzer's clock: a few control bytes reach it.
constexpr uint32_t kMcastAging = 3;

struct Process {
  rte_mempool* pool = nullptr;
  rte_mempool* capture_pool = nullptr;
  rte_mempool* mirror_pool = nullptr;
  rte_ring* capture_ring = nullptr;
  std::unique_ptr<hvswitch::SnoopQueue> snoop;
  rte_mempool* snoop_pool = nullptr;  // the queue's own, found by its name
  int devnull = -1;
  std::unique_ptr<hvswitch::Fdb> fdb;
  std::unique_ptr<hvswitch::LearnQueue> learn;
  std::vector<std::unique_ptr<hvswitch::testing::RingPort>> ports;
};
Process* g = nullptr;
// FORWARDER_FUZZ_VERBOSE=1: each input's port set-up and frames on stderr, to read a
// crashing input (build-fuzz/tests/forwarder_fuzz CRASH-FILE).
bool verbose = false;

std::string Hex(const rte_mbuf* m, uint32_t max = 40) {
  std::string out;
  char byte[4];
  for (uint32_t i = 0; i < std::min<uint32_t>(m->data_len, max); ++i) {
    std::snprintf(byte, sizeof(byte), "%02x", rte_pktmbuf_mtod(m, const uint8_t*)[i]);
    out += byte;
  }
  return out;
}

[[noreturn]] void Broken(const char* what, uint64_t a = 0, uint64_t b = 0) {
  std::fprintf(stderr, "forwarder_fuzz: broken promise: %s (%llu, %llu)\n", what,
               static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  std::abort();
}

void Require(bool ok, const char* what, uint64_t a = 0, uint64_t b = 0) {
  if (!ok) Broken(what, a, b);
}

// IpLearning logs every binding (the daemon's journal): most of the output here.
class QuietLog {
 public:
  QuietLog() : saved_(verbose ? -1 : dup(STDERR_FILENO)) {
    if (saved_ >= 0) dup2(g->devnull, STDERR_FILENO);
  }
  ~QuietLog() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
  }
  QuietLog(const QuietLog&) = delete;
  QuietLog& operator=(const QuietLog&) = delete;

 private:
  int saved_;
};

class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  bool empty() const { return left_ == 0; }
  uint8_t Byte() {
    if (left_ == 0) return 0;
    --left_;
    return *p_++;
  }
  uint16_t U16() { return static_cast<uint16_t>(Byte() | (Byte() << 8)); }
  // Up to n bytes; fewer when the input ends.
  std::pair<const uint8_t*, size_t> Take(size_t n) {
    n = std::min(n, left_);
    const uint8_t* at = p_;
    p_ += n;
    left_ -= n;
    return {at, n};
  }

 private:
  const uint8_t* p_;
  size_t left_;
};

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// A frame's bytes, whatever its segments.
std::string Bytes(const rte_mbuf* m) {
  std::string out(m->pkt_len, '\0');
  const void* at = rte_pktmbuf_read(m, 0, m->pkt_len, out.data());
  Require(at != nullptr, "a frame's bytes can be read", m->pkt_len);
  if (at != out.data()) std::memcpy(out.data(), at, m->pkt_len);
  return out;
}

// 802.1Q, 802.1ad and the old QinQ TPID: the tags hvswitch sees stacked.
bool IsTag(const uint8_t* type) {
  const unsigned tpid = type[0] << 8 | type[1];
  return tpid == 0x8100 || tpid == 0x88a8 || tpid == 0x9100;
}

bool Tagged(const uint8_t* eth, size_t len) { return len >= 18 && eth[12] == 0x81 && !eth[13]; }

uint64_t Bit(McastFrame kind) { return uint64_t{1} << static_cast<unsigned>(kind); }

// What a frame to a group address is to the worker (Forwarder::DispatchGroup): read from
// its first segment (`len` bytes), behind one 802.1Q tag and no second tag.
McastFrame WorkerKind(const uint8_t* eth, uint32_t len) {
  const uint32_t header = Tagged(eth, len) ? 18 : 14;
  if (len <= header || (header == 18 && IsTag(eth + 16))) return McastFrame::kData;
  uint16_t ether_type;
  std::memcpy(&ether_type, eth + header - 2, 2);
  return hvswitch::ClassifyMcastFrame(ether_type, eth + header, len - header);
}

// A frame as it crosses ports that tag it or not: its MACs, then what follows its tag.
std::string UntaggedView(const std::string& frame) {
  if (!Tagged(U8(frame), frame.size())) return frame;
  return frame.substr(0, 12) + frame.substr(16);
}

// A mirror session's copy of `frame`: its tag, if any, pushed after the MACs.
std::string MirrorCopy(const std::string& frame, uint16_t vlan) {
  if (vlan == 0) return frame;
  const char tag[4] = {'\x81', '\0', static_cast<char>(vlan >> 8), static_cast<char>(vlan)};
  std::string copy = frame;
  copy.insert(12, tag, 4);
  return copy;
}

struct PortConfig {
  PortSpec spec;
  bool up = false, rx_offload = false, csum = false, tso4 = false, tso6 = false;
  bool recount = false, capture_rx = false, capture_tx = false;
};

PortConfig ReadPort(Input& in) {
  PortConfig c;
  const uint8_t mode = in.Byte(), trunk = in.Byte(), mtu = in.Byte(), flags = in.Byte(),
                limits = in.Byte(), capture = in.Byte();
  switch (mode & 3) {
    case 1:
      c.spec.access_vlan = kPortVlans[((mode >> 2) & 7) % kPortVlans.size()];
      break;
    case 3:
      c.spec.native_vlan = kPortVlans[(mode >> 5) % kPortVlans.size()];
      [[fallthrough]];
    case 2:
      for (size_t i = 0; i < kPortVlans.size(); ++i) {
        if ((trunk >> i) & 1) c.spec.trunk_vlans.push_back(kPortVlans[i]);
      }
      if (c.spec.trunk_vlans.empty()) c.spec.trunk_vlans.push_back(kPortVlans[0]);
      std::sort(c.spec.trunk_vlans.begin(), c.spec.trunk_vlans.end());
      c.spec.trunk_vlans.erase(std::unique(c.spec.trunk_vlans.begin(), c.spec.trunk_vlans.end()),
                               c.spec.trunk_vlans.end());
      break;
  }
  c.spec.mtu = kMtus[mtu % kMtus.size()];
  c.up = flags & 1;
  c.rx_offload = flags & 2;
  c.csum = flags & 4;
  c.tso4 = flags & 8;
  c.tso6 = flags & 16;
  c.recount = flags & 32;
  c.spec.lock_mac = (flags & 64) && !(flags & 128);
  if (flags & 128) {
    for (int i = 0; i < 5; ++i) {
      if ((limits >> (3 + i)) & 1) c.spec.allowed_macs.push_back(kMacs[i]);
    }
  }
  c.spec.learn_limit = limits & 7;
  c.capture_rx = capture & 1;
  c.capture_tx = capture & 2;
  // Guardrails at rates of a frame (or byte) a second: their meters run dry at once.
  hvswitch::GuardSpec& g = c.spec.guards;
  if (capture & 4) {
    g.police_pps = 1;
    g.police_pps_burst = 1 + (limits & 63);
  }
  if (capture & 8) {
    g.police_bps = 8;
    g.police_bps_burst = 64 + 97 * (mtu & 127);
  }
  if (capture & 16) g.storm[static_cast<size_t>(hvswitch::StormClass::kBroadcast)] = 1;
  if (capture & 32) g.storm[static_cast<size_t>(hvswitch::StormClass::kUnknown)] = 1;
  g.bpdu_guard = capture & 64;
  if (capture & 128) {  // IPv4 from 10.0.0.0/8 and IPv6 from fe80::/64 only
    hvswitch::IpPrefix v4, v6;
    v4.addr[0] = 10;
    v4.length = 8;
    v6.v6 = true;
    v6.addr[0] = 0xfe;
    v6.addr[1] = 0x80;
    v6.length = 64;
    g.ips = {v4, v6};
  }
  // ip_learn=1 needs the port's MAC fixed: a spec without mac= gets lock=1.
  g.ip_learn = trunk & 64;
  if (g.ip_learn && c.spec.allowed_macs.empty()) c.spec.lock_mac = true;
  c.spec.mrouter = trunk & 128;
  return c;
}

// The frame's bytes split into segments of `piece` bytes (at most kMaxChainSegments).
rte_mbuf* ToChain(const std::vector<uint8_t>& bytes, uint16_t piece) {
  const uint16_t room =
      static_cast<uint16_t>(rte_pktmbuf_data_room_size(g->pool) - RTE_PKTMBUF_HEADROOM);
  piece = std::min<uint16_t>(piece == 0 ? room : piece, room);
  piece = std::max<size_t>(piece, (bytes.size() + kMaxChainSegments - 1) / kMaxChainSegments);
  rte_mbuf* head = rte_pktmbuf_alloc(g->pool);
  if (head == nullptr) return nullptr;
  size_t off = 0;
  rte_mbuf* seg = head;
  do {
    const uint16_t len = static_cast<uint16_t>(std::min<size_t>(piece, bytes.size() - off));
    if (seg != head) {
      seg = rte_pktmbuf_alloc(g->pool);
      if (seg == nullptr || rte_pktmbuf_chain(head, seg) != 0) {
        rte_pktmbuf_free(seg);
        rte_pktmbuf_free(head);
        return nullptr;
      }
    }
    char* to = rte_pktmbuf_append(head, len);  // appends to the last segment
    Require(to != nullptr, "room for a segment");
    if (len != 0) std::memcpy(to, bytes.data() + off, len);
    off += len;
    seg = nullptr;
  } while (off < bytes.size());
  return head;
}

// A received frame as it came: its bytes, and those of its first segment (what the worker
// reads a group frame's kind from).
struct Received {
  std::string bytes;
  uint32_t first_len = 0;
};

// One received frame as a PMD would deliver it from `port` (its ethdev `eth_port`); null
// when the input is over or the pool is empty.
rte_mbuf* ReadFrame(Input& in, const PortConfig& port, uint16_t eth_port, Received& received) {
  if (in.empty()) return nullptr;
  const uint8_t flags = in.Byte(), macs = in.Byte(), vlans = in.Byte(), piece = in.Byte();
  const uint16_t length = in.U16(), tso_segsz = in.U16();
  std::vector<uint8_t> bytes;
  if (flags & 1) {
    for (uint64_t mac : {kMacs[macs & 15], kMacs[macs >> 4]}) {
      for (int i = 0; i < 6; ++i) bytes.push_back(static_cast<uint8_t>(mac >> (8 * i)));
    }
    auto tag = [&](uint16_t tpid, uint16_t vlan) {
      for (uint16_t v : {tpid, vlan}) {
        bytes.push_back(static_cast<uint8_t>(v >> 8));
        bytes.push_back(static_cast<uint8_t>(v));
      }
    };
    if (flags & 2) tag(0x8100, kFrameVlans[vlans & 15]);
    if (flags & 4) tag(flags & 8 ? 0x88a8 : 0x8100, kFrameVlans[vlans >> 4]);
  }
  const auto [data, n] = in.Take(length);
  bytes.insert(bytes.end(), data, data + n);
  rte_mbuf* m = ToChain(bytes, piece);
  if (m == nullptr) return nullptr;
  m->port = eth_port;
  received.bytes.assign(bytes.begin(), bytes.end());
  received.first_len = m->data_len;
  // A PMD reports offload requests only where the application enabled them.
  if (port.rx_offload) {
    if (flags & 16) m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_NONE;
    if (flags & 32) {
      m->ol_flags |= RTE_MBUF_F_RX_LRO;
      m->tso_segsz = tso_segsz;
    }
  }
  if (!(flags & 16)) {
    if (flags & 64) m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
    if (flags & 128) m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_BAD;
  }
  // DPDK 22.11's memif zero-copy receive: a chain's pkt_len is its first segment's.
  if (port.recount) m->pkt_len = m->data_len;
  return m;
}

uint64_t ChainLength(const rte_mbuf* m) {
  uint64_t len = 0;
  for (; m != nullptr; m = m->next) len += m->data_len;
  return len;
}

PortTotals Totals(const hvswitch::WorkerCounters& counters, uint16_t p) {
  PortTotals t;
  t.AddFrom(counters.ports[p]);
  return t;
}

// A burst's group frames by their untagged view: the kinds (bits of McastFrame) the worker
// saw them as.
using GroupKinds = std::unordered_map<std::string, uint64_t>;

struct Run {
  uint16_t nb_ports = 0;
  std::array<PortConfig, kPorts> config;
  std::vector<PortSpec> specs;
  Datapath datapath;
  std::unique_ptr<PortTable> table = std::make_unique<PortTable>();
  std::unique_ptr<hvswitch::WorkerCounters> counters{new hvswitch::WorkerCounters};
  std::unique_ptr<hvswitch::Forwarder> forwarder;
  bool waits = false;  // frames may wait for fuller bursts (flush_cycles)
  uint32_t now = 1;
  std::vector<uint64_t> statics;
  // Mirror sessions as the bridge keeps them, and their analysers.
  std::array<MirrorSession, hvswitch::kMaxMirrors> mirrors{};
  uint64_t analysers = 0;
  // Per analyser: the copies it may still be sent (bytes: how many), and the frames its
  // sessions did not copy because it was down (counted link_down there).
  std::array<std::unordered_map<std::string, uint32_t>, kPorts> copies;
  std::array<uint64_t, kPorts> not_copied{};
  // The group table the workers have (null: snooping off); with the control loop, the
  // snooping state it is published from and the bindings ip_learn=1 ports learned.
  std::unique_ptr<McastTable> mcast;
  std::unique_ptr<hvswitch::McastSnooping> snooping;
  hvswitch::IpLearning learning;
  bool loop = false;
  uint32_t aged_at = 1;

  bool Analyser(uint16_t p) const { return (analysers >> p) & 1; }

  void SetMask(std::atomic<uint64_t>& mask, bool PortConfig::*field) {
    uint64_t bits = 0;
    for (uint16_t p = 0; p < nb_ports; ++p) bits |= uint64_t{config[p].*field} << p;
    mask.store(bits);
  }

  std::array<PortTotals, kPorts> AllTotals() const {
    std::array<PortTotals, kPorts> totals;
    for (uint16_t p = 0; p < nb_ports; ++p) totals[p] = Totals(*counters, p);
    return totals;
  }

  // The sessions copying what port p receives (rx) or is sent, as session bits.
  uint8_t Mirrored(uint16_t p, bool rx) const {
    uint8_t sessions = 0;
    for (size_t s = 0; s < mirrors.size(); ++s) {
      if ((((rx ? mirrors[s].rx : mirrors[s].tx) >> p) & 1) != 0) sessions |= 1u << s;
    }
    return sessions;
  }

  // What `sessions` copy of `frames` for their analysers: each frame (but an empty one, or
  // one too short for the tag pushed) expected there while it is up, else counted not
  // copied. Returns how many each session copies when its pool has the buffers.
  std::array<uint64_t, hvswitch::kMaxMirrors> ExpectCopies(
      uint8_t sessions, const std::vector<const std::string*>& frames) {
    std::array<uint64_t, hvswitch::kMaxMirrors> copyable{};
    for (size_t s = 0; s < mirrors.size(); ++s) {
      if (!((sessions >> s) & 1)) continue;
      const MirrorSession& m = mirrors[s];
      if (!config[m.to].up) {
        not_copied[m.to] += frames.size();
        continue;
      }
      for (const std::string* f : frames) {
        // rte_pktmbuf_copy takes no empty frame, rte_vlan_insert none shorter than its MACs.
        if (f->empty() || (m.vlan != 0 && f->size() < 12)) continue;
        ++copies[m.to][MirrorCopy(*f, m.vlan)];
        ++copyable[s];
      }
    }
    return copyable;
  }

  // The copies of a burst's `frames` its port's rx `sessions` made since `before` (their
  // rx counts) are all ExpectCopies said, where the mirror pool had the buffers for them
  // (`free` before the burst: its rx copies are the first the pool gives). A frame the
  // worker cannot copy must cost the analyser that frame only, not the rest of the burst.
  void CheckRxCopies(uint8_t sessions, const std::vector<Received>& frames, unsigned free,
                     const std::array<uint64_t, hvswitch::kMaxMirrors>& before,
                     const std::array<uint64_t, hvswitch::kMaxMirrors>& copyable) const {
    const uint32_t room = rte_pktmbuf_data_room_size(g->mirror_pool) - RTE_PKTMBUF_HEADROOM;
    uint64_t buffers = 0;
    for (const Received& f : frames) buffers += 1 + f.bytes.size() / room;
    if (buffers * static_cast<unsigned>(__builtin_popcount(sessions)) > free) return;
    for (size_t s = 0; s < mirrors.size(); ++s) {
      if (!((sessions >> s) & 1)) continue;
      const uint64_t copied = counters->mirrors[s].rx.Read() - before[s];
      Require(copied == copyable[s], "a session copies every frame its ports receive", copied,
              copyable[s]);
    }
  }

  // Every frame port p transmitted since `before`: counted exactly, sane, and where it may
  // go. Left to the caller.
  std::vector<rte_mbuf*> TakeSent(uint16_t p, const PortTotals& before, uint16_t in_port,
                                  bool check_hairpin) {
    const PortTotals after = Totals(*counters, p);
    std::vector<rte_mbuf*> sent = g->ports[p]->TakeSent();
    uint64_t bytes = 0;
    for (rte_mbuf* m : sent) {
      if (verbose) {
        std::fprintf(stderr, "  sent to port %u: len %u %s\n", p, m->pkt_len, Hex(m).c_str());
      }
      rte_mbuf_sanity_check(m, 1);  // panics on a broken chain or reference count
      const uint64_t len = ChainLength(m);
      Require(len == m->pkt_len, "pkt_len is the sum of the segments", len, m->pkt_len);
      bytes += m->pkt_len;
      const uint8_t* eth = rte_pktmbuf_mtod(m, const uint8_t*);
      if (Analyser(p)) {
        // A copy, as the frame came (a runt too): within the MTU over its own tags (two
        // at most are counted) and the one pushed.
        uint32_t header = 14;
        while (header < 22 && m->data_len >= header + 4 && IsTag(eth + header - 2)) header += 4;
        Require(m->pkt_len <= header + config[p].spec.mtu, "a copy within the analyser's MTU",
                m->pkt_len, config[p].spec.mtu);
        continue;
      }
      Require(m->pkt_len >= 14, "a sent frame has an Ethernet header", m->pkt_len);
      const bool tagged = Tagged(eth, m->data_len);
      const uint32_t header = tagged ? 18 : 14;
      if (!(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)) {
        Require(m->pkt_len - header <= config[p].spec.mtu, "within the port's MTU",
                m->pkt_len - header, config[p].spec.mtu);
      }
      const std::vector<uint16_t>& trunk = config[p].spec.trunk_vlans;
      if (tagged && !trunk.empty()) {
        const uint16_t vlan = static_cast<uint16_t>(((eth[14] << 8) | eth[15]) & 0xfff);
        Require(std::binary_search(trunk.begin(), trunk.end(), vlan),
                "a trunk port sends only its VLANs tagged", p, vlan);
      }
    }
    const uint64_t tx_packets = after[PortCounter::kTxPackets] - before[PortCounter::kTxPackets];
    const uint64_t tx_bytes = after[PortCounter::kTxBytes] - before[PortCounter::kTxBytes];
    Require(sent.size() == tx_packets, "tx_packets counts what the port took", sent.size(),
            tx_packets);
    Require(bytes == tx_bytes, "tx_bytes counts what the port took", bytes, tx_bytes);
    Require(sent.empty() || config[p].up, "nothing sent to a port whose link is down", p);
    Require(sent.empty() || !check_hairpin || p != in_port,
            "nothing sent back to the port it came from", p);
    return sent;
  }

  // A frame (`f`) to a group address sent to port p under the group table `mcast`: to a
  // port of its VLAN that the worker's rules give it, by what `kinds` says it was.
  void CheckGroup(uint16_t p, const std::string& f, const McastTable& mcast,
                  const GroupKinds& kinds) const {
    const uint8_t* eth = U8(f);
    const uint64_t mac = hvswitch::MacKey(0, eth);
    if (!hvswitch::IsGroupKey(mac) || mac == hvswitch::kBroadcastKey) return;
    const auto it = kinds.find(UntaggedView(f));
    if (it == kinds.end()) return;  // changed on the way: its offload requests settled
    const uint16_t vlan = Tagged(eth, f.size())
                              ? static_cast<uint16_t>(((eth[14] << 8) | eth[15]) & 0xfff)
                              : table->vlans.ports[p].native_vlan;
    const uint64_t vlan_ports = vlan < hvswitch::kVlans ? table->vlans.members[vlan] : 0;
    Require((vlan_ports >> p) & 1, "a group's frame goes to ports of its VLAN only", p, vlan);
    uint64_t members = 0;
    const bool snooped = mcast.Find(uint64_t{vlan} << 48 | mac, members);
    const uint64_t routers = mcast.Routers(vlan);
    uint64_t allowed = 0;
    if (it->second & Bit(McastFrame::kData)) allowed |= snooped ? members | routers : vlan_ports;
    if (it->second & Bit(McastFrame::kQuery)) allowed |= vlan_ports;
    if (it->second & Bit(McastFrame::kReport)) allowed |= routers;
    Require((allowed >> p) & 1,
            snooped ? "a snooped group's frame goes to its members and routers only"
                    : "a report goes to the router ports only",
            p, vlan);
  }

  // Once nothing waits: what each analyser was sent or dropped is what its sessions
  // copied for it, and the frames they did not copy while it was down.
  void CheckAnalysers() const {
    for (uint16_t a = 0; a < nb_ports; ++a) {
      if (!Analyser(a)) continue;
      uint64_t copied = not_copied[a];
      for (size_t s = 0; s < mirrors.size(); ++s) {
        if (!mirrors[s].active() || mirrors[s].to != a) continue;
        copied += counters->mirrors[s].rx.Read() + counters->mirrors[s].tx.Read();
      }
      const PortTotals t = Totals(*counters, a);
      const uint64_t out = t[PortCounter::kTxPackets] + t[hvswitch::TxDrop::kMtu] +
                           t[hvswitch::TxDrop::kQueueFull] + t[hvswitch::TxDrop::kLinkDown];
      Require(copied == out, "an analyser is sent (or drops) its sessions' copies only",
              copied, out);
    }
  }

  // Everything the ports transmitted since `before` (TakeSent); with `kinds`, the group
  // frames checked against the group table; what mirrored ports were sent expected as
  // copies, and the analysers' frames found among the copies. Freed.
  void TakeAll(const std::array<PortTotals, kPorts>& before, uint16_t in_port,
               bool check_hairpin, const GroupKinds* kinds) {
    std::array<std::vector<rte_mbuf*>, kPorts> sent;
    for (uint16_t p = 0; p < nb_ports; ++p) {
      sent[p] = TakeSent(p, before[p], in_port, check_hairpin);
    }
    for (uint16_t p = 0; p < nb_ports; ++p) {
      const uint8_t sessions = Mirrored(p, false);
      if (sent[p].empty() || Analyser(p) || (sessions == 0 && kinds == nullptr)) continue;
      std::vector<std::string> frames;
      for (const rte_mbuf* m : sent[p]) frames.push_back(Bytes(m));
      if (kinds != nullptr) {
        for (const std::string& f : frames) CheckGroup(p, f, *mcast, *kinds);
      }
      std::vector<const std::string*> taken;
      for (const std::string& f : frames) taken.push_back(&f);
      (void)ExpectCopies(sessions, taken);
    }
    for (uint16_t a = 0; a < nb_ports; ++a) {
      if (!Analyser(a)) continue;
      for (const rte_mbuf* m : sent[a]) {
        const auto it = copies[a].find(Bytes(m));
        Require(it != copies[a].end(), "an analyser is sent copies only", a, m->pkt_len);
        if (--it->second == 0) copies[a].erase(it);
      }
    }
    for (std::vector<rte_mbuf*>& frames : sent) {
      for (rte_mbuf* m : frames) rte_pktmbuf_free(m);
    }
    if (!forwarder->HasPending()) CheckAnalysers();
  }

  // What waits, sent as a worker does before it lets go of a table (Worker::LetGoOfTable),
  // and taken. Its round flushed what expired first, reading the links anew: what waits
  // goes by the links of now, not of the last burst.
  void SendWaiting() {
    const std::array<PortTotals, kPorts> before = AllTotals();
    forwarder->FlushExpired(rte_rdtsc());
    forwarder->FlushAll();
    TakeAll(before, 0, false, nullptr);
  }

  void DrainCaptures() {
    void* copies[64];
    unsigned n;
    while ((n = rte_ring_dequeue_burst(g->capture_ring, copies, 64, nullptr)) != 0) {
      rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(copies), n);
    }
  }

  // The control thread's share (Learner::Poll): the MAC a worker locked a lock=1 port to
  // published as the port's, learn requests applied with the limits and port security,
  // ports at their limit published.
  void ApplyLearning() {
    for (uint16_t p = 0; p < nb_ports; ++p) {
      if (config[p].spec.lock_mac) datapath.port_macs[p].PublishClaim();
    }
    hvswitch::LearnRequest requests[256];
    unsigned n;
    while ((n = g->learn->Drain(requests, 256)) != 0) {
      for (unsigned i = 0; i < n; ++i) {
        const uint16_t p = static_cast<uint16_t>(requests[i].port);
        Require(p < nb_ports, "learn requests name a port", p);
        Require(!Analyser(p), "an analyser's frames are not learned", p);
        const uint64_t mac = hvswitch::KeyMac(requests[i].key);
        hvswitch::PortMacs& allowed = datapath.port_macs[p];
        // Claimed by a worker after the look above, before it asked.
        if (config[p].spec.lock_mac) allowed.PublishClaim();
        const uint32_t count = allowed.count.load();
        Require(!config[p].spec.lock_mac || allowed.Allows(mac, count),
                "a lock=1 port learns only the MAC it is locked to", p);
        if (count != 0 && !allowed.Allows(mac, count)) continue;
        g->fdb->Learn(requests[i].key, p, now, config[p].spec.LearnLimit());
      }
    }
    uint64_t blocked = 0;
    for (uint16_t p = 0; p < nb_ports; ++p) {
      const uint32_t limit = config[p].spec.LearnLimit();
      if (limit != 0 && g->fdb->learned(p) >= limit) blocked |= uint64_t{1} << p;
    }
    datapath.learn_blocked_mask.store(blocked);
  }

  // The control thread's publications: the group table, and a port table with the learned
  // bindings (the worker sends what waited for the old one first, as it does).
  void Publish(bool groups, bool bindings) {
    if (groups) {
      std::unique_ptr<McastTable> next = snooping->Table();
      datapath.mcast.store(next.get());
      mcast = std::move(next);
    }
    if (!bindings) return;
    auto next = std::make_unique<PortTable>(*table);
    next->Configure(hvswitch::SpecSlots(specs));
    learning.WriteTo(*next);
    next->Seal();
    datapath.table.store(next.get());
    SendWaiting();
    forwarder->Use(next.get());
    table = std::move(next);
  }

  // An IGMP/MLD copy from `port` in `vlan`. True when the group table changes.
  bool SnoopedMcast(const std::string& f, uint16_t port, uint16_t vlan) {
    Require(mcast != nullptr, "IGMP/MLD copied only under a group table", port);
    const uint8_t* eth = U8(f);
    const uint64_t dst = f.size() >= 14 ? hvswitch::MacKey(0, eth) : 0;
    Require(hvswitch::IsGroupKey(dst) && dst != hvswitch::kBroadcastKey,
            "IGMP/MLD copied only when sent to a group", port);
    Require(vlan < hvswitch::kVlans && ((table->vlans.members[vlan] >> port) & 1),
            "IGMP/MLD copied in a VLAN of its port", port, vlan);
    const uint32_t len = static_cast<uint32_t>(f.size());
    Require(WorkerKind(eth, len) != McastFrame::kData, "copied as IGMP/MLD only if it is", port);
    if (!loop || snooping == nullptr) {
      (void)hvswitch::ParseMcastFrame(eth, len);
      return false;
    }
    return snooping->Apply(eth, len, port, vlan, now);
  }

  // A DHCP reply sent to `port`, from ethdev `from`. True when the bindings change.
  bool SnoopedDhcp(const std::string& f, uint16_t port, uint16_t from,
                   const hvswitch::LearningPorts& ports) {
    Require(config[port].spec.guards.ip_learn, "DHCP copied only for ip_learn=1 ports", port);
    bool other = false;
    for (uint16_t q = 0; q < nb_ports; ++q) other |= q != port && g->ports[q]->eth_port() == from;
    Require(other || (Analyser(port) && from == RTE_MBUF_PORT_INVALID),
            "a DHCP reply copied with the device it came in on", port, from);
    const uint8_t* eth = U8(f);
    const uint32_t l2 = Tagged(eth, f.size()) ? 18 : 14;
    uint16_t ether_type = 0;
    if (f.size() >= l2) std::memcpy(&ether_type, eth + l2 - 2, 2);
    Require(f.size() >= l2 && hvswitch::IsDhcpReply(ether_type, eth + l2,
                                                     static_cast<uint32_t>(f.size() - l2)),
            "DHCP copied only if it is a server's", port);
    const uint32_t len = static_cast<uint32_t>(f.size());
    if (!loop) {
      (void)hvswitch::ParseDhcpFrame(eth, len);
      return false;
    }
    QuietLog quiet;
    return learning.ApplyDhcp(eth, len, port, from, now, ports);
  }

  // A claim `port` sent. True when the bindings change.
  bool SnoopedClaim(const std::string& f, uint16_t port, const hvswitch::LearningPorts& ports) {
    Require(config[port].spec.guards.ip_learn, "claims copied only from ip_learn=1 ports", port);
    const uint32_t len = static_cast<uint32_t>(f.size());
    if (!loop) {
      (void)hvswitch::ParseAddressClaim(U8(f), len);
      return false;
    }
    QuietLog quiet;
    return learning.ApplyClaim(U8(f), len, port, now, ports);
  }

  // The snoop queue drained as the bridge does (DrainSnooped): every copy checked, read
  // and, with the control loop, applied; snooping and bindings aged by the clock; what
  // changed published. Copies freed.
  void DrainSnooped() {
    bool groups = false, bindings = false;
    const std::vector<const PortSpec*> slots = hvswitch::SpecSlots(specs);
    const hvswitch::LearningPorts ports{slots, *table, datapath};
    rte_mbuf* copied[64];
    for (unsigned n; (n = g->snoop->Drain(copied, 64)) != 0;) {
      for (unsigned i = 0; i < n; ++i) {
        rte_mbuf* m = copied[i];
        const std::string f = Bytes(m);
        const uint16_t port = hvswitch::SnoopedPort(m);
        Require(port < nb_ports, "a snoop copy names a port", port);
        Require(!Analyser(port) || hvswitch::SnoopedKind(m) == hvswitch::SnoopKind::kDhcp,
                "an analyser's frames are not snooped", port);
        if (verbose) {
          std::fprintf(stderr, "  snooped (kind %u) for port %u: %s\n",
                       static_cast<unsigned>(hvswitch::SnoopedKind(m)), port, Hex(m).c_str());
        }
        switch (hvswitch::SnoopedKind(m)) {
          case hvswitch::SnoopKind::kMcast:
            groups |= SnoopedMcast(f, port, hvswitch::SnoopedVlan(m));
            break;
          case hvswitch::SnoopKind::kDhcp:
            bindings |= SnoopedDhcp(f, port, hvswitch::SnoopedFromEthdev(m), ports);
            break;
          case hvswitch::SnoopKind::kClaim:
            bindings |= SnoopedClaim(f, port, ports);
            break;
          default:
            Broken("a snoop copy of a kind there is not",
                   static_cast<uint64_t>(hvswitch::SnoopedKind(m)));
        }
        rte_pktmbuf_free(m);
      }
    }
    if (!loop) return;
    if (now != aged_at) {
      aged_at = now;
      if (snooping != nullptr) groups |= snooping->Age(now);
      bindings |= learning.Age(now);
    }
    Publish(groups, bindings);
  }

  void Control(uint8_t bits) {
    const uint16_t p = static_cast<uint16_t>((bits >> 4) % nb_ports);
    if (bits & 1) {
      config[p].up = !config[p].up;
      SetMask(datapath.up_mask, &PortConfig::up);
      if (!config[p].up && config[p].spec.lock_mac) {
        datapath.port_macs[p].ArmLock();  // the next guest locks anew
      }
      // A guest that went is no listener nor router any more, its addresses not the next's.
      if (!config[p].up && loop) {
        const bool groups = snooping != nullptr && snooping->PortGone(p);
        Publish(groups, learning.PortGone(p));
      }
    }
    if (bits & 2) g->fdb->FlushPort(p);
    if (bits & 4) now += 1;
    if (bits & 8) g->fdb->Age(now, 1);
    datapath.now_seconds.store(now);
  }

  void Burst(Input& in) {
    const uint16_t in_port = static_cast<uint16_t>(in.Byte() % nb_ports);
    const uint16_t count = static_cast<uint16_t>(1 + in.Byte() % hvswitch::kMaxBurst);
    Control(in.Byte());
    rte_mbuf* pkts[hvswitch::kMaxBurst];
    std::vector<Received> received(count);
    uint16_t n = 0;
    uint64_t bytes = 0;
    while (n < count) {
      rte_mbuf* m = ReadFrame(in, config[in_port], g->ports[in_port]->eth_port(), received[n]);
      if (m == nullptr) break;
      bytes += ChainLength(m);
      pkts[n++] = m;
    }
    if (n == 0) return;
    received.resize(n);
    if (verbose) {
      std::fprintf(stderr, "burst from port %u:\n", in_port);
      for (uint16_t i = 0; i < n; ++i) {
        std::fprintf(stderr, "  len %u segs %u flags %#llx: %s\n", pkts[i]->pkt_len,
                     pkts[i]->nb_segs, static_cast<unsigned long long>(pkts[i]->ol_flags),
                     Hex(pkts[i]).c_str());
      }
    }
    const std::array<PortTotals, kPorts> before = AllTotals();
    std::vector<const std::string*> frames;
    for (const Received& r : received) frames.push_back(&r.bytes);
    const uint8_t rx_sessions = Mirrored(in_port, true);
    const unsigned free_copies = rte_mempool_avail_count(g->mirror_pool);
    std::array<uint64_t, hvswitch::kMaxMirrors> rx_copied{};
    for (size_t s = 0; s < mirrors.size(); ++s) rx_copied[s] = counters->mirrors[s].rx.Read();
    const auto copyable = ExpectCopies(rx_sessions, frames);
    forwarder->HandleBurst(in_port, pkts, n);
    CheckRxCopies(rx_sessions, received, free_copies, rx_copied, copyable);
    const PortTotals in_after = Totals(*counters, in_port);
    const uint64_t rx_packets =
        in_after[PortCounter::kRxPackets] - before[in_port][PortCounter::kRxPackets];
    const uint64_t rx_bytes =
        in_after[PortCounter::kRxBytes] - before[in_port][PortCounter::kRxBytes];
    Require(rx_packets == n, "every frame counted received", rx_packets, n);
    Require(rx_bytes == bytes, "every byte counted received", rx_bytes, bytes);
    if (Analyser(in_port)) {
      constexpr auto kMirrorPort = hvswitch::RxDrop::kMirrorPort;
      const uint64_t dropped = in_after[kMirrorPort] - before[in_port][kMirrorPort];
      Require(dropped == n, "an analyser's frames are counted mirror_port", dropped, n);
      for (uint16_t p = 0; p < nb_ports; ++p) {
        Require(Totals(*counters, p)[PortCounter::kTxPackets] ==
                    before[p][PortCounter::kTxPackets],
                "an analyser's frames go nowhere", p);
      }
    }
    // What waits (a flush interval) may have been decided by an earlier table.
    GroupKinds kinds;
    if (mcast != nullptr && !waits) {
      for (const Received& r : received) {
        kinds[UntaggedView(r.bytes)] |= Bit(WorkerKind(U8(r.bytes), r.first_len));
      }
    }
    TakeAll(before, in_port, !waits, mcast != nullptr && !waits ? &kinds : nullptr);
    Require(waits || !forwarder->HasPending(), "nothing waits without a flush interval");
    DrainCaptures();
    ApplyLearning();  // first: a lock=1 port's MAC is the port's before its claims are read
    DrainSnooped();
  }

  void Finish() {
    const std::array<PortTotals, kPorts> before = AllTotals();
    // What still waits, as the worker's next rounds send it (with the link state of now):
    // the copies the first round's transmits queued for analysers go in the second.
    forwarder->FlushExpired(~uint64_t{0});
    forwarder->FlushExpired(~uint64_t{0});
    Require(!forwarder->HasPending(), "nothing waits past its deadline");
    TakeAll(before, 0, false, nullptr);
    DrainCaptures();
    hvswitch::LearnRequest requests[256];
    while (g->learn->Drain(requests, 256) != 0) {
    }
    DrainSnooped();
    rte_mbuf* left[64];
    for (unsigned n; (n = g->snoop->Drain(left, 64)) != 0;) rte_pktmbuf_free_bulk(left, n);
    Require(rte_mempool_in_use_count(g->pool) == 0, "every mbuf back in the pool",
            rte_mempool_in_use_count(g->pool));
    Require(rte_mempool_in_use_count(g->capture_pool) == 0,
            "every capture copy back in its pool", rte_mempool_in_use_count(g->capture_pool));
    Require(rte_mempool_in_use_count(g->mirror_pool) == 0,
            "every mirror copy back in its pool", rte_mempool_in_use_count(g->mirror_pool));
    Require(rte_mempool_in_use_count(g->snoop_pool) == 0,
            "every snoop copy back in its pool", rte_mempool_in_use_count(g->snoop_pool));
    // The next input starts from an empty table.
    for (uint16_t p = 0; p < kPorts; ++p) g->fdb->FlushPort(p);
    for (uint64_t key : statics) (void)g->fdb->Remove(key);
    g->fdb->Age(now, 0);
    Require(g->fdb->size() == 0, "the FDB empties", g->fdb->size());
  }
};

// Mirror sessions as the bridge takes them (Mirrors::Check): an analyser is no session's
// port, nor its own; a session without ports is none.
void ReadMirrors(Input& in, unsigned nb_sessions, Run& run) {
  const uint64_t all = (uint64_t{1} << run.nb_ports) - 1;
  uint64_t sources = 0;
  for (unsigned s = 0; s < nb_sessions; ++s) {
    const uint8_t rx = in.Byte(), tx = in.Byte(), to = in.Byte();
    MirrorSession m;
    m.to = static_cast<uint16_t>((to & 15) % run.nb_ports);
    m.vlan = (to >> 4) == 0 ? 0 : kPortVlans[((to >> 4) - 1) % kPortVlans.size()];
    const uint64_t may = all & ~run.analysers & ~(uint64_t{1} << m.to);
    m.rx = rx & may;
    m.tx = tx & may;
    if (!m.active() || ((sources >> m.to) & 1)) continue;
    run.mirrors[s] = m;
    run.analysers |= uint64_t{1} << m.to;
    sources |= m.rx | m.tx;
  }
}

// A group table as the control thread publishes one (sorted keys and VLANs), from the
// input's groups and router VLANs; static routers come with the ports.
std::unique_ptr<McastTable> ReadGroups(Input& in, uint16_t nb_ports) {
  const uint64_t all = (uint64_t{1} << nb_ports) - 1;
  const uint8_t counts = in.Byte();
  std::map<uint64_t, uint64_t> groups;
  std::map<uint16_t, uint64_t> routers;
  for (unsigned i = 0; i < (counts & 7u); ++i) {
    const uint8_t which = in.Byte(), members = in.Byte();
    const uint64_t vlan = kFrameVlans[which >> 4] & 0xfff;
    groups[kGroupMacs[which & 7] | vlan << 48] |= members & all;
  }
  for (unsigned i = 0; i < ((counts >> 3) & 3u); ++i) {
    const uint8_t vlan = in.Byte(), ports = in.Byte();
    routers[kFrameVlans[vlan & 15] & 0xfff] |= ports & all;
  }
  auto table = std::make_unique<McastTable>();
  for (const auto& [key, members] : groups) {
    table->keys.push_back(key);
    table->members.push_back(members);
  }
  for (const auto& [vlan, ports] : routers) {
    table->router_vlans.push_back(vlan);
    table->routers.push_back(ports);
  }
  return table;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* eal[] = {"forwarder_fuzz", "--no-huge", "--no-pci", "--no-shconf", "-m", "1024",
                       "--log-level=*:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "forwarder_fuzz: cannot init EAL\n");
    std::abort();
  }
  verbose = std::getenv("FORWARDER_FUZZ_VERBOSE") != nullptr;
  g = new Process;
  g->pool = rte_pktmbuf_pool_create("fuzz", 32767, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  g->capture_pool =
      rte_pktmbuf_pool_create("fuzz_capture", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  // Small, as the bridge's is for what can be in flight: a burst's copies can run it dry.
  g->mirror_pool =
      rte_pktmbuf_pool_create("fuzz_mirror", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  g->capture_ring = rte_ring_create("fuzz_capture", 4096, 0, RING_F_SC_DEQ);
  Require(g->pool != nullptr && g->capture_pool != nullptr && g->mirror_pool != nullptr &&
              g->capture_ring != nullptr,
          "pools and ring created");
  // Small: a burst's IGMP/MLD messages fill it.
  g->snoop = *hvswitch::SnoopQueue::Create("fuzz_snoop", 32);
  g->snoop_pool = rte_mempool_lookup("fuzz_snoop_pool");
  g->devnull = open("/dev/null", O_WRONLY);
  Require(g->snoop_pool != nullptr && g->devnull >= 0, "snoop pool and /dev/null found");
  g->fdb = *hvswitch::Fdb::Create("fuzz_fdb", kFdbCapacity);
  g->learn = *hvswitch::LearnQueue::Create("fuzz_learn", 64);  // small: it fills
  // An odd port's transmit ring holds 7 frames (as a slow guest's might): transmits taken
  // in part (retries, queue_full, only the frames taken mirrored) once a few go there.
  for (uint16_t p = 0; p < kPorts; ++p) {
    g->ports.push_back(hvswitch::testing::RingPort::Create(
        "fz" + std::to_string(p), 1, 1, 64, g->pool, p % 2 == 1 ? 8 : 16384));
    Require(g->ports.back() != nullptr, "ring port created", p);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  auto run = std::make_unique<Run>();
  const uint8_t global = in.Byte(), extras = in.Byte();
  run->nb_ports = static_cast<uint16_t>(2 + (global & 0x7f) % (kPorts - 1));
  run->waits = global & 0x80;
  run->loop = extras & 32;
  std::vector<std::pair<uint64_t, uint16_t>> statics;
  for (unsigned i = 0; i < (extras & 3u); ++i) {
    const uint8_t which = in.Byte(), port = in.Byte();
    const uint64_t mac = kMacs[which & 15];
    if (hvswitch::IsGroupKey(mac) || mac == 0) continue;
    const uint64_t vlan = kFrameVlans[which >> 4] & 0xfff;
    statics.push_back({mac | (vlan << 48),
                       static_cast<uint16_t>(port % run->nb_ports)});
  }
  ReadMirrors(in, (extras >> 2) & 3u, *run);
  if (extras & 16) run->mcast = ReadGroups(in, run->nb_ports);
  for (uint16_t p = 0; p < run->nb_ports; ++p) {
    run->config[p] = ReadPort(in);
    run->specs.push_back(run->config[p].spec);
  }
  PortTable& table = *run->table;
  table.Configure(run->specs);
  hvswitch::BuildGuards(table, hvswitch::SpecSlots(run->specs));
  for (uint16_t p = 0; p < run->nb_ports; ++p) {
    hvswitch::DatapathPort& dp = table.ports[p];
    dp.eth_port = g->ports[p]->eth_port();
    dp.nb_txq = 1;
    dp.rx_offload = run->config[p].rx_offload;
    dp.recount_chains = run->config[p].recount;
    if (run->config[p].spec.lock_mac) {
      run->datapath.port_macs[p].ArmLock();
    } else {
      run->datapath.port_macs[p].Set(run->config[p].spec.allowed_macs);
    }
  }
  table.mirrors = run->mirrors;
  table.Seal();
  Require(table.analysers == run->analysers, "the analysers are the sessions'",
          table.analysers, run->analysers);
  uint64_t static_routers = 0;
  for (uint16_t p = 0; p < run->nb_ports; ++p) {
    static_routers |= uint64_t{run->config[p].spec.mrouter} << p;
  }
  if (run->mcast != nullptr) {
    run->mcast->static_routers = static_routers;
    if (run->loop) {
      run->snooping = std::make_unique<hvswitch::McastSnooping>(kMcastAging);
      run->snooping->SetStaticRouters(static_routers);
    }
  }
  if (verbose) {
    for (uint16_t p = 0; p < run->nb_ports; ++p) {
      const PortConfig& c = run->config[p];
      std::fprintf(stderr, "port %u: %s up=%d rx_offload=%d csum=%d tso4=%d tso6=%d recount=%d "
                   "capture=%d/%d\n", p, c.spec.ToString().c_str(), c.up, c.rx_offload, c.csum,
                   c.tso4, c.tso6, c.recount, c.capture_rx, c.capture_tx);
    }
    for (const MirrorSession& m : run->mirrors) {
      if (!m.active()) continue;
      std::fprintf(stderr, "mirror rx %#llx tx %#llx to port %u vlan %u\n",
                   static_cast<unsigned long long>(m.rx), static_cast<unsigned long long>(m.tx),
                   m.to, m.vlan);
    }
    if (run->mcast != nullptr) {
      std::fprintf(stderr, "group table (loop %d), static routers %#llx\n", run->loop,
                   static_cast<unsigned long long>(static_routers));
      for (size_t i = 0; i < run->mcast->keys.size(); ++i) {
        std::fprintf(stderr, "  group %#llx members %#llx\n",
                     static_cast<unsigned long long>(run->mcast->keys[i]),
                     static_cast<unsigned long long>(run->mcast->members[i]));
      }
      for (size_t i = 0; i < run->mcast->router_vlans.size(); ++i) {
        std::fprintf(stderr, "  VLAN %u routers %#llx\n", run->mcast->router_vlans[i],
                     static_cast<unsigned long long>(run->mcast->routers[i]));
      }
    }
  }
  Datapath& datapath = run->datapath;
  datapath.table.store(&table);
  datapath.fdb = g->fdb.get();
  datapath.capture_ring = g->capture_ring;
  datapath.capture_pool = g->capture_pool;
  datapath.mirror_pool = g->mirror_pool;
  datapath.snoop = g->snoop.get();
  datapath.mcast.store(run->mcast.get());
  datapath.now_seconds.store(run->now);
  run->SetMask(datapath.up_mask, &PortConfig::up);
  run->SetMask(datapath.csum_capable_mask, &PortConfig::csum);
  run->SetMask(datapath.tso4_capable_mask, &PortConfig::tso4);
  run->SetMask(datapath.tso6_capable_mask, &PortConfig::tso6);
  run->SetMask(datapath.capture_rx_mask, &PortConfig::capture_rx);
  run->SetMask(datapath.capture_tx_mask, &PortConfig::capture_tx);
  for (const auto& [key, port] : statics) {
    // As the bridge allows them: only in a VLAN the port carries (an analyser carries none).
    if (!((table.vlans.members[hvswitch::KeyVlan(key)] >> port) & 1)) continue;
    if (g->fdb->AddStatic(key, port).ok()) run->statics.push_back(key);
  }
  hvswitch::ForwarderOptions options;
  // Frames wait (for fuller bursts) far longer than a run lasts: only full buffers and
  // the final FlushAll send them.
  if (run->waits) options.flush_cycles = uint64_t{1} << 40;
  run->forwarder = std::make_unique<hvswitch::Forwarder>(datapath, options, *run->counters,
                                                         *g->learn);
  while (!in.empty()) run->Burst(in);
  run->Finish();
  return 0;
}
