// The ethdevs of net_hvs_tap and net_hvs_packet (host_tap_pmd.h): device operations on
// the control thread, the Rx/Tx bursts on workers (one worker per queue, as for every
// ethdev). The two differ only in their kernel device (kernel_device.h) and in how a
// frame is read: a tap's read gives the frame as it was; a packet socket's recvmsg says
// beside it what the kernel took off (the VLAN tag) and whether the interface sent it.
//
// Driver-side DPDK API (rte_eth_dev_allocate, rte_vdev_register...) is internal ABI:
// allowed here, for this file only, with the driver SDK headers of DPDK 22.11.11 that
// Debian's libdpdk-dev does not install (dpdk_sdk/).
#define ALLOW_INTERNAL_API 1
// The interrupt instance accessors (receive interrupts) are still experimental in 22.11.
#define ALLOW_EXPERIMENTAL_API 1

#include "ports/host_tap/host_tap_pmd.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <ethdev_driver.h>  // dpdk_sdk/
#include <ethdev_vdev.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_mbuf.h>
#include <rte_net.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "offload/header_layout.h"
#include "ports/host_tap/packet_socket_device.h"
#include "ports/host_tap/tap_device.h"

// The structures dpdk_sdk/ declares (rte_eth_dev, its ops, the vdev bus) must be laid out
// as in the installed libraries: another DPDK needs its own copy of those headers.
static_assert(RTE_VER_YEAR == 22 && RTE_VER_MONTH == 11,
              "ports/host_tap/dpdk_sdk/ holds DPDK 22.11's driver headers: replace them with "
              "this DPDK's");
#include "ports/host_tap/vnet_header.h"
#include "ports/queue_counter.h"

