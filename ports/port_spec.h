// PortSpec: what an operator wrote in one `--port=` option, parsed and checked.
// Pure control-plane code: no DPDK, callable from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "ports/driver_keys.h"
#include "ports/guard_spec.h"
#include "ports/port_driver.h"

namespace hvswitch {

// tx_retries= default and range: Open vSwitch's tx-retries-max (default 8, 0-32); VPP's
// vhost-user output retries 8 times too. A retry follows only a call that sent frames, so
// a stalled guest costs no retry at all and a burst at most this many retry windows
// (kTxRetryWindowUs).
inline constexpr uint16_t kDefaultTxRetries = 8;
inline constexpr uint16_t kMaxTxRetries = 32;

struct PortSpec {
  std::string name;
  // type=: the port type's driver (ports/drivers.cc). Null: a port without a device (the
  // data path's tests), with a device's role and no traits.
  const PortDriver* driver = nullptr;
  // The type's own keys (path=, client=, queues=, id=, zero_copy=, devargs=, ...), as its
  // driver's key parsers stored them; only the driver reads them (the embedded default
  // configuration and tests set them by name).
  DriverKeys driver_keys;
  // VLANs. Neither access nor trunk: the port carries every VLAN, untagged frames in
  // VLAN 0 (what a plain bridge does). Access: untagged on the wire, `access_vlan` inside.
  // Trunk: tagged frames of the listed VLANs; untagged ones belong to the native VLAN.
  uint16_t access_vlan = 0;          // 1-4094; 0: not an access port
  std::vector<uint16_t> trunk_vlans;  // ascending; empty: not a trunk port
  uint16_t native_vlan = 0;          // trunk only; 0: untagged frames are dropped
  uint16_t mtu = 1500;               // largest L3 payload sent to or taken from the port
  // MACs the port may teach the FDB (learn_limit=N; 0: no limit). Not given: a guest port
  // (vhost-user, memif) gets kDefaultGuestLearnLimit, any other port no limit.
  std::optional<uint32_t> learn_limit;
  // Port security. `allowed_macs` (mac=): the only source MACs accepted from the port
  // (FDB key layout: MAC in bits 0-47, no VLAN); `lock_mac` (lock=1): accept only the
  // first source MAC the port uses until it disconnects. Neither: any source.
  std::vector<uint64_t> allowed_macs;
  bool lock_mac = false;
  // Packet buffers the port's received frames may hold at once (quota=N): the port gets a
  // pool of its own, so that a guest cannot drain the shared one. 0: the shared pool.
  uint32_t quota = 0;
  // Retries of a transmit burst the port's queue took only in part (tx_retries=N), each
  // waiting a moment for it to take more, and made only while it does: a slow guest gets
  // its frames, a stalled one (nothing sent) costs no retry at all. 0: what does not fit
  // at once is dropped.
  uint16_t tx_retries = kDefaultTxRetries;
  // Guardrails (ports/guard_keys.h): ingress policing, storm control, BPDU guard, IP
  // anti-spoofing.
  GuardSpec guards;
  // mrouter=1: a multicast router is behind the port (IGMP/MLD snooping sends every
  // snooped group's frames and the membership reports there, as to a port where a
  // querier was seen).
  bool mrouter = false;

  // "vhost-user", "memif", "host", "dpdk" ("" without a driver).
  absl::string_view type_name() const { return driver != nullptr ? driver->type() : ""; }
  PortRole role() const { return driver != nullptr ? driver->role() : PortRole::kDevice; }
  PortTraits Traits() const { return driver != nullptr ? driver->Traits(*this) : PortTraits{}; }
  // The learn limit in force: learn_limit= if given, else the role's default (0: none).
  uint32_t LearnLimit() const;
  // True when hvswitch itself creates its socket and so must remove it on exit.
  bool OwnsSocket() const { return Traits().owns_socket; }
  // The spec written back in the grammar ParsePortSpec reads.
  std::string ToString() const;
};

// Parses `NAME,type=vhost-user,path=SOCK[,client=0|1][,queues=N]`,
// `NAME,type=memif,path=SOCK[,client=1[,zero_copy=1]][,id=N]` or
// `NAME,type=host,iface=IFACE[,netns=NS][,queues=N]` or
// `NAME,type=dpdk[,queues=N],devargs=DEVARGS`
// (everything after `devargs=` verbatim), each with the common keys
// `[,vlan=N | ,trunk=LIST[,native=N]][,mtu=N][,learn_limit=N][,mac=MAC[,MAC...] | ,lock=1]`
// `[,quota=N][,tx_retries=N][,mrouter=1]`
// `[,police_pps=N[,police_pps_burst=N]][,police_bps=N[,police_bps_burst=N]]`
// `[,storm_broadcast=N][,storm_multicast=N][,storm_unknown=N][,bpdu_guard=1]`
// before devargs.
// Errors name the port and the problem in one line.
absl::StatusOr<PortSpec> ParsePortSpec(absl::string_view text);
// 1-32 characters of [A-Za-z0-9_.-]: a port's name (a mirror session's too).
bool IsValidPortName(absl::string_view name);

inline constexpr uint16_t kMaxQueuesPerPort = 16;
inline constexpr uint16_t kMinMtu = 68;    // IPv4's minimum
inline constexpr uint16_t kMaxMtu = 9000;  // jumbo frames
inline constexpr size_t kMaxPortMacs = 8;  // mac= list length
inline constexpr uint32_t kMinQuota = 256, kMaxQuota = 1u << 20;  // quota= range
// A guest's MACs: far more than a VM or container uses, far fewer than the FDB holds.
inline constexpr uint32_t kDefaultGuestLearnLimit = 1024;

// Parses a VLAN list such as `10,20,30-40` (VLANs 1-4094) into ascending unique ids.
absl::StatusOr<std::vector<uint16_t>> ParseVlanList(absl::string_view text);

}  // namespace hvswitch
