#include "ports/dpdk/dpdk_driver.h"

#include <rte_ethdev.h>

#include "absl/strings/str_cat.h"
#include "ports/port.h"
#include "ports/spec_keys.h"

namespace hvswitch {
namespace {

// devargs=: a PCI address or a DPDK vdev string, taken verbatim.
absl::Status ApplyDevargs(absl::string_view value, PortSpec& spec) {
  spec.driver_keys.Set("devargs", value);
  return absl::OkStatus();
}
absl::string_view DevargsText(const PortSpec& spec) { return spec.driver_keys.Text("devargs"); }

// Devices whose receive queue is another process's ring (a guest's, another switch's):
// what waits there is that peer's to keep or drop, as on vhost-user and memif ports.
bool PeerRing(absl::string_view driver) {
  return driver == "net_vhost" || driver == "net_memif" || driver == "net_virtio_user";
}

}  // namespace

// A NIC finishes what its Tx offloads cover; rte_eth_tx_prepare fixes the pseudo-header
// sums the way it wants them.
DeviceSetup NicOffloadSetup(const rte_eth_dev_info& info, rte_eth_conf& conf) {
  constexpr uint64_t kTxCsum = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
  DeviceSetup setup;
  PeerOffloads& nic = setup.nic;
  nic.csum = (info.tx_offload_capa & kTxCsum) == kTxCsum;
  // net_tap lists TSO, but its segmentation (librte_gso) has no TCP/IPv6 and leaves the
  // segments' IPv4 header checksums stale: hvswitch segments for it.
  const bool tso_works = absl::string_view(info.driver_name) != "net_tap";
  nic.tso4 = nic.tso6 =
      nic.csum && tso_works && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_TSO);
  if (nic.csum) conf.txmode.offloads |= kTxCsum;
  if (nic.tso4) conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
  return setup;
}

// The kernel hands a packet socket partial checksums (TP_STATUS_CSUMNOTREADY: a veth's
// default transmit checksum offload, the local stack's own frames) and super-frames;
// net_af_packet drops that state, so hvswitch cannot tell such a frame from a corrupt one
// and forwards it as it is. Completing every checksum would hide real corruption.
absl::string_view DeviceCaveat(absl::string_view driver_name) {
  if (driver_name != "net_af_packet") return {};
  return "net_af_packet forwards the kernel's partial checksums as they are (broken: TCP "
         "and UDP from a veth with default offloads fail) and cuts frames longer than its "
         "ring's frames (framesz=, 2048 by default), super-frames included; use "
         "type=netdev,iface=IFACE instead";
}

namespace {

constexpr SpecKey kKeys[] = {{"queues", ApplyQueues},
                             {"devargs", ApplyDevargs, /*rest_of_line=*/true}};

class Driver final : public PortDriver {
 public:
  absl::string_view type() const override { return "dpdk"; }
  absl::string_view usage() const override {
    return R"(  --port=NAME,type=dpdk[,queues=N],devargs=DEVARGS  (devargs last; taken verbatim;
                                                    queues > 1: RSS over N rx queues)
)";
  }
  std::span<const SpecKey> keys() const override { return kKeys; }
  absl::Status Check(const PortSpec& spec, const KeysGiven& given) const override {
    if (!given.contains("devargs") || DevargsText(spec).empty()) {
      return SpecError(spec.name, "missing devargs= (a PCI address or a DPDK vdev string)");
    }
    return absl::OkStatus();
  }
  // devargs= takes the rest of the line: last.
  void AppendKeys(const PortSpec& spec, std::string&, std::string& tail) const override {
    if (QueueCount(spec) != 1) absl::StrAppend(&tail, ",queues=", QueueCount(spec));
    absl::StrAppend(&tail, ",devargs=", DevargsText(spec));
  }
  PortRole role() const override { return PortRole::kDevice; }
  PortTraits Traits(const PortSpec& spec) const override {
    PortTraits traits;
    traits.endpoint = std::string(DevargsText(spec));
    traits.root_only = "type=dpdk ports (devices) need root; the --ctl_group may manage "
                       "vhost-user and memif ports";
    traits.fills_rx_rings = true;
    return traits;
  }
  // PCI devices are probed by the EAL, from its allow-list; vdevs are hot-plugged.
  void AddEalNeeds(std::span<const PortSpec* const> mine, EalNeeds& needs) const override {
    for (const PortSpec* spec : mine) {
      const std::string devargs(DevargsText(*spec));
      if (IsPciDevargs(devargs)) needs.pci_allow.push_back(devargs);
    }
  }

  std::string Devargs(const PortSpec& spec, int) const override {
    return std::string(DevargsText(spec));
  }
  PortQueues Queues(const PortSpec& spec, uint16_t nb_workers) const override {
    PortQueues queues;
    queues.nb_rxq = QueueCount(spec);
    queues.nb_txq = nb_workers;
    return queues;
  }
  DeviceSetup Configure(const PortSpec&, const rte_eth_dev_info& info,
                        rte_eth_conf& conf) const override {
    DeviceSetup setup = NicOffloadSetup(info, conf);
    setup.peer_ring = PeerRing(info.driver_name);
    setup.rss_required = !setup.peer_ring;
    setup.caveat = std::string(DeviceCaveat(info.driver_name));
    return setup;
  }
  DatapathFlags Flags(const PortSpec&, const DeviceSetup& setup) const override {
    DatapathFlags flags;
    flags.tx_prepare = setup.nic.csum || setup.nic.tso4;
    // A NIC's ring, a tap's or a packet socket's queue: frames can wait there.
    flags.rx_backpressure = !setup.peer_ring;
    return flags;
  }
};

// Constant-initialised: valid before any static constructor runs.
constinit const Driver kDriver;

}  // namespace

const PortDriver& DpdkDriver() { return kDriver; }

}  // namespace hvswitch
