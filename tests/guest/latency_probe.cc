#include "tests/guest/latency_probe.h"

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace hvswitch::guest {
namespace {

constexpr uint16_t kProbeEtherType = 0x88b6;
constexpr uint16_t kBurst = 32;

struct Stamp {
  uint64_t run;  // this run's tag: frames of an earlier run still in flight are foreign
  uint64_t seq;
  uint64_t tsc;
};

double Percentile(const std::vector<uint64_t>& sorted, double q, double ns_per_cycle) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]) * ns_per_cycle;
}

}  // namespace

std::string LatencyResult::Json() const {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "{\"sent\":%lu,\"received\":%lu,\"foreign\":%lu,\"seconds\":%.6f,"
                "\"p50_ns\":%.0f,\"p99_ns\":%.0f,\"p999_ns\":%.0f,\"max_ns\":%.0f}",
                sent, received, foreign, seconds, p50_ns, p99_ns, p999_ns, max_ns);
  return buf;
}

LatencyResult MeasureLatency(rte_mempool* pool, const LatencyRun& run) {
  LatencyResult result;
  const uint64_t hz = rte_get_tsc_hz();
  const uint64_t interval = run.rate == 0 ? 0 : std::max<uint64_t>(1, hz / run.rate);
  const uint64_t tag = rte_rdtsc();
  std::vector<uint64_t> latencies;
  latencies.reserve(run.count);
  rte_mbuf* pkts[kBurst];

  auto receive = [&] {
    const uint16_t n = rte_eth_rx_burst(run.rx_port, 0, pkts, kBurst);
    const uint64_t now = rte_rdtsc();
    for (uint16_t i = 0; i < n; ++i) {
      const rte_mbuf* m = pkts[i];
      const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
      Stamp stamp{};
      if (m->data_len >= sizeof(rte_ether_hdr) + sizeof(Stamp) &&
          eth->ether_type == rte_cpu_to_be_16(kProbeEtherType)) {
        std::memcpy(&stamp, eth + 1, sizeof(stamp));
      }
      if (stamp.run == tag && stamp.tsc <= now) {
        latencies.push_back(now - stamp.tsc);
      } else {
        ++result.foreign;
      }
    }
    rte_pktmbuf_free_bulk(pkts, n);
  };

  const uint64_t start = rte_rdtsc();
  uint64_t next = start, seq = 0;
  while (seq < run.count) {
    const uint64_t now = rte_rdtsc();
    // Frames due by now (a burst at most): behind the schedule, the probe catches up.
    uint64_t due = interval == 0 ? kBurst : (now >= next ? (now - next) / interval + 1 : 0);
    due = std::min<uint64_t>({due, kBurst, run.count - seq});
    if (due > 0 && rte_pktmbuf_alloc_bulk(pool, pkts, static_cast<unsigned>(due)) == 0) {
      for (uint64_t i = 0; i < due; ++i) {
        char* data = rte_pktmbuf_append(pkts[i], run.size);
        if (data == nullptr) continue;  // never: size is at most 1514, a buffer holds 2048
        std::memset(data, 0, run.size);
        auto* eth = reinterpret_cast<rte_ether_hdr*>(data);
        eth->dst_addr = run.dst;
        eth->src_addr = run.src;
        eth->ether_type = rte_cpu_to_be_16(kProbeEtherType);
        const Stamp stamp{tag, seq + i, rte_rdtsc()};
        std::memcpy(eth + 1, &stamp, sizeof(stamp));
      }
      const uint16_t taken = rte_eth_tx_burst(run.tx_port, 0, pkts, static_cast<uint16_t>(due));
      // A frame the port refused is not sent (the switch is not keeping up): the schedule
      // goes on, so that the offered rate stays what was asked.
      rte_pktmbuf_free_bulk(pkts + taken, static_cast<unsigned>(due - taken));
      result.sent += taken;
      seq += due;
      next += due * interval;
    }
    receive();
  }
  const uint64_t end = rte_rdtsc();
  result.seconds = static_cast<double>(end - start) / static_cast<double>(hz);
  for (uint64_t deadline = end + hz / 5; latencies.size() < result.sent &&
                                         rte_rdtsc() < deadline;) {
    receive();
  }
  result.received = latencies.size();
  std::sort(latencies.begin(), latencies.end());
  const double ns_per_cycle = 1e9 / static_cast<double>(hz);
  result.p50_ns = Percentile(latencies, 0.50, ns_per_cycle);
  result.p99_ns = Percentile(latencies, 0.99, ns_per_cycle);
  result.p999_ns = Percentile(latencies, 0.999, ns_per_cycle);
  result.max_ns = latencies.empty() ? 0 : static_cast<double>(latencies.back()) * ns_per_cycle;
  return result;
}

}  // namespace hvswitch::guest
