#include "switch/control/mirrors.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

absl::Status MirrorError(absl::string_view name, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("mirror '", name, "': ", problem));
}

}  // namespace

Mirrors::~Mirrors() {
  // The bridge closes the ports (which may hold copies) before it lets go of this.
  if (datapath_.mirror_pool != nullptr) rte_mempool_free(datapath_.mirror_pool);
  datapath_.mirror_pool = nullptr;
}

int Mirrors::Find(absl::string_view name) const {
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s] && slots_[s]->spec.name == name) return static_cast<int>(s);
  }
  return -1;
}

absl::StatusOr<MirrorSession> Mirrors::Check(const MirrorSpec& spec, const FindPort& find) const {
  if (Find(spec.name) >= 0) return absl::AlreadyExistsError(absl::StrCat("mirror '", spec.name,
                                                                         "' exists already"));
  if (std::none_of(slots_.begin(), slots_.end(), [](const auto& s) { return !s; })) {
    return absl::ResourceExhaustedError(absl::StrCat("at most ", kMaxMirrors, " mirrors"));
  }
  uint64_t analysers = 0, sources = 0;
  for (const auto& slot : slots_) {
    if (!slot) continue;
    analysers |= uint64_t{1} << slot->session.to;
    sources |= slot->session.rx | slot->session.tx;
  }
  MirrorSession session;
  const int to = find(spec.to);
  if (to < 0) return MirrorError(spec.name, absl::StrCat("no port named '", spec.to, "'"));
  if ((sources >> to) & 1) {
    return MirrorError(spec.name, absl::StrCat("port '", spec.to, "' is mirrored by another "
                                               "mirror: it cannot take copies too"));
  }
  session.to = static_cast<uint16_t>(to);
  session.vlan = spec.vlan;
  for (const std::string& name : spec.from) {
    const int p = find(name);
    if (p < 0) return MirrorError(spec.name, absl::StrCat("no port named '", name, "'"));
    if ((analysers >> p) & 1) {
      return MirrorError(spec.name, absl::StrCat("port '", name, "' takes another mirror's "
                                                 "copies: it cannot be mirrored"));
    }
    if (p == to) return MirrorError(spec.name, "a port cannot be mirrored to itself");
    if (spec.rx) session.rx |= uint64_t{1} << p;
    if (spec.tx) session.tx |= uint64_t{1} << p;
  }
  return session;
}

absl::Status Mirrors::Add(const MirrorSpec& spec, const MirrorSession& session,
                          const std::function<MirrorTotals(int)>& counted) {
  const auto free_slot = std::find_if(slots_.begin(), slots_.end(), [](const auto& s) { return !s; });
  if (free_slot == slots_.end()) {
    return absl::ResourceExhaustedError(absl::StrCat("at most ", kMaxMirrors, " mirrors"));
  }
  if (datapath_.mirror_pool == nullptr) {
    // Sized for what can be in flight, not for a burst of sessions: the analyser's ring
    // and the workers' buffers; a copy that finds none is counted (failed), the frame goes on.
    datapath_.mirror_pool = rte_pktmbuf_pool_create("hvs_mirror", pool_size_, 256, 0,
                                                    RTE_MBUF_DEFAULT_BUF_SIZE,
                                                    static_cast<int>(rte_socket_id()));
    if (datapath_.mirror_pool == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "mirror '", spec.name, "': no memory for the mirror pool (", pool_size_,
          " buffers): ", rte_strerror(rte_errno)));
    }
  }
  const int s = static_cast<int>(free_slot - slots_.begin());
  const MirrorTotals base = counted(s);
  std::unique_lock lock(mu_);
  *free_slot = Slot{spec, session, base};
  return absl::OkStatus();
}

absl::Status Mirrors::Remove(absl::string_view name) {
  const int s = Find(name);
  if (s < 0) return absl::NotFoundError(absl::StrCat("no mirror named '", name, "'"));
  std::unique_lock lock(mu_);
  slots_[s].reset();
  return absl::OkStatus();
}

bool Mirrors::IsAnalyser(int slot) const {
  return std::any_of(slots_.begin(), slots_.end(),
                     [slot](const auto& s) { return s && s->session.to == slot; });
}

absl::StatusOr<std::vector<std::string>> Mirrors::PortRemoved(int slot, absl::string_view name) {
  for (const auto& s : slots_) {
    if (s && s->session.to == slot) {
      return absl::FailedPreconditionError(absl::StrCat(
          "port '", name, "' takes the copies of mirror '", s->spec.name,
          "': remove that first (hvswitchctl mirror del ", s->spec.name, ")"));
    }
  }
  std::vector<std::string> changes;
  const uint64_t bit = uint64_t{1} << slot;
  std::unique_lock lock(mu_);
  for (auto& s : slots_) {
    if (!s || !((s->session.rx | s->session.tx) & bit)) continue;
    s->session.rx &= ~bit;
    s->session.tx &= ~bit;
    std::erase(s->spec.from, std::string(name));
    if (s->session.active()) {
      changes.push_back(absl::StrCat("mirror '", s->spec.name, "': port '", name,
                                     "' no longer mirrored (removed)"));
    } else {
      changes.push_back(absl::StrCat("mirror '", s->spec.name, "': removed with port '", name,
                                     "', its last mirrored port"));
      s.reset();
    }
  }
  return changes;
}

void Mirrors::WriteTo(PortTable& table) const {
  for (size_t s = 0; s < slots_.size(); ++s) {
    table.mirrors[s] = slots_[s] ? slots_[s]->session : MirrorSession{};
  }
}

std::vector<MirrorSpec> Mirrors::Specs() const {
  std::vector<MirrorSpec> specs;
  for (const auto& s : slots_) {
    if (s) specs.push_back(s->spec);
  }
  return specs;
}

std::vector<MirrorSnapshot> Mirrors::Snapshot(
    const std::function<MirrorTotals(int)>& counted) const {
  std::vector<MirrorSnapshot> out;
  std::shared_lock lock(mu_);
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (!slots_[s]) continue;
    MirrorTotals counts = counted(static_cast<int>(s));
    counts -= slots_[s]->base;
    out.push_back({slots_[s]->spec, counts});
  }
  return out;
}

}  // namespace hvswitch
