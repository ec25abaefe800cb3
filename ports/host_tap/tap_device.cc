#include "ports/host_tap/tap_device.h"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ports/host_tap/netns_guard.h"
#include "ports/host_tap/vnet_header.h"

namespace hvswitch {
namespace {

void CopyName(const std::string& name, char (&out)[IFNAMSIZ]) {
  std::memset(out, 0, IFNAMSIZ);
  std::memcpy(out, name.data(), std::min<size_t>(name.size(), IFNAMSIZ - 1));
}

// One queue of the interface: the first creates it (and refuses an interface of that name
// that exists already: attaching to someone else's persistent tap would be a surprise),
// the others attach to it.
int OpenQueue(const std::string& name, bool multi_queue, bool first, absl::Status& status) {
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    status = ErrnoStatus("/dev/net/tun", errno);
    return -1;
  }
  ifreq ifr{};
  CopyName(name, ifr.ifr_name);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
  if (multi_queue) ifr.ifr_flags |= IFF_MULTI_QUEUE;
  if (first) ifr.ifr_flags |= IFF_TUN_EXCL;
  // The header's size and byte order are the device's, and a persistent device keeps what
  // an earlier owner set: state ours.
  int hdr_size = sizeof(VnetHeader);
  int little_endian = 1;
  const char* step = nullptr;
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
    step = errno == EBUSY ? "TUNSETIFF (an interface of that name exists)" : "TUNSETIFF";
  } else if (ioctl(fd, TUNSETVNETHDRSZ, &hdr_size) != 0) {
    step = "TUNSETVNETHDRSZ";
  } else if (ioctl(fd, TUNSETVNETLE, &little_endian) != 0 && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
    step = "TUNSETVNETLE";  // (native order is little-endian already on x86)
  }
  if (step != nullptr) {
    status = ErrnoStatus(absl::StrCat(step, " ", name), errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

TapDevice::~TapDevice() { Close(); }

absl::Status TapDevice::Open(const KernelInterfaceOptions& options) {
  Close();
  NetnsGuard guard;
  absl::Status status = EnterInterfaceNamespace(options, guard);
  if (!status.ok()) return status;
  const bool multi_queue = options.queues > 1;
  for (uint16_t q = 0; q < options.queues; ++q) {
    const int fd = OpenQueue(options.iface, multi_queue, q == 0, status);
    if (fd < 0) {
      Close();
      return status;
    }
    fds_.push_back(fd);
  }
  name_ = options.iface;
  ctl_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (ctl_fd_ < 0) {
    status = ErrnoStatus("control socket", errno);
    Close();
    return status;
  }
  ifindex_ = static_cast<int>(if_nametoindex(name_.c_str()));
  return absl::OkStatus();
}

void TapDevice::Close() {
  for (int fd : fds_) close(fd);
  fds_.clear();
  if (ctl_fd_ >= 0) close(ctl_fd_);
  ctl_fd_ = -1;
}

bool TapDevice::CurrentName(char (&name)[IFNAMSIZ]) const {
  if (fds_.empty()) return false;
  ifreq ifr{};
  if (ioctl(fds_[0], TUNGETIFF, &ifr) != 0) return false;
  std::memcpy(name, ifr.ifr_name, IFNAMSIZ);
  return true;
}

absl::Status TapDevice::SetOffloads(bool csum, bool tso) {
  unsigned flags = 0;
  if (csum) flags |= TUN_F_CSUM;
  if (csum && tso) flags |= TUN_F_TSO4 | TUN_F_TSO6;
  if (fds_.empty()) return absl::FailedPreconditionError("tap not open");
  if (ioctl(fds_[0], TUNSETOFFLOAD, flags) != 0) return ErrnoStatus("TUNSETOFFLOAD", errno);
  return absl::OkStatus();
}

absl::Status TapDevice::Start(bool rx_csum, bool rx_tso) {
  const absl::Status status = SetOffloads(rx_csum, rx_tso);
  return status.ok() ? SetUp(true) : status;
}

absl::Status TapDevice::SetMtu(uint16_t mtu) {
  ifreq ifr{};
  if (!CurrentName(ifr.ifr_name)) return absl::FailedPreconditionError("tap not open");
  ifr.ifr_mtu = mtu;
  if (ioctl(ctl_fd_, SIOCSIFMTU, &ifr) != 0) return ErrnoStatus(absl::StrCat("MTU ", mtu), errno);
  return absl::OkStatus();
}

absl::Status TapDevice::SetUp(bool up) {
  ifreq ifr{};
  if (!CurrentName(ifr.ifr_name)) return absl::FailedPreconditionError("tap not open");
  if (ioctl(ctl_fd_, SIOCGIFFLAGS, &ifr) != 0) return ErrnoStatus("SIOCGIFFLAGS", errno);
  if (up) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags & ~IFF_UP);
  }
  if (ioctl(ctl_fd_, SIOCSIFFLAGS, &ifr) != 0) return ErrnoStatus("SIOCSIFFLAGS", errno);
  return absl::OkStatus();
}

bool TapDevice::IsUp() const {
  ifreq ifr{};
  if (!CurrentName(ifr.ifr_name)) return false;
  return ioctl(ctl_fd_, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP) != 0;
}

absl::Status TapDevice::ReadMac(uint8_t mac[6]) const {
  ifreq ifr{};
  if (!CurrentName(ifr.ifr_name)) return absl::FailedPreconditionError("tap not open");
  if (ioctl(ctl_fd_, SIOCGIFHWADDR, &ifr) != 0) return ErrnoStatus("SIOCGIFHWADDR", errno);
  std::memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
  return absl::OkStatus();
}

}  // namespace hvswitch
