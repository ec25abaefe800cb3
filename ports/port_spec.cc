#include "ports/port_spec.h"

#include <rte_ether.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ports/guard_keys.h"
#include "ports/spec_keys.h"

namespace hvswitch {

absl::StatusOr<std::vector<uint16_t>> ParseVlanList(absl::string_view text) {
  std::vector<bool> seen(4096);
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> range =
        absl::StrSplit(part, absl::MaxSplits('-', 1));
    uint32_t first = 0, last = 0;
    bool ok = absl::SimpleAtoi(range.first, &first);
    last = first;
    if (ok && !range.second.empty()) ok = absl::SimpleAtoi(range.second, &last);
    if (!ok || first < 1 || last > 4094 || last < first) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", part, "' is not a VLAN (1-4094) or a range of them"));
    }
    for (uint32_t v = first; v <= last; ++v) seen[v] = true;
  }
  std::vector<uint16_t> vlans;
  for (uint16_t v = 1; v < 4095; ++v) {
    if (seen[v]) vlans.push_back(v);
  }
  return vlans;
}

namespace {

// `10,20,30-40` back from ascending VLAN ids.
std::string VlanListString(const std::vector<uint16_t>& vlans) {
  std::string out;
  for (size_t i = 0; i < vlans.size();) {
    size_t j = i;
    while (j + 1 < vlans.size() && vlans[j + 1] == vlans[j] + 1) ++j;
    absl::StrAppend(&out, out.empty() ? "" : ",", vlans[i]);
    if (j > i) absl::StrAppend(&out, "-", vlans[j]);
    i = j + 1;
  }
  return out;
}


// "vhost-user, memif or dpdk".
std::string TypeList() {
  std::string out;
  const std::span<const PortDriver* const> drivers = PortDrivers();
  for (size_t i = 0; i < drivers.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : i + 1 == drivers.size() ? " or " : ", ",
                    drivers[i]->type());
  }
  return out;
}

// --- the keys every port type has ---

absl::Status ApplyType(absl::string_view value, PortSpec& spec) {
  spec.driver = FindPortDriver(value);
  if (spec.driver != nullptr) return absl::OkStatus();
  return SpecError(spec.name, absl::StrCat("unknown type '", value, "' (expected ", TypeList(), ")"));
}

absl::Status ApplyVlanKey(absl::string_view key, absl::string_view value, PortSpec& spec,
                          uint16_t& out) {
  uint32_t vlan = 0;
  absl::Status status = ParseSpecNumber(spec, key, value, "a VLAN", 1, 4094, vlan);
  if (status.ok()) out = static_cast<uint16_t>(vlan);
  return status;
}

absl::Status ApplyVlan(absl::string_view value, PortSpec& spec) {
  return ApplyVlanKey("vlan", value, spec, spec.access_vlan);
}

absl::Status ApplyNative(absl::string_view value, PortSpec& spec) {
  return ApplyVlanKey("native", value, spec, spec.native_vlan);
}

absl::Status ApplyTrunk(absl::string_view value, PortSpec& spec) {
  absl::StatusOr<std::vector<uint16_t>> vlans = ParseVlanList(value);
  if (!vlans.ok()) return SpecError(spec.name, absl::StrCat("trunk: ", vlans.status().message()));
  spec.trunk_vlans = *std::move(vlans);
  return absl::OkStatus();
}

absl::Status ApplyMtu(absl::string_view value, PortSpec& spec) {
  uint32_t mtu = 0;
  absl::Status status = ParseSpecNumber(spec, "mtu", value, "a number", kMinMtu, kMaxMtu, mtu);
  if (status.ok()) spec.mtu = static_cast<uint16_t>(mtu);
  return status;
}

absl::Status ApplyLearnLimit(absl::string_view value, PortSpec& spec) {
  uint32_t limit = 0;
  if (!absl::SimpleAtoi(value, &limit)) {
    return SpecError(spec.name, "learn_limit must be a number of MACs (0: no limit)");
  }
  spec.learn_limit = limit;
  return absl::OkStatus();
}

absl::Status ApplyMacs(absl::string_view value, PortSpec& spec) {
  for (absl::string_view text : absl::StrSplit(value, ',')) {
    rte_ether_addr addr;
    if (rte_ether_unformat_addr(std::string(text).c_str(), &addr) != 0 ||
        rte_is_multicast_ether_addr(&addr) || rte_is_zero_ether_addr(&addr)) {
      return SpecError(spec.name, absl::StrCat("mac: '", text, "' is not a unicast MAC"));
    }
    uint64_t key = 0;
    std::memcpy(&key, addr.addr_bytes, RTE_ETHER_ADDR_LEN);
    if (std::find(spec.allowed_macs.begin(), spec.allowed_macs.end(), key) ==
        spec.allowed_macs.end()) {
      spec.allowed_macs.push_back(key);
    }
  }
  if (spec.allowed_macs.size() > kMaxPortMacs) {
    return SpecError(spec.name, absl::StrCat("mac: at most ", kMaxPortMacs, " MACs"));
  }
  return absl::OkStatus();
}

