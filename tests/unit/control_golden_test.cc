// The control protocol's answers, byte for byte: every request hvswitchctl sends, success
// and error, against a stub bridge whose snapshot holds a distinct non-zero value in every
// counter cell. Restructuring how counters are declared, summed and rendered, or how the
// commands are parsed, must leave these bytes alone (scripts parse them; `config show` is
// read back by --config). A change here is a protocol change: make it on purpose.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "switch/control/command_handlers.h"
#include "switch/datapath/mac_key.h"
#include "tests/stub_bridge.h"
#include "tests/unit/snapshot_fill.h"

namespace hvswitch {
namespace {

// Every cell of a port's counters, from `first` up: no two cells (or ports) alike, so a
// cell rendered under another's key shows.
PortSnapshot Counted(const std::string& name, uint64_t first) {
  PortSnapshot port;
  port.name = name;
  uint64_t v = first;
  FillDistinct(port, v);
  return port;
}

BridgeSnapshot Counters() {
  BridgeSnapshot snap;
  PortSnapshot vm = Counted("vm", 1000);
  vm.up = true;
  vm.mac = "56:48:4f:53:54:01";
  PortSnapshot mem = Counted("mem", 2000);
  mem.mac = "56:48:4f:53:54:02";
  mem.quota = 512;
  mem.buffers_in_use = 77;
  snap.ports = {vm, mem};
  for (unsigned cpu : {1u, 3u}) {
    CoreSnapshot core;
    core.cpu = cpu;
    core[CoreCounter::kBusyCycles] = 900000 * cpu;
    core[CoreCounter::kIdleCycles] = 300000 * cpu;
    core[CoreCounter::kPackets] = 4000 * cpu;
    for (size_t b = 0; b < core.rx_bursts.size(); ++b) core.rx_bursts[b] = 10 * cpu + b;
    core[CoreCounter::kLearnQueueDrops] = 5 * cpu;
    core[CoreCounter::kSleepCycles] = 120000 * cpu;
    core[CoreCounter::kWakeupsTimer] = 7 * cpu;
    core[CoreCounter::kWakeupsInterrupt] = 2 * cpu;
    core[CoreCounter::kWakeupsControl] = cpu;
    core.max_sleep_ns = cpu == 1 ? 250000 : 0;  // core 3 polls
    core.mode = cpu == 1 ? IdleMode::kSleep : IdleMode::kPoll;
    snap.cores.push_back(core);
  }
  snap[SwitchStat::kFdbEntries] = 3001;
  snap[SwitchStat::kFdbLearned] = 3002;
  snap[SwitchStat::kFdbMoves] = 3003;
  snap[SwitchStat::kFdbAged] = 3004;
  snap[SwitchStat::kFdbFlushed] = 3005;
  snap[SwitchStat::kFdbStatic] = 3006;
  snap[SwitchStat::kFdbStaticRefused] = 3007;
  snap[SwitchStat::kFdbLockedRefused] = 3008;
  snap[SwitchStat::kMbufs] = 3009;
  snap[SwitchStat::kMbufsInUse] = 3010;
  snap[SwitchStat::kCaptureMissed] = 3011;
  MirrorSpec mirror;
  mirror.name = "m1";  // its counts; the stub takes the spec from what was added
  snap.mirrors = {{mirror, {4001, 4002, 4003}}};
  McastGroup v4, v6;
  v4.addr = {239, 1, 1, 1};
  v6.v6 = true;
  v6.addr = {0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 3};
  snap.mcast.enabled = true;
  snap.mcast.groups = {{0, v4, {{0, 200}}}, {7, v6, {{0, 5}, {1, 100}}}};
  snap.mcast.routers = {{0, 1, 250}};
  snap.mcast.static_routers = uint64_t{1} << 1;
  snap.mcast.queries = 4004;
  snap.mcast.reports = 4005;
  snap.mcast.invalid = 4006;
  snap.mcast.table_full = 4007;
  snap.mcast.port_limit = 4008;
  snap.mcast.guest_querier = 4009;
  return snap;
}

struct Exchange {
  const char* request;  // $DIR: the runtime directory
  const char* answer;
  uid_t uid = 0;        // 65534: a --ctl_group member
  bool with_file = false;
};

class ControlGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = mkdtemp(std::string("/tmp/hvs-golden-XXXXXX").data());
    options_.runtime_dir = dir_;
    options_.ctl_socket = dir_ + "/hvswitch.ctl";
    for (const char* text : {"vm,type=vhost-user,path=$DIR/vm.sock",
                             "mem,type=memif,path=$DIR/mem.sock,quota=512"}) {
      absl::StatusOr<PortSpec> spec = ParsePortSpec(Expand(text));
      ASSERT_TRUE(spec.ok()) << spec.status();
      ASSERT_TRUE(bridge_.AddPort(*spec).ok());
    }
    ASSERT_TRUE(bridge_.AddStaticMac({"mem", *ParseUnicastMacKey("02:00:00:00:00:aa", 0)}).ok());
    bridge_.Learn(*ParseUnicastMacKey("02:00:00:00:00:bb", 7), 0);
    bridge_.SetCounters(Counters());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Expand(const std::string& text) const {
    return absl::StrReplaceAll(text, {{"$DIR", dir_}});
  }

