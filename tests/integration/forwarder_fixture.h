// ForwarderTest: one Forwarder over four net_ring ports, the test playing the control
// thread (a Learner applies the learn requests after every burst), with the reference
// model's port configuration from a spec. Shared by forwarder_test.cc and guards_test.cc.
#pragma once

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ports/port_spec.h"
#include "switch/control/learner.h"
#include "switch/datapath/fdb.h"
#include "switch/datapath/forwarder.h"
#include "switch/datapath/learn_queue.h"
#include "switch/datapath/port_guards.h"
#include "tests/integration/ring_port.h"
#include "tests/model/bridge_model.h"

namespace hvswitch {

using testing::MakeFrame;
using testing::ParseFrame;
using testing::RingPort;
using testing::TestFrame;

constexpr uint16_t kPorts = 4;
constexpr uint64_t kA = 0x0a0000000002, kB = 0x0b0000000002, kC = 0x0c0000000002,
                   kBcast = 0xffffffffffff;

inline model::PortConfig ModelConfig(const PortSpec& spec) {
  model::PortConfig c;
  c.access = spec.access_vlan;
  c.trunk.insert(spec.trunk_vlans.begin(), spec.trunk_vlans.end());
  c.native = spec.native_vlan;
  c.mtu = spec.mtu;
  c.learn_limit = spec.LearnLimit();
  c.allowed.insert(spec.allowed_macs.begin(), spec.allowed_macs.end());
  c.lock = spec.lock_mac;
  // Meters as the tests freeze them (ForwarderTest::FreezeMeters): buckets of their burst.
  const GuardSpec& g = spec.guards;
  if (g.police_pps != 0) {
    c.police_frames = g.police_pps_burst != 0 ? g.police_pps_burst : DefaultPacketBurst(g.police_pps);
  }
  if (g.police_bps != 0) {
    c.police_bytes = g.police_bps_burst != 0 ? g.police_bps_burst : DefaultByteBurst(g.police_bps);
  }
  for (size_t k = 0; k < kStormClasses; ++k) {
    if (g.storm[k] != 0) c.storm[k] = DefaultPacketBurst(g.storm[k]);
  }
  c.bpdu_guard = g.bpdu_guard;
  for (const IpPrefix& prefix : g.ips) {  // the model knows IPv4 addresses, not prefixes
    uint32_t addr;
    std::memcpy(&addr, prefix.addr.data(), 4);
    if (!prefix.v6 && prefix.length == 32) c.ips4.insert(addr);
  }
  c.ip_learn = g.ip_learn;
  return c;
}

class ForwarderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int instance = 0;
    name_ = "fwd" + std::to_string(++instance);
    pool_ = rte_pktmbuf_pool_create((name_ + "pool").c_str(), 16383, 0, 0,
                                    RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(pool_, nullptr);
    mirror_pool_ = rte_pktmbuf_pool_create((name_ + "mirror").c_str(), 1023, 0, 0,
                                           RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(mirror_pool_, nullptr);
    datapath_.mirror_pool = mirror_pool_;
    fdb_ = *Fdb::Create(name_ + "fdb", 1 << 16);
    learn_ = *LearnQueue::Create(name_ + "learn", 4096);
    datapath_.fdb = fdb_.get();
    for (uint16_t p = 0; p < kPorts; ++p) {
      ports_.push_back(RingPort::Create(name_ + "_" + std::to_string(p), 1, 1, 4096, pool_));
      ASSERT_NE(ports_.back(), nullptr);
      table_.ports[p].eth_port = ports_.back()->eth_port();
    }
    datapath_.up_mask.store((1u << kPorts) - 1);
    Configure(std::vector<PortSpec>(kPorts));
  }

  void TearDown() override {
    forwarder_.reset();
    learner_.reset();
    ports_.clear();
    learn_.reset();
    fdb_.reset();
    EXPECT_EQ(rte_mempool_in_use_count(pool_), 0u) << "mbufs leaked";
    EXPECT_EQ(rte_mempool_in_use_count(mirror_pool_), 0u) << "mirror copies leaked";
    rte_mempool_free(pool_);
    rte_mempool_free(mirror_pool_);
  }

  // Port configuration as the bridge would publish it, over the FDB and learn queue the
  // test holds now: a new learner with the ports added (their learn limits and security
  // published), a new forwarder with `options`.
  void Configure(std::vector<PortSpec> specs, ForwarderOptions options = {}) {
    specs_ = std::move(specs);
    table_.Configure(specs_);
    table_.mirrors = {};
    table_.Seal();
    BuildGuards(table_, SpecSlots(specs_));
    datapath_.shut_mask.store(0);
    datapath_.table.store(&table_);
    datapath_.learn_blocked_mask.store(0);
    datapath_.learn_full_mask.store(0);
    learner_ = std::make_unique<Learner>(*fdb_, datapath_, std::vector<LearnQueue*>{learn_.get()});
    for (uint16_t p = 0; p < kPorts; ++p) learner_->AddPort(p, specs_[p]);
    forwarder_ = std::make_unique<Forwarder>(datapath_, options, counters_, *learn_);
  }

  // Mirror session `slot` as the bridge would publish it (PortTable::Seal derives the
  // ports' part: session bits, the analyser out of every VLAN and never retried).
  void SetMirror(size_t slot, const MirrorSession& session) {
    table_.Configure(specs_);
    table_.mirrors[slot] = session;
    table_.Seal();
  }

  // The meters' buckets never refill from now on (a period far longer than any test): a
  // meter lets its burst pass, then nothing, however long the test takes.
  void FreezeMeters() {
    for (GuardProfiles& g : table_.guards) {
      for (rte_meter_srtcm_profile& profile : g.profile) profile.cir_period = uint64_t{1} << 62;
    }
  }

  // Frames of `port` whose learn requests the learner refused (PortCounter::kLearnLimited
  // or kLearnTableFull), which the workers did not count.
  uint64_t Refused(uint16_t port, PortCounter counter) {
    PortTotals totals;
    learner_->AddRefusals(port, totals);
    return totals[counter];
  }

  // Options under which snooping reads every message a port sends (the models'), however
  // fast: no budget (ForwarderOptions::snoop_burst) in the way.
  static ForwarderOptions Unmetered() {
    ForwarderOptions options;
    options.snoop_burst = 1u << 30;
    return options;
  }

  // Every frame the ports transmitted, by sequence number: (port, tag) in port order.
  std::vector<std::vector<model::Copy>> Collect(size_t nb_frames,
                                                const std::vector<TestFrame>* sent = nullptr) {
    std::vector<std::vector<model::Copy>> out(nb_frames);
    for (uint16_t p = 0; p < kPorts; ++p) {
      // A mirror session pushing its tag onto copies for p: a copy of a frame tagged where
      // it was seen has that tag after the pushed one, as payload.
      bool pushes = false;
      for (const MirrorSession& m : table_.mirrors) pushes |= m.active() && m.to == p && m.vlan;
      for (rte_mbuf* m : ports_[p]->TakeSent()) {
        TestFrame f = ParseFrame(m);
        EXPECT_LT(f.seq, nb_frames);
        if (f.seq < nb_frames) {
          out[f.seq].push_back({p, f.tag});
          if (sent != nullptr) {
            const uint32_t pushed = pushes && f.inner_tag >= 0 ? 4 : 0;
            EXPECT_EQ(f.payload, (*sent)[f.seq].payload + pushed) << "frame " << f.seq;
            EXPECT_EQ(f.src, (*sent)[f.seq].src);
          }
        }
        rte_pktmbuf_free(m);
      }
    }
    return out;
  }

  // One burst from port `in` through the forwarder, then learning at `now`.
  std::vector<std::vector<model::Copy>> RunBurst(uint16_t in, std::vector<TestFrame> frames,
                                                 uint32_t now = 0) {
    std::vector<rte_mbuf*> burst;
    for (uint32_t i = 0; i < frames.size(); ++i) {
      frames[i].seq = i;
      burst.push_back(MakeFrame(pool_, frames[i]));
    }
    datapath_.now_seconds.store(now);
    forwarder_->HandleBurst(in, burst.data(), static_cast<uint16_t>(burst.size()));
    learner_->Poll(now);
    return Collect(frames.size(), &frames);
  }
  std::vector<model::Copy> Send(uint16_t in, const TestFrame& frame) {
    return RunBurst(in, {frame})[0];
  }

  // Whole frames as bytes (tests/snoop_frames.h builds them), their MACs set, tagged with
  // `tag` (-1: not), a sequence number appended for Collect (Ethernet padding to an IP
  // packet), received on `in` (its ethdev in m->port, as a PMD sets it); then learning.
  struct RawFrame {
    std::vector<uint8_t> bytes;
    uint64_t src, dst;
    int tag = -1;
  };
  void InjectRaw(uint16_t in, const std::vector<RawFrame>& raws, uint32_t now = 0) {
    std::vector<rte_mbuf*> burst;
    for (uint32_t seq = 0; seq < raws.size(); ++seq) {
      std::vector<uint8_t> f = raws[seq].bytes;
      std::memcpy(f.data(), &raws[seq].dst, 6);
      std::memcpy(f.data() + 6, &raws[seq].src, 6);
      if (raws[seq].tag >= 0) {
        const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(raws[seq].tag >> 8),
                                static_cast<uint8_t>(raws[seq].tag)};
        f.insert(f.begin() + 12, tag, tag + 4);
      }
      f.insert(f.end(), reinterpret_cast<const uint8_t*>(&seq),
               reinterpret_cast<const uint8_t*>(&seq) + 4);
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
      m->port = table_.ports[in].eth_port;
      burst.push_back(m);
    }
    datapath_.now_seconds.store(now);
    forwarder_->HandleBurst(in, burst.data(), static_cast<uint16_t>(burst.size()));
    learner_->Poll(now);
  }

  uint64_t RxDrops(uint16_t port, RxDrop reason) {
    return counters_.ports[port].rx_drops[static_cast<size_t>(reason)].Read();
  }
  uint64_t TxDrops(uint16_t port, TxDrop reason) {
    return counters_.ports[port].tx_drops[static_cast<size_t>(reason)].Read();
  }

  std::string name_;
  rte_mempool* pool_ = nullptr;
  rte_mempool* mirror_pool_ = nullptr;
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<LearnQueue> learn_;
  PortTable table_;
  Datapath datapath_;
  WorkerCounters counters_;
  std::vector<std::unique_ptr<RingPort>> ports_;
  std::vector<PortSpec> specs_;
  std::unique_ptr<Learner> learner_;
  std::unique_ptr<Forwarder> forwarder_;
};

using Copies = std::vector<model::Copy>;
inline Copies Untagged(std::initializer_list<uint16_t> ports) {
  Copies c;
  for (uint16_t p : ports) c.push_back({p, -1});
  return c;
}

}  // namespace hvswitch
