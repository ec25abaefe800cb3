#include "tests/guest/linkup_probe.h"

#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace hvswitch::guest {
namespace {

constexpr uint16_t kProbeEtherType = 0x88b7;
constexpr uint16_t kBurst = 32;
constexpr uint16_t kFrameSize = 60;

struct Stamp {
  uint64_t run;  // this run's tag: frames of an earlier run still in flight are foreign
  uint64_t seq;
};

// The receiving guest's driver going away: the port closed and its device removed, which
// closes its socket (a virtio-user port that is only stopped stays connected, and the
// switch rightly keeps sending to it). Returns the device's name and arguments.
bool Unplug(uint16_t port, std::string* name, std::string* args) {
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port, &info) != 0 || info.device == nullptr) return false;
  *name = rte_dev_name(info.device);
  const rte_devargs* devargs = rte_dev_devargs(info.device);
  *args = devargs != nullptr && devargs->args != nullptr ? devargs->args : "";
  rte_eth_dev_stop(port);
  rte_eth_dev_close(port);
  return rte_eal_hotplug_remove("vdev", name->c_str()) == 0;
}

// And coming back: the device probed again (it connects), set up and started. The port
// must get its old number back (the first free one, as it was).
bool Plug(uint16_t port, const std::string& name, const std::string& args,
          rte_mempool* pool) {
  uint16_t found = RTE_MAX_ETHPORTS;
  if (rte_eal_hotplug_add("vdev", name.c_str(), args.c_str()) != 0 ||
      rte_eth_dev_get_port_by_name(name.c_str(), &found) != 0 || found != port) {
    return false;
  }
  const rte_eth_conf conf{};
  return rte_eth_dev_configure(port, 1, 1, &conf) == 0 &&
         rte_eth_rx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), nullptr, pool) == 0 &&
         rte_eth_tx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), nullptr) == 0 &&
         rte_eth_dev_start(port) == 0;
}

bool LinkUp(uint16_t port) {
  rte_eth_link link{};
  return rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

}  // namespace

std::string LinkUpResult::Json() const {
  if (!error.empty()) return "{\"error\":\"" + error + "\"}";
  char buf[640];
  std::snprintf(buf, sizeof(buf),
                "{\"link_up\":%d,\"sent\":%lu,\"sent_after_up\":%lu,\"received\":%lu,"
                "\"received_before_up\":%lu,\"lost_after_up\":%lu,\"lost_after_first\":%lu,"
                "\"duplicates\":%lu,\"reordered\":%lu,\"foreign\":%lu,"
                "\"start_call_ns\":%.0f,\"up_ns\":%.0f,\"first_rx_ns\":%.0f,"
                "\"last_lost_ns\":%.0f}",
                link_up ? 1 : 0, sent, sent_after_up, received, received_before_up,
                lost_after_up, lost_after_first, duplicates, reordered, foreign,
                start_call_ns, up_ns, first_rx_ns, last_lost_ns);
  return buf;
}

