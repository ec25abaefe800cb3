#include "switch/control/vxlan_tunnels.h"

#include <linux/filter.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "switch/control/log.h"
#include "switch/datapath/mac_key.h"

namespace hvswitch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kResolveEvery = std::chrono::seconds(1);      // VTEPs without a next hop
constexpr auto kFullResolveEvery = std::chrono::seconds(5);  // all: routes and MACs change
constexpr auto kAgeEvery = std::chrono::seconds(1);
// A learned remote MAC younger than this is kept though the FDB does not have it yet:
// the bridge learns it from the same frame, through its own queue.
constexpr auto kLearnedGrace = std::chrono::seconds(5);
constexpr size_t kNotesPerPoll = 256;
// evpn=1: zebra's writes are read when a notification says so, and at least this often
// (a lost notification costs no more); remote MACs are refreshed in the FDB so that they
// never age while FRR has them.
constexpr auto kImportEvery = std::chrono::seconds(5);
constexpr auto kRefreshEvery = std::chrono::seconds(30);

std::string MacKeyText(uint64_t mac) {
  MacBytes bytes;
  std::memcpy(bytes.data(), &mac, 6);
  return MacText(bytes);
}

}  // namespace

VxlanTunnels::~VxlanTunnels() {
  for (auto& [addr, fd] : quiet_sockets_) close(fd);
}

absl::Status VxlanTunnels::EnsureUnderlay() {
  if (underlay_ != nullptr) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<Underlay>> underlay = Underlay::Open();
  if (!underlay.ok()) return underlay.status();
  underlay_ = std::move(*underlay);
  return absl::OkStatus();
}

absl::Status VxlanTunnels::Attach(int slot, const Port& port, const UplinkView& uplink) {
  const PortSpec& spec = port.spec();
  std::optional<VxlanDevice> device = VxlanDevice::Of(port.eth_port());
  if (!device) return absl::InternalError(absl::StrCat("port '", spec.name, "': not a VXLAN device"));
  if (uplink.slot < 0) {
    return absl::NotFoundError(absl::StrCat("port '", spec.name, "': no uplink port named '",
                                            ReadVxlanKeys(spec).uplink, "'"));
  }
  if (spec.mtu + kVxlanOverhead > uplink.mtu) {
    return absl::FailedPreconditionError(absl::StrCat(
        "port '", spec.name, "': mtu ", spec.mtu, " and ", kVxlanOverhead,
        " bytes of VXLAN headers exceed uplink '", uplink.name, "''s MTU ", uplink.mtu,
        ": give mtu=", uplink.mtu - kVxlanOverhead, " or less (or raise the uplink's)"));
  }
  Tunnel t(*device);
  t.slot = slot;
  t.name = spec.name;
  t.vlan = spec.access_vlan;
  t.keys = ReadVxlanKeys(spec);
  t.uplink = uplink;
  absl::MutexLock lock(&mu_);
  for (const auto& [other_slot, other] : tunnels_) {
    if (other.keys.vni == t.keys.vni && other.keys.local == t.keys.local) {
      return absl::AlreadyExistsError(absl::StrCat("port '", spec.name, "': VNI ", t.keys.vni,
                                                   " at ", Ipv4Text(t.keys.local),
                                                   " is port '", other.name, "''s already"));
    }
  }
  if (absl::Status status = EnsureUnderlay(); !status.ok()) return status;
  absl::StatusOr<LocalInterface> local = underlay_->FindLocal(t.keys.local);
  if (!local.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("port '", spec.name, "': local ",
                                                      local.status().message()));
  }
  t.local = *local;
  auto demux_it = demuxes_.find(uplink.eth_port);
  if (demux_it == demuxes_.end()) {
    absl::StatusOr<std::unique_ptr<UplinkDemux>> demux =
        UplinkDemux::Install(uplink.eth_port, uplink.nb_rxq, grace_);
    if (!demux.ok()) return demux.status();
    demux_it = demuxes_.emplace(uplink.eth_port, Demux{std::move(*demux), uplink.name, 0}).first;
  }
  if (t.keys.evpn) {
    if (evpn_events_ == nullptr) {
      absl::StatusOr<std::unique_ptr<RtNetlink>> events =
          RtNetlink::Open(1u << (RTNLGRP_NEIGH - 1));
      if (!events.ok()) return events.status();
      evpn_events_ = std::move(*events);
    }
    absl::StatusOr<std::unique_ptr<EvpnShadow>> shadow =
        EvpnShadow::Create(t.keys.vni, t.keys.local);
    if (!shadow.ok()) {
      return absl::InternalError(absl::StrCat("port '", spec.name, "': EVPN: ",
                                              shadow.status().message()));
    }
    t.evpn = std::move(*shadow);
  }
  for (in_addr_t remote : t.keys.remotes) AddVtep(t, remote, /*flood=*/true);
  t.device.AttachUplink({uplink.eth_port, uplink.nb_txq, uplink.locks});
  Resolve(t, /*all=*/true);
  PublishRoutes(t);
  ++demux_it->second.nb_tunnels;
  Tunnel& added = tunnels_.emplace(slot, std::move(t)).first->second;
  PublishDemux(uplink.eth_port);
  OpenQuietSocket(added.keys.local, added.keys.udp_port);
  Log("port '%s': VXLAN VNI %d in VLAN %d over '%s' from %s (%s %s), %d remote VTEP(s)%s%s",
      added.name, added.keys.vni, added.vlan, uplink.name, Ipv4Text(added.keys.local),
      added.local.name, MacText(added.local.mac), added.vteps.size(),
      added.keys.evpn ? ", EVPN through " : ", learning",
      added.keys.evpn ? added.evpn->bridge() : "");
  for (const Vtep& v : added.vteps) {
    if (!v.hop.resolved) {
      Log("port '%s': VTEP %s: %s (retried every second)", added.name, Ipv4Text(v.ip),
          v.hop.problem);
    }
  }
  return absl::OkStatus();
}

