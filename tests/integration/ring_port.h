// Test plumbing over DPDK's net_ring: an ethdev whose receive rings the test fills and
// whose transmit rings it drains, and frames with a tag, a size and a sequence number
// that survive being re-tagged by the switch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct rte_eth_rxtx_callback;
struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

namespace hvswitch::testing {

class RingPort {
 public:
  // Every queue has its own ring of `ring_size` (a power of two), or `tx_ring_size` for
  // transmit queues when given.
  static std::unique_ptr<RingPort> Create(const std::string& name, uint16_t nb_rxq,
                                          uint16_t nb_txq, unsigned ring_size,
                                          rte_mempool* pool, unsigned tx_ring_size = 0);
  ~RingPort();  // stops and closes the device, frees whatever its rings still hold

  uint16_t eth_port() const { return eth_port_; }
  // Puts frames where the device will receive them (their input port set, as a real
  // device's receive would); returns how many fit.
  unsigned Inject(uint16_t queue, rte_mbuf* const* frames, unsigned n);
  // Frames in `queue`'s receive ring not received yet.
  unsigned Waiting(uint16_t queue) const;
  // Takes every frame the device transmitted on `queue` (all queues when -1).
  std::vector<rte_mbuf*> TakeSent(int queue = -1);
  // Moves up to n frames the device transmitted on queue 0 into `to`'s receive queue 0
  // (a benchmark's endless supply of frames); returns how many moved.
  unsigned MoveSentTo(RingPort& to, unsigned n);
  // From now on every `every`-th transmit call on queue 0 first takes up to `per_call`
  // frames off its ring and frees them, as a guest draining its ring while the switch
  // sends would (0: a stalled guest again). Drained() counts what went so.
  void DrainOnTransmit(unsigned per_call, unsigned every = 1);
  uint64_t Drained() const { return drained_; }

 private:
  RingPort() = default;
  static uint16_t DrainBeforeTransmit(uint16_t port, uint16_t queue, rte_mbuf** pkts,
                                      uint16_t n, void* self);
  uint16_t eth_port_ = UINT16_MAX;
  std::vector<rte_ring*> rx_, tx_;
  const rte_eth_rxtx_callback* drain_callback_ = nullptr;
  unsigned drain_per_call_ = 0, drain_every_ = 1, calls_ = 0;
  uint64_t drained_ = 0;
};

// What a test frame carries: addresses, an optional 802.1Q tag (with its priority), an
// optional inner tag behind it (double tagging), the payload size (bytes after the
// Ethernet and outer VLAN headers: an inner tag is payload) and a sequence number in the
// payload's last bytes.
struct TestFrame {
  uint64_t src = 0, dst = 0;  // MACs, first octet in the low byte
  int tag = -1;               // VLAN id; -1: untagged; 0: priority-tagged
  uint32_t payload = 50;      // >= 4 (>= 8 with an inner tag); larger than a buffer: a chain
  uint32_t seq = 0;
  uint8_t pcp = 0;            // the outer tag's priority bits
  int inner_tag = -1;         // tagged frames only: VLAN id of a second tag; -1: none
  uint16_t inner_tpid = 0x8100;
  // Not 0: an IPv4 packet from this address (network order; UDP 1000 -> 2000), or with
  // `arp` an ARP request whose sender is it (and the frame's source MAC), instead of the
  // usual EtherType 0x88b5. payload >= 32 (the header and the sequence number).
  uint32_t ipv4_src = 0;
  bool arp = false;
};

rte_mbuf* MakeFrame(rte_mempool* pool, const TestFrame& frame);
TestFrame ParseFrame(const rte_mbuf* m);

}  // namespace hvswitch::testing
