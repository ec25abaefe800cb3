#include "ports/host_tap/host_tap_driver.h"

#include "ports/host_tap/host_tap_pmd.h"
#include "ports/host_tap/kernel_port_driver.h"

namespace hvswitch {
namespace {

class Driver final : public KernelPortDriver {
 public:
  absl::string_view type() const override { return "host"; }
  absl::string_view usage() const override {
    return R"(  --port=NAME,type=host,iface=IFACE[,netns=NS][,queues=N]
                                                   (a kernel interface with checksum and
                                                    TSO offloads; created in namespace NS)
)";
  }

 protected:
  const char* PmdName() const override { return HostTapPmdName(); }
  absl::string_view IfaceMeaning() const override { return "the kernel interface to create"; }
  absl::string_view RootOnly() const override {
    return "type=host ports create kernel interfaces (in any network namespace): they "
           "need root";
  }
};

// Constant-initialised: valid before any static constructor runs.
constinit const Driver kDriver;

}  // namespace

const PortDriver& HostTapDriver() { return kDriver; }

}  // namespace hvswitch