namespace hvswitch {
namespace {

constexpr char kTapName[] = "net_hvs_tap";
constexpr char kPacketName[] = "net_hvs_packet";
constexpr uint16_t kMaxRxQueues = 16;
constexpr uint16_t kMaxTxQueues = 64;
// A 64 KB IPv4/IPv6 super-frame behind an Ethernet header with one tag.
constexpr uint32_t kMaxFrame = 65535 + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN;
constexpr uint16_t kMaxRxSegs = 64;  // 2 KB mbufs: 33 for the largest frame
constexpr uint16_t kMaxTxSegs = 64;  // longer chains are dropped (counted)
// Headers copied aside to seed the pseudo-header sum: never written into the mbuf, whose
// data a flooded copy may share with a device that reads it later.
constexpr uint32_t kMaxHeaderCopy = 256;

using Counter = QueueCounter;

// The driver's own per-queue statistics, beyond packets and bytes.
#define HOST_TAP_RX_STATS(X)                                                              \
  X(super_frames, "TCP super-frames from the kernel (GSO), passed on whole")              \
  X(partial_csum, "frames with a partial checksum (NEEDS_CSUM), passed on as such")       \
  X(csum_completed, "partial checksums completed here (not TCP/UDP at the L4 header)")    \
  X(bad_offload, "frames dropped: a GSO request hvswitch cannot describe")                \
  X(truncated, "frames dropped: longer than the chain the queue reads into")
// net_hvs_packet's alone, after those.
#define PACKET_RX_STATS(X)                                                                \
  X(kernel_drops, "frames the kernel dropped: the queue's socket buffer was full")
#define HOST_TAP_TX_STATS(X)                                                              \
  X(super_frames, "TCP super-frames sent whole (GSO for the kernel to segment)")          \
  X(partial_csum, "frames sent with a partial checksum (NEEDS_CSUM)")                     \
  X(bad_request, "frames dropped: offload request without a virtio-net form, or chains " \
                 "over 64 segments")

struct RxStats {
  Counter packets, bytes, errors, nombuf;
#define X(name, help) Counter name;
  HOST_TAP_RX_STATS(X)
#undef X
};
struct TxStats {
  Counter packets, bytes, errors;
#define X(name, help) Counter name;
  HOST_TAP_TX_STATS(X)
#undef X
};

// Queues live in the device's private data, which rte_zmalloc gives zeroed and no
// constructor runs on: every field starts as zero.
struct alignas(RTE_CACHE_LINE_SIZE) RxQueue {
  int fd;
  uint16_t port_id;
  uint16_t seg_room;    // bytes each mbuf takes
  uint16_t max_segs;    // mbufs one frame may take
  uint16_t missing;     // spare[0 .. missing) to allocate before the next read
  bool partial_ok;      // Rx checksum offload on: partial checksums pass as such
  bool tso_ok;          // Rx LRO on: super-frames pass as such (a packet socket hands
                        // them over regardless; a tap only when asked)
  rte_mempool* pool;    // null: the queue is not set up
  rte_mbuf* spare[kMaxRxSegs];  // the chain the next frame is read into
  RxStats stats;
};

struct alignas(RTE_CACHE_LINE_SIZE) TxQueue {
  int fd;
  TxStats stats;
};

struct Private {
  KernelDevice* kernel;
  PacketSocketDevice* sockets;  // net_hvs_packet: the same device; net_hvs_tap: null
  rte_ether_addr mac;
  bool rx_csum, rx_tso;  // Rx offloads the application enabled
  RxQueue rxq[kMaxRxQueues];
  TxQueue txq[kMaxTxQueues];
};

Private& Priv(rte_eth_dev* dev) { return *static_cast<Private*>(dev->data->dev_private); }

// ---------------------------------------------------------------- Rx (worker) ---------

// A partial checksum offload/ would not find where it looks: completed at the place the
// kernel named, over the chain. False when that place is not inside the frame's first
// segment.
bool CompleteAt(rte_mbuf* m, uint32_t start, uint32_t offset) {
  if (start >= m->pkt_len || start + offset + 2 > m->data_len) return false;
  uint16_t raw = 0;
  if (rte_raw_cksum_mbuf(m, start, m->pkt_len - start, &raw) != 0) return false;
  // 0xffff and 0 are the same one's complement number; 0xffff is valid for UDP too.
  const uint16_t cksum = raw == 0xffff ? raw : static_cast<uint16_t>(~raw);
  std::memcpy(rte_pktmbuf_mtod_offset(m, uint8_t*, start + offset), &cksum, 2);
  return true;
}

// The header's meaning on the frame; false: drop it.
bool ApplyRxHeader(RxQueue& q, const VnetHeader& hdr, rte_mbuf* m) {
  m->ol_flags = 0;
  if (hdr.flags == 0 && hdr.gso_type == kVnetGsoNone) return true;
  const HeaderLayout layout =
      ParseHeaders(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, m->pkt_len);
  RxOffload rx = DecodeRxHeader(hdr, layout);
  // Without Rx checksum offload the application wants complete checksums.
  if (rx.fix == RxOffload::Fix::kNone && rx.ol_flags == RTE_MBUF_F_RX_L4_CKSUM_NONE &&
      !q.partial_ok) {
    rx.fix = RxOffload::Fix::kCompleteHere;
  }
  switch (rx.fix) {
    case RxOffload::Fix::kDrop:
      q.stats.bad_offload.Add(1);
      return false;
    case RxOffload::Fix::kCompleteHere:
      if (!CompleteAt(m, hdr.csum_start, hdr.csum_offset)) {
        q.stats.bad_offload.Add(1);
        return false;
      }
      q.stats.csum_completed.Add(1);
      return true;
    case RxOffload::Fix::kNone:
      break;
  }
  m->ol_flags = rx.ol_flags;
  if (rx.ol_flags & RTE_MBUF_F_RX_LRO) {
    if (!q.tso_ok) {  // the application cannot take it, nothing here segments
      q.stats.bad_offload.Add(1);
      return false;
    }
    m->tso_segsz = rx.tso_segsz;
    q.stats.super_frames.Add(1);
  } else if ((rx.ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_NONE) {
    q.stats.partial_csum.Add(1);
  }
  return true;
}

// What a packet socket says beside a frame.
struct FrameNotes {
  bool outgoing = false;  // the interface sent it (a kernel without the fanout flag)
  bool tagged = false;    // the kernel took its VLAN tag off (it always does on receive)
  uint16_t tpid = RTE_ETHER_TYPE_VLAN;
  uint16_t tci = 0;
};

enum class Kind { kTap, kPacketSocket };

// One frame with its header into `iov`: its length with the header, the whole frame's
// even when the buffers ended first; -1 and errno when there is none.
template <Kind kind>
ssize_t ReadFrame(int fd, iovec* iov, int iovcnt, FrameNotes& notes) {
  if constexpr (kind == Kind::kTap) {
    return readv(fd, iov, iovcnt);
  } else {
    sockaddr_ll from{};
    alignas(cmsghdr) uint8_t control[CMSG_SPACE(sizeof(tpacket_auxdata))];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof(from);
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(iovcnt);
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t len = recvmsg(fd, &msg, MSG_TRUNC);  // TRUNC: the whole length
    if (len < 0) return len;
    notes.outgoing = from.sll_pkttype == PACKET_OUTGOING;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA) continue;
      tpacket_auxdata aux;
      std::memcpy(&aux, CMSG_DATA(c), sizeof(aux));
      notes.tagged = (aux.tp_status & TP_STATUS_VLAN_VALID) != 0;
      notes.tci = aux.tp_vlan_tci;
      if ((aux.tp_status & TP_STATUS_VLAN_TPID_VALID) && aux.tp_vlan_tpid != 0) {
        notes.tpid = aux.tp_vlan_tpid;
      }
    }
    return len;
  }
}

// The tag the kernel took off, back where it was (its TPID too: 802.1ad's outer tag).
// The header's offsets were the untagged frame's, and ApplyRxHeader has used them.
bool RestoreTag(rte_mbuf*& m, const FrameNotes& notes) {
  m->vlan_tci = notes.tci;
  if (rte_vlan_insert(&m) != 0) return false;
  if (notes.tpid != RTE_ETHER_TYPE_VLAN) {
    rte_pktmbuf_mtod(m, rte_ether_hdr*)->ether_type = rte_cpu_to_be_16(notes.tpid);
  }
  m->l2_len = 0;  // (rte_vlan_insert grows it: a received frame carries no Tx request)
  return true;
}

template <Kind kind>
uint16_t RxBurst(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  RxQueue& q = *static_cast<RxQueue*>(queue);
  iovec iov[1 + kMaxRxSegs];
  VnetHeader hdr;
  iov[0] = {&hdr, sizeof(hdr)};
  uint16_t n = 0;
  uint64_t bytes = 0;
  // At most nb_pkts reads, dropped frames included: a namespace sending runts or frames
  // it cannot describe must not keep the worker here, away from its other ports.
  for (uint16_t reads = 0; reads < nb_pkts; ++reads) {
    if (q.missing != 0) {
      // Out of buffers: the frames wait in the kernel's queue (backpressure, not loss).
      if (rte_pktmbuf_alloc_bulk(q.pool, q.spare, q.missing) != 0) {
        q.stats.nombuf.Add(1);
        break;
      }
      q.missing = 0;
    }
    for (uint16_t i = 0; i < q.max_segs; ++i) {
      iov[1 + i] = {rte_pktmbuf_mtod(q.spare[i], void*), q.seg_room};
    }
    FrameNotes notes;
    const ssize_t len = ReadFrame<kind>(q.fd, iov, 1 + q.max_segs, notes);
    if (len < 0) {
      // A packet socket's EINVAL: the kernel had a frame its header cannot describe (a
      // tunnel's super-frame, say) and dropped it. Otherwise EAGAIN: nothing more; EIO
      // (a tap that is down) or ENETDOWN (the interface went away): nothing to read.
      if (kind == Kind::kTap || errno != EINVAL) break;
      q.stats.bad_offload.Add(1);
      continue;
    }
    if (notes.outgoing) continue;  // not received: what the interface sent
    if (static_cast<size_t>(len) < sizeof(hdr) + RTE_ETHER_HDR_LEN) {
      q.stats.errors.Add(1);
      continue;
    }
    const uint32_t frame = static_cast<uint32_t>(len - sizeof(hdr));
    if (frame > uint32_t{q.max_segs} * q.seg_room) {
      q.stats.truncated.Add(1);
      continue;
    }
    const uint16_t segs = static_cast<uint16_t>((frame + q.seg_room - 1) / q.seg_room);
    rte_mbuf* m = q.spare[0];
    uint32_t left = frame;
    for (uint16_t i = 0; i < segs; ++i) {
      rte_mbuf* seg = q.spare[i];
      seg->data_len = static_cast<uint16_t>(std::min<uint32_t>(left, q.seg_room));
      left -= seg->data_len;
      seg->next = i + 1 < segs ? q.spare[i + 1] : nullptr;
    }
    m->pkt_len = frame;
    m->nb_segs = segs;
    m->port = q.port_id;
    q.missing = segs;  // the chain's mbufs are the frame's now
    if (!ApplyRxHeader(q, hdr, m)) {
      rte_pktmbuf_free(m);
      continue;
    }
    if (notes.tagged && !RestoreTag(m, notes)) {  // (only without headroom)
      q.stats.errors.Add(1);
      rte_pktmbuf_free(m);
      continue;
    }
    bytes += m->pkt_len;
    pkts[n++] = m;
  }
  if (n != 0) {
    q.stats.packets.Add(n);
    q.stats.bytes.Add(bytes);
  }
  return n;
}

// ---------------------------------------------------------------- Tx (worker) ---------

// Writes one frame with its header; the headers go from a copy when the pseudo-header
// sum is seeded. kBusy: the kernel took nothing, the frame stays the caller's (who counts
// it or offers it again).
enum class TxResult { kSent, kDropped, kBusy };

TxResult WriteFrame(TxQueue& q, rte_mbuf* m) {
  const TxRequest request{m->ol_flags, static_cast<uint16_t>(m->l2_len),
                          static_cast<uint16_t>(m->l3_len), static_cast<uint16_t>(m->l4_len),
                          static_cast<uint16_t>(m->tso_segsz)};
  VnetHeader hdr;
  if (m->nb_segs > kMaxTxSegs || !EncodeTxHeader(request, hdr)) {
    q.stats.bad_request.Add(1);
    return TxResult::kDropped;
  }
  iovec iov[2 + kMaxTxSegs];
  int k = 0;
  iov[k++] = {&hdr, sizeof(hdr)};
  uint8_t head[kMaxHeaderCopy];
  const rte_mbuf* seg = m;
  if (hdr.flags & kVnetNeedsCsum) {
    const uint32_t cut = std::min<uint32_t>({m->data_len, kMaxHeaderCopy,
                                             uint32_t{hdr.csum_start} + hdr.csum_offset + 2});
    std::memcpy(head, rte_pktmbuf_mtod(m, const uint8_t*), cut);
    if (!SeedPseudoHeader(head, cut, request)) {
      q.stats.bad_request.Add(1);
      return TxResult::kDropped;
    }
    iov[k++] = {head, cut};
    if (m->data_len > cut) {
      iov[k++] = {rte_pktmbuf_mtod_offset(m, uint8_t*, cut), m->data_len - cut};
    }
    seg = m->next;
  }
  for (; seg != nullptr; seg = seg->next) {
    iov[k++] = {rte_pktmbuf_mtod(seg, void*), seg->data_len};
  }
  if (writev(q.fd, iov, k) < 0) {
    // EAGAIN: a tap's queue, a packet socket's send buffer (frames still on their way
    // to a veth's peer) is full; ENOBUFS: the interface's qdisc was.
    if (errno == EAGAIN || errno == ENOBUFS) return TxResult::kBusy;
    // EIO, ENETDOWN, ENXIO: the interface is down or gone; EINVAL, EMSGSIZE: the kernel
    // refused it (larger than an interface's own MTU)
    q.stats.errors.Add(1);
    return TxResult::kDropped;
  }
  if (hdr.gso_type != kVnetGsoNone) {
    q.stats.super_frames.Add(1);
  } else if (hdr.flags & kVnetNeedsCsum) {
    q.stats.partial_csum.Add(1);
  }
  return TxResult::kSent;
}

uint16_t TxBurst(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  TxQueue& q = *static_cast<TxQueue*>(queue);
  uint16_t i = 0, sent = 0;
  uint64_t bytes = 0;
  for (; i < nb_pkts; ++i) {
    rte_mbuf* m = pkts[i];
    const TxResult result = WriteFrame(q, m);
    if (result == TxResult::kBusy) break;
    if (result == TxResult::kSent) {
      ++sent;
      bytes += m->pkt_len;
    }
    rte_pktmbuf_free(m);  // the kernel copied it
  }
  q.stats.packets.Add(sent);
  q.stats.bytes.Add(bytes);
  return i;
}

// ---------------------------------------------------------- device (control) ----------

int InfosGet(rte_eth_dev* dev, rte_eth_dev_info* info) {
  Private& p = Priv(dev);
  info->if_index = static_cast<uint32_t>(p.kernel->ifindex());
  info->max_mac_addrs = 1;
  info->max_rx_queues = p.kernel->nb_queues();
  info->max_tx_queues = kMaxTxQueues;
  info->max_rx_pktlen = kMaxFrame;
  info->max_lro_pkt_size = kMaxFrame;
  info->min_mtu = RTE_ETHER_MIN_MTU;
  info->max_mtu = std::min<uint32_t>(kMaxFrame - RTE_ETHER_HDR_LEN - RTE_VLAN_HLEN,
                                     p.kernel->MaxMtu());
  info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER | RTE_ETH_RX_OFFLOAD_TCP_CKSUM |
                          RTE_ETH_RX_OFFLOAD_UDP_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_LRO;
  info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
                          RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_TSO;
  info->rx_queue_offload_capa = 0;
  info->tx_queue_offload_capa = 0;
  info->speed_capa = RTE_ETH_LINK_SPEED_10G;
  return 0;
}

int Configure(rte_eth_dev* dev) {
  Private& p = Priv(dev);
  const uint64_t rx = dev->data->dev_conf.rxmode.offloads;
  constexpr uint64_t kCsum = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
  p.rx_csum = (rx & kCsum) == kCsum;
  p.rx_tso = p.rx_csum && (rx & RTE_ETH_RX_OFFLOAD_TCP_LRO);
  const absl::Status status = p.kernel->ApplyMtu(dev->data->mtu);
  if (!status.ok()) {
    RTE_LOG(ERR, PMD, "%s: %s\n", dev->data->name, status.ToString().c_str());
    return -EINVAL;
  }
  return 0;
}

int UpdateLink(rte_eth_dev* dev, int) {
  rte_eth_link link{};
  link.link_speed = RTE_ETH_SPEED_NUM_10G;
  link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
  link.link_autoneg = RTE_ETH_LINK_FIXED;
  link.link_status = dev->data->dev_started && Priv(dev).kernel->LinkUp() ? RTE_ETH_LINK_UP
                                                                         : RTE_ETH_LINK_DOWN;
  return rte_eth_linkstatus_set(dev, &link);
}

void SetStarted(rte_eth_dev* dev, bool started) {
  const uint8_t state = started ? RTE_ETH_QUEUE_STATE_STARTED : RTE_ETH_QUEUE_STATE_STOPPED;
  std::fill_n(dev->data->rx_queue_state, dev->data->nb_rx_queues, state);
  std::fill_n(dev->data->tx_queue_state, dev->data->nb_tx_queues, state);
  dev->data->dev_started = started;
  UpdateLink(dev, 0);
}

// Receive interrupts (intr_conf.rxq): each queue's descriptor is its event fd, readable
// while the kernel holds a frame for it. EXT: the EAL reads nothing from it when it fires
// (a read would take a frame); registered edge-triggered, each new frame fires once.
void UninstallRxInterrupts(rte_eth_dev* dev) {
  if (dev->intr_handle == nullptr) return;
  rte_intr_vec_list_free(dev->intr_handle);
  rte_intr_instance_free(dev->intr_handle);
  dev->intr_handle = nullptr;
}

int InstallRxInterrupts(rte_eth_dev* dev) {
  const uint16_t n = dev->data->nb_rx_queues;
  rte_intr_handle* handle = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  if (handle == nullptr) return -ENOMEM;
  dev->intr_handle = handle;
  bool ok = rte_intr_type_set(handle, RTE_INTR_HANDLE_EXT) == 0 &&
            rte_intr_efd_counter_size_set(handle, 0) == 0 &&
            rte_intr_vec_list_alloc(handle, nullptr, n) == 0;
  for (uint16_t q = 0; ok && q < n; ++q) {
    ok = rte_intr_vec_list_index_set(handle, q, RTE_INTR_VEC_RXTX_OFFSET + q) == 0 &&
         rte_intr_efds_index_set(handle, q, Priv(dev).rxq[q].fd) == 0;
  }
  ok = ok && rte_intr_nb_efd_set(handle, n) == 0 && rte_intr_max_intr_set(handle, n + 1) == 0;
  if (!ok) {
    UninstallRxInterrupts(dev);
    return -ENOMEM;
  }
  return 0;
}

// A queue's descriptor fires whenever a frame comes: nothing to turn on or off.
int RxInterruptSwitch(rte_eth_dev*, uint16_t) { return 0; }

int Start(rte_eth_dev* dev) {
  Private& p = Priv(dev);
  const absl::Status status = p.kernel->Start(p.rx_csum, p.rx_tso);
  if (!status.ok()) {
    RTE_LOG(ERR, PMD, "%s: %s\n", dev->data->name, status.ToString().c_str());
    return -EIO;
  }
  if (dev->data->dev_conf.intr_conf.rxq) {
    if (const int rc = InstallRxInterrupts(dev); rc != 0) {
      p.kernel->Stop();
      return rc;
    }
  }
  SetStarted(dev, true);
  return 0;
}

int Stop(rte_eth_dev* dev) {
  Priv(dev).kernel->Stop();
  UninstallRxInterrupts(dev);
  SetStarted(dev, false);
  return 0;
}

void FreeSpare(RxQueue& q) {
  for (uint16_t i = q.missing; i < q.max_segs; ++i) rte_pktmbuf_free(q.spare[i]);
  std::fill(std::begin(q.spare), std::end(q.spare), nullptr);
  q.missing = 0;
  q.pool = nullptr;
}

void RxQueueRelease(rte_eth_dev* dev, uint16_t qid) {
  RxQueue& q = Priv(dev).rxq[qid];
  if (q.pool != nullptr) FreeSpare(q);
}

int RxQueueSetup(rte_eth_dev* dev, uint16_t qid, uint16_t, unsigned int,
                 const rte_eth_rxconf*, rte_mempool* pool) {
  Private& p = Priv(dev);
  RxQueue& q = p.rxq[qid];
  if (q.pool != nullptr) FreeSpare(q);
  const uint32_t room = rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM;
  if (room < RTE_ETHER_MIN_LEN || room > UINT16_MAX) return -EINVAL;
  const uint64_t rx = dev->data->dev_conf.rxmode.offloads;
  const bool chains = rx & (RTE_ETH_RX_OFFLOAD_SCATTER | RTE_ETH_RX_OFFLOAD_TCP_LRO);
  const uint32_t largest = chains ? kMaxFrame : dev->data->mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN;
  q.fd = p.kernel->queue_fd(qid);
  q.port_id = dev->data->port_id;
  q.seg_room = static_cast<uint16_t>(room);
  q.max_segs = static_cast<uint16_t>(std::min<uint32_t>((largest + room - 1) / room, kMaxRxSegs));
  q.partial_ok = p.rx_csum;
  q.tso_ok = p.rx_tso;
  q.pool = pool;
  q.missing = q.max_segs;
  if (rte_pktmbuf_alloc_bulk(pool, q.spare, q.max_segs) != 0) {
    q.pool = nullptr;
    return -ENOMEM;
  }
  q.missing = 0;
  dev->data->rx_queues[qid] = &q;
  return 0;
}

int TxQueueSetup(rte_eth_dev* dev, uint16_t qid, uint16_t, unsigned int,
                 const rte_eth_txconf*) {
  Private& p = Priv(dev);
  TxQueue& q = p.txq[qid];
  q.fd = p.kernel->queue_fd(qid % p.kernel->nb_queues());
  dev->data->tx_queues[qid] = &q;
  return 0;
}

int Close(rte_eth_dev* dev) {
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return 0;
  Private& p = Priv(dev);
  for (RxQueue& q : p.rxq) {
    if (q.pool != nullptr) FreeSpare(q);
  }
  delete p.kernel;  // a tap: closing its descriptors deletes the interface
  p.kernel = nullptr;
  p.sockets = nullptr;
  dev->data->mac_addrs = nullptr;  // p.mac: freed with the private data
  return 0;
}

int StatsGet(rte_eth_dev* dev, rte_eth_stats* stats) {
  Private& p = Priv(dev);
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; ++i) {
    const RxStats& s = p.rxq[i].stats;
    stats->ipackets += s.packets.Get();
    stats->ibytes += s.bytes.Get();
    stats->ierrors += s.errors.Get() + s.bad_offload.Get() + s.truncated.Get();
    stats->rx_nombuf += s.nombuf.Get();
    if (p.sockets != nullptr) stats->imissed += p.sockets->KernelDrops(i);
    if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
      stats->q_ipackets[i] = s.packets.Get();
      stats->q_ibytes[i] = s.bytes.Get();
    }
  }
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; ++i) {
    const TxStats& s = p.txq[i].stats;
    stats->opackets += s.packets.Get();
    stats->obytes += s.bytes.Get();
    stats->oerrors += s.errors.Get() + s.bad_request.Get();
    if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
      stats->q_opackets[i] = s.packets.Get();
      stats->q_obytes[i] = s.bytes.Get();
    }
  }
  return 0;
}

