// LinkUpProbe: frames lost at a guest's link-up, measured by one process that owns both
// ends (two ports, one TSC). The receiving port is unplugged (its guest gone from
// the switch), a paced stream of sequence-numbered, TSC-stamped frames is sent on the other
// port to a MAC the receiver never sends from (traffic for a guest whose MACs were
// flushed when it went: unknown unicast, which the switch floods), the receiving port is
// plugged back (its device probed and started again: it reconnects), and the stream goes on after the receiver's own driver reports its link
// up. A frame sent after that moment which never arrives was lost at link-up: the guest
// was there and the switch did not send it the frame.
#pragma once

#include <rte_ether.h>
#include <rte_mempool.h>

#include <cstdint>
#include <string>

namespace hvswitch::guest {

struct LinkUpRun {
  uint16_t tx_port = 0, rx_port = 1;
  rte_ether_addr dst{}, src{};
  uint64_t rate = 0;        // frames per second (paced; at least 1)
  uint64_t down_ms = 200;   // after stopping the receiver, before the stream: the switch
                            // sees the guest go (memif: at its next control poll)
  uint64_t before_ms = 50;  // stream while the receiver is down, before starting it
  uint64_t after_ms = 200;  // stream after the receiver's link is up
};

struct LinkUpResult {
  uint64_t sent = 0;                // frames the sending port took
  uint64_t sent_after_up = 0;       // of which sent once the receiver's link was up
  uint64_t received = 0;            // distinct probes of this run that arrived
  uint64_t received_before_up = 0;  // of which sent before the link was up
  uint64_t lost_after_up = 0;       // sent after link-up, never arrived
  uint64_t lost_after_first = 0;    // sent after the first probe arrived, never arrived
                                    // (the switch knew the guest was there by then)
  uint64_t duplicates = 0, reordered = 0, foreign = 0;
  double start_call_ns = 0;    // how long plugging the receiving port back took (probe,
                               // set up, rte_eth_dev_start)
  double up_ns = 0;            // from the start of that to the link first seen up
  double first_rx_ns = 0;      // from the link seen up to the first probe received
                               // (negative: a frame was in before the link was seen up)
  double last_lost_ns = 0;     // how long after link-up the last lost frame was sent
  bool link_up = false;        // the receiver's link came up at all (within 10 s)
  std::string error;           // the receiving port could not be unplugged or plugged
  std::string Json() const;
};

// Unplugs run.rx_port, streams, plugs it back, streams on; leaves it started. Waits up to
// 200 ms after the last frame for the stragglers.
LinkUpResult MeasureLinkUp(rte_mempool* pool, const LinkUpRun& run);

}  // namespace hvswitch::guest
