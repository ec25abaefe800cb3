// What software offload emulation costs per frame: completing a guest's partial TCP
// checksum, and cutting a TCP super-frame into MTU-sized segments with their checksums,
// against leaving both to the destination (setting Tx flags). Frames of 64, 1500, 9000
// and 64 KB (a 64 KB frame is what a Linux guest's TSO sends), IPv4 (librte_gso) and IPv6
// (hvswitch's own copy segmentation).
//
//   offload_bench [--benchmark_* flags]    ns and cycles per frame, per segment, per byte
#include <benchmark/benchmark.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "offload/egress_offload.h"
#include "tests/test_frames.h"

namespace hvswitch {
namespace {

rte_mempool* pool = nullptr;

// A partial-checksum TCP frame of `size` bytes as a chain of 2 KB segments, as a PMD
// delivers it; a super-frame (segment size 1448) when `super`.
rte_mbuf* MakeFrame(bool ipv6, uint32_t size, bool super) {
  const uint32_t headers = 14 + (ipv6 ? 40 : 20) + 20;
  Built b = Build({ipv6, true, false, false, size - headers});
  b.bytes.resize(b.end);
  Put16(b.bytes, b.l4 + 16, static_cast<uint16_t>(PseudoSum(b, {ipv6, true, false, false})));
  rte_mbuf* head = nullptr;
  for (uint32_t off = 0; off < b.bytes.size(); off += 2048) {
    const uint32_t len = std::min<uint32_t>(2048, b.bytes.size() - off);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(len)), b.bytes.data() + off, len);
    if (head == nullptr) {
      head = m;
    } else {
      rte_pktmbuf_chain(head, m);
    }
  }
  head->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_NONE | (super ? RTE_MBUF_F_RX_LRO : 0);
  head->tso_segsz = super ? 1448 : 0;
  return head;
}

// Resolves the same frame over and over: it is kept alive by an extra reference on every
// segment (segmentation frees the frame it cut) and its Rx state restored each time.
void Resolve(benchmark::State& state, bool ipv6, bool super, const EgressCaps& caps) {
  const uint32_t size = static_cast<uint32_t>(state.range(0));
  rte_mbuf* m = MakeFrame(ipv6, size, super);
  const uint64_t rx_flags = m->ol_flags;
  const uint16_t field = static_cast<uint16_t>(14 + (ipv6 ? 40 : 20) + 16);
  uint16_t partial;
  std::memcpy(&partial, rte_pktmbuf_mtod_offset(m, uint8_t*, field), 2);
  rte_mbuf* out[kMaxSegments];
  uint64_t frames = 0, segments = 0, cycles = 0;
  for (auto _ : state) {
    for (rte_mbuf* s = m; s != nullptr; s = s->next) rte_mbuf_refcnt_update(s, 1);
    m->ol_flags = rx_flags;
    std::memcpy(rte_pktmbuf_mtod_offset(m, uint8_t*, field), &partial, 2);
    const uint64_t start = rte_rdtsc();
    EgressOutcome outcome = ResolveEgressOffload(m, caps, out);
    cycles += rte_rdtsc() - start;
    if (outcome.result != EgressOutcome::Result::kSent) {
      state.SkipWithError("not sent");
      break;
    }
    ++frames;
    segments += outcome.nb;
    if (outcome.action == OffloadAction::kSegment) {
      rte_pktmbuf_free_bulk(out, outcome.nb);
    } else {
      for (rte_mbuf* s = m; s != nullptr; s = s->next) rte_mbuf_refcnt_update(s, -1);
    }
  }
  rte_pktmbuf_free(m);
  state.SetBytesProcessed(static_cast<int64_t>(frames * size));
  state.counters["cycles_per_frame"] = static_cast<double>(cycles) / frames;
  state.counters["segments"] = static_cast<double>(segments) / frames;
  state.counters["cycles_per_byte"] = static_cast<double>(cycles) / (frames * size);
}

const EgressCaps kPlain{false, false, false, 1500};
const EgressCaps kCapable{true, true, true, 1500};

// Partial checksum to a port that cannot complete it, frames that fit (MTU ample).
void BM_ChecksumSoftware(benchmark::State& s) {
  Resolve(s, false, false, {false, false, false, 65535 - 14});
}
// The same frames to a guest with GUEST_CSUM: flags only.
void BM_ChecksumLeftToPort(benchmark::State& s) {
  Resolve(s, false, false, {true, true, true, 65535 - 14});
}
void BM_SegmentSoftwareIpv4(benchmark::State& s) { Resolve(s, false, true, kPlain); }
void BM_SegmentSoftwareIpv6(benchmark::State& s) { Resolve(s, true, true, kPlain); }
// Segmented here, checksums of the segments left to the port (GUEST_CSUM, no GUEST_TSO).
void BM_SegmentChecksumLeftIpv4(benchmark::State& s) {
  Resolve(s, false, true, {true, false, false, 1500});
}
void BM_SegmentLeftToPort(benchmark::State& s) { Resolve(s, false, true, kCapable); }

BENCHMARK(BM_ChecksumSoftware)->Arg(64)->Arg(1500)->Arg(9000)->Arg(65000);
BENCHMARK(BM_ChecksumLeftToPort)->Arg(64)->Arg(1500)->Arg(9000)->Arg(65000);
BENCHMARK(BM_SegmentSoftwareIpv4)->Arg(9000)->Arg(65000);
BENCHMARK(BM_SegmentSoftwareIpv6)->Arg(9000)->Arg(65000);
BENCHMARK(BM_SegmentChecksumLeftIpv4)->Arg(9000)->Arg(65000);
BENCHMARK(BM_SegmentLeftToPort)->Arg(9000)->Arg(65000);

}  // namespace
}  // namespace hvswitch

int main(int argc, char** argv) {
  const char* eal[] = {"offload_bench", "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
                       "-l", "0", "--log-level=lib.eal:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "cannot init EAL\n");
    return 1;
  }
  hvswitch::pool =
      rte_pktmbuf_pool_create("bench", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  rte_eal_cleanup();
  return 0;
}
