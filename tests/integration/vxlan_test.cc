// VXLAN framing and the tunnel device against frames built here byte by byte (RFC 7348's
// layout, RFC 1071 checksums from tests/test_frames.h), not with the code under test:
// encapsulation, the outer-header checks of decapsulation (each malformation its own
// verdict), the inner flow's UDP source port; then net_hvs_vxlan and an uplink's demux
// over net_ring: unicast to a remote MAC's VTEP, head-end replication to the flood list,
// an unresolved VTEP counted, decapsulated frames received with their VTEP counted and
// their source noted for learning, malformed frames counted under their reasons.
#include <arpa/inet.h>
#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "ports/vxlan/uplink_demux.h"
#include "ports/vxlan/vxlan_device.h"
#include "ports/vxlan/vxlan_frame.h"
#include "tests/integration/ring_port.h"
#include "tests/test_frames.h"

namespace hvswitch {
namespace {

constexpr uint8_t kLocalMac[6] = {0x02, 0, 0, 0, 0, 0x01};
constexpr uint8_t kNextHopMac[6] = {0x02, 0, 0, 0, 0, 0x02};
const in_addr_t kLocal = inet_addr("10.0.0.1"), kRemote = inet_addr("10.0.0.2"),
                kRemote2 = inet_addr("10.0.0.3");

struct Pool {
  Pool() { pool = rte_pktmbuf_pool_create("vxlan_test", 1023, 0, 0, 2048 + 128, 0); }
  ~Pool() { rte_mempool_free(pool); }
  rte_mempool* pool;
};

// An inner frame: Ethernet (dst, src), IPv4/UDP with the given ports, `payload` bytes.
std::vector<uint8_t> Inner(uint8_t dst_last, uint8_t src_last, uint16_t sport = 1000,
                           uint32_t payload = 32) {
  Built b = Build({.ipv6 = false, .tcp = false, .tagged = false, .options = false,
                   .payload = payload});
  std::vector<uint8_t>& f = b.bytes;
  const uint8_t dst[6] = {0x02, 0xaa, 0, 0, 0, dst_last}, src[6] = {0x02, 0xbb, 0, 0, 0, src_last};
  std::memcpy(f.data(), dst, 6);
  std::memcpy(f.data() + 6, src, 6);
  Put16(f, b.l4, sport);
  return f;
}

// The outer headers RFC 7348 describes, written out field by field.
std::vector<uint8_t> Outer(const std::vector<uint8_t>& inner, in_addr_t src, in_addr_t dst,
                           uint32_t vni, uint16_t sport, uint16_t ip_id = 0,
                           uint8_t flags = 0x08) {
  std::vector<uint8_t> f(50, 0);
  std::memcpy(f.data(), kNextHopMac, 6);
  std::memcpy(f.data() + 6, kLocalMac, 6);
  Put16(f, 12, 0x0800);
  f[14] = 0x45;
  Put16(f, 16, static_cast<uint16_t>(20 + 8 + 8 + inner.size()));
  Put16(f, 18, ip_id);
  f[22] = 64;
  f[23] = 17;
  std::memcpy(f.data() + 26, &src, 4);
  std::memcpy(f.data() + 30, &dst, 4);
  const std::vector<uint8_t> ip(f.begin() + 14, f.begin() + 34);
  Put16(f, 24, static_cast<uint16_t>(~Rfc1071Sum(ip) & 0xffff));
  Put16(f, 34, sport);
  Put16(f, 36, 4789);
  Put16(f, 38, static_cast<uint16_t>(8 + 8 + inner.size()));
  f[42] = flags;
  f[46] = static_cast<uint8_t>(vni >> 16);
  f[47] = static_cast<uint8_t>(vni >> 8);
  f[48] = static_cast<uint8_t>(vni);
  f.insert(f.end(), inner.begin(), inner.end());
  return f;
}

rte_mbuf* ToMbuf(rte_mempool* pool, const std::vector<uint8_t>& bytes) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size())), bytes.data(),
              bytes.size());
  return m;
}

std::vector<uint8_t> Bytes(const rte_mbuf* m) {
  std::vector<uint8_t> out(m->pkt_len);
  // A pointer into the mbuf when its data is in one segment, else into `out` (copied).
  const auto* data = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, out.data()));
  return std::vector<uint8_t>(data, data + m->pkt_len);
}

