// hvs_guest: a scriptable DPDK guest for the end-to-end tests. It owns one port (the
// first ethdev: a virtio-user or memif client given with --vdev) and obeys one command
// per line on stdin, answering each with one JSON line on stdout:
//   link [reconnect]           -> {"link":0|1}   with reconnect, a memif port that is down
//                                              (and was started over a second ago) is
//                                              restarted, which reconnects it
//   mac                        -> {"mac":"aa:bb:.."}
//   pause / resume             -> {"ok":1}     stop / go on taking frames from the port
//                                              (a stalled VM: its ring fills up)
//   slow NS                    -> {"ok":1}     take one frame every NS nanoseconds at most,
//                                              polling all the time (a VM alive but slower
//                                              than its traffic); slow 0: as fast as it can
//   stop / start               -> {"stopped":1} / {"started":1}   the port (disconnects
//                                              from the switch / connects again)
//   (stats counts received frames per "SRC>DST", with "@VLAN" appended for tagged ones)
//   send DST SRC COUNT [SIZE]  -> {"sent":N}   frames DST<-SRC, ethertype 0x88b5,
//                                              SIZE 60-9018 (jumbo frames as mbuf chains)
//   sendl4 DST SRC COUNT tcp|udp full|partial|bad -> {"sent":N}   IPv4 frames whose L4
//                                  checksum is complete, left to the device, or wrong
//   sendtso DST SRC COUNT v4|v6 PAYLOAD MSS -> {"sent":N}   TCP super-frames of PAYLOAD
//                                  bytes each (one stream), segmented at MSS by the device
//   stats                      -> {"rx":N,"rx_bytes":N,"tx":N,"tx_bytes":N,
//                                  "l4":{"good":N,"bad":N,"partial":N},
//                                  "tcp":{"frames":N,"super":N,"payload":N,"broken":N,
//                                         "max":N},   frames of sendtso streams: how many
//                                  arrived as super-frames, payload bytes, frames whose
//                                  payload is wrong, the largest frame
//                                  "flows":{"SRC>DST":N,...}}
//   clear                      -> {"ok":1}     forget received flows (not the totals)
//   quit                       -> {"ok":1}
//   latency DST SRC COUNT RATE [SIZE] -> {"sent":N,"received":N,"p50_ns":..,"p99_ns":..,
//                                  "p999_ns":..,"max_ns":..,...}   with a second port
//                                  (a second --vdev): COUNT probes DST<-SRC of SIZE
//                                  (60-1514) bytes at RATE frames/s (0: as fast as the
//                                  port takes them) sent on the first port, their one-way
//                                  latency read on the second, which first sends one
//                                  broadcast from DST so that a switch learns it there
//   linkup DST SRC RATE [BEFORE_MS AFTER_MS] -> {"sent":N,"sent_after_up":N,
//                                  "lost_after_up":N,"first_rx_ns":..,...}   with a second
//                                  port: unplugs it, streams DST<-SRC at RATE frames/s on
//                                  the first, plugs the second back after BEFORE_MS and
//                                  streams on for AFTER_MS after its link is up: frames
//                                  lost at its link-up (tests/guest/linkup_probe.h)
//   gen config|learn|start|stop|queues|stats ...  with a second port: a loopback generator
//                                  over many MACs between the two ports (tests/guest/
//                                  mac_generator.h); once configured it owns both ports
// Usage: hvs_guest EAL-ARGS... [-- --rx-csum] [--rx-tso]
//   --rx-csum: enable Rx checksum offload, so that a virtio-user port negotiates
//   GUEST_CSUM and takes partial checksums (counted as "partial" in stats).
//   --rx-tso: enable Rx LRO too, so that it negotiates GUEST_TSO4/6 and takes
//   super-frames whole.
#include <poll.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "tests/guest/l4_frames.h"
#include "tests/guest/latency_probe.h"
#include "tests/guest/linkup_probe.h"
#include "tests/guest/mac_generator.h"