  std::string Ask(const Exchange& e) {
    const std::string line = Expand(e.request);
    ControlRequest request;
    request.line = line;
    request.peer.uid = e.uid;
    request.file = e.with_file ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
    ControlAnswer answer = ExecuteControlCommand(bridge_, options_, request);
    EXPECT_FALSE(answer.connection_taken) << e.request;
    return answer.line;
  }

  void ExpectAnswers(const std::vector<Exchange>& exchanges) {
    for (const Exchange& e : exchanges) {
      EXPECT_EQ(Ask(e), Expand(e.answer)) << "request: " << e.request;
    }
  }

  std::string dir_;
  DaemonOptions options_;
  StubBridge bridge_;
};

// port list/show/add/del and their errors.
TEST_F(ControlGoldenTest, PortCommands) {
  ExpectAnswers({
      {"port list",
       R"j({"ok":true,"ports":[{"fdb_learned":1031,"mac":"56:48:4f:53:54:01","mtu":1500,)j"
       R"j("name":"vm","rx_packets":1000,"shut":false,"tx_packets":1002,"type":"vhost-user",)j"
       R"j("up":true},{"fdb_learned":2031,"mac":"56:48:4f:53:54:02","mtu":1500,"name":"mem",)j"
       R"j("rx_packets":2000,"shut":false,"tx_packets":2002,"type":"memif","up":false}]})j"},
      {"port show vm",
       R"j({"ok":true,"port":{"announcements":1706,"bpdu_guard_shutdowns":1011,"cpu_cycles":1704,"fdb_learned":1031,)j"
       R"j("learn_limited":1004,"learn_table_full":1005,)j"
       R"j("mac":"56:48:4f:53:54:01","mtu":1500,"name":"vm","offload":{"csum_hw":1007,)j"
       R"j("csum_sw":1008,"tso_hw":1009,"tso_sw":1010},)j"
       R"j("residence":{"buckets":[{"count":10,"le_ns":1000},{"count":86,"le_ns":2000},)j"
       R"j({"count":9,"le_ns":50000},{"count":1,"gt_ns":10000000}],"p50_ns":1500,)j"
       R"j("p90_ns":1993,"p99_ns":49800,"samples":106,"sum_ns":100000},)j"
       R"j("rx_bytes":1001,)j"
       R"j("rx_drops":{"bad_offload":1015,"hairpin":1014,"malformed":1012,"mirror_port":1801,"missed":1022,)j"
       R"j("no_destination":1017,"no_mbuf":1030,"policed":1018,"reserved":1020,"rx_error":1023,)j"
       R"j("shut":1021,"spoofed":1016,"spoofed_ip":1800,"storm":1019,"vlan":1013},)j"
       R"j("rx_packets":1000,"rx_pause_cycles":1703,"rx_pauses":1702,"shut":false,)j"
       R"j("snoop_limited":1705,)j"
       R"j("spec":"vm,type=vhost-user,path=$DIR/vm.sock","tx_bursts":1006,)j"
       R"j("tx_bytes":1003,"tx_drops":{"link_down":1025,"mtu":1026,"no_mbuf":1027,)j"
       R"j("offload_refused":1028,"queue_full":1024,"vlan":1029},"tx_packets":1002,)j"
       R"j("tx_retries":1700,"tx_retry_cycles":1701,"type":"vhost-user","up":true}})j"},
      {"port show mem",
       R"j({"ok":true,"port":{"announcements":2706,"bpdu_guard_shutdowns":2011,"buffer_quota":512,"buffers_in_use":77,)j"
       R"j("cpu_cycles":2704,"fdb_learned":2031,)j"
       R"j("learn_limited":2004,"learn_table_full":2005,"mac":"56:48:4f:53:54:02","mtu":1500,)j"
       R"j("name":"mem","offload":{"csum_hw":2007,"csum_sw":2008,"tso_hw":2009,"tso_sw":2010},)j"
       R"j("residence":{"buckets":[{"count":10,"le_ns":1000},{"count":85,"le_ns":2000},)j"
       R"j({"count":9,"le_ns":50000},{"count":1,"gt_ns":10000000}],"p50_ns":1500,)j"
       R"j("p90_ns":1994,"p99_ns":49833,"samples":105,"sum_ns":200000},)j"
       R"j("rx_bytes":2001,"rx_drops":{"bad_offload":2015,"hairpin":2014,"malformed":2012,"mirror_port":2801,)j"
       R"j("missed":2022,"no_destination":2017,"no_mbuf":2030,"policed":2018,"reserved":2020,)j"
       R"j("rx_error":2023,"shut":2021,"spoofed":2016,"spoofed_ip":2800,"storm":2019,)j"
       R"j("vlan":2013},"rx_packets":2000,"rx_pause_cycles":2703,"rx_pauses":2702,"shut":false,)j"
       R"j("snoop_limited":2705,)j"
       R"j("spec":"mem,type=memif,path=$DIR/mem.sock,quota=512",)j"
       R"j("tx_bursts":2006,"tx_bytes":2003,"tx_drops":{"link_down":2025,"mtu":2026,)j"
       R"j("no_mbuf":2027,"offload_refused":2028,"queue_full":2024,"vlan":2029},)j"
       R"j("tx_packets":2002,"tx_retries":2700,"tx_retry_cycles":2701,"type":"memif",)j"
       R"j("up":false}})j"},
      {"port show nope",
       R"j({"error":"no port named 'nope'","ok":false})j"},
      {"port show",
       R"j({"error":"port: list | show NAME | add NAME TYPE KEY=VALUE... | add SPEC | del NAME )j"
       R"j(| enable NAME","ok":false})j"},
      {"port",
       R"j({"error":"port: list | show NAME | add NAME TYPE KEY=VALUE... | add SPEC | del NAME )j"
       R"j(| enable NAME","ok":false})j"},
      {"port list --vlan 3",
       R"j({"error":"port: list | show NAME | add NAME TYPE KEY=VALUE... | add SPEC | del NAME )j"
       R"j(| enable NAME","ok":false})j"},
      {"port add x vhost-user path=$DIR/x.sock",
       R"j({"ok":true,"spec":"x,type=vhost-user,path=$DIR/x.sock"})j"},
      {"port add y,type=memif,path=$DIR/y.sock,quota=64",
       R"j({"error":"port 'y': quota must be a number of buffers from 256 to 1048576",)j"
       R"j("ok":false})j"},
      {"port add y,type=memif,path=$DIR/y.sock,quota=256",
       R"j({"ok":true,"spec":"y,type=memif,path=$DIR/y.sock,quota=256"})j"},
      {"port add x vhost-user path=$DIR/x.sock",
       R"j({"error":"exists","ok":false})j"},
      {"port add z bogus",
       R"j({"error":"port 'z': unknown type 'bogus' (expected vhost-user, memif, host, netdev, dpdk, bond or vxlan)",)j"
       R"j("ok":false})j"},
      {"port add p,type=dpdk,devargs=net_pcap0,tx_pcap=/etc/shadow",
       R"j({"denied":true,"error":"permission denied: type=dpdk ports (devices) need root; the )j"
       R"j(--ctl_group may manage vhost-user and memif ports","ok":false})j", 65534, false},
      {"port del y",
       R"j({"ok":true})j"},
      {"port del nope",
       R"j({"error":"no port named 'nope'","ok":false})j"},
      {"port del x",
       R"j({"ok":true})j"},
      {"port enable vm",
       R"j({"ok":true})j"},
      {"port enable vm",
       R"j({"ok":true})j", 65534, false},
      {"port enable nope",
       R"j({"error":"no port named 'nope'","ok":false})j"},
      {"port enable",
       R"j({"error":"port: list | show NAME | add NAME TYPE KEY=VALUE... | add SPEC | del NAME )j"
       R"j(| enable NAME","ok":false})j"},
  });
}

