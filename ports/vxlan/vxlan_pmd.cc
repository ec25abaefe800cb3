// The ethdev of net_hvs_vxlan (vxlan_device.h): transmit and receive bursts on workers,
// device operations and the VxlanDevice handle on the control thread.
//
// Driver-side DPDK API (rte_eth_dev_allocate, rte_vdev_register...) is internal ABI, with
// the driver SDK headers ports/host_tap/dpdk_sdk/ holds (see host_tap_pmd.cc).
#define ALLOW_INTERNAL_API 1

#include <errno.h>

#include <ethdev_driver.h>  // dpdk_sdk/
#include <ethdev_vdev.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ports/queue_counter.h"
#include "ports/vxlan/vxlan_device.h"

static_assert(RTE_VER_YEAR == 22 && RTE_VER_MONTH == 11,
              "ports/host_tap/dpdk_sdk/ holds DPDK 22.11's driver headers");

namespace hvswitch {

constexpr char kPmdName[] = "net_hvs_vxlan";
constexpr uint16_t kMaxQueues = 16;
constexpr uint32_t kLearnRingSize = 1024;
constexpr uint16_t kBulk = 32;  // frames looked up and sent together (<= RTE_HASH_LOOKUP_BULK_MAX)

struct alignas(RTE_CACHE_LINE_SIZE) VtepQueueCounters {
  QueueCounter c[kNbVtepCounters];
  void Add(VtepCounter which, uint64_t by) { c[static_cast<size_t>(which)].Add(by); }
};

// Queues live in the device's private data, zeroed by rte_zmalloc: every field starts 0.
struct alignas(RTE_CACHE_LINE_SIZE) VxlanRxQueue {
  VxlanPrivate* dev;
  rte_ring* ring;  // null: not set up
  uint16_t port_id;
  // The last outer source and its VTEP id under `routes` (most bursts come from one VTEP).
  const VxlanRoutes* cached_routes;
  rte_be32_t cached_ip;
  uint16_t cached_vtep;
  // The last remote MAC found current (or noted) at cached_version of the remote table.
  uint64_t cached_mac;
  rte_be32_t cached_mac_ip;
  uint64_t cached_version;
  QueueCounter packets, bytes, learn_notes_lost;
  VtepQueueCounters vteps[kMaxVteps + 1];  // [kMaxVteps]: no known VTEP's address
};

struct alignas(RTE_CACHE_LINE_SIZE) VxlanTxQueue {
  VxlanPrivate* dev;
  uint16_t qid;
  uint16_t ip_id;
  // The last remote MAC found and its VTEP, at cached_version of the remote table: a
  // burst all to it (a conversation) skips the table.
  uint64_t cached_dst;
  uint64_t cached_version;
  uint16_t cached_vtep;
  bool cached;
  QueueCounter packets, bytes, flooded, no_flood_list, no_uplink;
  VtepQueueCounters vteps[kMaxVteps];
};

struct VxlanPrivate {
  uint32_t vni;
  bool udp_csum;
  bool learn;
  bool attached;
  uint16_t port_id;
  rte_ether_addr mac;
  VxlanUplinkRef uplink;
  std::atomic<const VxlanRoutes*> routes;
  rte_hash* remote;  // MAC -> VTEP id (as the data pointer)
  std::atomic<uint64_t> remote_version;
  rte_ring* learn_ring;                  // LearnNote elements
  std::vector<int32_t>* removed;         // remote-table positions to free after a grace
  VxlanRxQueue rxq[kMaxQueues];
  VxlanTxQueue txq[kMaxQueues];
};

namespace {

VxlanPrivate& Priv(rte_eth_dev* dev) { return *static_cast<VxlanPrivate*>(dev->data->dev_private); }

uint64_t LoadMac(const uint8_t* p) {
  uint64_t mac = 0;
  std::memcpy(&mac, p, 6);
  return mac;
}

// ------------------------------------------------------------------ Tx (worker) --------

// Encapsulated frames on their way to the uplink, with what their counters need.
struct Outgoing {
  rte_mbuf* pkts[kBulk];
  uint16_t vtep[kBulk];
  uint32_t len[kBulk];
  uint16_t n = 0;
};

void SendOut(VxlanTxQueue& q, Outgoing& out) {
  if (out.n == 0) return;
  const VxlanUplinkRef& up = q.dev->uplink;
  const uint16_t queue = q.qid % up.nb_txq;
  rte_spinlock_t* lock = up.locks != nullptr ? &up.locks[queue] : nullptr;
  if (lock != nullptr) rte_spinlock_lock(lock);
  const uint16_t sent = rte_eth_tx_burst(up.eth_port, queue, out.pkts, out.n);
  if (lock != nullptr) rte_spinlock_unlock(lock);
  // Counted per run of one VTEP (a burst is mostly one).
  uint16_t run_vtep = out.vtep[0];
  uint64_t packets = 0, bytes = 0;
  for (uint16_t i = 0; i < sent; ++i) {
    if (out.vtep[i] != run_vtep) {
      q.vteps[run_vtep].Add(VtepCounter::k_tx_packets, packets);
      q.vteps[run_vtep].Add(VtepCounter::k_tx_bytes, bytes);
      run_vtep = out.vtep[i];
      packets = bytes = 0;
    }
    ++packets;
    bytes += out.len[i];
  }
  if (packets != 0) {
    q.vteps[run_vtep].Add(VtepCounter::k_tx_packets, packets);
    q.vteps[run_vtep].Add(VtepCounter::k_tx_bytes, bytes);
  }
  for (uint16_t i = sent; i < out.n; ++i) q.vteps[out.vtep[i]].Add(VtepCounter::k_uplink_full, 1);
  if (sent < out.n) rte_pktmbuf_free_bulk(out.pkts + sent, out.n - sent);
  out.n = 0;
}

// One frame to VTEP `vtep`: encapsulated in place when it is the tunnel's alone, else
// in a copy (a flooded frame's buffer is shared with the bridge's other ports).
void SendTo(VxlanTxQueue& q, const VtepRoute& route, uint16_t vtep, rte_mbuf* m,
            uint16_t src_port, Outgoing& out) {
  if (!route.resolved) {
    q.vteps[vtep].Add(VtepCounter::k_unresolved, 1);
    rte_pktmbuf_free(m);
    return;
  }
  if (rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m) ||
      rte_pktmbuf_headroom(m) < kVxlanOverhead) {
    rte_mbuf* copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
    rte_pktmbuf_free(m);
    m = copy;
  }
  if (m == nullptr || !Encapsulate(m, route.header, src_port, q.ip_id++, q.dev->udp_csum)) {
    q.vteps[vtep].Add(VtepCounter::k_no_mbuf, 1);
    rte_pktmbuf_free(m);
    return;
  }
  out.pkts[out.n] = m;
  out.vtep[out.n] = vtep;
  out.len[out.n] = m->pkt_len;
  if (++out.n == kBulk) SendOut(q, out);
}

// Head-end replication: a copy to each VTEP of the flood list, the frame itself to the
// last.
void Flood(VxlanTxQueue& q, const VxlanRoutes& routes, rte_mbuf* m, Outgoing& out) {
  if (routes.nb_flood == 0) {
    q.no_flood_list.Add(1);
    rte_pktmbuf_free(m);
    return;
  }
  q.flooded.Add(1);
  const uint16_t src_port = InnerFlowPort(m);
  const uint16_t last = routes.flood[routes.nb_flood - 1];
  for (uint16_t k = 0; k + 1 < routes.nb_flood; ++k) {
    const uint16_t vtep = routes.flood[k];
    const VtepRoute& route = routes.vteps[vtep];
    if (!route.resolved) {
      q.vteps[vtep].Add(VtepCounter::k_unresolved, 1);
      continue;
    }
    rte_mbuf* copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
    if (copy == nullptr) {
      q.vteps[vtep].Add(VtepCounter::k_no_mbuf, 1);
      continue;
    }
    SendTo(q, route, vtep, copy, src_port, out);
  }
  SendTo(q, routes.vteps[last], last, m, src_port, out);
}

uint16_t TxBurst(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  VxlanTxQueue& q = *static_cast<VxlanTxQueue*>(queue);
  VxlanPrivate& d = *q.dev;
  const VxlanRoutes* routes = d.routes.load(std::memory_order_acquire);
  if (!d.attached || routes == nullptr) {
    q.no_uplink.Add(nb_pkts);
    rte_pktmbuf_free_bulk(pkts, nb_pkts);
    return nb_pkts;
  }
  const uint64_t version = d.remote_version.load(std::memory_order_acquire);
  if (version != q.cached_version) q.cached = false;
  uint64_t bytes = 0;
  Outgoing out;
  for (uint16_t base = 0; base < nb_pkts; base += kBulk) {
    const uint16_t n = std::min<uint16_t>(kBulk, nb_pkts - base);
    rte_mbuf** m = pkts + base;
    uint64_t macs[kBulk];
    void* data[kBulk];
    uint64_t group = 0;
    bool all_cached = q.cached;
    for (uint16_t i = 0; i < n; ++i) {
      bytes += m[i]->pkt_len;
      macs[i] = m[i]->data_len >= RTE_ETHER_HDR_LEN ? LoadMac(rte_pktmbuf_mtod(m[i], uint8_t*))
                                                    : 1;  // a runt: flooded as a group frame
      group |= (macs[i] & 1) << i;  // I/G bit: the first byte's lowest
      all_cached &= macs[i] == q.cached_dst;
    }
    uint64_t hits;
    if (all_cached) {
      hits = (uint64_t{1} << n) - 1;  // n <= kBulk < 64
      for (uint16_t i = 0; i < n; ++i) data[i] = reinterpret_cast<void*>(uintptr_t{q.cached_vtep});
    } else {
      const void* keys[kBulk];
      for (uint16_t i = 0; i < n; ++i) keys[i] = &macs[i];
      hits = 0;
      rte_hash_lookup_bulk_data(d.remote, keys, n, &hits, data);
      hits &= ~group;
      if (hits != 0) {
        const int last = 63 - __builtin_clzll(hits);
        q.cached_dst = macs[last];
        q.cached_vtep = static_cast<uint16_t>(reinterpret_cast<uintptr_t>(data[last]));
        q.cached_version = version;
        q.cached = true;
      }
    }
    for (uint16_t i = 0; i < n; ++i) {
      if ((hits >> i) & 1) {
        const auto vtep = static_cast<uint16_t>(reinterpret_cast<uintptr_t>(data[i]));
        SendTo(q, routes->vteps[vtep], vtep, m[i], InnerFlowPort(m[i]), out);
      } else {
        Flood(q, *routes, m[i], out);
      }
    }
  }
  SendOut(q, out);
  q.packets.Add(nb_pkts);
  q.bytes.Add(bytes);
  return nb_pkts;
}

// ------------------------------------------------------------------ Rx (worker) --------

uint16_t VtepOf(VxlanRxQueue& q, const VxlanRoutes* routes, rte_be32_t ip) {
  if (routes == q.cached_routes && ip == q.cached_ip) return q.cached_vtep;
  uint16_t vtep = kMaxVteps;
  if (routes != nullptr) {
    for (uint16_t i = 0; i < kMaxVteps; ++i) {
      if (routes->vteps[i].ip == ip) {
        vtep = i;
        break;
      }
    }
  }
  q.cached_routes = routes;
  q.cached_ip = ip;
  q.cached_vtep = vtep;
  return vtep;
}

// learn=1: the inner source seen behind `ip` while the table says another VTEP (or none)
// is noted for the control thread, once per source and table version.
void NoteSource(VxlanRxQueue& q, VxlanPrivate& d, const rte_mbuf* m, rte_be32_t ip,
                uint16_t vtep) {
  const uint64_t mac = LoadMac(rte_pktmbuf_mtod(m, const uint8_t*) + 6);
  if ((mac & 1) != 0 || mac == 0) return;  // a group or null source: the bridge drops it
  const uint64_t version = d.remote_version.load(std::memory_order_acquire);
  if (mac == q.cached_mac && ip == q.cached_mac_ip && version == q.cached_version) return;
  void* data = nullptr;
  const bool current = vtep != kMaxVteps && rte_hash_lookup_data(d.remote, &mac, &data) >= 0 &&
                       reinterpret_cast<uintptr_t>(data) == vtep;
  if (!current) {
    LearnNote note{mac, ip, 0};
    if (rte_ring_mp_enqueue_elem(d.learn_ring, &note, sizeof(note)) != 0) {
      q.learn_notes_lost.Add(1);
      return;  // not cached: noted again with the next frame
    }
  }
  q.cached_mac = mac;
  q.cached_mac_ip = ip;
  q.cached_version = version;
}

uint16_t RxBurst(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  VxlanRxQueue& q = *static_cast<VxlanRxQueue*>(queue);
  VxlanPrivate& d = *q.dev;
  const uint16_t n = static_cast<uint16_t>(
      rte_ring_sc_dequeue_burst(q.ring, reinterpret_cast<void**>(pkts), nb_pkts, nullptr));
  if (n == 0) return 0;
  const VxlanRoutes* routes = d.routes.load(std::memory_order_acquire);
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    const rte_be32_t ip = m->hash.usr;
    const uint16_t vtep = VtepOf(q, routes, ip);
    q.vteps[vtep].Add(VtepCounter::k_rx_packets, 1);
    q.vteps[vtep].Add(VtepCounter::k_rx_bytes, m->pkt_len);
    bytes += m->pkt_len;
    if (d.learn) NoteSource(q, d, m, ip, vtep);
    m->hash.usr = 0;
    m->port = q.port_id;
  }
  q.packets.Add(n);
  q.bytes.Add(bytes);
  return n;
}