OuterTemplate Template(in_addr_t remote, uint32_t vni) {
  OuterAddresses a;
  std::memcpy(a.src_mac.data(), kLocalMac, 6);
  std::memcpy(a.dst_mac.data(), kNextHopMac, 6);
  a.src_ip = kLocal;
  a.dst_ip = remote;
  a.vni = vni;
  return BuildOuterTemplate(a);
}

LocalVteps Local() {
  LocalVteps local;
  local.n = 1;
  local.ip[0] = kLocal;
  local.port[0] = htons(4789);
  return local;
}

TEST(VxlanFrameTest, EncapsulationIsRfc7348sLayout) {
  Pool p;
  const std::vector<uint8_t> inner = Inner(1, 2);
  rte_mbuf* m = ToMbuf(p.pool, inner);
  ASSERT_TRUE(Encapsulate(m, Template(kRemote, 0x123456), 50000, 7, false));
  EXPECT_EQ(Bytes(m), Outer(inner, kLocal, kRemote, 0x123456, 50000, 7));
  rte_pktmbuf_free(m);
}

TEST(VxlanFrameTest, OuterUdpChecksumWhenAskedIsRfc1071s) {
  Pool p;
  const std::vector<uint8_t> inner = Inner(1, 2, 1000, 101);  // odd length
  rte_mbuf* m = ToMbuf(p.pool, inner);
  ASSERT_TRUE(Encapsulate(m, Template(kRemote, 5), 50001, 0, true));
  const std::vector<uint8_t> out = Bytes(m);
  // Pseudo-header + UDP header + data, the checksum field included: all ones.
  std::vector<uint8_t> pseudo(out.begin() + 26, out.begin() + 34);
  pseudo.push_back(0);
  pseudo.push_back(17);
  pseudo.push_back(out[38]);
  pseudo.push_back(out[39]);
  const std::vector<uint8_t> udp(out.begin() + 34, out.end());
  EXPECT_NE(out[40] | out[41], 0);
  EXPECT_EQ(Rfc1071Sum(udp, Rfc1071Sum(pseudo)), 0xffffu);
  rte_pktmbuf_free(m);
}

TEST(VxlanFrameTest, NoHeadroomIsRefused) {
  Pool p;
  rte_mbuf* m = ToMbuf(p.pool, Inner(1, 2));
  rte_pktmbuf_prepend(m, static_cast<uint16_t>(rte_pktmbuf_headroom(m) - 10));
  EXPECT_FALSE(Encapsulate(m, Template(kRemote, 5), 50001, 0, false));
  rte_pktmbuf_free(m);
}

TEST(VxlanFrameTest, WellFormedFramesDecapsulate) {
  Pool p;
  const std::vector<uint8_t> inner = Inner(1, 2);
  for (uint8_t flags : {uint8_t{0x08}, uint8_t{0xff}}) {  // reserved bits are ignored
    rte_mbuf* m = ToMbuf(p.pool, Outer(inner, kRemote, kLocal, 4242, 50000, 0, flags));
    OuterInfo info;
    EXPECT_EQ(ParseOuter(m, Local(), info), OuterVerdict::kVxlan);
    EXPECT_EQ(info.vni, 4242u);
    EXPECT_EQ(info.src_ip, kRemote);
    EXPECT_EQ(info.dst_ip, kLocal);
    EXPECT_EQ(info.inner_offset, 50);
    rte_pktmbuf_free(m);
  }
}