// A port bpdu_guard=1 shut: `port list` says so until `port enable` (a --ctl_group member
// may) ends it.
TEST_F(ControlGoldenTest, PortEnableEndsAShut) {
  bridge_.Shut("vm");
  ExpectAnswers({
      {"port list",
       R"j({"ok":true,"ports":[{"fdb_learned":1031,"mac":"56:48:4f:53:54:01","mtu":1500,)j"
       R"j("name":"vm","rx_packets":1000,"shut":true,"tx_packets":1002,"type":"vhost-user",)j"
       R"j("up":true},{"fdb_learned":2031,"mac":"56:48:4f:53:54:02","mtu":1500,"name":"mem",)j"
       R"j("rx_packets":2000,"shut":false,"tx_packets":2002,"type":"memif","up":false}]})j"},
      {"port enable vm",
       R"j({"ok":true})j", 65534, false},
      {"port list",
       R"j({"ok":true,"ports":[{"fdb_learned":1031,"mac":"56:48:4f:53:54:01","mtu":1500,)j"
       R"j("name":"vm","rx_packets":1000,"shut":false,"tx_packets":1002,"type":"vhost-user",)j"
       R"j("up":true},{"fdb_learned":2031,"mac":"56:48:4f:53:54:02","mtu":1500,"name":"mem",)j"
       R"j("rx_packets":2000,"shut":false,"tx_packets":2002,"type":"memif","up":false}]})j"},
  });
}

