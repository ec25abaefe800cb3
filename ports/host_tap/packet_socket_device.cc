#include "ports/host_tap/packet_socket_device.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ports/host_tap/netns_guard.h"

// A packet socket's virtio-net header is in the host's byte order (vio_le() for a
// legacy header); VnetHeader is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "packet sockets write the virtio-net header in host order");

namespace hvswitch {
namespace {

// Newer than Debian 12's headers. A kernel that refuses it (EINVAL) still takes the group
// without it; outgoing frames then reach the sockets, and the Rx burst discards them
// (sll_pkttype).
#ifndef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define PACKET_FANOUT_FLAG_IGNORE_OUTGOING 0x4000
#endif

// Per socket. The default (net.core.rmem_default, 208 KB here) holds three 64 KB
// super-frames: TCP from a namespace overflowed it, ~200,000 retransmissions in 5 s
// against ~1,700 with this (tests/perf/results.md, "netdev ports"). The send buffer is
// left at its default: 4 MB there made no difference.
constexpr int kReceiveBuffer = 4 << 20;

absl::Status SetOption(int fd, int level, int name, int value, const char* what) {
  if (setsockopt(fd, level, name, &value, sizeof(value)) != 0) return ErrnoStatus(what, errno);
  return absl::OkStatus();
}

// One queue's socket, bound to the interface; frames queue from here on.
int OpenSocket(int ifindex, absl::Status& status) {
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    status = ErrnoStatus("packet socket", errno);
    return -1;
  }
  status = SetOption(fd, SOL_PACKET, PACKET_VNET_HDR, 1, "PACKET_VNET_HDR");
  if (status.ok()) status = SetOption(fd, SOL_PACKET, PACKET_AUXDATA, 1, "PACKET_AUXDATA");
  if (status.ok()) {
    status = SetOption(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING");
  }
  // (FORCE: beyond net.core.rmem_max, which hvswitch, as root, may.)
  if (status.ok()) {
    status = SetOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, kReceiveBuffer, "SO_RCVBUFFORCE");
  }
  if (status.ok()) {
    sockaddr_ll addr{};
    addr.sll_family = AF_PACKET;
    addr.sll_protocol = htons(ETH_P_ALL);
    addr.sll_ifindex = ifindex;
    if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      status = ErrnoStatus("binding the packet socket", errno);
    }
  }
  if (!status.ok()) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

PacketSocketDevice::~PacketSocketDevice() { Close(); }

absl::Status PacketSocketDevice::Open(const KernelInterfaceOptions& options) {
  Close();
  NetnsGuard guard;
  absl::Status status = EnterInterfaceNamespace(options, guard);
  if (!status.ok()) return status;
  const std::string where =
      options.netns.empty() ? "" : absl::StrCat(" in network namespace ", options.netns);
  ifindex_ = static_cast<int>(if_nametoindex(options.iface.c_str()));
  if (ifindex_ == 0) {
    return absl::UnavailableError(absl::StrCat("no interface ", options.iface, where));
  }
  ctl_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (ctl_fd_ < 0) return ErrnoStatus("control socket", errno);
  // Ethernet only: the sockets read and write Ethernet frames (not a tun's IP packets,
  // not loopback's: ARPHRD_LOOPBACK).
  ifreq ifr{};
  if (!CurrentName(ifr) || ioctl(ctl_fd_, SIOCGIFHWADDR, &ifr) != 0) {
    status = ErrnoStatus(absl::StrCat("interface ", options.iface), errno);
  } else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
    status = absl::InvalidArgumentError(
        absl::StrCat("interface ", options.iface, where, " is not an Ethernet interface"));
  }
  for (uint16_t q = 0; status.ok() && q < options.queues; ++q) {
    const int fd = OpenSocket(ifindex_, status);
    if (fd >= 0) fds_.push_back(fd);
  }
  if (status.ok()) {
    packet_mreq mreq{};
    mreq.mr_ifindex = ifindex_;
    mreq.mr_type = PACKET_MR_PROMISC;
    if (setsockopt(fds_[0], SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) {
      status = ErrnoStatus("PACKET_MR_PROMISC", errno);
    }
  }
  if (status.ok() && fds_.size() > 1) {
    // The first socket makes a group of an id no other group uses; the others join it.
    uint32_t kind = PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_IGNORE_OUTGOING;
    uint32_t value = (kind | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
    int rc = setsockopt(fds_[0], SOL_PACKET, PACKET_FANOUT, &value, sizeof(value));
    if (rc != 0 && errno == EINVAL) {
      kind = PACKET_FANOUT_HASH;
      value = (kind | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
      reads_outgoing_ = true;
      rc = setsockopt(fds_[0], SOL_PACKET, PACKET_FANOUT, &value, sizeof(value));
    }
    if (rc != 0) status = ErrnoStatus("PACKET_FANOUT", errno);
    socklen_t len = sizeof(value);
    if (status.ok() && getsockopt(fds_[0], SOL_PACKET, PACKET_FANOUT, &value, &len) != 0) {
      status = ErrnoStatus("PACKET_FANOUT (reading the group)", errno);
    }
    const uint32_t join = (value & 0xffff) | (kind << 16);
    for (size_t q = 1; status.ok() && q < fds_.size(); ++q) {
      if (setsockopt(fds_[q], SOL_PACKET, PACKET_FANOUT, &join, sizeof(join)) != 0) {
        status = ErrnoStatus("PACKET_FANOUT (joining)", errno);
      }
    }
  }
  if (!status.ok()) {
    Close();
    return status;
  }
  drops_.assign(fds_.size(), 0);
  return absl::OkStatus();
}

void PacketSocketDevice::Close() {
  if (raised_) Stop();
  for (int fd : fds_) close(fd);
  fds_.clear();
  if (ctl_fd_ >= 0) close(ctl_fd_);
  ctl_fd_ = -1;
}

bool PacketSocketDevice::CurrentName(ifreq& ifr) const {
  ifr.ifr_ifindex = ifindex_;
  return ctl_fd_ >= 0 && ioctl(ctl_fd_, SIOCGIFNAME, &ifr) == 0;
}

absl::Status PacketSocketDevice::Flags(short& flags) const {
  ifreq ifr{};
  if (!CurrentName(ifr)) return ErrnoStatus("the interface", errno);
  if (ioctl(ctl_fd_, SIOCGIFFLAGS, &ifr) != 0) return ErrnoStatus("SIOCGIFFLAGS", errno);
  flags = ifr.ifr_flags;
  return absl::OkStatus();
}

absl::Status PacketSocketDevice::ReadMac(uint8_t mac[6]) const {
  ifreq ifr{};
  if (!CurrentName(ifr)) return ErrnoStatus("the interface", errno);
  if (ioctl(ctl_fd_, SIOCGIFHWADDR, &ifr) != 0) return ErrnoStatus("SIOCGIFHWADDR", errno);
  std::memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
  return absl::OkStatus();
}

uint16_t PacketSocketDevice::MaxMtu() const {
  ifreq ifr{};
  if (!CurrentName(ifr) || ioctl(ctl_fd_, SIOCGIFMTU, &ifr) != 0 || ifr.ifr_mtu <= 0) {
    return UINT16_MAX;  // gone: it takes nothing anyway
  }
  return static_cast<uint16_t>(std::min(ifr.ifr_mtu, int{UINT16_MAX}));
}

// The kernel decides per frame what it hands a packet socket (the skb's own state):
// there is nothing to ask, and the PMD completes what the application did not enable.
absl::Status PacketSocketDevice::Start(bool, bool) {
  short flags = 0;
  absl::Status status = Flags(flags);
  if (!status.ok() || (flags & IFF_UP)) return status;
  ifreq ifr{};
  if (!CurrentName(ifr)) return ErrnoStatus("the interface", errno);
  ifr.ifr_flags = static_cast<short>(flags | IFF_UP);
  if (ioctl(ctl_fd_, SIOCSIFFLAGS, &ifr) != 0) return ErrnoStatus("setting it up", errno);
  raised_ = true;
  return absl::OkStatus();
}

void PacketSocketDevice::Stop() {
  if (!raised_) return;
  raised_ = false;
  short flags = 0;
  ifreq ifr{};
  if (!Flags(flags).ok() || !CurrentName(ifr)) return;
  ifr.ifr_flags = static_cast<short>(flags & ~IFF_UP);
  (void)ioctl(ctl_fd_, SIOCSIFFLAGS, &ifr);
}

bool PacketSocketDevice::LinkUp() const {
  short flags = 0;
  return Flags(flags).ok() && (flags & IFF_UP) && (flags & IFF_RUNNING);
}

uint64_t PacketSocketDevice::KernelDrops(uint16_t q) {
  std::lock_guard<std::mutex> lock(drops_mu_);
  if (q >= fds_.size()) return 0;
  tpacket_stats stats{};
  socklen_t len = sizeof(stats);
  if (getsockopt(fds_[q], SOL_PACKET, PACKET_STATISTICS, &stats, &len) == 0) {
    drops_[q] += stats.tp_drops;
  }
  return drops_[q];
}

}  // namespace hvswitch
