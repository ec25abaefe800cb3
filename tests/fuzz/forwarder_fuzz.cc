// libFuzzer target over the forwarder (Forwarder::HandleBurst: classify, learn requests,
// verdict, VLAN re-tagging, MTU, floods, offload resolution, capture copies, transmit) on
// net_ring ports: what guests and the wire control (frame bytes, mbuf chains, offload
// metadata) against what an operator configures (VLAN access/trunk/native, MTU, link up
// or down, learn limits, mac=/lock=1, peer offloads, captures). Built with ASan+UBSan
// (deploy/fuzz.sh forwarder); one EAL per process (--no-huge --no-pci), ports and pools
// made once and reset between inputs. The fuzzer plays the control thread between bursts:
// it applies learn requests (learn limits, lock=1 taking the first MAC), links going up
// and down, flushes and ageing.
//
// Besides memory errors and undefined behaviour it aborts on a broken promise:
//  - every mbuf back in its pool after each input (the frames' pool and the capture pool);
//  - each burst's frames counted received on their port (packets and bytes);
//  - what a port's ring took is what its transmit counters say (packets and bytes);
//  - nothing sent to the port it came from, nor to a port whose link is down;
//  - every sent frame a sane mbuf chain, within the port's MTU unless left to the port
//    to segment (TSO), and tagged on a trunk port only with a VLAN of its trunk.
//
// Input (every field a byte unless said; an input that ends early ends the run):
//   global: [ports: 2 + b % 7, bit 7: wait for fuller tx bursts] [static MACs: b % 4]
//     each static: [MAC index | VLAN index << 4] [port]
//   each port: [VLAN mode: b & 3 = none/access/trunk/trunk+native, access/native VLAN
//     index in bits 2-4 / 5-7] [trunk VLAN set, bitmask] [MTU index] [flags: up, rx
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
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "ports/port_spec.h"
#include "switch/datapath/counters.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/forwarder.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/mac_key.h"
#include "tests/integration/ring_port.h"

