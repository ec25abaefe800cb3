#include "ports/bond/bond_driver.h"

#include <rte_eth_bond.h>
#include <rte_eth_bond_8023ad.h>
#include <rte_ethdev.h>

#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ports/bond/bond_members.h"
#include "ports/dpdk/dpdk_driver.h"
#include "ports/port.h"
#include "ports/spec_keys.h"

namespace hvswitch {
namespace {

// The names operators know from Linux bonding and OVS, and DPDK's numbers for them.
struct Mode {
  absl::string_view name;
  uint8_t dpdk;
};
constexpr std::array<Mode, 3> kModes = {{{"active-backup", BONDING_MODE_ACTIVE_BACKUP},
                                         {"802.3ad", BONDING_MODE_8023AD},
                                         {"balance-xor", BONDING_MODE_BALANCE}}};
constexpr absl::string_view kDefaultMode = "active-backup";
// net_bonding's xmit_policy values; l2 is its and Linux's default.
constexpr std::array<absl::string_view, 3> kHashes = {"l2", "l23", "l34"};
constexpr absl::string_view kDefaultHash = "l2";
constexpr size_t kMaxMembers = 8;
constexpr absl::string_view kSharedQueues =
    "802.3ad: LACP through the data queues (the members cannot steer it to queues of its "
    "own)";

absl::string_view ModeText(const PortSpec& spec) {
  return spec.driver_keys.Text("mode", kDefaultMode);
}
absl::string_view HashText(const PortSpec& spec) {
  return spec.driver_keys.Text("hash", kDefaultHash);
}
bool Lacp(const PortSpec& spec) { return ModeText(spec) == "802.3ad"; }

// A value from a fixed list, its default stored as not given.
template <size_t N>
absl::Status StoreChoice(PortSpec& spec, absl::string_view key, absl::string_view value,
                         const std::array<absl::string_view, N>& choices,
                         absl::string_view fallback) {
  for (absl::string_view choice : choices) {
    if (value != choice) continue;
    if (value == fallback) {
      spec.driver_keys.Erase(key);
    } else {
      spec.driver_keys.Set(key, value);
    }
    return absl::OkStatus();
  }
  return SpecError(spec.name, absl::StrCat(key, " must be ", absl::StrJoin(choices, ", ")));
}

absl::Status ApplyMode(absl::string_view value, PortSpec& spec) {
  std::array<absl::string_view, kModes.size()> names;
  for (size_t i = 0; i < kModes.size(); ++i) names[i] = kModes[i].name;
  return StoreChoice(spec, "mode", value, names, kDefaultMode);
}
absl::Status ApplyHash(absl::string_view value, PortSpec& spec) {
  return StoreChoice(spec, "hash", value, kHashes, kDefaultHash);
}
// members=DEVARGS[;DEVARGS...]: device strings have commas of their own.
absl::Status ApplyMembers(absl::string_view value, PortSpec& spec) {
  spec.driver_keys.Set("members", value);
  return absl::OkStatus();
}
std::vector<std::string> Members(const PortSpec& spec) {
  return absl::StrSplit(spec.driver_keys.Text("members"), ';');
}
// A member's ethdev name: the vdev's name, or the full PCI address.
std::string MemberName(const std::string& devargs) {
  std::string name = devargs.substr(0, devargs.find(','));
  if (IsPciDevargs(devargs) && name.size() == 7) name = "0000:" + name;
  return name;
}

constexpr SpecKey kKeys[] = {{"mode", ApplyMode},
                             {"hash", ApplyHash},
                             {"queues", ApplyQueues},
                             {"members", ApplyMembers, /*rest_of_line=*/true}};

class Driver final : public PortDriver {
 public:
  absl::string_view type() const override { return "bond"; }
  absl::string_view usage() const override {
    return R"(  --port=NAME,type=bond[,mode=active-backup|802.3ad|balance-xor][,hash=l2|l23|l34]
         [,queues=N],members=DEVARGS;DEVARGS[;...]  (members last, 2-8 DPDK device
                                                    strings; mode default active-backup,
                                                    hash (802.3ad, balance-xor) l2)
)";
  }
  std::span<const SpecKey> keys() const override { return kKeys; }
  absl::Status Check(const PortSpec& spec, const KeysGiven& given) const override {
    if (!given.contains("members")) {
      return SpecError(spec.name, "missing members= (DPDK device strings separated by ';')");
    }
    const std::vector<std::string> members = Members(spec);
    if (members.size() < 2 || members.size() > kMaxMembers) {
      return SpecError(spec.name, absl::StrCat("a bond needs 2 to ", kMaxMembers,
                                               " members (separated by ';')"));
    }
    std::vector<std::string> names;
    for (const std::string& member : members) {
      const std::string name = MemberName(member);
      if (name.empty()) return SpecError(spec.name, "an empty member in members=");
      for (const std::string& seen : names) {
        if (seen == name) {
          return SpecError(spec.name, absl::StrCat("member '", name, "' given twice"));
        }
      }
      names.push_back(name);
    }
    if (given.contains("hash") && ModeText(spec) == "active-backup") {
      return SpecError(spec.name, "hash= does not apply to mode=active-backup");
    }
    return absl::OkStatus();
  }
  // members= takes the rest of the line: last.
  void AppendKeys(const PortSpec& spec, std::string& head, std::string& tail) const override {
    if (spec.driver_keys.Has("mode")) absl::StrAppend(&head, ",mode=", ModeText(spec));
    if (spec.driver_keys.Has("hash")) absl::StrAppend(&head, ",hash=", HashText(spec));
    if (QueueCount(spec) != 1) absl::StrAppend(&tail, ",queues=", QueueCount(spec));
    absl::StrAppend(&tail, ",members=", spec.driver_keys.Text("members"));
  }
  PortRole role() const override { return PortRole::kDevice; }
  PortTraits Traits(const PortSpec& spec) const override {
    PortTraits traits;
    traits.endpoint = absl::StrJoin(Members(spec), ";");
    traits.root_only = "type=bond ports (devices) need root; the --ctl_group may manage "
                       "vhost-user and memif ports";
    traits.fills_rx_rings = true;
    return traits;
  }
  // PCI members are probed by the EAL, from its allow-list; vdevs are hot-plugged.
  void AddEalNeeds(std::span<const PortSpec* const> mine, EalNeeds& needs) const override {
    for (const PortSpec* spec : mine) {
      for (const std::string& member : Members(*spec)) {
        if (IsPciDevargs(member)) needs.pci_allow.push_back(member);
      }
    }
  }