void VxlanTunnels::Detach(int slot) {
  absl::MutexLock lock(&mu_);
  auto it = tunnels_.find(slot);
  if (it == tunnels_.end()) return;
  const uint16_t uplink = it->second.uplink.eth_port;
  // No worker sends to the port or polls it any more (the bridge unpublished it first):
  // its routes and shadow VTEP go now; the demux, which may still hand it frames, after.
  it->second.device.PublishRoutes(nullptr);
  tunnels_.erase(it);
  auto demux = demuxes_.find(uplink);
  if (demux != demuxes_.end() && --demux->second.nb_tunnels == 0) {
    demuxes_.erase(demux);  // its destructor waits for the workers
  } else {
    PublishDemux(uplink);  // waits for the workers
  }
}

std::string VxlanTunnels::TunnelOver(int slot) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [s, t] : tunnels_) {
    if (t.uplink.slot == slot) return t.name;
  }
  return "";
}

void VxlanTunnels::PublishDemux(uint16_t uplink_eth) {
  std::vector<UplinkDemux::Tunnel> list;
  for (const auto& [slot, t] : tunnels_) {
    if (t.uplink.eth_port != uplink_eth) continue;
    list.push_back({t.keys.vni, t.keys.local, t.keys.udp_port, t.device});
  }
  demuxes_.at(uplink_eth).demux->Publish(list);
}

int VxlanTunnels::AddVtep(Tunnel& t, in_addr_t ip, bool flood) {
  for (size_t i = 0; i < t.vteps.size(); ++i) {
    if (t.vteps[i].ip == ip) {
      t.vteps[i].flood |= flood;
      return static_cast<int>(i);
    }
  }
  // A free id (a learned VTEP whose MACs all went), else a new one.
  for (size_t i = 0; i < t.vteps.size(); ++i) {
    if (t.vteps[i].ip == 0) {
      t.vteps[i] = {.ip = ip, .flood = flood, .learned = !flood, .hop = {}};
      return static_cast<int>(i);
    }
  }
  if (t.vteps.size() == kMaxVteps) return -1;
  t.vteps.push_back({.ip = ip, .flood = flood, .learned = !flood, .hop = {}});
  return static_cast<int>(t.vteps.size() - 1);
}

