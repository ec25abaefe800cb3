#include "switch/datapath/mcast_frame.h"

#include "switch/datapath/ip_guard.h"
#include "switch/datapath/ipv6_upper.h"

namespace hvswitch {
namespace {

constexpr uint8_t kProtoIgmp = 2;
// IGMP: membership query; v1, v2 and v3 reports, v2 leave (RFC 1112, 2236, 3376).
constexpr uint8_t kIgmpQuery = 0x11, kIgmpV1Report = 0x12, kIgmpV2Report = 0x16,
                  kIgmpLeave = 0x17, kIgmpV3Report = 0x22;
// MLD: query; v1 report and done, v2 report (RFC 2710, 3810).
constexpr uint8_t kMldQuery = 130, kMldV1Report = 131, kMldDone = 132, kMldV2Report = 143;

McastFrame Igmp(const uint8_t* ip, uint32_t len) {
  if (len < 20 || (ip[0] >> 4) != 4 || ip[9] != kProtoIgmp) return McastFrame::kData;
  const uint32_t ihl = (ip[0] & 0xf) * 4u;
  if (ihl < 20 || len <= ihl) return McastFrame::kData;
  switch (ip[ihl]) {
    case kIgmpQuery: return McastFrame::kQuery;
    case kIgmpV1Report:
    case kIgmpV2Report:
    case kIgmpLeave:
    case kIgmpV3Report: return McastFrame::kReport;
    default: return McastFrame::kData;
  }
}

McastFrame Mld(const uint8_t* ip, uint32_t len) {
  if (len < 40 || (ip[0] >> 4) != 6) return McastFrame::kData;
  const uint8_t* icmp = nullptr;
  uint32_t icmp_len = 0;
  if (FindIcmpv6(ip, len, &icmp, &icmp_len) != Ipv6Upper::kIcmpv6) return McastFrame::kData;
  switch (icmp[0]) {
    case kMldQuery: return McastFrame::kQuery;
    case kMldV1Report:
    case kMldDone:
    case kMldV2Report: return McastFrame::kReport;
    default: return McastFrame::kData;
  }
}

}  // namespace

McastFrame ClassifyMcastFrame(uint16_t ether_type, const uint8_t* l3, uint32_t len) {
  if (ether_type == kEtherIpv4) return Igmp(l3, len);
  if (ether_type == kEtherIpv6) return Mld(l3, len);
  return McastFrame::kData;
}

}  // namespace hvswitch