// -------------------------------------------------------------- device (control) -------

bool UplinkUp(const VxlanPrivate& p) {
  if (!p.attached) return false;
  rte_eth_link link{};
  return rte_eth_link_get_nowait(p.uplink.eth_port, &link) == 0 &&
         link.link_status == RTE_ETH_LINK_UP;
}

int UpdateLink(rte_eth_dev* dev, int) {
  rte_eth_link link{};
  link.link_speed = RTE_ETH_SPEED_NUM_10G;
  link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
  link.link_autoneg = RTE_ETH_LINK_FIXED;
  link.link_status =
      dev->data->dev_started && UplinkUp(Priv(dev)) ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
  return rte_eth_linkstatus_set(dev, &link);
}

int InfosGet(rte_eth_dev*, rte_eth_dev_info* info) {
  info->max_mac_addrs = 1;
  info->max_rx_queues = kMaxQueues;
  info->max_tx_queues = kMaxQueues;
  info->max_rx_pktlen = 9000 + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN;
  info->min_mtu = RTE_ETHER_MIN_MTU;
  info->max_mtu = 9000;
  info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
  info->speed_capa = RTE_ETH_LINK_SPEED_10G;
  return 0;
}

int Configure(rte_eth_dev*) { return 0; }

void SetStarted(rte_eth_dev* dev, bool started) {
  const uint8_t state = started ? RTE_ETH_QUEUE_STATE_STARTED : RTE_ETH_QUEUE_STATE_STOPPED;
  std::fill_n(dev->data->rx_queue_state, dev->data->nb_rx_queues, state);
  std::fill_n(dev->data->tx_queue_state, dev->data->nb_tx_queues, state);
  dev->data->dev_started = started;
  UpdateLink(dev, 0);
}

