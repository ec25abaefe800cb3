// BridgeControl: what the control commands (hvswitchctl) may ask of the switch. The
// Bridge implements it; the control-protocol fuzzer and unit tests drive the commands
// against a stub. Control thread only, except Snapshot (any thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ports/port_spec.h"
#include "switch/control/bridge_snapshot.h"
#include "switch/control/mirror_spec.h"
#include "switch/control/options.h"
#include "switch/datapath/fdb.h"

namespace hvswitch {

// hvswitchctl capture: frames of one port into a pcapng file.
struct CaptureRequest {
  uint16_t port = 0;
  bool rx = true, tx = true;
  uint64_t count = 0;            // frames wanted
  absl::Duration timeout;        // the capture ends after this long whatever it has
  int file = -1;                 // the file, opened by hvswitchctl with its caller's rights
  // The client's connection: the capture answers on it when it starts and when it ends,
  // and ends when the client sends "stop" or goes away. -1: none.
  int client = -1;
};

struct CaptureStatus {
  bool active = false;
  uint64_t captured = 0;
};

class BridgeControl {
 public:
  virtual ~BridgeControl() = default;

  virtual BridgeSnapshot Snapshot() const = 0;
  // The ports' specs in bridge port order.
  virtual std::vector<PortSpec> PortSpecs() const = 0;
  // -1: no such port.
  virtual int PortIndex(absl::string_view name) const = 0;
  // The name of the port in slot `index` (an FDB entry's port).
  virtual std::string PortName(int index) const = 0;
  virtual absl::Status AddPort(const PortSpec& spec) = 0;
  virtual absl::Status RemovePort(absl::string_view name) = 0;

  // Seconds on the control clock (FDB ages are relative to it).
  virtual uint32_t now() const = 0;
  virtual std::vector<FdbEntryView> FdbEntries() const = 0;
  // Learned MACs of `port`, or of every port when -1.
  virtual void FlushFdb(int port) = 0;
  virtual absl::Status AddStaticMac(const StaticMacSpec& mac) = 0;
  virtual absl::Status RemoveMac(uint64_t key) = 0;

  // Takes request.file whatever the outcome, and request.client when the capture starts
  // (it answers on it itself then).
  virtual absl::Status StartCapture(const CaptureRequest& request) = 0;
  virtual CaptureStatus StopCapture() = 0;
  virtual CaptureStatus CaptureState() const = 0;

  // Ends the shut of a port that bpdu_guard shut; NotFound for no such port.
  virtual absl::Status EnablePort(absl::string_view name) = 0;

  // Port mirroring sessions (switch/control/mirrors.h); RemoveMirror: NotFound for none.
  virtual absl::Status AddMirror(const MirrorSpec& spec) = 0;
  virtual absl::Status RemoveMirror(absl::string_view name) = 0;
  virtual std::vector<MirrorSpec> MirrorSpecs() const = 0;
};

}  // namespace hvswitch