namespace {

using hvswitch::guest::ChecksumMode;
using hvswitch::guest::ReceivedChecksum;

constexpr uint16_t kPort = 0;
constexpr uint16_t kProbePort = 1;  // the latency command's receiving port, if given
constexpr uint16_t kEtherType = 0x88b5;

std::string MacString(const rte_ether_addr& a) {
  char buf[RTE_ETHER_ADDR_FMT_SIZE];
  rte_ether_format_addr(buf, sizeof(buf), &a);
  for (char* c = buf; *c; ++c) *c = static_cast<char>(tolower(*c));
  return buf;
}

struct Guest {
  rte_mempool* pool = nullptr;
  uint64_t rx = 0, rx_bytes = 0, tx = 0, tx_bytes = 0, rx_max = 0;
  uint64_t l4_good = 0, l4_bad = 0, l4_partial = 0;
  uint64_t tcp_frames = 0, tcp_super = 0, tcp_payload = 0, tcp_broken = 0, tcp_max = 0;
  std::map<std::string, uint64_t> flows;
  bool stopped = false;  // the port, by the stop command
  bool paused = false;   // receiving, by the pause command
  uint64_t slow_cycles = 0;  // the slow command's interval in TSC cycles; 0: not slow
  uint64_t next_take = 0;    // slow: TSC when the next frame may be taken
  uint64_t started_tsc = 0;  // when the port was last started

  bool probe_port = false;  // a second port was given (latency, gen)
  std::optional<hvswitch::guest::MacLoop> gen;  // the gen command's loop

  bool Generating() const { return gen && gen->configured(); }

  void Receive() {
    if (Generating()) return gen->Poll();
    if (probe_port) {  // what reaches it outside a latency run is of no interest
      rte_mbuf* pkts[32];
      rte_pktmbuf_free_bulk(pkts, rte_eth_rx_burst(kProbePort, 0, pkts, 32));
    }
    if (stopped || paused) return;
    if (slow_cycles != 0) return ReceiveSlowly();
    rte_mbuf* pkts[32];
    Count(pkts, rte_eth_rx_burst(kPort, 0, pkts, 32));
  }

  // One frame every slow_cycles, for up to 200 us (then the caller looks at its input):
  // each frame taken gives the switch one descriptor back, as a slow guest's driver does.
  void ReceiveSlowly() {
    const uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 5000;
    for (uint64_t now = rte_get_tsc_cycles(); now < end; now = rte_get_tsc_cycles()) {
      if (now < next_take) continue;
      rte_mbuf* m;
      if (rte_eth_rx_burst(kPort, 0, &m, 1) == 1) {
        Count(&m, 1);
        next_take = now + slow_cycles;  // no catching up after a pause: at most that rate
      }
    }
  }

