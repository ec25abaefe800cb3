// PacketCapture: `hvswitchctl capture` on the daemon's side. Workers copy the frames of
// the captured port (rte_pcapng_copy) into a ring; the control thread drains it into a
// pcapng file (rte_pcapng) that hvswitchctl opened and passed over the control socket, so
// the file is created with the rights of whoever asked. Forwarding never waits for the
// capture: a copy that finds no buffer or a full ring is counted as missed.
// One capture at a time. Control thread only.
#pragma once

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "switch/datapath.h"

struct rte_pcapng;

namespace hvswitch {

class PacketCapture {
 public:
  // `wait_for_workers`: returns once no worker can still be copying (an RCU grace period).
  PacketCapture(Datapath& datapath, std::function<void()> wait_for_workers)
      : datapath_(datapath), wait_for_workers_(std::move(wait_for_workers)) {}
  ~PacketCapture();
  PacketCapture(const PacketCapture&) = delete;
  PacketCapture& operator=(const PacketCapture&) = delete;

  // Captures up to `count` frames received from (rx) and/or sent to (tx) bridge port
  // `port` into `fd` (taken over, closed when the capture ends).
  absl::Status Start(uint16_t port, bool rx, bool tx, uint64_t count, int fd);
  // Writes what the workers copied; ends the capture once it has `count` frames.
  void Poll();
  // Ends the capture now (the file keeps what was written).
  void Stop();

  bool active() const { return file_ != nullptr; }
  uint16_t port() const { return port_; }
  uint64_t captured() const { return captured_; }

 private:
  absl::Status CreateRingAndPool();
  // Frees what is in the ring, writing it first while the capture wants more.
  void Drain(bool write);

  Datapath& datapath_;
  std::function<void()> wait_for_workers_;
  rte_pcapng* file_ = nullptr;
  uint16_t port_ = 0;
  uint64_t wanted_ = 0, captured_ = 0;
};

}  // namespace hvswitch
