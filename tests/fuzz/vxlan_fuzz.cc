// libFuzzer target over what the wire controls in VXLAN decapsulation and what the
// tunnel then does with it: frames received on an uplink (net_ring) whose demux
// (ports/vxlan/uplink_demux.cc) checks and strips outer headers for two tunnels
// (net_hvs_vxlan, one learning VTEPs, one not), split into mbuf segments as the input
// says; every frame decapsulated is then sent back out of its tunnel (unicast to a remote
// MAC's VTEP, or flooded to two VTEPs, one of them unresolved), as a bridge would.
// Built with ASan+UBSan (deploy/fuzz.sh vxlan).
//
// Besides memory errors and undefined behaviour it aborts on a broken promise:
//  - every mbuf back in its pool after each input;
//  - every frame accounted for exactly once: left in the uplink's burst for the bridge
//    (its bytes untouched), decapsulated (received by its tunnel, the outer 50+ bytes
//    gone), or counted dropped under one reason;
//  - what a tunnel sends is a well-formed VXLAN frame of its VNI around the frame it was
//    given (ParseOuter of our own output says kVxlan, from the local address).
//
// Input: frames, each [segment size: 0 one buffer, else bytes] [length, 2 bytes LE] then
// `length` bytes. A frame whose first two bytes are 0xfe 0xfe gets standard outer headers
// built around the rest (to a tunnel's VNI by the third byte's low bit, from a VTEP by its
// second bit) so that the fuzzer starts from the frames that matter.
#include <arpa/inet.h>
#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "ports/vxlan/uplink_demux.h"
#include "ports/vxlan/vxlan_device.h"
#include "ports/vxlan/vxlan_frame.h"
#include "tests/integration/ring_port.h"

namespace {

using namespace hvswitch;  // NOLINT: a fuzz target's one file

constexpr uint32_t kVnis[2] = {100, 200};
const in_addr_t kLocal = inet_addr("10.0.0.1");
const in_addr_t kVteps[2] = {inet_addr("10.0.0.2"), inet_addr("10.0.0.3")};

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "vxlan_fuzz: broken promise: %s\n", what);
    std::abort();
  }
}

class NoReaders final : public ReaderGrace {
 public:
  void WaitForReaders() override {}
};

struct World {
  rte_mempool* pool = nullptr;
  std::unique_ptr<testing::RingPort> uplink;
  std::array<uint16_t, 2> eth{};
  std::array<std::optional<VxlanDevice>, 2> device;
  std::array<VxlanRoutes, 2> routes;
  NoReaders grace;
  std::unique_ptr<UplinkDemux> demux;
};

World* world = nullptr;

OuterTemplate Template(in_addr_t remote, uint32_t vni) {
  OuterAddresses a;
  a.src_mac = {0x02, 0, 0, 0, 0, 1};
  a.dst_mac = {0x02, 0, 0, 0, 0, 2};
  a.src_ip = kLocal;
  a.dst_ip = remote;
  a.vni = vni;
  return BuildOuterTemplate(a);
}