// fdb show/add/del/flush and their errors.
TEST_F(ControlGoldenTest, FdbCommands) {
  ExpectAnswers({
      {"fdb show",
       R"j({"entries":[{"mac":"02:00:00:00:00:aa","port":"mem","static":true,"vlan":0},)j"
       R"j({"age":10,"mac":"02:00:00:00:00:bb","port":"vm","static":false,"vlan":7}],"ok":true})j"},
      {"fdb show --port vm",
       R"j({"entries":[{"age":10,"mac":"02:00:00:00:00:bb","port":"vm","static":false,)j"
       R"j("vlan":7}],"ok":true})j"},
      {"fdb show --vlan 7",
       R"j({"entries":[{"age":10,"mac":"02:00:00:00:00:bb","port":"vm","static":false,)j"
       R"j("vlan":7}],"ok":true})j"},
      {"fdb show --port nope",
       R"j({"error":"no port named 'nope'","ok":false})j"},
      {"fdb show --vlan 5000",
       R"j({"error":"--vlan must be 0-4094, not '5000'","ok":false})j"},
      {"fdb show --port",
       R"j({"error":"--port needs a value","ok":false})j"},
      {"fdb show --colour red",
       R"j({"error":"unknown option --colour","ok":false})j"},
      {"fdb add vm 02:00:00:00:00:09 --vlan 5",
       R"j({"ok":true})j"},
      {"fdb add vm ff:ff:ff:ff:ff:ff",
       R"j({"error":"'ff:ff:ff:ff:ff:ff' is not a unicast MAC","ok":false})j"},
      {"fdb add nope 02:00:00:00:00:0a",
       R"j({"error":"no such port","ok":false})j"},
      {"fdb del 02:00:00:00:00:09 --vlan 5",
       R"j({"ok":true})j"},
      {"fdb del 02:00:00:00:00:77",
       R"j({"error":"no entry for 02:00:00:00:00:77 in VLAN 0","ok":false})j"},
      {"fdb flush --port vm",
       R"j({"ok":true})j"},
      {"fdb flush --vlan 3",
       R"j({"error":"fdb: show [--port P] [--vlan V] | flush [--port P] | add PORT MAC [--vlan )j"
       R"j(V] | del MAC [--vlan V]","ok":false})j"},
      {"fdb flush",
       R"j({"ok":true})j"},
      {"fdb show",
       R"j({"entries":[{"mac":"02:00:00:00:00:aa","port":"mem","static":true,"vlan":0}],)j"
       R"j("ok":true})j"},
      {"fdb",
       R"j({"error":"fdb: show [--port P] [--vlan V] | flush [--port P] | add PORT MAC [--vlan )j"
       R"j(V] | del MAC [--vlan V]","ok":false})j"},
      {"fdb bogus",
       R"j({"error":"fdb: show [--port P] [--vlan V] | flush [--port P] | add PORT MAC [--vlan )j"
       R"j(V] | del MAC [--vlan V]","ok":false})j"},
  });
}

