// rte_vhost_get_negotiated_protocol_features is still experimental in DPDK 22.11 (stable
// since 23.07): this file alone may use it.
#define ALLOW_EXPERIMENTAL_API 1

#include "ports/vhost_user/vhost_user_driver.h"

#include <rte_eth_vhost.h>
#include <rte_ethdev.h>
#include <rte_vhost.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ports/guest_socket_driver.h"
#include "ports/port.h"
#include "ports/spec_keys.h"

namespace hvswitch {
namespace {

// Virtio-net feature bits (virtio 1.1, 5.1.3); <linux/virtio_net.h> does not compile as
// C++.
constexpr int kVirtioNetFGuestCsum = 1, kVirtioNetFGuestTso4 = 7, kVirtioNetFGuestTso6 = 8;
constexpr int kVirtioFIommuPlatform = 33;

// Live migration: postcopy=1 offers QEMU's postcopy (the library registers userfaultfd
// for the guest's memory: CAP_SYS_PTRACE), iommu=1 a guest behind a vIOMMU
// (VIRTIO_F_IOMMU_PLATFORM). The library offers precopy's features (dirty-page log, RARP,
// GUEST_ANNOUNCE) without being asked.
absl::Status ApplyPostcopy(absl::string_view value, PortSpec& spec) {
  return StoreSpecFlag(spec, "postcopy", value);
}
absl::Status ApplyIommu(absl::string_view value, PortSpec& spec) {
  return StoreSpecFlag(spec, "iommu", value);
}

constexpr SpecKey kKeys[] = {{"path", ApplyPath},         {"client", ApplyClient},
                             {"queues", ApplyQueues},     {"postcopy", ApplyPostcopy},
                             {"iommu", ApplyIommu}};

class Driver final : public GuestSocketDriver {
 public:
  absl::string_view type() const override { return "vhost-user"; }
  absl::string_view usage() const override {
    return "  --port=NAME,type=vhost-user,path=SOCKET[,client=1][,queues=N][,postcopy=1]"
           "[,iommu=1]\n";
  }
  std::span<const SpecKey> keys() const override { return kKeys; }
  absl::Status Check(const PortSpec& spec, const KeysGiven& given) const override {
    if (!given.contains("path")) return SpecError(spec.name, "missing path= (the vhost-user socket)");
    return absl::OkStatus();
  }
  void AppendKeys(const PortSpec& spec, std::string& head, std::string&) const override {
    absl::StrAppend(&head, ",path=", SocketPath(spec), IsClient(spec) ? ",client=1" : "",
                    QueueCount(spec) != 1 ? absl::StrCat(",queues=", QueueCount(spec)) : "",
                    spec.driver_keys.Flag("postcopy") ? ",postcopy=1" : "",
                    spec.driver_keys.Flag("iommu") ? ",iommu=1" : "");
  }