LinkUpResult MeasureLinkUp(rte_mempool* pool, const LinkUpRun& run) {
  LinkUpResult result;
  const uint64_t hz = rte_get_tsc_hz();
  const double ns_per_cycle = 1e9 / static_cast<double>(hz);
  const uint64_t interval = std::max<uint64_t>(1, hz / std::max<uint64_t>(1, run.rate));
  const uint64_t tag = rte_rdtsc();
  // Per sequence number: the TSC it was handed to the port at (0: the port refused it),
  // and how many times it arrived.
  std::vector<uint64_t> sent_tsc;
  std::vector<uint32_t> arrivals;
  sent_tsc.reserve(run.rate * (run.before_ms + run.after_ms + 1000) / 1000 + kBurst);
  uint64_t up_tsc = 0, first_rx_tsc = 0, highest_seq = 0;
  bool any_received = false;
  rte_mbuf* pkts[kBurst];

  auto receive = [&] {
    const uint16_t n = rte_eth_rx_burst(run.rx_port, 0, pkts, kBurst);
    const uint64_t now = rte_rdtsc();
    for (uint16_t i = 0; i < n; ++i) {
      const rte_mbuf* m = pkts[i];
      const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
      Stamp stamp{};
      if (m->data_len >= sizeof(rte_ether_hdr) + sizeof(Stamp) &&
          eth->ether_type == rte_cpu_to_be_16(kProbeEtherType)) {
        std::memcpy(&stamp, eth + 1, sizeof(stamp));
      }
      if (stamp.run != tag || stamp.seq >= sent_tsc.size()) {
        ++result.foreign;
        continue;
      }
      if (!any_received) first_rx_tsc = now;
      if (any_received && stamp.seq < highest_seq) ++result.reordered;
      highest_seq = std::max(highest_seq, stamp.seq);
      any_received = true;
      if (arrivals.size() <= stamp.seq) arrivals.resize(sent_tsc.size(), 0);
      if (arrivals[stamp.seq]++ != 0) ++result.duplicates;
    }
    rte_pktmbuf_free_bulk(pkts, n);
  };

  auto send_due = [&](uint64_t now, uint64_t* next) {
    // Frames due by now (a burst at most): behind the schedule, the probe catches up.
    uint64_t due = now >= *next ? (now - *next) / interval + 1 : 0;
    due = std::min<uint64_t>(due, kBurst);
    if (due == 0 || rte_pktmbuf_alloc_bulk(pool, pkts, static_cast<unsigned>(due)) != 0) {
      return;
    }
    const uint64_t first_seq = sent_tsc.size();
    for (uint64_t i = 0; i < due; ++i) {
      char* data = rte_pktmbuf_append(pkts[i], kFrameSize);
      if (data == nullptr) continue;  // never: a buffer holds 2048 bytes
      std::memset(data, 0, kFrameSize);
      auto* eth = reinterpret_cast<rte_ether_hdr*>(data);
      eth->dst_addr = run.dst;
      eth->src_addr = run.src;
      eth->ether_type = rte_cpu_to_be_16(kProbeEtherType);
      const Stamp stamp{tag, first_seq + i};
      std::memcpy(eth + 1, &stamp, sizeof(stamp));
    }
    // Read after the frames are built, before they are handed over: a frame stamped
    // "after link-up" was certainly handed over after the link was seen up.
    const uint64_t handed = rte_rdtsc();
    const uint16_t taken = rte_eth_tx_burst(run.tx_port, 0, pkts, static_cast<uint16_t>(due));
    rte_pktmbuf_free_bulk(pkts + taken, static_cast<unsigned>(due - taken));
    for (uint64_t i = 0; i < due; ++i) sent_tsc.push_back(i < taken ? handed : 0);
    *next += due * interval;
  };

  std::string name, args;
  if (!Unplug(run.rx_port, &name, &args)) {
    result.error = "cannot remove the receiving port";
    return result;
  }
  usleep(static_cast<useconds_t>(run.down_ms * 1000));

  const uint64_t stream_start = rte_rdtsc();
  const uint64_t start_at = stream_start + run.before_ms * hz / 1000;
  uint64_t next = stream_start, started_tsc = 0;
  for (;;) {
    uint64_t now = rte_rdtsc();
    send_due(now, &next);
    if (started_tsc == 0 && now >= start_at) {
      started_tsc = rte_rdtsc();
      if (!Plug(run.rx_port, name, args, pool)) {
        result.error = "cannot plug the receiving port back";
        return result;
      }
      const uint64_t plugged = rte_rdtsc();
      result.start_call_ns = static_cast<double>(plugged - started_tsc) * ns_per_cycle;
      // No catching up on the frames due while plugging blocked: a burst of them just
      // after link-up would count the same moment many times over.
      next = std::max(next, plugged);
    }
    if (started_tsc != 0 && up_tsc == 0) {
      // Read before this iteration's receive: a frame received in this iteration is
      // received after the link was seen up.
      if (LinkUp(run.rx_port)) up_tsc = rte_rdtsc();
    }
    if (started_tsc != 0) receive();
    now = rte_rdtsc();
    if (up_tsc != 0 && now >= up_tsc + run.after_ms * hz / 1000) break;
    if (started_tsc != 0 && up_tsc == 0 && now >= started_tsc + 10 * hz) break;
  }
  const uint64_t end = rte_rdtsc();
  for (uint64_t deadline = end + hz / 5; rte_rdtsc() < deadline;) receive();

  arrivals.resize(sent_tsc.size(), 0);
  result.link_up = up_tsc != 0;
  result.up_ns = result.link_up ? static_cast<double>(up_tsc - started_tsc) * ns_per_cycle : 0;
  if (any_received && result.link_up) {
    result.first_rx_ns = (static_cast<double>(first_rx_tsc) - static_cast<double>(up_tsc)) *
                         ns_per_cycle;
  }
  for (size_t seq = 0; seq < sent_tsc.size(); ++seq) {
    if (sent_tsc[seq] == 0) continue;  // refused by the sending port: not sent
    ++result.sent;
    const bool after_up = result.link_up && sent_tsc[seq] >= up_tsc;
    if (after_up) ++result.sent_after_up;
    if (arrivals[seq] != 0) {
      ++result.received;
      if (!after_up) ++result.received_before_up;
    } else {
      if (after_up) {
        ++result.lost_after_up;
        result.last_lost_ns = static_cast<double>(sent_tsc[seq] - up_tsc) * ns_per_cycle;
      }
      if (any_received && sent_tsc[seq] >= first_rx_tsc) ++result.lost_after_first;
    }
  }
  return result;
}

}  // namespace hvswitch::guest
