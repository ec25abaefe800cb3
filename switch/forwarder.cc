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
constexpr uint16_t kVlanTpid = RTE_BE16(RTE_ETHER_TYPE_VLAN);

template <typename Fn>
void ForEachBit(uint64_t mask, Fn&& fn) {
  for (; mask != 0; mask &= mask - 1) fn(static_cast<uint16_t>(__builtin_ctzll(mask)));
}

// Gives an unshared frame the other encapsulation: strips its tag or inserts one for
// `vlan`. False when there is no room for the tag.
bool Retag(rte_mbuf*& m, bool tagged, uint16_t vlan) {
  if (tagged) {
    rte_vlan_strip(m);
    m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED);
    return true;
  }
  m->vlan_tci = vlan;
  return rte_vlan_insert(&m) == 0;
}

}  // namespace

void Forwarder::HandleBurst(uint16_t in_port, rte_mbuf** pkts, uint16_t n) {
  PortCounters& in = counters_.ports[in_port];
  uint64_t dst_keys[kMaxBurst], src_keys[kMaxBurst];
  uint16_t dst_ports[kMaxBurst], src_ports[kMaxBurst], vlans[kMaxBurst];
  int32_t src_positions[kMaxBurst];
  rte_mbuf* frames[kMaxBurst];
  uint64_t tagged_mask = 0;
  uint16_t nb_frames = 0;
  uint64_t rx_bytes = 0, malformed = 0, wrong_vlan = 0;

  for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i) {
    rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  }
  for (uint16_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    rte_mbuf* m = pkts[i];
    rx_bytes += m->pkt_len;
    const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
    uint64_t src = 0;
    if (m->data_len >= RTE_ETHER_HDR_LEN) src = MacKey(0, eth->src_addr.addr_bytes);
    bool tagged = m->data_len >= RTE_ETHER_HDR_LEN && eth->ether_type == kVlanTpid;
    // A runt (the header, and a tag it announces, must sit in the first segment) or a
    // group source address (never valid, 802.3).
    if (m->data_len < RTE_ETHER_HDR_LEN + (tagged ? RTE_VLAN_HLEN : 0) || IsGroupKey(src)) {
      ++malformed;
      rte_pktmbuf_free(m);
      continue;
    }
    uint16_t tci = 0;
    if (tagged) tci = rte_be_to_cpu_16(reinterpret_cast<const rte_vlan_hdr*>(eth + 1)->vlan_tci);
    uint16_t vlan = datapath_.vlans.Ingress(in_port, tagged, tci);
    if (vlan == kNoVlan) {
      ++wrong_vlan;
      rte_pktmbuf_free(m);
      continue;
    }
    tagged_mask |= uint64_t{tagged} << nb_frames;
    vlans[nb_frames] = vlan;
    src_keys[nb_frames] = src | (uint64_t{vlan} << 48);
    dst_keys[nb_frames] = MacKey(vlan, eth->dst_addr.addr_bytes);
    frames[nb_frames++] = m;
  }
  in.rx_packets.Add(n);
  in.rx_bytes.Add(rx_bytes);
  if (malformed != 0) in.Drop(RxDrop::kMalformed, malformed);
  if (wrong_vlan != 0) in.Drop(RxDrop::kVlan, wrong_vlan);
  if (nb_frames == 0) return;

  uint64_t src_hits = LookupRuns(src_keys, nb_frames, src_ports, src_positions);
  uint64_t dst_hits = LookupRuns(dst_keys, nb_frames, dst_ports);
  up_mask_ = datapath_.up_mask.load(std::memory_order_relaxed);
  const bool learn_blocked =
      (datapath_.learn_blocked_mask.load(std::memory_order_relaxed) >> in_port) & 1;
  const uint32_t now_seconds = datapath_.now_seconds.load(std::memory_order_relaxed);
  uint64_t now = options_.flush_cycles != 0 ? rte_rdtsc() : 0;
  now_ = now;
  uint64_t hairpin = 0, limited = 0;

  for (uint16_t i = 0; i < nb_frames; ++i) {
    bool src_hit = (src_hits >> i) & 1;
    if (WantsLearn(in_port, false, src_hit, src_ports[i])) {
      // A port at its limit learns no new MAC; a move (rare) still goes to the control
      // thread, which knows whether the entry is static.
      if (learn_blocked && !src_hit) {
        ++limited;
      } else {
        if (now == 0) now = rte_rdtsc();
        learn_.Request(src_keys[i], in_port, now);
      }
    } else if (src_hit && (i == 0 || src_keys[i] != src_keys[i - 1])) {
      datapath_.fdb->Touch(src_positions[i], now_seconds);
    }
    rte_mbuf* m = frames[i];
    const bool tagged = (tagged_mask >> i) & 1;
    const uint32_t payload = m->pkt_len - RTE_ETHER_HDR_LEN - (tagged ? RTE_VLAN_HLEN : 0);
    Verdict verdict = Decide(in_port, IsGroupKey(dst_keys[i]), (dst_hits >> i) & 1, dst_ports[i]);
    switch (verdict.kind) {
      case VerdictKind::kUnicast:
        Unicast(verdict.port, vlans[i], tagged, payload, m);
        break;
      case VerdictKind::kFlood:
        Flood(in_port, vlans[i], tagged, payload, m);
        break;
      case VerdictKind::kHairpinDrop:
        ++hairpin;
        rte_pktmbuf_free(m);
        break;
    }
  }
  if (hairpin != 0) in.Drop(RxDrop::kHairpin, hairpin);
  if (limited != 0) in.learn_limited.Add(limited);

  if (options_.flush_cycles == 0) {
    FlushAll();
  } else {
    uint64_t full = 0;
    ForEachBit(pending_, [&](uint16_t p) {
      if (tx_[p].n >= options_.flush_batch) full |= uint64_t{1} << p;
    });
    ForEachBit(full, [&](uint16_t p) { FlushPort(p); });
  }
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

