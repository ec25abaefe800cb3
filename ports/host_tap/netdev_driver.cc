#include "ports/host_tap/netdev_driver.h"

#include "ports/host_tap/host_tap_pmd.h"
#include "ports/host_tap/kernel_port_driver.h"

namespace hvswitch {
namespace {

class Driver final : public KernelPortDriver {
 public:
  absl::string_view type() const override { return "netdev"; }
  absl::string_view usage() const override {
    return R"(  --port=NAME,type=netdev,iface=IFACE[,netns=NS][,queues=N]
                                                   (an existing kernel interface, e.g. a
                                                    veth end, in namespace NS; checksum
                                                    and TSO offloads)
)";
  }

 protected:
  const char* PmdName() const override { return PacketSocketPmdName(); }
  absl::string_view IfaceMeaning() const override {
    return "the existing kernel interface to attach to";
  }
  absl::string_view RootOnly() const override {
    return "type=netdev ports attach to kernel interfaces (in any network namespace): "
           "they need root";
  }
};

// Constant-initialised: valid before any static constructor runs.
constinit const Driver kDriver;

}  // namespace

const PortDriver& NetdevDriver() { return kDriver; }

}  // namespace hvswitch