absl::Status ApplyQuota(absl::string_view value, PortSpec& spec) {
  return ParseSpecNumber(spec, "quota", value, "a number of buffers", kMinQuota, kMaxQuota,
                         spec.quota);
}

absl::Status ApplyTxRetries(absl::string_view value, PortSpec& spec) {
  uint32_t retries = 0;
  absl::Status status =
      ParseSpecNumber(spec, "tx_retries", value, "a number", 0, kMaxTxRetries, retries);
  if (status.ok()) spec.tx_retries = static_cast<uint16_t>(retries);
  return status;
}

absl::Status ApplyLock(absl::string_view value, PortSpec& spec) {
  return ParseSpecFlag(spec, "lock", value, spec.lock_mac);
}

absl::Status ApplyMrouter(absl::string_view value, PortSpec& spec) {
  return ParseSpecFlag(spec, "mrouter", value, spec.mrouter);
}

constexpr SpecKey kSharedKeys[] = {
    {"type", ApplyType},   {"vlan", ApplyVlan}, {"native", ApplyNative},
    {"trunk", ApplyTrunk}, {"mtu", ApplyMtu},   {"learn_limit", ApplyLearnLimit},
    {"mac", ApplyMacs},    {"quota", ApplyQuota}, {"lock", ApplyLock},
    {"tx_retries", ApplyTxRetries}, {"mrouter", ApplyMrouter},
};

const SpecKey* FindKey(std::span<const SpecKey> keys, absl::string_view name) {
  for (const SpecKey& key : keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

// A key of a driver's own, from the spec's driver or, where type= has not come yet or
// names another type, from the first driver that has it ("does not apply" comes later).
// Rest-of-line keys are found only by SplitRestOfLine.
const SpecKey* FindDriverKey(const PortSpec& spec, absl::string_view name) {
  const SpecKey* key = nullptr;
  if (spec.driver != nullptr) key = FindKey(spec.driver->keys(), name);
  for (size_t d = 0; key == nullptr && d < PortDrivers().size(); ++d) {
    key = FindKey(PortDrivers()[d]->keys(), name);
  }
  return key != nullptr && !key->rest_of_line ? key : nullptr;
}

// A spec is one line: a control character (a newline in a path would start an option of
// its own in a saved configuration) or a space at either end never survives `config save`,
// so it is refused here, whoever gives it.
absl::Status RefuseUnsafeText(absl::string_view text) {
  if (text.empty()) return SpecError("", "empty port spec");
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return SpecError(text.substr(0, text.find(',')),
                       "control characters are not allowed in a port spec");
    }
  }
  if (text.front() == ' ' || text.back() == ' ') {
    return SpecError(text.substr(0, text.find(',')), "spaces at either end of the spec");
  }
  return absl::OkStatus();
}

// A rest-of-line key (devargs=) swallows the rest of the text, commas included: split off
// at its first occurrence before anything else is split.
struct RestOfLine {
  const SpecKey* key = nullptr;
  absl::string_view value;
};
RestOfLine SplitRestOfLine(absl::string_view& text) {
  RestOfLine rest;
  size_t first = absl::string_view::npos;
  for (const PortDriver* driver : PortDrivers()) {
    for (const SpecKey& key : driver->keys()) {
      const size_t at = key.rest_of_line ? text.find(absl::StrCat(",", key.name, "="))
                                         : absl::string_view::npos;
      if (at < first) {
        first = at;
        rest = {&key, text.substr(at + key.name.size() + 2)};
      }
    }
  }
  if (rest.key != nullptr) text = text.substr(0, first);
  return rest;
}

// Trunk, MAC, VTEP and IP lists have commas of their own (`trunk=10,20,30-40`, `mac=A,B`,
// `remote=IP,IP`, `ip=A,B/24`): fields without `=` continue the list before them.
// fields[0] is the name.
std::vector<std::string> SplitFields(absl::string_view text) {
  std::vector<absl::string_view> split = absl::StrSplit(text, ',');
  std::vector<std::string> fields = {std::string(split[0])};
  for (size_t i = 1; i < split.size(); ++i) {
    if (split[i].find('=') == absl::string_view::npos && i > 1 &&
        (absl::StartsWith(fields.back(), "trunk=") || absl::StartsWith(fields.back(), "mac=") ||
         absl::StartsWith(fields.back(), "remote=") || absl::StartsWith(fields.back(), "ip="))) {
      absl::StrAppend(&fields.back(), ",", split[i]);
    } else {
      fields.emplace_back(split[i]);
    }
  }
  return fields;
}

