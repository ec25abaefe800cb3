#include "switch/ctl/views.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hvswitch::ctl {
namespace {

using nlohmann::json;

// Columns padded to their widest cell.
void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

// A duration in nanoseconds, in the unit that suits it.
std::string Duration(double ns) {
  if (ns < 1e3) return absl::StrFormat("%.0fns", ns);
  if (ns < 1e6) return absl::StrFormat("%.1fus", ns / 1e3);
  return absl::StrFormat("%.1fms", ns / 1e6);
}

// A histogram of durations (port_json.cc): its estimates, then its buckets as
// "<=bound:count".
std::string HistogramText(const json& h) {
  const uint64_t samples = h["samples"].get<uint64_t>();
  if (samples == 0) return "no samples yet";
  std::string text = absl::StrFormat(
      "%d samples, mean %s, p50 %s, p90 %s, p99 %s (estimates from the buckets);", samples,
      Duration(h["sum_ns"].get<double>() / samples), Duration(h["p50_ns"].get<double>()),
      Duration(h["p90_ns"].get<double>()), Duration(h["p99_ns"].get<double>()));
  for (const json& b : h["buckets"]) {
    text += b.contains("le_ns") ? absl::StrCat(" <=", Duration(b["le_ns"].get<double>()), ":")
                                : absl::StrCat(" >", Duration(b["gt_ns"].get<double>()), ":");
    text += Text(b["count"]);
  }
  return text;
}

void PrintPortDetail(const json& port) {
  for (const auto& [key, value] : port.items()) {
    if (value.is_object() && value.contains("buckets")) {
      std::printf("%-14s %s\n", (key + ":").c_str(), HistogramText(value).c_str());
    } else if (value.is_object()) {
      std::vector<std::string> parts;
      for (const auto& [k, v] : value.items()) parts.push_back(absl::StrCat(k, "=", Text(v)));
      std::printf("%-14s %s\n", (key + ":").c_str(), absl::StrJoin(parts, " ").c_str());
    } else {
      std::printf("%-14s %s\n", (key + ":").c_str(), Text(value).c_str());
    }
  }
}

void PrintPortTable(const json& answer) {
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "TYPE", "LINK", "MTU", "MAC", "RX", "TX", "MACS"}};
  for (const json& p : answer["ports"]) {
    const bool shut = p.contains("shut") && p["shut"].get<bool>();
    rows.push_back({p["name"], p["type"], shut ? "shut" : p["up"].get<bool>() ? "up" : "down",
                    Text(p["mtu"]),
                    p["mac"], Text(p["rx_packets"]), Text(p["tx_packets"]),
                    Text(p["fdb_learned"])});
  }
  PrintTable(rows);
}

void PrintFdbTable(const json& answer) {
  std::vector<std::vector<std::string>> rows = {{"MAC", "VLAN", "PORT", "TYPE", "AGE"}};
  for (const json& e : answer["entries"]) {
    rows.push_back({e["mac"], Text(e["vlan"]), e["port"],
                    e["static"].get<bool>() ? "static" : "learned",
                    e.contains("age") ? Text(e["age"]) + "s" : "-"});
  }
  PrintTable(rows);
}

void PrintStatsTable(const json& answer) {
  std::vector<std::vector<std::string>> rows = {
      {"PORT", "RX", "RX BYTES", "TX", "TX BYTES", "RX DROPS", "TX DROPS"}};
  for (const json& p : answer["ports"]) {
    uint64_t rx_drops = 0, tx_drops = 0;
    for (const auto& [k, v] : p["rx_drops"].items()) rx_drops += v.get<uint64_t>();
    for (const auto& [k, v] : p["tx_drops"].items()) tx_drops += v.get<uint64_t>();
    rows.push_back({p["name"], Text(p["rx_packets"]), Text(p["rx_bytes"]),
                    Text(p["tx_packets"]), Text(p["tx_bytes"]), std::to_string(rx_drops),
                    std::to_string(tx_drops)});
  }
  PrintTable(rows);
  const json& fdb = answer["fdb"];
  std::printf("fdb: %s entries (%s static), learned %s, moves %s, aged %s, flushed %s\n",
              Text(fdb["entries"]).c_str(), Text(fdb["static"]).c_str(),
              Text(fdb["learned_total"]).c_str(), Text(fdb["moves_total"]).c_str(),
              Text(fdb["aged_total"]).c_str(), Text(fdb["flushed_total"]).c_str());
}

// 1234567 as "1.23M": rates read at a glance.
std::string Rate(double value) {
  if (value >= 1e9) return absl::StrFormat("%.2fG", value / 1e9);
  if (value >= 1e6) return absl::StrFormat("%.2fM", value / 1e6);
  if (value >= 1e3) return absl::StrFormat("%.1fk", value / 1e3);
  return absl::StrFormat("%.0f", value);
}

