// Header parsing and software checksums (offload/), without EAL: every IP/L4/tag/option
// combination, the bad inputs a guest or the wire can send, and the sums checked against
// an independent RFC 1071 implementation and DPDK's own verifiers.
// The verify helpers are experimental in DPDK 22.11; the test only reads with them.
#define ALLOW_EXPERIMENTAL_API
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <gtest/gtest.h>

#include <cstring>
#include <tuple>
#include <vector>

#include "offload/checksum.h"
#include "offload/header_layout.h"
#include "offload/offload_decision.h"
#include "tests/test_frames.h"

namespace hvswitch {
namespace {

TEST(ChecksumTest, RawSumMatchesTheRfc1071Example) {
  // RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
  const uint8_t bytes[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(rte_be_to_cpu_16(rte_raw_cksum(bytes, sizeof(bytes))), 0xddf2);
  EXPECT_EQ(Rfc1071Sum({bytes, bytes + sizeof(bytes)}), 0xddf2u);
}

// RFC 1624 (incremental update, eqn. 3: HC' = ~(~HC + ~m + m')): its section 4 example,
// and every checksum FillL4Checksum writes after one 16-bit word of a frame changed equals
// the incremental update of the one before (a second, independent way to the same sum).
uint16_t Rfc1624Update(uint16_t hc, uint16_t m, uint16_t m_new) {
  uint32_t sum = uint32_t{static_cast<uint16_t>(~hc)} + static_cast<uint16_t>(~m) + m_new;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

TEST(ChecksumTest, Rfc1624IncrementalUpdateAgrees) {
  // Section 4: HC 0xdd2f, a field 0x5555 becomes 0x3285: HC' 0x0000 (eqn. 3 never gives
  // the -0 of eqn. 2's 0xffff).
  EXPECT_EQ(Rfc1624Update(0xdd2f, 0x5555, 0x3285), 0x0000);
  for (bool ipv6 : {false, true}) {
    for (bool tcp : {false, true}) {
      FrameSpec spec{ipv6, tcp, false, true};
      Built b = Build(spec);
      HeaderLayout layout = ParseHeaders(b.bytes.data(), b.bytes.size(), b.bytes.size());
      ASSERT_TRUE(FillL4Checksum(b.bytes.data(), layout));
      const uint32_t field = b.l4 + (tcp ? 16 : 6);
      for (uint32_t at = b.l4 + (tcp ? 20 : 8); at + 1 < b.end; at += 2) {
        const uint16_t hc = static_cast<uint16_t>(b.bytes[field] << 8 | b.bytes[field + 1]);
        const uint16_t m = static_cast<uint16_t>(b.bytes[at] << 8 | b.bytes[at + 1]);
        const uint16_t m_new = static_cast<uint16_t>(m * 31 + at);
        Put16(b.bytes, at, m_new);
        ASSERT_TRUE(FillL4Checksum(b.bytes.data(), layout));
        uint16_t want = Rfc1624Update(hc, m, m_new);
        if (!tcp && want == 0) want = 0xffff;  // UDP sends a computed 0 as 0xffff
        const uint16_t got = static_cast<uint16_t>(b.bytes[field] << 8 | b.bytes[field + 1]);
        // One's complement has two zeros: 0x0000 and 0xffff are the same sum.
        EXPECT_TRUE(got == want || (got == 0xffff && want == 0) || (got == 0 && want == 0xffff))
            << "ipv6 " << ipv6 << " tcp " << tcp << " word at " << at;
      }
    }
  }
}

class OffloadMatrixTest : public ::testing::TestWithParam<std::tuple<bool, bool, bool, bool>> {
 protected:
  FrameSpec Spec() const {
    auto [ipv6, tcp, tagged, options] = GetParam();
    return {ipv6, tcp, tagged, options};
  }
};

TEST_P(OffloadMatrixTest, ParsesEveryHeader) {
  FrameSpec s = Spec();
  Built b = Build(s);
  HeaderLayout layout = ParseHeaders(b.bytes.data(), b.bytes.size(), b.bytes.size());
  ASSERT_EQ(layout.error, HeaderError::kNone);
  EXPECT_EQ(layout.tagged, s.tagged);
  EXPECT_EQ(layout.l3, s.ipv6 ? L3Type::kIpv6 : L3Type::kIpv4);
  EXPECT_EQ(layout.l4, s.tcp ? L4Type::kTcp : L4Type::kUdp);
  EXPECT_EQ(layout.l3_offset(), b.l3);
  EXPECT_EQ(layout.l4_offset(), b.l4);
  EXPECT_EQ(layout.l4_end, b.end);  // padding after the IP packet excluded
}

TEST_P(OffloadMatrixTest, FilledChecksumVerifies) {
  FrameSpec s = Spec();
  Built b = Build(s);
  HeaderLayout layout = ParseHeaders(b.bytes.data(), b.bytes.size(), b.bytes.size());
  ASSERT_TRUE(FillL4Checksum(b.bytes.data(), layout));
  std::vector<uint8_t> l4(b.bytes.begin() + b.l4, b.bytes.begin() + b.end);
  EXPECT_EQ(Rfc1071Sum(l4, PseudoSum(b, s)), 0xffffu);  // a correct checksum sums to ones
  if (!s.ipv6) {
    EXPECT_EQ(rte_ipv4_udptcp_cksum_verify(
                  reinterpret_cast<const rte_ipv4_hdr*>(b.bytes.data() + b.l3),
                  b.bytes.data() + b.l4), 0);
  } else if (!s.options) {
    EXPECT_EQ(rte_ipv6_udptcp_cksum_verify(
                  reinterpret_cast<const rte_ipv6_hdr*>(b.bytes.data() + b.l3),
                  b.bytes.data() + b.l4), 0);
  }
}

TEST_P(OffloadMatrixTest, PartialChecksumCompletesToTheSameValue) {
  FrameSpec s = Spec();
  Built full = Build(s), partial = Build(s);
  HeaderLayout layout = ParseHeaders(full.bytes.data(), full.bytes.size(), full.bytes.size());
  ASSERT_TRUE(FillL4Checksum(full.bytes.data(), layout));
  // What a virtio guest sends: the folded pseudo-header sum in the field.
  const uint32_t field = partial.l4 + (s.tcp ? 16 : 6);
  Put16(partial.bytes, field, static_cast<uint16_t>(PseudoSum(partial, s)));
  ASSERT_TRUE(CompletePartialChecksum(partial.bytes.data(), partial.end, partial.l4,
                                      s.tcp ? 16 : 6, !s.tcp));
  EXPECT_EQ(partial.bytes, full.bytes);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, OffloadMatrixTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool(), ::testing::Bool()));

TEST(HeaderLayoutTest, BadInputIsReportedNotTrusted) {
  Built b = Build({false, true, false, false});
  const uint32_t size = static_cast<uint32_t>(b.bytes.size());
  // Cut anywhere inside the headers: truncated, never a read past the bytes.
  for (uint32_t cut = 0; cut < b.l4 + 20; ++cut) {
    HeaderLayout l = ParseHeaders(b.bytes.data(), cut, cut);
    EXPECT_NE(l.error, HeaderError::kNone) << cut;
  }
  std::vector<uint8_t> f = b.bytes;
  Put16(f, b.l3 + 2, static_cast<uint16_t>(size));  // IPv4 total length past the frame
  EXPECT_EQ(ParseHeaders(f.data(), size, size).error, HeaderError::kBadLength);
  f = b.bytes;
  f[b.l3] = 0x44;  // IHL 16 bytes
  EXPECT_EQ(ParseHeaders(f.data(), size, size).error, HeaderError::kBadHeader);
  f = b.bytes;
  f[b.l4 + 12] = 0x40;  // TCP data offset 16 bytes
  EXPECT_EQ(ParseHeaders(f.data(), size, size).error, HeaderError::kBadHeader);
  f = b.bytes;
  f[b.l4 + 12] = 0xf0;  // TCP header of 60 bytes in a 100-byte payload: fits, fine
  EXPECT_EQ(ParseHeaders(f.data(), size, size).error, HeaderError::kNone);
  Built v6 = Build({true, false, false, true});
  f = v6.bytes;
  f[v6.l3 + 41] = 200;  // an extension header longer than the packet
  EXPECT_EQ(ParseHeaders(f.data(), f.size(), f.size()).error, HeaderError::kTruncated);
  // Extension headers running past the first segment (found by the fuzzer): truncated,
  // even when what follows is no TCP/UDP header.
  f = v6.bytes;
  f[v6.l3 + 40] = 59;  // hop-by-hop options of 16 bytes, then "no next header"
  f[v6.l3 + 41] = 1;
  EXPECT_EQ(ParseHeaders(f.data(), v6.l3 + 48, f.size()).error, HeaderError::kTruncated);
  EXPECT_EQ(ParseHeaders(f.data(), f.size(), f.size()).error, HeaderError::kNone);
}

TEST(HeaderLayoutTest, FragmentsAndNonIpHaveNoL4) {
  Built b = Build({false, false, false, false});
  std::vector<uint8_t> f = b.bytes;
  Put16(f, b.l3 + 6, 0x2000);  // more fragments
  HeaderLayout l = ParseHeaders(f.data(), f.size(), f.size());
  EXPECT_EQ(l.error, HeaderError::kNone);
  EXPECT_EQ(l.l4, L4Type::kOther);
  EXPECT_FALSE(FillL4Checksum(f.data(), l));
  f = b.bytes;
  Put16(f, 12, 0x88b5);
  l = ParseHeaders(f.data(), f.size(), f.size());
  EXPECT_EQ(l.l3, L3Type::kOther);
  EXPECT_FALSE(FillL4Checksum(f.data(), l));
}

TEST(ChecksumTest, PartialChecksumMetadataOutsideTheFrameIsRefused) {
  Built b = Build({false, true, false, false});
  std::vector<uint8_t> before = b.bytes;
  EXPECT_FALSE(CompletePartialChecksum(b.bytes.data(), b.end, b.end, 0, false));
  EXPECT_FALSE(CompletePartialChecksum(b.bytes.data(), b.end, b.l4, b.end - b.l4 - 1, false));
  EXPECT_FALSE(CompletePartialChecksum(b.bytes.data(), b.end, b.l4, 0xffffffffu, false));
  EXPECT_FALSE(CompletePartialChecksum(b.bytes.data(), b.end, 0xfffffff0u, 16, false));
  EXPECT_EQ(b.bytes, before);
  EXPECT_TRUE(CompletePartialChecksum(b.bytes.data(), b.end, b.l4, b.end - b.l4 - 2, false));
}

}  // namespace
}  // namespace hvswitch

namespace hvswitch {
namespace {

// The checksum rules over every state, destination and frame kind: the bytes that leave
// are the sender's, or a correct checksum, never a "fixed" bad one.
class ChecksumDecisionTest
    : public ::testing::TestWithParam<std::tuple<ChecksumState, bool, bool, bool, bool>> {};

TEST_P(ChecksumDecisionTest, BytesLeavingAreRightForTheDestination) {
  auto [state, dest_csum, ipv6, tcp, tagged] = GetParam();
  for (bool options : {false, true}) {
    SCOPED_TRACE(options ? "with IP options / extension headers" : "plain");
    FrameSpec spec{ipv6, tcp, tagged, options};
    Built sent = Build(spec), good = Build(spec);
    HeaderLayout layout = ParseHeaders(good.bytes.data(), good.bytes.size(), good.bytes.size());
    ASSERT_TRUE(FillL4Checksum(good.bytes.data(), layout));
    const uint32_t field = sent.l4 + (tcp ? 16 : 6);
    switch (state) {
      case ChecksumState::kGood:
      case ChecksumState::kUnknown:
        sent.bytes = good.bytes;
        break;
      case ChecksumState::kBad:
        sent.bytes = good.bytes;
        sent.bytes[field] ^= 0x5a;
        break;
      case ChecksumState::kPartial:
        Put16(sent.bytes, field, static_cast<uint16_t>(PseudoSum(sent, spec)));
        break;
    }
    std::vector<uint8_t> out = sent.bytes;
    EgressCaps dest;
    dest.csum = dest_csum;
    OffloadAction action = DecideOffload({state, false, 0}, layout, sent.bytes.size(), dest);
    switch (action) {
      case OffloadAction::kAsIs:
      case OffloadAction::kPassPartial:
        break;
      case OffloadAction::kCompleteChecksum:
        ASSERT_TRUE(FillL4Checksum(out.data(), layout));
        break;
      default:
        FAIL() << "a plain TCP/UDP frame is neither segmented nor dropped";
    }
    // The vhost library rewrites the pseudo-header sum of IPv6 with extension headers
    // wrongly: such frames are completed here even for a capable destination.
    if (state == ChecksumState::kPartial && dest_csum && !(ipv6 && options)) {
      EXPECT_EQ(action, OffloadAction::kPassPartial);
      EXPECT_EQ(out, sent.bytes);  // the destination completes it
    } else if (state == ChecksumState::kPartial) {
      EXPECT_EQ(action, OffloadAction::kCompleteChecksum);
      EXPECT_EQ(out, good.bytes);  // completed here
    } else {
      EXPECT_EQ(action, OffloadAction::kAsIs);
      EXPECT_EQ(out, sent.bytes);  // bad stays bad, good stays good
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, ChecksumDecisionTest,
    ::testing::Combine(::testing::Values(ChecksumState::kUnknown, ChecksumState::kGood,
                                         ChecksumState::kBad, ChecksumState::kPartial),
                       ::testing::Bool(), ::testing::Bool(), ::testing::Bool(),
                       ::testing::Bool()));

TEST(ChecksumDecisionTest, PartialChecksumWithoutUsableHeadersIsDropped) {
  HeaderLayout not_ip;
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial}, not_ip, 60, {}), OffloadAction::kDrop);
  HeaderLayout truncated;
  truncated.error = HeaderError::kTruncated;
  truncated.l4 = L4Type::kTcp;
  EgressCaps capable{true, true, true, 9000};
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial}, truncated, 60, capable),
            OffloadAction::kDrop);
  EXPECT_EQ(DecideOffload({ChecksumState::kBad}, not_ip, 60, {}), OffloadAction::kAsIs);
}