void Init() {
  const char* eal[] = {"vxlan_fuzz", "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
                       "--log-level=*:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) std::abort();
  world = new World;
  World& w = *world;
  w.pool = rte_pktmbuf_pool_create("vxlan_fuzz", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  w.uplink = testing::RingPort::Create("fuzz_uplink", 1, 1, 1024, w.pool);
  for (int t = 0; t < 2; ++t) {
    const std::string name = "net_hvs_vxlan" + std::to_string(t);
    const std::string args = "vni=" + std::to_string(kVnis[t]) + ",learn=" + (t == 0 ? "1" : "0");
    if (rte_vdev_init(name.c_str(), args.c_str()) != 0 ||
        rte_eth_dev_get_port_by_name(name.c_str(), &w.eth[t]) != 0) {
      std::abort();
    }
    rte_eth_conf conf{};
    if (rte_eth_dev_configure(w.eth[t], 1, 1, &conf) != 0 ||
        rte_eth_rx_queue_setup(w.eth[t], 0, 1024, 0, nullptr, w.pool) != 0 ||
        rte_eth_tx_queue_setup(w.eth[t], 0, 1024, 0, nullptr) != 0 ||
        rte_eth_dev_start(w.eth[t]) != 0) {
      std::abort();
    }
    w.device[t] = VxlanDevice::Of(w.eth[t]);
    w.device[t]->AttachUplink({w.uplink->eth_port(), 1, nullptr});
    VxlanRoutes& r = w.routes[t];
    r.vteps[0] = {kVteps[0], true, Template(kVteps[0], kVnis[t])};
    r.vteps[1] = {kVteps[1], false, {}};
    r.nb_flood = 2;
    r.flood = {0, 1};
    w.device[t]->PublishRoutes(&r);
    // A remote MAC behind the resolved VTEP: frames to 02:aa:00:00:00:01 are unicast.
    w.device[t]->SetRemoteMac(0x010000aa02ull, 0);
  }
  auto demux = UplinkDemux::Install(w.uplink->eth_port(), 1, w.grace);
  if (!demux.ok()) std::abort();
  w.demux = std::move(*demux);
  w.demux->Publish({{kVnis[0], kLocal, kVxlanUdpPort, *w.device[0]},
                    {kVnis[1], kLocal, kVxlanUdpPort, *w.device[1]}});
}

// Outer headers around `inner` (the fuzzer's head start).
std::vector<uint8_t> Wrap(const uint8_t* inner, size_t len, uint8_t how) {
  const OuterTemplate outer = Template(kVteps[(how >> 1) & 1], kVnis[how & 1]);
  std::vector<uint8_t> f(outer.bytes.begin(), outer.bytes.end());
  f.insert(f.end(), inner, inner + len);
  std::swap_ranges(f.begin(), f.begin() + 6, f.begin() + 6);  // to us, from the VTEP
  const uint16_t ip_len = htons(static_cast<uint16_t>(f.size() - 14));
  const uint16_t udp_len = htons(static_cast<uint16_t>(f.size() - 34));
  std::memcpy(&f[16], &ip_len, 2);
  std::memcpy(&f[26], &kVteps[(how >> 1) & 1], 4);
  std::memcpy(&f[30], &kLocal, 4);
  f[24] = f[25] = 0;
  uint32_t sum = 0;
  for (int i = 14; i < 34; i += 2) sum += (f[i] << 8) | f[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  f[24] = static_cast<uint8_t>(~sum >> 8);
  f[25] = static_cast<uint8_t>(~sum);
  std::memcpy(&f[38], &udp_len, 2);
  return f;
}

// `bytes` as an mbuf chain of `piece`-byte segments (0: one); null if the pool is dry.
rte_mbuf* Chain(const std::vector<uint8_t>& bytes, uint8_t piece) {
  const uint32_t room = RTE_MBUF_DEFAULT_DATAROOM;
  const uint32_t step = piece == 0 ? room : std::min<uint32_t>(piece, room);
  rte_mbuf* head = nullptr;
  rte_mbuf* last = nullptr;
  size_t at = 0;
  do {
    rte_mbuf* seg = rte_pktmbuf_alloc(world->pool);
    if (seg == nullptr) {
      rte_pktmbuf_free(head);
      return nullptr;
    }
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(step, bytes.size() - at));
    if (n != 0) std::memcpy(rte_pktmbuf_append(seg, static_cast<uint16_t>(n)), bytes.data() + at, n);
    at += n;
    if (head == nullptr) {
      head = last = seg;
    } else {
      last->next = seg;
      last = seg;
      head->nb_segs++;
      head->pkt_len += n;
    }
  } while (at < bytes.size());
  return head;
}

uint64_t DecapTotal(const DecapTotals& t) {
  uint64_t sum = 0;
  for (size_t i = static_cast<size_t>(DecapCounter::k_short_frame); i < kNbDecapCounters; ++i) {
    sum += t[i];
  }
  return sum + t[static_cast<size_t>(DecapCounter::k_packets)];
}

void CheckSent(int t) {
  for (rte_mbuf* m : world->uplink->TakeSent()) {
    LocalVteps from_us;  // our own output, as its receiver would parse it
    from_us.n = 2;
    from_us.ip[0] = kVteps[0];
    from_us.port[0] = htons(kVxlanUdpPort);
    from_us.ip[1] = kVteps[1];
    from_us.port[1] = htons(kVxlanUdpPort);
    OuterInfo info;
    if (m->data_len >= kVxlanOverhead) {
      Require(ParseOuter(m, from_us, info) == OuterVerdict::kVxlan, "we send well-formed VXLAN");
      Require(info.vni == kVnis[t] && info.src_ip == kLocal, "of the tunnel's VNI, from us");
    }
    rte_pktmbuf_free(m);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (world == nullptr) Init();
  World& w = *world;
  std::vector<rte_mbuf*> frames;
  std::vector<std::vector<uint8_t>> originals;
  size_t at = 0;
  while (at + 3 <= size && frames.size() < 64) {
    const uint8_t piece = data[at];
    const size_t len = std::min<size_t>(data[at + 1] | (data[at + 2] << 8), size - at - 3);
    const uint8_t* body = data + at + 3;
    at += 3 + len;
    std::vector<uint8_t> bytes(body, body + len);
    if (len >= 3 && body[0] == 0xfe && body[1] == 0xfe) bytes = Wrap(body + 3, len - 3, body[2]);
    if (bytes.size() > 9000) continue;
    rte_mbuf* m = Chain(bytes, piece);
    if (m == nullptr) break;
    frames.push_back(m);
    originals.push_back(std::move(bytes));
  }
  const DecapTotals before = w.demux->Sums();
  const unsigned injected = w.uplink->Inject(0, frames.data(), static_cast<unsigned>(frames.size()));
  Require(injected == frames.size(), "the uplink's ring takes the input");
  // Left for the bridge: untouched.
  rte_mbuf* kept[64];
  const uint16_t nb_kept = rte_eth_rx_burst(w.uplink->eth_port(), 0, kept, 64);
  size_t next = 0;
  for (uint16_t k = 0; k < nb_kept; ++k) {
    std::vector<uint8_t> bytes(kept[k]->pkt_len);
    const auto* p = static_cast<const uint8_t*>(
        rte_pktmbuf_read(kept[k], 0, kept[k]->pkt_len, bytes.data()));
    while (next < originals.size() &&
           !(originals[next].size() == kept[k]->pkt_len &&
             std::equal(originals[next].begin(), originals[next].end(), p))) {
      ++next;
    }
    Require(next < originals.size(), "a frame left to the bridge is one received, untouched");
    ++next;
    rte_pktmbuf_free(kept[k]);
  }
  // Decapsulated: received by the tunnels, then sent back out of them.
  uint16_t nb_decap = 0;
  for (int t = 0; t < 2; ++t) {
    rte_mbuf* got[64];
    const uint16_t n = rte_eth_rx_burst(w.eth[t], 0, got, 64);
    nb_decap = static_cast<uint16_t>(nb_decap + n);
    for (uint16_t i = 0; i < n; ++i) Require(got[i]->port == w.eth[t], "the tunnel's port");
    const uint16_t sent = rte_eth_tx_burst(w.eth[t], 0, got, n);
    Require(sent == n, "a tunnel takes every frame (sends, floods or counts it)");
    CheckSent(t);
    LearnNote notes[64];
    while (w.device[t]->DrainLearnNotes(notes, 64) != 0) {
    }
  }
  const DecapTotals after = w.demux->Sums();
  Require(DecapTotal(after) - DecapTotal(before) + nb_kept == frames.size(),
          "every frame kept, decapsulated or counted dropped once");
  Require(after[static_cast<size_t>(DecapCounter::k_packets)] -
                  before[static_cast<size_t>(DecapCounter::k_packets)] ==
              nb_decap,
          "what was counted decapsulated is what the tunnels received");
  Require(rte_mempool_in_use_count(w.pool) == 0, "every mbuf back in its pool");
  return 0;
}
