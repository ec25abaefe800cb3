#include "switch/control/evpn_shadow.h"

#include <fcntl.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

absl::Status Failed(absl::string_view what, const std::string& name, int err) {
  return absl::InternalError(absl::StrCat(what, " ", name, ": ", std::strerror(err)));
}

// A tap that persists without an owner: a bridge port no frame ever reaches.
int MakePersistentTap(const std::string& name) {
  const int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno;
  ifreq ifr{};
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  int err = 0;
  if (ioctl(fd, TUNSETIFF, &ifr) != 0 || ioctl(fd, TUNSETPERSIST, 1) != 0) err = errno;
  close(fd);
  return err;
}

struct DumpState {
  int vxlan_ifindex;
  std::map<uint64_t, in_addr_t> self;  // the VXLAN device's own entries: MAC -> DST
  std::vector<uint64_t> bridged;       // bridge entries on the VXLAN port
  EvpnRemote out;
};

int OnFdbEntry(const nlmsghdr* nlh, void* data) {
  auto& s = *static_cast<DumpState*>(data);
  if (nlh->nlmsg_type != RTM_NEWNEIGH) return MNL_CB_OK;
  const auto* nd = static_cast<const ndmsg*>(mnl_nlmsg_get_payload(nlh));
  if (nd->ndm_family != AF_BRIDGE || nd->ndm_ifindex != s.vxlan_ifindex) return MNL_CB_OK;
  const nlattr* tb[NDA_MAX + 1] = {};
  AttrTable table{tb, NDA_MAX};
  mnl_attr_parse(nlh, sizeof(*nd), CollectAttr, &table);
  if (tb[NDA_LLADDR] == nullptr || mnl_attr_get_payload_len(tb[NDA_LLADDR]) != 6) {
    return MNL_CB_OK;
  }
  uint64_t mac = 0;
  std::memcpy(&mac, mnl_attr_get_payload(tb[NDA_LLADDR]), 6);
  const bool has_dst = tb[NDA_DST] != nullptr && mnl_attr_get_payload_len(tb[NDA_DST]) == 4;
  const in_addr_t dst = has_dst ? mnl_attr_get_u32(tb[NDA_DST]) : 0;
  if (mac == 0) {
    if (has_dst) s.out.flood.push_back(dst);  // type-3 (appended: one per VTEP)
  } else if (has_dst) {
    s.self[mac] = dst;
  } else if (!(nd->ndm_state & NUD_PERMANENT)) {
    // A bridge entry on the VXLAN port (the device's own MAC is a permanent one): where
    // the kernel bridge forwards the MAC, so where it is. zebra may leave a stale `self`
    // entry behind when a MAC moves back here: only the bridge entry counts.
    s.bridged.push_back(mac);
  }
  return MNL_CB_OK;
}

}  // namespace

EvpnShadow::EvpnShadow(std::unique_ptr<RtNetlink> nl, uint32_t vni)
    : nl_(std::move(nl)), vni_(vni), bridge_(absl::StrCat("hvsbr", vni)), vxlan_(absl::StrCat("hvsvx", vni)),
      tap_(absl::StrCat("hvsl", vni)) {}

absl::StatusOr<std::unique_ptr<EvpnShadow>> EvpnShadow::Create(uint32_t vni, in_addr_t local) {
  absl::StatusOr<std::unique_ptr<RtNetlink>> nl = RtNetlink::Open();
  if (!nl.ok()) return nl.status();
  std::unique_ptr<EvpnShadow> shadow(new EvpnShadow(std::move(*nl), vni));
  // Left over by an earlier run that did not end cleanly: made anew.
  for (const std::string& name : {shadow->tap_, shadow->vxlan_, shadow->bridge_}) {
    shadow->DeleteLink(name);
  }
  if (absl::Status status = shadow->Build(local); !status.ok()) return status;
  return shadow;
}

EvpnShadow::~EvpnShadow() {
  for (const std::string& name : {tap_, vxlan_, bridge_}) DeleteLink(name);
}

void EvpnShadow::DeleteLink(const std::string& name) {
  nlmsghdr* nlh = nl_->Start(RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK);
  auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, name.c_str());
  nl_->Run();  // ENODEV: there was none
}