int Start(rte_eth_dev* dev) {
  SetStarted(dev, true);
  return 0;
}

int Stop(rte_eth_dev* dev) {
  SetStarted(dev, false);
  return 0;
}

void ReleaseRing(VxlanRxQueue& q) {
  if (q.ring == nullptr) return;
  rte_mbuf* m = nullptr;
  while (rte_ring_sc_dequeue(q.ring, reinterpret_cast<void**>(&m)) == 0) rte_pktmbuf_free(m);
  rte_ring_free(q.ring);
  q.ring = nullptr;
}

void RxQueueRelease(rte_eth_dev* dev, uint16_t qid) { ReleaseRing(Priv(dev).rxq[qid]); }

int RxQueueSetup(rte_eth_dev* dev, uint16_t qid, uint16_t nb_desc, unsigned int socket,
                 const rte_eth_rxconf*, rte_mempool*) {
  VxlanPrivate& p = Priv(dev);
  VxlanRxQueue& q = p.rxq[qid];
  ReleaseRing(q);
  char name[RTE_RING_NAMESIZE];
  std::snprintf(name, sizeof(name), "hvsvx%u_%u", unsigned{dev->data->port_id}, unsigned{qid});
  q.ring = rte_ring_create(name, rte_align32pow2(std::max<uint16_t>(nb_desc, 64)),
                           static_cast<int>(socket), RING_F_SC_DEQ);
  if (q.ring == nullptr) return -rte_errno;
  q.dev = &p;
  q.port_id = dev->data->port_id;
  q.cached_routes = nullptr;
  q.cached_ip = 0;
  q.cached_mac = 0;
  dev->data->rx_queues[qid] = &q;
  return 0;
}

