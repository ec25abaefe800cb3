// Fixed limits of the data path's per-worker and per-port arrays.
#pragma once

#include <cstdint>

namespace hvswitch {

inline constexpr uint16_t kMaxPorts = 64;  // flood sets are 64-bit masks
inline constexpr uint16_t kMaxWorkers = 16;
// Mirror sessions (hvswitchctl mirror add): a port's are a byte of session bits.
inline constexpr uint16_t kMaxMirrors = 8;

}  // namespace hvswitch