// Per-queue xstats "rx_qN_super_frames"...: the names hvswitch's queue statistics read.
constexpr const char* kRxStatNames[] = {
#define X(name, help) #name,
    HOST_TAP_RX_STATS(X)
#undef X
};
constexpr const char* kTxStatNames[] = {
#define X(name, help) #name,
    HOST_TAP_TX_STATS(X)
#undef X
};
constexpr const char* kPacketRxStatNames[] = {
#define X(name, help) #name,
    PACKET_RX_STATS(X)
#undef X
};
constexpr unsigned kNbTxStats = std::size(kTxStatNames);

unsigned RxStatsPerQueue(rte_eth_dev* dev) {
  return std::size(kRxStatNames) +
         (Priv(dev).sockets != nullptr ? std::size(kPacketRxStatNames) : 0);
}

unsigned XstatsCount(rte_eth_dev* dev) {
  return dev->data->nb_rx_queues * RxStatsPerQueue(dev) + dev->data->nb_tx_queues * kNbTxStats;
}

int XstatsGetNames(rte_eth_dev* dev, rte_eth_xstat_name* names, unsigned size) {
  const unsigned count = XstatsCount(dev);
  if (names == nullptr || size < count) return static_cast<int>(count);
  unsigned i = 0;
  for (uint16_t q = 0; q < dev->data->nb_rx_queues; ++q) {
    for (const char* name : kRxStatNames) {
      std::snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "rx_q%u_%s", q, name);
    }
    if (Priv(dev).sockets == nullptr) continue;
    for (const char* name : kPacketRxStatNames) {
      std::snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "rx_q%u_%s", q, name);
    }
  }
  for (uint16_t q = 0; q < dev->data->nb_tx_queues; ++q) {
    for (const char* name : kTxStatNames) {
      std::snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "tx_q%u_%s", q, name);
    }
  }
  return static_cast<int>(count);
}