// `key=value`, the shared keys' and the drivers' alike: given once, known, valid.
absl::Status ApplyField(absl::string_view field, PortSpec& spec, KeysGiven& given) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(field, absl::MaxSplits('=', 1));
  const SpecKey* key = FindKey(std::span<const SpecKey>(kSharedKeys), kv.first);
  if (key == nullptr) key = FindKey(GuardKeys(), kv.first);
  if (key == nullptr) key = FindDriverKey(spec, kv.first);
  if (key == nullptr) return SpecError(spec.name, absl::StrCat("unknown key '", kv.first, "'"));
  // Every key takes a value: a bare `trunk` or `mac` would otherwise be an empty list that
  // counts as given (native= accepted without a VLAN to carry it; ToString's text then
  // does not parse, and a saved configuration would stop the next start).
  if (field.find('=') == absl::string_view::npos) {
    return SpecError(spec.name, absl::StrCat("key '", key->name, "' needs a value"));
  }
  if (!given.insert(key->name).second) {
    return SpecError(spec.name, absl::StrCat("key '", key->name, "' given twice"));
  }
  return key->apply(kv.second, spec);
}

// The shared keys' combinations, then the type's own checks, then any key of another
// type's (in driver order).
absl::Status CheckKeys(const PortSpec& spec, const KeysGiven& given) {
  const bool trunk = given.contains("trunk");
  if (given.contains("vlan") && trunk) {
    return SpecError(spec.name, "vlan= (access port) and trunk= exclude each other");
  }
  if (given.contains("native") && !trunk) return SpecError(spec.name, "native= needs trunk=");
  if (given.contains("mac") && spec.lock_mac) {
    return SpecError(spec.name, "mac= (fixed MACs) and lock=1 (the first MAC) exclude each other");
  }
  if (!given.contains("type")) {
    return SpecError(spec.name, absl::StrCat("missing type= (", TypeList(), ")"));
  }
  absl::Status status = CheckGuardKeys(spec, given);
  if (!status.ok()) return status;
  status = spec.driver->Check(spec, given);
  if (!status.ok()) return status;
  for (const PortDriver* other : PortDrivers()) {
    for (const SpecKey& key : other->keys()) {
      if (given.contains(key.name) && FindKey(spec.driver->keys(), key.name) == nullptr) {
        return SpecError(spec.name, absl::StrCat("key '", key.name, "' does not apply to type ",
                                            spec.type_name()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidPortName(absl::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  }
  return true;
}

uint32_t PortSpec::LearnLimit() const {
  return learn_limit.value_or(role() == PortRole::kGuest ? kDefaultGuestLearnLimit : 0);
}

std::string PortSpec::ToString() const {
  std::string out = absl::StrCat(name, ",type=", type_name());
  std::string tail;
  if (driver != nullptr) driver->AppendKeys(*this, out, tail);
  if (access_vlan != 0) absl::StrAppend(&out, ",vlan=", access_vlan);
  if (!trunk_vlans.empty()) absl::StrAppend(&out, ",trunk=", VlanListString(trunk_vlans));
  if (native_vlan != 0) absl::StrAppend(&out, ",native=", native_vlan);
  if (mtu != 1500) absl::StrAppend(&out, ",mtu=", mtu);
  if (learn_limit) absl::StrAppend(&out, ",learn_limit=", *learn_limit);
  for (size_t i = 0; i < allowed_macs.size(); ++i) {
    rte_ether_addr addr;
    std::memcpy(addr.addr_bytes, &allowed_macs[i], RTE_ETHER_ADDR_LEN);
    char text[RTE_ETHER_ADDR_FMT_SIZE];
    rte_ether_format_addr(text, sizeof(text), &addr);
    absl::StrAppend(&out, i == 0 ? ",mac=" : ",", absl::AsciiStrToLower(text));
  }
  if (lock_mac) absl::StrAppend(&out, ",lock=1");
  if (quota != 0) absl::StrAppend(&out, ",quota=", quota);
  if (tx_retries != kDefaultTxRetries) absl::StrAppend(&out, ",tx_retries=", tx_retries);
  if (mrouter) absl::StrAppend(&out, ",mrouter=1");
  AppendGuardKeys(guards, out);
  return out + tail;
}

absl::StatusOr<PortSpec> ParsePortSpec(absl::string_view text) {
  absl::Status status = RefuseUnsafeText(text);
  if (!status.ok()) return status;
  const RestOfLine rest = SplitRestOfLine(text);
  const std::vector<std::string> fields = SplitFields(text);
  PortSpec spec;
  spec.name = fields[0];
  if (!IsValidPortName(spec.name)) {
    return SpecError(spec.name, "name must be 1-32 characters of [A-Za-z0-9_.-]");
  }
  KeysGiven given;
  for (size_t i = 1; i < fields.size(); ++i) {
    status = ApplyField(fields[i], spec, given);
    if (!status.ok()) return status;
  }
  if (rest.key != nullptr) {
    given.insert(rest.key->name);
    status = rest.key->apply(rest.value, spec);
    if (!status.ok()) return status;
  }
  status = CheckKeys(spec, given);
  if (!status.ok()) return status;
  return spec;
}

}  // namespace hvswitch
