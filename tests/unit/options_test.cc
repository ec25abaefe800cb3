#include "switch/control/options.h"
#include "switch/datapath/mac_key.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "switch/control/eal_args.h"

namespace hvswitch {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<DaemonOptions> Parse(std::vector<std::string> args) {
  return ParseDaemonOptions(args);
}

TEST(OptionsTest, NoPortMeansTheDefaultConfiguration) {
  absl::StatusOr<DaemonOptions> o = Parse({"--runtime_dir=/tmp/r"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->uses_default_ports);
  ASSERT_EQ(o->ports.size(), 3u);
  EXPECT_EQ(o->ports[0].Traits().socket, "/tmp/r/vm1.sock");
  EXPECT_EQ(o->ports[2].type_name(), "memif");
  EXPECT_EQ(o->metrics_address, "127.0.0.1:9417");
}

TEST(OptionsTest, ControlSocket) {
  absl::StatusOr<DaemonOptions> o = Parse({"--runtime_dir=/tmp/r"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->ctl_socket, "/tmp/r/hvswitch.ctl");
  EXPECT_EQ(o->ctl_group, "");
  o = Parse({"--ctl_socket=/x/ctl", "--ctl_group=kvm"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->ctl_socket, "/x/ctl");
  EXPECT_EQ(o->ctl_group, "kvm");
  o = Parse({"--ctl_socket=none"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->ctl_socket, "");
  EXPECT_FALSE(Parse({"--ctl_socket="}).ok());
}

TEST(OptionsTest, ConfigTextReadsBackAsTheSameOptions) {
  absl::StatusOr<DaemonOptions> o = Parse(
      {"--port=a,type=vhost-user,path=/a,client=1,mac=02:00:00:00:00:01",
       "--port=t,type=memif,path=/t,trunk=10,20-22,native=5,lock=1",
       "--port=n,type=dpdk,queues=2,devargs=net_tap0,iface=x",
       "--fdb_static=a,02:00:00:00:00:09,vlan=3", "--lcores=1,3",
       "--mirror=m1,from=a,t,to=n,direction=rx,vlan=7", "--mirror=m2,from=t,to=a",
       "--metrics_address=none", "--eal=--no-huge -m 512", "--runtime_dir=/tmp/r",
       "--ctl_group=kvm", "--socket_group=libvirt-qemu", "--save_config=/var/lib/h.conf",
       "--fdb_capacity=1024", "--fdb_aging=0", "--burst=64",
       "--rx_descriptors=512", "--tx_descriptors=2048", "--mbufs=9000", "--tx_flush_us=50",
       "--mcast_snooping=1", "--mcast_aging=30"});
  ASSERT_TRUE(o.ok()) << o.status();
  const std::string path = ::testing::TempDir() + "/hvswitch-config-test.conf";
  {
    std::ofstream out(path);
    out << ConfigText(*o);
  }
  absl::StatusOr<DaemonOptions> back = Parse({"--config=" + path});
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->ports.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(back->ports[i].ToString(), o->ports[i].ToString());
  ASSERT_EQ(back->static_macs.size(), 1u);
  EXPECT_EQ(back->static_macs[0].port, "a");
  EXPECT_EQ(back->static_macs[0].key, o->static_macs[0].key);
  EXPECT_EQ(back->mirrors, o->mirrors);
  ASSERT_EQ(back->mirrors.size(), 2u);
  EXPECT_EQ(back->mirrors[0].from, (std::vector<std::string>{"a", "t"}));
  EXPECT_EQ(back->worker_cpus, o->worker_cpus);
  EXPECT_EQ(back->metrics_address, "");
  EXPECT_EQ(back->eal_args, o->eal_args);
  EXPECT_EQ(back->runtime_dir, "/tmp/r");
  EXPECT_EQ(back->ctl_socket, "/tmp/r/hvswitch.ctl");
  EXPECT_EQ(back->ctl_group, "kvm");
  EXPECT_EQ(back->socket_group, "libvirt-qemu");
  EXPECT_EQ(back->save_config, "/var/lib/h.conf");
  EXPECT_EQ(back->fdb_capacity, 1024u);
  EXPECT_EQ(back->fdb_aging_seconds, 0u);
  EXPECT_EQ(back->burst, 64);
  EXPECT_EQ(back->rx_descriptors, 512);
  EXPECT_EQ(back->tx_descriptors, 2048);
  EXPECT_EQ(back->mbufs, 9000u);
  EXPECT_EQ(back->tx_flush_us, 50u);
  EXPECT_TRUE(back->mcast_snooping);
  EXPECT_EQ(back->mcast_aging, 30u);
  EXPECT_FALSE(back->uses_default_ports);
  std::remove(path.c_str());
}

TEST(OptionsTest, ConfigTextParsesAsTheFileWould) {
  absl::StatusOr<DaemonOptions> o =
      ParseConfigText("# saved\n--port=a,type=memif,path=/a\n\nlcores=2\n", "saved.conf");
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->ports.size(), 1u);
  EXPECT_THAT(o->worker_cpus, ElementsAre(2u));
  EXPECT_EQ(o->ctl_socket, "/run/hvswitch/hvswitch.ctl");
  EXPECT_THAT(ParseConfigText("port=a,type=memif,path=/a\nbogus=1\n", "saved.conf")
                  .status().message(),
              HasSubstr("saved.conf:2: unknown option --bogus"));
}

// A value that a config file cannot hold as it is (found by tests/fuzz/options_fuzz.cc):
// `config save` would write something else, or an option of the value's own.
TEST(OptionsTest, ValuesAreOneLineWithoutControlCharactersOrEdgeSpaces) {
  for (const char* bad :
       {"--port=a,type=memif,path=/a\nctl_group=users", "--ctl_group=kvm\t",
        "--save_config=/x\r", "--runtime_dir= /run/x", "--ctl_group=kvm ",
        "--eal=--no-huge\n--vdev=net_tap0", "--metrics_address=127.0.0.1:1\x7f",
        "--runtime_dir=/run/a,id=4"}) {  // the default ports' paths would end at the comma
    absl::StatusOr<DaemonOptions> o = Parse({bad});
    EXPECT_FALSE(o.ok()) << bad << " gives " << ConfigText(*o);
  }
  EXPECT_FALSE(ParseConfigText("ctl_group=a\x01b\n", "c").ok());
  absl::StatusOr<DaemonOptions> o = Parse({"--eal= --no-huge -m 512 "});
  ASSERT_TRUE(o.ok()) << o.status();  // split at spaces: nothing to lose
  EXPECT_THAT(o->eal_args, ElementsAre("--no-huge", "-m", "512"));
}

// `port` alone on a line crashed the daemon at start (found by options_fuzz).
TEST(OptionsTest, ConfigLineWithoutValueIsAnError) {
  for (const char* key : {"port", "lcores", "fdb_static", "eal", "config"}) {
    absl::StatusOr<DaemonOptions> o = ParseConfigText(absl::StrCat(key, "\n"), "c.conf");
    ASSERT_FALSE(o.ok()) << key;
    EXPECT_THAT(o.status().message(), HasSubstr(absl::StrCat("c.conf:1: --", key,
                                                             " needs a value")));
  }
  EXPECT_TRUE(ParseConfigText("help\n", "c.conf").ok());
}

TEST(OptionsTest, PortNoneStartsWithoutPortsAndSavesSo) {
  absl::StatusOr<DaemonOptions> o = Parse({"--port=none"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->ports.empty());
  EXPECT_FALSE(o->uses_default_ports);
  EXPECT_THAT(ConfigText(*o), HasSubstr("\nport=none\n"));
  EXPECT_FALSE(Parse({"--port=none", "--port=a,type=memif,path=/a"}).ok());
}

TEST(OptionsTest, RepeatedPortsAndEveryOption) {
  absl::StatusOr<DaemonOptions> o =
      Parse({"--port=a,type=vhost-user,path=/a", "--port", "b,type=memif,path=/b",
             "--lcores=1-2", "--metrics_address=none", "--eal=--no-huge  -m 1024"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->uses_default_ports);
  ASSERT_EQ(o->ports.size(), 2u);
  EXPECT_EQ(o->ports[1].name, "b");
  EXPECT_THAT(o->worker_cpus, ElementsAre(1u, 2u));
  EXPECT_TRUE(o->metrics_address.empty());
  EXPECT_THAT(o->eal_args, ElementsAre("--no-huge", "-m", "1024"));
  EXPECT_EQ(o->fdb_capacity, 65536u);
  EXPECT_EQ(o->fdb_aging_seconds, 300u);
  o = Parse({"--fdb_capacity=1000000", "--fdb_aging=0"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->fdb_capacity, 1000000u);
  EXPECT_EQ(o->fdb_aging_seconds, 0u);
  EXPECT_FALSE(Parse({"--fdb_capacity=lots"}).ok());
  EXPECT_FALSE(Parse({"--fdb_aging=-1"}).ok());
}

TEST(OptionsTest, ConfigFileUsesTheSameGrammar) {
  std::string path = testing::TempDir() + "/hvs_options_test.conf";
  {
    std::ofstream out(path);
    out << "# a comment\n\nport=a,type=vhost-user,path=/a\n--port=b,type=memif,path=/b\n"
           "metrics_address=127.0.0.1:9999\n";
  }
  absl::StatusOr<DaemonOptions> o = Parse({"--config=" + path});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->ports.size(), 2u);
  EXPECT_EQ(o->metrics_address, "127.0.0.1:9999");

  {
    std::ofstream out(path);
    out << "port=a,type=vhost-user,path=/a\nport=a,type=memif,path=/b\n";
  }
  o = Parse({"--config=" + path});
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), HasSubstr("port 'a': duplicate port name"));
  {
    std::ofstream out(path);
    out << "port=a,type=vhost-user,path=/a\nbogus=1\n";
  }
  o = Parse({"--config=" + path});
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), HasSubstr(":2: unknown option --bogus"));
  std::remove(path.c_str());
}

TEST(OptionsTest, StaticMacsAndTunables) {
  absl::StatusOr<DaemonOptions> o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->burst, 32);
  EXPECT_EQ(o->rx_descriptors, 1024);
  EXPECT_EQ(o->tx_descriptors, 1024);
  EXPECT_EQ(o->mbufs, 0u);
  EXPECT_EQ(o->tx_flush_us, 0u);
  o = Parse({"--fdb_static=vm1,02:00:00:00:00:01", "--fdb_static=vm2,02:00:00:00:00:02,vlan=7",
             "--burst=64", "--rx_descriptors=2048", "--tx_descriptors=512", "--mbufs=100000",
             "--tx_flush_us=50"});
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->static_macs.size(), 2u);
  EXPECT_EQ(o->static_macs[0].port, "vm1");
  EXPECT_EQ(KeyMacString(o->static_macs[0].key), "02:00:00:00:00:01");
  EXPECT_EQ(KeyVlan(o->static_macs[0].key), 0);
  EXPECT_EQ(KeyVlan(o->static_macs[1].key), 7);
  EXPECT_EQ(o->burst, 64);
  EXPECT_EQ(o->rx_descriptors, 2048);
  EXPECT_EQ(o->tx_descriptors, 512);
  EXPECT_EQ(o->mbufs, 100000u);
  EXPECT_EQ(o->tx_flush_us, 50u);
  for (const char* bad : {"--fdb_static=vm1", "--fdb_static=vm1,01:00:5e:00:00:01",
                          "--fdb_static=vm1,zz:00:00:00:00:01", "--fdb_static=,02:00:00:00:00:01",
                          "--fdb_static=vm1,02:00:00:00:00:01,vlan=4095"}) {
    EXPECT_THAT(Parse({bad}).status().message(), HasSubstr("--fdb_static must be")) << bad;
  }
  EXPECT_THAT(Parse({"--burst=0"}).status().message(),
              HasSubstr("--burst must be a number from 1 to 256"));
  EXPECT_THAT(Parse({"--burst=257"}).status().message(), HasSubstr("--burst must be"));
  EXPECT_THAT(Parse({"--rx_descriptors=10"}).status().message(), HasSubstr("from 64 to 8192"));
  EXPECT_THAT(Parse({"--tx_flush_us=5000"}).status().message(), HasSubstr("from 0 to 1000"));
}