int XstatsGet(rte_eth_dev* dev, rte_eth_xstat* stats, unsigned n) {
  const unsigned count = XstatsCount(dev);
  if (stats == nullptr || n < count) return static_cast<int>(count);
  Private& p = Priv(dev);
  unsigned i = 0;
  auto put = [&](uint64_t value) {
    stats[i].id = i;
    stats[i].value = value;
    ++i;
  };
  for (uint16_t q = 0; q < dev->data->nb_rx_queues; ++q) {
    const RxStats& s = p.rxq[q].stats;
#define X(name, help) put(s.name.Get());
    HOST_TAP_RX_STATS(X)
#undef X
    static_assert(std::size(kPacketRxStatNames) == 1);
    if (p.sockets != nullptr) put(p.sockets->KernelDrops(q));  // kernel_drops
  }
  for (uint16_t q = 0; q < dev->data->nb_tx_queues; ++q) {
    const TxStats& s = p.txq[q].stats;
#define X(name, help) put(s.name.Get());
    HOST_TAP_TX_STATS(X)
#undef X
  }
  return static_cast<int>(count);
}

int MtuSet(rte_eth_dev* dev, uint16_t mtu) {
  if (mtu > Priv(dev).kernel->MaxMtu()) return -EINVAL;
  const absl::Status status = Priv(dev).kernel->ApplyMtu(mtu);
  return status.ok() ? 0 : -EINVAL;
}

