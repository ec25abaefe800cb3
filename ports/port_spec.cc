#include "ports/port_spec.h"

#include <rte_ether.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace hvswitch {
namespace {

absl::Status PortError(absl::string_view name, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("port '", name, "': ", problem));
}

bool IsValidName(absl::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  }
  return true;
}

// `value` as a number from min to max; the error reads "KEY must be WHAT from MIN to MAX".
absl::Status ParseInRange(absl::string_view name, absl::string_view key,
                          absl::string_view value, absl::string_view what, uint32_t min,
                          uint32_t max, uint32_t& out) {
  if (absl::SimpleAtoi(value, &out) && out >= min && out <= max) return absl::OkStatus();
  return PortError(name, absl::StrCat(key, " must be ", what, " from ", min, " to ", max));
}

absl::StatusOr<PortType> ParseType(absl::string_view name, absl::string_view value) {
  if (value == "vhost-user") return PortType::kVhostUser;
  if (value == "memif") return PortType::kMemif;
  if (value == "dpdk") return PortType::kDpdk;
  return PortError(name, absl::StrCat("unknown type '", value,
                                      "' (expected vhost-user, memif or dpdk)"));
}

}  // namespace

absl::string_view PortTypeName(PortType type) {
  switch (type) {
    case PortType::kVhostUser: return "vhost-user";
    case PortType::kMemif: return "memif";
    case PortType::kDpdk: return "dpdk";
  }
  return "unknown";
}

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

}  // namespace

uint32_t PortSpec::LearnLimit() const {
  return learn_limit.value_or(type == PortType::kDpdk ? 0 : kDefaultGuestLearnLimit);
}

std::string PortSpec::ToString() const {
  std::string out = absl::StrCat(name, ",type=", PortTypeName(type));
  switch (type) {
    case PortType::kVhostUser:
      absl::StrAppend(&out, ",path=", path, client ? ",client=1" : "",
                      queues != 1 ? absl::StrCat(",queues=", queues) : "");
      break;
    case PortType::kMemif:
      absl::StrAppend(&out, ",path=", path, client ? ",client=1" : "",
                      zero_copy ? ",zero_copy=1" : "",
                      memif_id != 0 ? absl::StrCat(",id=", memif_id) : "");
      break;
    case PortType::kDpdk:
      break;
  }
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
  if (type == PortType::kDpdk) {
    if (queues != 1) absl::StrAppend(&out, ",queues=", queues);
    absl::StrAppend(&out, ",devargs=", devargs);
  }
  return out;
}

