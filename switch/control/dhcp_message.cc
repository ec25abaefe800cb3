#include "switch/control/dhcp_message.h"

#include <cstring>

#include "switch/control/snoop_headers.h"
#include "switch/datapath/mac_key.h"

namespace hvswitch {
namespace {

constexpr uint8_t kProtoUdp = 17;
constexpr uint16_t kServerPort = 67, kClientPort = 68;
constexpr uint8_t kBootRequest = 1, kBootReply = 2;
// The BOOTP fixed part (RFC 951) is 236 bytes; the magic cookie follows, then options.
constexpr uint32_t kCookieAt = 236, kOptionsAt = 240;
constexpr uint32_t kMagicCookie = 0x63825363;
constexpr uint8_t kOptionPad = 0, kOptionEnd = 255, kOptionLease = 51, kOptionType = 53,
                  kOptionServerId = 54;

// The options from kOptionsAt on into `message`; false for one that runs past the end, a
// length the option does not have, or one of ours given twice (which of two values a
// client or server reads is its own choice: the switch cannot know it).
bool ReadOptions(const uint8_t* bootp, uint32_t len, DhcpMessage& message) {
  bool lease = false, server_id = false;
  for (uint32_t at = kOptionsAt; at < len;) {
    const uint8_t code = bootp[at];
    if (code == kOptionPad) {
      ++at;
      continue;
    }
    if (code == kOptionEnd) break;
    if (len - at < 2 || bootp[at + 1] > len - at - 2) return false;
    const uint8_t length = bootp[at + 1];
    const uint8_t* data = bootp + at + 2;
    switch (code) {
      case kOptionType:
        if (length != 1 || message.type != 0 || data[0] == 0) return false;
        message.type = data[0];
        break;
      case kOptionLease:
        if (length != 4 || lease) return false;
        lease = true;
        message.lease_seconds = Be32(data);
        break;
      case kOptionServerId:
        if (length != 4 || server_id) return false;
        server_id = true;
        std::memcpy(&message.server_id, data, 4);
        break;
      default:
        break;
    }
    at += 2u + length;
  }
  return true;
}

}  // namespace

std::optional<DhcpMessage> ParseDhcpFrame(const uint8_t* frame, uint32_t len) {
  const std::optional<L3Bytes> l3 = FrameL3(frame, len);
  if (!l3) return std::nullopt;
  const std::optional<Ipv4Packet> ip = ReadIpv4(*l3);
  if (!ip || ip->proto != kProtoUdp || ip->payload_len < 8) return std::nullopt;
  const uint8_t* udp = ip->payload;
  const uint32_t udp_len = Be16(udp + 4);
  if (udp_len < 8 + kOptionsAt || udp_len > ip->payload_len) return std::nullopt;
  const uint8_t* bootp = udp + 8;
  const uint32_t bootp_len = udp_len - 8;
  const uint16_t sport = Be16(udp), dport = Be16(udp + 2);
  DhcpMessage message;
  message.reply = bootp[0] == kBootReply;
  const bool request = bootp[0] == kBootRequest && sport == kClientPort && dport == kServerPort;
  const bool reply = message.reply && sport == kServerPort && dport == kClientPort;
  if (!request && !reply) return std::nullopt;
  if (bootp[1] != 1 || bootp[2] != 6 || Be32(bootp + kCookieAt) != kMagicCookie) {
    return std::nullopt;  // not Ethernet addresses, or BOOTP without DHCP's options
  }
  std::memcpy(&message.client_ip, bootp + 12, 4);
  std::memcpy(&message.your_ip, bootp + 16, 4);
  message.client_mac = MacKey(0, bootp + 28);
  if (!ReadOptions(bootp, bootp_len, message) || message.type == 0 || message.type > 8) {
    return std::nullopt;
  }
  return message;
}

}  // namespace hvswitch
