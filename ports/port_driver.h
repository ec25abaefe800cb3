// PortDriver: what one port type (vhost-user, memif, a DPDK device) knows that the rest of
// hvswitch does not: its own spec keys and their checks, its DPDK device string, queues,
// device configuration and peer offloads, whether it reconnects, what the workers must do
// for its frames, what EAL needs for it and why a --ctl_group member may not manage it.
// One implementation per type in ports/<type>/, listed in ports/drivers.cc; the shared
// spec grammar (port_spec.cc), Port and the bridge ask the driver and name no type.
// Drivers are stateless singletons; every call is from the control thread unless it says
// otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ports/bond/bond_state.h"

struct rte_eth_conf;
struct rte_eth_dev_info;

namespace hvswitch {

struct PortSpec;
class Port;
class ReaderGrace;

struct PortQueues {
  uint16_t nb_rxq = 1;
  uint16_t nb_txq = 1;
  uint16_t rx_descriptors = 1024;
  uint16_t tx_descriptors = 1024;
  // Configure the device for receive interrupts (--idle=interrupt), where it has them.
  bool rx_interrupts = false;
};

struct PeerOffloads {
  bool csum = false;  // completes partial TCP/UDP checksums
  bool tso4 = false;  // segments TCP/IPv4 super-frames
  bool tso6 = false;  // segments TCP/IPv6 super-frames
};

// A guest port's learn limit defaults to kDefaultGuestLearnLimit, a device's to none; the
// logs say "guest connected" rather than "link up".
enum class PortRole { kGuest, kDevice };

// What the rest of hvswitch may know about one port of the type.
struct PortTraits {
  std::optional<std::string> socket;      // the UNIX socket the port uses
  bool owns_socket = false;               // hvswitch creates it and removes it
  std::string endpoint;                   // the `path` label and the logs: socket or device
  std::optional<std::string> root_only;   // why a --ctl_group member may not manage it
  bool fills_rx_rings = false;            // takes nb_rxq x rx_descriptors buffers at start
};

// What the workers do differently for the port's frames (copied into DatapathPort).
struct DatapathFlags {
  bool rx_offload = false;      // its frames may carry offload requests
  bool tx_prepare = false;      // frames to it go through rte_eth_tx_prepare
  bool recount_chains = false;  // received chains need their pkt_len summed again
  // It needs a transmit call every round, frames or not: its sent frames are freed only
  // by its next one (memif zero-copy), or it sends its own control frames from it (a
  // bond's LACPDUs).
  bool tx_each_round = false;
  // Frames it has not delivered yet wait in a kernel's or a NIC's queue (a tap, a packet
  // socket, a NIC's ring), not in a guest's ring: while a destination's queue is full,
  // the workers stop polling it rather than drop its frames (Forwarder::OfferParked).
  bool rx_backpressure = false;
  // It reports no link change (DPDK 22.11's memif raises no LSC event): while it is down,
  // the workers read its link themselves at every burst (Forwarder::LoadUpMask).
  bool link_polled = false;
};

// What Configure turned on in the device, and what it found.
struct DeviceSetup {
  bool rx_offload = false;  // Rx checksum offload: guests' requests stay in the frames
  PeerOffloads nic;         // what the device finishes itself in frames sent to it
  bool peer_ring = false;   // its queues are another process's ring (a guest, a switch)
  // More than one receive queue only where the device spreads flows itself (RSS: a NIC);
  // a guest's or a kernel's queues are filled by whoever writes them.
  bool rss_required = false;
  std::string caveat;       // a known flaw of the device, logged when the port opens
  std::string note;         // how Prepare set the device up, logged when the port opens
};

// A port whose device connects only when it starts, and never again by itself.
struct ReconnectPolicy {
  bool enabled = false;  // a start that fails is not an error: started again later
  std::chrono::milliseconds after_failed_start{};  // the next try after a failed start
  std::chrono::milliseconds after_start{};         // ... after one that connected
  std::string waiting;  // what the log says the port waits for ("no memif server at P")
  std::chrono::milliseconds After(bool started) const {
    return started ? after_start : after_failed_start;
  }
};

// EAL arguments the ports need (eal_args.cc turns them into the command line).
struct EalNeeds {
  std::vector<std::string> pci_allow;  // -a DEVICE
  bool single_file_segments = false;
};

// One spec key: `name=value` sets `spec` or names the problem (SpecError).
struct SpecKey {
  absl::string_view name;
  absl::Status (*apply)(absl::string_view value, PortSpec& spec);
  bool rest_of_line = false;  // the value runs to the end of the spec, commas included
};

// The keys a spec's text named.
using KeysGiven = absl::flat_hash_set<absl::string_view>;

class PortDriver {
 public:
  virtual ~PortDriver() = default;