// A tap takes every frame written to it, and the kernel's own filters do the rest; the
// packet sockets made their interface promiscuous when they opened.
int Accept(rte_eth_dev*) { return 0; }

// A bond (type=bond) gives its members its own MAC. The kernel interface keeps its
// address, as type=netdev promises: the sockets are promiscuous and every frame carries
// its source, so the address is only what ethdev reports (and LACPDUs are sent from).
int SetMac(rte_eth_dev*, rte_ether_addr*) { return 0; }

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
  ops.mac_addr_set = SetMac;
  ops.stats_get = StatsGet;
  ops.xstats_get = XstatsGet;
  ops.xstats_get_names = XstatsGetNames;
  ops.mtu_set = MtuSet;
  ops.rx_queue_setup = RxQueueSetup;
  ops.rx_queue_release = RxQueueRelease;
  ops.tx_queue_setup = TxQueueSetup;
  ops.rx_queue_intr_enable = RxInterruptSwitch;
  ops.rx_queue_intr_disable = RxInterruptSwitch;
  return ops;
}();

struct Args {
  std::string iface, netns;
  uint16_t queues = 1;
};

int ParseArgs(const char* text, Args& args) {
  static const char* const kKeys[] = {"iface", "netns", "queues", nullptr};
  rte_kvargs* kv = rte_kvargs_parse(text != nullptr ? text : "", kKeys);
  if (kv == nullptr) return -EINVAL;
  auto str = [](const char*, const char* value, void* out) {
    *static_cast<std::string*>(out) = value;
    return 0;
  };
  auto queues = [](const char*, const char* value, void* out) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(value, &end, 10);
    if (*value == '\0' || *end != '\0' || n < 1 || n > kMaxRxQueues) return -EINVAL;
    *static_cast<uint16_t*>(out) = static_cast<uint16_t>(n);
    return 0;
  };
  int rc = rte_kvargs_process(kv, "iface", str, &args.iface);
  if (rc == 0) rc = rte_kvargs_process(kv, "netns", str, &args.netns);
  if (rc == 0) rc = rte_kvargs_process(kv, "queues", queues, &args.queues);
  rte_kvargs_free(kv);
  if (rc == 0 && args.iface.empty()) rc = -EINVAL;
  return rc;
}

