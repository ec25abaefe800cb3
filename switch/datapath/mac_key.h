// The FDB key: VLAN and MAC packed into 64 bits (VLAN in bits 48-59, MAC in bits 0-47 in
// wire byte order, so bit 0 is the MAC's group bit). Pure functions, any thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace hvswitch {

inline uint64_t MacKey(uint16_t vlan, const uint8_t* mac) {
  uint64_t key = 0;
  std::memcpy(&key, mac, 6);  // little-endian: mac[0] lands in the low byte
  return key | (static_cast<uint64_t>(vlan & 0xfff) << 48);
}

inline bool IsGroupKey(uint64_t key) { return key & 1; }
inline constexpr uint64_t kBroadcastKey = 0xffffffffffff;  // ff:ff:ff:ff:ff:ff, KeyMac's
inline uint64_t KeyMac(uint64_t key) { return key & 0xffffffffffff; }  // without the VLAN
inline uint16_t KeyVlan(uint64_t key) { return static_cast<uint16_t>(key >> 48); }

std::string KeyMacString(uint64_t key);  // "aa:bb:cc:dd:ee:ff"

// The key of a unicast MAC written "aa:bb:cc:dd:ee:ff" in `vlan`; nullopt for anything
// else (not a MAC, or a group address).
std::optional<uint64_t> ParseUnicastMacKey(const std::string& text, uint16_t vlan);

}  // namespace hvswitch
