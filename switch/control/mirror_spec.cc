#include "switch/control/mirror_spec.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ports/port_spec.h"

namespace hvswitch {
namespace {

absl::Status MirrorError(absl::string_view name, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("mirror '", name, "': ", problem));
}

absl::Status SetDirection(MirrorSpec& spec, absl::string_view text) {
  if (text != "rx" && text != "tx" && text != "both") {
    return MirrorError(spec.name, absl::StrCat("direction must be rx, tx or both, not '", text,
                                               "'"));
  }
  spec.rx = text != "tx";
  spec.tx = text != "rx";
  return absl::OkStatus();
}

absl::Status SetVlan(MirrorSpec& spec, absl::string_view text) {
  uint32_t vlan = 0;
  if (!absl::SimpleAtoi(text, &vlan) || vlan < 1 || vlan > 4094) {
    return MirrorError(spec.name, absl::StrCat("vlan must be 1-4094, not '", text, "'"));
  }
  spec.vlan = static_cast<uint16_t>(vlan);
  return absl::OkStatus();
}

absl::Status AddSource(MirrorSpec& spec, absl::string_view port) {
  if (!IsValidPortName(port)) {
    return MirrorError(spec.name, absl::StrCat("'", port, "' is not a port name"));
  }
  if (std::find(spec.from.begin(), spec.from.end(), port) != spec.from.end()) {
    return MirrorError(spec.name, absl::StrCat("port '", port, "' given twice"));
  }
  if (spec.from.size() == kMaxMirrorSources) {
    return MirrorError(spec.name, absl::StrCat("at most ", kMaxMirrorSources, " ports"));
  }
  spec.from.emplace_back(port);
  return absl::OkStatus();
}

// What every spec needs, however it was written.
absl::Status Complete(const MirrorSpec& spec) {
  if (spec.from.empty()) return MirrorError(spec.name, "needs the ports to mirror (from)");
  if (spec.to.empty()) return MirrorError(spec.name, "needs the port the copies go to (to)");
  if (!IsValidPortName(spec.to)) {
    return MirrorError(spec.name, absl::StrCat("'", spec.to, "' is not a port name"));
  }
  if (std::find(spec.from.begin(), spec.from.end(), spec.to) != spec.from.end()) {
    return MirrorError(spec.name, absl::StrCat("port '", spec.to,
                                               "' cannot be mirrored to itself"));
  }
  return absl::OkStatus();
}

absl::Status CheckName(absl::string_view name) {
  if (!IsValidPortName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mirror '", name, "': name must be 1-32 characters of [A-Za-z0-9_.-]"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string MirrorSpec::ToString() const {
  std::string out = absl::StrCat(name, ",from=", absl::StrJoin(from, ","), ",to=", to);
  if (!(rx && tx)) absl::StrAppend(&out, ",direction=", direction());
  if (vlan != 0) absl::StrAppend(&out, ",vlan=", vlan);
  return out;
}

absl::StatusOr<MirrorSpec> ParseMirrorSpec(absl::string_view text) {
  const std::vector<absl::string_view> fields = absl::StrSplit(text, ',');
  MirrorSpec spec;
  spec.name = std::string(fields[0]);
  if (absl::Status named = CheckName(spec.name); !named.ok()) return named;
  bool in_from = false;  // a field without `=` continues the from= list
  std::vector<absl::string_view> given;
  for (size_t i = 1; i < fields.size(); ++i) {
    const absl::string_view field = fields[i];
    const size_t eq = field.find('=');
    if (eq == absl::string_view::npos && in_from) {
      if (absl::Status added = AddSource(spec, field); !added.ok()) return added;
      continue;
    }
    if (eq == absl::string_view::npos) {
      return MirrorError(spec.name, absl::StrCat("'", field, "' is not KEY=VALUE"));
    }
    const absl::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (std::find(given.begin(), given.end(), key) != given.end()) {
      return MirrorError(spec.name, absl::StrCat("key '", key, "' given twice"));
    }
    given.push_back(key);
    in_from = key == "from";
    absl::Status status;
    if (key == "from") {
      status = AddSource(spec, value);
    } else if (key == "to") {
      spec.to = std::string(value);
    } else if (key == "direction") {
      status = SetDirection(spec, value);
    } else if (key == "vlan") {
      status = SetVlan(spec, value);
    } else {
      status = MirrorError(spec.name, absl::StrCat("unknown key '", key,
                                                   "' (from, to, direction, vlan)"));
    }
    if (!status.ok()) return status;
  }
  if (absl::Status complete = Complete(spec); !complete.ok()) return complete;
  return spec;
}

absl::StatusOr<MirrorSpec> MirrorSpecFromWords(absl::string_view name, absl::string_view from,
                                               absl::string_view to,
                                               const std::optional<std::string>& direction,
                                               const std::optional<std::string>& vlan) {
  MirrorSpec spec;
  spec.name = std::string(name);
  if (absl::Status named = CheckName(spec.name); !named.ok()) return named;
  for (absl::string_view port : absl::StrSplit(from, ',')) {
    if (absl::Status added = AddSource(spec, port); !added.ok()) return added;
  }
  spec.to = std::string(to);
  if (direction) {
    if (absl::Status set = SetDirection(spec, *direction); !set.ok()) return set;
  }
  if (vlan) {
    if (absl::Status set = SetVlan(spec, *vlan); !set.ok()) return set;
  }
  if (absl::Status complete = Complete(spec); !complete.ok()) return complete;
  return spec;
}

}  // namespace hvswitch