absl::Status EvpnShadow::Build(in_addr_t local) {
  // The bridge.
  nlmsghdr* nlh = nl_->Start(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
  auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, bridge_.c_str());
  nlattr* info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
  mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
  mnl_attr_nest_end(nlh, info);
  if (const int err = nl_->Run(); err != 0) return Failed("creating bridge", bridge_, err);
  bridge_ifindex_ = static_cast<int>(if_nametoindex(bridge_.c_str()));

  // The VXLAN device, a port of the bridge.
  nlh = nl_->Start(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
  ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, vxlan_.c_str());
  mnl_attr_put_u32(nlh, IFLA_MASTER, static_cast<uint32_t>(bridge_ifindex_));
  info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
  mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
  nlattr* data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
  mnl_attr_put_u32(nlh, IFLA_VXLAN_ID, vni_);
  mnl_attr_put_u32(nlh, IFLA_VXLAN_LOCAL, local);
  mnl_attr_put_u16(nlh, IFLA_VXLAN_PORT, htons(kShadowUdpPort));
  mnl_attr_put_u8(nlh, IFLA_VXLAN_LEARNING, 0);
  mnl_attr_nest_end(nlh, data);
  mnl_attr_nest_end(nlh, info);
  if (const int err = nl_->Run(); err != 0) return Failed("creating VXLAN device", vxlan_, err);
  vxlan_ifindex_ = static_cast<int>(if_nametoindex(vxlan_.c_str()));

  // The tap local MACs are written on.
  if (const int err = MakePersistentTap(tap_); err != 0) return Failed("creating tap", tap_, err);
  tap_ifindex_ = static_cast<int>(if_nametoindex(tap_.c_str()));

  for (int ifindex : {vxlan_ifindex_, tap_ifindex_, bridge_ifindex_}) {
    nlh = nl_->Start(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
    ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    ifi->ifi_flags = IFF_UP;
    ifi->ifi_change = IFF_UP;
    if (ifindex == tap_ifindex_) mnl_attr_put_u32(nlh, IFLA_MASTER, static_cast<uint32_t>(bridge_ifindex_));
    if (const int err = nl_->Run(); err != 0) return Failed("setting up", std::to_string(ifindex), err);
  }
  // As bridge ports: neither learns (the tap carries no frame; the VXLAN port's MACs are
  // zebra's), and the VXLAN port suppresses ARP/ND as FRR expects of an EVPN VTEP.
  for (int ifindex : {vxlan_ifindex_, tap_ifindex_}) {
    nlh = nl_->Start(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK);
    ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
    ifi->ifi_family = AF_BRIDGE;
    ifi->ifi_index = ifindex;
    nlattr* protinfo = mnl_attr_nest_start(nlh, IFLA_PROTINFO);
    mnl_attr_put_u8(nlh, IFLA_BRPORT_LEARNING, 0);
    if (ifindex == vxlan_ifindex_) mnl_attr_put_u8(nlh, IFLA_BRPORT_NEIGH_SUPPRESS, 1);
    mnl_attr_nest_end(nlh, protinfo);
    if (const int err = nl_->Run(); err != 0) return Failed("bridge port flags of", std::to_string(ifindex), err);
  }
  return absl::OkStatus();
}

int EvpnShadow::Neigh(uint16_t type, uint16_t flags, uint64_t mac) {
  nlmsghdr* nlh = nl_->Start(type, NLM_F_REQUEST | NLM_F_ACK | flags);
  auto* nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = AF_BRIDGE;
  nd->ndm_ifindex = tap_ifindex_;
  nd->ndm_state = NUD_NOARP;  // static: the kernel never ages it; hvswitch owns its life
  nd->ndm_flags = NTF_MASTER;
  mnl_attr_put(nlh, NDA_LLADDR, 6, &mac);
  return nl_->Run();
}

absl::Status EvpnShadow::Publish(uint64_t mac) {
  // Replace: the MAC may be a remote one now (it moved here).
  const int err = Neigh(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, mac);
  return err == 0 ? absl::OkStatus() : Failed("writing a MAC on", tap_, err);
}

absl::Status EvpnShadow::Withdraw(uint64_t mac) {
  const int err = Neigh(RTM_DELNEIGH, 0, mac);
  // ENOENT: zebra replaced it already (the MAC moved to another VTEP).
  return err == 0 || err == ENOENT ? absl::OkStatus() : Failed("removing a MAC from", tap_, err);
}

absl::StatusOr<EvpnRemote> EvpnShadow::Read() {
  nlmsghdr* nlh = nl_->Start(RTM_GETNEIGH, NLM_F_REQUEST | NLM_F_DUMP);
  auto* nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = AF_BRIDGE;
  DumpState state{.vxlan_ifindex = vxlan_ifindex_, .self = {}, .bridged = {}, .out = {}};
  if (const int err = nl_->Run(OnFdbEntry, &state); err != 0) {
    return Failed("reading the FDB of", vxlan_, err);
  }
  for (uint64_t mac : state.bridged) {
    auto it = state.self.find(mac);
    if (it != state.self.end()) state.out.macs.emplace(mac, it->second);
  }
  return std::move(state.out);
}

}  // namespace hvswitch