bool VxlanTunnels::Resolve(Tunnel& t, bool all) {
  bool changed = false;
  for (Vtep& v : t.vteps) {
    if (v.ip == 0 || (!all && v.hop.resolved)) continue;
    const NextHop hop = underlay_->Resolve(v.ip);
    if (hop.resolved != v.hop.resolved || hop.dst_mac != v.hop.dst_mac) {
      if (hop.resolved) {
        Log("port '%s': VTEP %s via %s (%s)", t.name, Ipv4Text(v.ip), Ipv4Text(hop.via),
            MacText(hop.dst_mac));
      } else if (v.hop.resolved) {
        Log("port '%s': VTEP %s: %s", t.name, Ipv4Text(v.ip), hop.problem);
      }
      changed = true;
    }
    v.hop = hop;
  }
  return changed;
}

void VxlanTunnels::PublishRoutes(Tunnel& t) {
  auto routes = std::make_unique<VxlanRoutes>();
  for (size_t id = 0; id < t.vteps.size(); ++id) {
    const Vtep& v = t.vteps[id];
    VtepRoute& r = routes->vteps[id];
    r.ip = v.ip;
    if (v.ip == 0) continue;
    r.resolved = v.hop.resolved;
    OuterAddresses a;
    a.src_mac = t.local.mac;
    a.dst_mac = v.hop.dst_mac;
    a.src_ip = t.keys.local;
    a.dst_ip = v.ip;
    a.udp_port = t.keys.udp_port;
    a.vni = t.keys.vni;
    r.header = BuildOuterTemplate(a);
    if (v.flood) routes->flood[routes->nb_flood++] = static_cast<uint16_t>(id);
  }
  const VxlanRoutes* old = t.device.PublishRoutes(routes.get());
  std::unique_ptr<VxlanRoutes> retired = std::move(t.routes);
  t.routes = std::move(routes);
  if (old != nullptr) grace_.WaitForReaders();  // then `retired` (== old) is freed
}

void VxlanTunnels::ApplyLearnNotes(Tunnel& t, Clock::time_point now) {
  LearnNote notes[kNotesPerPoll];
  const size_t n = t.device.DrainLearnNotes(notes, kNotesPerPoll);
  bool vteps_changed = false;
  for (size_t i = 0; i < n; ++i) {
    const size_t before = t.vteps.size();
    const int id = AddVtep(t, notes[i].vtep_ip, /*flood=*/false);
    if (id < 0) continue;  // no room for another VTEP: the MAC stays flooded
    if (t.vteps.size() != before || !t.vteps[id].hop.resolved) vteps_changed = true;
    if (!t.device.SetRemoteMac(notes[i].mac, static_cast<uint16_t>(id))) continue;  // full
    auto [it, fresh] = t.learned.insert_or_assign(notes[i].mac, now);
    (void)it;
    if (fresh) {
      Log("port '%s': remote MAC %s behind VTEP %s", t.name, MacKeyText(notes[i].mac),
          Ipv4Text(notes[i].vtep_ip));
    }
  }
  if (vteps_changed) {
    Resolve(t, /*all=*/false);
    PublishRoutes(t);
  }
}

void VxlanTunnels::AgeLearned(Tunnel& t, Clock::time_point now) {
  bool removed = false;
  for (auto it = t.learned.begin(); it != t.learned.end();) {
    if (now - it->second < kLearnedGrace ||
        fdb_.port_of(it->first | (uint64_t{t.vlan} << 48)) == t.slot) {
      ++it;
      continue;
    }
    t.device.RemoveRemoteMac(it->first);
    it = t.learned.erase(it);
    removed = true;
  }
  if (!removed) return;
  grace_.WaitForReaders();
  t.device.ReclaimRemoved();
}

