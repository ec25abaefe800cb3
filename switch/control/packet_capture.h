// PacketCapture: `hvswitchctl capture` on the daemon's side. Workers copy the frames of
// the captured port (rte_pcapng_copy) into a ring; the control thread drains it into a
// pcapng file (rte_pcapng) that hvswitchctl opened and passed over the control socket, so
// the file is created with the rights of whoever asked. Forwarding never waits for the
// capture: a copy that finds no buffer or a full ring is counted as missed.
//
// The control thread never waits for it either: the file must be a regular file (a pipe
// or FIFO nobody reads would block every write), and the capture ends by itself when it
// has its frames, when its time is up, when its client sends "stop" or goes away, when
// the file is deleted or a write fails. The client's connection gets one line when the
// capture starts and one when it ends. One capture at a time. Control thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "switch/control/bridge_control.h"
#include "switch/datapath/datapath.h"

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

  // Captures up to request.count frames of bridge port request.port. Takes request.file
  // whatever the outcome, and request.client when it starts (it answers on it then).
  absl::Status Start(const CaptureRequest& request);
  // Writes what the workers copied; ends the capture when one of its ends has come.
  void Poll();
  // Ends the capture now (the file keeps what was written); `why` goes to its client.
  CaptureStatus Stop(const std::string& why = "stopped");
  CaptureStatus State() const { return {active(), captured_}; }

  bool active() const { return file_ != nullptr; }
  uint16_t port() const { return port_; }

 private:
  absl::Status CreateRingAndPool();
  // Frees what is in the ring, writing it first while the capture wants more; false when
  // a write failed.
  bool Drain(bool write);
  // Why the capture must end now, or empty.
  std::string EndReason();
  void Tell(const std::string& line);

  Datapath& datapath_;
  std::function<void()> wait_for_workers_;
  rte_pcapng* file_ = nullptr;
  int file_fd_ = -1;   // owned by file_; watched for deletion
  int client_ = -1;    // the client's connection, or -1
  uint16_t port_ = 0;
  absl::Time deadline_;
  uint64_t wanted_ = 0, captured_ = 0;
  bool write_failed_ = false;
};

}  // namespace hvswitch