TEST(OptionsTest, MirrorSpecs) {
  absl::StatusOr<MirrorSpec> m = ParseMirrorSpec("span,from=vm1,vm2,to=tap,vlan=100");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "span");
  EXPECT_EQ(m->from, (std::vector<std::string>{"vm1", "vm2"}));
  EXPECT_EQ(m->to, "tap");
  EXPECT_TRUE(m->rx && m->tx);
  EXPECT_EQ(m->vlan, 100);
  EXPECT_EQ(m->ToString(), "span,from=vm1,vm2,to=tap,vlan=100");
  // Keys in any order; a bare word continues from= only.
  m = ParseMirrorSpec("s,to=x,direction=tx,from=a");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->rx);
  EXPECT_EQ(m->ToString(), "s,from=a,to=x,direction=tx");
  EXPECT_EQ(ParseMirrorSpec(m->ToString())->ToString(), m->ToString());
  struct Bad {
    const char* text;
    const char* error;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"s,from=a", "mirror 's': needs the port the copies go to (to)"},
           {"s,to=b", "mirror 's': needs the ports to mirror (from)"},
           {"s,to=b,from=a,a", "mirror 's': port 'a' given twice"},
           {"s,from=a,to=a", "mirror 's': port 'a' cannot be mirrored to itself"},
           {"s,from=a,to=b,b", "mirror 's': 'b' is not KEY=VALUE"},
           {"s,from=a,to=b,to=c", "mirror 's': key 'to' given twice"},
           {"s,from=a,to=b,vlan=0", "mirror 's': vlan must be 1-4094, not '0'"},
           {"s,from=a,to=b,direction=in", "mirror 's': direction must be rx, tx or both, not 'in'"},
           {"s,from=a,to=b,select=all", "mirror 's': unknown key 'select' (from, to, direction, vlan)"},
           {"s,from=a b,to=c", "mirror 's': 'a b' is not a port name"},
           {",from=a,to=b", "mirror '': name must be 1-32 characters of [A-Za-z0-9_.-]"},
       }) {
    EXPECT_EQ(ParseMirrorSpec(bad.text).status().message(), bad.error) << bad.text;
  }
  EXPECT_EQ(Parse({"--mirror=s,from=a,to=b", "--mirror=s,from=c,to=b"}).status().message(),
            "mirror 's': duplicate mirror name");
  // Checked against the ports when the bridge adds it, not here.
  EXPECT_TRUE(Parse({"--mirror=s,from=nosuch,to=b"}).ok());
}

