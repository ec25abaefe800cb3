#include "switch/datapath/mac_key.h"

#include <rte_ether.h>

#include "absl/strings/str_format.h"

namespace hvswitch {

std::string KeyMacString(uint64_t key) {
  return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", key & 0xff, (key >> 8) & 0xff,
                         (key >> 16) & 0xff, (key >> 24) & 0xff, (key >> 32) & 0xff,
                         (key >> 40) & 0xff);
}

std::optional<uint64_t> ParseUnicastMacKey(const std::string& text, uint16_t vlan) {
  rte_ether_addr mac{};
  if (rte_ether_unformat_addr(text.c_str(), &mac) != 0 || rte_is_multicast_ether_addr(&mac)) {
    return std::nullopt;
  }
  return MacKey(vlan, mac.addr_bytes);
}

}  // namespace hvswitch
