// TapDevice: a kernel tap interface whose frames carry a virtio-net header (IFF_VNET_HDR),
// created in a given network namespace, one file descriptor per queue
// (IFF_MULTI_QUEUE when there are several). Closing the descriptors deletes the interface.
//
// The namespace: the calling thread enters it (setns) for the open and the socket it
// later configures the interface through, and returns at once. A tap and a socket belong
// to the namespace they were created in, so everything after runs from any namespace.
// Creating it there, rather than creating it here and moving it (RTM_NEWLINK with
// IFLA_NET_NS_FD), needs no netlink code, never shows the interface (or its name
// clash) in hvswitch's namespace, and lets extra queues attach by name where it lives.
//
// Control thread only (setns changes the calling thread); the Rx/Tx bursts only read and
// write the descriptors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ports/host_tap/kernel_device.h"

namespace hvswitch {

class TapDevice final : public KernelDevice {
 public:
  ~TapDevice() override;

  absl::Status Open(const KernelInterfaceOptions& options);
  void Close();

  absl::Status ReadMac(uint8_t mac[6]) const override;
  uint16_t MaxMtu() const override { return UINT16_MAX; }  // the PMD's limit applies
  absl::Status ApplyMtu(uint16_t mtu) override { return SetMtu(mtu); }
  // TUNSETOFFLOAD, then up; down at stop (the tap is hvswitch's).
  absl::Status Start(bool rx_csum, bool rx_tso) override;
  void Stop() override { (void)SetUp(false); }
  bool LinkUp() const override { return IsUp(); }
  const std::string& name() const { return name_; }

  // What the kernel may hand us (TUNSETOFFLOAD: TUN_F_CSUM, TUN_F_TSO4/6). Frames we
  // write may carry any request regardless.
  absl::Status SetOffloads(bool csum, bool tso);
  absl::Status SetMtu(uint16_t mtu);
  absl::Status SetUp(bool up);
  // Whether the interface is administratively up (the namespace's owner may take it down).
  bool IsUp() const;

 private:
  // The interface's current name (it may have been renamed in its namespace).
  bool CurrentName(char (&name)[16]) const;

  std::string name_;
};

}  // namespace hvswitch