TEST(VxlanFrameTest, MalformedOuterHeadersHaveTheirVerdicts) {
  Pool p;
  const std::vector<uint8_t> good = Outer(Inner(1, 2), kRemote, kLocal, 100, 50000);
  struct Case {
    const char* what;
    void (*mangle)(std::vector<uint8_t>&);
    OuterVerdict want;
  };
  auto fix_ip_sum = [](std::vector<uint8_t>& f) {
    Put16(f, 24, 0);
    const std::vector<uint8_t> ip(f.begin() + 14, f.begin() + 34);
    Put16(f, 24, static_cast<uint16_t>(~Rfc1071Sum(ip) & 0xffff));
  };
  static auto fix = fix_ip_sum;
  const Case cases[] = {
      {"ARP", [](std::vector<uint8_t>& f) { Put16(f, 12, 0x0806); }, OuterVerdict::kNotVxlan},
      {"TCP", [](std::vector<uint8_t>& f) { f[23] = 6; fix(f); }, OuterVerdict::kNotVxlan},
      {"another address", [](std::vector<uint8_t>& f) { f[33] ^= 1; fix(f); },
       OuterVerdict::kNotVxlan},
      {"another port", [](std::vector<uint8_t>& f) { Put16(f, 36, 4790); },
       OuterVerdict::kNotVxlan},
      {"IHL 4", [](std::vector<uint8_t>& f) { f[14] = 0x44; fix(f); },
       OuterVerdict::kBadIpHeader},
      {"IP checksum", [](std::vector<uint8_t>& f) { f[24] ^= 0x40; }, OuterVerdict::kBadIpHeader},
      {"IP length beyond the frame",
       [](std::vector<uint8_t>& f) { Put16(f, 16, static_cast<uint16_t>(f.size())); fix(f); },
       OuterVerdict::kShort},
      {"IP length short of its header",
       [](std::vector<uint8_t>& f) { Put16(f, 16, 19); fix(f); }, OuterVerdict::kBadIpHeader},
      {"cut inside the VXLAN header", [](std::vector<uint8_t>& f) { f.resize(46); },
       OuterVerdict::kShort},
      {"cut inside the UDP header", [](std::vector<uint8_t>& f) { f.resize(38); },
       OuterVerdict::kShort},
      {"more fragments", [](std::vector<uint8_t>& f) { Put16(f, 20, 0x2000); fix(f); },
       OuterVerdict::kFragment},
      {"fragment offset", [](std::vector<uint8_t>& f) { Put16(f, 20, 0x0010); fix(f); },
       OuterVerdict::kFragment},
      {"UDP length short of IP's",
       [](std::vector<uint8_t>& f) { Put16(f, 38, static_cast<uint16_t>(f.size() - 34 - 2)); },
       OuterVerdict::kBadUdp},
      {"no room for VXLAN and Ethernet",
       [](std::vector<uint8_t>& f) {
         f.resize(34 + 8 + 8 + 10);
         Put16(f, 16, static_cast<uint16_t>(f.size() - 14));
         Put16(f, 38, static_cast<uint16_t>(f.size() - 34));
         fix(f);
       },
       OuterVerdict::kBadUdp},
      {"I flag clear", [](std::vector<uint8_t>& f) { f[42] = 0x00; }, OuterVerdict::kBadFlags},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> bytes = good;
    c.mangle(bytes);
    rte_mbuf* m = ToMbuf(p.pool, bytes);
    OuterInfo info;
    EXPECT_EQ(ParseOuter(m, Local(), info), c.want) << c.what;
    rte_pktmbuf_free(m);
  }
  // Shorter than an IPv4 header: nobody can tell it is VXLAN; the bridge's.
  rte_mbuf* m = ToMbuf(p.pool, std::vector<uint8_t>(good.begin(), good.begin() + 33));
  OuterInfo info;
  EXPECT_EQ(ParseOuter(m, Local(), info), OuterVerdict::kNotVxlan);
  rte_pktmbuf_free(m);
  // The device says the IPv4 checksum is good or bad: taken as it says.
  std::vector<uint8_t> bytes = good;
  bytes[24] ^= 0x40;
  m = ToMbuf(p.pool, bytes);
  m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
  EXPECT_EQ(ParseOuter(m, Local(), info), OuterVerdict::kVxlan);
  rte_pktmbuf_free(m);
  m = ToMbuf(p.pool, good);
  m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD;
  EXPECT_EQ(ParseOuter(m, Local(), info), OuterVerdict::kBadIpHeader);
  rte_pktmbuf_free(m);
}

TEST(VxlanFrameTest, SourcePortFollowsTheInnerFlow) {
  Pool p;
  std::set<uint16_t> ports;
  for (uint16_t sport = 1000; sport < 1064; ++sport) {
    rte_mbuf* a = ToMbuf(p.pool, Inner(1, 2, sport));
    rte_mbuf* b = ToMbuf(p.pool, Inner(1, 2, sport));
    const uint16_t port = InnerFlowPort(a);
    EXPECT_EQ(port, InnerFlowPort(b));  // one flow, one port
    EXPECT_GE(port, 49152);
    ports.insert(port);
    rte_pktmbuf_free(a);
    rte_pktmbuf_free(b);
  }
  EXPECT_GT(ports.size(), 48u);  // flows spread over the range
}

