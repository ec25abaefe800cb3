#include "switch/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace hvswitch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Render(const BridgeSnapshot& snap) {
  return prometheus::TextSerializer().Serialize(RenderMetrics(snap));
}

TEST(MetricsTest, NamesLabelsAndValuesFollowTheMetricList) {
  BridgeSnapshot snap;
  PortSnapshot vm1;
  vm1.name = "vm1";
  vm1.type = "vhost-user";
  vm1.mac = "56:48:4f:53:54:00";
  vm1.path = "/run/hvswitch/vm1.sock";
  vm1.up = true;
  vm1.mtu = 1500;
  vm1.totals.rx_packets = 10;
  vm1.totals.rx_bytes = 640;
  vm1.totals.tx_packets = 7;
  vm1.totals.tx_bytes = 448;
  vm1.totals.rx_drops[static_cast<size_t>(RxDrop::kHairpin)] = 3;
  vm1.totals.tx_drops[static_cast<size_t>(TxDrop::kQueueFull)] = 2;
  vm1.totals.rx_drops[static_cast<size_t>(RxDrop::kVlan)] = 11;
  vm1.totals.tx_drops[static_cast<size_t>(TxDrop::kMtu)] = 12;
  vm1.totals.learn_limited = 13;
  vm1.totals.csum_hw = 17;
  vm1.totals.csum_sw = 18;
  vm1.totals.tso_hw = 19;
  vm1.totals.tso_sw = 20;
  vm1.fdb_learned = 14;
  vm1.rx_no_mbuf = 5;
  PortSnapshot mem1;
  mem1.name = "mem1";
  mem1.type = "memif";
  snap.ports = {vm1, mem1};
  snap.fdb_entries = 4;
  snap.fdb_learned = 6;
  snap.fdb_moves = 2;
  snap.fdb_aged = 8;
  snap.fdb_flushed = 9;
  snap.fdb_static = 15;
  snap.fdb_static_refused = 16;
  snap.fdb_locked_refused = 21;
  snap.mbufs = 4096;
  snap.mbufs_in_use = 1234;
  snap.ports[1].quota = 512;  // mem1 has a pool of its own
  snap.ports[1].buffers_in_use = 77;
  snap.ports[1].rx_no_mbuf = 3;
  CoreSnapshot core;
  core.cpu = 1;
  core.busy_cycles = 900;
  core.idle_cycles = 100;
  core.rx_packets = 70;
  core.rx_bursts[0] = 2;  // 2 bursts of 1
  core.rx_bursts[5] = 2;  // 2 of 17-32 (34 frames each)
  snap.cores = {core};
  snap.ports[0].queue_stats = {{false, 0, "guest_notifications", 23},
                               {true, 1, "good_packets", 24}};

  std::string text = Render(snap);
  EXPECT_THAT(text, HasSubstr("# TYPE hvswitch_port_receive_packets_total counter"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_receive_packets_total{port=\"vm1\"} 10\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_receive_bytes_total{port=\"vm1\"} 640\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_transmit_packets_total{port=\"vm1\"} 7\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_transmit_bytes_total{port=\"vm1\"} 448\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"hairpin\"} 3\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"no_mbuf\"} 5\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"mem1\",reason=\"malformed\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"queue_full\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"link_down\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE hvswitch_port_up gauge"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_up{port=\"vm1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_up{port=\"mem1\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_info{port=\"vm1\",type=\"vhost-user\","
                              "mac=\"56:48:4f:53:54:00\",path=\"/run/hvswitch/vm1.sock\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_mtu_bytes{port=\"vm1\"} 1500\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_entries 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_learned_total 6\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_moves_total 2\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_aged_total 8\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_flushed_total 9\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"vlan\"} 11\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"mtu\"} 12\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"no_mbuf\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_learn_limited_total{port=\"vm1\"} 13\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_fdb_entries{port=\"vm1\"} 14\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_static_entries 15\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_locked_move_refused_total 21\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_mbufs 4096\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_mbufs_in_use 1234\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_buffer_quota{port=\"mem1\"} 512\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_buffers_in_use{port=\"mem1\"} 77\n"));
  EXPECT_THAT(text, Not(HasSubstr("hvswitch_port_buffer_quota{port=\"vm1\"}")));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"mem1\",reason=\"quota\"} 3\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"mem1\",reason=\"no_mbuf\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"quota\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"csum\",how=\"hw\"} 17\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"csum\",how=\"sw\"} 18\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"tso\",how=\"hw\"} 19\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"tso\",how=\"sw\"} 20\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_static_move_refused_total 16\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_busy_cycles_total{core=\"1\"} 900\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_idle_cycles_total{core=\"1\"} 100\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_packets_total{core=\"1\"} 70\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE hvswitch_core_rx_burst_size histogram"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"16\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"32\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_count{core=\"1\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_sum{core=\"1\"} 70\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_queue_stat_total{port=\"vm1\",direction=\"tx\","
                              "queue=\"0\",stat=\"guest_notifications\"} 23\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_queue_stat_total{port=\"vm1\",direction=\"rx\","
                              "queue=\"1\",stat=\"good_packets\"} 24\n"));
}

// Issue 12's new counts: refused learning for a full table, learn requests lost to a full
// ring (per core), floods with no destination, double-tagged frames not sent, and the
// device's own receive drops.
TEST(MetricsTest, EveryRefusalAndDropHasItsSample) {
  BridgeSnapshot snap;
  PortSnapshot wire;
  wire.name = "wire";
  wire.totals.learn_table_full = 31;
  wire.totals.rx_drops[static_cast<size_t>(RxDrop::kNoDestination)] = 32;
  wire.totals.rx_drops[static_cast<size_t>(RxDrop::kMissed)] = 33;
  wire.totals.rx_drops[static_cast<size_t>(RxDrop::kRxError)] = 34;
  wire.totals.tx_drops[static_cast<size_t>(TxDrop::kVlan)] = 35;
  snap.ports = {wire};
  CoreSnapshot core;
  core.cpu = 3;
  core.learn_queue_drops = 36;
  snap.cores = {core};
  const std::string text = Render(snap);
  EXPECT_THAT(text, HasSubstr("hvswitch_port_learn_table_full_total{port=\"wire\"} 31\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"wire\",reason=\"no_destination\"} 32\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"wire\",reason=\"missed\"} 33\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"wire\",reason=\"rx_error\"} 34\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"wire\",reason=\"vlan\"} 35\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_learn_queue_drops_total{core=\"3\"} 36\n"));
  // What a non-zero value means is in the HELP text.
  EXPECT_THAT(text, HasSubstr("# HELP hvswitch_port_learn_table_full_total"));
  EXPECT_THAT(text, HasSubstr("no_destination: flooded, but no other port is up"));
  EXPECT_THAT(text, HasSubstr("missed: its receive queue was full"));
  EXPECT_THAT(text, HasSubstr("vlan: a frame with two tags"));
  EXPECT_THAT(text, HasSubstr("# HELP hvswitch_core_learn_queue_drops_total"));
}

TEST(CountersTest, BurstBuckets) {
  EXPECT_EQ(BurstBucket(1), 0u);
  EXPECT_EQ(BurstBucket(2), 1u);
  EXPECT_EQ(BurstBucket(3), 2u);
  EXPECT_EQ(BurstBucket(4), 2u);
  EXPECT_EQ(BurstBucket(5), 3u);
  EXPECT_EQ(BurstBucket(32), 5u);
  EXPECT_EQ(BurstBucket(33), 6u);
  EXPECT_EQ(BurstBucket(256), 8u);
  for (uint16_t n = 1; n <= 256; ++n) {
    const size_t b = BurstBucket(n);
    ASSERT_LE(n, kBurstBuckets[b]) << n;
    if (b > 0) {
      ASSERT_GT(n, kBurstBuckets[b - 1]) << n;
    }
  }
}

TEST(MetricsTest, EveryFamilyHasHelpAndCountersEndInTotal) {
  BridgeSnapshot snap;
  snap.ports.resize(1);
  snap.ports[0].name = "p";
  for (const prometheus::MetricFamily& family : RenderMetrics(snap)) {
    EXPECT_FALSE(family.help.empty()) << family.name;
    EXPECT_EQ(family.name.rfind("hvswitch_", 0), 0u) << family.name;
    bool ends_total = family.name.size() > 6 &&
                      family.name.compare(family.name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(family.type == prometheus::MetricType::Counter, ends_total) << family.name;
  }
}

TEST(CountersTest, TotalsSumEveryWorker) {
  WorkerCounters a, b;
  a.ports[1].rx_packets.Add(3);
  b.ports[1].rx_packets.Add(4);
  b.ports[1].Drop(TxDrop::kLinkDown, 2);
  PortTotals totals;
  totals.AddFrom(a.ports[1]);
  totals.AddFrom(b.ports[1]);
  EXPECT_EQ(totals.rx_packets, 7u);
  EXPECT_EQ(totals.tx_drops[static_cast<size_t>(TxDrop::kLinkDown)], 2u);
}

}  // namespace
}  // namespace hvswitch