TEST(OptionsTest, MulticastSnooping) {
  absl::StatusOr<DaemonOptions> o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->mcast_snooping);
  EXPECT_EQ(o->mcast_aging, 260u);
  EXPECT_THAT(ConfigText(*o), Not(HasSubstr("mcast")));
  EXPECT_THAT(Parse({"--mcast_snooping=2"}).status().message(),
              HasSubstr("--mcast_snooping must be a number from 0 to 1"));
  EXPECT_THAT(Parse({"--mcast_aging=9"}).status().message(),
              HasSubstr("--mcast_aging must be a number from 10 to 86400"));
}

TEST(OptionsTest, IdleModeAndLongestSleep) {
  absl::StatusOr<DaemonOptions> o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->idle, IdleMode::kSleep);
  EXPECT_EQ(o->idle_max_us, 250u);
  EXPECT_FALSE(o->idle_max_us_given);
  EXPECT_EQ(ConfigText(*o).find("idle"), std::string::npos);  // defaults are not written
  o = Parse({"--idle=poll", "--idle_max_us=100"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->idle, IdleMode::kPoll);
  EXPECT_EQ(o->idle_max_us, 100u);
  EXPECT_TRUE(o->idle_max_us_given);
  absl::StatusOr<DaemonOptions> back = ParseConfigText(ConfigText(*o), "saved.conf");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->idle, IdleMode::kPoll);
  EXPECT_EQ(back->idle_max_us, 100u);
  EXPECT_TRUE(back->idle_max_us_given);
  o = Parse({"--idle=interrupt"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->idle, IdleMode::kInterrupt);
  back = ParseConfigText(ConfigText(*o), "saved.conf");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->idle, IdleMode::kInterrupt);
  EXPECT_THAT(Parse({"--idle=spin"}).status().message(),
              HasSubstr("poll, sleep or interrupt, not 'spin'"));
  EXPECT_THAT(Parse({"--idle_max_us=0"}).status().message(), HasSubstr("from 1 to 100000"));
}

