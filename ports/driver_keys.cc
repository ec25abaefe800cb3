#include "ports/driver_keys.h"

#include <algorithm>

#include "absl/strings/numbers.h"

namespace hvswitch {

const std::string* DriverKeys::Find(absl::string_view key) const {
  for (const auto& [name, value] : values_) {
    if (name == key) return &value;
  }
  return nullptr;
}

void DriverKeys::Set(absl::string_view key, absl::string_view value) {
  auto at = std::lower_bound(values_.begin(), values_.end(), key,
                             [](const auto& entry, absl::string_view k) { return entry.first < k; });
  if (at != values_.end() && at->first == key) {
    at->second = std::string(value);
  } else {
    values_.emplace(at, std::string(key), std::string(value));
  }
}

void DriverKeys::Erase(absl::string_view key) {
  std::erase_if(values_, [key](const auto& entry) { return entry.first == key; });
}

absl::string_view DriverKeys::Text(absl::string_view key, absl::string_view fallback) const {
  const std::string* value = Find(key);
  return value != nullptr ? absl::string_view(*value) : fallback;
}

uint32_t DriverKeys::Number(absl::string_view key, uint32_t fallback) const {
  const std::string* value = Find(key);
  uint32_t number = 0;
  return value != nullptr && absl::SimpleAtoi(*value, &number) ? number : fallback;
}

}  // namespace hvswitch
