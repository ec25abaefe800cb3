// StubBridge: a BridgeControl without DPDK, for driving the control commands in unit
// tests and the control-protocol fuzzer. Ports are specs in slots; the FDB is a list;
// a capture only holds (and closes) its descriptors. SetCounters gives the snapshot
// counters (the golden-answer tests need every cell distinct).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ports/guard_keys.h"
#include "switch/control/bridge_control.h"
#include "switch/datapath/mac_key.h"

namespace hvswitch {

class StubBridge : public BridgeControl {
 public:
  BridgeSnapshot Snapshot() const override {
    BridgeSnapshot snap;
    if (counters_) {
      snap = *counters_;
      snap.ports.clear();
    } else {
      snap.cores.resize(1);
      snap[SwitchStat::kFdbEntries] = fdb_.size();
    }
    for (size_t p = 0; p < ports_.size(); ++p) {
      if (ports_[p].name.empty()) continue;
      PortSnapshot ps;
      if (counters_) {
        for (const PortSnapshot& counted : counters_->ports) {
          if (counted.name == ports_[p].name) ps = counted;
        }
      }
      ps.index = static_cast<uint16_t>(p);
      ps.name = ports_[p].name;
      ps.spec = ports_[p].ToString();
      for (const IpPrefix& prefix : ports_[p].guards.ips) {
        ps.ip_bindings.push_back(IpPrefixString(prefix));
      }
      ps.type = std::string(ports_[p].type_name());
      ps.path = ports_[p].Traits().endpoint;
      if (ps.mac.empty()) ps.mac = "02:00:00:00:00:01";
      ps.mtu = ports_[p].mtu;
      ps.shut = std::find(shut_.begin(), shut_.end(), ps.name) != shut_.end();
      snap.ports.push_back(ps);
    }
    snap.mirrors.clear();
    for (const MirrorSpec& m : mirrors_) {
      MirrorSnapshot ms{m, {}};
      if (counters_) {
        for (const MirrorSnapshot& counted : counters_->mirrors) {
          if (counted.spec.name == m.name) ms.counts = counted.counts;
        }
      }
      snap.mirrors.push_back(ms);
    }
    return snap;
  }
  std::vector<PortSpec> PortSpecs() const override {
    std::vector<PortSpec> specs;
    for (const PortSpec& spec : ports_) {
      if (!spec.name.empty()) specs.push_back(spec);
    }
    return specs;
  }
  int PortIndex(absl::string_view name) const override {
    for (size_t p = 0; p < ports_.size(); ++p) {
      if (!ports_[p].name.empty() && ports_[p].name == name) return static_cast<int>(p);
    }
    return -1;
  }
  std::string PortName(int index) const override { return ports_[index].name; }
  absl::Status AddPort(const PortSpec& spec) override {
    if (PortIndex(spec.name) >= 0) return absl::AlreadyExistsError("exists");
    if (ports_.size() >= 64) return absl::ResourceExhaustedError("at most 64 ports");
    ports_.push_back(spec);
    return absl::OkStatus();
  }
  absl::Status RemovePort(absl::string_view name) override {
    const int p = PortIndex(name);
    if (p < 0) return absl::NotFoundError("no such port");
    ports_[p] = PortSpec();
    std::erase_if(fdb_, [p](const FdbEntryView& e) { return e.port == p; });
    return absl::OkStatus();
  }
  uint32_t now() const override { return 100; }
  std::vector<FdbEntryView> FdbEntries() const override { return fdb_; }
  void FlushFdb(int port) override {
    std::erase_if(fdb_, [port](const FdbEntryView& e) {
      return !e.is_static && (port < 0 || e.port == port);
    });
  }
  absl::Status AddStaticMac(const StaticMacSpec& mac) override {
    const int p = PortIndex(mac.port);
    if (p < 0) return absl::InvalidArgumentError("no such port");
    std::erase_if(fdb_, [&](const FdbEntryView& e) { return e.key == mac.key; });
    fdb_.push_back({mac.key, static_cast<uint16_t>(p), true, 0});
    return absl::OkStatus();
  }
  absl::Status RemoveMac(uint64_t key) override {
    if (std::erase_if(fdb_, [key](const FdbEntryView& e) { return e.key == key; }) == 0) {
      return absl::NotFoundError("no entry");
    }
    return absl::OkStatus();
  }
  absl::Status StartCapture(const CaptureRequest& request) override {
    close(request.file);
    if (capturing_) return absl::FailedPreconditionError("a capture is running already");
    capturing_ = true;
    if (request.client >= 0) close(request.client);
    return absl::OkStatus();
  }
  CaptureStatus StopCapture() override {
    capturing_ = false;
    return {};
  }
  CaptureStatus CaptureState() const override { return {capturing_, 0}; }
  absl::Status AddMirror(const MirrorSpec& spec) override {
    if (PortIndex(spec.to) < 0) return absl::NotFoundError("no such port");
    for (const std::string& port : spec.from) {
      if (PortIndex(port) < 0) return absl::NotFoundError("no such port");
    }
    for (const MirrorSpec& m : mirrors_) {
      if (m.name == spec.name) return absl::AlreadyExistsError("exists");
    }
    if (mirrors_.size() == 8) return absl::ResourceExhaustedError("at most 8 mirrors");
    mirrors_.push_back(spec);
    return absl::OkStatus();
  }
  absl::Status RemoveMirror(absl::string_view name) override {
    if (std::erase_if(mirrors_, [&](const MirrorSpec& m) { return m.name == name; }) == 0) {
      return absl::NotFoundError(absl::StrCat("no mirror named '", name, "'"));
    }
    return absl::OkStatus();
  }
  std::vector<MirrorSpec> MirrorSpecs() const override { return mirrors_; }
  absl::Status EnablePort(absl::string_view name) override {
    if (PortIndex(name) < 0) {
      return absl::NotFoundError(absl::StrCat("no port named '", name, "'"));
    }
    std::erase(shut_, std::string(name));
    return absl::OkStatus();
  }
  // As a worker's bpdu_guard would have it.
  void Shut(const std::string& name) { shut_.push_back(name); }

  // From now on Snapshot() takes the counters, link state, pool, MAC counts and queue
  // stats of each port from the port of the same name in `counters`, and everything
  // switch-wide (FDB sizes and totals, buffers, cores) from `counters` as it is.
  void SetCounters(BridgeSnapshot counters) { counters_ = std::move(counters); }

  // A learned entry, as the workers would have made it.
  void Learn(uint64_t key, uint16_t port) { fdb_.push_back({key, port, false, 90}); }

 private:
  std::vector<PortSpec> ports_;  // an empty name: a free slot
  std::vector<FdbEntryView> fdb_;
  bool capturing_ = false;
  std::vector<std::string> shut_;
  std::vector<MirrorSpec> mirrors_;
  std::optional<BridgeSnapshot> counters_;
};

}  // namespace hvswitch
