// Every counter in the lists of switch/datapath/counters.h reaches every output its line names:
// /metrics, the control protocol's JSON and telemetry. A new counter is covered here
// without a test of its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "switch/control/metrics.h"
#include "switch/control/port_json.h"
#include "switch/control/telemetry_commands.h"

namespace hvswitch {
namespace {

using ::testing::HasSubstr;

// The tables hold std::string_view; this Abseil's string_view is a type of its own.
absl::string_view V(std::string_view s) { return {s.data(), s.size()}; }

// A port whose every cell has its own value: counter i 1000 + i, rx drop r 2000 + r,
// tx drop r 3000 + r.
PortSnapshot EveryCellCounted() {
  PortSnapshot port;
  port.name = std::string("p");  // not = "p": GCC 12 -O3 false -Wrestrict (PR 105329)
  for (size_t i = 0; i < kPortCounters; ++i) port.totals.counts[i] = 1000 + i;
  for (size_t r = 0; r < kRxDrops; ++r) port.totals.rx_drops[r] = 2000 + r;
  for (size_t r = 0; r < kTxDrops; ++r) port.totals.tx_drops[r] = 3000 + r;
  return port;
}

std::string Render(const BridgeSnapshot& snap) {
  return prometheus::TextSerializer().Serialize(RenderMetrics(snap));
}

// `family{first,labels...} value`, as the text exposition writes a sample.
std::string Sample(std::string_view family, std::string first, const MetricLabels& labels,
                   uint64_t value) {
  std::string out = absl::StrCat(V(family), "{", first);
  for (const MetricLabel& label : labels) {
    if (!label.name.empty()) {
      absl::StrAppend(&out, ",", V(label.name), "=\"", V(label.value), "\"");
    }
  }
  return absl::StrCat(out, "} ", value, "\n");
}

TEST(CountersTest, EveryPortCounterIsExported) {
  BridgeSnapshot snap;
  snap.tsc_hz = 1;  // counters in TSC cycles exported as seconds: the count itself
  snap.ports = {EveryCellCounted()};
  const std::string text = Render(snap);
  for (size_t i = 0; i < kPortCounters; ++i) {
    const CounterInfo& info = kPortCounterInfo[i];
    EXPECT_THAT(text, HasSubstr(Sample(info.family, "port=\"p\"", info.labels, 1000 + i)));
    if (!info.help.empty()) {
      EXPECT_THAT(text,
                  HasSubstr(absl::StrCat("# HELP ", V(info.family), " ", V(info.help), "\n")));
    }
  }
  for (size_t r = 0; r < kRxDrops; ++r) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat(V(kRxDropFamily), "{port=\"p\",reason=\"",
                                             V(kRxDropInfo[r].key), "\"} ", 2000 + r, "\n")));
  }
  for (size_t r = 0; r < kTxDrops; ++r) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat(V(kTxDropFamily), "{port=\"p\",reason=\"",
                                             V(kTxDropInfo[r].key), "\"} ", 3000 + r, "\n")));
  }
}

TEST(CountersTest, EveryCoreCounterAndSwitchStatIsExported) {
  BridgeSnapshot snap;
  CoreSnapshot core;
  core.cpu = 5;
  for (size_t i = 0; i < kCoreCounters; ++i) core.counts[i] = 4000 + i;
  snap.cores = {core};
  snap.tsc_hz = 1;  // counters in TSC cycles exported as seconds: the count itself
  for (size_t i = 0; i < kSwitchStats; ++i) snap.stats[i] = 5000 + i;
  const std::string text = Render(snap);
  for (size_t i = 0; i < kCoreCounters; ++i) {
    const CounterInfo& info = kCoreCounterInfo[i];
    EXPECT_THAT(text, HasSubstr(Sample(info.family, "core=\"5\"", info.labels, 4000 + i)));
  }
  for (size_t i = 0; i < kSwitchStats; ++i) {
    const CounterInfo& info = kSwitchStatInfo[i];
    EXPECT_THAT(text, HasSubstr(absl::StrCat(V(info.family), " ", 5000 + i, "\n")));
    EXPECT_THAT(text, HasSubstr(absl::StrCat(
                          "# TYPE ", V(info.family),
                          info.kind == MetricKind::kGauge ? " gauge\n" : " counter\n")));
  }
}

