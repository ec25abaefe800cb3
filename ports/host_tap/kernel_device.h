// KernelDevice: the kernel side of a net_hvs_tap ethdev (host_tap_pmd.h). Two kinds of
// descriptor carry frames with a virtio-net header in front, read and written alike: a
// tap hvswitch creates (TapDevice: type=host) and packet sockets bound to an interface
// that exists already (PacketSocketDevice: type=netdev, a veth end, any netdev).
//
// Control thread only; the Rx/Tx bursts only read and write queue_fd().
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace hvswitch {

class KernelDevice {
 public:
  virtual ~KernelDevice() = default;

  virtual int queue_fd(uint16_t q) const = 0;
  virtual uint16_t nb_queues() const = 0;
  virtual int ifindex() const = 0;
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
};

}  // namespace hvswitch
