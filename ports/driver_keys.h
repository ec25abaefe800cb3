// The values of a port type's own spec keys (path=, queues=, devargs=, ...). The shared
// grammar (port_spec.cc) stores each as the key's parser wrote it once it was checked;
// the type's driver reads them back (ports/<type>/). So a new type's keys need no field
// in PortSpec, and the rest of hvswitch asks the driver (Traits, Devargs, ...) rather
// than reading a type's keys.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace hvswitch {

class DriverKeys {
 public:
  // Replaces an earlier value of `key`.
  void Set(absl::string_view key, absl::string_view value);
  // As if `key` was not given: what a key given at its default value stores, so that
  // equal specs hold equal keys however they were written.
  void Erase(absl::string_view key);
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }
  // The value as stored; `fallback` when the key was not given.
  absl::string_view Text(absl::string_view key, absl::string_view fallback = "") const;
  // A value its parser stored as a decimal number (StoreSpecNumber); `fallback` (the key's
  // default) if none.
  uint32_t Number(absl::string_view key, uint32_t fallback) const;
  // A value its parser stored as 0 or 1 (StoreSpecFlag); false if none.
  bool Flag(absl::string_view key) const { return Text(key) == "1"; }
  // The same keys with the same values, in whatever order they were given.
  bool operator==(const DriverKeys&) const = default;

 private:
  const std::string* Find(absl::string_view key) const;

  std::vector<std::pair<std::string, std::string>> values_;  // a handful, sorted by key
};

}  // namespace hvswitch