int TxQueueSetup(rte_eth_dev* dev, uint16_t qid, uint16_t, unsigned int, const rte_eth_txconf*) {
  VxlanPrivate& p = Priv(dev);
  p.txq[qid].dev = &p;
  p.txq[qid].qid = qid;
  dev->data->tx_queues[qid] = &p.txq[qid];
  return 0;
}

int Close(rte_eth_dev* dev) {
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return 0;
  VxlanPrivate& p = Priv(dev);
  for (VxlanRxQueue& q : p.rxq) ReleaseRing(q);
  rte_hash_free(p.remote);
  p.remote = nullptr;
  rte_ring_free(p.learn_ring);
  p.learn_ring = nullptr;
  delete p.removed;
  p.removed = nullptr;
  dev->data->mac_addrs = nullptr;  // p.mac: freed with the private data
  return 0;
}

int StatsGet(rte_eth_dev* dev, rte_eth_stats* stats) {
  VxlanPrivate& p = Priv(dev);
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; ++i) {
    stats->ipackets += p.rxq[i].packets.Get();
    stats->ibytes += p.rxq[i].bytes.Get();
  }
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; ++i) {
    const VxlanTxQueue& q = p.txq[i];
    stats->opackets += q.packets.Get();
    stats->obytes += q.bytes.Get();
    stats->oerrors += q.no_flood_list.Get() + q.no_uplink.Get();
  }
  return 0;
}