// stats (every port counter and the FDB's totals) and pmd (the cores).
TEST_F(ControlGoldenTest, StatsAndPmd) {
  ExpectAnswers({
      {"stats",
       R"j({"fdb":{"aged_total":3004,"entries":3001,"flushed_total":3005,"learned_total":3002,)j"
       R"j("moves_total":3003,"static":3006},"ok":true,"ports":[{"announcements":1706,"bpdu_guard_shutdowns":1011,)j"
       R"j("cpu_cycles":1704,"fdb_learned":1031,)j"
       R"j("learn_limited":1004,"learn_table_full":1005,"mac":"56:48:4f:53:54:01","mtu":1500,)j"
       R"j("name":"vm","offload":{"csum_hw":1007,"csum_sw":1008,"tso_hw":1009,"tso_sw":1010},)j"
       R"j("residence":{"buckets":[{"count":10,"le_ns":1000},{"count":86,"le_ns":2000},)j"
       R"j({"count":9,"le_ns":50000},{"count":1,"gt_ns":10000000}],"p50_ns":1500,)j"
       R"j("p90_ns":1993,"p99_ns":49800,"samples":106,"sum_ns":100000},)j"
       R"j("rx_bytes":1001,"rx_drops":{"bad_offload":1015,"hairpin":1014,"malformed":1012,"mirror_port":1801,)j"
       R"j("missed":1022,"no_destination":1017,"no_mbuf":1030,"policed":1018,"reserved":1020,)j"
       R"j("rx_error":1023,"shut":1021,"spoofed":1016,"spoofed_ip":1800,"storm":1019,)j"
       R"j("vlan":1013},"rx_packets":1000,"rx_pause_cycles":1703,"rx_pauses":1702,"shut":false,)j"
       R"j("snoop_limited":1705,)j"
       R"j("spec":"vm,type=vhost-user,path=$DIR/vm.sock",)j"
       R"j("tx_bursts":1006,"tx_bytes":1003,"tx_drops":{"link_down":1025,"mtu":1026,)j"
       R"j("no_mbuf":1027,"offload_refused":1028,"queue_full":1024,"vlan":1029},)j"
       R"j("tx_packets":1002,"tx_retries":1700,"tx_retry_cycles":1701,"type":"vhost-user",)j"
       R"j("up":true},{"announcements":2706,"bpdu_guard_shutdowns":2011,"buffer_quota":512,)j"
       R"j("buffers_in_use":77,"cpu_cycles":2704,"fdb_learned":2031,"learn_limited":2004,)j"
       R"j("learn_table_full":2005,"mac":"56:48:4f:53:54:02","mtu":1500,"name":"mem",)j"
       R"j("offload":{"csum_hw":2007,"csum_sw":2008,"tso_hw":2009,"tso_sw":2010},)j"
       R"j("residence":{"buckets":[{"count":10,"le_ns":1000},{"count":85,"le_ns":2000},)j"
       R"j({"count":9,"le_ns":50000},{"count":1,"gt_ns":10000000}],"p50_ns":1500,)j"
       R"j("p90_ns":1994,"p99_ns":49833,"samples":105,"sum_ns":200000},)j"
       R"j("rx_bytes":2001,)j"
       R"j("rx_drops":{"bad_offload":2015,"hairpin":2014,"malformed":2012,"mirror_port":2801,"missed":2022,)j"
       R"j("no_destination":2017,"no_mbuf":2030,"policed":2018,"reserved":2020,"rx_error":2023,)j"
       R"j("shut":2021,"spoofed":2016,"spoofed_ip":2800,"storm":2019,"vlan":2013},)j"
       R"j("rx_packets":2000,"rx_pause_cycles":2703,"rx_pauses":2702,"shut":false,)j"
       R"j("snoop_limited":2705,)j"
       R"j("spec":"mem,type=memif,path=$DIR/mem.sock,quota=512",)j"
       R"j("tx_bursts":2006,"tx_bytes":2003,"tx_drops":{"link_down":2025,"mtu":2026,)j"
       R"j("no_mbuf":2027,"offload_refused":2028,"queue_full":2024,"vlan":2029},)j"
       R"j("tx_packets":2002,"tx_retries":2700,"tx_retry_cycles":2701,"type":"memif",)j"
       R"j("up":false}]})j"},
      {"stats mem",
       R"j({"fdb":{"aged_total":3004,"entries":3001,"flushed_total":3005,"learned_total":3002,)j"
       R"j("moves_total":3003,"static":3006},"ok":true,"ports":[{"announcements":2706,"bpdu_guard_shutdowns":2011,)j"
       R"j("buffer_quota":512,"buffers_in_use":77,"cpu_cycles":2704,"fdb_learned":2031,)j"
       R"j("learn_limited":2004,"learn_table_full":2005,"mac":"56:48:4f:53:54:02","mtu":1500,)j"
       R"j("name":"mem","offload":{"csum_hw":2007,"csum_sw":2008,"tso_hw":2009,"tso_sw":2010},)j"
       R"j("residence":{"buckets":[{"count":10,"le_ns":1000},{"count":85,"le_ns":2000},)j"
       R"j({"count":9,"le_ns":50000},{"count":1,"gt_ns":10000000}],"p50_ns":1500,)j"
       R"j("p90_ns":1994,"p99_ns":49833,"samples":105,"sum_ns":200000},)j"
       R"j("rx_bytes":2001,)j"
       R"j("rx_drops":{"bad_offload":2015,"hairpin":2014,"malformed":2012,"mirror_port":2801,"missed":2022,)j"
       R"j("no_destination":2017,"no_mbuf":2030,"policed":2018,"reserved":2020,"rx_error":2023,)j"
       R"j("shut":2021,"spoofed":2016,"spoofed_ip":2800,"storm":2019,"vlan":2013},)j"
       R"j("rx_packets":2000,"rx_pause_cycles":2703,"rx_pauses":2702,"shut":false,)j"
       R"j("snoop_limited":2705,)j"
       R"j("spec":"mem,type=memif,path=$DIR/mem.sock,quota=512",)j"
       R"j("tx_bursts":2006,"tx_bytes":2003,"tx_drops":{"link_down":2025,"mtu":2026,)j"
       R"j("no_mbuf":2027,"offload_refused":2028,"queue_full":2024,"vlan":2029},)j"
       R"j("tx_packets":2002,"tx_retries":2700,"tx_retry_cycles":2701,"type":"memif",)j"
       R"j("up":false}]})j"},
      {"stats nope",
       R"j({"error":"no port named 'nope'","ok":false})j"},
      {"stats a b",
       R"j({"error":"stats [PORT]","ok":false})j"},
      {"pmd",
       R"j({"cores":[{"bursts":[{"count":10,"size_le":1},{"count":11,"size_le":2},{"count":12,)j"
       R"j("size_le":4},{"count":13,"size_le":8},{"count":14,"size_le":16},{"count":15,)j"
       R"j("size_le":32},{"count":16,"size_le":64},{"count":17,"size_le":128},{"count":18,)j"
       R"j("size_le":256}],"busy_cycles":900000,"busy_percent":75.0,"core":1,)j"
       R"j("cycles_per_packet":225.0,"idle_cycles":300000,"idle_mode":"sleep",)j"
       R"j("loop_cycles_per_packet":300.0,"max_sleep_us":250.0,"mean_burst":31.746031746031747,)j"
       R"j("packets":4000,"sleep_percent":10.0,"wakeups":10,)j"
       R"j("wakeups_by_cause":{"control":1,"interrupt":2,"timer":7}},)j"
       R"j({"bursts":[{"count":30,"size_le":1},{"count":31,"size_le":2},)j"
       R"j({"count":32,"size_le":4},{"count":33,"size_le":8},{"count":34,"size_le":16},)j"
       R"j({"count":35,"size_le":32},{"count":36,"size_le":64},{"count":37,"size_le":128},)j"
       R"j({"count":38,"size_le":256}],"busy_cycles":2700000,"busy_percent":75.0,"core":3,)j"
       R"j("cycles_per_packet":225.0,"idle_cycles":900000,"idle_mode":"poll",)j"
       R"j("loop_cycles_per_packet":300.0,"max_sleep_us":0.0,"mean_burst":39.21568627450981,)j"
       R"j("packets":12000,"sleep_percent":10.0,"wakeups":30,)j"
       R"j("wakeups_by_cause":{"control":3,"interrupt":6,"timer":21}}],"ok":true})j"},
      {"pmd x",
       R"j({"error":"pmd","ok":false})j"},
  });
}

