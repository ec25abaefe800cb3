// Benchmark 1: the forwarding pipeline in one process over two net_ring ports, against a
// bare rx->tx loop on the same ports (the floor). Frames go round: port A's receive ring
// -> (pipeline or bare loop) -> port B's transmit ring -> back into A's receive ring.
// The FDB holds N learned MACs (half behind A as sources, half behind B as destinations)
// and the frames' addresses are drawn at random from them, so larger tables mean lookups
// all over the table: every frame a pair of its own ("random pairs"), or runs of 8-32
// frames of one pair, as guests send ("runs"), or every frame from one source MAC to a
// random destination, as a guest with many peers sends ("guest": the per-port source cache
// at work). ":guards" gives the receiving port every guardrail, none of them triggered
// (policing by frames and bytes far above the loop's rate, storm control of every class,
// BPDU guard, ip= with the frames' IPv4 source): what they cost a frame that passes them;
// ":police" policing alone (frames and bytes), ":ip" ip= alone. The frames are IPv4 from
// 10.0.0.5 whatever the case.
//
//   pipeline_bench [--benchmark_* flags]      Google Benchmark: ns, cycles per packet
//   pipeline_bench --instructions=CASE --packets=N
//       runs CASE (bare, the MAC count: random pairs, or the MAC count and ":runs" or
//       ":guest", and ":guards") for N
//       packets inside MeasuredLoop, for `valgrind --tool=callgrind
//       --toggle-collect='*MeasuredLoop*'` to count instructions per packet (this VM has
//       no hardware counters).
#include <benchmark/benchmark.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "switch/datapath/fdb.h"
#include "switch/datapath/forwarder.h"
#include "switch/datapath/learn_queue.h"
#include "ports/guard_keys.h"
#include "switch/datapath/port_guards.h"
#include "tests/integration/ring_port.h"