int Accept(rte_eth_dev*) { return 0; }
int MtuSet(rte_eth_dev*, uint16_t) { return 0; }

const eth_dev_ops kOps = [] {
  eth_dev_ops ops{};
  ops.dev_configure = Configure;
  ops.dev_start = Start;
  ops.dev_stop = Stop;
  ops.dev_close = Close;
  ops.dev_infos_get = InfosGet;
  ops.link_update = UpdateLink;
  ops.promiscuous_enable = Accept;
  ops.promiscuous_disable = Accept;
  ops.allmulticast_enable = Accept;
  ops.allmulticast_disable = Accept;
  ops.stats_get = StatsGet;
  ops.mtu_set = MtuSet;
  ops.rx_queue_setup = RxQueueSetup;
  ops.rx_queue_release = RxQueueRelease;
  ops.tx_queue_setup = TxQueueSetup;
  return ops;
}();

struct Args {
  uint32_t vni = 0;
  bool udp_csum = false;
  bool learn = true;
};

int ParseArgs(const char* text, Args& args) {
  static const char* const kKeys[] = {"vni", "udp_csum", "learn", nullptr};
  rte_kvargs* kv = rte_kvargs_parse(text != nullptr ? text : "", kKeys);
  if (kv == nullptr) return -EINVAL;
  auto number = [](const char*, const char* value, void* out) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(value, &end, 10);
    if (*value == '\0' || *end != '\0' || n > kMaxVni) return -EINVAL;
    *static_cast<uint32_t*>(out) = static_cast<uint32_t>(n);
    return 0;
  };
  uint32_t udp_csum = 0, learn = 1;
  int rc = rte_kvargs_process(kv, "vni", number, &args.vni);
  if (rc == 0) rc = rte_kvargs_process(kv, "udp_csum", number, &udp_csum);
  if (rc == 0) rc = rte_kvargs_process(kv, "learn", number, &learn);
  rte_kvargs_free(kv);
  if (rc == 0 && (args.vni == 0 || udp_csum > 1 || learn > 1)) rc = -EINVAL;
  args.udp_csum = udp_csum == 1;
  args.learn = learn == 1;
  return rc;
}