TEST(OptionsTest, BadInputIsRejected) {
  EXPECT_THAT(Parse({"--port=a,type=memif,path=/a", "--port=a,type=memif,path=/b"})
                  .status().message(), HasSubstr("duplicate port name"));
  EXPECT_THAT(Parse({"--port=a,type=memif,path=/s", "--port=b,type=memif,path=/s"})
                  .status().message(), HasSubstr("port 'b': socket /s is already used"));
  EXPECT_THAT(Parse({"--frobnicate=1"}).status().message(), HasSubstr("unknown option"));
  EXPECT_THAT(Parse({"--port"}).status().message(), HasSubstr("needs a value"));
  EXPECT_THAT(Parse({"stray"}).status().message(), HasSubstr("unexpected argument"));
  EXPECT_THAT(Parse({"--metrics_address=9417"}).status().message(), HasSubstr("HOST:PORT"));
  EXPECT_THAT(Parse({"--config=/nonexistent/x.conf"}).status().message(),
              HasSubstr("cannot read config file"));
  EXPECT_THAT(Parse({"--port=a,type=foo,path=/a"}).status().message(),
              HasSubstr("port 'a': unknown type 'foo'"));
}

// A config file that cannot be read whole is a start error naming the file, never the
// default ports started silently (issue 12, defect 11).
void ExpectConfigReadError(const std::string& path, absl::string_view why) {
  absl::StatusOr<DaemonOptions> o = Parse({"--config=" + path});
  ASSERT_FALSE(o.ok()) << path << " was read as a configuration";
  EXPECT_THAT(o.status().message(), HasSubstr("cannot read config file " + path + ": "));
  EXPECT_THAT(o.status().message(), HasSubstr(why));
  EXPECT_THAT(o.status().message(), Not(HasSubstr("\n")));
}