  void Count(rte_mbuf** pkts, uint16_t n) {
    for (uint16_t i = 0; i < n; ++i) {
      ++rx;
      rx_bytes += pkts[i]->pkt_len;
      rx_max = std::max<uint64_t>(rx_max, pkts[i]->pkt_len);
      const auto* eth = rte_pktmbuf_mtod(pkts[i], const rte_ether_hdr*);
      std::string flow = MacString(eth->src_addr) + ">" + MacString(eth->dst_addr);
      if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN) &&
          pkts[i]->data_len >= sizeof(rte_ether_hdr) + sizeof(rte_vlan_hdr)) {
        const auto* tag = reinterpret_cast<const rte_vlan_hdr*>(eth + 1);
        // Two appends, not "@" + to_string(): g++ 12 -O3 warns a false -Wrestrict there.
        flow += '@';
        flow += std::to_string(rte_be_to_cpu_16(tag->vlan_tci) & 0xfff);
      }
      ++flows[flow];
      switch (hvswitch::guest::CheckL4Frame(pkts[i])) {
        case ReceivedChecksum::kGood: ++l4_good; break;
        case ReceivedChecksum::kBad: ++l4_bad; break;
        case ReceivedChecksum::kPartial: ++l4_partial; break;
        case ReceivedChecksum::kNotL4: break;
      }
      const hvswitch::guest::TcpPayload tcp = hvswitch::guest::CheckTcpPayload(pkts[i]);
      if (tcp.tcp) {
        ++tcp_frames;
        if (pkts[i]->ol_flags & RTE_MBUF_F_RX_LRO) ++tcp_super;
        tcp_payload += tcp.bytes;
        if (!tcp.intact) ++tcp_broken;
        tcp_max = std::max<uint64_t>(tcp_max, pkts[i]->pkt_len);
      }
    }
    rte_pktmbuf_free_bulk(pkts, n);
  }

  // A zeroed frame of `size` bytes; frames larger than one buffer are chains (jumbo).
  rte_mbuf* MakeChain(uint16_t size) {
    constexpr uint16_t kSegment = 2048;
    rte_mbuf* head = nullptr;
    for (uint16_t left = size; left > 0;) {
      uint16_t part = std::min(left, kSegment);
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      if (m == nullptr) {
        rte_pktmbuf_free(head);
        return nullptr;
      }
      std::memset(rte_pktmbuf_append(m, part), 0, part);
      if (head == nullptr) {
        head = m;
      } else if (rte_pktmbuf_chain(head, m) != 0) {
        rte_pktmbuf_free(head);
        rte_pktmbuf_free(m);
        return nullptr;
      }
      left -= part;
    }
    return head;
  }

  // Sends `count` frames made by make(seq), waiting (and receiving) while the ring is full.
  template <typename Make>
  uint64_t Send(uint64_t count, Make&& make) {
    uint64_t sent = 0;
    uint64_t deadline = rte_get_tsc_cycles() + 5 * rte_get_tsc_hz();
    while (sent < count && rte_get_tsc_cycles() < deadline) {
      rte_mbuf* m = make(sent);
      if (m == nullptr) {
        Receive();
        continue;
      }
      const uint32_t len = m->pkt_len;
      while (rte_eth_tx_burst(kPort, 0, &m, 1) == 0) {
        Receive();  // the switch may be waiting for us to drain our ring
        if (rte_get_tsc_cycles() >= deadline) {
          rte_pktmbuf_free(m);
          return sent;
        }
      }
      ++sent;
      ++tx;
      tx_bytes += len;
    }
    return sent;
  }

  uint64_t SendPlain(const rte_ether_addr& dst, const rte_ether_addr& src, uint64_t count,
                     uint16_t size) {
    return Send(count, [&](uint64_t seq) -> rte_mbuf* {
      rte_mbuf* m = MakeChain(size);
      if (m == nullptr) return nullptr;
      char* data = rte_pktmbuf_mtod(m, char*);
      auto* eth = reinterpret_cast<rte_ether_hdr*>(data);
      eth->dst_addr = dst;
      eth->src_addr = src;
      eth->ether_type = rte_cpu_to_be_16(kEtherType);
      std::memcpy(data + sizeof(rte_ether_hdr), &seq, sizeof(seq));
      return m;
    });
  }

  static bool IsMemif() {
    rte_eth_dev_info info{};
    return rte_eth_dev_info_get(kPort, &info) == 0 &&
           std::strcmp(info.driver_name, "net_memif") == 0;
  }

  std::string Handle(const std::string& line, bool* quit) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "link") {
      rte_eth_link link{};
      rte_eth_link_get_nowait(kPort, &link);
      std::string reconnect;
      in >> reconnect;
      if (reconnect == "reconnect" && link.link_status == 0 && !stopped && IsMemif() &&
          rte_get_tsc_cycles() - started_tsc > rte_get_tsc_hz()) {
        // DPDK's memif client connects only when started: a guest reconnects to a
        // restarted switch by restarting its port (VPP's libmemif does it by itself).
        // Not within a second of the last start: stopping a memif client in the middle
        // of its handshake crashes DPDK 22.11's memif interrupt thread.
        rte_eth_dev_stop(kPort);
        rte_eth_dev_start(kPort);
        started_tsc = rte_get_tsc_cycles();
        rte_eth_link_get_nowait(kPort, &link);
      }
      return "{\"link\":" + std::to_string(link.link_status) + "}";
    }
    if (cmd == "pause" || cmd == "resume") {  // a stalled VM: connected, not draining
      paused = cmd == "pause";
      return "{\"ok\":1}";
    }
    if (cmd == "slow") {  // a VM alive but slower than its traffic
      uint64_t ns = 0;
      if (!(in >> ns) || ns > 1000000) return "{\"error\":\"bad slow arguments\"}";
      slow_cycles = ns * rte_get_tsc_hz() / 1000000000;
      if (ns != 0 && slow_cycles == 0) slow_cycles = 1;
      return "{\"ok\":1}";
    }
    if (cmd == "stop") {  // the guest's driver going away: disconnects from the switch
      stopped = rte_eth_dev_stop(kPort) == 0;
      return std::string("{\"stopped\":") + (stopped ? "1" : "0") + "}";
    }
    if (cmd == "start") {  // and coming back
      stopped = rte_eth_dev_start(kPort) != 0;
      started_tsc = rte_get_tsc_cycles();
      return std::string("{\"started\":") + (stopped ? "0" : "1") + "}";
    }
    if (cmd == "mac") {
      rte_ether_addr a{};
      rte_eth_macaddr_get(kPort, &a);
      return "{\"mac\":\"" + MacString(a) + "\"}";
    }
    if (cmd == "send") {
      std::string dst_text, src_text;
      uint64_t count = 0;
      unsigned size = 64;
      in >> dst_text >> src_text >> count;
      if (!(in >> size)) size = 64;
      rte_ether_addr dst{}, src{};
      if (rte_ether_unformat_addr(dst_text.c_str(), &dst) != 0 ||
          rte_ether_unformat_addr(src_text.c_str(), &src) != 0 || size < 60 || size > 9018) {
        return "{\"error\":\"bad send arguments\"}";
      }
      return "{\"sent\":" +
             std::to_string(SendPlain(dst, src, count, static_cast<uint16_t>(size))) + "}";
    }
    if (cmd == "sendl4") {
      std::string dst_text, src_text, proto, mode_text;
      uint64_t count = 0;
      in >> dst_text >> src_text >> count >> proto >> mode_text;
      rte_ether_addr dst{}, src{};
      ChecksumMode mode;
      if (rte_ether_unformat_addr(dst_text.c_str(), &dst) != 0 ||
          rte_ether_unformat_addr(src_text.c_str(), &src) != 0 ||
          (proto != "tcp" && proto != "udp") ||
          !hvswitch::guest::ParseChecksumMode(mode_text, &mode)) {
        return "{\"error\":\"bad sendl4 arguments\"}";
      }
      uint64_t sent = Send(count, [&](uint64_t seq) {
        return hvswitch::guest::MakeL4Frame(pool, dst, src, proto == "tcp", mode,
                                            static_cast<uint32_t>(seq));
      });
      return "{\"sent\":" + std::to_string(sent) + "}";
    }
    if (cmd == "sendtso") {
      std::string dst_text, src_text, family;
      uint64_t count = 0;
      unsigned payload = 0, mss = 0;
      in >> dst_text >> src_text >> count >> family >> payload >> mss;
      rte_ether_addr dst{}, src{};
      if (rte_ether_unformat_addr(dst_text.c_str(), &dst) != 0 ||
          rte_ether_unformat_addr(src_text.c_str(), &src) != 0 ||
          (family != "v4" && family != "v6") || payload == 0 || payload > 65000 || mss == 0 ||
          mss > 9000) {
        return "{\"error\":\"bad sendtso arguments\"}";
      }
      uint64_t sent = Send(count, [&](uint64_t k) {
        return hvswitch::guest::MakeTcpSuperFrame(pool, dst, src, family == "v6",
                                                  static_cast<uint32_t>(k * payload),
                                                  static_cast<uint16_t>(payload),
                                                  static_cast<uint16_t>(mss));
      });
      return "{\"sent\":" + std::to_string(sent) + "}";
    }
    if (cmd == "stats") {
      std::string out = "{\"rx\":" + std::to_string(rx) + ",\"rx_bytes\":" +
                        std::to_string(rx_bytes) + ",\"rx_max\":" + std::to_string(rx_max) +
                        ",\"l4\":{\"good\":" + std::to_string(l4_good) +
                        ",\"bad\":" + std::to_string(l4_bad) + ",\"partial\":" +
                        std::to_string(l4_partial) + "},\"tcp\":{\"frames\":" +
                        std::to_string(tcp_frames) + ",\"super\":" + std::to_string(tcp_super) +
                        ",\"payload\":" + std::to_string(tcp_payload) + ",\"broken\":" +
                        std::to_string(tcp_broken) + ",\"max\":" + std::to_string(tcp_max) +
                        "},\"tx\":" + std::to_string(tx) +
                        ",\"tx_bytes\":" + std::to_string(tx_bytes) + ",\"flows\":{";
      bool first = true;
      for (const auto& [flow, n] : flows) {
        out += (first ? "\"" : ",\"") + flow + "\":" + std::to_string(n);
        first = false;
      }
      return out + "}}";
    }
    if (cmd == "clear") {
      flows.clear();
      return "{\"ok\":1}";
    }
    if (cmd == "latency") {
      std::string dst_text, src_text;
      hvswitch::guest::LatencyRun run;
      unsigned size = 64;
      in >> dst_text >> src_text >> run.count >> run.rate;
      if (!(in >> size)) size = 64;
      if (!probe_port || rte_ether_unformat_addr(dst_text.c_str(), &run.dst) != 0 ||
          rte_ether_unformat_addr(src_text.c_str(), &run.src) != 0 || size < 60 ||
          size > 1514 || run.count == 0 || run.count > 100000000) {
        return "{\"error\":\"bad latency arguments (or no second port)\"}";
      }
      run.size = static_cast<uint16_t>(size);
      run.tx_port = kPort;
      run.rx_port = kProbePort;
      // Where DST is, for a learning switch; then 20 ms for it to be learned.
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      char* frame = m == nullptr ? nullptr : rte_pktmbuf_append(m, 60);
      if (frame == nullptr) {
        rte_pktmbuf_free(m);
      } else {
        std::memset(frame, 0, 60);
        auto* eth = reinterpret_cast<rte_ether_hdr*>(frame);
        std::memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
        eth->src_addr = run.dst;
        eth->ether_type = rte_cpu_to_be_16(kEtherType);
        if (rte_eth_tx_burst(kProbePort, 0, &m, 1) == 0) rte_pktmbuf_free(m);
      }
      for (uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 50;
           rte_get_tsc_cycles() < end;) {
        Receive();
      }
      return hvswitch::guest::MeasureLatency(pool, run).Json();
    }
    if (cmd == "linkup") {
      std::string dst_text, src_text;
      hvswitch::guest::LinkUpRun run;
      in >> dst_text >> src_text >> run.rate;
      uint64_t before_ms = 0, after_ms = 0;  // a failed read would zero the defaults
      if (in >> before_ms >> after_ms) {
        run.before_ms = before_ms;
        run.after_ms = after_ms;
      }
      if (!probe_port || rte_ether_unformat_addr(dst_text.c_str(), &run.dst) != 0 ||
          rte_ether_unformat_addr(src_text.c_str(), &run.src) != 0 || run.rate == 0 ||
          run.rate > 10000000 || run.before_ms > 10000 || run.after_ms > 10000) {
        return "{\"error\":\"bad linkup arguments (or no second port)\"}";
      }
      run.tx_port = kPort;
      run.rx_port = kProbePort;
      return hvswitch::guest::MeasureLinkUp(pool, run).Json();
    }
    if (cmd == "gen") {
      if (!probe_port) return "{\"error\":\"gen needs a second port\"}";
      if (!gen) gen.emplace(pool, kPort, kProbePort);
      return gen->Command(in);
    }
    if (cmd == "quit") {
      *quit = true;
      return "{\"ok\":1}";
    }
    return "{\"error\":\"unknown command\"}";
  }
};