namespace {

using hvswitch::Datapath;
using hvswitch::PortSpec;
using hvswitch::PortCounter;
using hvswitch::PortTotals;

constexpr uint16_t kPorts = 8;
constexpr uint32_t kFdbCapacity = 64;  // small, so that the table fills
constexpr uint16_t kMaxChainSegments = 40;
constexpr std::array<uint16_t, 6> kPortVlans = {1, 2, 10, 20, 100, 4094};
constexpr std::array<uint16_t, 16> kFrameVlans = {0,  1,  2,    10,   20, 100, 4094, 4095,
                                                  10, 20, 1, 2, 100, 5,  0,    4000};
constexpr std::array<uint16_t, 8> kMtus = {68, 100, 576, 1500, 1500, 1400, 9000, 200};
// First octet in the low byte (the FDB key layout): unicast, then group and zero sources.
constexpr std::array<uint64_t, 16> kMacs = {
    0x0100000002, 0x0200000002, 0x0300000002, 0x0400000002, 0x0500000002, 0x0600000002,
    0x0700000002, 0x0800000002, 0x010000000a, 0x02000000ae, 0xffffffffffff, 0x0100005e01,
    0x0100003333, 0x000000000000, 0x0000c28001 /* a BPDU's */, 0x0a00000002};

struct Process {
  rte_mempool* pool = nullptr;
  rte_mempool* capture_pool = nullptr;
  rte_ring* capture_ring = nullptr;
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

// One received frame as a PMD would deliver it from port `p`; null when the input is over
// or the pool is empty.
rte_mbuf* ReadFrame(Input& in, const PortConfig& port) {
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

struct Run {
  uint16_t nb_ports = 0;
  std::array<PortConfig, kPorts> config;
  Datapath datapath;
  hvswitch::PortTable table;
  std::unique_ptr<hvswitch::WorkerCounters> counters{new hvswitch::WorkerCounters};
  std::unique_ptr<hvswitch::Forwarder> forwarder;
  bool waits = false;  // frames may wait for fuller bursts (flush_cycles)
  uint32_t now = 1;
  std::vector<uint64_t> statics;

  void SetMask(std::atomic<uint64_t>& mask, bool PortConfig::*field) {
    uint64_t bits = 0;
    for (uint16_t p = 0; p < nb_ports; ++p) bits |= uint64_t{config[p].*field} << p;
    mask.store(bits);
  }

  void PublishMacs(uint16_t p, const std::vector<uint64_t>& macs) {
    hvswitch::PortMacs& allowed = datapath.port_macs[p];
    for (size_t i = 0; i < macs.size(); ++i) allowed.macs[i].store(macs[i]);
    allowed.count.store(static_cast<uint32_t>(macs.size()), std::memory_order_release);
  }

  // Every frame port p transmitted since the last call: counted exactly, sane, and where
  // it may go. Freed.
  void TakeSent(uint16_t p, const PortTotals& before, uint16_t in_port, bool check_hairpin) {
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
      Require(m->pkt_len >= 14, "a sent frame has an Ethernet header", m->pkt_len);
      bytes += m->pkt_len;
      const uint8_t* eth = rte_pktmbuf_mtod(m, const uint8_t*);
      const bool tagged = m->data_len >= 18 && eth[12] == 0x81 && eth[13] == 0x00;
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
    for (rte_mbuf* m : sent) rte_pktmbuf_free(m);
  }

  void DrainCaptures() {
    void* copies[64];
    unsigned n;
    while ((n = rte_ring_dequeue_burst(g->capture_ring, copies, 64, nullptr)) != 0) {
      rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(copies), n);
    }
  }

  // The control thread's share: learn requests applied with the limits and port
  // security (lock=1 takes the first source), ports at their limit published.
  void ApplyLearning() {
    hvswitch::LearnRequest requests[256];
    unsigned n;
    while ((n = g->learn->Drain(requests, 256)) != 0) {
      for (unsigned i = 0; i < n; ++i) {
        const uint16_t p = static_cast<uint16_t>(requests[i].port);
        Require(p < nb_ports, "learn requests name a port", p);
        const uint64_t mac = hvswitch::KeyMac(requests[i].key);
        const hvswitch::PortMacs& allowed = datapath.port_macs[p];
        if (config[p].spec.lock_mac && allowed.count.load() == 0) PublishMacs(p, {mac});
        const uint32_t count = allowed.count.load();
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

  void Control(uint8_t bits) {
    const uint16_t p = static_cast<uint16_t>((bits >> 4) % nb_ports);
    if (bits & 1) {
      config[p].up = !config[p].up;
      SetMask(datapath.up_mask, &PortConfig::up);
      if (!config[p].up && config[p].spec.lock_mac) PublishMacs(p, {});  // next guest locks anew
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
    uint16_t n = 0;
    uint64_t bytes = 0;
    while (n < count) {
      rte_mbuf* m = ReadFrame(in, config[in_port]);
      if (m == nullptr) break;
      bytes += ChainLength(m);
      pkts[n++] = m;
    }
    if (n == 0) return;
    if (verbose) {
      std::fprintf(stderr, "burst from port %u:\n", in_port);
      for (uint16_t i = 0; i < n; ++i) {
        std::fprintf(stderr, "  len %u segs %u flags %#llx: %s\n", pkts[i]->pkt_len,
                     pkts[i]->nb_segs, static_cast<unsigned long long>(pkts[i]->ol_flags),
                     Hex(pkts[i]).c_str());
      }
    }
    std::array<PortTotals, kPorts> before;
    for (uint16_t p = 0; p < nb_ports; ++p) before[p] = Totals(*counters, p);
    forwarder->HandleBurst(in_port, pkts, n);
    const PortTotals in_after = Totals(*counters, in_port);
    const uint64_t rx_packets =
        in_after[PortCounter::kRxPackets] - before[in_port][PortCounter::kRxPackets];
    const uint64_t rx_bytes =
        in_after[PortCounter::kRxBytes] - before[in_port][PortCounter::kRxBytes];
    Require(rx_packets == n, "every frame counted received", rx_packets, n);
    Require(rx_bytes == bytes, "every byte counted received", rx_bytes, bytes);
    for (uint16_t p = 0; p < nb_ports; ++p) TakeSent(p, before[p], in_port, !waits);
    DrainCaptures();
    ApplyLearning();
  }

  void Finish() {
    std::array<PortTotals, kPorts> before;
    for (uint16_t p = 0; p < nb_ports; ++p) before[p] = Totals(*counters, p);
    // What still waits, as the worker's next round sends it (with the link state of now).
    forwarder->FlushExpired(~uint64_t{0});
    Require(!forwarder->HasPending(), "nothing waits past its deadline");
    for (uint16_t p = 0; p < nb_ports; ++p) TakeSent(p, before[p], 0, false);
    DrainCaptures();
    hvswitch::LearnRequest requests[256];
    while (g->learn->Drain(requests, 256) != 0) {
    }
    Require(rte_mempool_in_use_count(g->pool) == 0, "every mbuf back in the pool",
            rte_mempool_in_use_count(g->pool));
    Require(rte_mempool_in_use_count(g->capture_pool) == 0,
            "every capture copy back in its pool", rte_mempool_in_use_count(g->capture_pool));
    // The next input starts from an empty table.
    for (uint16_t p = 0; p < kPorts; ++p) g->fdb->FlushPort(p);
    for (uint64_t key : statics) (void)g->fdb->Remove(key);
    g->fdb->Age(now, 0);
    Require(g->fdb->size() == 0, "the FDB empties", g->fdb->size());
  }
};

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
  g->capture_ring = rte_ring_create("fuzz_capture", 4096, 0, RING_F_SC_DEQ);
  Require(g->pool != nullptr && g->capture_pool != nullptr && g->capture_ring != nullptr,
          "pools and ring created");
  g->fdb = *hvswitch::Fdb::Create("fuzz_fdb", kFdbCapacity);
  g->learn = *hvswitch::LearnQueue::Create("fuzz_learn", 64);  // small: it fills
  for (uint16_t p = 0; p < kPorts; ++p) {
    g->ports.push_back(hvswitch::testing::RingPort::Create("fz" + std::to_string(p), 1, 1, 64,
                                                           g->pool, 16384));
    Require(g->ports.back() != nullptr, "ring port created", p);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  auto run = std::make_unique<Run>();
  const uint8_t global = in.Byte();
  run->nb_ports = static_cast<uint16_t>(2 + (global & 0x7f) % (kPorts - 1));
  run->waits = global & 0x80;
  const uint8_t nb_statics = in.Byte() % 4;
  std::vector<std::pair<uint64_t, uint16_t>> statics;
  for (uint8_t i = 0; i < nb_statics; ++i) {
    const uint8_t which = in.Byte(), port = in.Byte();
    const uint64_t mac = kMacs[which & 15];
    if (hvswitch::IsGroupKey(mac) || mac == 0) continue;
    const uint64_t vlan = kFrameVlans[which >> 4] & 0xfff;
    statics.push_back({mac | (vlan << 48),
                       static_cast<uint16_t>(port % run->nb_ports)});
  }
  std::vector<PortSpec> specs;
  for (uint16_t p = 0; p < run->nb_ports; ++p) {
    run->config[p] = ReadPort(in);
    specs.push_back(run->config[p].spec);
  }
  run->table.Configure(specs);
  hvswitch::BuildGuards(run->table, hvswitch::SpecSlots(specs));
  if (verbose) {
    for (uint16_t p = 0; p < run->nb_ports; ++p) {
      const PortConfig& c = run->config[p];
      std::fprintf(stderr, "port %u: %s up=%d rx_offload=%d csum=%d tso4=%d tso6=%d recount=%d "
                   "capture=%d/%d\n", p, c.spec.ToString().c_str(), c.up, c.rx_offload, c.csum,
                   c.tso4, c.tso6, c.recount, c.capture_rx, c.capture_tx);
    }
  }
  for (uint16_t p = 0; p < run->nb_ports; ++p) {
    hvswitch::DatapathPort& dp = run->table.ports[p];
    dp.eth_port = g->ports[p]->eth_port();
    dp.nb_txq = 1;
    dp.rx_offload = run->config[p].rx_offload;
    dp.recount_chains = run->config[p].recount;
    run->PublishMacs(p, run->config[p].spec.allowed_macs);
  }
  Datapath& datapath = run->datapath;
  datapath.table.store(&run->table);
  datapath.fdb = g->fdb.get();
  datapath.capture_ring = g->capture_ring;
  datapath.capture_pool = g->capture_pool;
  datapath.now_seconds.store(run->now);
  run->SetMask(datapath.up_mask, &PortConfig::up);
  run->SetMask(datapath.csum_capable_mask, &PortConfig::csum);
  run->SetMask(datapath.tso4_capable_mask, &PortConfig::tso4);
  run->SetMask(datapath.tso6_capable_mask, &PortConfig::tso6);
  run->SetMask(datapath.capture_rx_mask, &PortConfig::capture_rx);
  run->SetMask(datapath.capture_tx_mask, &PortConfig::capture_tx);
  for (const auto& [key, port] : statics) {
    // As the bridge allows them: only in a VLAN the port carries.
    if (!((run->table.vlans.members[hvswitch::KeyVlan(key)] >> port) & 1)) continue;
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
