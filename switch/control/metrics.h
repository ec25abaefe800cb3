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

// The pieces every family is made of (metrics.cc), and the VXLAN tunnels' families
// (vxlan_metrics.cc: none without a tunnel).
prometheus::MetricFamily Family(std::string_view name, std::string_view help,
                                prometheus::MetricType type);
void AddSample(prometheus::MetricFamily& family,
               std::vector<prometheus::ClientMetric::Label> labels, double value);
void AddVxlanMetrics(const VxlanTunnelsSnapshot& snap,
                     std::vector<prometheus::MetricFamily>& out);

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