// Super-frames: passed whole only where every destination segments (and completes
// checksums); cut here otherwise; already small enough, only their checksum is pending.
TEST(SegmentationDecisionTest, SuperFramesGoWholeOnlyToPortsThatSegment) {
  for (bool ipv6 : {false, true}) {
    for (bool options : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "ipv6 " << ipv6 << " options " << options);
      FrameSpec spec{ipv6, true, false, options, 4000};
      Built b = Build(spec);
      const uint32_t len = b.end;  // no padding on a super-frame
      HeaderLayout layout = ParseHeaders(b.bytes.data(), len, len);
      ASSERT_EQ(layout.error, HeaderError::kNone);
      const FrameOffload super{ChecksumState::kPartial, true, 1448};
      const EgressCaps none{false, false, false, 1500};
      const EgressCaps csum_only{true, false, false, 1500};
      const EgressCaps tso{true, !ipv6, ipv6, 1500};
      const EgressCaps tso_wrong_family{true, ipv6, !ipv6, 1500};
      const EgressCaps tso_without_csum{false, true, true, 1500};
      EXPECT_EQ(DecideOffload(super, layout, len, none), OffloadAction::kSegment);
      EXPECT_EQ(DecideOffload(super, layout, len, csum_only), OffloadAction::kSegment);
      EXPECT_EQ(DecideOffload(super, layout, len, tso_wrong_family), OffloadAction::kSegment);
      EXPECT_EQ(DecideOffload(super, layout, len, tso_without_csum), OffloadAction::kSegment);
      EXPECT_EQ(DecideOffload(super, layout, len, tso),
                ipv6 && options ? OffloadAction::kSegment : OffloadAction::kPassSuperFrame);
      // Fits the destination MTU as it is: a partial checksum like any other.
      const EgressCaps jumbo{false, false, false, 9000};
      EXPECT_EQ(DecideOffload(super, layout, len, jumbo), OffloadAction::kCompleteChecksum);
    }
  }
}