namespace hvswitch {
namespace {

using testing::MakeFrame;
using testing::RingPort;

constexpr unsigned kFrames = 8192;  // frames going round
constexpr uint16_t kBurst = 32;

// The frame made IPv4 from 10.0.0.5 (its 50-byte payload holds the header).
rte_mbuf* Ipv4From10005(rte_mbuf* m) {
  auto* p = rte_pktmbuf_mtod(m, uint8_t*);
  const uint8_t header[] = {0x08, 0x00, 0x45, 0, 0, 50, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 5};
  std::memcpy(p + 12, header, sizeof(header));
  return m;
}

// The guardrails a case names: ":guards" every one, ":police" or ":ip" one kind.
GuardSpec CaseGuards(const char* name) {
  GuardSpec g;
  const bool all = std::strstr(name, ":guards") != nullptr;
  if (all || std::strstr(name, ":police") != nullptr) {
    // The largest rates: no loop here reaches them, so their meters always conform.
    g.police_pps = kMaxGuardPps;
    g.police_bps = kMaxGuardBps;
  }
  if (all) {
    g.storm = {kMaxGuardPps, kMaxGuardPps, kMaxGuardPps};
    g.bpdu_guard = true;
  }
  if (all || std::strstr(name, ":ip") != nullptr) {
    IpPrefix bound;
    bound.addr = {10, 0, 0, 5};
    g.ips = {bound};
  }
  return g;
}

class Rig {
 public:
  // macs == 0: no FDB (the bare loop). runs: frames come in runs of 8-32 of one pair.
  // one_source: every frame from the first source MAC. guards: port A's guardrails.
  explicit Rig(uint32_t macs, bool runs = false, bool one_source = false,
               GuardSpec guards = {}) {
    static int instance = 0;
    std::string name = "rig" + std::to_string(++instance);
    pool_ = rte_pktmbuf_pool_create((name + "pool").c_str(), kFrames * 2, 256, 0,
                                    RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    a_ = RingPort::Create(name + "a", 1, 1, kFrames * 2, pool_);
    b_ = RingPort::Create(name + "b", 1, 1, kFrames * 2, pool_);
    if (pool_ == nullptr || a_ == nullptr || b_ == nullptr) std::abort();
    uint32_t half = macs < 2 ? 1 : macs / 2;
    auto src_mac = [](uint32_t i) { return (uint64_t{i} << 16) | 0x0200; };
    auto dst_mac = [](uint32_t i) { return (uint64_t{i} << 16) | 0x0600; };
    if (macs != 0) {
      // Room for every MAC beyond the ports' reserves: all of them are learned.
      fdb_ = *Fdb::Create(name + "fdb", macs + kMaxPorts * 256);
      for (uint32_t i = 0; i < half; ++i) {
        fdb_->Learn(src_mac(i), 0, 0);
        fdb_->Learn(dst_mac(i), 1, 0);
      }
      learn_ = *LearnQueue::Create(name + "learn", 4096);
      datapath_.fdb = fdb_.get();
      std::vector<PortSpec> specs(2);
      specs[0].guards = guards;
      table_.Configure(specs);
      BuildGuards(table_, SpecSlots(specs));
      table_.ports[0].eth_port = a_->eth_port();
      table_.ports[1].eth_port = b_->eth_port();
      datapath_.table.store(&table_);
      datapath_.up_mask.store(0b11);
      forwarder_ = std::make_unique<Forwarder>(datapath_, ForwarderOptions{}, counters_, *learn_);
    }
    std::mt19937 rng(1);
    std::vector<rte_mbuf*> frames;
    while (frames.size() < kFrames) {
      const uint64_t src = src_mac(one_source ? 0 : rng() % half), dst = dst_mac(rng() % half);
      const size_t run = runs ? 8 + rng() % 25 : 1;
      for (size_t i = 0; i < run && frames.size() < kFrames; ++i) {
        frames.push_back(Ipv4From10005(MakeFrame(pool_, {src, dst, -1, 50})));
      }
    }
    if (a_->Inject(0, frames.data(), kFrames) != kFrames) std::abort();
  }

  ~Rig() {
    forwarder_.reset();
    a_.reset();
    b_.reset();
    rte_mempool_free(pool_);
  }

  // One burst through; returns the packets forwarded.
  uint16_t Step() {
    rte_mbuf* pkts[kBurst];
    uint16_t n = rte_eth_rx_burst(a_->eth_port(), 0, pkts, kBurst);
    if (forwarder_ != nullptr) {
      forwarder_->HandleBurst(0, pkts, n);
    } else {
      uint16_t sent = rte_eth_tx_burst(b_->eth_port(), 0, pkts, n);
      if (sent < n) rte_pktmbuf_free_bulk(pkts + sent, n - sent);
    }
    b_->MoveSentTo(*a_, n);
    return n;
  }

 private:
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<RingPort> a_, b_;
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<LearnQueue> learn_;
  PortTable table_;
  Datapath datapath_;
  WorkerCounters counters_;
  std::unique_ptr<Forwarder> forwarder_;
};

void Run(benchmark::State& state, uint32_t macs, bool runs = false, bool one_source = false,
         GuardSpec guards = {}) {
  Rig rig(macs, runs, one_source, guards);
  for (unsigned i = 0; i < kFrames / kBurst; ++i) rig.Step();  // warm up: every frame once
  uint64_t packets = 0, cycles = 0;
  for (auto _ : state) {
    uint64_t start = rte_rdtsc();
    for (int i = 0; i < 64; ++i) packets += rig.Step();
    cycles += rte_rdtsc() - start;
  }
  state.SetItemsProcessed(static_cast<int64_t>(packets));
  state.counters["cycles_per_packet"] = static_cast<double>(cycles) / packets;
  state.counters["ns_per_packet"] = benchmark::Counter(
      static_cast<double>(packets), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_BareLoop(benchmark::State& state) { Run(state, 0); }
void BM_Pipeline(benchmark::State& state) { Run(state, static_cast<uint32_t>(state.range(0))); }
void BM_PipelineRuns(benchmark::State& state) {
  Run(state, static_cast<uint32_t>(state.range(0)), true);
}
void BM_PipelineGuest(benchmark::State& state) {
  Run(state, static_cast<uint32_t>(state.range(0)), false, true);
}
void BM_PipelineGuards(benchmark::State& state) {
  Run(state, static_cast<uint32_t>(state.range(0)), false, false, CaseGuards(":guards"));
}
void BM_PipelineRunsGuards(benchmark::State& state) {
  Run(state, static_cast<uint32_t>(state.range(0)), true, false, CaseGuards(":guards"));
}
BENCHMARK(BM_BareLoop);
BENCHMARK(BM_Pipeline)->Arg(2)->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_PipelineRuns)->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_PipelineGuest)->Arg(1000)->Arg(1000000);
BENCHMARK(BM_PipelineGuards)->Arg(2)->Arg(1000);
BENCHMARK(BM_PipelineRunsGuards)->Arg(1000);

__attribute__((noinline)) uint64_t MeasuredLoop(Rig& rig, uint64_t packets) {
  uint64_t done = 0;
  while (done < packets) done += rig.Step();
  return done;
}

}  // namespace
}  // namespace hvswitch

int main(int argc, char** argv) {
  const char* eal[] = {"pipeline_bench", "--no-huge", "--no-pci", "--no-shconf", "-m", "1024",
                       "-l", "0", "--log-level=lib.eal:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "cannot init EAL\n");
    return 1;
  }
  const char* instructions = nullptr;
  uint64_t packets = 100000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--instructions=", 15) == 0) instructions = argv[i] + 15;
    if (std::strncmp(argv[i], "--packets=", 10) == 0) packets = std::strtoull(argv[i] + 10, nullptr, 10);
  }
  if (instructions != nullptr) {
    uint32_t macs = std::strcmp(instructions, "bare") == 0 ? 0 : std::atoi(instructions);
    {
      hvswitch::Rig rig(macs, std::strstr(instructions, ":runs") != nullptr,
                        std::strstr(instructions, ":guest") != nullptr,
                        hvswitch::CaseGuards(instructions));
      for (unsigned i = 0; i < hvswitch::kFrames / hvswitch::kBurst; ++i) rig.Step();
      uint64_t done = hvswitch::MeasuredLoop(rig, packets);
      std::printf("packets %llu\n", static_cast<unsigned long long>(done));
    }
    rte_eal_cleanup();
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  rte_eal_cleanup();
  return 0;
}
