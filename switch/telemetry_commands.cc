#include "switch/telemetry_commands.h"

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

// A dict of a port's counters; `detail` adds drops by reason and offload counters.
rte_tel_data* PortDict(const PortSnapshot& port, bool detail) {
  rte_tel_data* d = rte_tel_data_alloc();
  if (d == nullptr) return nullptr;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "type", port.type.c_str());
  rte_tel_data_add_dict_string(d, "mac", port.mac.c_str());
  rte_tel_data_add_dict_u64(d, "up", port.up ? 1 : 0);
  rte_tel_data_add_dict_u64(d, "mtu", port.mtu);
  rte_tel_data_add_dict_u64(d, "rx_packets", port.totals.rx_packets);
  rte_tel_data_add_dict_u64(d, "rx_bytes", port.totals.rx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_packets", port.totals.tx_packets);
  rte_tel_data_add_dict_u64(d, "tx_bytes", port.totals.tx_bytes);
  rte_tel_data_add_dict_u64(d, "rx_drops", Sum(port.totals.rx_drops) + port.rx_no_mbuf);
  rte_tel_data_add_dict_u64(d, "tx_drops", Sum(port.totals.tx_drops));
  rte_tel_data_add_dict_u64(d, "fdb_learned", port.fdb_learned);
  if (!detail) return d;
  rte_tel_data_add_dict_string(d, "spec", port.spec.c_str());
  rte_tel_data_add_dict_u64(d, "rx_drop_no_mbuf", port.rx_no_mbuf);
  for (size_t r = 0; r < kRxDropNames.size(); ++r) {
    rte_tel_data_add_dict_u64(d, ("rx_drop_" + std::string(kRxDropNames[r])).c_str(),
                              port.totals.rx_drops[r]);
  }
  for (size_t r = 0; r < kTxDropNames.size(); ++r) {
    rte_tel_data_add_dict_u64(d, ("tx_drop_" + std::string(kTxDropNames[r])).c_str(),
                              port.totals.tx_drops[r]);
  }
  rte_tel_data_add_dict_u64(d, "csum_hw", port.totals.csum_hw);
  rte_tel_data_add_dict_u64(d, "csum_sw", port.totals.csum_sw);
  rte_tel_data_add_dict_u64(d, "tso_hw", port.totals.tso_hw);
  rte_tel_data_add_dict_u64(d, "tso_sw", port.totals.tso_sw);
  if (port.quota != 0) {
    rte_tel_data_add_dict_u64(d, "buffer_quota", port.quota);
    rte_tel_data_add_dict_u64(d, "buffers_in_use", port.buffers_in_use);
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
    rte_tel_data_add_dict_u64(c, "busy_cycles", core.busy_cycles);
    rte_tel_data_add_dict_u64(c, "idle_cycles", core.idle_cycles);
    rte_tel_data_add_dict_u64(c, "packets", core.rx_packets);
    for (size_t b = 0; b < kBurstBuckets.size(); ++b) {
      rte_tel_data_add_dict_u64(c, ("bursts_le_" + std::to_string(kBurstBuckets[b])).c_str(),
                                core.rx_bursts[b]);
    }
    rte_tel_data_add_dict_container(d, ("core" + std::to_string(core.cpu)).c_str(), c, 0);
  }
  return 0;
}

int Fdb(const char*, const char*, rte_tel_data* d) {
  std::optional<BridgeSnapshot> snap = TakeSnapshot();
  if (!snap) return -1;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "entries", snap->fdb_entries);
  rte_tel_data_add_dict_u64(d, "static", snap->fdb_static);
  rte_tel_data_add_dict_u64(d, "learned_total", snap->fdb_learned);
  rte_tel_data_add_dict_u64(d, "moves_total", snap->fdb_moves);
  rte_tel_data_add_dict_u64(d, "aged_total", snap->fdb_aged);
  rte_tel_data_add_dict_u64(d, "flushed_total", snap->fdb_flushed);
  return 0;
}

}  // namespace

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
