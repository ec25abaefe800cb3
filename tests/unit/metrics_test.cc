#include "switch/control/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/unit/snapshot_fill.h"

namespace hvswitch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Render(const BridgeSnapshot& snap) {
  return prometheus::TextSerializer().Serialize(RenderMetrics(snap));
}

// Two ports (one with a buffer quota and device queue stats) and two cores with a distinct
// non-zero value in every cell the exposition shows.
BridgeSnapshot TwoPorts() {
  BridgeSnapshot snap;
  snap.tsc_hz = 4;  // cycles counters exported as seconds: a quarter of their count
  uint64_t v = 100;
  for (const char* name : {"vm1", "mem1"}) {
    PortSnapshot port;
    port.name = name;
    port.type = port.name == "vm1" ? "vhost-user" : "memif";
    port.mac = port.name == "vm1" ? "56:48:4f:53:54:00" : "56:48:4f:53:54:01";
    port.path = "/run/hvswitch/" + port.name + ".sock";
    port.up = port.name == "vm1";
    port.shut = port.name == "mem1";  // bpdu_guard=1 shut it
    port.mtu = port.name == "vm1" ? 1500 : 9000;
    FillDistinct(port, v);
    snap.ports.push_back(port);
  }
  snap.ports[0].ip_bindings = {"10.0.0.5", "2001:db8::/64"};
  snap.ports[1].quota = 512;
  snap.ports[1].buffers_in_use = 77;
  snap.ports[0].queue_stats = {{false, 0, "guest_notifications", 23},
                               {true, 1, "good_packets", 24}};
  for (unsigned cpu : {1u, 2u}) {
    CoreSnapshot core;
    core.cpu = cpu;
    core[CoreCounter::kBusyCycles] = 900 * cpu;
    core[CoreCounter::kIdleCycles] = 100 * cpu;
    core[CoreCounter::kPackets] = 70 * cpu;
    for (size_t b = 0; b < core.rx_bursts.size(); ++b) core.rx_bursts[b] = b + cpu;
    core[CoreCounter::kLearnQueueDrops] = 36 * cpu;
    core[CoreCounter::kSleepCycles] = 40 * cpu;
    core[CoreCounter::kWakeupsTimer] = 3 * cpu;
    core[CoreCounter::kWakeupsInterrupt] = 5 * cpu;
    core[CoreCounter::kWakeupsControl] = cpu;
    core.max_sleep_ns = cpu == 1 ? 250000 : 0;  // core 2 polls
    core.mode = cpu == 1 ? IdleMode::kInterrupt : IdleMode::kPoll;
    snap.cores.push_back(core);
  }
  FillSwitchStats(snap);
  snap[SwitchStat::kCaptureMissed] = 25;
  return snap;
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The whole exposition of TwoPorts(), in today's family order. Compared as sorted lines:
// families may be reordered, but no name, HELP or TYPE text, label or value may change.
constexpr const char* kExposition[] = {
    R"x(# HELP hvswitch_port_receive_packets_total Frames received from the port (before )x"
      R"x(any drop).)x",
    R"x(# TYPE hvswitch_port_receive_packets_total counter)x",
    R"x(hvswitch_port_receive_packets_total{port="vm1"} 100)x",
    R"x(hvswitch_port_receive_packets_total{port="mem1"} 132)x",
    R"x(# HELP hvswitch_port_receive_bytes_total Bytes received from the port.)x",
    R"x(# TYPE hvswitch_port_receive_bytes_total counter)x",
    R"x(hvswitch_port_receive_bytes_total{port="vm1"} 101)x",
    R"x(hvswitch_port_receive_bytes_total{port="mem1"} 133)x",
    R"x(# HELP hvswitch_port_transmit_packets_total Frames sent to the port.)x",
    R"x(# TYPE hvswitch_port_transmit_packets_total counter)x",
    R"x(hvswitch_port_transmit_packets_total{port="vm1"} 102)x",
    R"x(hvswitch_port_transmit_packets_total{port="mem1"} 134)x",
    R"x(# HELP hvswitch_port_transmit_bytes_total Bytes sent to the port.)x",
    R"x(# TYPE hvswitch_port_transmit_bytes_total counter)x",
    R"x(hvswitch_port_transmit_bytes_total{port="vm1"} 103)x",
    R"x(hvswitch_port_transmit_bytes_total{port="mem1"} 135)x",
    R"x(# HELP hvswitch_port_receive_drop_total Frames dropped after receive, by reason. )x"
      R"x(no_mbuf: the buffer pool ran dry (raise it or find who holds buffers); quota: the )x"
      R"x(port's own buffers (quota=) ran out, so its frames were dropped by the device )x"
      R"x(instead of drawing on the shared pool; malformed: runt or group-source frames from )x"
      R"x(the port; vlan: tagged frames on an access port, or frames in a VLAN the port does )x"
      R"x(not carry (a guest or trunk misconfigured); bad_offload: a partial checksum on a )x"
      R"x(frame whose TCP/UDP headers are missing or inconsistent (a broken or hostile )x"
      R"x(guest); hairpin: destination learned on the ingress port itself (a loop or a )x"
      R"x(confused peer); spoofed: a source MAC the port may not use (port security: mac= or )x"
      R"x(lock=1); no_destination: flooded, but no other port is up in the frame's VLAN )x"
      R"x((nobody to hear it); policed: beyond the port's police_pps= / police_bps= (dropped )x"
      R"x(before any lookup or copy); storm: broadcast, multicast or )x"
      R"x(unknown-unicast frames beyond the port's storm_broadcast= / storm_multicast= / )x"
      R"x(storm_unknown= rate; reserved: frames to 802.1D's reserved group addresses )x"
      R"x(01:80:C2:00:00:00-0F (STP, LACP, 802.1X, LLDP), which a bridge never forwards; )x"
      R"x(shut: frames from a port shut by bpdu_guard=1 (hvswitchctl port enable ends it); )x"
      R"x(spoofed_ip: IP, ARP or neighbour advertisement from an address the port may not )x"
      R"x(use (ip=); mirror_port: frames from a port that is a mirror's destination (it takes )x"
      R"x(the mirror's copies only); missed / rx_error: the device itself dropped frames )x"
      R"x(before hvswitch saw them )x"
      R"x((missed: its receive queue was full, hvswitch polling too slowly; rx_error: )x"
      R"x(erroneous frames). no_mbuf, quota, missed and rx_error are not in )x"
      R"x(receive_packets_total; every other frame received is forwarded or counted here.)x",
    R"x(# TYPE hvswitch_port_receive_drop_total counter)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="no_mbuf"} 130)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="quota"} 0)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="malformed"} 112)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="vlan"} 113)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="hairpin"} 114)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="bad_offload"} 115)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="spoofed"} 116)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="spoofed_ip"} 900)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="no_destination"} 117)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="policed"} 118)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="storm"} 119)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="reserved"} 120)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="shut"} 121)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="mirror_port"} 901)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="missed"} 122)x",
    R"x(hvswitch_port_receive_drop_total{port="vm1",reason="rx_error"} 123)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="no_mbuf"} 0)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="quota"} 162)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="malformed"} 144)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="vlan"} 145)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="hairpin"} 146)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="bad_offload"} 147)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="spoofed"} 148)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="spoofed_ip"} 932)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="no_destination"} 149)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="policed"} 150)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="storm"} 151)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="reserved"} 152)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="shut"} 153)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="mirror_port"} 933)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="missed"} 154)x",
    R"x(hvswitch_port_receive_drop_total{port="mem1",reason="rx_error"} 155)x",
    R"x(# HELP hvswitch_port_transmit_drop_total Frames for the port that were not sent, by )x"
      R"x(reason. queue_full: the guest or device is not draining its ring fast enough; )x"
      R"x(link_down: the guest is not connected; mtu: the frame is larger than the port's MTU )x"
      R"x((raise mtu= or fix the sender's MTU); no_mbuf: no buffer for a copy or a segment of )x"
      R"x(the frame (pool exhausted); offload_refused: the NIC refused the frame's )x"
      R"x(checksum/TSO request (its limits); vlan: a frame with two tags that would leave the )x"
      R"x(port with its outer tag removed (hvswitch carries one tag: sending it would move it )x"
      R"x(into the inner tag's VLAN; someone attempts VLAN hopping or stacks tags on an )x"
      R"x(access/native VLAN).)x",
    R"x(# TYPE hvswitch_port_transmit_drop_total counter)x",
    R"x(hvswitch_port_transmit_drop_total{port="vm1",reason="queue_full"} 124)x",
    R"x(hvswitch_port_transmit_drop_total{port="vm1",reason="link_down"} 125)x",
    R"x(hvswitch_port_transmit_drop_total{port="vm1",reason="mtu"} 126)x",
    R"x(hvswitch_port_transmit_drop_total{port="vm1",reason="no_mbuf"} 127)x",
    R"x(hvswitch_port_transmit_drop_total{port="vm1",reason="offload_refused"} 128)x",
    R"x(hvswitch_port_transmit_drop_total{port="vm1",reason="vlan"} 129)x",
    R"x(hvswitch_port_transmit_drop_total{port="mem1",reason="queue_full"} 156)x",
    R"x(hvswitch_port_transmit_drop_total{port="mem1",reason="link_down"} 157)x",
    R"x(hvswitch_port_transmit_drop_total{port="mem1",reason="mtu"} 158)x",
    R"x(hvswitch_port_transmit_drop_total{port="mem1",reason="no_mbuf"} 159)x",
    R"x(hvswitch_port_transmit_drop_total{port="mem1",reason="offload_refused"} 160)x",
    R"x(hvswitch_port_transmit_drop_total{port="mem1",reason="vlan"} 161)x",
    R"x(# HELP hvswitch_port_transmit_bursts_total Transmit bursts to the port that sent )x"
      R"x(frames; transmit packets / bursts is the mean burst size (small bursts to an )x"
      R"x(interrupt-driven guest mean many notifications: consider --tx_flush_us).)x",
    R"x(# TYPE hvswitch_port_transmit_bursts_total counter)x",
    R"x(hvswitch_port_transmit_bursts_total{port="vm1"} 106)x",
    R"x(hvswitch_port_transmit_bursts_total{port="mem1"} 138)x",
    R"x(# HELP hvswitch_port_transmit_retries_total Transmit retries to the port: a burst )x"
      R"x(its queue took only in part is offered again (tx_retries=, 8 by default), each )x"
      R"x(retry waiting up to 2 us for the queue to take frames. Rising with few queue_full )x"
      R"x(drops: a slow guest got its frames by them; rising with queue_full too: it is )x"
      R"x(slower than the traffic offered to it.)x",
    R"x(# TYPE hvswitch_port_transmit_retries_total counter)x",
    R"x(hvswitch_port_transmit_retries_total{port="vm1"} 800)x",
    R"x(hvswitch_port_transmit_retries_total{port="mem1"} 832)x",
    R"x(# HELP hvswitch_port_transmit_retry_cycles_total TSC cycles worker cores spent )x"
      R"x(retrying transmits to the port (tx_retries=): the price of waiting for a slow )x"
      R"x(guest, paid out of the time for every other port. Compare with )x"
      R"x(hvswitch_core_busy_cycles_total; lower tx_retries= if it matters.)x",
    R"x(# TYPE hvswitch_port_transmit_retry_cycles_total counter)x",
    R"x(hvswitch_port_transmit_retry_cycles_total{port="vm1"} 801)x",
    R"x(hvswitch_port_transmit_retry_cycles_total{port="mem1"} 833)x",
    R"x(# HELP hvswitch_port_receive_pauses_total Times the port (a kernel interface or a )x"
      R"x(NIC) was not polled because frames from it waited for a destination whose queue )x"
      R"x(was full: its next frames waited in its own queue (the kernel's, the NIC's ring) )x"
      R"x(instead of being dropped as queue_full. A pause ends when the destination has )x"
      R"x(taken the waiting frames, after it took none for 100 us (they are dropped then; a )x"
      R"x(destination that took none at all pauses no port again until it takes frames), or )x"
      R"x(once the port was paused for half of the current millisecond.)x",
    R"x(# TYPE hvswitch_port_receive_pauses_total counter)x",
    R"x(hvswitch_port_receive_pauses_total{port="vm1"} 802)x",
    R"x(hvswitch_port_receive_pauses_total{port="mem1"} 834)x",
    R"x(# HELP hvswitch_port_receive_pause_cycles_total TSC cycles the port's polling was )x"
      R"x(paused for full destinations: meanwhile its frames to every destination waited in )x"
      R"x(the kernel's or NIC's queue, which drops what does not fit (the interface's or )x"
      R"x(NIC's own drop counters). Set tx_retries=0 on a destination the port must not wait )x"
      R"x(for.)x",
    R"x(# TYPE hvswitch_port_receive_pause_cycles_total counter)x",
    R"x(hvswitch_port_receive_pause_cycles_total{port="vm1"} 803)x",
    R"x(hvswitch_port_receive_pause_cycles_total{port="mem1"} 835)x",
    R"x(# HELP hvswitch_port_cpu_seconds_total Worker CPU time spent on the frames received )x"
      R"x(from the port: the receive call that returned them and their forwarding (lookup, )x"
      R"x(learning requests, copies, software checksums and segmentation, flood copies, the )x"
      R"x(transmits). Which guest costs the host what: compare ports, or divide by )x"
      R"x(hvswitch_port_receive_packets_total.)x",
    R"x(# TYPE hvswitch_port_cpu_seconds_total counter)x",
    R"x(hvswitch_port_cpu_seconds_total{port="vm1"} 201)x",
    R"x(hvswitch_port_cpu_seconds_total{port="mem1"} 209)x",
    R"x(# HELP hvswitch_port_bpdu_guard_shutdowns_total Times the port was shut because it )x"
      R"x(sent a BPDU (frame to 01:80:C2:00:00:00) while bpdu_guard=1: a guest running a )x"
      R"x(bridge or spanning tree, or a loop through a guest. Its frames are dropped (reason )x"
      R"x(shut) until hvswitchctl port enable.)x",
    R"x(# TYPE hvswitch_port_bpdu_guard_shutdowns_total counter)x",
    R"x(hvswitch_port_bpdu_guard_shutdowns_total{port="vm1"} 111)x",
    R"x(hvswitch_port_bpdu_guard_shutdowns_total{port="mem1"} 143)x",
    R"x(# HELP hvswitch_port_offload_total Offload work for frames sent to the port. )x"
      R"x(kind=csum: partial L4 checksums (a guest left them to the device); how=hw: passed )x"
      R"x(on for the port to complete, how=sw: completed by hvswitch because the port cannot )x"
      R"x((CPU spent per frame). kind=tso: TCP super-frames from a guest's GSO; how=hw: )x"
      R"x(passed whole for the port to segment, how=sw: cut into MTU-sized segments by )x"
      R"x(hvswitch (costly: a guest peer without GUEST_TSO4/6, memif, or a NIC without TSO).)x",
    R"x(# TYPE hvswitch_port_offload_total counter)x",
    R"x(hvswitch_port_offload_total{port="vm1",kind="csum",how="hw"} 107)x",
    R"x(hvswitch_port_offload_total{port="vm1",kind="csum",how="sw"} 108)x",
    R"x(hvswitch_port_offload_total{port="vm1",kind="tso",how="hw"} 109)x",
    R"x(hvswitch_port_offload_total{port="vm1",kind="tso",how="sw"} 110)x",
    R"x(hvswitch_port_offload_total{port="mem1",kind="csum",how="hw"} 139)x",
    R"x(hvswitch_port_offload_total{port="mem1",kind="csum",how="sw"} 140)x",
    R"x(hvswitch_port_offload_total{port="mem1",kind="tso",how="hw"} 141)x",
    R"x(hvswitch_port_offload_total{port="mem1",kind="tso",how="sw"} 142)x",
    R"x(# HELP hvswitch_port_learn_limited_total Frames forwarded without learning their )x"
      R"x(source because the port has as many MACs as its learn limit allows (learn_limit=, )x"
      R"x(1024 by default on guest ports): a guest spraying source MACs, or a limit set too )x"
      R"x(low.)x",
    R"x(# TYPE hvswitch_port_learn_limited_total counter)x",
    R"x(hvswitch_port_learn_limited_total{port="vm1"} 104)x",
    R"x(hvswitch_port_learn_limited_total{port="mem1"} 136)x",
    R"x(# HELP hvswitch_port_learn_table_full_total Frames forwarded without learning their )x"
      R"x(source because the MAC table is full for the port: it uses all of its reserved )x"
      R"x(entries and the table's shared rest is taken. Non-zero means the table is too small )x"
      R"x(for this port's MACs (--fdb_capacity) or the port sprays source MACs (set )x"
      R"x(learn_limit= on it); other ports keep their reserve.)x",
    R"x(# TYPE hvswitch_port_learn_table_full_total counter)x",
    R"x(hvswitch_port_learn_table_full_total{port="vm1"} 105)x",
    R"x(hvswitch_port_learn_table_full_total{port="mem1"} 137)x",
    R"x(# HELP hvswitch_port_residence_seconds Time frames spent in hvswitch on their )x"
      R"x(way to the port: from the start of the receive call that returned a transmit's )x"
      R"x(oldest frame to the return of the transmit call that handed it to the port )x"
      R"x((after any retries). One transmit in 32 that sent frames is sampled, per port )x"
      R"x(and worker; each sample is that transmit's oldest frame, the longest any of its )x"
      R"x(frames waited. It includes the forwarding work, waits for company )x"
      R"x((tx_flush_us), transmit retries and backpressure parking (a parked frame counts )x"
      R"x(from its receive, not from the last offer).)x",
    R"x(# TYPE hvswitch_port_residence_seconds histogram)x",
    R"x(hvswitch_port_residence_seconds_count{port="vm1"} 102)x",
    R"x(hvswitch_port_residence_seconds_sum{port="vm1"} 1e-05)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="1e-07"} 0)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="2e-07"} 0)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="5e-07"} 0)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="1e-06"} 10)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="2e-06"} 92)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="5e-06"} 92)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="1e-05"} 92)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="2e-05"} 92)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="5e-05"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="0.0001"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="0.0002"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="0.0005"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="0.001"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="0.002"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="0.005"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="0.01"} 101)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="vm1",le="+Inf"} 102)x",
    R"x(hvswitch_port_residence_seconds_count{port="mem1"} 106)x",
    R"x(hvswitch_port_residence_seconds_sum{port="mem1"} 1.32e-05)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="1e-07"} 0)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="2e-07"} 0)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="5e-07"} 0)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="1e-06"} 10)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="2e-06"} 96)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="5e-06"} 96)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="1e-05"} 96)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="2e-05"} 96)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="5e-05"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="0.0001"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="0.0002"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="0.0005"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="0.001"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="0.002"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="0.005"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="0.01"} 105)x",
    R"x(hvswitch_port_residence_seconds_bucket{port="mem1",le="+Inf"} 106)x",
    R"x(# HELP hvswitch_port_fdb_entries MACs currently learned on the port (static entries )x"
      R"x(excluded); compare with its learn_limit.)x",
    R"x(# TYPE hvswitch_port_fdb_entries gauge)x",
    R"x(hvswitch_port_fdb_entries{port="vm1"} 131)x",
    R"x(hvswitch_port_fdb_entries{port="mem1"} 163)x",
    R"x(# HELP hvswitch_port_up 1 while the port's link is up (guest connected); 0 means )x"
      R"x(frames for it are dropped as link_down.)x",
    R"x(# TYPE hvswitch_port_up gauge)x",
    R"x(hvswitch_port_up{port="vm1"} 1)x",
    R"x(hvswitch_port_up{port="mem1"} 0)x",
    R"x(# HELP hvswitch_port_snoop_limited_total Messages of the port that snooping did not read because the port sent them faster than its budget (32 at once, then 1000 a second, per worker core): IGMP/MLD messages from it (--mcast_snooping=1), and for an ip_learn=1 port its ARP/neighbour discovery claims and the DHCP replies sent to it. The frames were forwarded; a membership or binding they carried may be missing until the next. Rising: a guest flooding such messages (the budget keeps it from starving the others').)x",
    R"x(# TYPE hvswitch_port_snoop_limited_total counter)x",
    R"x(hvswitch_port_snoop_limited_total{port="vm1"} 805)x",
    R"x(hvswitch_port_snoop_limited_total{port="mem1"} 837)x",
    R"x(# HELP hvswitch_port_announcements_total Announcements received from the port: RARP (QEMU's after a live migration, for a guest without GUEST_ANNOUNCE), gratuitous ARP and unsolicited IPv6 neighbour advertisements (a migrated guest's own, or an address taken over). The MAC table moves the sender's MAC to this port at the first of them; a migrated guest whose port shows none is reached only once it sends something else.)x",
    R"x(# TYPE hvswitch_port_announcements_total counter)x",
    R"x(hvswitch_port_announcements_total{port="vm1"} 806)x",
    R"x(hvswitch_port_announcements_total{port="mem1"} 838)x",
    R"x(# HELP hvswitch_port_shut 1 while the port is shut because it sent a BPDU with )x"
      R"x(bpdu_guard=1: its frames are dropped (reason shut) and none are sent to it until )x"
      R"x(hvswitchctl port enable.)x",
    R"x(# TYPE hvswitch_port_shut gauge)x",
    R"x(hvswitch_port_shut{port="vm1"} 0)x",
    R"x(hvswitch_port_shut{port="mem1"} 1)x",
    R"x(# HELP hvswitch_port_info What the port is (always 1): type, MAC and socket or )x"
      R"x(devargs.)x",
    R"x(# TYPE hvswitch_port_info gauge)x",
    R"x(hvswitch_port_info{port="vm1",type="vhost-user",mac="56:48:4f:53:54:00",path="/run/h)x"
      R"x(vswitch/vm1.sock"} 1)x",
    R"x(hvswitch_port_info{port="mem1",type="memif",mac="56:48:4f:53:54:01",path="/run/hvswi)x"
      R"x(tch/mem1.sock"} 1)x",
    R"x(# HELP hvswitch_port_mtu_bytes The port's MTU in bytes.)x",
    R"x(# TYPE hvswitch_port_mtu_bytes gauge)x",
    R"x(hvswitch_port_mtu_bytes{port="vm1"} 1500)x",
    R"x(hvswitch_port_mtu_bytes{port="mem1"} 9000)x",
    R"x(# HELP hvswitch_core_busy_cycles_total TSC cycles a worker core spent in receive )x"
      R"x(calls that returned frames and in the work they caused; busy / (busy + idle) )x"
      R"x(near 1 means the core is saturated.)x",
    R"x(# TYPE hvswitch_core_busy_cycles_total counter)x",
    R"x(hvswitch_core_busy_cycles_total{core="1"} 900)x",
    R"x(hvswitch_core_busy_cycles_total{core="2"} 1800)x",
    R"x(# HELP hvswitch_core_idle_cycles_total TSC cycles a worker core spent in the rest )x"
      R"x(of its loop: receive calls that returned nothing, timed flushes, quiescent )x"
      R"x(states, sleeps.)x",
    R"x(# TYPE hvswitch_core_idle_cycles_total counter)x",
    R"x(hvswitch_core_idle_cycles_total{core="1"} 100)x",
    R"x(hvswitch_core_idle_cycles_total{core="2"} 200)x",
    R"x(# HELP hvswitch_core_packets_total Frames a worker core received; busy cycles / )x"
      R"x(packets is its cost per frame.)x",
    R"x(# TYPE hvswitch_core_packets_total counter)x",
    R"x(hvswitch_core_packets_total{core="1"} 70)x",
    R"x(hvswitch_core_packets_total{core="2"} 140)x",
    R"x(# HELP hvswitch_core_sleep_seconds_total Time a worker core slept or blocked )x"
      R"x(between rounds that found nothing (--idle=sleep or interrupt); the CPU it gave )x"
      R"x(back to the host.)x",
    R"x(# TYPE hvswitch_core_sleep_seconds_total counter)x",
    R"x(hvswitch_core_sleep_seconds_total{core="1"} 10)x",
    R"x(hvswitch_core_sleep_seconds_total{core="2"} 20)x",
    R"x(# HELP hvswitch_core_wakeups_total Times a worker core woke from a sleep, by cause )x"
      R"x((timer: the sleep ran out; a worker wakes every --idle_max_us at most while the )x"
      R"x(host is quiet; interrupt: a receive queue raised one, with --idle=interrupt; )x"
      R"x(control: the control thread rang, with a new port table or to stop).)x",
    R"x(# TYPE hvswitch_core_wakeups_total counter)x",
    R"x(hvswitch_core_wakeups_total{core="1",cause="timer"} 3)x",
    R"x(hvswitch_core_wakeups_total{core="2",cause="timer"} 6)x",
    R"x(hvswitch_core_wakeups_total{core="1",cause="interrupt"} 5)x",
    R"x(hvswitch_core_wakeups_total{core="2",cause="interrupt"} 10)x",
    R"x(hvswitch_core_wakeups_total{core="1",cause="control"} 1)x",
    R"x(hvswitch_core_wakeups_total{core="2",cause="control"} 2)x",
    R"x(# HELP hvswitch_core_rx_burst_size Frames per receive call that returned any, per )x"
      R"x(worker core. Mostly 1-4 with a busy core means small bursts from the peers; at )x"
      R"x(--burst the core is behind.)x",
    R"x(# TYPE hvswitch_core_rx_burst_size histogram)x",
    R"x(hvswitch_core_rx_burst_size_count{core="1"} 45)x",
    R"x(hvswitch_core_rx_burst_size_sum{core="1"} 70)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="1"} 1)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="2"} 3)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="4"} 6)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="8"} 10)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="16"} 15)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="32"} 21)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="64"} 28)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="128"} 36)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="256"} 45)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="1",le="+Inf"} 45)x",
    R"x(hvswitch_core_rx_burst_size_count{core="2"} 54)x",
    R"x(hvswitch_core_rx_burst_size_sum{core="2"} 140)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="1"} 2)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="2"} 5)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="4"} 9)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="8"} 14)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="16"} 20)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="32"} 27)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="64"} 35)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="128"} 44)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="256"} 54)x",
    R"x(hvswitch_core_rx_burst_size_bucket{core="2",le="+Inf"} 54)x",
    R"x(# HELP hvswitch_core_idle_mode What a worker core does between rounds that find )x"
      R"x(nothing: 1 for its mode now (poll: spins; sleep: sleeps up to )x"
      R"x(hvswitch_core_sleep_max_seconds; interrupt: sleeps, then blocks until a receive )x"
      R"x(interrupt), 0 for the others. --idle=interrupt shows sleep on a core polling a )x"
      R"x(device without receive interrupts.)x",
    R"x(# TYPE hvswitch_core_idle_mode gauge)x",
    R"x(hvswitch_core_idle_mode{core="1",mode="poll"} 0)x",
    R"x(hvswitch_core_idle_mode{core="1",mode="sleep"} 0)x",
    R"x(hvswitch_core_idle_mode{core="1",mode="interrupt"} 1)x",
    R"x(hvswitch_core_idle_mode{core="2",mode="poll"} 1)x",
    R"x(hvswitch_core_idle_mode{core="2",mode="sleep"} 0)x",
    R"x(hvswitch_core_idle_mode{core="2",mode="interrupt"} 0)x",
    R"x(# HELP hvswitch_core_sleep_max_seconds A worker core's longest sleep: )x"
      R"x(--idle_max_us, or less where a device receive ring it polls would fill sooner at )x"
      R"x(line rate; 0 while it polls.)x",
    R"x(# TYPE hvswitch_core_sleep_max_seconds gauge)x",
    R"x(hvswitch_core_sleep_max_seconds{core="1"} 0.00025)x",
    R"x(hvswitch_core_sleep_max_seconds{core="2"} 0)x",
    R"x(# HELP hvswitch_core_learn_queue_drops_total Learn requests a worker core dropped )x"
      R"x(because its queue to the control thread was full; the source is asked for again a )x"
      R"x(millisecond later. Non-zero means sources arrive faster than the control thread )x"
      R"x(learns them (many new MACs at once) or the control thread is stalled: learning lags )x"
      R"x(meanwhile and unicast to new MACs floods.)x",
    R"x(# TYPE hvswitch_core_learn_queue_drops_total counter)x",
    R"x(hvswitch_core_learn_queue_drops_total{core="1"} 36)x",
    R"x(hvswitch_core_learn_queue_drops_total{core="2"} 72)x",
    R"x(# HELP hvswitch_core_snoop_queue_drops_total IGMP/MLD messages (--mcast_snooping=1), )x"
      R"x(and DHCP, ARP and neighbour discovery of ip_learn=1 ports, that a worker core could )x"
      R"x(not copy for the control thread (its queue full, or no buffer): the frames were )x"
      R"x(forwarded, but snooping did not see them (a membership or binding may be missing )x"
      R"x(until the next report or renewal).)x",
    R"x(# TYPE hvswitch_core_snoop_queue_drops_total counter)x",
    R"x(hvswitch_core_snoop_queue_drops_total{core="1"} 0)x",
    R"x(hvswitch_core_snoop_queue_drops_total{core="2"} 0)x",
    R"x(# HELP hvswitch_port_queue_stat_total The port device's own per-queue statistics )x"
      R"x((DPDK xstats); direction=rx: from the peer, tx: to it. vhost-user: good_packets, )x"
      R"x(good_bytes, multicast/broadcast_packets, size bins, and guest_notifications: )x"
      R"x(interrupts hvswitch raised in the guest (a polling guest suppresses them; per frame )x"
      R"x(they are the signalling cost).)x",
    R"x(# TYPE hvswitch_port_queue_stat_total counter)x",
    R"x(hvswitch_port_queue_stat_total{port="vm1",direction="tx",queue="0",stat="guest_notif)x"
      R"x(ications"} 23)x",
    R"x(hvswitch_port_queue_stat_total{port="vm1",direction="rx",queue="1",stat="good_packet)x"
      R"x(s"} 24)x",
    R"x(# HELP hvswitch_port_ip_binding An address or prefix the port may send IP from, ARP )x"
      R"x(for and advertise as a neighbour (always 1); source=static: ip=; dhcp, arp, nd: )x"
      R"x(learned (ip_learn=1) from a DHCP server's lease, or claimed first by the port's ARP )x"
      R"x(or neighbour discovery. Its other IP, ARP and neighbour advertisements are dropped )x"
      R"x(as spoofed_ip.)x",
    R"x(# TYPE hvswitch_port_ip_binding gauge)x",
    R"x(hvswitch_port_ip_binding{port="vm1",address="10.0.0.5",source="static"} 1)x",
    R"x(hvswitch_port_ip_binding{port="vm1",address="2001:db8::/64",source="static"} 1)x",
    R"x(# HELP hvswitch_port_buffer_quota Packet buffers a port with quota= may hold at )x"
      R"x(once.)x",
    R"x(# TYPE hvswitch_port_buffer_quota gauge)x",
    R"x(hvswitch_port_buffer_quota{port="mem1"} 512)x",
    R"x(# HELP hvswitch_port_buffers_in_use Packet buffers of a port with quota= out of its )x"
      R"x(pool now (its frames in flight, queued, or copied for floods); at the quota its )x"
      R"x(further frames wait or drop.)x",
    R"x(# TYPE hvswitch_port_buffers_in_use gauge)x",
    R"x(hvswitch_port_buffers_in_use{port="mem1"} 77)x",
    R"x(# HELP hvswitch_mbufs Packet buffers in the shared pool.)x",
    R"x(# TYPE hvswitch_mbufs gauge)x",
    R"x(hvswitch_mbufs 4096)x",
    R"x(# HELP hvswitch_mbufs_in_use Packet buffers out of the pool now: in device rings, )x"
      R"x(transmit queues or in flight. Rising while traffic is steady means a leak.)x",
    R"x(# TYPE hvswitch_mbufs_in_use gauge)x",
    R"x(hvswitch_mbufs_in_use 1234)x",
    R"x(# HELP hvswitch_capture_missed_total Frames a running hvswitchctl capture could not )x"
      R"x(copy (no buffer, or the control thread behind); the capture file lacks them, )x"
      R"x(forwarding does not.)x",
    R"x(# TYPE hvswitch_capture_missed_total counter)x",
    R"x(hvswitch_capture_missed_total 25)x",
    R"x(# HELP hvswitch_fdb_entries MAC addresses in the forwarding table, learned and )x"
      R"x(static.)x",
    R"x(# TYPE hvswitch_fdb_entries gauge)x",
    R"x(hvswitch_fdb_entries 4)x",
    R"x(# HELP hvswitch_fdb_static_entries Static MAC entries (configured; never aged or )x"
      R"x(moved).)x",
    R"x(# TYPE hvswitch_fdb_static_entries gauge)x",
    R"x(hvswitch_fdb_static_entries 15)x",
    R"x(# HELP hvswitch_fdb_static_move_refused_total Frames whose source is a static MAC )x"
      R"x(of another port; non-zero means a guest is using an address it does not own, or the )x"
      R"x(entry is wrong.)x",
    R"x(# TYPE hvswitch_fdb_static_move_refused_total counter)x",
    R"x(hvswitch_fdb_static_move_refused_total 16)x",
    R"x(# HELP hvswitch_fdb_locked_move_refused_total Learn requests refused because the )x"
      R"x(MAC belongs to a connected guest port with port security (mac= or lock=1); non-zero )x"
      R"x(means another port sends with that guest's address.)x",
    R"x(# TYPE hvswitch_fdb_locked_move_refused_total counter)x",
    R"x(hvswitch_fdb_locked_move_refused_total 21)x",
    R"x(# HELP hvswitch_fdb_learned_total MAC addresses learned (new table entries).)x",
    R"x(# TYPE hvswitch_fdb_learned_total counter)x",
    R"x(hvswitch_fdb_learned_total 6)x",
    R"x(# HELP hvswitch_fdb_moves_total Learned MACs seen on another port than before; a )x"
      R"x(steady rate means a loop or a MAC shared by two guests.)x",
    R"x(# TYPE hvswitch_fdb_moves_total counter)x",
    R"x(hvswitch_fdb_moves_total 2)x",
    R"x(# HELP hvswitch_fdb_aged_total MAC entries removed because they were not seen for )x"
      R"x(the ageing time.)x",
    R"x(# TYPE hvswitch_fdb_aged_total counter)x",
    R"x(hvswitch_fdb_aged_total 8)x",
    R"x(# HELP hvswitch_fdb_flushed_total MAC entries removed because their port went down.)x",
    R"x(# TYPE hvswitch_fdb_flushed_total counter)x",
    R"x(hvswitch_fdb_flushed_total 9)x",
};

