// PacketSocketDevice: an existing kernel interface (a veth end, a NIC the kernel drives,
// any Ethernet netdev) in a given network namespace, attached through AF_PACKET sockets
// with PACKET_VNET_HDR: each frame read or written has the same virtio-net header in
// front as a tap's (partial checksums and GSO super-frames both ways), which DPDK's
// net_af_packet lacks (it forwards the kernel's partial checksums as they are: broken).
//
// One socket per queue, bound to the interface by index, non-blocking; with several, a
// PACKET_FANOUT group spreads flows over them by hash. The sockets never read what the
// interface sends: the kernel never hands a socket or its group its own frames, and
// PACKET_IGNORE_OUTGOING (and its fanout flag) keeps out the others' (the local stack's).
// The interface is made promiscuous while the sockets are open (PACKET_MR_PROMISC, undone
// by the kernel when they close), set up when the port starts if it was down (and down
// again when the port stops), and otherwise left as its owner configured it: its MTU, its
// addresses, its offloads.
//
// Control thread only; the Rx/Tx bursts only read and write queue_fd().
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "ports/host_tap/kernel_device.h"

struct ifreq;

namespace hvswitch {

class PacketSocketDevice final : public KernelDevice {
 public:
  ~PacketSocketDevice() override;

  absl::Status Open(const KernelInterfaceOptions& options);
  void Close();

  absl::Status ReadMac(uint8_t mac[6]) const override;
  uint16_t MaxMtu() const override;
  absl::Status ApplyMtu(uint16_t) override { return absl::OkStatus(); }  // its owner's
  absl::Status Start(bool rx_csum, bool rx_tso) override;
  void Stop() override;
  // Up and running (a veth has carrier only while its peer is up too).
  bool LinkUp() const override;

  // Frames the kernel dropped for queue q since the open: its socket's receive buffer
  // was full (PACKET_STATISTICS, which the kernel resets on each read).
  uint64_t KernelDrops(uint16_t q);
  // Whether outgoing frames reach the sockets anyway (a fanout group on a kernel without
  // PACKET_FANOUT_FLAG_IGNORE_OUTGOING): the Rx burst must discard them.
  bool reads_outgoing() const { return reads_outgoing_; }

 private:
  // The interface's current name into ifr (it may have been renamed); false when it is
  // gone.
  bool CurrentName(ifreq& ifr) const;
  absl::Status Flags(short& flags) const;

  bool raised_ = false;  // Start set the interface up: Stop sets it down again
  bool reads_outgoing_ = false;
  std::mutex drops_mu_;  // the statistics may be read from more than one control thread
  std::vector<uint64_t> drops_;
};

}  // namespace hvswitch
