#include "ports/vxlan/vxlan_driver.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ports/spec_keys.h"
#include "ports/vxlan/vxlan_device.h"

namespace hvswitch {
namespace {


absl::StatusOr<in_addr_t> ParseIpv4(const PortSpec& spec, absl::string_view key,
                                    absl::string_view value) {
  in_addr addr{};
  const std::string text(value);
  if (inet_pton(AF_INET, text.c_str(), &addr) != 1 || addr.s_addr == 0 ||
      IN_MULTICAST(ntohl(addr.s_addr)) || addr.s_addr == INADDR_BROADCAST) {
    return SpecError(spec.name, absl::StrCat(key, " '", value, "' is not a unicast IPv4 "
                                             "address (IPv6 VTEPs are not supported)"));
  }
  return addr.s_addr;
}

std::string IpText(in_addr_t ip) {
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &ip, text, sizeof(text));
  return text;
}

absl::Status ApplyVni(absl::string_view value, PortSpec& spec) {
  return StoreSpecNumber(spec, "vni", value, "a VNI", 1, kMaxVni, 0);
}

absl::Status ApplyUplink(absl::string_view value, PortSpec& spec) {
  if (value.empty()) return SpecError(spec.name, "uplink= needs a port name");
  spec.driver_keys.Set("uplink", value);
  return absl::OkStatus();
}

absl::Status ApplyLocal(absl::string_view value, PortSpec& spec) {
  const absl::StatusOr<in_addr_t> ip = ParseIpv4(spec, "local", value);
  if (!ip.ok()) return ip.status();
  spec.driver_keys.Set("local", IpText(*ip));
  return absl::OkStatus();
}

absl::Status ApplyRemote(absl::string_view value, PortSpec& spec) {
  std::vector<std::string> ips;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    const absl::StatusOr<in_addr_t> ip = ParseIpv4(spec, "remote", item);
    if (!ip.ok()) return ip.status();
    const std::string text = IpText(*ip);
    if (std::find(ips.begin(), ips.end(), text) != ips.end()) {
      return SpecError(spec.name, absl::StrCat("remote ", text, " listed twice"));
    }
    ips.push_back(text);
  }
  if (ips.size() > kMaxVteps) {
    return SpecError(spec.name, absl::StrCat("remote= lists more than ", kMaxVteps, " VTEPs"));
  }
  spec.driver_keys.Set("remote", absl::StrJoin(ips, ","));
  return absl::OkStatus();
}

absl::Status ApplyUdpPort(absl::string_view value, PortSpec& spec) {
  return StoreSpecNumber(spec, "udp_port", value, "a UDP port", 1, 65535, kVxlanUdpPort);
}
absl::Status ApplyUdpCsum(absl::string_view value, PortSpec& spec) {
  return StoreSpecFlag(spec, "udp_csum", value);
}
absl::Status ApplyEvpn(absl::string_view value, PortSpec& spec) {
  return StoreSpecFlag(spec, "evpn", value);
}

constexpr SpecKey kKeys[] = {{"vni", ApplyVni},          {"uplink", ApplyUplink},
                             {"local", ApplyLocal},      {"remote", ApplyRemote},
                             {"udp_port", ApplyUdpPort}, {"udp_csum", ApplyUdpCsum},
                             {"evpn", ApplyEvpn},        {"queues", ApplyQueues}};