void PrintRateTable(const json& rates) {
  std::vector<std::vector<std::string>> rows = {
      {"PORT", "RX/S", "TX/S", "RX MBIT/S", "TX MBIT/S", "DROPS/S", "MOSTLY"}};
  for (const json& p : rates["ports"]) {
    const std::string mostly = p["main_drop"];
    rows.push_back({p["name"], Rate(p["rx_pps"]), Rate(p["tx_pps"]),
                    absl::StrFormat("%.1f", p["rx_mbps"].get<double>()),
                    absl::StrFormat("%.1f", p["tx_mbps"].get<double>()),
                    Rate(p["drops_per_second"]), mostly.empty() ? "-" : mostly});
  }
  PrintTable(rows);
}

void PrintPmdTable(const json& answer) {
  std::vector<std::vector<std::string>> rows = {
      {"CORE", "IDLE", "BUSY%", "SLEEP%", "WAKEUPS", "PACKETS", "CYC/PKT", "LOOP CYC/PKT",
       "AVG BURST", "BURSTS (<=1 2 4 8 16 32 64 128 256)"}};
  for (const json& c : answer["cores"]) {
    std::vector<std::string> sizes;
    for (const json& b : c["bursts"]) sizes.push_back(Text(b["count"]));
    // "sleep<=250us": the mode and the longest sleep.
    const std::string idle =
        c["idle_mode"] == "sleep"
            ? absl::StrFormat("sleep<=%.0fus", c["max_sleep_us"].get<double>())
            : Text(c["idle_mode"]);
    rows.push_back({Text(c["core"]), idle, absl::StrFormat("%.1f", c["busy_percent"].get<double>()),
                    absl::StrFormat("%.1f", c["sleep_percent"].get<double>()),
                    Text(c["wakeups"]), Text(c["packets"]),
                    absl::StrFormat("%.0f", c["cycles_per_packet"].get<double>()),
                    absl::StrFormat("%.0f", c["loop_cycles_per_packet"].get<double>()),
                    absl::StrFormat("%.1f", c["mean_burst"].get<double>()),
                    absl::StrJoin(sizes, " ")});
  }
  PrintTable(rows);
}

// Per tunnel a line, then its VTEPs; per uplink its decapsulation drops when it has any.
void PrintVxlanTable(const json& answer) {
  std::vector<std::vector<std::string>> rows = {
      {"VNI", "PORT", "VLAN", "UPLINK", "LOCAL", "VTEP", "FLOOD", "NEXT-HOP", "TX", "RX",
       "DROPS"}};
  for (const json& t : answer["tunnels"]) {
    const json& c = t["counters"];
    rows.push_back({Text(t["vni"]), Text(t["port"]), Text(t["vlan"]), Text(t["uplink"]),
                    absl::StrCat(Text(t["local"]), ":", Text(t["udp_port"])),
                    absl::StrCat(Text(t["remote_macs"]), " remote MACs"),
                    t["evpn"].get<bool>() ? "evpn" : "static", "",
                    "", "", Text(c["no_flood_list"].get<uint64_t>() + c["no_uplink"].get<uint64_t>())});
    for (const json& v : t["vteps"]) {
      const json& vc = v["counters"];
      const uint64_t drops = vc["unresolved"].get<uint64_t>() + vc["no_mbuf"].get<uint64_t>() +
                             vc["uplink_full"].get<uint64_t>();
      const std::string hop = v["resolved"].get<bool>()
                                  ? absl::StrCat(v.value("next_hop", ""), " ",
                                                 v.value("next_hop_mac", ""))
                                  : v.value("problem", "unresolved");
      rows.push_back({"", "", "", "", "", Text(v["ip"]), v["flood"].get<bool>() ? "yes" : "no",
                      hop, Text(vc["tx_packets"]), Text(vc["rx_packets"]), Text(drops)});
    }
  }
  PrintTable(rows);
  for (const json& u : answer["uplinks"]) {
    std::vector<std::string> drops;
    for (const auto& [name, value] : u["decap"].items()) {
      if (name != "packets" && name != "bytes" && value.get<uint64_t>() != 0) {
        drops.push_back(absl::StrCat(name, " ", value.get<uint64_t>()));
      }
    }
    std::printf("uplink %s: %s decapsulated%s%s\n", Text(u["uplink"]).c_str(),
                Text(u["decap"]["packets"]).c_str(), drops.empty() ? "" : ", dropped: ",
                absl::StrJoin(drops, ", ").c_str());
  }
}