TEST(ConfigFileTest, ADirectoryIsAnError) {
  ExpectConfigReadError(::testing::TempDir(), "not a regular file");
}

TEST(ConfigFileTest, ADeviceIsAnError) {
  ExpectConfigReadError("/dev/null", "not a regular file");
}

TEST(ConfigFileTest, AFifoIsAnErrorWithoutWaitingForAWriter) {
  const std::string path = ::testing::TempDir() + "/hvs_options_test.fifo";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::promise<absl::StatusOr<DaemonOptions>> parsed;
  std::future<absl::StatusOr<DaemonOptions>> result = parsed.get_future();
  std::thread parser([&] { parsed.set_value(Parse({"--config=" + path})); });
  // Returns at once when fixed; the bound only keeps a hang from stopping the test.
  if (result.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "reading a FIFO waits for a writer";
    close(open(path.c_str(), O_WRONLY | O_NONBLOCK));  // the writer it waits for, gone at once
  }
  parser.join();
  absl::StatusOr<DaemonOptions> o = result.get();
  ASSERT_FALSE(o.ok()) << "a FIFO was read as a configuration";
  EXPECT_THAT(o.status().message(),
              HasSubstr("cannot read config file " + path + ": not a regular file"));
  std::remove(path.c_str());
}

TEST(ConfigFileTest, AFileThatFailsToReadIsAnError) {
  // A regular file whose read fails (EIO: nothing is mapped at address 0).
  ExpectConfigReadError("/proc/self/mem", "Input/output error");
}

TEST(ConfigFileTest, AnUnreadableFileIsAnError) {
  const std::string path = ::testing::TempDir() + "/hvs_options_test_0000.conf";
  {
    std::ofstream out(path);
    out << "port=a,type=memif,path=/a\n";
  }
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  // Root reads any file: drop to nobody for the test (no other thread runs here).
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(seteuid(65534), 0);
  }
  absl::StatusOr<DaemonOptions> o = Parse({"--config=" + path});
  if (root) {
    ASSERT_EQ(seteuid(0), 0);
  }
  ASSERT_FALSE(o.ok()) << "an unreadable file started the default ports";
  EXPECT_THAT(o.status().message(),
              HasSubstr("cannot read config file " + path + ": Permission denied"));
  std::remove(path.c_str());
}

TEST(ConfigFileTest, AMissingFileIsAnError) {
  ExpectConfigReadError("/nonexistent/x.conf", "No such file or directory");
}

TEST(ConfigFileTest, AnOversizedFileIsAnError) {
  const std::string path = ::testing::TempDir() + "/hvs_options_test_big.conf";
  {
    std::ofstream out(path);
    for (int i = 0; i < 340000; ++i) out << "# a comment line that pads the file to over 16 MiB\n";
  }
  ExpectConfigReadError(path, "larger than");
  std::remove(path.c_str());
}