// capture start/status/stop. Without a connection the daemon answers `start` itself.
TEST_F(ControlGoldenTest, CaptureCommands) {
  ExpectAnswers({
      {"capture status",
       R"j({"active":false,"captured":0,"ok":true})j"},
      {"capture start vm 10 rx",
       R"j({"error":"capture start needs the file's descriptor","ok":false})j"},
      {"capture start vm 0 rx",
       R"j({"error":"--count must be a positive number","ok":false})j", 0, true},
      {"capture start vm 10 sideways",
       R"j({"error":"--direction must be rx, tx or both","ok":false})j", 0, true},
      {"capture start vm 10 rx 0",
       R"j({"error":"--timeout must be 0 to 86400 seconds","ok":false})j", 0, true},
      {"capture start nope 10 rx",
       R"j({"error":"no port named 'nope'","ok":false})j", 0, true},
      {"capture start vm 10 both 5",
       R"j({"active":true,"ok":true})j", 0, true},
      {"capture start vm 10 tx",
       R"j({"error":"a capture is running already","ok":false})j", 0, true},
      {"capture status",
       R"j({"active":true,"captured":0,"ok":true})j"},
      {"capture stop",
       R"j({"active":false,"captured":0,"ok":true})j"},
      {"capture",
       R"j({"error":"capture: start PORT COUNT rx|tx|both [SECONDS] (with a file) | status | st)j"
       R"j(op","ok":false})j"},
      {"capture start vm 10",
       R"j({"error":"capture: start PORT COUNT rx|tx|both [SECONDS] (with a file) | status | st)j"
       R"j(op","ok":false})j", 0, true},
  });
}

