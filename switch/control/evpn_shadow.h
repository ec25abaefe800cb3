// EvpnShadow: the kernel devices FRR's zebra watches for one VNI, standing in for the
// tunnel (FRR 8.4 has no data-plane API hvswitch could use; grout's needs FRR >= 10.5):
// a bridge hvsbrVNI with a VXLAN device hvsvxVNI (the VNI, the local VTEP address,
// nolearning, on UDP port kShadowUdpPort so that the kernel never decapsulates hvswitch's
// traffic) and a tap hvslVNI that nobody opens, on which hvswitch's local MACs are
// written as static FDB entries (zebra advertises them: EVPN type-2). What zebra installs
// on the VXLAN device, remote MACs with their VTEPs and the flood list (type-3: zero-MAC
// entries), is read back (Read). No frame ever crosses these devices. The devices go when
// the object does (zebra then withdraws the VNI's routes).
// Control thread only.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "switch/control/rtnetlink.h"

namespace hvswitch {

inline constexpr uint16_t kShadowUdpPort = 4799;

// What zebra installed for the VNI.
struct EvpnRemote {
  std::map<uint64_t, in_addr_t> macs;  // MAC (bits 0-47) -> its VTEP
  std::vector<in_addr_t> flood;        // type-3: the VTEPs of the flood list
};

class EvpnShadow {
 public:
  static absl::StatusOr<std::unique_ptr<EvpnShadow>> Create(uint32_t vni, in_addr_t local);
  ~EvpnShadow();
  EvpnShadow(const EvpnShadow&) = delete;
  EvpnShadow& operator=(const EvpnShadow&) = delete;

  // A local MAC (bits 0-47): written / removed as a static entry on the tap.
  absl::Status Publish(uint64_t mac);
  absl::Status Withdraw(uint64_t mac);
  // Remote MACs (bridge entries on the VXLAN device, their VTEP from its own entry of the
  // MAC) and the flood list, as the kernel has them now.
  absl::StatusOr<EvpnRemote> Read();

  const std::string& bridge() const { return bridge_; }
  int vxlan_ifindex() const { return vxlan_ifindex_; }

 private:
  EvpnShadow(std::unique_ptr<RtNetlink> nl, uint32_t vni);
  absl::Status Build(in_addr_t local);
  // Deletes the interface `name` if it exists.
  void DeleteLink(const std::string& name);
  int Neigh(uint16_t type, uint16_t flags, uint64_t mac);

  std::unique_ptr<RtNetlink> nl_;
  const uint32_t vni_;
  const std::string bridge_, vxlan_, tap_;
  int bridge_ifindex_ = 0, vxlan_ifindex_ = 0, tap_ifindex_ = 0;
};

}  // namespace hvswitch