TEST(ConfigFileTest, ASymlinkToARegularFileIsRead) {
  const std::string path = ::testing::TempDir() + "/hvs_options_test_target.conf";
  const std::string link = ::testing::TempDir() + "/hvs_options_test_link.conf";
  {
    std::ofstream out(path);
    out << "port=a,type=memif,path=/a\n";
  }
  std::remove(link.c_str());
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  absl::StatusOr<DaemonOptions> o = Parse({"--config=" + link});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->ports.size(), 1u);
  std::remove(link.c_str());
  std::remove(path.c_str());
}

TEST(CpuListTest, Forms) {
  EXPECT_THAT(*ParseCpuList("3"), ElementsAre(3u));
  EXPECT_THAT(*ParseCpuList("1,3"), ElementsAre(1u, 3u));
  EXPECT_THAT(*ParseCpuList("0-2,5"), ElementsAre(0u, 1u, 2u, 5u));
  EXPECT_FALSE(ParseCpuList("").ok());
  EXPECT_FALSE(ParseCpuList("2-1").ok());
  EXPECT_FALSE(ParseCpuList("1,1").ok());
  EXPECT_FALSE(ParseCpuList("x").ok());
}

TEST(EalPlanTest, NeverProbesPciUnlessAPortNamesIt) {
  DaemonOptions o = *Parse({"--port=a,type=vhost-user,path=/a"});
  EalPlan plan = *PlanEal(o, {0, 1}, true);
  EXPECT_THAT(plan.args, Contains("--no-pci"));
  EXPECT_THAT(plan.args, Contains("--lcores=0@(0),1@1"));
  EXPECT_THAT(plan.worker_lcores, ElementsAre(1u));
  EXPECT_THAT(plan.args, Not(Contains("--no-huge")));
  EXPECT_THAT(plan.args, Contains("--single-file-segments"));  // memif zero-copy needs it

  o = *Parse({"--port=a,type=dpdk,devargs=0000:03:00.0", "--port=b,type=memif,path=/b"});
  plan = *PlanEal(o, {0, 1}, true);
  EXPECT_THAT(plan.args, Not(Contains("--no-pci")));
  auto a = std::find(plan.args.begin(), plan.args.end(), "-a");
  ASSERT_NE(a, plan.args.end());
  EXPECT_EQ(*(a + 1), "0000:03:00.0");
  EXPECT_EQ(std::count(plan.args.begin(), plan.args.end(), "-a"), 1);
}

TEST(EalPlanTest, WorkersAndMemory) {
  DaemonOptions o = *Parse({"--lcores=1,2"});
  EalPlan plan = *PlanEal(o, {0, 1, 2, 3}, false);
  EXPECT_THAT(plan.args, Contains("--lcores=0@(0,3),1@1,2@2"));
  EXPECT_THAT(plan.worker_lcores, ElementsAre(1u, 2u));
  EXPECT_THAT(plan.worker_cpus, ElementsAre(1u, 2u));
  EXPECT_THAT(plan.args, Contains("--no-huge"));  // no free hugepages
  EXPECT_FALSE(PlanEal(*Parse({"--lcores=7"}), {0, 1}, true).ok());

  o = *Parse({"--eal=--no-huge -m 256 --in-memory"});
  plan = *PlanEal(o, {0}, false);
  EXPECT_EQ(std::count(plan.args.begin(), plan.args.end(), "--no-huge"), 1);
  EXPECT_THAT(plan.args, Not(Contains("--file-prefix=hvswitch")));
  EXPECT_THAT(plan.args, Contains("--lcores=0@(0),1@0"));  // one CPU: shared
}

TEST(EalPlanTest, ControlCpus) {
  DaemonOptions o = *Parse({"--lcores=3", "--control_cpus=1-2"});
  EXPECT_THAT(o.control_cpus, ElementsAre(1u, 2u));
  EalPlan plan = *PlanEal(o, {0, 1, 2, 3}, true);
  EXPECT_THAT(plan.args, Contains("--lcores=0@(1,2),1@3"));
  // Saved and read back.
  absl::StatusOr<DaemonOptions> back = ParseConfigText(ConfigText(o), "saved.conf");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->control_cpus, ElementsAre(1u, 2u));
  absl::Status bad = PlanEal(*Parse({"--control_cpus=5"}), {0, 1}, true).status();
  EXPECT_THAT(std::string(bad.message()), HasSubstr("--control_cpus: CPU 5 is not available"));
  EXPECT_THAT(std::string(Parse({"--control_cpus=x"}).status().message()),
              HasSubstr("--control_cpus must be a CPU list"));
}

}  // namespace
}  // namespace hvswitch
