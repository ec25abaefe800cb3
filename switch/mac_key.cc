#include "switch/mac_key.h"

#include "absl/strings/str_format.h"

namespace hvswitch {

std::string KeyMacString(uint64_t key) {
  return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", key & 0xff, (key >> 8) & 0xff,
                         (key >> 16) & 0xff, (key >> 24) & 0xff, (key >> 32) & 0xff,
                         (key >> 40) & 0xff);
}

}  // namespace hvswitch