int Probe(rte_vdev_device* vdev) {
  const char* name = rte_vdev_device_name(vdev);
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return -ENOTSUP;
  Args args;
  if (ParseArgs(rte_vdev_device_args(vdev), args) != 0) {
    RTE_LOG(ERR, PMD, "%s: needs vni=1..%u[,udp_csum=0|1][,learn=0|1]\n", name, kMaxVni);
    return -EINVAL;
  }
  rte_eth_dev* dev = rte_eth_vdev_allocate(vdev, sizeof(VxlanPrivate));
  if (dev == nullptr) return -ENOMEM;
  VxlanPrivate& p = Priv(dev);
  p.vni = args.vni;
  p.udp_csum = args.udp_csum;
  p.learn = args.learn;
  p.port_id = dev->data->port_id;
  char table[RTE_HASH_NAMESIZE];
  std::snprintf(table, sizeof(table), "hvsvxmac%u", unsigned{p.port_id});
  rte_hash_parameters params{};
  params.name = table;
  params.entries = kMaxRemoteMacs;
  params.key_len = sizeof(uint64_t);
  params.hash_func = rte_hash_crc;
  params.socket_id = static_cast<int>(rte_socket_id());
  // Lock-free readers (the workers), one writer (the control thread); a removed key's slot
  // is freed only after a grace period (ReclaimRemoved).
  params.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF;
  p.remote = rte_hash_create(&params);
  char ring[RTE_RING_NAMESIZE];
  std::snprintf(ring, sizeof(ring), "hvsvxlearn%u", unsigned{p.port_id});
  p.learn_ring = rte_ring_create_elem(ring, sizeof(LearnNote), kLearnRingSize,
                                      static_cast<int>(rte_socket_id()), RING_F_SC_DEQ);
  if (p.remote == nullptr || p.learn_ring == nullptr) {
    RTE_LOG(ERR, PMD, "%s: no memory for its tables: %s\n", name, rte_strerror(rte_errno));
    rte_hash_free(p.remote);
    rte_ring_free(p.learn_ring);
    rte_eth_dev_release_port(dev);
    return -ENOMEM;
  }
  p.removed = new std::vector<int32_t>;
  // Locally administered, the VNI in the last three bytes.
  const uint8_t mac[6] = {0x02, 'v', 'x', static_cast<uint8_t>(args.vni >> 16),
                          static_cast<uint8_t>(args.vni >> 8), static_cast<uint8_t>(args.vni)};
  std::memcpy(p.mac.addr_bytes, mac, 6);
  dev->data->mac_addrs = &p.mac;
  dev->dev_ops = &kOps;
  dev->rx_pkt_burst = RxBurst;
  dev->tx_pkt_burst = TxBurst;
  rte_eth_dev_probing_finish(dev);
  RTE_LOG(INFO, PMD, "%s: VXLAN VNI %u%s%s\n", name, args.vni,
          args.udp_csum ? ", UDP checksums" : "", args.learn ? ", learning VTEPs" : "");
  return 0;
}

int Remove(rte_vdev_device* vdev) {
  rte_eth_dev* dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
  if (dev == nullptr) return 0;
  if (dev->data->dev_started) rte_eth_dev_stop(dev->data->port_id);
  return rte_eth_dev_close(dev->data->port_id);
}

}  // namespace

// ------------------------------------------------------------------ VxlanDevice --------

std::optional<VxlanDevice> VxlanDevice::Of(uint16_t eth_port) {
  if (!rte_eth_dev_is_valid_port(eth_port)) return std::nullopt;
  rte_eth_dev* dev = &rte_eth_devices[eth_port];
  if (dev->dev_ops != &kOps) return std::nullopt;
  return VxlanDevice(&Priv(dev));
}

uint32_t VxlanDevice::vni() const { return p_->vni; }

void VxlanDevice::AttachUplink(const VxlanUplinkRef& uplink) {
  p_->uplink = uplink;
  if (p_->uplink.nb_txq == 0) p_->uplink.nb_txq = 1;
  p_->attached = true;
}

const VxlanRoutes* VxlanDevice::PublishRoutes(const VxlanRoutes* routes) {
  return p_->routes.exchange(routes, std::memory_order_acq_rel);
}

const VxlanRoutes* VxlanDevice::routes() const {
  return p_->routes.load(std::memory_order_acquire);
}

bool VxlanDevice::SetRemoteMac(uint64_t mac, uint16_t vtep) {
  const int rc = rte_hash_add_key_data(p_->remote, &mac,
                                       reinterpret_cast<void*>(uintptr_t{vtep}));
  p_->remote_version.fetch_add(1, std::memory_order_release);
  return rc == 0;
}

