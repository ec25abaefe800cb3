#include "tests/guest/mac_generator.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

namespace hvswitch::guest {
namespace {

constexpr uint16_t kBurst = 32;
constexpr uint16_t kEtherType = 0x88b5;
constexpr uint32_t kMaxMacs = (1u << 24) - 1;  // the index fills three bytes
constexpr uint8_t kSideByte[2] = {0xa0, 0xb0};

// Station `index` of `side`: 02:5a:SS:II:II:II (locally administered, unicast).
inline void WriteMac(uint8_t* to, int side, uint32_t index) {
  to[0] = 0x02;
  to[1] = 0x5a;
  to[2] = kSideByte[side];
  to[3] = static_cast<uint8_t>(index >> 16);
  to[4] = static_cast<uint8_t>(index >> 8);
  to[5] = static_cast<uint8_t>(index);
}

// `n` frames of `size` bytes (zeroed, ethertype set) from `pool`; false if it ran dry.
bool MakeFrames(rte_mempool* pool, rte_mbuf** pkts, uint16_t n, uint16_t size) {
  if (rte_pktmbuf_alloc_bulk(pool, pkts, n) != 0) return false;
  for (uint16_t i = 0; i < n; ++i) {
    char* data = rte_pktmbuf_append(pkts[i], size);
    if (data == nullptr) {  // never: size is at most 1514, a buffer holds 2048
      rte_pktmbuf_free_bulk(pkts, n);
      return false;
    }
    std::memset(data, 0, size);
    reinterpret_cast<rte_ether_hdr*>(data)->ether_type = rte_cpu_to_be_16(kEtherType);
  }
  return true;
}

}  // namespace

void MacLoop::Rewrite(rte_mbuf** pkts, uint16_t n, int out_side) {
  const int in_side = 1 - out_side;
  Run& run = runs_[out_side];
  for (uint16_t i = 0; i < n; ++i) {
    uint32_t src, dst;
    if (pattern_ == Pattern::kRandom) {
      src = Pick();
      dst = Pick();
    } else {
      if (run.left == 0) {
        run.src = Pick();
        run.dst = Pick();
        run.left = 8 + static_cast<uint32_t>(Next() % 25);
      }
      --run.left;
      src = run.src;
      dst = run.dst;
    }
    auto* eth = rte_pktmbuf_mtod(pkts[i], uint8_t*);
    WriteMac(eth, in_side, dst);  // the destination lives behind the other port
    WriteMac(eth + RTE_ETHER_ADDR_LEN, out_side, src);
  }
}

// One poll of `side`'s port, its receive queues in turn.
uint16_t MacLoop::Receive(int side, rte_mbuf** pkts) {
  const uint16_t queue = next_queue_[side];
  if (queues_ > 1) next_queue_[side] = static_cast<uint16_t>((queue + 1) % queues_);
  return rte_eth_rx_burst(ports_[side], queue, pkts, kBurst);
}

void MacLoop::Drain() {
  rte_mbuf* pkts[kBurst];
  for (int side = 0; side < 2; ++side) {
    for (uint16_t q = 0; q < queues_; ++q) rte_pktmbuf_free_bulk(pkts, Receive(side, pkts));
  }
}

std::string MacLoop::Queues(uint16_t queues) {
  for (uint16_t port : ports_) {
    // What hvs_guest starts its ports with, less the checksum offloads the loop needs not.
    rte_eth_dev_info info{};
    rte_eth_dev_info_get(port, &info);
    rte_eth_conf conf{};
    conf.rxmode.mtu = std::min<uint32_t>({9000, info.max_mtu, info.max_rx_pktlen - 18});
    conf.rxmode.offloads = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER;
    conf.txmode.offloads = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    if (rte_eth_dev_stop(port) != 0 ||
        rte_eth_dev_configure(port, queues, queues, &conf) != 0) {
      return "{\"error\":\"cannot reconfigure port\"}";
    }
    for (uint16_t q = 0; q < queues; ++q) {
      if (rte_eth_rx_queue_setup(port, q, 1024, rte_eth_dev_socket_id(port), nullptr,
                                 pool_) != 0 ||
          rte_eth_tx_queue_setup(port, q, 1024, rte_eth_dev_socket_id(port), nullptr) != 0) {
        return "{\"error\":\"cannot set up queues\"}";
      }
    }
    if (rte_eth_dev_start(port) != 0) return "{\"error\":\"cannot start port\"}";
  }
  queues_ = queues;
  next_queue_[0] = next_queue_[1] = 0;
  return "{\"ok\":1}";
}

void MacLoop::Poll() {
  if (!forwarding_) return Drain();
  const uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000;
  rte_mbuf* pkts[kBurst];
  for (uint64_t now = rte_rdtsc(); now < end;) {
    for (int in_side = 0; in_side < 2; ++in_side) {
      const uint16_t n = Receive(in_side, pkts);
      if (n == 0) {
        now = rte_rdtsc();
        continue;
      }
      const int out_side = 1 - in_side;
      const uint64_t rewrite_start = rte_rdtsc();
      Rewrite(pkts, n, out_side);
      const uint64_t rewrite_end = rte_rdtsc();
      const uint16_t sent = rte_eth_tx_burst(ports_[out_side], 0, pkts, n);
      // Like testpmd without retries: what the ring does not take is dropped (and leaves
      // the loop: the stats say how many).
      rte_pktmbuf_free_bulk(pkts + sent, n - sent);
      const uint64_t done = rte_rdtsc();
      rx_ += n;
      tx_ += sent;
      tx_dropped_ += n - sent;
      busy_cycles_ += done - now;
      gen_cycles_ += rewrite_end - rewrite_start;
      now = done;
    }
  }
}

std::string MacLoop::Learn(uint64_t rate, uint64_t max_seconds) {
  const uint64_t hz = rte_get_tsc_hz();
  const uint64_t interval = rate == 0 ? 0 : std::max<uint64_t>(1, hz / rate);
  const uint64_t start = rte_rdtsc();
  const uint64_t end = max_seconds == 0 ? UINT64_MAX : start + max_seconds * hz;
  uint64_t next = start, sent = 0, last_progress = start;
  rte_mbuf* pkts[kBurst];
  // Station `index` of each side in turn, a burst at a time per side.
  uint32_t index[2] = {0, 0};
  while ((index[0] < macs_ || index[1] < macs_) && rte_rdtsc() - last_progress < 2 * hz &&
         rte_rdtsc() < end) {
    Drain();  // the floods of the other side's broadcasts
    const uint64_t now = rte_rdtsc();
    if (interval != 0 && now < next) continue;
    for (int side = 0; side < 2; ++side) {
      const uint16_t n = static_cast<uint16_t>(std::min<uint32_t>(kBurst, macs_ - index[side]));
      if (n == 0 || !MakeFrames(pool_, pkts, n, 60)) continue;
      for (uint16_t i = 0; i < n; ++i) {
        auto* eth = rte_pktmbuf_mtod(pkts[i], uint8_t*);
        std::memset(eth, 0xff, RTE_ETHER_ADDR_LEN);
        WriteMac(eth + RTE_ETHER_ADDR_LEN, side, index[side] + i);
      }
      const uint16_t taken = rte_eth_tx_burst(ports_[side], 0, pkts, n);
      rte_pktmbuf_free_bulk(pkts + taken, n - taken);  // sent again next time
      index[side] += taken;
      sent += taken;
      if (taken > 0) last_progress = rte_rdtsc();
      next += taken * interval;
    }
  }
  const double seconds = static_cast<double>(rte_rdtsc() - start) / static_cast<double>(hz);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "{\"sent\":%lu,\"seconds\":%.3f}", sent, seconds);
  return buf;
}

