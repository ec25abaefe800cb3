#include "switch/ctl/top.h"

#include <poll.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "switch/ctl/client_socket.h"
#include "switch/ctl/views.h"
#include "switch/protocol/commands.h"

namespace hvswitch::ctl {
namespace {

using nlohmann::json;

std::atomic<bool> g_stop{false};

const json* FindPort(const json& stats, const std::string& name) {
  for (const json& p : stats["ports"]) {
    if (p.value("name", "") == name) return &p;
  }
  return nullptr;
}

// A counter's increase; a port re-added meanwhile (its counters from zero) counts its all.
uint64_t Increase(const json* before, const json& now, const char* key) {
  const uint64_t n = now.value(key, uint64_t{0});
  const uint64_t b = before != nullptr ? before->value(key, uint64_t{0}) : 0;
  return n >= b ? n - b : n;
}

// Waits `seconds` unless Ctrl-C comes first; false then.
bool Sleep(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stop.load()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    poll(nullptr, 0, static_cast<int>(std::min<int64_t>(left.count(), 100)));
  }
  return false;
}

}  // namespace

json PortRates(const json& before, const json& now, double seconds) {
  json ports = json::array();
  for (const json& p : now["ports"]) {
    const std::string name = p.value("name", "");
    const json* b = FindPort(before, name);
    uint64_t drops = 0, main = 0;
    std::string main_reason;
    for (const char* direction : {"rx", "tx"}) {
      const std::string key = absl::StrCat(direction, "_drops");
      if (!p.contains(key)) continue;
      for (const auto& [reason, value] : p[key].items()) {
        const json* was = b != nullptr && b->contains(key) ? &(*b)[key] : nullptr;
        const uint64_t n = value.get<uint64_t>();
        const uint64_t w = was != nullptr ? was->value(reason, uint64_t{0}) : 0;
        const uint64_t d = n >= w ? n - w : n;
        drops += d;
        if (d > main) {
          main = d;
          main_reason = absl::StrCat(direction, " ", reason);
        }
      }
    }
    ports.push_back({{"name", name},
                     {"rx_pps", Increase(b, p, "rx_packets") / seconds},
                     {"tx_pps", Increase(b, p, "tx_packets") / seconds},
                     {"rx_mbps", Increase(b, p, "rx_bytes") * 8 / seconds / 1e6},
                     {"tx_mbps", Increase(b, p, "tx_bytes") * 8 / seconds / 1e6},
                     {"drops_per_second", drops / seconds},
                     {"main_drop", main_reason}});
  }
  return {{"seconds", seconds}, {"ports", ports}};
}

int Top(const std::string& socket_path, const std::vector<std::string>& args, bool as_json) {
  double interval = 1;
  uint64_t count = 0;  // 0: until Ctrl-C
  for (size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--interval" && has_value) {
      if (!absl::SimpleAtod(args[++i], &interval) || !(interval >= 0.1 && interval <= 3600)) {
        return Fail("--interval must be 0.1 to 3600 seconds", 1);
      }
    } else if (args[i] == "--count" && has_value) {
      if (!absl::SimpleAtoi(args[++i], &count) || count == 0) {
        return Fail("--count must be a positive number", 1);
      }
    } else {
      const Command& top = CommandFor(CommandId::kTop);
      return Fail(absl::StrCat(top.words, " ", top.synopsis), 1);
    }
  }
  json before;
  if (int status = AskOk(socket_path, "stats", before)) return status;
  auto then = std::chrono::steady_clock::now();
  signal(SIGINT, [](int) { g_stop.store(true); });
  for (uint64_t n = 0; count == 0 || n < count; ++n) {
    if (!Sleep(interval)) break;
    json now;
    if (int status = AskOk(socket_path, "stats", now)) return status;
    const auto at = std::chrono::steady_clock::now();
    const json rates = PortRates(before, now, std::chrono::duration<double>(at - then).count());
    if (as_json) {
      std::printf("%s\n", rates.dump().c_str());
    } else {
      if (n != 0) std::printf("\n");
      Render(View::kRateTable, rates);
    }
    std::fflush(stdout);
    before = std::move(now);
    then = at;
  }
  return 0;
}

}  // namespace hvswitch::ctl
