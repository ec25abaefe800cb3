#include "switch/forwarder.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "switch/mac_key.h"
#include "switch/verdict.h"

namespace hvswitch {
namespace {

constexpr uint16_t kPrefetchAhead = 4;
// A short tx burst is retried while the queue keeps taking frames, at most this often:
// a guest that is merely slow gets its frames, a stalled one costs bounded work.
constexpr int kTxRetries = 2;

template <typename Fn>
void ForEachBit(uint64_t mask, Fn&& fn) {
  for (; mask != 0; mask &= mask - 1) fn(static_cast<uint16_t>(__builtin_ctzll(mask)));
}

}  // namespace

void Forwarder::HandleBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n) {
  PortCounters& in = counters_.ports[in_port];
  uint64_t dst_keys[kMaxBurst], src_keys[kMaxBurst];
  uint16_t dst_ports[kMaxBurst], src_ports[kMaxBurst];
  int32_t src_positions[kMaxBurst];
  rte_mbuf* frames[kMaxBurst];
  uint16_t nb_frames = 0;
  uint64_t rx_bytes = 0, malformed = 0;

  for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i) {
    rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  }
  for (uint16_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    rte_mbuf* m = pkts[i];
    rx_bytes += m->pkt_len;
    if (m->data_len < RTE_ETHER_HDR_LEN) {
      ++malformed;
      rte_pktmbuf_free(m);
      continue;
    }
    const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
    uint64_t src = MacKey(0, eth->src_addr.addr_bytes);
    if (IsGroupKey(src)) {  // a group address is never a valid source (802.3)
      ++malformed;
      rte_pktmbuf_free(m);
      continue;
    }
    src_keys[nb_frames] = src;
    dst_keys[nb_frames] = MacKey(0, eth->dst_addr.addr_bytes);
    frames[nb_frames++] = m;
  }
  in.rx_packets.Add(n);
  in.rx_bytes.Add(rx_bytes);
  if (malformed != 0) in.Drop(RxDrop::kMalformed, malformed);
  if (nb_frames == 0) return;

  uint64_t src_hits = LookupRuns(src_keys, nb_frames, src_ports, src_positions);
  uint64_t dst_hits = LookupRuns(dst_keys, nb_frames, dst_ports);
  uint64_t up_mask = datapath_.up_mask.load(std::memory_order_relaxed);
  const uint32_t now_seconds = datapath_.now_seconds.load(std::memory_order_relaxed);
  uint64_t now = 0;
  uint64_t hairpin = 0;

  for (uint16_t i = 0; i < nb_frames; ++i) {
    bool src_hit = (src_hits >> i) & 1;
    if (WantsLearn(in_port, false, src_hit, src_ports[i])) {
      if (now == 0) now = rte_rdtsc();
      learn_.Request(src_keys[i], in_port, now);
    } else if (src_hit && (i == 0 || src_keys[i] != src_keys[i - 1])) {
      datapath_.fdb->Touch(src_positions[i], now_seconds);
    }
    Verdict verdict = Decide(in_port, IsGroupKey(dst_keys[i]), (dst_hits >> i) & 1, dst_ports[i]);
    switch (verdict.kind) {
      case VerdictKind::kUnicast:
        Enqueue(verdict.port, frames[i]);
        break;
      case VerdictKind::kFlood:
        Flood(in_port, up_mask, frames[i]);
        break;
      case VerdictKind::kHairpinDrop:
        ++hairpin;
        rte_pktmbuf_free(frames[i]);
        break;
    }
  }
  if (hairpin != 0) in.Drop(RxDrop::kHairpin, hairpin);
  FlushPending(up_mask);
}

uint64_t Forwarder::LookupRuns(const uint64_t* keys, uint16_t n, uint16_t* ports,
                               int32_t* positions) const {
  if (n == 0) return 0;
  uint64_t unique[kMaxBurst];
  uint16_t unique_ports[kMaxBurst];
  int32_t unique_positions[kMaxBurst];
  uint8_t run_of[kMaxBurst];
  unique[0] = keys[0];
  run_of[0] = 0;
  uint16_t runs = 1;
  for (uint16_t i = 1; i < n; ++i) {
    if (keys[i] != keys[i - 1]) unique[runs++] = keys[i];
    run_of[i] = static_cast<uint8_t>(runs - 1);
  }
  uint64_t unique_hits = datapath_.fdb->LookupBulk(unique, runs, unique_ports,
                                                   positions ? unique_positions : nullptr);
  uint64_t hits = 0;
  // A miss leaves unique_ports/positions unwritten; give it a defined value, since the
  // callers pass ports[i] to the verdict functions whether or not it hit.
  for (uint16_t i = 0; i < n; ++i) {
    uint8_t r = run_of[i];
    bool hit = (unique_hits >> r) & 1;
    hits |= uint64_t{hit} << i;
    ports[i] = hit ? unique_ports[r] : 0;
    if (positions != nullptr) positions[i] = hit ? unique_positions[r] : -1;
  }
  return hits;
}

// Every copy of a flooded frame is the same mbuf with its reference count raised: no
// egress stage modifies a frame yet, so copies cannot diverge.
void Forwarder::Flood(uint16_t in_port, uint64_t up_mask, rte_mbuf* m) {
  uint64_t targets = up_mask & ~(uint64_t{1} << in_port);
  int copies = __builtin_popcountll(targets);
  if (copies == 0) {
    rte_pktmbuf_free(m);
    return;
  }
  if (copies > 1) rte_mbuf_refcnt_update(m, static_cast<int16_t>(copies - 1));
  ForEachBit(targets, [&](uint16_t port) { Enqueue(port, m); });
}

void Forwarder::FlushPending(uint64_t up_mask) {
  ForEachBit(pending_, [&](uint16_t port) {
    TxBuffer& buffer = tx_[port];
    PortCounters& out = counters_.ports[port];
    uint16_t n = buffer.n;
    buffer.n = 0;
    if (!((up_mask >> port) & 1)) {
      rte_pktmbuf_free_bulk(buffer.pkts, n);
      out.Drop(TxDrop::kLinkDown, n);
      return;
    }
    uint64_t bytes = 0;
    for (uint16_t i = 0; i < n; ++i) bytes += buffer.pkts[i]->pkt_len;
    const DatapathPort& dp = datapath_.ports[port];
    uint16_t sent = rte_eth_tx_burst(dp.eth_port, txq_, buffer.pkts, n);
    for (int retry = 0; sent < n && retry < kTxRetries; ++retry) {
      uint16_t more = rte_eth_tx_burst(dp.eth_port, txq_, buffer.pkts + sent, n - sent);
      if (more == 0) break;
      sent += more;
    }
    if (sent < n) {
      for (uint16_t i = sent; i < n; ++i) bytes -= buffer.pkts[i]->pkt_len;
      rte_pktmbuf_free_bulk(buffer.pkts + sent, n - sent);
      out.Drop(TxDrop::kQueueFull, n - sent);
    }
    out.tx_packets.Add(sent);
    out.tx_bytes.Add(bytes);
  });
  pending_ = 0;
}

}  // namespace hvswitch