  // --- the spec grammar ---
  virtual absl::string_view type() const = 0;   // type=
  virtual absl::string_view usage() const = 0;  // its --port lines of `hvswitch --help`
  // The keys of its own, in the order "does not apply" checks them for other types. Keys
  // of one name in several drivers must parse alike (one may come before type=).
  virtual std::span<const SpecKey> keys() const = 0;
  // After the keys were applied: what the type requires and which combinations it refuses.
  virtual absl::Status Check(const PortSpec& spec, const KeysGiven& given) const = 0;
  // ToString: its keys before the shared ones (`head`) and after them (`tail`).
  virtual void AppendKeys(const PortSpec& spec, std::string& head, std::string& tail) const = 0;
  virtual PortRole role() const = 0;
  virtual PortTraits Traits(const PortSpec& spec) const = 0;
  // Before EAL starts: `mine` are the configured ports of this type (more may be added
  // later by hvswitchctl).
  virtual void AddEalNeeds(std::span<const PortSpec* const> /*mine*/,
                           EalNeeds& /*needs*/) const {}

  // --- the device (Port) ---
  // The DPDK device string; `index` makes vdev names unique in the process.
  virtual std::string Devargs(const PortSpec& spec, int index) const = 0;
  // Queue counts with `nb_workers` workers (descriptors are the bridge's).
  virtual PortQueues Queues(const PortSpec& spec, uint16_t nb_workers) const = 0;
  // Adds the type's offloads to `conf`, given what the device offers.
  virtual DeviceSetup Configure(const PortSpec& /*spec*/, const rte_eth_dev_info& /*info*/,
                                rte_eth_conf& /*conf*/) const {
    return {};
  }
  // A device built on other devices (a bond's members): their DPDK device strings,
  // hot-plugged before the port's own device (PCI members the EAL probed) and removed
  // after it.
  virtual std::vector<std::string> MemberDevargs(const PortSpec& /*spec*/) const { return {}; }
  // Once the device is probed, before it is configured: what the type sets up on the
  // ethdev itself (a bond's dedicated LACP queues). A note for the port's log line, or
  // empty.
  virtual std::string Prepare(const PortSpec& /*spec*/, uint16_t /*eth_port*/) const {
    return {};
  }
  // After the device's configuration or start failed: undoes what Prepare set up that
  // the device could not take (dedicated queues some member lacks) and gives the note that
  // replaces Prepare's; nullopt when there is nothing to undo.
  virtual std::optional<std::string> Unprepare(const PortSpec& /*spec*/,
                                               uint16_t /*eth_port*/) const {
    return std::nullopt;
  }
  // Just before each start of the device.
  virtual void BeforeStart(const PortSpec& /*spec*/) const {}
  virtual ReconnectPolicy Reconnect(const PortSpec& /*spec*/) const { return {}; }
  // What the peer finishes itself in frames sent to it; asked again as peers change.
  // Default: what Configure found in the device.
  virtual PeerOffloads Offloads(const Port& port) const;
  // What the connected peer negotiated that an operator may need to know besides
  // offloads (vhost-user: what live migration can use), for the link-up log line; empty
  // for nothing.
  virtual std::string PeerFeatures(const Port& /*port*/) const { return {}; }
  // A bond's mode and members now; nullopt for a port of any other type.
  virtual std::optional<BondState> Bond(const Port& /*port*/) const { return std::nullopt; }
  // Whether the device has per-queue statistics to read now.
  virtual bool HasQueueStats(const Port& /*port*/) const { return true; }
  // Default: its frames may carry offload requests when Configure turned on Rx offloads.
  virtual DatapathFlags Flags(const PortSpec& /*spec*/, const DeviceSetup& setup) const {
    DatapathFlags flags;
    flags.rx_offload = setup.rx_offload;
    return flags;
  }

  // --- process hooks, whether or not a port of the type exists (idempotent) ---
  // On the control thread, before any port opens.
  virtual void OnControlThread() const {}
  // Workers start (grace: how to wait for them) or stopped (nullptr).
  virtual void OnWorkersRunning(ReaderGrace* /*grace*/) const {}
  // On each worker thread, before its first burst.
  virtual void OnWorkerThread() const {}
};

// Every port type, in the order help and errors list them (ports/drivers.cc).
std::span<const PortDriver* const> PortDrivers();
// The driver of type=`type`; nullptr when there is none.
const PortDriver* FindPortDriver(absl::string_view type);

}  // namespace hvswitch