// What the caller of rte_dev_probe shows (hvswitchctl: "cannot probe device ...: Device
// or resource busy"); the log has the whole story.
int ProbeError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound: return -ENOENT;  // no such namespace
    case absl::StatusCode::kUnavailable: return -ENODEV;  // no such interface (to attach)
    case absl::StatusCode::kFailedPrecondition: return -EBUSY;  // the interface exists
    case absl::StatusCode::kPermissionDenied: return -EPERM;
    case absl::StatusCode::kInvalidArgument: return -EINVAL;
    default: return -EIO;
  }
}

// The kernel side a device of `kind` opens, or why not.
KernelDevice* OpenKernelDevice(Kind kind, const Args& args, absl::Status& status) {
  if (kind == Kind::kTap) {
    auto* tap = new TapDevice;
    status = tap->Open({args.iface, args.netns, args.queues});
    return tap;
  }
  auto* sockets = new PacketSocketDevice;
  status = sockets->Open({args.iface, args.netns, args.queues});
  if (status.ok() && sockets->reads_outgoing()) {
    RTE_LOG(WARNING, PMD, "%s: this kernel lacks PACKET_FANOUT_FLAG_IGNORE_OUTGOING: what "
            "the interface sends is read too, and discarded\n", args.iface.c_str());
  }
  return sockets;
}