void VxlanTunnels::Poll(Clock::time_point now) {
  absl::MutexLock lock(&mu_);
  if (tunnels_.empty()) return;
  const bool resolve = now >= next_resolve_;
  const bool full = now >= next_full_resolve_;
  const bool age = now >= next_age_;
  const bool evpn_read = (evpn_events_ != nullptr && EvpnEventsCame()) || now >= next_import_;
  for (auto& [slot, t] : tunnels_) {
    if (t.evpn != nullptr) {
      // Local first: a MAC that moved here is written before zebra's entries are read,
      // so that it does not read as remote still.
      PublishLocal(t);
      if (evpn_read) ImportRemote(t, now);
    } else {
      ApplyLearnNotes(t, now);
    }
    if ((resolve || full) && Resolve(t, full)) PublishRoutes(t);
    if (age && t.evpn == nullptr) AgeLearned(t, now);
  }
  if (evpn_read) next_import_ = now + kImportEvery;
  if (resolve) next_resolve_ = now + kResolveEvery;
  if (full) next_full_resolve_ = now + kFullResolveEvery;
  if (age) next_age_ = now + kAgeEvery;
}

bool VxlanTunnels::EvpnEventsCame() {
  bool came = false;
  auto any = [](const nlmsghdr* nlh, void* data) {
    const auto* nd = static_cast<const ndmsg*>(mnl_nlmsg_get_payload(nlh));
    if (nd->ndm_family == AF_BRIDGE) *static_cast<bool*>(data) = true;
    return MNL_CB_OK;
  };
  if (!evpn_events_->Drain(any, &came)) came = true;  // some lost: read anew
  return came;
}

void VxlanTunnels::PublishLocal(Tunnel& t) {
  const uint64_t version = fdb_.version();
  if (version == t.fdb_version) return;
  std::set<uint64_t> local;
  fdb_.for_each([&](const FdbEntryView& e) {
    if (KeyVlan(e.key) == t.vlan && e.port != t.slot) local.insert(e.key & 0xffffffffffff);
  });
  for (uint64_t mac : local) {
    if (t.published.contains(mac)) continue;
    if (absl::Status status = t.evpn->Publish(mac); !status.ok()) {
      Log("port '%s': EVPN: %s", t.name, status.message());
      return;  // tried again at the next change
    }
    t.published.insert(mac);
  }
  for (auto it = t.published.begin(); it != t.published.end();) {
    if (local.contains(*it)) {
      ++it;
      continue;
    }
    if (absl::Status status = t.evpn->Withdraw(*it); !status.ok()) {
      Log("port '%s': EVPN: %s", t.name, status.message());
    }
    it = t.published.erase(it);
  }
  t.fdb_version = version;
}