absl::StatusOr<PortSpec> ParsePortSpec(absl::string_view text) {
  PortSpec spec;
  // A spec is one line: a control character (a newline in a path would start an option
  // of its own in a saved configuration) or a space at either end never survives
  // `config save`, so it is refused here, whoever gives it.
  if (text.empty()) return PortError("", "empty port spec");
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return PortError(text.substr(0, text.find(',')),
                       "control characters are not allowed in a port spec");
    }
  }
  if (text.front() == ' ' || text.back() == ' ') {
    return PortError(text.substr(0, text.find(',')), "spaces at either end of the spec");
  }
  // devargs swallows the rest of the line, commas included, so split it off first.
  absl::string_view devargs;
  bool has_devargs = false;
  if (size_t at = text.find(",devargs="); at != absl::string_view::npos) {
    devargs = text.substr(at + 9);
    text = text.substr(0, at);
    has_devargs = true;
  }
  std::vector<absl::string_view> split = absl::StrSplit(text, ',');
  spec.name = std::string(split[0]);
  // Trunk and MAC lists have commas of their own (`trunk=10,20,30-40`, `mac=A,B`): fields
  // without `=` continue the list before them.
  std::vector<std::string> fields = {std::string(split[0])};
  for (size_t i = 1; i < split.size(); ++i) {
    if (split[i].find('=') == absl::string_view::npos && i > 1 &&
        (absl::StartsWith(fields.back(), "trunk=") || absl::StartsWith(fields.back(), "mac="))) {
      absl::StrAppend(&fields.back(), ",", split[i]);
    } else {
      fields.emplace_back(split[i]);
    }
  }
  if (!IsValidName(spec.name)) {
    return PortError(spec.name, "name must be 1-32 characters of [A-Za-z0-9_.-]");
  }

  bool has_type = false, has_path = false, has_client = false, has_queues = false,
       has_id = false, has_vlan = false, has_trunk = false, has_native = false,
       has_mtu = false, has_learn_limit = false, has_mac = false, has_lock = false,
       has_quota = false, has_zero_copy = false;
  for (size_t i = 1; i < fields.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(fields[i], absl::MaxSplits('=', 1));
    const absl::string_view key = kv.first, value = kv.second;
    auto once = [&](bool& seen) -> absl::Status {
      if (seen) return PortError(spec.name, absl::StrCat("key '", key, "' given twice"));
      seen = true;
      return absl::OkStatus();
    };
    absl::Status status;
    if (key == "type") {
      status = once(has_type);
      if (!status.ok()) return status;
      absl::StatusOr<PortType> type = ParseType(spec.name, value);
      if (!type.ok()) return type.status();
      spec.type = *type;
    } else if (key == "path") {
      status = once(has_path);
      if (!status.ok()) return status;
      if (value.empty()) return PortError(spec.name, "empty path");
      spec.path = std::string(value);
    } else if (key == "client") {
      status = once(has_client);
      if (!status.ok()) return status;
      if (value != "0" && value != "1") return PortError(spec.name, "client must be 0 or 1");
      spec.client = value == "1";
    } else if (key == "queues") {
      status = once(has_queues);
      if (!status.ok()) return status;
      uint32_t queues = 0;
      status = ParseInRange(spec.name, key, value, "a number", 1, kMaxQueuesPerPort, queues);
      if (!status.ok()) return status;
      spec.queues = static_cast<uint16_t>(queues);
    } else if (key == "id") {
      status = once(has_id);
      if (!status.ok()) return status;
      if (!absl::SimpleAtoi(value, &spec.memif_id)) {
        return PortError(spec.name, "id must be a non-negative number");
      }
    } else if (key == "vlan" || key == "native") {
      status = once(key == "vlan" ? has_vlan : has_native);
      if (!status.ok()) return status;
      uint32_t vlan = 0;
      status = ParseInRange(spec.name, key, value, "a VLAN", 1, 4094, vlan);
      if (!status.ok()) return status;
      (key == "vlan" ? spec.access_vlan : spec.native_vlan) = static_cast<uint16_t>(vlan);
    } else if (key == "trunk") {
      status = once(has_trunk);
      if (!status.ok()) return status;
      absl::StatusOr<std::vector<uint16_t>> vlans = ParseVlanList(value);
      if (!vlans.ok()) return PortError(spec.name, absl::StrCat("trunk: ", vlans.status().message()));
      spec.trunk_vlans = *std::move(vlans);
    } else if (key == "mtu") {
      status = once(has_mtu);
      if (!status.ok()) return status;
      uint32_t mtu = 0;
      status = ParseInRange(spec.name, key, value, "a number", kMinMtu, kMaxMtu, mtu);
      if (!status.ok()) return status;
      spec.mtu = static_cast<uint16_t>(mtu);
    } else if (key == "learn_limit") {
      status = once(has_learn_limit);
      if (!status.ok()) return status;
      uint32_t limit = 0;
      if (!absl::SimpleAtoi(value, &limit)) {
        return PortError(spec.name, "learn_limit must be a number of MACs (0: no limit)");
      }
      spec.learn_limit = limit;
    } else if (key == "mac") {
      status = once(has_mac);
      if (!status.ok()) return status;
      for (absl::string_view text : absl::StrSplit(value, ',')) {
        rte_ether_addr addr;
        if (rte_ether_unformat_addr(std::string(text).c_str(), &addr) != 0 ||
            rte_is_multicast_ether_addr(&addr) || rte_is_zero_ether_addr(&addr)) {
          return PortError(spec.name, absl::StrCat("mac: '", text, "' is not a unicast MAC"));
        }
        uint64_t key = 0;
        std::memcpy(&key, addr.addr_bytes, RTE_ETHER_ADDR_LEN);
        if (std::find(spec.allowed_macs.begin(), spec.allowed_macs.end(), key) ==
            spec.allowed_macs.end()) {
          spec.allowed_macs.push_back(key);
        }
      }
      if (spec.allowed_macs.size() > kMaxPortMacs) {
        return PortError(spec.name, absl::StrCat("mac: at most ", kMaxPortMacs, " MACs"));
      }
    } else if (key == "quota") {
      status = once(has_quota);
      if (!status.ok()) return status;
      status = ParseInRange(spec.name, key, value, "a number of buffers", kMinQuota, kMaxQuota,
                            spec.quota);
      if (!status.ok()) return status;
    } else if (key == "zero_copy") {
      status = once(has_zero_copy);
      if (!status.ok()) return status;
      if (value != "0" && value != "1") return PortError(spec.name, "zero_copy must be 0 or 1");
      spec.zero_copy = value == "1";
    } else if (key == "lock") {
      status = once(has_lock);
      if (!status.ok()) return status;
      if (value != "0" && value != "1") return PortError(spec.name, "lock must be 0 or 1");
      spec.lock_mac = value == "1";
    } else {
      return PortError(spec.name, absl::StrCat("unknown key '", key, "'"));
    }
  }
  if (has_vlan && has_trunk) {
    return PortError(spec.name, "vlan= (access port) and trunk= exclude each other");
  }
  if (has_native && !has_trunk) return PortError(spec.name, "native= needs trunk=");
  if (has_mac && spec.lock_mac) {
    return PortError(spec.name, "mac= (fixed MACs) and lock=1 (the first MAC) exclude each other");
  }

  if (!has_type) return PortError(spec.name, "missing type= (vhost-user, memif or dpdk)");
  auto not_for = [&](bool given, absl::string_view key) -> absl::Status {
    if (!given) return absl::OkStatus();
    return PortError(spec.name, absl::StrCat("key '", key, "' does not apply to type ",
                                             PortTypeName(spec.type)));
  };
  absl::Status status;
  switch (spec.type) {
    case PortType::kVhostUser:
      if (!has_path) return PortError(spec.name, "missing path= (the vhost-user socket)");
      if (!(status = not_for(has_id, "id")).ok()) return status;
      if (!(status = not_for(has_zero_copy, "zero_copy")).ok()) return status;
      if (!(status = not_for(has_devargs, "devargs")).ok()) return status;
      break;
    case PortType::kMemif:
      if (!has_path) return PortError(spec.name, "missing path= (the memif socket)");
      if (spec.zero_copy && !spec.client) {
        // DPDK's memif PMD shares the client's buffers only.
        return PortError(spec.name, "zero_copy=1 needs client=1 (the peer is the memif server)");
      }
      if (spec.zero_copy && spec.quota == 0) {
        // DPDK 22.11's memif PMD loses the buffers on a zero-copy port's receive ring at
        // every disconnect: they must come from the port's own pool, not the shared one.
        return PortError(spec.name, "zero_copy=1 needs quota=N (a pool of the port's own)");
      }
      if (!(status = not_for(has_queues, "queues")).ok()) return status;
      if (!(status = not_for(has_devargs, "devargs")).ok()) return status;
      break;
    case PortType::kDpdk:
      if (!has_devargs || devargs.empty()) {
        return PortError(spec.name, "missing devargs= (a PCI address or a DPDK vdev string)");
      }
      if (!(status = not_for(has_path, "path")).ok()) return status;
      if (!(status = not_for(has_client, "client")).ok()) return status;
      if (!(status = not_for(has_id, "id")).ok()) return status;
      if (!(status = not_for(has_zero_copy, "zero_copy")).ok()) return status;
      spec.devargs = std::string(devargs);
      break;
  }
  return spec;
}

}  // namespace hvswitch
