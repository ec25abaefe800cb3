// The per-frame decision functions against the reference model, without DPDK.
#include "switch/datapath/verdict.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "ports/port_spec.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/mac_key.h"
#include "switch/datapath/vlan_table.h"
#include "tests/model/bridge_model.h"

namespace hvswitch {
namespace {

TEST(MacKeyTest, PacksVlanAndMacAndKeepsGroupBit) {
  const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  const uint8_t uni[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  const uint8_t mcast[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  EXPECT_TRUE(IsGroupKey(MacKey(0, bcast)));
  EXPECT_TRUE(IsGroupKey(MacKey(7, mcast)));
  EXPECT_FALSE(IsGroupKey(MacKey(0, uni)));
  EXPECT_EQ(KeyVlan(MacKey(100, uni)), 100);
  EXPECT_NE(MacKey(1, uni), MacKey(2, uni));
  EXPECT_EQ(KeyMacString(MacKey(5, uni)), "02:00:00:00:00:01");
}

TEST(VerdictTest, RulesOneByOne) {
  EXPECT_EQ(Decide(0, true, true, 1).kind, VerdictKind::kFlood);    // group dst
  EXPECT_EQ(Decide(0, false, false, 0).kind, VerdictKind::kFlood);  // unknown unicast
  EXPECT_EQ(Decide(2, false, true, 2).kind, VerdictKind::kHairpinDrop);
  Verdict v = Decide(0, false, true, 3);
  EXPECT_EQ(v.kind, VerdictKind::kUnicast);
  EXPECT_EQ(v.port, 3);
  EXPECT_TRUE(WantsLearn(1, false, false, 0));
  EXPECT_TRUE(WantsLearn(1, false, true, 2));  // a move
  EXPECT_FALSE(WantsLearn(1, false, true, 1));  // current: write nothing
  EXPECT_FALSE(WantsLearn(1, true, false, 0));  // group source never learned
}

// Random frames over a small MAC population: the decision functions plus a table updated
// as the control thread would must give exactly the model's outcome for every frame.
TEST(VerdictTest, MatchesReferenceModelOnRandomTraffic) {
  constexpr uint16_t kPorts = 5;
  std::mt19937_64 rng(42);
  std::vector<uint64_t> macs;
  for (uint64_t i = 0; i < 12; ++i) macs.push_back((i + 1) << 8);  // unicast
  macs.push_back(0xffffffffffff);                                        // broadcast
  macs.push_back(0x0000005e0001);                                         // multicast
  model::BridgeModel model(kPorts);
  std::map<uint64_t, uint16_t> table;
  for (int frame = 0; frame < 20000; ++frame) {
    uint16_t in = static_cast<uint16_t>(rng() % kPorts);
    uint64_t src = macs[rng() % macs.size()];
    uint64_t dst = macs[rng() % macs.size()];
    uint64_t up = rng() | (uint64_t{1} << in);
    model::Result expected = model.Forward(in, src, dst, up);

    model::Result got;
    if (IsGroupKey(src)) {
      got.outcome = model::Outcome::kMalformed;
    } else {
      auto it = table.find(dst);
      bool hit = it != table.end();
      Verdict v = Decide(in, IsGroupKey(dst), hit, hit ? it->second : 0);
      if (v.kind == VerdictKind::kHairpinDrop) got.outcome = model::Outcome::kHairpin;
      if (v.kind == VerdictKind::kUnicast && ((up >> v.port) & 1)) {
        got.copies.push_back({v.port, -1});
      } else if (v.kind == VerdictKind::kUnicast) {
        got.link_down.push_back(v.port);
      }
      if (v.kind == VerdictKind::kFlood) {
        for (uint16_t p = 0; p < kPorts; ++p) {
          if (p != in && ((up >> p) & 1)) got.copies.push_back({p, -1});
        }
        if (got.copies.empty()) got.outcome = model::Outcome::kNoDestination;
      }
      auto src_it = table.find(src);
      if (WantsLearn(in, false, src_it != table.end(), src_it == table.end() ? 0 : src_it->second)) {
        table[src] = in;
      }
    }
    ASSERT_EQ(got.outcome, expected.outcome) << "frame " << frame;
    ASSERT_EQ(got.copies, expected.copies) << "frame " << frame;
    ASSERT_EQ(got.link_down, expected.link_down) << "frame " << frame;
  }
  std::map<uint64_t, uint16_t> model_table;
  for (const auto& [key, entry] : model.table()) model_table[key] = entry.port;
  EXPECT_EQ(table, model_table);
}

// The VLAN table built from port specs takes and sends frames exactly as the model's port
// configurations do, for every VLAN and tag.
TEST(VlanTableTest, MatchesReferenceModelForRandomPortConfigurations) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<PortSpec> specs(1 + rng() % 8);
    std::vector<model::PortConfig> configs;
    for (PortSpec& s : specs) {
      model::PortConfig c;
      switch (rng() % 3) {
        case 0: break;
        case 1: c.access = s.access_vlan = static_cast<uint16_t>(1 + rng() % 4094); break;
        case 2:
          for (int i = 0; i < 5; ++i) c.trunk.insert(static_cast<uint16_t>(1 + rng() % 4094));
          s.trunk_vlans.assign(c.trunk.begin(), c.trunk.end());
          if (rng() % 2) c.native = s.native_vlan = static_cast<uint16_t>(1 + rng() % 4094);
          break;
      }
      configs.push_back(c);
    }
    VlanTable table = VlanTable::Build(specs);
    for (uint16_t p = 0; p < specs.size(); ++p) {
      const model::PortConfig& c = configs[p];
      std::vector<int> vlans = {0, 1, 4094, 4095};
      if (c.access) vlans.push_back(c.access);
      for (uint16_t v : c.trunk) vlans.push_back(v);
      if (c.native) vlans.push_back(c.native);
      vlans.push_back(static_cast<int>(rng() % 4096));
      int untagged = c.Ingress(-1);
      uint16_t got = table.Ingress(p, false, 0);
      ASSERT_EQ(got == kNoVlan ? -1 : got, untagged) << "round " << round << " port " << p;
      for (int v : vlans) {
        // The priority bits are ignored; VLAN id 0 (priority-tagged) is the untagged VLAN.
        uint16_t tci = static_cast<uint16_t>(v | (rng() % 8) << 13);
        got = table.Ingress(p, true, tci);
        ASSERT_EQ(got == kNoVlan ? -1 : got, c.Ingress(v)) << "round " << round << " vlan " << v;
        ASSERT_EQ(((table.members[v] >> p) & 1) != 0, c.Carries(v)) << "vlan " << v;
        if (c.Carries(v)) {
          ASSERT_EQ(table.SendsUntagged(static_cast<uint16_t>(v), p), c.SendsUntagged(v));
        }
      }
    }
  }
}

// The model's own learning rules, with an injected clock.
// A removed port's slot stays empty: it carries no VLAN, takes no frame and counts for
// no MTU, while the ports around it keep their places.
TEST(PortTableTest, EmptySlotsCarryNothing) {
  PortSpec plain, access, trunk;
  plain.mtu = 9000;
  access.access_vlan = 10;
  access.mtu = 3000;
  trunk.trunk_vlans = {10, 20};
  trunk.native_vlan = 30;
  PortTable table;
  table.Configure({&plain, nullptr, &access, nullptr, &trunk});
  // What its opener finds in the trunk's device (a memif zero-copy port's flag).
  table.ports[4].tx_each_round = true;
  table.ports[3].tx_each_round = true;  // an empty slot's leftover counts for nothing
  table.ports[2].rx_backpressure = table.ports[1].rx_backpressure = true;
  table.Seal();
  EXPECT_EQ(table.present, 0b10101u);
  EXPECT_EQ(table.tx_each_round, 0b10000u);
  EXPECT_EQ(table.rx_backpressure, 0b100u);
  EXPECT_EQ(table.min_mtu, 1500);  // the trunk's default, not an empty slot's
  for (uint16_t empty : {1, 3, 5, 63}) {
    EXPECT_EQ(table.vlans.Ingress(empty, false, 0), kNoVlan);
    EXPECT_EQ(table.vlans.Ingress(empty, true, 10), kNoVlan);
  }
  for (uint16_t v : {0, 10, 20, 30}) {
    EXPECT_EQ(table.vlans.members[v] & 0b01010u, 0u) << "vlan " << v;
  }
  EXPECT_EQ(table.vlans.members[10], 0b10101u);
  EXPECT_EQ(table.vlans.Ingress(2, false, 0), 10);
  EXPECT_EQ(table.vlans.Ingress(4, false, 0), 30);
}

TEST(BridgeModelTest, AgeingLimitsStaticEntriesMovesAndFlushes) {
  std::vector<model::PortConfig> ports(3);
  ports[2].learn_limit = 1;
  model::BridgeModel m(ports);
  constexpr uint64_t kA = 0x0200, kB = 0x0400, kC = 0x0600, kS = 0x0800, kAll = 0x7;
  m.AddStatic(0, kS, 0);
  m.ForwardBurst(0, {{kA, kS}}, kAll, 100);
  m.ForwardBurst(1, {{kB, kA}}, kAll, 100);
  m.ForwardBurst(0, {{kA, kB}}, kAll, 250);  // A refreshed
  m.Age(399, 300);
  EXPECT_EQ(m.table().size(), 3u);
  m.Age(400, 300);  // B (seen at 100) goes; A (250) and the static S stay
  EXPECT_EQ(m.table().count(model::BridgeModel::Key(0, kB)), 0u);
  EXPECT_EQ(m.table().size(), 2u);
  m.ForwardBurst(1, {{kA, kB}}, kAll, 400);  // A moves to port 1
  EXPECT_EQ(m.table().at(model::BridgeModel::Key(0, kA)).port, 1);
  m.ForwardBurst(2, {{kS, kA}}, kAll, 400);  // S is static: does not move
  EXPECT_EQ(m.table().at(model::BridgeModel::Key(0, kS)).port, 0);
  m.ForwardBurst(2, {{kB, kA}, {kC, kA}}, kAll, 400);  // limit 1: C is refused
  EXPECT_EQ(m.Learned(2), 1u);
  EXPECT_EQ(m.limited(2), 1u);
  m.Flush(2);
  EXPECT_EQ(m.Learned(2), 0u);
  m.Flush(0);
  EXPECT_EQ(m.table().at(model::BridgeModel::Key(0, kS)).port, 0);  // static survives
  model::Result r = m.ForwardBurst(1, {{kA, kS, -1, 1501}}, kAll, 400)[0];
  EXPECT_TRUE(r.copies.empty());  // 1501 bytes over port 0's MTU
  EXPECT_EQ(r.mtu_drops, std::vector<uint16_t>{0});
}

}  // namespace
}  // namespace hvswitch