  std::vector<std::string> MemberDevargs(const PortSpec& spec) const override {
    return Members(spec);
  }
  std::string Devargs(const PortSpec& spec, int index) const override {
    uint8_t mode = BONDING_MODE_ACTIVE_BACKUP;
    for (const Mode& m : kModes) {
      if (m.name == ModeText(spec)) mode = m.dpdk;
    }
    std::string devargs = absl::StrCat("net_bonding_hvs", index, ",mode=", mode);
    if (mode != BONDING_MODE_ACTIVE_BACKUP) {
      absl::StrAppend(&devargs, ",xmit_policy=", HashText(spec));
    }
    for (const std::string& member : Members(spec)) {
      absl::StrAppend(&devargs, ",slave=", MemberName(member));
    }
    return devargs;
  }
  PortQueues Queues(const PortSpec& spec, uint16_t nb_workers) const override {
    PortQueues queues;
    queues.nb_rxq = QueueCount(spec);
    queues.nb_txq = nb_workers;
    return queues;
  }
  // 802.3ad: LACPDUs on a queue pair of their own where every member can steer them there
  // (rte_flow), so that they never wait behind data; else the library sends them from the
  // workers' transmit calls and takes them out of their receive calls.
  std::string Prepare(const PortSpec& spec, uint16_t eth_port) const override {
    if (!Lacp(spec)) return {};
    if (rte_eth_bond_8023ad_dedicated_queues_enable(eth_port) == 0) {
      return "802.3ad: LACP on dedicated queues of the members";
    }
    return std::string(kSharedQueues);
  }
  // The library's check at enable time looks at no member (they join when the bond
  // starts): their configuration (a second queue pair) or their start (the flow rules)
  // finds out.
  std::optional<std::string> Unprepare(const PortSpec& spec, uint16_t eth_port) const override {
    if (!Lacp(spec) || rte_eth_bond_8023ad_dedicated_queues_disable(eth_port) != 0) {
      return std::nullopt;
    }
    return std::string(kSharedQueues);
  }
  // What every member does (net_bonding offers the intersection).
  DeviceSetup Configure(const PortSpec& spec, const rte_eth_dev_info& info,
                        rte_eth_conf& conf) const override {
    DeviceSetup setup = NicOffloadSetup(info, conf);
    setup.rss_required = true;
    for (const std::string& member : Members(spec)) {
      uint16_t id = 0;
      rte_eth_dev_info member_info{};
      if (rte_eth_dev_get_port_by_name(MemberName(member).c_str(), &id) != 0 ||
          rte_eth_dev_info_get(id, &member_info) != 0) {
        continue;
      }
      // net_af_packet's link is up from its start to its stop, whatever the interface's.
      if (absl::string_view(member_info.driver_name) == "net_af_packet") {
        setup.caveat = absl::StrCat(
            "net_af_packet members report no link change (the bond fails over only when "
            "LACP times out, never in active-backup or balance-xor): use "
            "net_hvs_packet_NAME,iface=IFACE members instead; ",
            DeviceCaveat(member_info.driver_name));
      }
    }
    return setup;
  }
  DatapathFlags Flags(const PortSpec& spec, const DeviceSetup& setup) const override {
    DatapathFlags flags;
    flags.tx_prepare = setup.nic.csum || setup.nic.tso4;
    flags.rx_backpressure = true;  // the members' rings and queues
    // Without dedicated queues the LACPDUs the library made wait for a transmit call.
    flags.tx_each_round = Lacp(spec);
    return flags;
  }
  std::optional<BondState> Bond(const Port& port) const override {
    BondState state;
    state.mode = std::string(ModeText(port.spec()));
    state.hash = Lacp(port.spec()) || ModeText(port.spec()) == "balance-xor"
                     ? std::string(HashText(port.spec()))
                     : "";
    state.members = ReadBondMembers(port.eth_port());
    return state;
  }
};

// Constant-initialised: valid before any static constructor runs.
constinit const Driver kDriver;

}  // namespace

const PortDriver& BondDriver() { return kDriver; }

}  // namespace hvswitch
