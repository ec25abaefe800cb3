#include "switch/control/underlay.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hvswitch {
namespace {

struct AddrQuery {
  in_addr_t want = 0;
  int ifindex = 0;
};

int OnAddr(const nlmsghdr* nlh, void* data) {
  auto& q = *static_cast<AddrQuery*>(data);
  const auto* ifa = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* tb[IFA_MAX + 1] = {};
  AttrTable table{tb, IFA_MAX};
  mnl_attr_parse(nlh, sizeof(*ifa), CollectAttr, &table);
  const nlattr* addr = tb[IFA_LOCAL] != nullptr ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
  if (ifa->ifa_family == AF_INET && addr != nullptr &&
      mnl_attr_get_payload_len(addr) == sizeof(in_addr_t) &&
      *static_cast<const in_addr_t*>(mnl_attr_get_payload(addr)) == q.want && q.ifindex == 0) {
    q.ifindex = static_cast<int>(ifa->ifa_index);
  }
  return MNL_CB_OK;
}

int OnLink(const nlmsghdr* nlh, void* data) {
  auto& out = *static_cast<LocalInterface*>(data);
  const nlattr* tb[IFLA_MAX + 1] = {};
  AttrTable table{tb, IFLA_MAX};
  mnl_attr_parse(nlh, sizeof(ifinfomsg), CollectAttr, &table);
  if (tb[IFLA_ADDRESS] != nullptr && mnl_attr_get_payload_len(tb[IFLA_ADDRESS]) == 6) {
    std::memcpy(out.mac.data(), mnl_attr_get_payload(tb[IFLA_ADDRESS]), 6);
  }
  if (tb[IFLA_IFNAME] != nullptr) out.name = mnl_attr_get_str(tb[IFLA_IFNAME]);
  return MNL_CB_OK;
}

int OnRoute(const nlmsghdr* nlh, void* data) {
  auto& hop = *static_cast<NextHop*>(data);
  const auto* rtm = static_cast<const rtmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* tb[RTA_MAX + 1] = {};
  AttrTable table{tb, RTA_MAX};
  mnl_attr_parse(nlh, sizeof(*rtm), CollectAttr, &table);
  if (rtm->rtm_type != RTN_UNICAST) {
    hop.problem = "no unicast route";
    return MNL_CB_OK;
  }
  if (tb[RTA_OIF] != nullptr) hop.ifindex = static_cast<int>(mnl_attr_get_u32(tb[RTA_OIF]));
  if (tb[RTA_GATEWAY] != nullptr && mnl_attr_get_payload_len(tb[RTA_GATEWAY]) == 4) {
    hop.via = mnl_attr_get_u32(tb[RTA_GATEWAY]);
  }
  return MNL_CB_OK;
}

int OnNeigh(const nlmsghdr* nlh, void* data) {
  auto& hop = *static_cast<NextHop*>(data);
  const auto* nd = static_cast<const ndmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* tb[NDA_MAX + 1] = {};
  AttrTable table{tb, NDA_MAX};
  mnl_attr_parse(nlh, sizeof(*nd), CollectAttr, &table);
  // STALE, DELAY and PROBE still name the MAC the kernel itself would use.
  constexpr uint16_t kUsable =
      NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP;
  if ((nd->ndm_state & kUsable) && tb[NDA_LLADDR] != nullptr &&
      mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6) {
    std::memcpy(hop.dst_mac.data(), mnl_attr_get_payload(tb[NDA_LLADDR]), 6);
    hop.resolved = true;
  } else {
    hop.problem = (nd->ndm_state & NUD_FAILED) ? "neighbour unreachable (ARP failed)"
                                               : "neighbour not resolved yet";
  }
  return MNL_CB_OK;
}

}  // namespace

std::string Ipv4Text(in_addr_t ip) {
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &ip, text, sizeof(text));
  return text;
}

std::string MacText(const MacBytes& m) {
  return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

absl::StatusOr<std::unique_ptr<Underlay>> Underlay::Open() {
  absl::StatusOr<std::unique_ptr<RtNetlink>> nl = RtNetlink::Open();
  if (!nl.ok()) return nl.status();
  return std::unique_ptr<Underlay>(new Underlay(std::move(*nl)));
}

absl::StatusOr<LocalInterface> Underlay::FindLocal(in_addr_t local) {
  nlmsghdr* nlh = nl_->Start(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP);
  auto* ifa = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifaddrmsg)));
  ifa->ifa_family = AF_INET;
  AddrQuery query{local, 0};
  if (const int err = nl_->Run(OnAddr, &query); err != 0) {
    return absl::InternalError(absl::StrCat("listing addresses: ", std::strerror(err)));
  }
  if (query.ifindex == 0) {
    return absl::NotFoundError(absl::StrCat(
        Ipv4Text(local), " is on no interface of hvswitch's network namespace (the VTEP "
        "address must be, so that the kernel routes and resolves the underlay)"));
  }
  LocalInterface out;
  out.ifindex = query.ifindex;
  nlh = nl_->Start(RTM_GETLINK, NLM_F_REQUEST);
  auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = query.ifindex;
  if (const int err = nl_->Run(OnLink, &out); err != 0) {
    return absl::InternalError(absl::StrCat("reading interface ", query.ifindex, ": ",
                                            std::strerror(err)));
  }
  return out;
}

NextHop Underlay::Resolve(in_addr_t remote) {
  NextHop hop;
  nlmsghdr* nlh = nl_->Start(RTM_GETROUTE, NLM_F_REQUEST);
  auto* rtm = static_cast<rtmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(rtmsg)));
  rtm->rtm_family = AF_INET;
  rtm->rtm_dst_len = 32;
  mnl_attr_put_u32(nlh, RTA_DST, remote);
  if (const int err = nl_->Run(OnRoute, &hop); err != 0 || hop.ifindex == 0) {
    hop.problem = err != 0 ? absl::StrCat("no route (", std::strerror(err), ")")
                           : (hop.problem.empty() ? "no route" : hop.problem);
    return hop;
  }
  if (hop.via == 0) hop.via = remote;
  nlh = nl_->Start(RTM_GETNEIGH, NLM_F_REQUEST);
  auto* nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = AF_INET;
  nd->ndm_ifindex = hop.ifindex;
  mnl_attr_put_u32(nlh, NDA_DST, hop.via);
  const int err = nl_->Run(OnNeigh, &hop);
  if (hop.resolved) return hop;
  if (err != 0 && hop.problem.empty()) hop.problem = "neighbour not resolved yet";
  // NTF_USE: the kernel resolves it as if it had a packet to send (an ARP request).
  nlh = nl_->Start(RTM_NEWNEIGH, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK);
  nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = AF_INET;
  nd->ndm_ifindex = hop.ifindex;
  nd->ndm_flags = NTF_USE;
  nd->ndm_state = NUD_NONE;
  mnl_attr_put_u32(nlh, NDA_DST, hop.via);
  nl_->Run();
  return hop;
}

}  // namespace hvswitch