template <Kind kind>
int Probe(rte_vdev_device* vdev) {
  const char* name = rte_vdev_device_name(vdev);
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return -ENOTSUP;
  Args args;
  if (ParseArgs(rte_vdev_device_args(vdev), args) != 0) {
    RTE_LOG(ERR, PMD, "%s: needs iface=NAME[,netns=NS][,queues=1..%u]\n", name,
            unsigned{kMaxRxQueues});
    return -EINVAL;
  }
  absl::Status status;
  KernelDevice* kernel = OpenKernelDevice(kind, args, status);
  uint8_t mac[6] = {};
  if (status.ok()) status = kernel->ReadMac(mac);
  if (!status.ok()) {
    RTE_LOG(ERR, PMD, "%s: %s\n", name, status.ToString().c_str());
    delete kernel;
    return ProbeError(status);
  }
  rte_eth_dev* dev = rte_eth_vdev_allocate(vdev, sizeof(Private));
  if (dev == nullptr) {
    delete kernel;
    return -ENOMEM;
  }
  // rte_zmalloc'd: counters, queues and pointers start as zero.
  Private& p = Priv(dev);
  p.kernel = kernel;
  if (kind == Kind::kPacketSocket) p.sockets = static_cast<PacketSocketDevice*>(kernel);
  std::memcpy(p.mac.addr_bytes, mac, 6);
  dev->data->mac_addrs = &p.mac;
  dev->data->dev_flags |= RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
  dev->dev_ops = &kOps;
  dev->rx_pkt_burst = RxBurst<kind>;
  dev->tx_pkt_burst = TxBurst;
  rte_eth_dev_probing_finish(dev);
  RTE_LOG(INFO, PMD, "%s: %s %s%s%s, %u queue(s)\n", name,
          kind == Kind::kTap ? "tap" : "packet sockets on", args.iface.c_str(),
          args.netns.empty() ? "" : " in network namespace ", args.netns.c_str(),
          unsigned{args.queues});
  return 0;
}

