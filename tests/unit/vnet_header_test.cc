// The host tap's virtio-net header <-> mbuf metadata mapping (ports/host_tap/
// vnet_header.h), without EAL or a kernel: what each header the kernel writes becomes for
// offload/, what each Tx request becomes for the kernel, and the pseudo-header seed
// checked against an independent RFC 768/793/8200 sum (tests/test_frames.h). Also the
// type=host port spec.
#include <rte_mbuf_core.h>

#include <gtest/gtest.h>

#include <vector>

#include "offload/header_layout.h"
#include "ports/host_tap/vnet_header.h"
#include "ports/port_spec.h"
#include "tests/test_frames.h"

namespace hvswitch {
namespace {

HeaderLayout LayoutOf(const Built& b) {
  return ParseHeaders(b.bytes.data(), static_cast<uint32_t>(b.bytes.size()), b.end);
}

VnetHeader NeedsCsum(const Built& b, bool tcp) {
  VnetHeader hdr;
  hdr.flags = kVnetNeedsCsum;
  hdr.csum_start = static_cast<uint16_t>(b.l4);
  hdr.csum_offset = tcp ? 16 : 6;
  return hdr;
}

VnetHeader Gso(const Built& b, uint8_t type, uint16_t mss) {
  VnetHeader hdr = NeedsCsum(b, true);
  hdr.gso_type = type;
  hdr.gso_size = mss;
  hdr.hdr_len = static_cast<uint16_t>(b.l4 + 20);
  return hdr;
}

constexpr uint64_t kCsumMask = RTE_MBUF_F_RX_L4_CKSUM_MASK;

TEST(VnetRxTest, NoRequestIsUnknown) {
  const Built b = Build({.ipv6 = false, .tcp = true, .tagged = false, .options = false});
  const RxOffload rx = DecodeRxHeader(VnetHeader{}, LayoutOf(b));
  EXPECT_EQ(rx.fix, RxOffload::Fix::kNone);
  EXPECT_EQ(rx.ol_flags, 0u);
}

TEST(VnetRxTest, DataValidIsGood) {
  const Built b = Build({.ipv6 = true, .tcp = false, .tagged = false, .options = false});
  VnetHeader hdr;
  hdr.flags = kVnetDataValid;
  const RxOffload rx = DecodeRxHeader(hdr, LayoutOf(b));
  EXPECT_EQ(rx.fix, RxOffload::Fix::kNone);
  EXPECT_EQ(rx.ol_flags, RTE_MBUF_F_RX_L4_CKSUM_GOOD);
}

// A partial checksum where offload/ looks for it passes as partial (the vhost PMD's
// representation), for every header kind.
TEST(VnetRxTest, PartialChecksumAtTheL4HeaderIsPartial) {
  for (bool ipv6 : {false, true}) {
    for (bool tcp : {false, true}) {
      for (bool tagged : {false, true}) {
        for (bool options : {false, true}) {
          const Built b = Build({ipv6, tcp, tagged, options});
          const RxOffload rx = DecodeRxHeader(NeedsCsum(b, tcp), LayoutOf(b));
          EXPECT_EQ(rx.fix, RxOffload::Fix::kNone) << ipv6 << tcp << tagged << options;
          EXPECT_EQ(rx.ol_flags, RTE_MBUF_F_RX_L4_CKSUM_NONE);
        }
      }
    }
  }
}

// Elsewhere (a tunnel's inner header, a protocol hvswitch does not parse), offload/ would
// complete the wrong field: the driver completes it where the kernel said.
TEST(VnetRxTest, PartialChecksumElsewhereIsCompletedHere) {
  const Built b = Build({.ipv6 = false, .tcp = false, .tagged = false, .options = false});
  VnetHeader hdr = NeedsCsum(b, false);
  hdr.csum_start = static_cast<uint16_t>(b.l4 + 8);  // e.g. VXLAN's inner frame
  EXPECT_EQ(DecodeRxHeader(hdr, LayoutOf(b)).fix, RxOffload::Fix::kCompleteHere);
  hdr = NeedsCsum(b, false);
  hdr.csum_offset = 16;  // TCP's field in a UDP header
  EXPECT_EQ(DecodeRxHeader(hdr, LayoutOf(b)).fix, RxOffload::Fix::kCompleteHere);
  std::vector<uint8_t> icmp = b.bytes;
  icmp[b.l3 + 9] = 1;  // not TCP/UDP
  const HeaderLayout layout =
      ParseHeaders(icmp.data(), static_cast<uint32_t>(icmp.size()), b.end);
  EXPECT_EQ(DecodeRxHeader(NeedsCsum(b, false), layout).fix, RxOffload::Fix::kCompleteHere);
}

TEST(VnetRxTest, TcpSuperFrameIsLroWithItsSegmentSize) {
  for (bool ipv6 : {false, true}) {
    const Built b = Build({.ipv6 = ipv6, .tcp = true, .tagged = false, .options = false,
                           .payload = 60000});
    const uint8_t type = ipv6 ? kVnetGsoTcpv6 : kVnetGsoTcpv4;
    for (uint8_t ecn : {uint8_t{0}, kVnetGsoEcn}) {
      const RxOffload rx = DecodeRxHeader(Gso(b, type | ecn, 1448), LayoutOf(b));
      EXPECT_EQ(rx.fix, RxOffload::Fix::kNone) << ipv6;
      EXPECT_EQ(rx.ol_flags, RTE_MBUF_F_RX_LRO | RTE_MBUF_F_RX_L4_CKSUM_NONE);
      EXPECT_EQ(rx.tso_segsz, 1448);
    }
  }
}

// A super-frame is forwarded only as what it is: anything else is dropped, never passed
// on as a plain frame of 64 KB.
TEST(VnetRxTest, SuperFramesHvswitchCannotDescribeAreDropped) {
  const Built v4 = Build({.ipv6 = false, .tcp = true, .tagged = false, .options = false,
                          .payload = 3000});
  const Built udp = Build({.ipv6 = false, .tcp = false, .tagged = false, .options = false,
                           .payload = 3000});
  EXPECT_EQ(DecodeRxHeader(Gso(v4, kVnetGsoTcpv6, 1448), LayoutOf(v4)).fix,
            RxOffload::Fix::kDrop);  // IP version disagrees
  EXPECT_EQ(DecodeRxHeader(Gso(v4, kVnetGsoTcpv4, 0), LayoutOf(v4)).fix, RxOffload::Fix::kDrop);
  VnetHeader no_csum = Gso(v4, kVnetGsoTcpv4, 1448);
  no_csum.flags = 0;
  EXPECT_EQ(DecodeRxHeader(no_csum, LayoutOf(v4)).fix, RxOffload::Fix::kDrop);
  VnetHeader ufo = NeedsCsum(udp, false);
  ufo.gso_type = kVnetGsoUdp;
  ufo.gso_size = 1400;
  EXPECT_EQ(DecodeRxHeader(ufo, LayoutOf(udp)).fix, RxOffload::Fix::kDrop);
  EXPECT_EQ(DecodeRxHeader(Gso(udp, kVnetGsoTcpv4, 1400), LayoutOf(udp)).fix,
            RxOffload::Fix::kDrop);  // not TCP
}

TEST(VnetTxTest, NoRequestIsAnEmptyHeader) {
  VnetHeader hdr;
  hdr.flags = 7;
  ASSERT_TRUE(EncodeTxHeader({}, hdr));
  EXPECT_EQ(hdr.flags, 0);
  EXPECT_EQ(hdr.gso_type, kVnetGsoNone);
  EXPECT_EQ(hdr.csum_start, 0);
}

TEST(VnetTxTest, ChecksumRequestsNameTheField) {
  VnetHeader hdr;
  ASSERT_TRUE(EncodeTxHeader({RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM, 14, 20, 20, 0}, hdr));
  EXPECT_EQ(hdr.flags, kVnetNeedsCsum);
  EXPECT_EQ(hdr.csum_start, 34);
  EXPECT_EQ(hdr.csum_offset, 16);
  EXPECT_EQ(hdr.gso_type, kVnetGsoNone);
  ASSERT_TRUE(EncodeTxHeader({RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_UDP_CKSUM, 18, 56, 8, 0}, hdr));
  EXPECT_EQ(hdr.csum_start, 74);
  EXPECT_EQ(hdr.csum_offset, 6);
  EXPECT_FALSE(EncodeTxHeader({RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_SCTP_CKSUM, 14, 20, 12, 0},
                              hdr));
}

TEST(VnetTxTest, TsoBecomesGsoWithTheChecksum) {
  VnetHeader hdr;
  ASSERT_TRUE(EncodeTxHeader({RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM |
                                  RTE_MBUF_F_TX_TCP_SEG, 14, 20, 32, 1448}, hdr));
  EXPECT_EQ(hdr.flags, kVnetNeedsCsum);
  EXPECT_EQ(hdr.gso_type, kVnetGsoTcpv4);
  EXPECT_EQ(hdr.gso_size, 1448);
  EXPECT_EQ(hdr.hdr_len, 66);
  EXPECT_EQ(hdr.csum_start, 34);
  EXPECT_EQ(hdr.csum_offset, 16);
  // TCP_SEG alone implies the TCP checksum (DPDK's convention).
  ASSERT_TRUE(EncodeTxHeader({RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_SEG, 14, 40, 20, 1428}, hdr));
  EXPECT_EQ(hdr.gso_type, kVnetGsoTcpv6);
  EXPECT_EQ(hdr.flags, kVnetNeedsCsum);
  EXPECT_FALSE(EncodeTxHeader({RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_SEG, 14, 20, 20, 0}, hdr));
  EXPECT_FALSE(EncodeTxHeader({RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_SEG, 14, 20, 0, 1448}, hdr));
  EXPECT_FALSE(EncodeTxHeader({RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_SEG |
                                   RTE_MBUF_F_TX_UDP_CKSUM, 14, 20, 20, 1448}, hdr));
}

// What hvswitch writes is what it would read back: a frame that crosses the kernel and
// returns (routed or bridged there) keeps its meaning.
TEST(VnetTxTest, TheKernelsEchoDecodesToTheSameRequest) {
  for (bool ipv6 : {false, true}) {
    const Built b = Build({.ipv6 = ipv6, .tcp = true, .tagged = true, .options = false,
                           .payload = 9000});
    const HeaderLayout layout = LayoutOf(b);
    const uint64_t l3 = ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4;
    VnetHeader hdr;
    ASSERT_TRUE(EncodeTxHeader({l3 | RTE_MBUF_F_TX_TCP_SEG, layout.l2_len, layout.l3_len,
                                layout.l4_len, 1000}, hdr));
    RxOffload rx = DecodeRxHeader(hdr, layout);
    EXPECT_EQ(rx.ol_flags, RTE_MBUF_F_RX_LRO | RTE_MBUF_F_RX_L4_CKSUM_NONE);
    EXPECT_EQ(rx.tso_segsz, 1000);
    ASSERT_TRUE(EncodeTxHeader({l3 | RTE_MBUF_F_TX_TCP_CKSUM, layout.l2_len, layout.l3_len,
                                layout.l4_len, 0}, hdr));
    rx = DecodeRxHeader(hdr, layout);
    EXPECT_EQ(rx.fix, RxOffload::Fix::kNone);
    EXPECT_EQ(rx.ol_flags & kCsumMask, RTE_MBUF_F_RX_L4_CKSUM_NONE);
  }
}

// The seed is the pseudo-header sum with the full upper-layer length (what Linux's
// CHECKSUM_PARTIAL and tcp_gso_segment expect), whatever the field held before, IPv6
// extension headers and 802.1Q tags included.
TEST(VnetTxTest, SeedIsThePseudoHeaderSumWithTheFullLength) {
  for (bool ipv6 : {false, true}) {
    for (bool tcp : {false, true}) {
      for (bool options : {false, true}) {
        for (bool tso : {false, true}) {
          if (tso && !tcp) continue;
          const FrameSpec spec{ipv6, tcp, /*tagged=*/true, options, 5000};
          Built b = Build(spec);
          const HeaderLayout layout = LayoutOf(b);
          const uint32_t field = layout.l4_checksum_offset();
          b.bytes[field] = 0x12;  // whatever the sender left (DPDK's TSO seed has no length)
          b.bytes[field + 1] = 0x34;
          uint64_t flags = (ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4) |
                           (tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM);
          if (tso) flags |= RTE_MBUF_F_TX_TCP_SEG;
          const TxRequest request{flags, layout.l2_len, layout.l3_len, layout.l4_len,
                                  static_cast<uint16_t>(tso ? 1448 : 0)};
          ASSERT_TRUE(SeedPseudoHeader(b.bytes.data(), field + 2, request));
          const uint16_t want = static_cast<uint16_t>(PseudoSum(b, spec));
          const uint16_t got = static_cast<uint16_t>(b.bytes[field] << 8 | b.bytes[field + 1]);
          EXPECT_EQ(got, want) << ipv6 << tcp << options << tso;
        }
      }
    }
  }
}

TEST(VnetTxTest, SeedRefusesHeadersThatAreNotWhereTheRequestSays) {
  Built b = Build({.ipv6 = false, .tcp = true, .tagged = false, .options = false});
  const uint32_t field = b.l4 + 16;
  const TxRequest request{RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM, 14, 20, 20, 0};
  EXPECT_FALSE(SeedPseudoHeader(b.bytes.data(), field + 1, request));  // field cut off
  TxRequest wrong_l3 = request;
  wrong_l3.l3_len = 24;  // IHL says 20
  EXPECT_FALSE(SeedPseudoHeader(b.bytes.data(), field + 6, wrong_l3));
  b.bytes[14] = 0x75;  // neither IPv4 nor IPv6
  EXPECT_FALSE(SeedPseudoHeader(b.bytes.data(), field + 2, request));
}

TEST(HostPortSpecTest, ParsesAndWritesBack) {
  auto spec = ParsePortSpec("h0,type=host,iface=hvs0,netns=blue,queues=2,mtu=9000");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->driver_keys.Text("iface"), "hvs0");
  EXPECT_EQ(spec->driver_keys.Text("netns"), "blue");
  EXPECT_EQ(spec->driver_keys.Number("queues", 1), 2u);
  EXPECT_EQ(spec->Traits().endpoint, "blue:hvs0");
  auto again = ParsePortSpec(spec->ToString());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->ToString(), spec->ToString());
  EXPECT_EQ(again->driver->Devargs(*again, 3), "net_hvs_tap3,iface=hvs0,queues=2,netns=blue");
  auto path = ParsePortSpec("h0,type=host,iface=hvs0,netns=/proc/1/ns/net");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->driver_keys.Text("netns"), "/proc/1/ns/net");
}

TEST(HostPortSpecTest, RefusesWhatTheKernelOrDevargsWouldNotTake) {
  for (const char* text : {"h0,type=host", "h0,type=host,iface=", "h0,type=host,iface=a/b",
                           "h0,type=host,iface=way-too-long-name", "h0,type=host,iface=a:b",
                           "h0,type=host,iface=x,netns=..", "h0,type=host,iface=x,netns=a/b",
                           "h0,type=host,iface=x,path=/tmp/s",
                           "h0,type=vhost-user,path=/tmp/s,iface=x"}) {
    EXPECT_FALSE(ParsePortSpec(text).ok()) << text;
  }
}

}  // namespace
}  // namespace hvswitch
