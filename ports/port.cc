#include "ports/port.h"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <regex>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "ports/socket_path.h"

namespace hvswitch {
namespace {

absl::Status PortError(const PortSpec& spec, absl::string_view what, int err) {
  return absl::InternalError(
      absl::StrCat("port '", spec.name, "': ", what, ": ", rte_strerror(err < 0 ? -err : err)));
}

}  // namespace

std::string PortDevargs(const PortSpec& spec, int index) {
  return spec.driver->Devargs(spec, index);
}

bool IsPciDevargs(const std::string& devargs) {
  static const std::regex pci("^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7](,.*)?$");
  return std::regex_match(devargs, pci);
}

PortQueues QueuesFor(const PortSpec& spec, uint16_t nb_workers, uint16_t rx_descriptors,
                     uint16_t tx_descriptors) {
  PortQueues queues = spec.driver->Queues(spec, nb_workers);
  queues.rx_descriptors = rx_descriptors;
  queues.tx_descriptors = tx_descriptors;
  return queues;
}

PeerOffloads PortDriver::Offloads(const Port& port) const { return port.setup().nic; }

absl::StatusOr<std::unique_ptr<Port>> Port::Open(const PortSpec& spec, int index,
                                                 const PortQueues& queues,
                                                 rte_mempool* pool) {
  if (spec.driver == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("port '", spec.name, "': no type"));
  }
  std::unique_ptr<Port> port(new Port(spec, queues));
  absl::Status status = port->Start(PortDevargs(spec, index), pool);
  if (!status.ok()) return status;  // ~Port undoes whatever was done
  return port;
}

absl::Status Port::Start(const std::string& devargs, rte_mempool* pool) {
  absl::Status status = ProbeMembers();
  if (!status.ok()) return status;
  status = Probe(devargs);
  if (!status.ok()) return status;
  rte_eth_conf conf{};
  status = ConfigureDevice(conf, pool);
  if (!status.ok()) return status;
  status = SetUpQueues(conf, pool);
  std::optional<std::string> fallback;
  if (!status.ok() && (fallback = driver_.Unprepare(spec_, eth_port_))) {
    setup_.note = *fallback;
    status = SetUpQueues(conf, pool);
  }
  if (!status.ok()) return status;
  driver_.BeforeStart(spec_);
  int rc = rte_eth_dev_start(eth_port_);
  if (rc != 0 && !fallback && (fallback = driver_.Unprepare(spec_, eth_port_))) {
    setup_.note = *fallback;
    rc = rte_eth_dev_start(eth_port_);
  }
  if (rc != 0 && conf.intr_conf.rxq) {
    // A device whose interrupts cannot be set up (a NIC under a driver without them) is
    // still a port: polled, its workers sleeping instead of blocking.
    conf.intr_conf.rxq = 0;
    status = SetUpQueues(conf, pool);
    if (!status.ok()) return status;
    rc = rte_eth_dev_start(eth_port_);
  }
  // Receive interrupts where the device switches them (vhost-user, NICs, net_hvs_tap), or
  // where its queues have event fds that fire whenever frames come (DPDK's net_tap has no
  // switch: ENOTSUP). memif and rings have neither.
  if (conf.intr_conf.rxq) {
    const int switched = rte_eth_dev_rx_intr_disable(eth_port_, 0);
    rx_interrupts_ = switched == 0 || (switched == -ENOTSUP &&
                                       rte_eth_dev_rx_intr_ctl_q_get_fd(eth_port_, 0) >= 0);
  }
  // A port that reconnects (a memif client whose server is not there yet) is started
  // again later (Reconnect).
  if (rc != 0 && !reconnect_.enabled) return PortError(spec_, "cannot start device", rc);
  started_ = rc == 0;
  flags_ = driver_.Flags(spec_, setup_);
  // A bridge port must receive frames for every MAC behind it.
  rc = rte_eth_promiscuous_enable(eth_port_);
  if (rc != 0 && rc != -ENOTSUP) return PortError(spec_, "cannot enable promiscuous mode", rc);

  rte_ether_addr addr{};
  rte_eth_macaddr_get(eth_port_, &addr);
  mac_ = absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", addr.addr_bytes[0],
                         addr.addr_bytes[1], addr.addr_bytes[2], addr.addr_bytes[3],
                         addr.addr_bytes[4], addr.addr_bytes[5]);
  return absl::OkStatus();
}

