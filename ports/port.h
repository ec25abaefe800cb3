// Port: one bridge port over a DPDK ethdev, whatever its type; what differs by type, its
// driver decides (spec.driver, ports/port_driver.h). Opening probes the device, configures
// and starts it; destroying it stops and detaches the device and removes the socket
// hvswitch created.
// Control thread only; workers use the ethdev id and queues it reports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ports/port_spec.h"

struct rte_eth_conf;
struct rte_mempool;
struct rte_device;

namespace hvswitch {

// The DPDK device string for a spec (its driver's); `index` makes vdev names unique in
// the process.
std::string PortDevargs(const PortSpec& spec, int index);

// True when devargs names a PCI device (`0000:03:00.0` or `03:00.0`, options may follow):
// the EAL probes it; any other device string is a vdev that Port hot-plugs.
bool IsPciDevargs(const std::string& devargs);

// Queue counts a port of this spec asks for with `nb_workers` workers (its driver's: one tx
// queue per worker where the port can have them, one rx queue per configured queue).
// Opening the port may lower nb_txq to what the device offers; workers then share tx
// queues under a lock.
PortQueues QueuesFor(const PortSpec& spec, uint16_t nb_workers, uint16_t rx_descriptors,
                     uint16_t tx_descriptors);

// One of the device's own per-queue statistics (DPDK xstats named `rx_qN_STAT` or
// `tx_qN_STAT`; vhost-user: good_packets, good_bytes, size bins, guest_notifications...).
// rx: frames from the peer into hvswitch, tx: frames hvswitch sent it.
struct QueueStat {
  bool rx = true;
  uint16_t queue = 0;
  std::string name;
  uint64_t value = 0;
};

// Frames the device dropped on receive before hvswitch saw them (rte_eth_stats).
struct DeviceRxDrops {
  uint64_t no_mbuf = 0;  // rx_nombuf: no buffer to receive into
  uint64_t missed = 0;   // imissed: its receive queue was full (a NIC, af_packet's ring)
  uint64_t errors = 0;   // ierrors: erroneous frames (bad CRC, runts...; net_tap: short reads)
};

class Port {
 public:
  static absl::StatusOr<std::unique_ptr<Port>> Open(const PortSpec& spec, int index,
                                                    const PortQueues& queues,
                                                    rte_mempool* pool);
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  const PortSpec& spec() const { return spec_; }
  uint16_t eth_port() const { return eth_port_; }
  const PortQueues& queues() const { return queues_; }
  // The MAC the port presents, "aa:bb:cc:dd:ee:ff".
  const std::string& mac() const { return mac_; }
  // The MTU the device was configured with: spec().mtu, or less where the device's
  // reported maximum is lower.
  uint16_t device_mtu() const { return device_mtu_; }
  bool LinkUp() const;
  // Whether and when the device is started again while it is down (the driver's).
  const ReconnectPolicy& reconnect() const { return reconnect_; }
  bool started() const { return started_; }
  // Stops the device if it runs and starts it again, which connects a memif client anew.
  // Only while no worker uses the device. False when it did not start (server absent).
  bool Reconnect();
  // What the driver turned on in the device, and what the workers do for it.
  const DeviceSetup& setup() const { return setup_; }
  const DatapathFlags& flags() const { return flags_; }
  // Its receive queues raise interrupts a worker can block on (rte_eth_dev_rx_intr_*):
  // asked for (PortQueues::rx_interrupts) and offered by the device.
  bool rx_interrupts() const { return rx_interrupts_; }
  // What the peer finishes itself in frames sent to it (the driver's: for vhost-user what
  // the connected guest negotiated, for a NIC its Tx offloads, for memif nothing). Asked
  // again as guests come and go.
  PeerOffloads Offloads() const;
  std::string PeerFeatures() const;
  // A bond's mode and members now (type=bond); nullopt for any other port.
  std::optional<BondState> Bond() const;
  DeviceRxDrops RxDrops() const;
  // The device's per-queue statistics (none while a vhost-user guest is not connected: the
  // vhost library has none then, and says so in the log on every call).
  std::vector<QueueStat> QueueStats() const;

 private:
  Port(const PortSpec& spec, const PortQueues& queues)
      : spec_(spec), driver_(*spec.driver), queues_(queues), reconnect_(driver_.Reconnect(spec)) {}
  absl::Status Start(const std::string& devargs, rte_mempool* pool);
  absl::Status Probe(const std::string& devargs);
  absl::Status ProbeMembers();
  absl::Status ConfigureDevice(rte_eth_conf& conf, rte_mempool* pool);
  absl::Status SetUpQueues(const rte_eth_conf& conf, rte_mempool* pool);

  PortSpec spec_;
  const PortDriver& driver_;
  PortQueues queues_;
  uint16_t eth_port_ = UINT16_MAX;
  bool probed_ = false;  // we probed (hot-plugged) the device and must detach it
  // The members' devices we hot-plugged (a bond's), detached after the port's own.
  std::vector<rte_device*> members_probed_;
  bool started_ = false;
  bool rx_interrupts_ = false;
  std::string mac_;
  uint16_t device_mtu_ = 0;
  ReconnectPolicy reconnect_;
  DeviceSetup setup_;
  DatapathFlags flags_;
};

}  // namespace hvswitch