void VxlanTunnels::ImportRemote(Tunnel& t, Clock::time_point now) {
  absl::StatusOr<EvpnRemote> read = t.evpn->Read();
  if (!read.ok()) {
    Log("port '%s': EVPN: %s", t.name, read.status().message());
    return;
  }
  bool vteps_changed = false;
  // The flood list: exactly zebra's type-3 VTEPs.
  for (Vtep& v : t.vteps) {
    const bool flood =
        v.ip != 0 && std::find(read->flood.begin(), read->flood.end(), v.ip) != read->flood.end();
    vteps_changed |= flood != v.flood;
    v.flood = flood;
  }
  for (in_addr_t ip : read->flood) {
    const size_t before = t.vteps.size();
    if (AddVtep(t, ip, /*flood=*/true) >= 0 && t.vteps.size() != before) vteps_changed = true;
  }
  const uint64_t vlan_bits = uint64_t{t.vlan} << 48;
  const bool refresh = now >= next_refresh_;
  for (const auto& [mac, ip] : read->macs) {
    auto known = t.remote.find(mac);
    if (known == t.remote.end() || known->second != ip) {
      const size_t before = t.vteps.size();
      const int id = AddVtep(t, ip, /*flood=*/false);
      if (id < 0) continue;  // no room for another VTEP: the MAC stays flooded
      vteps_changed |= t.vteps.size() != before;
      t.device.SetRemoteMac(mac, static_cast<uint16_t>(id));
      t.remote[mac] = ip;
      fdb_.learn_remote(mac | vlan_bits, t.slot);
    } else if (refresh) {
      fdb_.learn_remote(mac | vlan_bits, t.slot);
    }
  }
  bool removed = false;
  for (auto it = t.remote.begin(); it != t.remote.end();) {
    if (read->macs.contains(it->first)) {
      ++it;
      continue;
    }
    t.device.RemoveRemoteMac(it->first);
    if (fdb_.port_of(it->first | vlan_bits) == t.slot) fdb_.remove(it->first | vlan_bits);
    it = t.remote.erase(it);
    removed = true;
  }
  if (refresh) next_refresh_ = now + kRefreshEvery;
  if (vteps_changed) {
    Resolve(t, /*all=*/false);
    PublishRoutes(t);
  }
  if (removed) {
    grace_.WaitForReaders();
    t.device.ReclaimRemoved();
  }
}

void VxlanTunnels::OpenQuietSocket(in_addr_t local, uint16_t port) {
  const auto key = std::make_pair(local, port);
  if (quiet_sockets_.contains(key)) return;
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  // Nothing is ever queued on it: a filter that keeps no byte of any datagram.
  sock_filter drop_all[] = {{BPF_RET | BPF_K, 0, 0, 0}};
  sock_fprog program{1, drop_all};
  setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = local;
  addr.sin_port = htons(port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Log("VXLAN: cannot bind UDP %s:%d (%s): if the kernel also receives the tunnel's frames "
        "it may answer them with ICMP port unreachable", Ipv4Text(local), port,
        std::strerror(errno));
    close(fd);
    return;
  }
  quiet_sockets_.emplace(key, fd);
}

VxlanTunnelsSnapshot VxlanTunnels::Snapshot() const {
  VxlanTunnelsSnapshot snap;
  absl::MutexLock lock(&mu_);
  for (const auto& [slot, t] : tunnels_) {
    VxlanSnapshot s;
    s.port = t.name;
    s.uplink = t.uplink.name;
    s.local = Ipv4Text(t.keys.local);
    s.local_iface = t.local.name;
    s.vni = t.keys.vni;
    s.vlan = t.vlan;
    s.udp_port = t.keys.udp_port;
    s.evpn = t.keys.evpn;
    s.remote_macs = t.device.nb_remote_macs();
    s.totals = t.device.TunnelSums();
    s.unknown_source = t.device.VtepSums(kMaxVteps);
    for (size_t id = 0; id < t.vteps.size(); ++id) {
      const Vtep& v = t.vteps[id];
      if (v.ip == 0) continue;
      VtepSnapshot vs;
      vs.ip = Ipv4Text(v.ip);
      vs.flood = v.flood;
      vs.resolved = v.hop.resolved;
      if (v.hop.via != 0) vs.next_hop = Ipv4Text(v.hop.via);
      if (v.hop.resolved) vs.next_hop_mac = MacText(v.hop.dst_mac);
      vs.problem = v.hop.problem;
      vs.totals = t.device.VtepSums(static_cast<uint16_t>(id));
      s.vteps.push_back(std::move(vs));
    }
    snap.tunnels.push_back(std::move(s));
  }
  for (const auto& [eth, d] : demuxes_) snap.uplinks.push_back({d.uplink, d.demux->Sums()});
  return snap;
}

}  // namespace hvswitch
