// hvswitchctl top's rates (switch/ctl/top.h) from two `stats` answers.
#include "switch/ctl/top.h"

#include <gtest/gtest.h>

namespace hvswitch::ctl {
namespace {

using nlohmann::json;

json Port(const char* name, uint64_t rx, uint64_t tx, uint64_t queue_full, uint64_t spoofed) {
  return {{"name", name},
          {"rx_packets", rx},
          {"tx_packets", tx},
          {"rx_bytes", rx * 64},
          {"tx_bytes", tx * 64},
          {"rx_drops", {{"spoofed", spoofed}, {"vlan", 0}}},
          {"tx_drops", {{"queue_full", queue_full}, {"link_down", 0}}}};
}

TEST(TopTest, RatesAreTheIncreasesOverTheInterval) {
  const json before = {{"ports", {Port("vm1", 1000, 2000, 0, 5), Port("mem1", 0, 0, 0, 0)}}};
  const json now = {{"ports", {Port("vm1", 3000, 2400, 600, 5), Port("mem1", 0, 0, 0, 0),
                               Port("vm3", 10, 0, 0, 4)}}};
  const json rates = PortRates(before, now, 2.0);
  ASSERT_EQ(rates["ports"].size(), 3u);
  const json& vm1 = rates["ports"][0];
  EXPECT_EQ(vm1["name"], "vm1");
  EXPECT_DOUBLE_EQ(vm1["rx_pps"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(vm1["tx_pps"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(vm1["rx_mbps"].get<double>(), 1000 * 64 * 8 / 1e6);
  EXPECT_DOUBLE_EQ(vm1["drops_per_second"].get<double>(), 300);
  EXPECT_EQ(vm1["main_drop"], "tx queue_full");  // the spoofed drops were before
  const json& mem1 = rates["ports"][1];
  EXPECT_DOUBLE_EQ(mem1["drops_per_second"].get<double>(), 0);
  EXPECT_EQ(mem1["main_drop"], "");
  // A port added meanwhile counts from zero.
  const json& vm3 = rates["ports"][2];
  EXPECT_DOUBLE_EQ(vm3["rx_pps"].get<double>(), 5);
  EXPECT_EQ(vm3["main_drop"], "rx spoofed");
}

TEST(TopTest, APortReaddedMeanwhileCountsFromZero) {
  const json before = {{"ports", {Port("vm1", 5000, 0, 0, 0)}}};
  const json now = {{"ports", {Port("vm1", 40, 0, 0, 0)}}};
  EXPECT_DOUBLE_EQ(PortRates(before, now, 1.0)["ports"][0]["rx_pps"].get<double>(), 40);
}

}  // namespace
}  // namespace hvswitch::ctl
