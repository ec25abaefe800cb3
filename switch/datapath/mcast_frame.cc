#include "switch/datapath/mcast_frame.h"

#include "switch/datapath/ip_guard.h"
#include "switch/datapath/ipv6_upper.h"

namespace hvswitch {
namespace {

McastFrame Igmp(const uint8_t* ip, uint32_t len) {
  if (len < 20 || (ip[0] >> 4) != 4 || ip[9] != kProtoIgmp) return McastFrame::kData;
  const uint32_t ihl = (ip[0] & 0xf) * 4u;
  if (ihl < 20 || len <= ihl) return McastFrame::kData;
  switch (ip[ihl]) {
    case kIgmpQuery: return McastFrame::kQuery;
    case kIgmpv1Report:
    case kIgmpv2Report:
    case kIgmpv2Leave:
    case kIgmpv3Report: return McastFrame::kReport;
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
    case kMldv1Report:
    case kMldv1Done:
    case kMldv2Report: return McastFrame::kReport;
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
