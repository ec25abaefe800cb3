// PortSpec: what an operator wrote in one `--port=` option, parsed and checked.
// Pure control-plane code: no DPDK, callable from any thread.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace hvswitch {

enum class PortType { kVhostUser, kMemif, kDpdk };

absl::string_view PortTypeName(PortType type);

struct PortSpec {
  std::string name;
  PortType type = PortType::kDpdk;
  std::string path;      // vhost-user / memif socket
  bool client = false;   // vhost-user: connect to a socket the guest (QEMU) created
  uint16_t queues = 1;   // vhost-user queue pairs
  uint32_t memif_id = 0; // memif interface id on the socket
  std::string devargs;   // dpdk: taken verbatim

  // True when hvswitch itself creates `path` and so must remove it on exit.
  bool OwnsSocket() const {
    return type == PortType::kMemif || (type == PortType::kVhostUser && !client);
  }
  // The spec written back in the grammar ParsePortSpec reads.
  std::string ToString() const;
};

// Parses `NAME,type=vhost-user,path=SOCK[,client=0|1][,queues=N]`,
// `NAME,type=memif,path=SOCK[,id=N]` or `NAME,type=dpdk,devargs=DEVARGS` (everything after
// `devargs=` verbatim). Errors name the port and the problem in one line.
absl::StatusOr<PortSpec> ParsePortSpec(absl::string_view text);

inline constexpr uint16_t kMaxQueuesPerPort = 16;

}  // namespace hvswitch
