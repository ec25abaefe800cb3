// KernelDevice: the kernel side of a net_hvs_tap ethdev (host_tap_pmd.h). Two kinds of
// descriptor carry frames with a virtio-net header in front, read and written alike: a
// tap hvswitch creates (TapDevice: type=host) and packet sockets bound to an interface
// that exists already (PacketSocketDevice: type=netdev, a veth end, any netdev).
//
// Control thread only; the Rx/Tx bursts only read and write queue_fd().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace hvswitch {

class NetnsGuard;

// Which interface, where, with how many queues.
struct KernelInterfaceOptions {
  std::string iface;  // its name (1 to 15 characters) where it lives
  std::string netns;  // "" (hvswitch's own), a name under /run/netns, or a path
  uint16_t queues = 1;
};

// The start of an Open: the name checked and `guard` in the interface's namespace.
absl::Status EnterInterfaceNamespace(const KernelInterfaceOptions& options, NetnsGuard& guard);

class KernelDevice {
 public:
  KernelDevice() = default;
  virtual ~KernelDevice() = default;
  KernelDevice(const KernelDevice&) = delete;
  KernelDevice& operator=(const KernelDevice&) = delete;

  int queue_fd(uint16_t q) const { return fds_[q]; }
  uint16_t nb_queues() const { return static_cast<uint16_t>(fds_.size()); }
  int ifindex() const { return ifindex_; }
  virtual absl::Status ReadMac(uint8_t mac[6]) const = 0;
  // The largest MTU the port may configure: its own for an interface someone else owns.
  virtual uint16_t MaxMtu() const = 0;
  // The MTU the port was configured with, applied where the interface is hvswitch's.
  virtual absl::Status ApplyMtu(uint16_t mtu) = 0;
  // The port starts: what the kernel may hand over (partial checksums; super-frames),
  // where that can be asked, and the interface up.
  virtual absl::Status Start(bool rx_csum, bool rx_tso) = 0;
  virtual void Stop() = 0;
  // Whether frames can pass now (the namespace's owner may take the interface down).
  virtual bool LinkUp() const = 0;

 protected:
  std::vector<int> fds_;  // one per queue
  int ctl_fd_ = -1;       // a socket in the interface's namespace, for its ioctls
  int ifindex_ = 0;
};

}  // namespace hvswitch
