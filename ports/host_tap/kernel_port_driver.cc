#include "ports/host_tap/kernel_port_driver.h"

#include <rte_ethdev.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ports/port.h"
#include "ports/spec_keys.h"

namespace hvswitch {
namespace {

// What the kernel takes as an interface name (dev_valid_name), and no comma or '=' (the
// devargs' separators).
bool ValidIfaceName(absl::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == ':' || c == ',' || c == '=' || absl::ascii_isspace(c)) return false;
  }
  return true;
}

absl::Status ApplyIface(absl::string_view value, PortSpec& spec) {
  if (!ValidIfaceName(value)) {
    return SpecError(spec.name, absl::StrCat("iface '", value, "' is not an interface name "
                                             "(1 to 15 characters, no '/', ':' or spaces)"));
  }
  spec.driver_keys.Set("iface", value);
  return absl::OkStatus();
}

// A name `ip netns` made (/run/netns/NAME) or an absolute path (/proc/PID/ns/net).
absl::Status ApplyNetns(absl::string_view value, PortSpec& spec) {
  const bool path = !value.empty() && value.front() == '/';
  bool ok = !value.empty() && value.find('=') == absl::string_view::npos;
  if (!path) {
    for (char c : value) ok &= absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.';
    ok &= value != "." && value != "..";
  }
  if (!ok) {
    return SpecError(spec.name, absl::StrCat("netns '", value, "' is neither a namespace "
                                             "name (ip netns) nor an absolute path"));
  }
  spec.driver_keys.Set("netns", value);
  return absl::OkStatus();
}

absl::string_view Iface(const PortSpec& spec) { return spec.driver_keys.Text("iface"); }
absl::string_view Netns(const PortSpec& spec) { return spec.driver_keys.Text("netns"); }

constexpr SpecKey kKeys[] = {{"iface", ApplyIface}, {"netns", ApplyNetns},
                             {"queues", ApplyQueues}};

}  // namespace

std::span<const SpecKey> KernelPortDriver::keys() const { return kKeys; }

absl::Status KernelPortDriver::Check(const PortSpec& spec, const KeysGiven& given) const {
  if (!given.contains("iface")) {
    return SpecError(spec.name, absl::StrCat("missing iface= (", IfaceMeaning(), ")"));
  }
  return absl::OkStatus();
}

void KernelPortDriver::AppendKeys(const PortSpec& spec, std::string& head, std::string&) const {
  absl::StrAppend(&head, ",iface=", Iface(spec));
  if (!Netns(spec).empty()) absl::StrAppend(&head, ",netns=", Netns(spec));
  if (QueueCount(spec) != 1) absl::StrAppend(&head, ",queues=", QueueCount(spec));
}

PortTraits KernelPortDriver::Traits(const PortSpec& spec) const {
  PortTraits traits;
  traits.endpoint = Netns(spec).empty() ? std::string(Iface(spec))
                                        : absl::StrCat(Netns(spec), ":", Iface(spec));
  traits.root_only = std::string(RootOnly());
  // Each rx queue holds one frame's chain of buffers, not a ring of them.
  traits.fills_rx_rings = false;
  return traits;
}

std::string KernelPortDriver::Devargs(const PortSpec& spec, int index) const {
  std::string devargs = absl::StrCat(PmdName(), index, ",iface=", Iface(spec),
                                     ",queues=", QueueCount(spec));
  if (!Netns(spec).empty()) absl::StrAppend(&devargs, ",netns=", Netns(spec));
  return devargs;
}

PortQueues KernelPortDriver::Queues(const PortSpec& spec, uint16_t nb_workers) const {
  PortQueues queues;
  queues.nb_rxq = QueueCount(spec);
  queues.nb_txq = nb_workers;  // they share the interface's queues
  return queues;
}

// Everything the header carries, both ways: the kernel hands over partial checksums and
// super-frames (Rx checksum + LRO), and takes them (Tx checksum + TSO) to finish itself
// or deliver as they are.
DeviceSetup KernelPortDriver::Configure(const PortSpec&, const rte_eth_dev_info& info,
                                        rte_eth_conf& conf) const {
  constexpr uint64_t kRx = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
                           RTE_ETH_RX_OFFLOAD_TCP_LRO;
  constexpr uint64_t kTx = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
                           RTE_ETH_TX_OFFLOAD_TCP_TSO;
  DeviceSetup setup;
  if ((info.rx_offload_capa & kRx) == kRx && (info.tx_offload_capa & kTx) == kTx) {
    conf.rxmode.offloads |= kRx;
    conf.rxmode.max_lro_pkt_size = info.max_lro_pkt_size;
    conf.txmode.offloads |= kTx;
    setup.rx_offload = true;
    setup.nic = {.csum = true, .tso4 = true, .tso6 = true};
  }
  return setup;
}

}  // namespace hvswitch
