// The per-frame decision functions against the reference model, without DPDK.
#include "switch/verdict.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "switch/mac_key.h"
#include "tests/unit/bridge_model.h"

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
      if (v.kind == VerdictKind::kUnicast) got.ports.push_back(v.port);
      if (v.kind == VerdictKind::kFlood) {
        for (uint16_t p = 0; p < kPorts; ++p) {
          if (p != in && ((up >> p) & 1)) got.ports.push_back(p);
        }
      }
      auto src_it = table.find(src);
      if (WantsLearn(in, false, src_it != table.end(), src_it == table.end() ? 0 : src_it->second)) {
        table[src] = in;
      }
    }
    ASSERT_EQ(got.outcome, expected.outcome) << "frame " << frame;
    ASSERT_EQ(got.ports, expected.ports) << "frame " << frame;
  }
  EXPECT_EQ(table, model.table());
}

}  // namespace
}  // namespace hvswitch
