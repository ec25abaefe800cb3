#include "switch/control/learner.h"

#include <algorithm>
#include <utility>

#include "switch/control/log.h"
#include "switch/datapath/mac_key.h"

namespace hvswitch {

Learner::Learner(Fdb& fdb, Datapath& datapath, std::vector<LearnQueue*> queues)
    : fdb_(fdb), datapath_(datapath), queues_(std::move(queues)) {}

void Learner::AddPort(uint16_t port, const PortSpec& spec) {
  ports_[port] = {spec.name, spec.LearnLimit(), spec.lock_mac};
  present_ |= uint64_t{1} << port;
  if (spec.lock_mac) {
    ArmLock(port);
  } else {
    PublishAllowedMacs(port, spec.allowed_macs);
  }
}

void Learner::RemovePort(uint16_t port) {
  // Learn requests the workers made before: applied now, then flushed with the rest.
  ApplyLearnRequests(datapath_.now_seconds.load(std::memory_order_relaxed));
  fdb_.FlushPort(port);
  // Collected first: the table is not changed while it is walked.
  std::vector<uint64_t> statics;
  fdb_.ForEach([&](const FdbEntryView& e) {
    if (e.port == port && e.is_static) statics.push_back(e.key);
  });
  for (uint64_t key : statics) (void)fdb_.Remove(key);
  UpdateLearnLimits();
  PublishAllowedMacs(port, {});
  const uint64_t keep = ~(uint64_t{1} << port);
  lock_armed_ &= keep;
  present_ &= keep;
}

void Learner::PortDown(uint16_t port) {
  fdb_.FlushPort(port);
  if (!ports_[port].lock_mac) return;
  const PortMacs& macs = datapath_.port_macs[port];
  const bool held = !macs.Armed() || macs.claim.load(std::memory_order_relaxed) != 0;
  ArmLock(port);  // the next guest locks anew
  if (held) Log("port '%s': MAC lock released", ports_[port].name);
}

void Learner::Flush(int port) {
  for (uint64_t present = present_; present != 0; present &= present - 1) {
    const int p = __builtin_ctzll(present);
    if (port < 0 || port == p) fdb_.FlushPort(static_cast<uint16_t>(p));
  }
}

ControlClock::duration Learner::Poll(uint32_t now) {
  PublishLockClaims();
  const ControlClock::duration again = ApplyLearnRequests(now);
  UpdateLearnLimits();
  return again;
}

void Learner::AgeSlice(uint32_t now, uint32_t max_age, uint32_t buckets) {
  AgeResult aged = fdb_.AgeSlice(now, max_age, buckets);
  if (aged.aged + aged.flushed == 0) return;
  Count(SwitchStat::kFdbAged, aged.aged);
  Count(SwitchStat::kFdbFlushed, aged.flushed);
  UpdateLearnLimits();
}

void Learner::AgeTick(uint32_t now, uint32_t max_age, uint32_t ticks_per_second) {
  uint64_t pass_seconds = 1;  // 64 bits: ticks x max_age / 8 overflows 32 for a huge ageing
  if (!fdb_.HasFlushed()) {
    if (max_age == 0) return;
    pass_seconds = std::max(1u, max_age / 8);
  }
  AgeSlice(now, max_age,
           static_cast<uint32_t>(fdb_.buckets() / (ticks_per_second * pass_seconds) + 1));
}

absl::Status Learner::AddStatic(uint64_t key, uint16_t port) { return fdb_.AddStatic(key, port); }

std::vector<FdbEntryView> Learner::Entries() const {
  std::vector<FdbEntryView> entries;
  fdb_.ForEach([&](const FdbEntryView& e) { entries.push_back(e); });
  return entries;
}

absl::Status Learner::Remove(uint64_t key) { return fdb_.Remove(key); }

void Learner::AddRefusals(uint16_t port, PortTotals& totals) const {
  totals[PortCounter::kLearnLimited] += learn_refused_[port].load(std::memory_order_relaxed);
  totals[PortCounter::kLearnTableFull] +=
      learn_full_refused_[port].load(std::memory_order_relaxed);
}

// Moves are logged, at most 10 lines a second: a loop can move a MAC thousands of
// times a second, and the counter tells the rate.
void Learner::LogMove(uint64_t key, uint16_t to_port, uint32_t now) {
  if (now != move_log_second_) {
    move_log_second_ = now;
    move_logs_this_second_ = 0;
  }
  if (++move_logs_this_second_ > 10) return;
  Log("fdb: %s (vlan %d) moved to port '%s'", KeyMacString(key), KeyVlan(key),
      ports_[to_port].name);
}

void Learner::PublishAllowedMacs(uint16_t port, const std::vector<uint64_t>& macs) {
  datapath_.port_macs[port].Set(macs);
  const uint64_t bit = uint64_t{1} << port;
  secured_ports_ = macs.empty() ? secured_ports_ & ~bit : secured_ports_ | bit;
}

void Learner::ArmLock(uint16_t port) {
  datapath_.port_macs[port].ArmLock();
  secured_ports_ &= ~(uint64_t{1} << port);
  lock_armed_ |= uint64_t{1} << port;
}

void Learner::PublishLockClaim(uint16_t port) {
  const uint64_t mac = datapath_.port_macs[port].PublishClaim();
  if (mac == 0) return;
  secured_ports_ |= uint64_t{1} << port;
  lock_armed_ &= ~(uint64_t{1} << port);
  Log("port '%s': locked to %s", ports_[port].name, KeyMacString(mac));
}

void Learner::PublishLockClaims() {
  for (uint64_t armed = lock_armed_; armed != 0; armed &= armed - 1) {
    PublishLockClaim(static_cast<uint16_t>(__builtin_ctzll(armed)));
  }
}

bool Learner::SecurityAllowsLearn(uint64_t key, uint16_t port) {
  const uint64_t mac = KeyMac(key);
  PortMacs& allowed = datapath_.port_macs[port];
  // A worker claimed the lock before asking: the claim is the port's MAC from now on.
  if ((lock_armed_ >> port) & 1) PublishLockClaim(port);
  const uint32_t n = allowed.count.load(std::memory_order_relaxed);
  if (n != 0 && !allowed.Allows(mac, n)) return false;
  // Another port's own MAC may only be at stake where some other port is secured: no
  // second lookup per learn request on a switch without port security.
  if ((secured_ports_ & ~(uint64_t{1} << port)) == 0) return true;
  uint16_t owner = 0;
  if ((fdb_.LookupBulk(&key, 1, &owner) & 1) && owner != port &&
      ((datapath_.up_mask.load(std::memory_order_relaxed) >> owner) & 1)) {
    const PortMacs& owners = datapath_.port_macs[owner];
    const uint32_t owner_n = owners.count.load(std::memory_order_relaxed);
    if (owner_n != 0 && owners.Allows(mac, owner_n)) {
      Count(SwitchStat::kFdbLockedRefused);
      return false;
    }
  }
  return true;
}

ControlClock::duration Learner::ApplyLearnRequests(uint32_t now) {
  LearnRequest requests[256];
  ControlClock::duration again = ControlClock::duration::max();
  for (LearnQueue* queue : queues_) {
    // Everything the worker asked since the last look (up to a ring's worth, so that a
    // worker that keeps asking cannot keep the control thread here): learning keeps up
    // with new sources arriving at millions a second.
    unsigned drained = 0;
    for (unsigned n; drained < LearnQueue::kRingSize && (n = queue->Drain(requests, 256)) != 0;
         drained += n) {
      ApplyLearnRequests(requests, n, now);
    }
    if (drained >= LearnQueue::kRingSize) {
      again = ControlClock::duration::zero();
    } else if (drained > 0) {
      // Learning is under way: looked at again in a millisecond, or when half full.
      if (!queue->ArmWakeup(queue->capacity() / 2)) again = ControlClock::duration::zero();
      again = std::min<ControlClock::duration>(again, std::chrono::milliseconds(1));
    } else if (!queue->ArmWakeup(queue->capacity())) {
      again = ControlClock::duration::zero();  // a request came since the drain
    }
  }
  return again;
}

void Learner::ApplyLearnRequests(const LearnRequest* requests, unsigned n, uint32_t now) {
  for (unsigned i = 0; i < n; ++i) {
    uint16_t port = static_cast<uint16_t>(requests[i].port);
    // A request from a port removed meanwhile.
    if (!((present_ >> port) & 1) || !SecurityAllowsLearn(requests[i].key, port)) continue;
    Apply(requests[i].key, port, now, requests[i].frames);
  }
}

void Learner::Apply(uint64_t key, uint16_t port, uint32_t now, uint32_t frames) {
  switch (fdb_.Learn(key, port, now, ports_[port].learn_limit)) {
    case LearnResult::kAdded:
      Count(SwitchStat::kFdbLearned);
      break;
    case LearnResult::kMoved:
      Count(SwitchStat::kFdbMoves);
      LogMove(key, port, now);
      break;
    case LearnResult::kLimited:
      learn_refused_[port].fetch_add(frames, std::memory_order_relaxed);
      break;
    case LearnResult::kStatic:
      Count(SwitchStat::kFdbStaticRefused);
      break;
    case LearnResult::kFull:
      learn_full_refused_[port].fetch_add(frames, std::memory_order_relaxed);
      break;
    case LearnResult::kCurrent:
      break;
  }
}

// Workers stop asking to learn on a port at its limit, or beyond its reserve of a full
// table (and count the frames instead), so that a guest flooding new source MACs costs the
// control thread nothing and cannot fill the learn rings that other ports' requests share.
void Learner::UpdateLearnLimits() {
  uint64_t blocked = 0, full = 0;
  for (uint64_t present = present_; present != 0; present &= present - 1) {
    const uint16_t p = static_cast<uint16_t>(__builtin_ctzll(present));
    switch (fdb_.Room(p, ports_[p].learn_limit)) {
      case LearnRoom::kYes:
        break;
      case LearnRoom::kFull:
        full |= uint64_t{1} << p;
        [[fallthrough]];
      case LearnRoom::kLimited:
        blocked |= uint64_t{1} << p;
        break;
    }
  }
  // The reason first: a worker seeing the bit in learn_blocked_mask reads it next.
  datapath_.learn_full_mask.store(full, std::memory_order_relaxed);
  datapath_.learn_blocked_mask.store(blocked, std::memory_order_relaxed);
}

}  // namespace hvswitch