// ---- the device and the demux over net_ring --------------------------------------------

class NoReaders final : public ReaderGrace {
 public:
  void WaitForReaders() override {}
};

class VxlanDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // net_ring's names outlive its devices: one per test.
    static int tests = 0;
    uplink_ = testing::RingPort::Create("vxlan_uplink" + std::to_string(tests++), 1, 1, 256,
                                        pool_.pool);
    ASSERT_NE(uplink_, nullptr);
    ASSERT_EQ(rte_vdev_init("net_hvs_vxlan77", "vni=77"), 0);
    ASSERT_EQ(rte_eth_dev_get_port_by_name("net_hvs_vxlan77", &eth_), 0);
    rte_eth_conf conf{};
    ASSERT_EQ(rte_eth_dev_configure(eth_, 1, 1, &conf), 0);
    ASSERT_EQ(rte_eth_rx_queue_setup(eth_, 0, 256, 0, nullptr, pool_.pool), 0);
    ASSERT_EQ(rte_eth_tx_queue_setup(eth_, 0, 256, 0, nullptr), 0);
    ASSERT_EQ(rte_eth_dev_start(eth_), 0);
    device_ = VxlanDevice::Of(eth_);
    ASSERT_TRUE(device_.has_value());
    device_->AttachUplink({uplink_->eth_port(), 1, nullptr});
    routes_.vteps[0] = {kRemote, true, Template(kRemote, 77)};
    routes_.vteps[1] = {kRemote2, true, Template(kRemote2, 77)};
    routes_.vteps[2] = {inet_addr("10.0.0.4"), false, {}};
    routes_.nb_flood = 2;
    routes_.flood = {0, 1};
    device_->PublishRoutes(&routes_);
  }
  void TearDown() override {
    if (device_) device_->PublishRoutes(nullptr);
    rte_eth_dev_stop(eth_);
    rte_eth_dev_close(eth_);
    rte_vdev_uninit("net_hvs_vxlan77");
    uplink_.reset();
  }
  uint16_t Send(const std::vector<uint8_t>& inner) {
    rte_mbuf* m = ToMbuf(pool_.pool, inner);
    return rte_eth_tx_burst(eth_, 0, &m, 1);
  }

  Pool pool_;
  std::unique_ptr<testing::RingPort> uplink_;
  uint16_t eth_ = 0;
  std::optional<VxlanDevice> device_;
  VxlanRoutes routes_;
};

uint64_t MacOf(const std::vector<uint8_t>& frame, size_t at) {
  uint64_t mac = 0;
  std::memcpy(&mac, frame.data() + at, 6);
  return mac;
}

TEST_F(VxlanDeviceTest, UnicastToTheRemoteMacsVtepFloodToEveryVtep) {
  const std::vector<uint8_t> known = Inner(9, 2), unknown = Inner(10, 2);
  ASSERT_TRUE(device_->SetRemoteMac(MacOf(known, 0), 1));
  EXPECT_EQ(Send(known), 1);
  std::vector<rte_mbuf*> sent = uplink_->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  std::vector<uint8_t> out = Bytes(sent[0]);
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 50, out.end()), known);
  EXPECT_EQ(std::memcmp(out.data() + 30, &kRemote2, 4), 0);
  rte_pktmbuf_free_bulk(sent.data(), static_cast<unsigned>(sent.size()));

  EXPECT_EQ(Send(unknown), 1);
  sent = uplink_->TakeSent();
  ASSERT_EQ(sent.size(), 2u);
  std::set<in_addr_t> to;
  for (rte_mbuf* m : sent) {
    out = Bytes(m);
    EXPECT_EQ(std::vector<uint8_t>(out.begin() + 50, out.end()), unknown);
    in_addr_t dst;
    std::memcpy(&dst, out.data() + 30, 4);
    to.insert(dst);
  }
  EXPECT_EQ(to, (std::set<in_addr_t>{kRemote, kRemote2}));
  rte_pktmbuf_free_bulk(sent.data(), static_cast<unsigned>(sent.size()));
  EXPECT_EQ(device_->TunnelSums()[size_t(TunnelCounter::k_flooded)], 1u);
  EXPECT_EQ(device_->VtepSums(1)[size_t(VtepCounter::k_tx_packets)], 2u);
  EXPECT_EQ(device_->VtepSums(0)[size_t(VtepCounter::k_tx_packets)], 1u);

  // The queue remembers the last remote MAC it found: a move to another VTEP, and a
  // removal, are seen at the next frame all the same.
  ASSERT_TRUE(device_->SetRemoteMac(MacOf(known, 0), 0));
  EXPECT_EQ(Send(known), 1);
  sent = uplink_->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::memcmp(Bytes(sent[0]).data() + 30, &kRemote, 4), 0);
  rte_pktmbuf_free_bulk(sent.data(), static_cast<unsigned>(sent.size()));
  device_->RemoveRemoteMac(MacOf(known, 0));
  device_->ReclaimRemoved();
  EXPECT_EQ(Send(known), 1);
  sent = uplink_->TakeSent();
  EXPECT_EQ(sent.size(), 2u);  // flooded
  rte_pktmbuf_free_bulk(sent.data(), static_cast<unsigned>(sent.size()));
}

