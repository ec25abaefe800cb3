// The egress offload matrix on real mbufs: every frame state a guest can send (complete,
// partial, bad checksum, TCP super-frame) x what the destinations accept (nothing,
// checksums, checksums and TSO) x IPv4/IPv6 x TCP/UDP x tagged/untagged x with and without
// IPv4 options / IPv6 extension headers. The bytes and offload requests of every frame that
// leaves are checked against an independent RFC 1071 sum and the original payload.
#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "offload/egress_offload.h"
#include "tests/test_frames.h"

namespace hvswitch {
namespace {

enum class Sent { kComplete, kPartial, kBad, kSuperFrame };
enum class Accepts { kNothing, kChecksums, kChecksumsAndTso };

constexpr uint16_t kMss = 1200;        // what the guest asked for
constexpr uint32_t kSuperPayload = 20000;
constexpr uint16_t kMtu = 1500;

rte_mempool* Pool() {
  static rte_mempool* pool =
      rte_pktmbuf_pool_create("egress_test", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  return pool;
}

// The frame as an mbuf chain of segments of at most `piece` bytes, like a PMD delivers.
rte_mbuf* ToChain(const std::vector<uint8_t>& bytes, uint32_t piece) {
  rte_mbuf* head = nullptr;
  for (uint32_t off = 0; off < bytes.size(); off += piece) {
    const uint32_t len = std::min<uint32_t>(piece, bytes.size() - off);
    rte_mbuf* m = rte_pktmbuf_alloc(Pool());
    EXPECT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(len)), bytes.data() + off, len);
    if (head == nullptr) {
      head = m;
    } else {
      EXPECT_EQ(rte_pktmbuf_chain(head, m), 0);
    }
  }
  return head;
}

std::vector<uint8_t> Bytes(const rte_mbuf* m) {
  std::vector<uint8_t> out(m->pkt_len);
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, out.data());
  if (p != out.data()) std::memcpy(out.data(), p, m->pkt_len);
  return out;
}

uint16_t Get16(const std::vector<uint8_t>& f, size_t at) {
  return static_cast<uint16_t>(f[at] << 8 | f[at + 1]);
}
uint32_t Get32(const std::vector<uint8_t>& f, size_t at) {
  return uint32_t{Get16(f, at)} << 16 | Get16(f, at + 2);
}

// True when the L4 checksum of `frame` (headers laid out as `b`) is right: the sum over
// the pseudo-header and the L4 bytes is all ones.
bool L4ChecksumVerifies(const std::vector<uint8_t>& frame, Built b, const FrameSpec& s) {
  b.bytes = frame;
  b.end = static_cast<uint32_t>(frame.size());
  std::vector<uint8_t> l4(frame.begin() + b.l4, frame.end());
  return Rfc1071Sum(l4, PseudoSum(b, s)) == 0xffff;
}

// The field holds the folded pseudo-header sum: what a device expects to complete.
bool L4ChecksumIsPartial(const std::vector<uint8_t>& frame, Built b, const FrameSpec& s) {
  b.bytes = frame;
  b.end = static_cast<uint32_t>(frame.size());
  return Get16(frame, b.l4 + (s.tcp ? 16 : 6)) == PseudoSum(b, s);
}

class EgressMatrixTest
    : public ::testing::TestWithParam<std::tuple<Sent, Accepts, bool, bool, bool, bool>> {};

