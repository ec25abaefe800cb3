// Sets of bridge ports as 64-bit masks: bit p stands for port p (kMaxPorts is 64).
#pragma once

#include <cstdint>

namespace hvswitch {

// Calls fn(p) for every port p in `mask`, lowest first.
template <typename Fn>
inline void ForEachBit(uint64_t mask, Fn&& fn) {
  for (; mask != 0; mask &= mask - 1) fn(static_cast<uint16_t>(__builtin_ctzll(mask)));
}

}  // namespace hvswitch
