#include "switch/datapath/fdb.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {
absl::StatusOr<std::unique_ptr<Fdb>> Fdb::Create(const std::string& name, uint32_t capacity) {
  absl::StatusOr<std::unique_ptr<FdbTable>> table = FdbTable::Create(name, capacity);
  if (!table.ok()) return table.status();
  return std::unique_ptr<Fdb>(new Fdb(*std::move(table), capacity));
}

Fdb::Fdb(std::unique_ptr<FdbTable> table, uint32_t capacity)
    : table_(std::move(table)), capacity_(capacity), reserve_(ReserveFor(capacity)) {}

uint64_t Fdb::Resolve(const uint64_t* keys, const FdbTable::Probe* probes, uint32_t n,
                      uint16_t* ports, int32_t* positions) const {
  return table_->FindBulk(keys, probes, n,
                          [this, ports, positions](uint32_t i, int32_t position, uint32_t value) {
    const int port = CurrentPort(value);  // a flushed port's entry: a miss
    if (port < 0) return false;
    ports[i] = static_cast<uint16_t>(port);
    if (positions != nullptr) positions[i] = position;
    return true;
  });
}

uint64_t Fdb::LookupBulk(const uint64_t* keys, uint32_t n, uint16_t* ports,
                         int32_t* positions) const {
  FdbTable::Probe probes[kMaxBulk];
  for (uint32_t i = 0; i < n; ++i) probes[i] = table_->Prefetch(keys[i]);
  return Resolve(keys, probes, n, ports, positions);
}

int32_t Fdb::Insert(uint64_t key, uint32_t value, uint32_t now) {
  if (size_.load(std::memory_order_relaxed) >= capacity_) return -1;
  const int32_t position = table_->Insert(key, value, now);
  if (position < 0) return -1;
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return position;
}

void Fdb::Take(int port, bool flushed) {
  if (BeyondReserve(port)) ++beyond_reserve_;
  if (flushed) {
    ++flushed_[port];
  } else {
    learned_[port].store(learned(static_cast<uint16_t>(port)) + 1, std::memory_order_relaxed);
  }
}

void Fdb::Give(int port, bool flushed) {
  if (flushed) {
    --flushed_[port];
  } else {
    learned_[port].store(learned(static_cast<uint16_t>(port)) - 1, std::memory_order_relaxed);
  }
  if (BeyondReserve(port)) --beyond_reserve_;  // it was beyond by one more
}

LearnRoom Fdb::Room(uint16_t port, uint32_t limit) const {
  if (limit != 0 && learned(port) >= limit) return LearnRoom::kLimited;
  if (BeyondReserve(port) && SharedFull()) return LearnRoom::kFull;
  return LearnRoom::kYes;
}

LearnResult Fdb::Learn(uint64_t key, uint16_t port, uint32_t now, uint32_t limit) {
  const uint32_t value = Encode(port, generations_[port].load(std::memory_order_relaxed));
  const bool at_limit = limit != 0 && learned(port) >= limit;
  uint32_t old = 0;
  int32_t position = table_->Find(key, &old);
  if (position >= 0) {
    int current = CurrentPort(old);
    if (current == port) {
      table_->SetSeen(position, now);
      return LearnResult::kCurrent;
    }
    if (IsStatic(old)) return LearnResult::kStatic;
    if (at_limit) return LearnResult::kLimited;
    // The slot changes hands: from its owner (current, or flushed and not yet aged) to
    // `port`, which may need it from the shared rest.
    const int owner = OwnerPort(old);
    const bool flushed = current < 0;
    Give(owner, flushed);
    if (BeyondReserve(port) && SharedFull()) {
      Take(owner, flushed);
      return LearnResult::kFull;
    }
    Take(port, false);
    table_->SetSeen(position, now);
    table_->SetValue(position, value);
    Changed();
    // An entry of a flushed port is as good as absent: learning it again is not a move.
    return flushed ? LearnResult::kAdded : LearnResult::kMoved;
  }
  if (at_limit) return LearnResult::kLimited;
  if (BeyondReserve(port) && SharedFull()) return LearnResult::kFull;
  if (Insert(key, value, now) < 0) return LearnResult::kFull;
  Take(port, false);
  Changed();
  return LearnResult::kAdded;
}

absl::Status Fdb::AddStatic(uint64_t key, uint16_t port) {
  const absl::Status full = absl::ResourceExhaustedError(absl::StrCat(
      "FDB full (", capacity_, " entries, ", kMaxPorts * reserve_,
      " of them reserved for the ports' learned MACs): no room for a static entry"));
  const uint32_t value = Encode(port, 0) | kStaticBit;
  uint32_t old = 0;
  const int32_t position = table_->Find(key, &old);
  if (position < 0) {
    if (SharedFull()) return full;
    if (Insert(key, value, 0) < 0) return full;
  } else {
    if (IsStatic(old)) {
      AddStatics(-1);
    } else {
      // A learned (or flushed) entry becomes static: its slot moves to the shared rest.
      const int owner = OwnerPort(old);
      const bool flushed = CurrentPort(old) < 0;
      Give(owner, flushed);
      if (SharedFull()) {
        Take(owner, flushed);
        return full;
      }
    }
    table_->SetValue(position, value);
  }
  AddStatics(+1);
  Changed();
  return absl::OkStatus();
}

void Fdb::FlushPort(uint16_t port) {
  generations_[port].store(generations_[port].load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
  // Still in the table, and still the port's slots, until Age removes them.
  flushed_[port] += learned(port);
  learned_[port].store(0, std::memory_order_relaxed);
  Changed();
}

absl::Status Fdb::Remove(uint64_t key) {
  uint32_t value = 0;
  const int32_t position = table_->Find(key, &value);
  const int port = position >= 0 ? CurrentPort(value) : -1;
  if (port < 0) return absl::NotFoundError("no such entry");
  if (IsStatic(value)) {
    AddStatics(-1);
  } else {
    Give(port, false);
  }
  table_->Erase(position);
  size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  Changed();
  return absl::OkStatus();
}

void Fdb::ForEach(absl::FunctionRef<void(const FdbEntryView&)> fn) const {
  table_->Scan(0, table_->buckets(), [&](int32_t, uint64_t key, uint32_t value, uint32_t seen) {
    const int port = CurrentPort(value);
    if (port < 0) return;
    FdbEntryView view;
    view.key = key;
    view.port = static_cast<uint16_t>(port);
    view.is_static = IsStatic(value);
    view.last_seen = view.is_static ? 0 : seen;
    fn(view);
  });
}

AgeResult Fdb::AgeSlice(uint32_t now, uint32_t max_age, uint32_t buckets) {
  AgeResult result;
  uint32_t removed = 0;
  age_cursor_ = table_->Scan(age_cursor_, buckets,
                             [&](int32_t position, uint64_t, uint32_t value, uint32_t seen) {
    if (IsStatic(value)) return;
    const int port = CurrentPort(value);
    if (port < 0) {
      ++result.flushed;
    } else if (max_age != 0 && now - seen >= max_age) {
      ++result.aged;
    } else {
      return;
    }
    Give(OwnerPort(value), port < 0);
    table_->Erase(position);
    ++removed;
  });
  if (removed != 0) {
    size_.store(size_.load(std::memory_order_relaxed) - removed, std::memory_order_relaxed);
    Changed();
  }
  return result;
}

}  // namespace hvswitch