// config show/save and their errors.
TEST_F(ControlGoldenTest, ConfigCommands) {
  ExpectAnswers({
      {"config show",
       R"j({"config":"# hvswitch configuration (hvswitchctl config save)\nport=vm,)j"
       R"j(type=vhost-user,path=$DIR/vm.sock\nport=mem,type=memif,path=$DIR/mem.sock,)j"
       R"j(quota=512\nfdb_static=mem,02:00:00:00:00:aa\nmetrics_address=127.0.0.1:9417\nruntime)j"
       R"j(_dir=$DIR\nctl_socket=$DIR/hvswitch.ctl\n","ok":true})j"},
      {"config save",
       R"j({"ok":true,"path":"$DIR/hvswitch.conf"})j"},
      {"config save $DIR/named.conf",
       R"j({"ok":true,"path":"$DIR/named.conf"})j"},
      {"config save $DIR/other.conf",
       R"j({"denied":true,"error":"permission denied: the daemon writes a named file for root o)j"
       R"j(nly (hvswitchctl config save FILE writes it with your rights)","ok":false})j", 65534, false},
      {"config",
       R"j({"error":"config: show | save [FILE]","ok":false})j"},
      {"config load",
       R"j({"error":"config: show | save [FILE]","ok":false})j"},
      {"config save a b",
       R"j({"error":"config: show | save [FILE]","ok":false})j"},
  });
}

// mirror add/show/del, the configuration with a mirror, and their errors.
TEST_F(ControlGoldenTest, MirrorCommands) {
  ExpectAnswers({
      {"mirror show",
       R"j({"mirrors":[],"ok":true})j"},
      {"mirror add m1 --from vm --to mem --vlan 9",
       R"j({"ok":true})j"},
      {"mirror show",
       R"j({"mirrors":[{"analyser_drops":{"link_down":2025,"mtu":2026,"no_mbuf":2027,"offload)j"
       R"j(_refused":2028,"queue_full":2024,"vlan":2029},"copy_failures":4003,"direction":"bo)j"
       R"j(th","from":["vm"],"name":"m1","rx_copies":4001,"spec":"m1,from=vm,to=mem,vlan=9",)j"
       R"j("to":"mem","tx_copies":4002,"vlan":9}],"ok":true})j"},
      {"config show",
       R"j({"config":"# hvswitch configuration (hvswitchctl config save)\nport=vm,)j"
       R"j(type=vhost-user,path=$DIR/vm.sock\nport=mem,type=memif,path=$DIR/mem.sock,)j"
       R"j(quota=512\nfdb_static=mem,02:00:00:00:00:aa\nmirror=m1,from=vm,to=mem,vlan=9\nmetri)j"
       R"j(cs_address=127.0.0.1:9417\nruntime_dir=$DIR\nctl_socket=$DIR/hvswitch.ctl\n","ok":t)j"
       R"j(rue})j"},
      {"mirror add m2 --from vm,mem --to vm --direction rx",
       R"j({"error":"mirror 'm2': port 'vm' cannot be mirrored to itself","ok":false})j"},
      {"mirror add m2 --from vm --to mem --direction sideways",
       R"j({"error":"mirror 'm2': direction must be rx, tx or both, not 'sideways'","ok":false})j"},
      {"mirror add m2 --from vm --to mem --vlan 4095",
       R"j({"error":"mirror 'm2': vlan must be 1-4094, not '4095'","ok":false})j"},
      {"mirror add m2 --from vm,,mem --to mem",
       R"j({"error":"mirror 'm2': '' is not a port name","ok":false})j"},
      {"mirror add m2 --from vm",
       R"j({"error":"mirror add needs --from PORT[,PORT...] and --to PORT","ok":false})j"},
      {"mirror add m/2 --from vm --to mem",
       R"j({"error":"mirror 'm/2': name must be 1-32 characters of [A-Za-z0-9_.-]","ok":false})j"},
      {"mirror add",
       R"j({"error":"mirror: show | add NAME --from PORT[,PORT...] --to PORT [--direction rx|t)j"
       R"j(x|both] [--vlan V] | del NAME","ok":false})j"},
      {"mirror del m9",
       R"j({"error":"no mirror named 'm9'","ok":false})j"},
      {"mirror del m1",
       R"j({"ok":true})j"},
      {"mirror show",
       R"j({"mirrors":[],"ok":true})j"},
  });
}