TEST(CountersTest, EveryJsonCounterIsInPortShow) {
  const PortSnapshot port = EveryCellCounted();
  const nlohmann::json list = PortJson(port, false), show = PortJson(port, true);
  for (size_t i = 0; i < kPortCounters; ++i) {
    const CounterInfo& info = kPortCounterInfo[i];
    const std::string key(info.key);
    if (info.shown & kJsonList) {
      EXPECT_EQ(list.value(key, uint64_t{0}), 1000 + i) << key;
      EXPECT_EQ(show.value(key, uint64_t{0}), 1000 + i) << key;
    } else {
      EXPECT_FALSE(list.contains(key)) << key;
    }
    if (info.shown & kJsonDetail) {
      EXPECT_EQ(show.value(key, uint64_t{0}), 1000 + i) << key;
    }
    if (info.shown & kJsonOffload) {
      EXPECT_EQ(show["offload"].value(key, uint64_t{0}), 1000 + i) << key;
    }
  }
  for (size_t r = 0; r < kRxDrops; ++r) {
    EXPECT_EQ(show["rx_drops"].value(std::string(kRxDropInfo[r].key), uint64_t{0}), 2000 + r);
  }
  for (size_t r = 0; r < kTxDrops; ++r) {
    EXPECT_EQ(show["tx_drops"].value(std::string(kTxDropInfo[r].key), uint64_t{0}), 3000 + r);
  }
  EXPECT_EQ(show["rx_drops"].size(), kRxDrops);
  EXPECT_EQ(show["tx_drops"].size(), kTxDrops);

  BridgeSnapshot snap;
  for (size_t i = 0; i < kSwitchStats; ++i) snap.stats[i] = 5000 + i;
  const nlohmann::json fdb = FdbStatsJson(snap);
  for (size_t i = 0; i < kSwitchStats; ++i) {
    const std::string key(kSwitchStatInfo[i].key);
    EXPECT_EQ(fdb.contains(key), (kSwitchStatInfo[i].shown & kJsonStats) != 0) << key;
    if (fdb.contains(key)) {
      EXPECT_EQ(fdb[key].get<uint64_t>(), 5000 + i) << key;
    }
  }
}

TEST(CountersTest, EveryTelemetryCounterIsInPortFields) {
  const PortSnapshot port = EveryCellCounted();
  std::map<std::string, uint64_t> summary, detail;
  for (const auto& [name, value] : telemetry_commands::PortFields(port, false)) {
    EXPECT_TRUE(summary.emplace(name, value).second) << name << " twice";
  }
  for (const auto& [name, value] : telemetry_commands::PortFields(port, true)) {
    EXPECT_TRUE(detail.emplace(name, value).second) << name << " twice";
  }
  for (size_t i = 0; i < kPortCounters; ++i) {
    const CounterInfo& info = kPortCounterInfo[i];
    const std::string key(info.key);
    EXPECT_EQ(summary.count(key), (info.shown & kTelemetrySummary) ? 1u : 0u) << key;
    if (info.shown & (kTelemetrySummary | kTelemetryDetail)) {
      EXPECT_EQ(detail[key], 1000 + i) << key;
    } else {
      EXPECT_EQ(detail.count(key), 0u) << key;
    }
  }
  uint64_t rx_sum = 0, tx_sum = 0;
  for (size_t r = 0; r < kRxDrops; ++r) {
    EXPECT_EQ(detail[absl::StrCat("rx_drop_", V(kRxDropInfo[r].key))], 2000 + r);
    rx_sum += 2000 + r;
  }
  for (size_t r = 0; r < kTxDrops; ++r) {
    EXPECT_EQ(detail[absl::StrCat("tx_drop_", V(kTxDropInfo[r].key))], 3000 + r);
    tx_sum += 3000 + r;
  }
  EXPECT_EQ(summary["rx_drops"], rx_sum);  // the device's drops (no_mbuf too) included
  EXPECT_EQ(summary["tx_drops"], tx_sum);
  for (const HistogramInfo& info : kPortHistogramInfo) {
    const std::string key(info.key);
    EXPECT_EQ(detail.count(key + "_samples"), (info.shown & kTelemetryDetail) ? 1u : 0u);
    EXPECT_EQ(summary.count(key + "_samples"), 0u) << key;
  }
}

// Every histogram reaches /metrics (one histogram family, a metric per port) and, where its
// line says, port show's JSON.
TEST(CountersTest, EveryPortHistogramIsExported) {
  BridgeSnapshot snap;
  PortSnapshot port = EveryCellCounted();
  for (size_t h = 0; h < kPortHistograms; ++h) {
    port.totals.histograms[h].buckets[5] = 7 + h;  // (2 us, 5 us]
    port.totals.histograms[h].sum_ns = 21'000 + h;
  }
  snap.ports = {port};
  const std::string text = Render(snap);
  const nlohmann::json show = PortJson(port, true);
  for (size_t h = 0; h < kPortHistograms; ++h) {
    const HistogramInfo& info = kPortHistogramInfo[h];
    EXPECT_THAT(text, HasSubstr(absl::StrCat("# TYPE ", V(info.family), " histogram\n")));
    EXPECT_THAT(text, HasSubstr(absl::StrCat(V(info.family), "_count{port=\"p\"} ", 7 + h)));
    EXPECT_THAT(text, HasSubstr(absl::StrCat(V(info.family),
                                             "_bucket{port=\"p\",le=\"5e-06\"} ", 7 + h)));
    EXPECT_THAT(text, HasSubstr(absl::StrCat(V(info.family),
                                             "_bucket{port=\"p\",le=\"2e-06\"} 0")));
    const std::string key(info.key);
    ASSERT_EQ(show.contains(key), (info.shown & kJsonDetail) != 0) << key;
    if (show.contains(key)) {
      EXPECT_EQ(show[key]["samples"].get<uint64_t>(), 7 + h);
      EXPECT_EQ(show[key]["sum_ns"].get<uint64_t>(), 21'000 + h);
      EXPECT_EQ(show[key]["buckets"].size(), 1u);
      EXPECT_EQ(show[key]["buckets"][0]["le_ns"].get<uint64_t>(), 5'000u);
    }
    EXPECT_FALSE(PortJson(port, false).contains(key)) << "port list shows no histogram";
  }
}

}  // namespace
}  // namespace hvswitch