// The whole exposition, line by line: names, HELP and TYPE texts, labels and values. The
// order of families may change (they are compared sorted), nothing else.
TEST(MetricsTest, FullExpositionIsStable) {
  const std::vector<std::string> got = SortedLines(Render(TwoPorts()));
  std::vector<std::string> want(std::begin(kExposition), std::end(kExposition));
  std::sort(want.begin(), want.end());
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                      std::back_inserter(extra));
  EXPECT_THAT(missing, ::testing::IsEmpty()) << "lines no longer exported";
  EXPECT_THAT(extra, ::testing::IsEmpty()) << "lines exported that were not";
  EXPECT_EQ(got.size(), want.size());  // duplicates
}

TEST(MetricsTest, NamesLabelsAndValuesFollowTheMetricList) {
  BridgeSnapshot snap;
  PortSnapshot vm1;
  vm1.name = "vm1";
  vm1.type = "vhost-user";
  vm1.mac = "56:48:4f:53:54:00";
  vm1.path = "/run/hvswitch/vm1.sock";
  vm1.up = true;
  vm1.mtu = 1500;
  vm1.totals[PortCounter::kRxPackets] = 10;
  vm1.totals[PortCounter::kRxBytes] = 640;
  vm1.totals[PortCounter::kTxPackets] = 7;
  vm1.totals[PortCounter::kTxBytes] = 448;
  vm1.totals.rx_drops[static_cast<size_t>(RxDrop::kHairpin)] = 3;
  vm1.totals.tx_drops[static_cast<size_t>(TxDrop::kQueueFull)] = 2;
  vm1.totals.rx_drops[static_cast<size_t>(RxDrop::kVlan)] = 11;
  vm1.totals.tx_drops[static_cast<size_t>(TxDrop::kMtu)] = 12;
  vm1.totals[PortCounter::kLearnLimited] = 13;
  vm1.totals[PortCounter::kCsumHw] = 17;
  vm1.totals[PortCounter::kCsumSw] = 18;
  vm1.totals[PortCounter::kTsoHw] = 19;
  vm1.totals[PortCounter::kTsoSw] = 20;
  vm1.fdb_learned = 14;
  vm1.totals[RxDrop::kNoMbuf] = 5;
  PortSnapshot mem1;
  mem1.name = "mem1";
  mem1.type = "memif";
  snap.ports = {vm1, mem1};
  FillSwitchStats(snap);
  snap.ports[1].quota = 512;  // mem1 has a pool of its own
  snap.ports[1].buffers_in_use = 77;
  snap.ports[1].totals[RxDrop::kNoMbuf] = 3;
  CoreSnapshot core;
  core.cpu = 1;
  core[CoreCounter::kBusyCycles] = 900;
  core[CoreCounter::kIdleCycles] = 100;
  core[CoreCounter::kPackets] = 70;
  core.rx_bursts[0] = 2;  // 2 bursts of 1
  core.rx_bursts[5] = 2;  // 2 of 17-32 (34 frames each)
  snap.cores = {core};
  snap.ports[0].queue_stats = {{false, 0, "guest_notifications", 23},
                               {true, 1, "good_packets", 24}};

  std::string text = Render(snap);
  EXPECT_THAT(text, HasSubstr("# TYPE hvswitch_port_receive_packets_total counter"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_receive_packets_total{port=\"vm1\"} 10\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_receive_bytes_total{port=\"vm1\"} 640\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_transmit_packets_total{port=\"vm1\"} 7\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_transmit_bytes_total{port=\"vm1\"} 448\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"hairpin\"} 3\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"no_mbuf\"} 5\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"mem1\",reason=\"malformed\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"queue_full\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"link_down\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE hvswitch_port_up gauge"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_up{port=\"vm1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_up{port=\"mem1\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_info{port=\"vm1\",type=\"vhost-user\","
                              "mac=\"56:48:4f:53:54:00\",path=\"/run/hvswitch/vm1.sock\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_mtu_bytes{port=\"vm1\"} 1500\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_entries 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_learned_total 6\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_moves_total 2\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_aged_total 8\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_flushed_total 9\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"vlan\"} 11\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"mtu\"} 12\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"vm1\",reason=\"no_mbuf\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_learn_limited_total{port=\"vm1\"} 13\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_fdb_entries{port=\"vm1\"} 14\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_static_entries 15\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_locked_move_refused_total 21\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_mbufs 4096\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_mbufs_in_use 1234\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_buffer_quota{port=\"mem1\"} 512\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_buffers_in_use{port=\"mem1\"} 77\n"));
  EXPECT_THAT(text, Not(HasSubstr("hvswitch_port_buffer_quota{port=\"vm1\"}")));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"mem1\",reason=\"quota\"} 3\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"mem1\",reason=\"no_mbuf\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"vm1\",reason=\"quota\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"csum\",how=\"hw\"} 17\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"csum\",how=\"sw\"} 18\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"tso\",how=\"hw\"} 19\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_offload_total{port=\"vm1\",kind=\"tso\",how=\"sw\"} 20\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_fdb_static_move_refused_total 16\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_busy_cycles_total{core=\"1\"} 900\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_idle_cycles_total{core=\"1\"} 100\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_packets_total{core=\"1\"} 70\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE hvswitch_core_rx_burst_size histogram"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"16\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"32\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_bucket{core=\"1\",le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_count{core=\"1\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_rx_burst_size_sum{core=\"1\"} 70\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_queue_stat_total{port=\"vm1\",direction=\"tx\","
                              "queue=\"0\",stat=\"guest_notifications\"} 23\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_port_queue_stat_total{port=\"vm1\",direction=\"rx\","
                              "queue=\"1\",stat=\"good_packets\"} 24\n"));
}

// Issue 12's new counts: refused learning for a full table, learn requests lost to a full
// ring (per core), floods with no destination, double-tagged frames not sent, and the
// device's own receive drops.
TEST(MetricsTest, EveryRefusalAndDropHasItsSample) {
  BridgeSnapshot snap;
  PortSnapshot wire;
  wire.name = "wire";
  wire.totals[PortCounter::kLearnTableFull] = 31;
  wire.totals.rx_drops[static_cast<size_t>(RxDrop::kNoDestination)] = 32;
  wire.totals.rx_drops[static_cast<size_t>(RxDrop::kMissed)] = 33;
  wire.totals.rx_drops[static_cast<size_t>(RxDrop::kRxError)] = 34;
  wire.totals.tx_drops[static_cast<size_t>(TxDrop::kVlan)] = 35;
  snap.ports = {wire};
  CoreSnapshot core;
  core.cpu = 3;
  core[CoreCounter::kLearnQueueDrops] = 36;
  snap.cores = {core};
  const std::string text = Render(snap);
  EXPECT_THAT(text, HasSubstr("hvswitch_port_learn_table_full_total{port=\"wire\"} 31\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"wire\",reason=\"no_destination\"} 32\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"wire\",reason=\"missed\"} 33\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_receive_drop_total{port=\"wire\",reason=\"rx_error\"} 34\n"));
  EXPECT_THAT(text, HasSubstr(
      "hvswitch_port_transmit_drop_total{port=\"wire\",reason=\"vlan\"} 35\n"));
  EXPECT_THAT(text, HasSubstr("hvswitch_core_learn_queue_drops_total{core=\"3\"} 36\n"));
  // What a non-zero value means is in the HELP text.
  EXPECT_THAT(text, HasSubstr("# HELP hvswitch_port_learn_table_full_total"));
  EXPECT_THAT(text, HasSubstr("no_destination: flooded, but no other port is up"));
  EXPECT_THAT(text, HasSubstr("missed: its receive queue was full"));
  EXPECT_THAT(text, HasSubstr("vlan: a frame with two tags"));
  EXPECT_THAT(text, HasSubstr("# HELP hvswitch_core_learn_queue_drops_total"));
}

TEST(CountersTest, BurstBuckets) {
  EXPECT_EQ(BurstBucket(1), 0u);
  EXPECT_EQ(BurstBucket(2), 1u);
  EXPECT_EQ(BurstBucket(3), 2u);
  EXPECT_EQ(BurstBucket(4), 2u);
  EXPECT_EQ(BurstBucket(5), 3u);
  EXPECT_EQ(BurstBucket(32), 5u);
  EXPECT_EQ(BurstBucket(33), 6u);
  EXPECT_EQ(BurstBucket(256), 8u);
  for (uint16_t n = 1; n <= 256; ++n) {
    const size_t b = BurstBucket(n);
    ASSERT_LE(n, kBurstBuckets[b]) << n;
    if (b > 0) {
      ASSERT_GT(n, kBurstBuckets[b - 1]) << n;
    }
  }
}

// Mirror sessions, multicast snooping and IP learning: families only when there is one,
// it is on, or it learned something.
BridgeSnapshot WithMirrorAndSnooping() {
  BridgeSnapshot snap;
  snap.ports.resize(1);
  snap.ports[0].name = "p";
  MirrorSpec m;
  m.name = "span";
  snap.mirrors = {{m, {5, 6, 7}}};
  McastGroup g;
  g.addr = {239, 1, 1, 1};
  snap.mcast.enabled = true;
  snap.mcast.groups = {{10, g, {{0, 30}, {3, 40}}}, {20, g, {{1, 1}}}};
  snap.mcast.routers = {{10, 2, 100}};
  snap.mcast.static_routers = 0b11000;
  snap.mcast.queries = 8;
  snap.mcast.reports = 9;
  snap.mcast.invalid = 1;
  snap.mcast.table_full = 11;
  snap.mcast.port_limit = 12;
  snap.mcast.guest_querier = 13;
  snap.ports[0].ip_learned = {{"10.0.0.9", "dhcp", 100}, {"fe80::9", "nd", 0}};
  snap.ip_learn_events = {3, 4, 5, 6, 7, 8};
  return snap;
}

TEST(MetricsTest, MirrorSnoopingAndLearningFamilies) {
  const std::string text = Render(WithMirrorAndSnooping());
  for (const char* line : {
           R"x(hvswitch_mirror_copies_total{mirror="span",direction="rx"} 5)x",
           R"x(hvswitch_mirror_copies_total{mirror="span",direction="tx"} 6)x",
           R"x(hvswitch_mirror_copy_failures_total{mirror="span"} 7)x",
           R"x(hvswitch_mcast_groups{vlan="10"} 1)x",
           R"x(hvswitch_mcast_groups{vlan="20"} 1)x",
           R"x(hvswitch_mcast_memberships{vlan="10"} 2)x",
           R"x(hvswitch_mcast_memberships{vlan="20"} 1)x",
           R"x(hvswitch_mcast_router_ports{source="learned"} 1)x",
           R"x(hvswitch_mcast_router_ports{source="static"} 2)x",
           R"x(hvswitch_mcast_messages_total{type="query"} 8)x",
           R"x(hvswitch_mcast_messages_total{type="report"} 9)x",
           R"x(hvswitch_mcast_messages_total{type="invalid"} 1)x",
           R"x(hvswitch_mcast_refused_total{reason="table_full"} 11)x",
           R"x(hvswitch_mcast_refused_total{reason="port_limit"} 12)x",
           R"x(hvswitch_mcast_refused_total{reason="guest_querier"} 13)x",
           R"x(hvswitch_port_ip_binding{port="p",address="10.0.0.9",source="dhcp"} 1)x",
           R"x(hvswitch_port_ip_binding{port="p",address="fe80::9",source="nd"} 1)x",
           R"x(hvswitch_ip_learn_events_total{event="bound"} 3)x",
           R"x(hvswitch_ip_learn_events_total{event="taken"} 4)x",
           R"x(hvswitch_ip_learn_events_total{event="limit"} 5)x",
           R"x(hvswitch_ip_learn_events_total{event="foreign_mac"} 6)x",
           R"x(hvswitch_ip_learn_events_total{event="untrusted"} 7)x",
           R"x(hvswitch_ip_learn_events_total{event="no_lease"} 8)x"}) {
    EXPECT_THAT(text, HasSubstr(std::string(line) + "\n"));
  }
  // Without them, none of their families.
  const std::string plain = Render(TwoPorts());
  EXPECT_THAT(plain, Not(HasSubstr("hvswitch_mirror_")));
  EXPECT_THAT(plain, Not(HasSubstr("hvswitch_mcast_")));
  EXPECT_THAT(plain, Not(HasSubstr("hvswitch_ip_learn_")));
}

TEST(MetricsTest, EveryFamilyHasHelpAndCountersEndInTotal) {
  BridgeSnapshot snap = WithMirrorAndSnooping();
  for (const prometheus::MetricFamily& family : RenderMetrics(snap)) {
    EXPECT_FALSE(family.help.empty()) << family.name;
    EXPECT_EQ(family.name.rfind("hvswitch_", 0), 0u) << family.name;
    bool ends_total = family.name.size() > 6 &&
                      family.name.compare(family.name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(family.type == prometheus::MetricType::Counter, ends_total) << family.name;
  }
}

TEST(CountersTest, TotalsSumEveryWorker) {
  WorkerCounters a, b;
  a.ports[1].Add(PortCounter::kRxPackets, 3);
  b.ports[1].Add(PortCounter::kRxPackets, 4);
  b.ports[1].Drop(TxDrop::kLinkDown, 2);
  PortTotals totals;
  totals.AddFrom(a.ports[1]);
  totals.AddFrom(b.ports[1]);
  EXPECT_EQ(totals[PortCounter::kRxPackets], 7u);
  EXPECT_EQ(totals.tx_drops[static_cast<size_t>(TxDrop::kLinkDown)], 2u);
}

// Each sample in exactly one bucket, whose bounds hold it; workers' histograms add up,
// and a port slot's base comes off them like off every counter.
TEST(CountersTest, HistogramSamplesSumOverWorkers) {
  WorkerCounters a, b;
  for (uint64_t ns : {0u, 100u, 101u, 1'500u, 10'000'000u, 10'000'001u}) {
    a.ports[2].Sample(PortHistogram::kResidence, ns);
  }
  b.ports[2].Sample(PortHistogram::kResidence, 1'999);
  PortTotals totals;
  totals.AddFrom(a.ports[2]);
  totals.AddFrom(b.ports[2]);
  const HistogramTotals& h = totals[PortHistogram::kResidence];
  EXPECT_EQ(HistogramCount(h), 7u);
  EXPECT_EQ(h.sum_ns, 0u + 100 + 101 + 1'500 + 10'000'000 + 10'000'001 + 1'999);
  EXPECT_EQ(h.buckets[0], 2u);                 // <= 100 ns
  EXPECT_EQ(h.buckets[1], 1u);                 // <= 200 ns
  EXPECT_EQ(h.buckets[4], 2u);                 // <= 2 us
  EXPECT_EQ(h.buckets[kHistogramBounds - 1], 1u);  // <= 10 ms
  EXPECT_EQ(h.buckets[kHistogramBounds], 1u);      // beyond
  PortTotals base;
  base.AddFrom(a.ports[2]);
  totals -= base;
  EXPECT_EQ(HistogramCount(totals[PortHistogram::kResidence]), 1u);
  EXPECT_EQ(totals[PortHistogram::kResidence].sum_ns, 1'999u);
  for (uint64_t ns = 0; ns < 20'000'000; ns = ns * 3 / 2 + 1) {
    const size_t bucket = HistogramBucket(ns);
    if (bucket < kHistogramBounds) {
      ASSERT_LE(ns, kHistogramBoundsNs[bucket]) << ns;
    }
    if (bucket > 0) {
      ASSERT_GT(ns, kHistogramBoundsNs[bucket - 1]) << ns;
    }
  }
}

// Quantiles as Prometheus' histogram_quantile estimates them from the same buckets.
TEST(CountersTest, HistogramQuantiles) {
  HistogramTotals h;
  EXPECT_EQ(HistogramQuantileNs(h, 0.5), 0);
  h.buckets[3] = 50;  // (500 ns, 1 us]
  h.buckets[4] = 50;  // (1 us, 2 us]
  EXPECT_DOUBLE_EQ(HistogramQuantileNs(h, 0.25), 750);
  EXPECT_DOUBLE_EQ(HistogramQuantileNs(h, 0.5), 1'000);
  EXPECT_DOUBLE_EQ(HistogramQuantileNs(h, 0.99), 1'980);
  h.buckets[kHistogramBounds] = 100;  // beyond the last bound: that bound
  EXPECT_DOUBLE_EQ(HistogramQuantileNs(h, 0.99), 10'000'000);
  h = {};
  h.buckets[0] = 4;  // from 0
  EXPECT_DOUBLE_EQ(HistogramQuantileNs(h, 0.5), 50);
}

}  // namespace
}  // namespace hvswitch