TEST_P(EgressMatrixTest, EveryFrameLeavingIsRight) {
  auto [sent, accepts, ipv6, tcp, tagged, options] = GetParam();
  const FrameSpec spec{ipv6, tcp, tagged, options,
                       sent == Sent::kSuperFrame ? kSuperPayload : 300};
  Built good = Build(spec);
  good.bytes.resize(good.end);  // no Ethernet padding: a super-frame has none
  const uint32_t field = good.l4 + (tcp ? 16 : 6);
  // The last segment alone may carry PSH and FIN; every one keeps ACK.
  if (tcp) good.bytes[good.l4 + 13] = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG;
  Put16(good.bytes, field, 0);
  Put16(good.bytes, field, static_cast<uint16_t>(~Rfc1071Sum(
      std::vector<uint8_t>(good.bytes.begin() + good.l4, good.bytes.end()),
      PseudoSum(good, spec))));
  ASSERT_TRUE(L4ChecksumVerifies(good.bytes, good, spec));

  std::vector<uint8_t> bytes = good.bytes;
  uint64_t flags = RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN;
  if (sent == Sent::kBad) bytes[field] ^= 0x3c;
  if (sent == Sent::kPartial || sent == Sent::kSuperFrame) {
    Put16(bytes, field, static_cast<uint16_t>(PseudoSum(good, spec)));
    flags = RTE_MBUF_F_RX_L4_CKSUM_NONE;
  }
  if (sent == Sent::kSuperFrame) flags |= RTE_MBUF_F_RX_LRO;
  rte_mbuf* m = ToChain(bytes, 2000);
  m->ol_flags = flags;
  m->tso_segsz = sent == Sent::kSuperFrame ? kMss : 0;

  EgressCaps caps;
  caps.csum = accepts != Accepts::kNothing;
  caps.tso4 = caps.tso6 = accepts == Accepts::kChecksumsAndTso;
  caps.mtu = kMtu;
  const unsigned in_use = rte_mempool_in_use_count(Pool());
  rte_mbuf* out[kMaxSegments];
  const EgressOutcome outcome = ResolveEgressOffload(m, caps, out);

  if (sent == Sent::kSuperFrame && !tcp) {  // a super-frame that is not TCP: refused
    EXPECT_EQ(outcome.result, EgressOutcome::Result::kBadFrame);
    rte_pktmbuf_free(m);
    EXPECT_EQ(rte_mempool_in_use_count(Pool()), in_use - (bytes.size() + 1999) / 2000);
    return;
  }
  ASSERT_EQ(outcome.result, EgressOutcome::Result::kSent);
  const bool leave_csum = caps.csum && !(ipv6 && options);
  std::vector<uint8_t> payload;
  uint32_t expected_seq = tcp ? Get32(bytes, good.l4 + 4) : 0;
  for (uint16_t i = 0; i < outcome.nb; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i << " of " << outcome.nb);
    const std::vector<uint8_t> f = Bytes(out[i]);
    const uint64_t tx = out[i]->ol_flags;
    switch (sent) {
      case Sent::kComplete:
      case Sent::kBad:
        EXPECT_EQ(outcome.nb, 1);
        EXPECT_EQ(f, bytes);  // as sent: a bad checksum is never "fixed"
        EXPECT_EQ(tx & RTE_MBUF_F_TX_L4_MASK, 0u);
        break;
      case Sent::kPartial:
        EXPECT_EQ(outcome.nb, 1);
        if (leave_csum) {
          EXPECT_EQ(f, bytes);  // the field still holds the pseudo-header sum
          EXPECT_EQ(tx & RTE_MBUF_F_TX_L4_MASK,
                    tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM);
          EXPECT_NE(tx & (ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4), 0u);
          EXPECT_EQ(out[i]->l2_len, good.l3);
          EXPECT_EQ(out[i]->l3_len, good.l4 - good.l3);
        } else {
          EXPECT_EQ(f, good.bytes);  // completed here
          EXPECT_EQ(tx & RTE_MBUF_F_TX_L4_MASK, 0u);
        }
        break;
      case Sent::kSuperFrame: {
        const uint32_t headers = good.l4 + 20;
        if (accepts == Accepts::kChecksumsAndTso && !(ipv6 && options)) {
          EXPECT_EQ(outcome.nb, 1);
          EXPECT_EQ(f, bytes);  // whole, for the destination to segment
          EXPECT_NE(tx & RTE_MBUF_F_TX_TCP_SEG, 0u);
          EXPECT_EQ(out[i]->tso_segsz, std::min<uint32_t>(kMss, kMtu - (headers - good.l3)));
          EXPECT_EQ(out[i]->l4_len, 20);
          break;
        }
        // Segments: at most the MTU, headers as sent but for lengths, sequence, flags and
        // checksums; together they carry the payload in order.
        EXPECT_LE(f.size() - good.l3, kMtu);
        EXPECT_EQ(tx & RTE_MBUF_F_TX_TCP_SEG, 0u);
        ASSERT_GT(f.size(), headers);
        EXPECT_TRUE(std::equal(f.begin(), f.begin() + good.l3, bytes.begin()));
        if (ipv6) {
          EXPECT_EQ(Get16(f, good.l3 + 4), f.size() - good.l3 - 40);
          EXPECT_TRUE(std::equal(f.begin() + good.l3 + 40, f.begin() + good.l4,
                                 bytes.begin() + good.l3 + 40));
        } else {
          EXPECT_EQ(Get16(f, good.l3 + 2), f.size() - good.l3);
          std::vector<uint8_t> ip(f.begin() + good.l3, f.begin() + good.l4);
          EXPECT_EQ(Rfc1071Sum(ip), 0xffffu) << "IPv4 header checksum";
        }
        EXPECT_EQ(Get32(f, good.l4 + 4), expected_seq);
        const uint32_t seg_payload = static_cast<uint32_t>(f.size()) - headers;
        expected_seq += seg_payload;
        const bool last = i + 1 == outcome.nb;
        EXPECT_EQ(f[good.l4 + 13], last ? bytes[good.l4 + 13] : RTE_TCP_ACK_FLAG);
        if (!last) {
          EXPECT_EQ(seg_payload, std::min<uint32_t>(kMss, kMtu - (headers - good.l3)));
        }
        if (leave_csum) {
          EXPECT_TRUE(L4ChecksumIsPartial(f, good, spec));
          EXPECT_EQ(tx & RTE_MBUF_F_TX_L4_MASK, RTE_MBUF_F_TX_TCP_CKSUM);
        } else {
          EXPECT_TRUE(L4ChecksumVerifies(f, good, spec));
          EXPECT_EQ(tx & RTE_MBUF_F_TX_L4_MASK, 0u);
        }
        payload.insert(payload.end(), f.begin() + headers, f.end());
        break;
      }
    }
  }
  if (sent == Sent::kSuperFrame && !(accepts == Accepts::kChecksumsAndTso && !(ipv6 && options))) {
    EXPECT_GT(outcome.nb, 1);
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), bytes.begin() + good.l4 + 20,
                           bytes.end()) &&
                payload.size() == bytes.size() - good.l4 - 20)
        << "segments carry the payload whole and in order";
  }
  for (uint16_t i = 0; i < outcome.nb; ++i) rte_pktmbuf_free(out[i]);
  EXPECT_EQ(rte_mempool_in_use_count(Pool()), in_use - (bytes.size() + 1999) / 2000)
      << "every mbuf of the frame and its segments returned";
}

