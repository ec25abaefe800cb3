#include "switch/control/telemetry_commands.h"

#include <rte_telemetry.h>

#include <mutex>
#include <numeric>
#include <optional>
#include <string>

namespace hvswitch::telemetry_commands {
namespace {

std::mutex g_mu;
std::function<BridgeSnapshot()> g_snapshot;  // guarded by g_mu

std::optional<BridgeSnapshot> TakeSnapshot() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_snapshot) return std::nullopt;
  return g_snapshot();
}

template <size_t N>
uint64_t Sum(const std::array<uint64_t, N>& values) {
  return std::accumulate(values.begin(), values.end(), uint64_t{0});
}

// A dict of a port's strings and PortFields.
rte_tel_data* PortDict(const PortSnapshot& port, bool detail) {
  rte_tel_data* d = rte_tel_data_alloc();
  if (d == nullptr) return nullptr;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "type", port.type.c_str());
  rte_tel_data_add_dict_string(d, "mac", port.mac.c_str());
  if (detail) rte_tel_data_add_dict_string(d, "spec", port.spec.c_str());
  for (const auto& [name, value] : PortFields(port, detail)) {
    rte_tel_data_add_dict_u64(d, name.c_str(), value);
  }
  return d;
}

int Ports(const char*, const char*, rte_tel_data* d) {
  std::optional<BridgeSnapshot> snap = TakeSnapshot();
  if (!snap) return -1;
  rte_tel_data_start_dict(d);
  for (const PortSnapshot& port : snap->ports) {
    rte_tel_data* child = PortDict(port, false);
    if (child != nullptr) rte_tel_data_add_dict_container(d, port.name.c_str(), child, 0);
  }
  return 0;
}

int Port(const char*, const char* params, rte_tel_data* d) {
  if (params == nullptr) return -1;
  std::optional<BridgeSnapshot> snap = TakeSnapshot();
  if (!snap) return -1;
  for (const PortSnapshot& port : snap->ports) {
    if (port.name != params) continue;
    rte_tel_data_start_dict(d);
    rte_tel_data* child = PortDict(port, true);
    if (child != nullptr) rte_tel_data_add_dict_container(d, port.name.c_str(), child, 0);
    return 0;
  }
  return -1;
}

int Pmd(const char*, const char*, rte_tel_data* d) {
  std::optional<BridgeSnapshot> snap = TakeSnapshot();
  if (!snap) return -1;
  rte_tel_data_start_dict(d);
  for (const CoreSnapshot& core : snap->cores) {
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) continue;
    rte_tel_data_start_dict(c);
    for (size_t i = 0; i < kCoreCounters; ++i) {
      if (kCoreCounterInfo[i].shown & kTelemetryPmd) {
        rte_tel_data_add_dict_u64(c, std::string(kCoreCounterInfo[i].key).c_str(), core.counts[i]);
      }
    }
    for (size_t b = 0; b < kBurstBuckets.size(); ++b) {
      rte_tel_data_add_dict_u64(c, ("bursts_le_" + std::to_string(kBurstBuckets[b])).c_str(),
                                core.rx_bursts[b]);
    }
    rte_tel_data_add_dict_string(c, "idle_mode", std::string(IdleModeName(core.mode)).c_str());
    rte_tel_data_add_dict_u64(c, "max_sleep_ns", core.max_sleep_ns);
    rte_tel_data_add_dict_container(d, ("core" + std::to_string(core.cpu)).c_str(), c, 0);
  }
  return 0;
}

int Fdb(const char*, const char*, rte_tel_data* d) {
  std::optional<BridgeSnapshot> snap = TakeSnapshot();
  if (!snap) return -1;
  rte_tel_data_start_dict(d);
  for (size_t i = 0; i < kSwitchStats; ++i) {
    if (kSwitchStatInfo[i].shown & kTelemetryFdb) {
      rte_tel_data_add_dict_u64(d, std::string(kSwitchStatInfo[i].key).c_str(), snap->stats[i]);
    }
  }
  return 0;
}

}  // namespace

std::vector<std::pair<std::string, uint64_t>> PortFields(const PortSnapshot& port, bool detail) {
  std::vector<std::pair<std::string, uint64_t>> fields = {
      {"up", port.up ? 1 : 0}, {"shut", port.shut ? 1 : 0}, {"mtu", port.mtu}};
  const uint8_t shown = detail ? kTelemetrySummary | kTelemetryDetail : kTelemetrySummary;
  for (size_t i = 0; i < kPortCounters; ++i) {
    const CounterInfo& info = kPortCounterInfo[i];
    if (info.shown & shown) fields.emplace_back(info.key, port.totals.counts[i]);
  }
  fields.emplace_back("rx_drops", Sum(port.totals.rx_drops));
  fields.emplace_back("tx_drops", Sum(port.totals.tx_drops));
  fields.emplace_back("fdb_learned", port.fdb_learned);
  if (!detail) return fields;
  for (size_t r = 0; r < kRxDrops; ++r) {
    fields.emplace_back("rx_drop_" + std::string(kRxDropInfo[r].key), port.totals.rx_drops[r]);
  }
  for (size_t r = 0; r < kTxDrops; ++r) {
    fields.emplace_back("tx_drop_" + std::string(kTxDropInfo[r].key), port.totals.tx_drops[r]);
  }
  // Histograms: <key>_samples, <key>_sum_ns and each bucket's count, as /hvswitch/pmd's
  // bursts_le_<n>: <key>_le_<ns>, and <key>_le_inf for the samples beyond the last bound.
  for (size_t h = 0; h < kPortHistograms; ++h) {
    const HistogramInfo& info = kPortHistogramInfo[h];
    if (!(info.shown & kTelemetryDetail)) continue;
    const HistogramTotals& histogram = port.totals.histograms[h];
    const std::string key(info.key);
    fields.emplace_back(key + "_samples", HistogramCount(histogram));
    fields.emplace_back(key + "_sum_ns", histogram.sum_ns);
    for (size_t b = 0; b < kHistogramBuckets; ++b) {
      fields.emplace_back(key + "_le_" + (b < kHistogramBounds
                                              ? std::to_string(kHistogramBoundsNs[b])
                                              : std::string("inf")),
                          histogram.buckets[b]);
    }
  }
  if (port.quota != 0) {
    fields.emplace_back("buffer_quota", port.quota);
    fields.emplace_back("buffers_in_use", port.buffers_in_use);
  }
  return fields;
}

void Serve(std::function<BridgeSnapshot()> snapshot) {
  static std::once_flag registered;
  std::call_once(registered, [] {
    rte_telemetry_register_cmd("/hvswitch/ports", Ports,
                               "hvswitch ports: counters, drops, link. No parameters");
    rte_telemetry_register_cmd("/hvswitch/port", Port,
                               "One hvswitch port in detail. Parameter: port name");
    rte_telemetry_register_cmd("/hvswitch/pmd", Pmd,
                               "hvswitch worker cores: cycles, frames, bursts. No parameters");
    rte_telemetry_register_cmd("/hvswitch/fdb", Fdb,
                               "hvswitch forwarding table. No parameters");
  });
  std::lock_guard<std::mutex> lock(g_mu);
  g_snapshot = std::move(snapshot);
}

}  // namespace hvswitch::telemetry_commands
