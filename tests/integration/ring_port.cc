#include "tests/integration/ring_port.h"

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hvswitch::testing {

std::unique_ptr<RingPort> RingPort::Create(const std::string& name, uint16_t nb_rxq,
                                           uint16_t nb_txq, unsigned ring_size,
                                           rte_mempool* pool, unsigned tx_ring_size) {
  if (tx_ring_size == 0) tx_ring_size = ring_size;
  std::unique_ptr<RingPort> port(new RingPort);
  for (uint16_t q = 0; q < nb_rxq; ++q) {
    port->rx_.push_back(rte_ring_create((name + "r" + std::to_string(q)).c_str(), ring_size,
                                        0, RING_F_SP_ENQ | RING_F_SC_DEQ));
  }
  for (uint16_t q = 0; q < nb_txq; ++q) {
    port->tx_.push_back(rte_ring_create((name + "t" + std::to_string(q)).c_str(), tx_ring_size,
                                        0, RING_F_SC_DEQ));
  }
  for (rte_ring* r : port->rx_) if (r == nullptr) return nullptr;
  for (rte_ring* r : port->tx_) if (r == nullptr) return nullptr;
  int id = rte_eth_from_rings(name.c_str(), port->rx_.data(), nb_rxq, port->tx_.data(),
                              nb_txq, 0);
  if (id < 0) return nullptr;
  port->eth_port_ = static_cast<uint16_t>(id);
  rte_eth_conf conf{};
  if (rte_eth_dev_configure(id, nb_rxq, nb_txq, &conf) != 0) return nullptr;
  for (uint16_t q = 0; q < nb_rxq; ++q) {
    if (rte_eth_rx_queue_setup(id, q, ring_size, 0, nullptr, pool) != 0) return nullptr;
  }
  for (uint16_t q = 0; q < nb_txq; ++q) {
    if (rte_eth_tx_queue_setup(id, q, tx_ring_size, 0, nullptr) != 0) return nullptr;
  }
  if (rte_eth_dev_start(id) != 0) return nullptr;
  return port;
}

RingPort::~RingPort() {
  if (drain_callback_ != nullptr) {
    // No transmit call is in flight here (the test's own thread makes them): freed at once.
    rte_eth_remove_tx_callback(eth_port_, 0, drain_callback_);
    rte_free(const_cast<rte_eth_rxtx_callback*>(drain_callback_));
  }
  if (eth_port_ != UINT16_MAX) {
    rte_eth_dev_stop(eth_port_);
    rte_eth_dev_close(eth_port_);
  }
  for (rte_ring* r : rx_) {
    void* m = nullptr;
    while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    rte_ring_free(r);
  }
  for (rte_mbuf* m : TakeSent()) rte_pktmbuf_free(m);
  for (rte_ring* r : tx_) rte_ring_free(r);
}

unsigned RingPort::Inject(uint16_t queue, rte_mbuf* const* frames, unsigned n) {
  // What a real device's receive sets, and net_ring's does not.
  for (unsigned i = 0; i < n; ++i) frames[i]->port = eth_port_;
  return rte_ring_enqueue_burst(rx_[queue], reinterpret_cast<void* const*>(frames), n, nullptr);
}

unsigned RingPort::Waiting(uint16_t queue) const { return rte_ring_count(rx_[queue]); }

std::vector<rte_mbuf*> RingPort::TakeSent(int queue) {
  std::vector<rte_mbuf*> out;
  for (size_t q = 0; q < tx_.size(); ++q) {
    if (queue >= 0 && q != static_cast<size_t>(queue)) continue;
    void* objs[512];
    unsigned n;
    while ((n = rte_ring_dequeue_burst(tx_[q], objs, 512, nullptr)) != 0) {
      for (unsigned i = 0; i < n; ++i) out.push_back(static_cast<rte_mbuf*>(objs[i]));
    }
  }
  return out;
}

unsigned RingPort::MoveSentTo(RingPort& to, unsigned n) {
  void* objs[256];
  unsigned got = rte_ring_dequeue_burst(tx_[0], objs, std::min(n, 256u), nullptr);
  unsigned put = rte_ring_enqueue_burst(to.rx_[0], objs, got, nullptr);
  for (unsigned i = put; i < got; ++i) rte_pktmbuf_free(static_cast<rte_mbuf*>(objs[i]));
  return put;
}

void RingPort::DrainOnTransmit(unsigned per_call, unsigned every) {
  drain_per_call_ = per_call;
  drain_every_ = every;
  calls_ = 0;
  if (drain_callback_ == nullptr) {
    drain_callback_ = rte_eth_add_tx_callback(eth_port_, 0, &DrainBeforeTransmit, this);
    if (drain_callback_ == nullptr) std::abort();
  }
}

uint16_t RingPort::DrainBeforeTransmit(uint16_t, uint16_t, rte_mbuf**, uint16_t n, void* self) {
  auto* port = static_cast<RingPort*>(self);
  if (++port->calls_ % port->drain_every_ != 0) return n;
  void* objs[256];
  const unsigned got = rte_ring_dequeue_burst(port->tx_[0], objs,
                                              std::min(port->drain_per_call_, 256u), nullptr);
  for (unsigned i = 0; i < got; ++i) rte_pktmbuf_free(static_cast<rte_mbuf*>(objs[i]));
  port->drained_ += got;
  return n;
}

rte_mbuf* MakeFrame(rte_mempool* pool, const TestFrame& f) {
  const uint32_t header = RTE_ETHER_HDR_LEN + (f.tag >= 0 ? RTE_VLAN_HLEN : 0);
  const bool inner = f.tag >= 0 && f.inner_tag >= 0;
  const uint32_t size = header + std::max<uint32_t>(f.payload, inner ? 8 : 4);
  std::vector<uint8_t> bytes(size, 0);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(bytes.data());
  std::memcpy(eth->dst_addr.addr_bytes, &f.dst, 6);
  std::memcpy(eth->src_addr.addr_bytes, &f.src, 6);
  if (f.tag >= 0) {
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
    auto* tag = reinterpret_cast<rte_vlan_hdr*>(eth + 1);
    tag->vlan_tci = rte_cpu_to_be_16(static_cast<uint16_t>(f.pcp << 13 | f.tag));
    tag->eth_proto = rte_cpu_to_be_16(inner ? f.inner_tpid : 0x88b5);
    if (inner) {
      auto* second = tag + 1;
      second->vlan_tci = rte_cpu_to_be_16(static_cast<uint16_t>(f.inner_tag));
      second->eth_proto = rte_cpu_to_be_16(0x88b5);
    }
  } else {
    eth->ether_type = rte_cpu_to_be_16(0x88b5);
  }
  if (f.ipv4_src != 0 && !inner) {
    uint8_t* l3 = bytes.data() + header;
    const uint16_t type = f.arp ? RTE_ETHER_TYPE_ARP : RTE_ETHER_TYPE_IPV4;
    const rte_be16_t be_type = rte_cpu_to_be_16(type);
    std::memcpy(l3 - 2, &be_type, 2);
    if (f.arp) {
      const uint8_t arp[8] = {0, 1, 0x08, 0x00, 6, 4, 0, 1};  // Ethernet/IPv4, a request
      std::memcpy(l3, arp, 8);
      std::memcpy(l3 + 8, &f.src, 6);
      std::memcpy(l3 + 14, &f.ipv4_src, 4);
    } else {
      l3[0] = 0x45;
      const rte_be16_t total = rte_cpu_to_be_16(static_cast<uint16_t>(f.payload));
      std::memcpy(l3 + 2, &total, 2);
      l3[8] = 64;
      l3[9] = IPPROTO_UDP;
      std::memcpy(l3 + 12, &f.ipv4_src, 4);
      const uint8_t ports[4] = {0x03, 0xe8, 0x07, 0xd0};  // 1000 -> 2000
      std::memcpy(l3 + 20, ports, 4);
    }
  }
  std::memcpy(bytes.data() + size - 4, &f.seq, 4);
  // Segments of at most 2000 bytes, so that jumbo frames are chains as a PMD makes them.
  rte_mbuf* head = nullptr;
  for (uint32_t off = 0; off < size;) {
    uint32_t part = std::min<uint32_t>(2000, size - off);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) std::abort();
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(part)), bytes.data() + off, part);
    if (head == nullptr) {
      head = m;
    } else if (rte_pktmbuf_chain(head, m) != 0) {
      std::abort();
    }
    off += part;
  }
  return head;
}