int Remove(rte_vdev_device* vdev) {
  rte_eth_dev* dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
  if (dev == nullptr) return 0;  // closed already
  if (dev->data->dev_started) rte_eth_dev_stop(dev->data->port_id);
  return rte_eth_dev_close(dev->data->port_id);
}

template <Kind kind>
constexpr rte_vdev_driver VdevDriver() {
  rte_vdev_driver d{};
  d.probe = Probe<kind>;
  d.remove = Remove;
  return d;
}

}  // namespace

const char* HostTapPmdName() { return kTapName; }
const char* PacketSocketPmdName() { return kPacketName; }

}  // namespace hvswitch

// The registration macros paste the variable's name into function names: file scope.
// Constant-initialised: the registration's constructor (RTE_INIT) fills in the driver's
// name before any dynamic initialisation would run, which would wipe it.
constinit static rte_vdev_driver hvs_tap_driver = hvswitch::VdevDriver<hvswitch::Kind::kTap>();
RTE_PMD_REGISTER_VDEV(net_hvs_tap, hvs_tap_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_hvs_tap, "iface=<name> netns=<name|path> queues=<1-16>");
constinit static rte_vdev_driver hvs_packet_driver =
    hvswitch::VdevDriver<hvswitch::Kind::kPacketSocket>();
RTE_PMD_REGISTER_VDEV(net_hvs_packet, hvs_packet_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_hvs_packet, "iface=<name> netns=<name|path> queues=<1-16>");