// Hot-plugs a vdev (the EAL probed PCI devices at start) and finds its ethdev.
absl::Status Port::Probe(const std::string& devargs) {
  if (!IsPciDevargs(devargs)) {
    int rc = rte_dev_probe(devargs.c_str());
    if (rc < 0) return PortError(spec_, absl::StrCat("cannot probe device '", devargs, "'"), rc);
    probed_ = true;
  }
  // The ethdev is named after the device: the vdev name, or the full PCI address.
  std::string name = devargs.substr(0, devargs.find(','));
  if (IsPciDevargs(devargs) && name.size() == 7) name = "0000:" + name;
  uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) {
    return absl::NotFoundError(
        absl::StrCat("port '", spec_.name, "': device '", name, "' has no ethdev port"));
  }
  eth_port_ = id;
  return absl::OkStatus();
}

// A bond's members, before the bond (which finds them by name). A member device that
// already exists belongs to something else: refused rather than shared.
absl::Status Port::ProbeMembers() {
  for (const std::string& devargs : driver_.MemberDevargs(spec_)) {
    if (IsPciDevargs(devargs)) continue;  // the EAL probed it (its allow-list)
    const std::string name = devargs.substr(0, devargs.find(','));
    uint16_t id = 0;
    if (rte_eth_dev_get_port_by_name(name.c_str(), &id) == 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("port '", spec_.name, "': member device '", name, "' exists already"));
    }
    int rc = rte_dev_probe(devargs.c_str());
    if (rc < 0) {
      return PortError(spec_, absl::StrCat("cannot probe member device '", devargs, "'"), rc);
    }
    rte_eth_dev_info info{};
    if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0 ||
        rte_eth_dev_info_get(id, &info) != 0) {
      return absl::NotFoundError(absl::StrCat("port '", spec_.name, "': member device '",
                                              name, "' has no ethdev port"));
    }
    members_probed_.push_back(info.device);
  }
  return absl::OkStatus();
}

// Queue counts, MTU, chains and RSS as the device allows them, and the driver's offloads.
absl::Status Port::ConfigureDevice(rte_eth_conf& conf, rte_mempool* pool) {
  rte_eth_dev_info info{};
  int rc = rte_eth_dev_info_get(eth_port_, &info);
  if (rc != 0) return PortError(spec_, "cannot read device info", rc);
  if (queues_.nb_rxq > info.max_rx_queues || info.max_tx_queues == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "port '%s': needs %d rx queues, device offers %d", spec_.name, queues_.nb_rxq,
        info.max_rx_queues));
  }
  queues_.nb_txq = std::min(queues_.nb_txq, info.max_tx_queues);
  // Some PMDs report a smaller maximum than they carry (memif says 1500 yet moves chains
  // of any length); configure what the device accepts and enforce mtu= at egress.
  uint32_t device_max_mtu = info.max_mtu;
  if (info.max_rx_pktlen > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN) {
    device_max_mtu = std::min<uint32_t>(device_max_mtu,
                                        info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
  }
  conf.rxmode.mtu = std::min<uint32_t>(spec_.mtu, device_max_mtu);
  device_mtu_ = static_cast<uint16_t>(conf.rxmode.mtu);
  // Jumbo frames arrive as mbuf chains where the device can scatter, and leave as chains.
  const uint32_t frame = spec_.mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN;
  if (frame > static_cast<uint32_t>(rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM) &&
      (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)) {
    conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
  }
  if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
  }
  // Link changes reported as they happen (LinkEvents), where the device can.
  if (info.dev_flags != nullptr && (*info.dev_flags & RTE_ETH_DEV_INTR_LSC)) {
    conf.intr_conf.lsc = 1;
  }
  conf.intr_conf.rxq = queues_.rx_interrupts;
  const std::string prepared = driver_.Prepare(spec_, eth_port_);
  setup_ = driver_.Configure(spec_, info, conf);
  setup_.note = prepared;
  if (queues_.nb_rxq > 1) {
    // Spread flows over the receive queues where the device hashes (NICs); a vhost-user
    // guest picks its queues itself.
    conf.rx_adv_conf.rss_conf.rss_hf =
        info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
    if (conf.rx_adv_conf.rss_conf.rss_hf != 0) {
      conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    } else if (setup_.rss_required) {
      // Its other queues would stay empty (or get what some other steering chooses).
      return absl::InvalidArgumentError(absl::StrFormat(
          "port '%s': queues=%d needs receive-side scaling, and device %s hashes no IP, TCP "
          "or UDP flows: give it queues=1", spec_.name, queues_.nb_rxq, info.driver_name));
    }
  }
  return absl::OkStatus();
}

