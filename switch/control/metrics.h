// Prometheus exposition of a BridgeSnapshot under the names in the operators' metric
// list (hvswitch_port_*_total, ...). The collector runs on the HTTP server's thread and
// takes a fresh snapshot per scrape; nothing here touches the packet path.
#pragma once

#include <functional>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "switch/control/bridge_snapshot.h"

namespace hvswitch {

std::vector<prometheus::MetricFamily> RenderMetrics(const BridgeSnapshot& snapshot);

class MetricsCollector : public prometheus::Collectable {
 public:
  explicit MetricsCollector(std::function<BridgeSnapshot()> snapshot)
      : snapshot_(std::move(snapshot)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    return RenderMetrics(snapshot_());
  }

 private:
  std::function<BridgeSnapshot()> snapshot_;
};

}  // namespace hvswitch