std::string MacLoop::Start(unsigned bursts) {
  uint64_t seeded = 0;
  rte_mbuf* pkts[kBurst];
  for (unsigned b = 0; b < bursts; ++b) {
    for (int side = 0; side < 2; ++side) {
      if (!MakeFrames(pool_, pkts, kBurst, size_)) continue;
      Rewrite(pkts, kBurst, side);
      const uint16_t taken = rte_eth_tx_burst(ports_[side], 0, pkts, kBurst);
      rte_pktmbuf_free_bulk(pkts + taken, kBurst - taken);
      seeded += taken;
    }
  }
  forwarding_ = true;
  return "{\"seeded\":" + std::to_string(seeded) + "}";
}

std::string MacLoop::Stats() const {
  rte_eth_link link[2]{};
  for (int side = 0; side < 2; ++side) rte_eth_link_get_nowait(ports_[side], &link[side]);
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "{\"rx\":%lu,\"tx\":%lu,\"tx_dropped\":%lu,\"busy_cycles\":%lu,"
                "\"gen_cycles\":%lu,\"tsc_hz\":%lu,\"links\":[%u,%u]}",
                rx_, tx_, tx_dropped_, busy_cycles_, gen_cycles_, rte_get_tsc_hz(),
                link[0].link_status, link[1].link_status);
  return buf;
}

std::string MacLoop::Command(std::istringstream& in) {
  std::string sub;
  in >> sub;
  if (sub == "config") {
    uint64_t macs = 0;
    std::string pattern;
    unsigned size = 60;
    in >> macs >> pattern;
    if (!(in >> size)) size = 60;
    if (macs == 0 || macs > kMaxMacs || (pattern != "random" && pattern != "runs") ||
        size < 60 || size > 1514) {
      return "{\"error\":\"bad gen config arguments\"}";
    }
    macs_ = static_cast<uint32_t>(macs);
    pattern_ = pattern == "runs" ? Pattern::kRuns : Pattern::kRandom;
    size_ = static_cast<uint16_t>(size);
    forwarding_ = false;
    runs_[0] = runs_[1] = Run{};
    return "{\"ok\":1}";
  }
  if (sub == "stats") return Stats();
  if (macs_ == 0) return "{\"error\":\"gen config first\"}";
  if (sub == "learn") {
    uint64_t rate = 0, max_seconds = 0;
    if (!(in >> rate)) return "{\"error\":\"bad gen learn arguments\"}";
    if (!(in >> max_seconds)) max_seconds = 0;
    forwarding_ = false;
    return Learn(rate, max_seconds);
  }
  if (sub == "start") {
    unsigned bursts = 0;
    if (!(in >> bursts) || bursts == 0 || bursts > 64) {
      return "{\"error\":\"bad gen start arguments\"}";
    }
    return Start(bursts);
  }
  if (sub == "queues") {
    unsigned queues = 0;
    if (!(in >> queues) || queues == 0 || queues > 4) {
      return "{\"error\":\"bad gen queues arguments\"}";
    }
    forwarding_ = false;
    return Queues(static_cast<uint16_t>(queues));
  }
  if (sub == "stop") {
    forwarding_ = false;
    return "{\"ok\":1}";
  }
  return "{\"error\":\"unknown gen command\"}";
}

}  // namespace hvswitch::guest