// mcast show, whole and for one VLAN, and its errors.
TEST_F(ControlGoldenTest, McastShow) {
  ExpectAnswers({
      {"mcast show",
       R"j({"enabled":true,"groups":[{"group":"239.1.1.1","mac":"01:00:5e:01:01:01","members)j"
       R"j(":[{"expires":200,"port":"vm"}],"vlan":0},{"group":"ff05::1:3","mac":"33:33:00:01:)j"
       R"j(00:03","members":[{"expires":5,"port":"vm"},{"expires":100,"port":"mem"}],"vlan":7})j"
       R"j(],"messages":{"invalid":4006,"queries":4004,"reports":4005},"ok":true,"refused":{)j"
       R"j("guest_querier":4009,"port_limit":4008,"table_full":4007},"routers":[{"expires":)j"
       R"j(250,"port":"mem","vlan":0}],"static_routers":["mem"]})j"},
      {"mcast show --vlan 7",
       R"j({"enabled":true,"groups":[{"group":"ff05::1:3","mac":"33:33:00:01:00:03","members)j"
       R"j(":[{"expires":5,"port":"vm"},{"expires":100,"port":"mem"}],"vlan":7}],"messages":{)j"
       R"j("invalid":4006,"queries":4004,"reports":4005},"ok":true,"refused":{"guest_querier")j"
       R"j(:4009,"port_limit":4008,"table_full":4007},"routers":[],"static_routers":["mem"]})j"},
      {"mcast show --vlan 4095",
       R"j({"error":"--vlan must be 0-4094, not '4095'","ok":false})j"},
      {"mcast",
       R"j({"error":"mcast: show [--vlan V]","ok":false})j"},
  });
}

// Requests that are no command.
TEST_F(ControlGoldenTest, OtherRequests) {
  ExpectAnswers({
      {"",
       R"j({"error":"empty request","ok":false})j"},
      {"nonsense",
       R"j({"error":"unknown command 'nonsense': port list | port show NAME | port add NAME TYP)j"
       R"j(E KEY=VALUE... | port add SPEC | port del NAME | port enable NAME | fdb show [--port)j"
       R"j( P] [--vlan V] | fdb flush [--port P] | fdb add PORT MAC [--vlan V] | fdb del MAC [-)j"
       R"j(-vlan V] | stats [PORT] | pmd | top [--interval S] [--count N] | vxlan show | vxlan)j"
       R"j( add VNI,vlan=N,uplink=PORT,local=)j"
       R"j(IP[,remote=IP...] | vxlan del VNI | mirror show | mirror add NAME --from PORT[,PORT)j"
       R"j(...] --to PORT [--direction rx|tx|both] [--vlan V] | mirror del NAME | mcast show [)j"
       R"j(--vlan V] | bond show | capture PORT )j"
       R"j([--count N] [--direction rx|tx|both)j"
       R"j(] -w FILE [--timeout S] | capture status | capture stop | config show | config save )j"
       R"j([FILE] | help [COMMAND]","ok":false})j"},
      {"   ",
       R"j({"error":"empty request","ok":false})j"},
  });
}
// A change to the configuration under --save_config whose file cannot be written: done,
// with a warning.
TEST_F(ControlGoldenTest, SaveConfigFailureIsAWarning) {
  options_.save_config = dir_ + "/missing/hvswitch.conf";
  const std::string answer = Ask({"fdb add vm 02:00:00:00:00:09", ""});
  EXPECT_EQ(answer.rfind(R"j({"ok":true,"warning":"done, but not saved: )j", 0), 0u) << answer;
  EXPECT_EQ(Ask({"fdb show --port mem", ""}),
            R"j({"entries":[{"mac":"02:00:00:00:00:aa","port":"mem","static":true,"vlan":0}],)j"
            R"j("ok":true})j");
}

// With the client's connection, `capture start` answers on it itself (PacketCapture::Tell):
// the command's own answer is empty.
TEST_F(ControlGoldenTest, CaptureWithAConnectionAnswersOnIt) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  ControlRequest request;
  request.line = "capture start vm 10 rx";
  request.file = open("/dev/null", O_WRONLY | O_CLOEXEC);
  request.connection = pair[0];  // the stub closes it, as a finished capture would
  ControlAnswer answer = ExecuteControlCommand(bridge_, options_, request);
  EXPECT_TRUE(answer.connection_taken);
  EXPECT_EQ(answer.line, "");
  close(pair[1]);
}

}  // namespace
}  // namespace hvswitch