TEST(SegmentationDecisionTest, BadSuperFramesAreDropped) {
  const EgressCaps caps{true, true, true, 1500};
  Built udp = Build({false, false, false, false, 4000});
  HeaderLayout udp_layout = ParseHeaders(udp.bytes.data(), udp.end, udp.end);
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial, true, 1448}, udp_layout, udp.end, caps),
            OffloadAction::kDrop)
      << "a super-frame that is not TCP";
  Built tcp = Build({false, true, false, false, 4000});
  HeaderLayout layout = ParseHeaders(tcp.bytes.data(), tcp.end, tcp.end);
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial, true, 0}, layout, tcp.end, caps),
            OffloadAction::kDrop)
      << "segment size 0";
  for (uint16_t nonsense : {1, 7}) {
    for (const EgressCaps& to : {caps, EgressCaps{}}) {  // passed whole or cut here
      EXPECT_EQ(DecideOffload({ChecksumState::kPartial, true, nonsense}, layout, tcp.end, to),
                OffloadAction::kDrop)
          << "segment size " << nonsense << ": no TCP stack sends that";
    }
  }
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial, true, kMinSegmentSize}, layout, tcp.end,
                          caps),
            OffloadAction::kPassSuperFrame);
  HeaderLayout padded = ParseHeaders(tcp.bytes.data(), tcp.bytes.size(), tcp.bytes.size());
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial, true, 1448}, padded, tcp.bytes.size(), caps),
            OffloadAction::kDrop)
      << "a frame longer than its IP header says";
  HeaderLayout truncated = ParseHeaders(tcp.bytes.data(), 30, tcp.end);
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial, true, 1448}, truncated, tcp.end, caps),
            OffloadAction::kDrop)
      << "headers that do not parse";
  EXPECT_EQ(DecideOffload({ChecksumState::kPartial, true, 1448}, layout, tcp.end, caps),
            OffloadAction::kPassSuperFrame);
}

}  // namespace
}  // namespace hvswitch