TEST_F(VxlanDeviceTest, AnUnresolvedVtepsFramesAreCounted) {
  const std::vector<uint8_t> inner = Inner(11, 2);
  ASSERT_TRUE(device_->SetRemoteMac(MacOf(inner, 0), 2));
  EXPECT_EQ(Send(inner), 1);
  EXPECT_TRUE(uplink_->TakeSent().empty());
  EXPECT_EQ(device_->VtepSums(2)[size_t(VtepCounter::k_unresolved)], 1u);
}

TEST_F(VxlanDeviceTest, TheDemuxDeliversDecapsulatesAndCountsWhatItDrops) {
  NoReaders grace;
  auto demux = UplinkDemux::Install(uplink_->eth_port(), 1, grace);
  ASSERT_TRUE(demux.ok()) << demux.status();
  (*demux)->Publish({{77, kLocal, 4789, *device_}});
  const std::vector<uint8_t> inner = Inner(1, 0x33);
  std::vector<rte_mbuf*> frames = {
      ToMbuf(pool_.pool, Outer(inner, kRemote, kLocal, 77, 50000)),    // decapsulated
      ToMbuf(pool_.pool, Outer(inner, kRemote, kLocal, 78, 50000)),    // unknown VNI
      ToMbuf(pool_.pool, Outer(inner, kRemote, kLocal, 77, 50000, 0, 0)),  // no I flag
      ToMbuf(pool_.pool, inner),                                       // the bridge's
  };
  ASSERT_EQ(uplink_->Inject(0, frames.data(), 4), 4u);
  rte_mbuf* got[8];
  ASSERT_EQ(rte_eth_rx_burst(uplink_->eth_port(), 0, got, 8), 1);
  EXPECT_EQ(Bytes(got[0]), inner);  // not VXLAN: left to the bridge
  rte_pktmbuf_free(got[0]);
  ASSERT_EQ(rte_eth_rx_burst(eth_, 0, got, 8), 1);
  EXPECT_EQ(Bytes(got[0]), inner);
  EXPECT_EQ(got[0]->port, eth_);
  rte_pktmbuf_free(got[0]);
  const DecapTotals decap = (*demux)->Sums();
  EXPECT_EQ(decap[size_t(DecapCounter::k_packets)], 1u);
  EXPECT_EQ(decap[size_t(DecapCounter::k_unknown_vni)], 1u);
  EXPECT_EQ(decap[size_t(DecapCounter::k_bad_flags)], 1u);
  EXPECT_EQ(device_->VtepSums(0)[size_t(VtepCounter::k_rx_packets)], 1u);
  // learn=1 (the default): the source is noted with its VTEP, once.
  LearnNote notes[4];
  ASSERT_EQ(device_->DrainLearnNotes(notes, 4), 1u);
  EXPECT_EQ(notes[0].mac, MacOf(inner, 6));
  EXPECT_EQ(notes[0].vtep_ip, kRemote);
  demux->reset();
}

}  // namespace
}  // namespace hvswitch