std::string Name(const ::testing::TestParamInfo<EgressMatrixTest::ParamType>& info) {
  auto [sent, accepts, ipv6, tcp, tagged, options] = info.param;
  const char* sent_names[] = {"Complete", "Partial", "Bad", "Super"};
  const char* accepts_names[] = {"ToPlain", "ToCsum", "ToTso"};
  return std::string(sent_names[static_cast<int>(sent)]) +
         accepts_names[static_cast<int>(accepts)] + (ipv6 ? "V6" : "V4") +
         (tcp ? "Tcp" : "Udp") + (tagged ? "Tagged" : "") + (options ? "Opts" : "");
}

INSTANTIATE_TEST_SUITE_P(
    AllStates, EgressMatrixTest,
    ::testing::Combine(::testing::Values(Sent::kComplete, Sent::kPartial, Sent::kBad,
                                         Sent::kSuperFrame),
                       ::testing::Values(Accepts::kNothing, Accepts::kChecksums,
                                         Accepts::kChecksumsAndTso),
                       ::testing::Bool(), ::testing::Bool(), ::testing::Bool(),
                       ::testing::Bool()),
    Name);

TEST(EgressOffloadTest, BadRequestsAreRefusedAndTheFrameKept) {
  Built b = Build({false, true, false, false, 100});
  b.bytes.resize(b.end);
  // A partial checksum on a frame without TCP/UDP (EtherType not IP).
  std::vector<uint8_t> not_ip = b.bytes;
  Put16(not_ip, 12, 0x88b5);
  rte_mbuf* m = ToChain(not_ip, 2000);
  m->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_NONE;
  rte_mbuf* out[kMaxSegments];
  EXPECT_EQ(ResolveEgressOffload(m, {}, out).result, EgressOutcome::Result::kBadFrame);
  EXPECT_EQ(Bytes(m), not_ip);
  rte_pktmbuf_free(m);
  // A super-frame whose segment size is 0.
  Built big = Build({false, true, false, false, 5000});
  big.bytes.resize(big.end);
  m = ToChain(big.bytes, 2000);
  m->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_NONE | RTE_MBUF_F_RX_LRO;
  m->tso_segsz = 0;
  EXPECT_EQ(ResolveEgressOffload(m, {}, out).result, EgressOutcome::Result::kBadFrame);
  // An MTU with no room for a segment's payload.
  m->tso_segsz = 1000;
  EgressCaps tiny;
  tiny.mtu = 60;
  EXPECT_EQ(ResolveEgressOffload(m, tiny, out).result, EgressOutcome::Result::kTooSmall);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace hvswitch