// The guest's port with what the device takes of jumbo frames and offloads.
bool StartPort(uint16_t port, bool rx_csum, bool rx_tso, rte_mempool* pool) {
  // Jumbo frames where the device takes them (virtio-user does; memif reports 1500 but
  // moves chains of any length).
  rte_eth_dev_info info{};
  rte_eth_dev_info_get(port, &info);
  rte_eth_conf conf{};
  conf.rxmode.mtu = std::min<uint32_t>({9000, info.max_mtu, info.max_rx_pktlen - 18});
  conf.rxmode.offloads = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER;
  if (rx_csum || rx_tso) {
    conf.rxmode.offloads |=
        info.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
  }
  if (rx_tso) conf.rxmode.offloads |= info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TCP_LRO;
  // Checksum offload where the device has it (virtio-user: the switch's vhost-user port
  // offered VIRTIO_NET_F_CSUM), so that `sendl4 ... partial` leaves the sum to it.
  conf.txmode.offloads = info.tx_offload_capa &
                         (RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
                          RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_TSO);
  return rte_eth_dev_configure(port, 1, 1, &conf) == 0 &&
         rte_eth_rx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), nullptr, pool) == 0 &&
         rte_eth_tx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), nullptr) == 0 &&
         rte_eth_dev_start(port) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int eal_args = rte_eal_init(argc, argv);
  if (eal_args < 0) {
    std::fprintf(stderr, "hvs_guest: cannot init EAL\n");
    return 1;
  }
  bool rx_csum = false, rx_tso = false;
  for (int i = eal_args + 1; i < argc; ++i) {
    rx_csum |= std::strcmp(argv[i], "--rx-csum") == 0;
    rx_tso |= std::strcmp(argv[i], "--rx-tso") == 0;
  }
  if (rte_eth_dev_count_avail() == 0) {
    std::fprintf(stderr, "hvs_guest: no port (give --vdev)\n");
    return 1;
  }
  Guest guest;
  guest.pool = rte_pktmbuf_pool_create("guest", 4095, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                       static_cast<int>(rte_socket_id()));
  guest.probe_port = rte_eth_dev_count_avail() > 1;
  if (guest.pool == nullptr || !StartPort(kPort, rx_csum, rx_tso, guest.pool) ||
      (guest.probe_port && !StartPort(kProbePort, rx_csum, rx_tso, guest.pool))) {
    std::fprintf(stderr, "hvs_guest: cannot start port\n");
    return 1;
  }
  guest.started_tsc = rte_get_tsc_cycles();
  std::printf("{\"ready\":1}\n");
  std::fflush(stdout);

  std::string pending;
  bool quit = false;
  while (!quit) {
    guest.Receive();
    pollfd pfd{STDIN_FILENO, POLLIN, 0};
    if (poll(&pfd, 1, 0) > 0) {
      char buf[4096];
      ssize_t got = read(STDIN_FILENO, buf, sizeof(buf));
      if (got <= 0) break;  // the test went away
      pending.append(buf, static_cast<size_t>(got));
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        std::printf("%s\n", guest.Handle(line, &quit).c_str());
        std::fflush(stdout);
      }
    } else if ((guest.slow_cycles == 0 || guest.paused || guest.stopped) &&
               !guest.Generating()) {
      usleep(100);  // a test guest need not burn a core (a slow one polls all the time)
    }
  }
  for (uint16_t port = 0; port < (guest.probe_port ? 2 : 1); ++port) rte_eth_dev_stop(port);
  // A virtio-user server (server=1) whose switch just went away (a port removed, hvswitch
  // stopped) re-registers its interrupt from an EAL alarm moments later; DPDK 22.11's close
  // frees the interrupt handle without waiting for that alarm (a use-after-free ASan saw
  // in the interrupt thread). The alarm fires 1 us after the interrupt thread sees the
  // disconnect: 50 ms lets it run before close.
  rte_delay_ms(50);
  for (uint16_t port = 0; port < (guest.probe_port ? 2 : 1); ++port) rte_eth_dev_close(port);
  rte_eal_cleanup();
  return 0;
}