absl::Status Port::SetUpQueues(const rte_eth_conf& conf, rte_mempool* pool) {
  int rc = rte_eth_dev_configure(eth_port_, queues_.nb_rxq, queues_.nb_txq, &conf);
  if (rc != 0) return PortError(spec_, "cannot configure device", rc);
  rc = rte_eth_dev_adjust_nb_rx_tx_desc(eth_port_, &queues_.rx_descriptors,
                                        &queues_.tx_descriptors);
  if (rc != 0) return PortError(spec_, "cannot set descriptor counts", rc);
  int socket = rte_eth_dev_socket_id(eth_port_);
  for (uint16_t q = 0; q < queues_.nb_rxq; ++q) {
    rc = rte_eth_rx_queue_setup(eth_port_, q, queues_.rx_descriptors, socket, nullptr, pool);
    if (rc != 0) return PortError(spec_, absl::StrCat("cannot set up rx queue ", q), rc);
  }
  for (uint16_t q = 0; q < queues_.nb_txq; ++q) {
    rc = rte_eth_tx_queue_setup(eth_port_, q, queues_.tx_descriptors, socket, nullptr);
    if (rc != 0) return PortError(spec_, absl::StrCat("cannot set up tx queue ", q), rc);
  }
  return absl::OkStatus();
}

Port::~Port() {
  if (eth_port_ != UINT16_MAX) {
    if (started_) rte_eth_dev_stop(eth_port_);
    rte_device* device = nullptr;
    rte_eth_dev_info info{};
    if (rte_eth_dev_info_get(eth_port_, &info) == 0) device = info.device;
    rte_eth_dev_close(eth_port_);
    if (probed_ && device != nullptr) rte_dev_remove(device);
  }
  // After the bond: closing it released them.
  for (rte_device* member : members_probed_) {
    uint16_t id = 0;
    RTE_ETH_FOREACH_DEV_OF(id, member) rte_eth_dev_close(id);
    rte_dev_remove(member);
  }
  if (const PortTraits traits = spec_.Traits(); traits.owns_socket) {
    RemoveSocketFile(*traits.socket);
  }
}

std::vector<QueueStat> Port::QueueStats() const {
  std::vector<QueueStat> out;
  if (!driver_.HasQueueStats(*this)) return out;
  const int n = rte_eth_xstats_get_names(eth_port_, nullptr, 0);
  if (n <= 0) return out;
  std::vector<rte_eth_xstat_name> names(static_cast<size_t>(n));
  std::vector<rte_eth_xstat> values(static_cast<size_t>(n));
  if (rte_eth_xstats_get_names(eth_port_, names.data(), n) != n ||
      rte_eth_xstats_get(eth_port_, values.data(), n) != n) {
    return out;
  }
  for (const rte_eth_xstat& v : values) {
    if (v.id >= names.size()) continue;
    // "rx_q0_good_packets": direction, queue, statistic.
    absl::string_view name = names[v.id].name;
    const bool rx = absl::StartsWith(name, "rx_q");
    if (!rx && !absl::StartsWith(name, "tx_q")) continue;
    name.remove_prefix(4);
    const size_t underscore = name.find('_');
    uint32_t queue = 0;
    if (underscore == absl::string_view::npos ||
        !absl::SimpleAtoi(name.substr(0, underscore), &queue)) {
      continue;
    }
    out.push_back({rx, static_cast<uint16_t>(queue), std::string(name.substr(underscore + 1)),
                   v.value});
  }
  return out;
}

bool Port::Reconnect() {
  if (started_) rte_eth_dev_stop(eth_port_);
  driver_.BeforeStart(spec_);
  started_ = rte_eth_dev_start(eth_port_) == 0;
  return started_;
}

bool Port::LinkUp() const {
  rte_eth_link link{};
  return rte_eth_link_get_nowait(eth_port_, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

PeerOffloads Port::Offloads() const { return driver_.Offloads(*this); }
std::string Port::PeerFeatures() const { return driver_.PeerFeatures(*this); }
std::optional<BondState> Port::Bond() const { return driver_.Bond(*this); }

DeviceRxDrops Port::RxDrops() const {
  rte_eth_stats stats{};
  if (rte_eth_stats_get(eth_port_, &stats) != 0) return {};
  return {stats.rx_nombuf, stats.imissed, stats.ierrors};
}

}  // namespace hvswitch