class Driver final : public PortDriver {
 public:
  absl::string_view type() const override { return "vxlan"; }
  absl::string_view usage() const override {
    return R"(  --port=NAME,type=vxlan,vni=V,vlan=N,uplink=PORT,local=IP[,remote=IP[,IP...]]
         [,udp_port=P][,udp_csum=1][,evpn=1]   (VXLAN VNI V over port PORT, carrying
                                                    VLAN N; local: this host's VTEP
                                                    address; remote: the flood list, or
                                                    evpn=1 for FRR's; also --vxlan=V,...)
)";
  }
  std::span<const SpecKey> keys() const override { return kKeys; }
  absl::Status Check(const PortSpec& spec, const KeysGiven& given) const override {
    for (absl::string_view key : {"vni", "uplink", "local"}) {
      if (!given.contains(key)) return SpecError(spec.name, absl::StrCat("missing ", key, "="));
    }
    if (spec.access_vlan == 0) {
      return SpecError(spec.name, "a vxlan port carries one VLAN: give vlan=N");
    }
    if (spec.driver_keys.Text("uplink") == spec.name) {
      return SpecError(spec.name, "a vxlan port cannot be its own uplink");
    }
    if (given.contains("evpn") && given.contains("remote") && spec.driver_keys.Flag("evpn")) {
      return SpecError(spec.name, "evpn=1 takes the flood list from FRR: no remote=");
    }
    return absl::OkStatus();
  }
  void AppendKeys(const PortSpec& spec, std::string& head, std::string&) const override {
    const DriverKeys& k = spec.driver_keys;
    absl::StrAppend(&head, ",vni=", k.Number("vni", 0), ",uplink=", k.Text("uplink"),
                    ",local=", k.Text("local"));
    if (k.Has("remote")) absl::StrAppend(&head, ",remote=", k.Text("remote"));
    if (k.Has("udp_port")) absl::StrAppend(&head, ",udp_port=", k.Number("udp_port", 0));
    if (k.Flag("udp_csum")) absl::StrAppend(&head, ",udp_csum=1");
    if (k.Flag("evpn")) absl::StrAppend(&head, ",evpn=1");
    if (QueueCount(spec) != 1) absl::StrAppend(&head, ",queues=", QueueCount(spec));
  }
  PortRole role() const override { return PortRole::kDevice; }
  PortTraits Traits(const PortSpec& spec) const override {
    PortTraits traits;
    traits.endpoint = absl::StrCat("vni ", spec.driver_keys.Number("vni", 0), " via ",
                                   spec.driver_keys.Text("uplink"));
    traits.root_only = "type=vxlan ports send on the uplink's wire as this host: they need root";
    return traits;
  }
  std::string Devargs(const PortSpec& spec, int index) const override {
    const VxlanKeys keys = ReadVxlanKeys(spec);
    return absl::StrCat(VxlanPmdName(), index, ",vni=", keys.vni,
                        ",udp_csum=", keys.udp_csum ? 1 : 0, ",learn=", keys.evpn ? 0 : 1);
  }
  PortQueues Queues(const PortSpec& spec, uint16_t nb_workers) const override {
    PortQueues queues;
    queues.nb_rxq = QueueCount(spec);
    queues.nb_txq = nb_workers;
    return queues;
  }
  // The tunnel completes and segments nothing: the bridge settles a guest's offload
  // requests (checksums, super-frames) before a frame reaches it, for its MTU.
  PeerOffloads Offloads(const Port&) const override { return {}; }
  bool HasQueueStats(const Port&) const override { return false; }
};

constinit const Driver kDriver;

}  // namespace

const PortDriver& VxlanDriver() { return kDriver; }

VxlanKeys ReadVxlanKeys(const PortSpec& spec) {
  const DriverKeys& k = spec.driver_keys;
  VxlanKeys keys;
  keys.vni = k.Number("vni", 0);
  keys.uplink = std::string(k.Text("uplink"));
  in_addr addr{};
  const std::string local(k.Text("local"));
  if (inet_pton(AF_INET, local.c_str(), &addr) == 1) keys.local = addr.s_addr;
  for (absl::string_view item : absl::StrSplit(k.Text("remote"), ',', absl::SkipEmpty())) {
    const std::string text(item);
    if (inet_pton(AF_INET, text.c_str(), &addr) == 1) keys.remotes.push_back(addr.s_addr);
  }
  keys.udp_port = static_cast<uint16_t>(k.Number("udp_port", kVxlanUdpPort));
  keys.udp_csum = k.Flag("udp_csum");
  keys.evpn = k.Flag("evpn");
  return keys;
}

absl::StatusOr<PortSpec> ParseVxlanSpec(absl::string_view text) {
  const std::pair<absl::string_view, absl::string_view> vni_rest =
      absl::StrSplit(text, absl::MaxSplits(',', 1));
  uint32_t vni = 0;
  if (!absl::SimpleAtoi(vni_rest.first, &vni) || vni == 0 || vni > kMaxVni) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vxlan '", text, "': starts with the VNI (1-", kMaxVni, "), then KEY=VALUE,..."));
  }
  return ParsePortSpec(absl::StrCat(kVxlanPortPrefix, vni, ",type=vxlan,vni=", vni,
                                    vni_rest.second.empty() ? "" : ",", vni_rest.second));
}

}  // namespace hvswitch
