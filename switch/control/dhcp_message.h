// DHCP snooping's parser: the DHCP message (RFC 2131) a frame carries, read for what the
// switch learns from it (which address a server leased to which client, for how long).
// Pure code over bytes (no EAL): the control thread runs it on frames the workers copied
// to it, the unit tests and the snoop fuzzer on anything. Every input is a guest's.
#pragma once

#include <cstdint>
#include <optional>

namespace hvswitch {

struct DhcpMessage {
  uint8_t type = 0;  // option 53: 1 DISCOVER 2 OFFER 3 REQUEST 4 DECLINE 5 ACK 6 NAK
                     // 7 RELEASE 8 INFORM
  bool reply = false;      // BOOTREPLY (op 2) from UDP port 67 to 68; else BOOTREQUEST
                           // (op 1) from 68 to 67
  uint32_t client_ip = 0;  // ciaddr, network order
  uint32_t your_ip = 0;    // yiaddr, network order
  uint32_t server_id = 0;  // option 54, network order (0: absent)
  uint64_t client_mac = 0;     // chaddr (htype 1, hlen 6 only), FDB key layout (VLAN 0)
  uint32_t lease_seconds = 0;  // option 51 (0: absent; 0xffffffff: infinite)
  bool operator==(const DhcpMessage&) const = default;
};

// nullopt for anything but a well-formed DHCP message between a client and a server on the
// link: `frame` is a whole Ethernet frame (untagged or one 802.1Q tag) carrying a valid
// IPv4 header (snoop_headers.h), UDP whose length is within the IP payload (bytes behind it
// ignored, as a receiver does), from port 68 to 67 with op 1 or from 67 to 68 with op 2
// (a relay's 67 to 67 is not read); the BOOTP fixed part, the magic cookie, Ethernet
// hardware addresses; options to the end option or the end of the UDP payload, none past
// it, option 53 present with a type 1-8, 51 and 54 four bytes long, none of the three twice.
// The UDP checksum is not verified: a kernel port's frames may carry a partial one, left to
// an offload. Option overload (52) is not followed: sname and file are not read.
std::optional<DhcpMessage> ParseDhcpFrame(const uint8_t* frame, uint32_t len);

}  // namespace hvswitch