void Forwarder::Unicast(uint16_t port, uint16_t vlan, bool tagged, uint32_t payload,
                        rte_mbuf* m) {
  if (payload > datapath_.ports[port].mtu) {
    counters_.ports[port].Drop(TxDrop::kMtu, 1);
    rte_pktmbuf_free(m);
    return;
  }
  bool send_untagged = datapath_.vlans.SendsUntagged(vlan, port);
  if (tagged == send_untagged && !Retag(m, tagged, vlan)) {
    counters_.ports[port].Drop(TxDrop::kNoMbuf, 1);
    rte_pktmbuf_free(m);
    return;
  }
  Enqueue(port, m);
}

// Copies of a flooded frame share one mbuf (reference count raised), except that ports
// wanting the other encapsulation (tag added or removed) share one modified copy.
void Forwarder::Flood(uint16_t in_port, uint16_t vlan, bool tagged, uint32_t payload,
                      rte_mbuf* m) {
  uint64_t targets = datapath_.vlans.members[vlan] & up_mask_ & ~(uint64_t{1} << in_port);
  if (payload > datapath_.min_mtu) {
    ForEachBit(targets, [&](uint16_t p) {
      if (payload <= datapath_.ports[p].mtu) return;
      counters_.ports[p].Drop(TxDrop::kMtu, 1);
      targets &= ~(uint64_t{1} << p);
    });
  }
  uint64_t untagged = targets & datapath_.vlans.untagged[vlan];
  uint64_t same = tagged ? targets & ~untagged : untagged;
  uint64_t other = targets & ~same;
  if (other != 0) {
    rte_mbuf* copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
    if (copy != nullptr && !Retag(copy, tagged, vlan)) {
      rte_pktmbuf_free(copy);
      copy = nullptr;
    }
    if (copy == nullptr) {
      ForEachBit(other, [&](uint16_t p) { counters_.ports[p].Drop(TxDrop::kNoMbuf, 1); });
    } else {
      Share(other, copy);
    }
  }
  Share(same, m);
}

void Forwarder::Share(uint64_t targets, rte_mbuf* m) {
  int copies = __builtin_popcountll(targets);
  if (copies == 0) {
    rte_pktmbuf_free(m);
    return;
  }
  if (copies > 1) {
    // Freeing a chain drops every segment's count, so every segment must carry the raise.
    for (rte_mbuf* seg = m; seg != nullptr; seg = seg->next) {
      rte_mbuf_refcnt_update(seg, static_cast<int16_t>(copies - 1));
    }
  }
  ForEachBit(targets, [&](uint16_t port) { Enqueue(port, m); });
}

void Forwarder::Enqueue(uint16_t port, rte_mbuf* m) {
  TxBuffer& buffer = tx_[port];
  if (buffer.n == kMaxBurst) FlushPort(port);
  if (buffer.n == 0) buffer.deadline = now_ + options_.flush_cycles;
  buffer.pkts[buffer.n++] = m;
  pending_ |= uint64_t{1} << port;
}

void Forwarder::FlushExpired(uint64_t now) {
  up_mask_ = datapath_.up_mask.load(std::memory_order_relaxed);
  uint64_t due = 0;
  ForEachBit(pending_, [&](uint16_t p) {
    if (now >= tx_[p].deadline) due |= uint64_t{1} << p;
  });
  ForEachBit(due, [&](uint16_t p) { FlushPort(p); });
}

void Forwarder::FlushAll() {
  ForEachBit(pending_, [&](uint16_t p) { FlushPort(p); });
}

void Forwarder::FlushPort(uint16_t port) {
  TxBuffer& buffer = tx_[port];
  PortCounters& out = counters_.ports[port];
  uint16_t n = buffer.n;
  buffer.n = 0;
  pending_ &= ~(uint64_t{1} << port);
  if (!((up_mask_ >> port) & 1)) {
    rte_pktmbuf_free_bulk(buffer.pkts, n);
    out.Drop(TxDrop::kLinkDown, n);
    return;
  }
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) bytes += buffer.pkts[i]->pkt_len;
  const DatapathPort& dp = datapath_.ports[port];
  const uint16_t queue = options_.worker < dp.nb_txq ? options_.worker
                                                     : options_.worker % dp.nb_txq;
  rte_spinlock_t* lock =
      dp.shared_tx ? &datapath_.tx_locks[port][queue] : nullptr;
  if (lock != nullptr) rte_spinlock_lock(lock);
  uint16_t sent = rte_eth_tx_burst(dp.eth_port, queue, buffer.pkts, n);
  for (int retry = 0; sent < n && retry < kTxRetries; ++retry) {
    uint16_t more = rte_eth_tx_burst(dp.eth_port, queue, buffer.pkts + sent, n - sent);
    if (more == 0) break;
    sent += more;
  }
  if (lock != nullptr) rte_spinlock_unlock(lock);
  if (sent < n) {
    for (uint16_t i = sent; i < n; ++i) bytes -= buffer.pkts[i]->pkt_len;
    rte_pktmbuf_free_bulk(buffer.pkts + sent, n - sent);
    out.Drop(TxDrop::kQueueFull, n - sent);
  }
  out.tx_packets.Add(sent);
  out.tx_bytes.Add(bytes);
}

}  // namespace hvswitch