TestFrame ParseFrame(const rte_mbuf* m) {
  TestFrame f;
  uint8_t header[RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN];
  const auto* eth =
      static_cast<const rte_ether_hdr*>(rte_pktmbuf_read(m, 0, sizeof(header), header));
  std::memcpy(&f.dst, eth->dst_addr.addr_bytes, 6);
  std::memcpy(&f.src, eth->src_addr.addr_bytes, 6);
  uint32_t hlen = RTE_ETHER_HDR_LEN;
  if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN)) {
    const auto* tag = reinterpret_cast<const rte_vlan_hdr*>(eth + 1);
    const uint16_t tci = rte_be_to_cpu_16(tag->vlan_tci);
    f.tag = tci & 0xfff;
    f.pcp = static_cast<uint8_t>(tci >> 13);
    hlen += RTE_VLAN_HLEN;
    const uint16_t next = rte_be_to_cpu_16(tag->eth_proto);
    if (next == RTE_ETHER_TYPE_VLAN || next == RTE_ETHER_TYPE_QINQ || next == RTE_ETHER_TYPE_QINQ1) {
      rte_vlan_hdr second;
      const auto* inner =
          static_cast<const rte_vlan_hdr*>(rte_pktmbuf_read(m, hlen, sizeof(second), &second));
      f.inner_tpid = next;
      f.inner_tag = rte_be_to_cpu_16(inner->vlan_tci) & 0xfff;
    }
  }
  f.payload = m->pkt_len - hlen;
  uint8_t tail[4];
  std::memcpy(&f.seq, rte_pktmbuf_read(m, m->pkt_len - 4, 4, tail), 4);
  return f;
}

}  // namespace hvswitch::testing
