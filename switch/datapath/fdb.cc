#include "switch/datapath/fdb.h"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {

absl::StatusOr<std::unique_ptr<Fdb>> Fdb::Create(const std::string& name, uint32_t capacity) {
  rte_hash_parameters params{};
  params.name = name.c_str();
  params.entries = capacity;
  params.key_len = sizeof(uint64_t);
  params.hash_func = rte_hash_crc;
  params.socket_id = static_cast<int>(rte_socket_id());
  // Lock-free readers with a single writer (deleted positions are freed by us, after the
  // readers' grace period); the extendable table keeps inserts from failing on a full
  // bucket before `capacity` is reached.
  params.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
  rte_hash* hash = rte_hash_create(&params);
  if (hash == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot create FDB of ", capacity, " entries: ", rte_strerror(rte_errno)));
  }
  return std::unique_ptr<Fdb>(new Fdb(hash, capacity, rte_hash_max_key_id(hash) + 1));
}

Fdb::Fdb(rte_hash* hash, uint32_t capacity, uint32_t slots)
    : hash_(hash), capacity_(capacity), reserve_(ReserveFor(capacity)),
      entries_(std::make_unique<Entry[]>(slots)) {}

Fdb::~Fdb() { rte_hash_free(hash_); }

uint64_t Fdb::LookupBulk(const uint64_t* keys, uint32_t n, uint16_t* ports,
                         int32_t* positions) const {
  const void* key_ptrs[kMaxBulk];
  int32_t found[kMaxBulk];
  for (uint32_t i = 0; i < n; ++i) key_ptrs[i] = &keys[i];
  rte_hash_lookup_bulk(hash_, key_ptrs, n, found);
  uint64_t hits = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (found[i] < 0) continue;
    int port = CurrentPort(entries_[found[i]].value.load(std::memory_order_acquire));
    if (port < 0) continue;
    hits |= uint64_t{1} << i;
    ports[i] = static_cast<uint16_t>(port);
    if (positions != nullptr) positions[i] = found[i];
  }
  return hits;
}