void VxlanDevice::RemoveRemoteMac(uint64_t mac) {
  const int32_t position = rte_hash_del_key(p_->remote, &mac);
  if (position < 0) return;
  p_->removed->push_back(position);
  p_->remote_version.fetch_add(1, std::memory_order_release);
}

void VxlanDevice::ReclaimRemoved() {
  for (int32_t position : *p_->removed) rte_hash_free_key_with_position(p_->remote, position);
  p_->removed->clear();
}

std::optional<uint16_t> VxlanDevice::RemoteMac(uint64_t mac) const {
  void* data = nullptr;
  if (rte_hash_lookup_data(p_->remote, &mac, &data) < 0) return std::nullopt;
  return static_cast<uint16_t>(reinterpret_cast<uintptr_t>(data));
}

void VxlanDevice::ForEachRemoteMac(absl::FunctionRef<void(uint64_t, uint16_t)> visit) const {
  const void* key = nullptr;
  void* data = nullptr;
  uint32_t next = 0;
  while (rte_hash_iterate(p_->remote, &key, &data, &next) >= 0) {
    visit(*static_cast<const uint64_t*>(key),
          static_cast<uint16_t>(reinterpret_cast<uintptr_t>(data)));
  }
}

size_t VxlanDevice::nb_remote_macs() const {
  const int32_t n = rte_hash_count(p_->remote);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

size_t VxlanDevice::DrainLearnNotes(LearnNote* out, size_t max) {
  return rte_ring_sc_dequeue_burst_elem(p_->learn_ring, out, sizeof(LearnNote),
                                        static_cast<unsigned>(max), nullptr);
}

VtepTotals VxlanDevice::VtepSums(uint16_t vtep) const {
  VtepTotals sums{};
  const rte_eth_dev_data* data = rte_eth_devices[p_->port_id].data;
  for (uint16_t q = 0; q < data->nb_rx_queues; ++q) {
    for (size_t c = 0; c < kNbVtepCounters; ++c) sums[c] += p_->rxq[q].vteps[vtep].c[c].Get();
  }
  if (vtep < kMaxVteps) {
    for (uint16_t q = 0; q < data->nb_tx_queues; ++q) {
      for (size_t c = 0; c < kNbVtepCounters; ++c) sums[c] += p_->txq[q].vteps[vtep].c[c].Get();
    }
  }
  return sums;
}

TunnelTotals VxlanDevice::TunnelSums() const {
  TunnelTotals sums{};
  const rte_eth_dev_data* data = rte_eth_devices[p_->port_id].data;
  for (uint16_t q = 0; q < data->nb_tx_queues; ++q) {
    sums[static_cast<size_t>(TunnelCounter::k_flooded)] += p_->txq[q].flooded.Get();
    sums[static_cast<size_t>(TunnelCounter::k_no_flood_list)] += p_->txq[q].no_flood_list.Get();
    sums[static_cast<size_t>(TunnelCounter::k_no_uplink)] += p_->txq[q].no_uplink.Get();
  }
  for (uint16_t q = 0; q < data->nb_rx_queues; ++q) {
    sums[static_cast<size_t>(TunnelCounter::k_learn_notes_lost)] +=
        p_->rxq[q].learn_notes_lost.Get();
  }
  return sums;
}

uint16_t VxlanDevice::nb_rx_queues() const {
  return rte_eth_devices[p_->port_id].data->nb_rx_queues;
}

uint16_t VxlanDevice::Deliver(uint16_t queue, rte_mbuf** pkts, uint16_t n) const {
  const uint16_t nb = nb_rx_queues();
  if (nb == 0) return 0;
  rte_ring* ring = p_->rxq[queue % nb].ring;
  if (ring == nullptr) return 0;
  return static_cast<uint16_t>(
      rte_ring_mp_enqueue_burst(ring, reinterpret_cast<void**>(pkts), n, nullptr));
}

const char* VxlanPmdName() { return kPmdName; }

}  // namespace hvswitch

constinit static rte_vdev_driver hvs_vxlan_driver = [] {
  rte_vdev_driver d{};
  d.probe = hvswitch::Probe;
  d.remove = hvswitch::Remove;
  return d;
}();
RTE_PMD_REGISTER_VDEV(net_hvs_vxlan, hvs_vxlan_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_hvs_vxlan, "vni=<1-16777215> udp_csum=<0|1> learn=<0|1>");
