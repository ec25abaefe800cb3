#include "switch/control/rx_hold.h"

#include <rte_ethdev.h>

#include <algorithm>
#include <array>
#include <utility>

#include "ports/port.h"
#include "switch/datapath/datapath.h"

namespace hvswitch {
namespace {

// A 64-byte frame takes 84 bytes of the wire (preamble, start delimiter, gap).
constexpr double kMinFrameBits = 84 * 8;
constexpr uint32_t kUnknownMbps = 10000;

// The fastest speed in a device's capability bits, in Mb/s (0: none listed).
uint32_t FastestMbps(uint32_t speed_capa) {
  static constexpr std::array<std::pair<uint32_t, uint32_t>, 13> kSpeeds = {{
      {RTE_ETH_LINK_SPEED_200G, RTE_ETH_SPEED_NUM_200G},
      {RTE_ETH_LINK_SPEED_100G, RTE_ETH_SPEED_NUM_100G},
      {RTE_ETH_LINK_SPEED_56G, RTE_ETH_SPEED_NUM_56G},
      {RTE_ETH_LINK_SPEED_50G, RTE_ETH_SPEED_NUM_50G},
      {RTE_ETH_LINK_SPEED_40G, RTE_ETH_SPEED_NUM_40G},
      {RTE_ETH_LINK_SPEED_25G, RTE_ETH_SPEED_NUM_25G},
      {RTE_ETH_LINK_SPEED_20G, RTE_ETH_SPEED_NUM_20G},
      {RTE_ETH_LINK_SPEED_10G, RTE_ETH_SPEED_NUM_10G},
      {RTE_ETH_LINK_SPEED_5G, RTE_ETH_SPEED_NUM_5G},
      {RTE_ETH_LINK_SPEED_2_5G, RTE_ETH_SPEED_NUM_2_5G},
      {RTE_ETH_LINK_SPEED_1G, RTE_ETH_SPEED_NUM_1G},
      {RTE_ETH_LINK_SPEED_100M | RTE_ETH_LINK_SPEED_100M_HD, RTE_ETH_SPEED_NUM_100M},
      {RTE_ETH_LINK_SPEED_10M | RTE_ETH_LINK_SPEED_10M_HD, RTE_ETH_SPEED_NUM_10M},
  }};
  for (const auto& [bits, mbps] : kSpeeds) {
    if (speed_capa & bits) return mbps;
  }
  return 0;
}

uint32_t LinkMbps(uint16_t eth_port) {
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(eth_port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP &&
      link.link_speed != RTE_ETH_SPEED_NUM_NONE && link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN) {
    return link.link_speed;
  }
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(eth_port, &info) == 0) return FastestMbps(info.speed_capa);
  return 0;
}

}  // namespace

uint32_t RxHoldNs(uint32_t descriptors, uint32_t link_mbps) {
  const double frames_per_ns = (link_mbps == 0 ? kUnknownMbps : link_mbps) * 1e-3 / kMinFrameBits;
  return static_cast<uint32_t>(
      std::min<double>(descriptors / frames_per_ns, DatapathPort::kRingWaits - 1));
}

uint32_t RxHoldNs(const Port& port) {
  if (port.setup().peer_ring) return DatapathPort::kRingWaits;
  return RxHoldNs(port.queues().rx_descriptors, LinkMbps(port.eth_port()));
}

}  // namespace hvswitch