  std::string Devargs(const PortSpec& spec, int index) const override {
    // Compliant offload flags: a guest's partial checksum and its GSO super-frames arrive
    // as Rx metadata (RX_L4_CKSUM_NONE, RX_LRO + tso_segsz) for hvswitch to resolve per
    // destination. tso=1 offers the guest HOST_TSO4/6.
    return absl::StrCat("net_vhost", index, ",iface=", SocketPath(spec), ",queues=",
                        QueueCount(spec), ",client=", IsClient(spec) ? 1 : 0,
                        ",legacy-ol-flags=0,tso=1",
                        spec.driver_keys.Flag("postcopy") ? ",postcopy-support=1" : "",
                        spec.driver_keys.Flag("iommu") ? ",iommu-support=1" : "");
  }
  PortQueues Queues(const PortSpec& spec, uint16_t nb_workers) const override {
    // A tx queue the guest did not enable swallows nothing: tx queues beyond the guest's
    // queue pairs would drop every frame, so workers share instead.
    PortQueues queues;
    queues.nb_rxq = QueueCount(spec);
    queues.nb_txq = std::min(nb_workers, queues.nb_rxq);
    return queues;
  }
  DeviceSetup Configure(const PortSpec&, const rte_eth_dev_info& info,
                        rte_eth_conf& conf) const override {
    // With Rx checksum offload on, the vhost PMD leaves a guest's partial checksum in the
    // frame (flagged RTE_MBUF_F_RX_L4_CKSUM_NONE) instead of completing it on receive, so
    // that hvswitch decides per destination: pass it on to a guest that completes it,
    // complete it for anyone else. Tx checksum offload lets it pass them on (the vhost
    // library writes the virtio header for checksum and TSO requests alike; it does not
    // list TSO as a capability).
    constexpr uint64_t kRx = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
    constexpr uint64_t kTx = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
    DeviceSetup setup;
    setup.peer_ring = true;  // the guest's virtqueues
    if ((info.rx_offload_capa & kRx) == kRx && (info.tx_offload_capa & kTx) == kTx) {
      conf.rxmode.offloads |= kRx;
      conf.txmode.offloads |= kTx;
      setup.rx_offload = true;
    }
    return setup;
  }
  // What the connected guest negotiated (GUEST_CSUM, GUEST_TSO4/6).
  PeerOffloads Offloads(const Port& port) const override {
    PeerOffloads offloads;
    if (!port.setup().rx_offload) return offloads;
    int vid = rte_eth_vhost_get_vid_from_port_id(port.eth_port());
    uint64_t features = 0;
    if (vid < 0 || rte_vhost_get_negotiated_features(vid, &features) != 0) return offloads;
    auto has = [features](int bit) { return (features & (uint64_t{1} << bit)) != 0; };
    // A guest takes super-frames only with GUEST_CSUM too (virtio 1.1, 5.1.3.1).
    offloads.csum = has(kVirtioNetFGuestCsum);
    offloads.tso4 = offloads.csum && has(kVirtioNetFGuestTso4);
    offloads.tso6 = offloads.csum && has(kVirtioNetFGuestTso6);
    return offloads;
  }
  // Live migration: the dirty-page log (LOG_SHMFD), who announces the guest at its
  // destination (the guest itself with GUEST_ANNOUNCE, else QEMU through the vhost
  // library's RARP), postcopy (PAGEFAULT) and a vIOMMU (IOMMU_PLATFORM).
  std::string PeerFeatures(const Port& port) const override {
    const int vid = rte_eth_vhost_get_vid_from_port_id(port.eth_port());
    uint64_t features = 0, protocol = 0;
    if (vid < 0 || rte_vhost_get_negotiated_features(vid, &features) != 0 ||
        rte_vhost_get_negotiated_protocol_features(vid, &protocol) != 0) {
      return {};
    }
    auto yes = [](uint64_t bits, int bit) { return (bits >> bit) & 1 ? "yes" : "no"; };
    return absl::StrCat("migration: dirty_log=", yes(protocol, VHOST_USER_PROTOCOL_F_LOG_SHMFD),
                        " announce=",
                        (features >> VIRTIO_NET_F_GUEST_ANNOUNCE) & 1 ? "guest"
                        : (protocol >> VHOST_USER_PROTOCOL_F_RARP) & 1 ? "rarp"
                                                                      : "none",
                        " postcopy=", yes(protocol, VHOST_USER_PROTOCOL_F_PAGEFAULT),
                        " iommu=", yes(features, kVirtioFIommuPlatform));
  }
  // Without a guest the vhost PMD asks the library for vid -1 and it logs "device not
  // found" for every queue, at every scrape.
  bool HasQueueStats(const Port& port) const override {
    return rte_eth_vhost_get_vid_from_port_id(port.eth_port()) >= 0;
  }
};

// Constant-initialised: valid before any static constructor runs.
constinit const Driver kDriver;

}  // namespace

const PortDriver& VhostUserDriver() { return kDriver; }

}  // namespace hvswitch
