#include "ports/memif/memif_driver.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ports/guest_socket_driver.h"
#include "ports/memif/memseg_fd_guard.h"
#include "ports/memif/unmap_guard.h"
#include "ports/spec_keys.h"

namespace hvswitch {
namespace {

// id=N: the memif interface id on the socket.
absl::Status ApplyId(absl::string_view value, PortSpec& spec) {
  uint32_t id = 0;
  if (!absl::SimpleAtoi(value, &id)) return SpecError(spec.name, "id must be a non-negative number");
  if (id == 0) {
    spec.driver_keys.Erase("id");  // the default
  } else {
    spec.driver_keys.Set("id", absl::StrCat(id));
  }
  return absl::OkStatus();
}
uint32_t MemifId(const PortSpec& spec) { return spec.driver_keys.Number("id", 0); }

// zero_copy=1 (client only): the peer reads and writes hvswitch's buffers in place (DPDK's
// zero-copy mode) instead of each side copying through the shared rings. The peer sees
// all of hvswitch's DPDK memory: only for peers trusted like hvswitch itself.
absl::Status ApplyZeroCopy(absl::string_view value, PortSpec& spec) {
  return StoreSpecFlag(spec, "zero_copy", value);
}
bool ZeroCopy(const PortSpec& spec) { return spec.driver_keys.Flag("zero_copy"); }

constexpr SpecKey kKeys[] = {{"path", ApplyPath}, {"client", ApplyClient}, {"id", ApplyId},
                             {"zero_copy", ApplyZeroCopy}};

class Driver final : public GuestSocketDriver {
 public:
  absl::string_view type() const override { return "memif"; }
  absl::string_view usage() const override {
    return R"(  --port=NAME,type=memif,path=SOCKET[,id=N]
  --port=NAME,type=memif,path=SOCKET,client=1[,zero_copy=1,quota=N]
                          (the guest serves the socket; zero_copy=1: it reads and writes
                          hvswitch's buffers in place and sees all of hvswitch's memory)
)";
  }
  std::span<const SpecKey> keys() const override { return kKeys; }
  absl::Status Check(const PortSpec& spec, const KeysGiven& given) const override {
    if (!given.contains("path")) return SpecError(spec.name, "missing path= (the memif socket)");
    if (ZeroCopy(spec) && !IsClient(spec)) {
      // DPDK's memif PMD shares the client's buffers only.
      return SpecError(spec.name, "zero_copy=1 needs client=1 (the peer is the memif server)");
    }
    if (ZeroCopy(spec) && spec.quota == 0) {
      // DPDK 22.11's memif PMD loses the buffers on a zero-copy port's receive ring at
      // every disconnect: they must come from the port's own pool, not the shared one.
      return SpecError(spec.name, "zero_copy=1 needs quota=N (a pool of the port's own)");
    }
    return absl::OkStatus();
  }
  void AppendKeys(const PortSpec& spec, std::string& head, std::string&) const override {
    absl::StrAppend(&head, ",path=", SocketPath(spec), IsClient(spec) ? ",client=1" : "",
                    ZeroCopy(spec) ? ",zero_copy=1" : "",
                    MemifId(spec) != 0 ? absl::StrCat(",id=", MemifId(spec)) : "");
  }
  PortTraits Traits(const PortSpec& spec) const override {
    PortTraits traits = GuestSocketDriver::Traits(spec);
    if (ZeroCopy(spec)) {
      traits.root_only = "zero_copy=1 (the peer sees all of hvswitch's memory) needs root";
    }
    return traits;
  }
  // A zero-copy client shares hvswitch's memory with the peer by one file per memory
  // segment list, which this mode gives (--no-huge has it anyway, but the memif PMD asks
  // the flag); vhost-user works either way. Asked whatever the ports at start: hvswitchctl
  // may add a zero-copy port later.
  void AddEalNeeds(std::span<const PortSpec* const>, EalNeeds& needs) const override {
    needs.single_file_segments = true;
  }

  std::string Devargs(const PortSpec& spec, int index) const override {
    // A filesystem socket (not the abstract namespace) as VPP and libmemif expect.
    return absl::StrCat("net_memif", index, ",role=", IsClient(spec) ? "client" : "server",
                        ",socket=", SocketPath(spec), ",socket-abstract=no,id=", MemifId(spec),
                        ZeroCopy(spec) ? ",zero-copy=yes" : "");
  }
  // The memif client decides how many rings it opens; one pair always exists.
  PortQueues Queues(const PortSpec&, uint16_t) const override { return {}; }
  DeviceSetup Configure(const PortSpec&, const rte_eth_dev_info&, rte_eth_conf&) const override {
    DeviceSetup setup;
    setup.peer_ring = true;  // the rings in the client's shared memory
    return setup;
  }
  void BeforeStart(const PortSpec& spec) const override {
    // The EAL may have added segment lists since the last start.
    if (ZeroCopy(spec)) memseg_fd_guard::ProtectMemsegFds();
  }
  // A memif client: DPDK's PMD connects to its server only when the device starts, and
  // never again by itself after the server went away or was not there yet. Started again
  // after a start that failed (no server: cheap to retry) / that connected (a handshake
  // under way must not be cut short: a DPDK memif peer whose client goes mid-handshake
  // may panic in its interrupt thread, seen with a loaded CPU).
  ReconnectPolicy Reconnect(const PortSpec& spec) const override {
    ReconnectPolicy policy;
    if (!IsClient(spec)) return policy;
    policy.enabled = true;
    policy.after_failed_start = std::chrono::milliseconds(1000);
    policy.after_start = std::chrono::milliseconds(10000);
    policy.waiting = absl::StrCat("no memif server at ", SocketPath(spec));
    return policy;
  }
  // memif offloads nothing: the default (nothing configured) holds.
  DatapathFlags Flags(const PortSpec& spec, const DeviceSetup&) const override {
    DatapathFlags flags;
    flags.recount_chains = flags.tx_each_round = ZeroCopy(spec);  // ports/memif/memif_fixups.h
    // A server's link goes up as it takes the client's CONNECT, before it answers
    // CONNECTED, on which the client's goes up: read at every burst, it is up in the
    // switch before the guest can send it anything.
    flags.link_polled = true;
    return flags;
  }

  // The PMD unmaps a gone peer's memory while workers may be reading it: unmap_guard.h.
  void OnWorkersRunning(ReaderGrace* grace) const override { unmap_guard::Install(grace); }
  void OnWorkerThread() const override { unmap_guard::MarkWorkerThread(); }
};

// Constant-initialised: valid before any static constructor runs.
constinit const Driver kDriver;

}  // namespace

const PortDriver& MemifDriver() { return kDriver; }

}  // namespace hvswitch
