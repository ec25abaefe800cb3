#include "switch/control/underlay.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hvswitch {
namespace {

constexpr size_t kBufferSize = 1 << 16;  // MNL_SOCKET_BUFFER_SIZE is at most 8 KB

struct AddrQuery {
  in_addr_t want = 0;
  int ifindex = 0;
};

int AddrAttr(const nlattr* attr, void* data) {
  auto** tb = static_cast<const nlattr**>(data);
  if (mnl_attr_type_valid(attr, IFA_MAX) > 0) tb[mnl_attr_get_type(attr)] = attr;
  return MNL_CB_OK;
}

int OnAddr(const nlmsghdr* nlh, void* data) {
  auto& q = *static_cast<AddrQuery*>(data);
  const auto* ifa = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* tb[IFA_MAX + 1] = {};
  mnl_attr_parse(nlh, sizeof(*ifa), AddrAttr, tb);
  const nlattr* addr = tb[IFA_LOCAL] != nullptr ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
  if (ifa->ifa_family == AF_INET && addr != nullptr &&
      mnl_attr_get_payload_len(addr) == sizeof(in_addr_t) &&
      *static_cast<const in_addr_t*>(mnl_attr_get_payload(addr)) == q.want && q.ifindex == 0) {
    q.ifindex = static_cast<int>(ifa->ifa_index);
  }
  return MNL_CB_OK;
}

int LinkAttr(const nlattr* attr, void* data) {
  auto** tb = static_cast<const nlattr**>(data);
  if (mnl_attr_type_valid(attr, IFLA_MAX) > 0) tb[mnl_attr_get_type(attr)] = attr;
  return MNL_CB_OK;
}

int OnLink(const nlmsghdr* nlh, void* data) {
  auto& out = *static_cast<LocalInterface*>(data);
  const nlattr* tb[IFLA_MAX + 1] = {};
  mnl_attr_parse(nlh, sizeof(ifinfomsg), LinkAttr, tb);
  if (tb[IFLA_ADDRESS] != nullptr && mnl_attr_get_payload_len(tb[IFLA_ADDRESS]) == 6) {
    std::memcpy(out.mac.data(), mnl_attr_get_payload(tb[IFLA_ADDRESS]), 6);
  }
  if (tb[IFLA_IFNAME] != nullptr) out.name = mnl_attr_get_str(tb[IFLA_IFNAME]);
  return MNL_CB_OK;
}

int RouteAttr(const nlattr* attr, void* data) {
  auto** tb = static_cast<const nlattr**>(data);
  if (mnl_attr_type_valid(attr, RTA_MAX) > 0) tb[mnl_attr_get_type(attr)] = attr;
  return MNL_CB_OK;
}

int OnRoute(const nlmsghdr* nlh, void* data) {
  auto& hop = *static_cast<NextHop*>(data);
  const auto* rtm = static_cast<const rtmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* tb[RTA_MAX + 1] = {};
  mnl_attr_parse(nlh, sizeof(*rtm), RouteAttr, tb);
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

int NeighAttr(const nlattr* attr, void* data) {
  auto** tb = static_cast<const nlattr**>(data);
  if (mnl_attr_type_valid(attr, NDA_MAX) > 0) tb[mnl_attr_get_type(attr)] = attr;
  return MNL_CB_OK;
}

int OnNeigh(const nlmsghdr* nlh, void* data) {
  auto& hop = *static_cast<NextHop*>(data);
  const auto* nd = static_cast<const ndmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* tb[NDA_MAX + 1] = {};
  mnl_attr_parse(nlh, sizeof(*nd), NeighAttr, tb);
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
  mnl_socket* nl = mnl_socket_open(NETLINK_ROUTE);
  if (nl == nullptr || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
    const int err = errno;
    if (nl != nullptr) mnl_socket_close(nl);
    return absl::InternalError(absl::StrCat("rtnetlink socket: ", std::strerror(err)));
  }
  // The kernel answers at once; a bound wait in case it does not.
  timeval timeout{0, 200000};
  setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::unique_ptr<Underlay> underlay(new Underlay(nl));
  underlay->buf_ = std::make_unique<char[]>(kBufferSize);
  return underlay;
}

Underlay::~Underlay() { mnl_socket_close(nl_); }

int Underlay::Request(int (*cb)(const nlmsghdr*, void*), void* data) {
  auto* nlh = reinterpret_cast<nlmsghdr*>(buf_.get());
  const uint32_t seq = nlh->nlmsg_seq;
  if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0) return errno;
  const uint32_t portid = mnl_socket_get_portid(nl_);
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kBufferSize);
    if (n < 0) return errno;
    const int rc = mnl_cb_run(buf_.get(), static_cast<size_t>(n), seq, portid, cb, data);
    if (rc == MNL_CB_ERROR) return errno != 0 ? errno : EIO;
    if (rc == MNL_CB_STOP) return 0;
    // A request without NLM_F_DUMP gets one answer (MNL_CB_OK); a dump ends with DONE.
    if (!(reinterpret_cast<nlmsghdr*>(buf_.get())->nlmsg_flags & NLM_F_MULTI)) return 0;
  }
}