int32_t Fdb::Insert(uint64_t key) {
  if (size_.load(std::memory_order_relaxed) >= capacity_) return -1;
  int32_t position = rte_hash_add_key(hash_, &key);
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
  const uint64_t value = Encode(port, generations_[port].load(std::memory_order_relaxed));
  const bool at_limit = limit != 0 && learned(port) >= limit;
  int32_t position = rte_hash_lookup(hash_, &key);
  if (position >= 0) {
    Entry& entry = entries_[position];
    uint64_t old = entry.value.load(std::memory_order_relaxed);
    int current = CurrentPort(old);
    if (current == port) {
      entry.last_seen.store(now, std::memory_order_relaxed);
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
    entry.last_seen.store(now, std::memory_order_relaxed);
    entry.value.store(value, std::memory_order_release);
    Changed();
    // An entry of a flushed port is as good as absent: learning it again is not a move.
    return flushed ? LearnResult::kAdded : LearnResult::kMoved;
  }
  if (at_limit) return LearnResult::kLimited;
  if (BeyondReserve(port) && SharedFull()) return LearnResult::kFull;
  position = Insert(key);
  if (position < 0) return LearnResult::kFull;
  Take(port, false);
  // Until this store a reader finding the new key sees an empty entry: a miss.
  entries_[position].last_seen.store(now, std::memory_order_relaxed);
  entries_[position].value.store(value, std::memory_order_release);
  Changed();
  return LearnResult::kAdded;
}

absl::Status Fdb::AddStatic(uint64_t key, uint16_t port) {
  const absl::Status full = absl::ResourceExhaustedError(absl::StrCat(
      "FDB full (", capacity_, " entries, ", kMaxPorts * reserve_,
      " of them reserved for the ports' learned MACs): no room for a static entry"));
  int32_t position = rte_hash_lookup(hash_, &key);
  if (position < 0) {
    if (SharedFull()) return full;
    position = Insert(key);
    if (position < 0) return full;
  } else {
    const uint64_t old = entries_[position].value.load(std::memory_order_relaxed);
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
  }
  entries_[position].value.store(Encode(port, 0) | kStaticBit, std::memory_order_release);
  AddStatics(+1);
  Changed();
  return absl::OkStatus();
}

void Fdb::FlushPort(uint16_t port) {
  generations_[port].store(generations_[port].load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
  // Still in the hash, and still the port's slots, until Age removes them.
  flushed_[port] += learned(port);
  learned_[port].store(0, std::memory_order_relaxed);
  Changed();
}

absl::Status Fdb::Remove(uint64_t key, absl::FunctionRef<void()> wait_for_readers) {
  int32_t position = rte_hash_lookup(hash_, &key);
  if (position < 0) return absl::NotFoundError("no such entry");
  const uint64_t value = entries_[position].value.load(std::memory_order_relaxed);
  const int port = CurrentPort(value);
  if (port < 0) return absl::NotFoundError("no such entry");
  if (IsStatic(value)) {
    AddStatics(-1);
  } else {
    Give(port, false);
  }
  rte_hash_del_key(hash_, &key);
  Changed();
  wait_for_readers();
  entries_[position].value.store(0, std::memory_order_relaxed);
  rte_hash_free_key_with_position(hash_, position);
  size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  return absl::OkStatus();
}

void Fdb::ForEach(absl::FunctionRef<void(const FdbEntryView&)> fn) const {
  const void* key = nullptr;
  void* data = nullptr;
  uint32_t next = 0;
  for (int32_t position; (position = rte_hash_iterate(hash_, &key, &data, &next)) >= 0;) {
    const Entry& entry = entries_[position];
    const uint64_t value = entry.value.load(std::memory_order_relaxed);
    const int port = CurrentPort(value);
    if (port < 0) continue;
    FdbEntryView view;
    view.key = *static_cast<const uint64_t*>(key);
    view.port = static_cast<uint16_t>(port);
    view.is_static = IsStatic(value);
    view.last_seen = view.is_static ? 0 : entry.last_seen.load(std::memory_order_relaxed);
    fn(view);
  }
}

AgeResult Fdb::Age(uint32_t now, uint32_t max_age, absl::FunctionRef<void()> wait_for_readers) {
  AgeResult result;
  struct Doomed {
    uint64_t key;
    int port;      // its owner
    bool flushed;  // else aged
  };
  std::vector<Doomed> doomed;
  const void* key = nullptr;
  void* data = nullptr;
  uint32_t next = 0;
  for (int32_t position; (position = rte_hash_iterate(hash_, &key, &data, &next)) >= 0;) {
    const Entry& entry = entries_[position];
    uint64_t value = entry.value.load(std::memory_order_relaxed);
    int port = CurrentPort(value);
    if (IsStatic(value)) continue;
    if (port < 0) {
      ++result.flushed;
    } else if (max_age != 0 && now - entry.last_seen.load(std::memory_order_relaxed) >= max_age) {
      ++result.aged;
    } else {
      continue;
    }
    doomed.push_back({*static_cast<const uint64_t*>(key), OwnerPort(value), port < 0});
  }
  if (doomed.empty()) return result;
  std::vector<int32_t> freed;
  for (const Doomed& d : doomed) {
    int32_t position = rte_hash_del_key(hash_, &d.key);
    if (position < 0) continue;
    freed.push_back(position);
    Give(d.port, d.flushed);
  }
  Changed();  // before the grace period: no reader keeps using a removed entry past it
  wait_for_readers();
  for (int32_t position : freed) {
    entries_[position].value.store(0, std::memory_order_relaxed);
    rte_hash_free_key_with_position(hash_, position);
  }
  size_.store(size_.load(std::memory_order_relaxed) - static_cast<uint32_t>(freed.size()),
              std::memory_order_relaxed);
  return result;
}

}  // namespace hvswitch