// NAME FROM DIRECTION TO VLAN RX TX FAILED DROPPED: copies made of received and of sent
// frames, copies that could not be made, and what the analyser dropped of them.
void PrintMirrorTable(const json& answer) {
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "FROM", "DIRECTION", "TO", "VLAN", "RX", "TX", "FAILED", "DROPPED"}};
  for (const json& m : answer["mirrors"]) {
    std::vector<std::string> from;
    for (const json& p : m["from"]) from.push_back(p.get<std::string>());
    uint64_t dropped = 0;
    for (const auto& [reason, n] : m["analyser_drops"].items()) dropped += n.get<uint64_t>();
    rows.push_back({m["name"], absl::StrJoin(from, ","), m["direction"], m["to"],
                    m.contains("vlan") ? Text(m["vlan"]) : "-", Text(m["rx_copies"]),
                    Text(m["tx_copies"]), Text(m["copy_failures"]), std::to_string(dropped)});
  }
  PrintTable(rows);
}

// `bond show`: PORT MODE MEMBER LINK ACTIVE then, in 802.3ad, ACTOR PARTNER (LACP state
// bytes) and PARTNER-SYSTEM.
void PrintBondTable(const json& answer) {
  std::vector<std::vector<std::string>> rows = {
      {"PORT", "MODE", "MEMBER", "LINK", "ACTIVE", "ACTOR", "PARTNER", "PARTNER-SYSTEM"}};
  for (const json& b : answer["bonds"]) {
    const std::string mode = b.contains("hash") ? absl::StrCat(Text(b["mode"]), "/", Text(b["hash"]))
                                                : Text(b["mode"]);
    for (const json& m : b["members"]) {
      std::vector<std::string> row = {b["port"], mode, m["device"],
                                      m["up"].get<bool>() ? "up" : "down",
                                      m["active"].get<bool>() ? "yes" : "no"};
      if (m.contains("lacp")) {
        const json& l = m["lacp"];
        row.push_back(absl::StrFormat("0x%02x", l["actor_state"].get<int>()));
        row.push_back(absl::StrFormat("0x%02x", l["partner_state"].get<int>()));
        row.push_back(l["partner_system"]);
      } else {
        row.insert(row.end(), {"-", "-", "-"});
      }
      rows.push_back(row);
    }
  }
  PrintTable(rows);
}

// VLAN GROUP MAC MEMBERS (port:seconds left), then the router ports; or that snooping is
// off.
void PrintMcastTable(const json& answer) {
  if (!answer.value("enabled", false)) {
    std::printf("IGMP/MLD snooping is off (--mcast_snooping=1 turns it on)\n");
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"VLAN", "GROUP", "MAC", "MEMBERS"}};
  for (const json& g : answer["groups"]) {
    std::vector<std::string> members;
    for (const json& m : g["members"]) {
      members.push_back(absl::StrCat(m["port"].get<std::string>(), ":", Text(m["expires"]), "s"));
    }
    rows.push_back({Text(g["vlan"]), g["group"], g["mac"], absl::StrJoin(members, " ")});
  }
  PrintTable(rows);
  std::vector<std::string> routers;
  for (const json& r : answer["routers"]) {
    routers.push_back(absl::StrCat(r["port"].get<std::string>(), " (VLAN ", Text(r["vlan"]), ", ",
                                   Text(r["expires"]), "s)"));
  }
  for (const json& r : answer["static_routers"]) {
    routers.push_back(absl::StrCat(r.get<std::string>(), " (mrouter=1)"));
  }
  std::printf("router ports: %s\n", routers.empty() ? "none" : absl::StrJoin(routers, ", ").c_str());
}

}  // namespace

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void Render(View view, const json& answer) {
  switch (view) {
    case View::kNothing:
    case View::kOwnOutput:
      return;
    case View::kPortTable:
      return PrintPortTable(answer);
    case View::kPortDetail:
      return PrintPortDetail(answer["port"]);
    case View::kPortAdded:
      std::printf("added %s\n", answer["spec"].get<std::string>().c_str());
      return;
    case View::kFdbTable:
      return PrintFdbTable(answer);
    case View::kStatsTable:
      return PrintStatsTable(answer);
    case View::kPmdTable:
      return PrintPmdTable(answer);
    case View::kRateTable:
      return PrintRateTable(answer);
    case View::kVxlanTable:
      return PrintVxlanTable(answer);
    case View::kMirrorTable:
      return PrintMirrorTable(answer);
    case View::kMcastTable:
      return PrintMcastTable(answer);
    case View::kBondTable:
      return PrintBondTable(answer);
    case View::kConfigText:
      std::fputs(answer["config"].get<std::string>().c_str(), stdout);
      return;
    case View::kSaved:
      std::printf("saved %s\n", answer["path"].get<std::string>().c_str());
      return;
    case View::kCaptureState:
      std::printf("%s\n", answer.value("active", false) ? "a capture is running"
                                                        : "no capture is running");
      return;
  }
}

}  // namespace hvswitch::ctl