absl::StatusOr<LocalInterface> Underlay::FindLocal(in_addr_t local) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.get());
  nlh->nlmsg_type = RTM_GETADDR;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = ++seq_;
  auto* ifa = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifaddrmsg)));
  ifa->ifa_family = AF_INET;
  AddrQuery query{local, 0};
  if (const int err = Request(OnAddr, &query); err != 0) {
    return absl::InternalError(absl::StrCat("listing addresses: ", std::strerror(err)));
  }
  if (query.ifindex == 0) {
    return absl::NotFoundError(absl::StrCat(
        Ipv4Text(local), " is on no interface of hvswitch's network namespace (the VTEP "
        "address must be, so that the kernel routes and resolves the underlay)"));
  }
  LocalInterface out;
  out.ifindex = query.ifindex;
  nlh = mnl_nlmsg_put_header(buf_.get());
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  nlh->nlmsg_seq = ++seq_;
  auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = query.ifindex;
  if (const int err = Request(OnLink, &out); err != 0) {
    return absl::InternalError(absl::StrCat("reading interface ", query.ifindex, ": ",
                                            std::strerror(err)));
  }
  return out;
}

NextHop Underlay::Resolve(in_addr_t remote) {
  NextHop hop;
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.get());
  nlh->nlmsg_type = RTM_GETROUTE;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  nlh->nlmsg_seq = ++seq_;
  auto* rtm = static_cast<rtmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(rtmsg)));
  rtm->rtm_family = AF_INET;
  rtm->rtm_dst_len = 32;
  mnl_attr_put_u32(nlh, RTA_DST, remote);
  if (const int err = Request(OnRoute, &hop); err != 0 || hop.ifindex == 0) {
    hop.problem = err != 0 ? absl::StrCat("no route (", std::strerror(err), ")")
                           : (hop.problem.empty() ? "no route" : hop.problem);
    return hop;
  }
  if (hop.via == 0) hop.via = remote;
  nlh = mnl_nlmsg_put_header(buf_.get());
  nlh->nlmsg_type = RTM_GETNEIGH;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  nlh->nlmsg_seq = ++seq_;
  auto* nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = AF_INET;
  nd->ndm_ifindex = hop.ifindex;
  mnl_attr_put_u32(nlh, NDA_DST, hop.via);
  const int err = Request(OnNeigh, &hop);
  if (hop.resolved) return hop;
  if (err != 0 && hop.problem.empty()) hop.problem = "neighbour not resolved yet";
  // NTF_USE: the kernel resolves it as if it had a packet to send (an ARP request).
  nlh = mnl_nlmsg_put_header(buf_.get());
  nlh->nlmsg_type = RTM_NEWNEIGH;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
  nlh->nlmsg_seq = ++seq_;
  nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = AF_INET;
  nd->ndm_ifindex = hop.ifindex;
  nd->ndm_flags = NTF_USE;
  nd->ndm_state = NUD_NONE;
  mnl_attr_put_u32(nlh, NDA_DST, hop.via);
  Request(nullptr, nullptr);
  return hop;
}

}  // namespace hvswitch
