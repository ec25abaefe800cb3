#include "switch/control/rtnetlink.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

constexpr size_t kBufferSize = 1 << 16;  // MNL_SOCKET_BUFFER_SIZE is at most 8 KB
// Notifications may come in thousands at once (a peer's table advertised, withdrawn):
// room for them until the control thread reads them.
constexpr int kEventBuffer = 8 << 20;

}  // namespace

int CollectAttr(const nlattr* attr, void* table) {
  auto& t = *static_cast<AttrTable*>(table);
  const uint16_t type = mnl_attr_get_type(attr);
  if (type <= t.max) t.tb[type] = attr;
  return MNL_CB_OK;
}

absl::StatusOr<std::unique_ptr<RtNetlink>> RtNetlink::Open(uint32_t groups) {
  mnl_socket* nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
  if (nl == nullptr || mnl_socket_bind(nl, groups, MNL_SOCKET_AUTOPID) < 0) {
    const int err = errno;
    if (nl != nullptr) mnl_socket_close(nl);
    return absl::InternalError(absl::StrCat("rtnetlink socket: ", std::strerror(err)));
  }
  const int fd = mnl_socket_get_fd(nl);
  if (groups != 0) {
    // SO_RCVBUFFORCE (root) past rmem_max; SO_RCVBUF otherwise.
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kEventBuffer, sizeof(kEventBuffer)) != 0) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kEventBuffer, sizeof(kEventBuffer));
    }
  } else {
    // The kernel answers requests at once; a bound wait in case it does not.
    timeval timeout{0, 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  return std::unique_ptr<RtNetlink>(new RtNetlink(nl, std::make_unique<char[]>(kBufferSize)));
}

RtNetlink::~RtNetlink() { mnl_socket_close(nl_); }

nlmsghdr* RtNetlink::Start(uint16_t type, uint16_t flags) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.get());
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = ++seq_;
  return nlh;
}

int RtNetlink::Run(mnl_cb_t cb, void* data) {
  auto* nlh = reinterpret_cast<nlmsghdr*>(buf_.get());
  const uint32_t seq = nlh->nlmsg_seq;
  if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0) return errno;
  const uint32_t portid = mnl_socket_get_portid(nl_);
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kBufferSize);
    if (n < 0) return errno;
    errno = 0;
    const int rc = mnl_cb_run(buf_.get(), static_cast<size_t>(n), seq, portid, cb, data);
    if (rc == MNL_CB_ERROR) return errno != 0 ? errno : EIO;
    if (rc == MNL_CB_STOP) return 0;
    // A request without NLM_F_DUMP or NLM_F_ACK gets one answer; a dump ends with DONE.
    if (!(reinterpret_cast<nlmsghdr*>(buf_.get())->nlmsg_flags & NLM_F_MULTI)) return 0;
  }
}

bool RtNetlink::Drain(mnl_cb_t cb, void* data) {
  const int fd = mnl_socket_get_fd(nl_);
  for (;;) {
    const ssize_t n = recv(fd, buf_.get(), kBufferSize, MSG_DONTWAIT);
    if (n < 0) return errno != ENOBUFS;  // EAGAIN: all read
    mnl_cb_run(buf_.get(), static_cast<size_t>(n), 0, 0, cb, data);
  }
}

}  // namespace hvswitch
