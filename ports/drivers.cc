// The port types: one line each. Explicit, not self-registering: a static library's object
// that nothing references is not linked, and this list is what references each driver
// (and through the memif driver, the libc interposers: tests/unit/interposers.sh).
#include "ports/bond/bond_driver.h"
#include "ports/dpdk/dpdk_driver.h"
#include "ports/host_tap/host_tap_driver.h"
#include "ports/host_tap/netdev_driver.h"
#include "ports/memif/memif_driver.h"
#include "ports/port_driver.h"
#include "ports/vhost_user/vhost_user_driver.h"
#include "ports/vxlan/vxlan_driver.h"

namespace hvswitch {

std::span<const PortDriver* const> PortDrivers() {
  static const PortDriver* const kAll[] = {&VhostUserDriver(), &MemifDriver(),
                                           &HostTapDriver(), &NetdevDriver(),
                                           &DpdkDriver(),      &BondDriver(),
                                           &VxlanDriver()};
  // help and error order: "vhost-user, memif, host, netdev, dpdk, bond or vxlan"
  return kAll;
}

const PortDriver* FindPortDriver(absl::string_view type) {
  for (const PortDriver* driver : PortDrivers()) {
    if (driver->type() == type) return driver;
  }
  return nullptr;
}

}  // namespace hvswitch
