// KernelPortDriver: what the two port types over hvswitch's own kernel devices
// (host_tap_pmd.h) share — type=host (a tap hvswitch creates) and type=netdev (an
// interface that exists): their keys iface=, netns=, queues=, their traits, queues and
// offloads (everything the virtio-net header carries, both ways). Each type says which
// device it is and how it is described.
#pragma once

#include "ports/port_driver.h"

namespace hvswitch {

class KernelPortDriver : public PortDriver {
 public:
  std::span<const SpecKey> keys() const override;
  absl::Status Check(const PortSpec& spec, const KeysGiven& given) const override;
  void AppendKeys(const PortSpec& spec, std::string& head, std::string& tail) const override;
  PortRole role() const override { return PortRole::kDevice; }
  PortTraits Traits(const PortSpec& spec) const override;
  std::string Devargs(const PortSpec& spec, int index) const override;
  PortQueues Queues(const PortSpec& spec, uint16_t nb_workers) const override;
  DeviceSetup Configure(const PortSpec& spec, const rte_eth_dev_info& info,
                        rte_eth_conf& conf) const override;

 protected:
  virtual const char* PmdName() const = 0;
  // "the kernel interface to create" (the error for a spec without iface=).
  virtual absl::string_view IfaceMeaning() const = 0;
  // Why a --ctl_group member may not manage it.
  virtual absl::string_view RootOnly() const = 0;
};

}  // namespace hvswitch
