#include "switch/fdb.h"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hvswitch {
namespace {

// The table stores the port as the data pointer's value, offset by one so that a stored
// entry is never a null pointer.
void* EncodePort(uint16_t port) { return reinterpret_cast<void*>(uintptr_t{port} + 1); }
uint16_t DecodePort(void* data) {
  return static_cast<uint16_t>(reinterpret_cast<uintptr_t>(data) - 1);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Fdb>> Fdb::Create(const std::string& name, uint32_t capacity) {
  rte_hash_parameters params{};
  params.name = name.c_str();
  params.entries = capacity;
  params.key_len = sizeof(uint64_t);
  params.hash_func = rte_hash_crc;
  params.socket_id = static_cast<int>(rte_socket_id());
  // Lock-free readers with a single writer; the extendable table keeps inserts from
  // failing on a full bucket before `capacity` is reached.
  params.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
  rte_hash* hash = rte_hash_create(&params);
  if (hash == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot create FDB of ", capacity, " entries: ", rte_strerror(rte_errno)));
  }
  return std::unique_ptr<Fdb>(new Fdb(hash, capacity));
}

Fdb::~Fdb() { rte_hash_free(hash_); }

uint64_t Fdb::LookupBulk(const uint64_t* keys, uint32_t n, uint16_t* ports) const {
  const void* key_ptrs[kMaxBulk];
  void* data[kMaxBulk];
  for (uint32_t i = 0; i < n; ++i) key_ptrs[i] = &keys[i];
  uint64_t hits = 0;
  rte_hash_lookup_bulk_data(hash_, key_ptrs, n, &hits, data);
  for (uint64_t m = hits; m != 0; m &= m - 1) {
    unsigned i = static_cast<unsigned>(__builtin_ctzll(m));
    ports[i] = DecodePort(data[i]);
  }
  return hits;
}

LearnResult Fdb::Learn(uint64_t key, uint16_t port) {
  void* data = nullptr;
  bool existed = rte_hash_lookup_data(hash_, &key, &data) >= 0;
  if (existed && DecodePort(data) == port) return LearnResult::kCurrent;
  if (!existed && size_.load(std::memory_order_relaxed) >= capacity_) return LearnResult::kFull;
  // On an existing key this replaces the data atomically for lock-free readers.
  if (rte_hash_add_key_data(hash_, &key, EncodePort(port)) < 0) return LearnResult::kFull;
  if (existed) return LearnResult::kMoved;
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return LearnResult::kAdded;
}

}  // namespace hvswitch
