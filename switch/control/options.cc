#include "switch/control/options.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "ports/vxlan/vxlan_driver.h"
#include "switch/datapath/datapath.h"
#include "switch/datapath/mac_key.h"

// A hand-written parser rather than absl flags: `--port` repeats and its values contain
// commas, which absl's flag types cannot accumulate.
namespace hvswitch {
namespace {

// The options that take no value.
bool IsFlag(absl::string_view key) { return key == "help" || key == "version"; }

template <typename T>
absl::Status Number(absl::string_view key, absl::string_view value, uint32_t min, uint32_t max,
                    T& out) {
  uint32_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < min || n > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", key, " must be a number from ", min, " to ", max));
  }
  out = static_cast<T>(n);
  return absl::OkStatus();
}

absl::StatusOr<StaticMacSpec> ParseStaticMac(absl::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "--fdb_static must be PORT,MAC[,vlan=N] with a unicast MAC, not '", text, "'"));
  };
  std::vector<std::string> fields = absl::StrSplit(text, ',');
  if (fields.size() < 2 || fields.size() > 3 || fields[0].empty()) return bad();
  uint32_t vlan = 0;
  if (fields.size() == 3) {
    absl::string_view v = fields[2];
    if (!absl::ConsumePrefix(&v, "vlan=") || !absl::SimpleAtoi(v, &vlan) || vlan > 4094) {
      return bad();
    }
  }
  std::optional<uint64_t> key = ParseUnicastMacKey(fields[1], static_cast<uint16_t>(vlan));
  if (!key) return bad();
  return StaticMacSpec{fields[0], *key};
}

// Far above any real configuration (100,000 static MACs take 4 MiB); stops a file that
// never ends (/proc, /sys) from being read forever.
constexpr size_t kMaxConfigBytes = 16 << 20;

// The whole text of a config file, or why it cannot be had: a missing or unreadable file,
// a directory, a FIFO, a device, a failed read. Only a regular file is read, so that a
// mistake never starts the default ports as if the file were empty; O_NONBLOCK keeps
// open() from waiting for a FIFO's writer (a regular file ignores it).
absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read config file ", path, ": ", why));
  };
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return error(std::strerror(errno));
  std::string text;
  absl::Status status;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    status = error(std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    status = error("not a regular file");
  } else {
    char chunk[65536];
    for (;;) {
      const ssize_t n = read(fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        status = error(std::strerror(errno));
        break;
      }
      if (n == 0) break;
      if (text.size() + static_cast<size_t>(n) > kMaxConfigBytes) {
        status = error(absl::StrCat("larger than ", kMaxConfigBytes >> 20, " MiB"));
        break;
      }
      text.append(chunk, static_cast<size_t>(n));
    }
  }
  close(fd);
  if (!status.ok()) return status;
  return text;
}

absl::Status Validate(const DaemonOptions& options);

// Every value must survive a config file (`config save`, then a restart): one line, no
// control character, and no space at either end (a file's lines are trimmed) except in
// --eal, which is split at spaces anyway. A value that breaks this would come back as
// something else, or smuggle an option of its own into the saved file.
absl::Status OneLineValue(absl::string_view key, absl::string_view value) {
  for (char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", key, ": control character in the value"));
    }
  }
  if (key != "eal" && !value.empty() &&
      (absl::ascii_isspace(static_cast<unsigned char>(value.front())) ||
       absl::ascii_isspace(static_cast<unsigned char>(value.back())))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", key, ": space at the start or end of the value"));
  }
  return absl::OkStatus();
}

struct Parser {
  DaemonOptions options;
  int config_depth = 0;
  bool no_ports = false;  // --port=none

  absl::Status Apply(absl::string_view key, absl::string_view value) {
    absl::Status status = OneLineValue(key, value);
    if (!status.ok()) return status;
    if (key == "port" && value == "none") {
      no_ports = true;
    } else if (key == "port") {
      absl::StatusOr<PortSpec> spec = ParsePortSpec(value);
      if (!spec.ok()) return spec.status();
      options.ports.push_back(*std::move(spec));
    } else if (key == "vxlan") {
      // Sugar for the port vxlanVNI of type=vxlan: saved (config show) as that --port.
      absl::StatusOr<PortSpec> spec = ParseVxlanSpec(value);
      if (!spec.ok()) return spec.status();
      options.ports.push_back(*std::move(spec));
    } else if (key == "mirror") {
      absl::StatusOr<MirrorSpec> mirror = ParseMirrorSpec(value);
      if (!mirror.ok()) return mirror.status();
      options.mirrors.push_back(*std::move(mirror));
    } else if (key == "lcores" || key == "control_cpus") {
      absl::StatusOr<std::vector<unsigned>> cpus = ParseCpuList(value, key);
      if (!cpus.ok()) return cpus.status();
      (key == "lcores" ? options.worker_cpus : options.control_cpus) = *std::move(cpus);
    } else if (key == "metrics_address") {
      if (value == "none") {
        options.metrics_address.clear();
      } else if (value.find(':') == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("--metrics_address must be HOST:PORT or none, not '", value, "'"));
      } else {
        options.metrics_address = std::string(value);
      }
    } else if (key == "eal") {
      for (absl::string_view arg : absl::StrSplit(value, ' ', absl::SkipWhitespace())) {
        options.eal_args.emplace_back(arg);
      }
    } else if (key == "ctl_socket") {
      if (value.empty()) return absl::InvalidArgumentError("--ctl_socket is empty");
      options.ctl_socket = std::string(value);
    } else if (key == "ctl_group") {
      options.ctl_group = std::string(value);
    } else if (key == "socket_group") {
      options.socket_group = std::string(value);
    } else if (key == "save_config") {
      options.save_config = std::string(value);
    } else if (key == "runtime_dir") {
      if (value.empty()) return absl::InvalidArgumentError("--runtime_dir is empty");
      // The default ports' sockets live there, and a port spec ends a path at a comma.
      if (value.find(',') != absl::string_view::npos) {
        return absl::InvalidArgumentError("--runtime_dir must not contain a comma");
      }
      options.runtime_dir = std::string(value);
    } else if (key == "fdb_capacity") {
      if (!absl::SimpleAtoi(value, &options.fdb_capacity) || options.fdb_capacity < 16 ||
          options.fdb_capacity > (1u << 24)) {
        return absl::InvalidArgumentError("--fdb_capacity must be a number from 16 to 16777216");
      }
    } else if (key == "fdb_aging") {
      if (!absl::SimpleAtoi(value, &options.fdb_aging_seconds)) {
        return absl::InvalidArgumentError("--fdb_aging must be a number of seconds (0: off)");
      }
    } else if (key == "fdb_static") {
      absl::StatusOr<StaticMacSpec> mac = ParseStaticMac(value);
      if (!mac.ok()) return mac.status();
      options.static_macs.push_back(*std::move(mac));
    } else if (key == "burst") {
      return Number(key, value, 1, kMaxRxBurst, options.burst);
    } else if (key == "rx_descriptors") {
      return Number(key, value, 64, 8192, options.rx_descriptors);
    } else if (key == "tx_descriptors") {
      return Number(key, value, 64, 8192, options.tx_descriptors);
    } else if (key == "mbufs") {
      return Number(key, value, 0, 1u << 24, options.mbufs);
    } else if (key == "tx_flush_us") {
      return Number(key, value, 0, 1000, options.tx_flush_us);
    } else if (key == "idle") {
      const auto named = [&](IdleMode m) {
        const std::string_view name = IdleModeName(m);
        return value == absl::string_view(name.data(), name.size());
      };
      const auto mode = std::find_if(std::begin(kIdleModes), std::end(kIdleModes), named);
      if (mode == std::end(kIdleModes)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--idle must be poll, sleep or interrupt, not '", value, "'"));
      }
      options.idle = *mode;
    } else if (key == "idle_max_us") {
      options.idle_max_us_given = true;
      return Number(key, value, 1, 100000, options.idle_max_us);
    } else if (key == "mcast_snooping") {
      return Number(key, value, 0, 1, options.mcast_snooping);
    } else if (key == "mcast_aging") {
      return Number(key, value, 10, 86400, options.mcast_aging);
    } else if (key == "config") {
      return ReadConfig(value);
    } else if (key == "help") {
      options.help = true;
    } else if (key == "version") {
      options.version = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown option --", key));
    }
    return absl::OkStatus();
  }

  absl::Status ReadConfig(absl::string_view path) {
    if (++config_depth > 4) return absl::InvalidArgumentError("--config nested too deeply");
    absl::StatusOr<std::string> text = ReadConfigFile(std::string(path));
    if (!text.ok()) return text.status();
    absl::Status status = ApplyConfigText(*text, path);
    --config_depth;
    return status;
  }

  // The lines of a config file; `origin` (its path) prefixes errors with the line number.
  absl::Status ApplyConfigText(absl::string_view text, absl::string_view origin) {
    int number = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++number;
      line = absl::StripAsciiWhitespace(line);
      if (line.empty() || line[0] == '#') continue;
      absl::ConsumePrefix(&line, "--");
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(line, absl::MaxSplits('=', 1));
      // As on the command line, every option but help takes a value (`port` alone once
      // reached ParsePortSpec as a null view and crashed it).
      absl::Status status =
          line.find('=') == absl::string_view::npos && !IsFlag(kv.first)
              ? absl::InvalidArgumentError(absl::StrCat("--", kv.first, " needs a value"))
              : Apply(kv.first, kv.second);
      if (!status.ok()) {
        return absl::Status(status.code(),
                            absl::StrCat(origin, ":", number, ": ", status.message()));
      }
    }
    return absl::OkStatus();
  }

  // Defaults that depend on other options, then the checks across options.
  absl::StatusOr<DaemonOptions> Finish() {
    if (options.ctl_socket.empty()) {
      options.ctl_socket = absl::StrCat(options.runtime_dir, "/", kControlSocketName);
    } else if (options.ctl_socket == "none") {
      options.ctl_socket.clear();
    }
    if (no_ports && !options.ports.empty()) {
      return absl::InvalidArgumentError(
          "--port=none and other --port options exclude each other");
    }
    if (options.ports.empty() && !no_ports) {
      options.ports = DefaultPorts(options.runtime_dir);
      options.uses_default_ports = true;
    }
    absl::Status status = Validate(options);
    if (!status.ok()) return status;
    return std::move(options);
  }
};

absl::Status Validate(const DaemonOptions& options) {
  absl::flat_hash_set<std::string> names, paths, mirrors;
  for (const MirrorSpec& mirror : options.mirrors) {
    if (!mirrors.insert(mirror.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("mirror '", mirror.name, "': duplicate mirror name"));
    }
  }
  for (const PortSpec& spec : options.ports) {
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("port '", spec.name, "': duplicate port name"));
    }
    const std::optional<std::string> socket = spec.Traits().socket;
    if (socket && !paths.insert(*socket).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "port '", spec.name, "': socket ", *socket, " is already used by another port"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<unsigned>> ParseCpuList(absl::string_view text,
                                                   absl::string_view flag) {
  std::vector<unsigned> cpus;
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " must be a CPU list such as 1 or 1,2 or 1-3, not '", text, "'"));
  };
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> range =
        absl::StrSplit(part, absl::MaxSplits('-', 1));
    unsigned first = 0, last = 0;
    if (!absl::SimpleAtoi(range.first, &first)) return bad();
    last = first;
    if (!range.second.empty() && !absl::SimpleAtoi(range.second, &last)) return bad();
    if (last < first || last >= 1024) return bad();
    for (unsigned cpu = first; cpu <= last; ++cpu) {
      for (unsigned seen : cpus) {
        if (seen == cpu) return bad();
      }
      cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) return bad();
  return cpus;
}

absl::StatusOr<DaemonOptions> ParseDaemonOptions(const std::vector<std::string>& args) {
  Parser parser;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (!absl::ConsumePrefix(&arg, "--")) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "'"));
    }
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(arg, absl::MaxSplits('=', 1));
    absl::string_view value = kv.second;
    if (arg.find('=') == absl::string_view::npos && !IsFlag(kv.first)) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", kv.first, " needs a value"));
      }
      value = args[++i];
    }
    absl::Status status = parser.Apply(kv.first, value);
    if (!status.ok()) return status;
  }
  return parser.Finish();
}

absl::StatusOr<DaemonOptions> ParseConfigText(absl::string_view text, absl::string_view origin) {
  Parser parser;
  absl::Status status = parser.ApplyConfigText(text, origin);
  if (!status.ok()) return status;
  return parser.Finish();
}

std::vector<PortSpec> DefaultPorts(absl::string_view runtime_dir) {
  // Set, not parsed: the runtime directory may hold a comma.
  auto port = [&](const char* name, absl::string_view type, const char* socket) {
    PortSpec spec;
    spec.name = name;
    spec.driver = FindPortDriver(type);
    spec.driver_keys.Set("path", absl::StrCat(runtime_dir, socket));
    return spec;
  };
  return {port("vm1", "vhost-user", "/vm1.sock"), port("vm2", "vhost-user", "/vm2.sock"),
          port("mem1", "memif", "/memif.sock")};
}

std::string ConfigText(const DaemonOptions& options) {
  const DaemonOptions defaults;
  std::string out = "# hvswitch configuration (hvswitchctl config save)\n";
  for (const PortSpec& port : options.ports) absl::StrAppend(&out, "port=", port.ToString(), "\n");
  if (options.ports.empty()) absl::StrAppend(&out, "port=none\n");
  for (const StaticMacSpec& mac : options.static_macs) {
    absl::StrAppend(&out, "fdb_static=", mac.port, ",", KeyMacString(mac.key));
    if (KeyVlan(mac.key) != 0) absl::StrAppend(&out, ",vlan=", KeyVlan(mac.key));
    absl::StrAppend(&out, "\n");
  }
  for (const MirrorSpec& mirror : options.mirrors) {
    absl::StrAppend(&out, "mirror=", mirror.ToString(), "\n");
  }
  if (!options.worker_cpus.empty()) {
    absl::StrAppend(&out, "lcores=", absl::StrJoin(options.worker_cpus, ","), "\n");
  }
  if (!options.control_cpus.empty()) {
    absl::StrAppend(&out, "control_cpus=", absl::StrJoin(options.control_cpus, ","), "\n");
  }
  absl::StrAppend(&out, "metrics_address=",
                  options.metrics_address.empty() ? "none" : options.metrics_address, "\n");
  if (!options.eal_args.empty()) {
    absl::StrAppend(&out, "eal=", absl::StrJoin(options.eal_args, " "), "\n");
  }
  absl::StrAppend(&out, "runtime_dir=", options.runtime_dir, "\n");
  absl::StrAppend(&out, "ctl_socket=", options.ctl_socket.empty() ? "none" : options.ctl_socket,
                  "\n");
  if (!options.ctl_group.empty()) absl::StrAppend(&out, "ctl_group=", options.ctl_group, "\n");
  if (!options.socket_group.empty()) {
    absl::StrAppend(&out, "socket_group=", options.socket_group, "\n");
  }
  if (!options.save_config.empty()) {
    absl::StrAppend(&out, "save_config=", options.save_config, "\n");
  }
  auto number = [&](absl::string_view key, uint64_t value, uint64_t default_value) {
    if (value != default_value) absl::StrAppend(&out, key, "=", value, "\n");
  };
  number("fdb_capacity", options.fdb_capacity, defaults.fdb_capacity);
  number("fdb_aging", options.fdb_aging_seconds, defaults.fdb_aging_seconds);
  number("burst", options.burst, defaults.burst);
  number("rx_descriptors", options.rx_descriptors, defaults.rx_descriptors);
  number("tx_descriptors", options.tx_descriptors, defaults.tx_descriptors);
  number("mbufs", options.mbufs, defaults.mbufs);
  number("tx_flush_us", options.tx_flush_us, defaults.tx_flush_us);
  if (options.idle != defaults.idle) {
    absl::StrAppend(&out, "idle=", std::string(IdleModeName(options.idle)), "\n");
  }
  if (options.idle_max_us_given) absl::StrAppend(&out, "idle_max_us=", options.idle_max_us, "\n");
  number("mcast_snooping", options.mcast_snooping, defaults.mcast_snooping);
  number("mcast_aging", options.mcast_aging, defaults.mcast_aging);
  return out;
}

std::string UsageText() {
  std::string usage = "Usage: hvswitch [options]\n\nOptions:\n";
  for (const PortDriver* driver : PortDrivers()) absl::StrAppend(&usage, driver->usage());
  return usage + R"(  --port=none             no ports at start (hvswitchctl port add adds them)
  --vxlan=VNI,KEY=VALUE...  the port vxlanVNI: --port=vxlanVNI,type=vxlan,vni=VNI,...
    any port also: [,vlan=N | ,trunk=LIST[,native=N]][,mtu=N][,learn_limit=N]
                   [,mac=MAC[,MAC...] | ,lock=1][,quota=N][,tx_retries=N][,mrouter=1]
      vlan=N       access port: untagged frames, VLAN N inside
      trunk=LIST   tagged frames of these VLANs (e.g. 10,20,30-40);
                   native=N carries VLAN N untagged
      (neither)    every VLAN, untagged frames in VLAN 0
      mtu=N        68-9000 (default 1500); larger frames are dropped (reason mtu)
      learn_limit=N  MACs the port may teach the FDB (default 1024 on vhost-user and
                   memif ports, none on dpdk ports; 0: no limit)
      mac=MAC[,MAC...]  port security: the only source MACs accepted (up to 8)
      lock=1       port security: only the first source MAC, until the guest goes
      quota=N      the port's frames hold at most N packet buffers (a pool of its own)
      tx_retries=N  0-32 (default 8): a burst the port took in part is offered again up
                   to N times, each waiting up to 2 us for it to take frames (a slow
                   guest); 0: no retry
      mrouter=1    a multicast router is behind the port: with --mcast_snooping, every
                   snooped group's frames and the IGMP/MLD reports go there too
  --mirror=NAME,from=PORT[,PORT...],to=PORT[,direction=rx|tx|both][,vlan=V]
                          copies of what the from ports receive and are sent (both by
                          default) to port `to`, which takes nothing else; vlan=V pushes an
                          802.1Q tag of V on each copy (repeat for more; at most 8)
  --lcores=LIST           CPUs for poll-mode workers (default: the last CPU)
  --control_cpus=LIST     CPUs for the control thread and DPDK's own threads (vhost
                          events, interrupts, telemetry) (default: those the workers
                          leave free, or all when they leave none)
  --metrics_address=HOST:PORT|none   Prometheus endpoint (default 127.0.0.1:9417)
  --eal="ARGS"            extra EAL arguments, e.g. "--no-huge -m 1024"
  --runtime_dir=DIR       where the default configuration puts its sockets
                          (default /run/hvswitch)
  --ctl_socket=PATH|none  hvswitchctl's socket (default RUNTIME_DIR/hvswitch.ctl)
  --ctl_group=GROUP       a group whose members may use hvswitchctl (default: root only)
  --socket_group=GROUP    the group of the guest sockets hvswitch creates (mode 0660) and
                          of RUNTIME_DIR/qemu (0770), where QEMU creates the sockets of
                          client=1 ports: libvirt-qemu for guests started by libvirt
                          (default: root only)
  --save_config=FILE      write the configuration to FILE after every hvswitchctl change
                          (port add/del, fdb add/del); start again with --config=FILE
  --fdb_capacity=N        MAC table entries (default 65536)
  --fdb_aging=SECONDS     forget MACs not seen for this long (default 300; 0: never)
  --fdb_static=PORT,MAC[,vlan=N]   a MAC that lives on PORT: never aged or moved
                          (repeat for more)
  --burst=N               frames taken from a queue per poll, 1-256 (default 32)
  --rx_descriptors=N      receive ring size per queue (default 1024)
  --tx_descriptors=N      transmit ring size per queue (default 1024)
  --mbufs=N               buffers in the pool (default 0: sized from rings and workers)
  --tx_flush_us=N         let frames wait up to N us for a fuller tx burst (default 0)
  --idle=poll|sleep|interrupt
                          between rounds that find nothing, workers spin (poll: the
                          lowest latency, a whole CPU always) or sleep, backing off from
                          1 us up to --idle_max_us (default sleep); interrupt: sleep,
                          then block until a receive interrupt (vhost-user, NICs; a
                          worker polling a device without them sleeps)
  --idle_max_us=N         a worker's longest sleep, 1-100000 (default 250; less for a
                          worker polling a device ring that fills sooner at line rate;
                          given, such a ring is an error)
  --mcast_snooping=0|1    IGMP/MLD snooping (default 0): frames to a multicast group go
                          only to the ports that joined it (IGMPv1-3, MLDv1-2 reports) and
                          to router ports (queriers seen, mrouter=1); unknown groups, and
                          224.0.0.0/24 and ff02::1, flood
  --mcast_aging=SECONDS   memberships and router ports not refreshed for this long go,
                          10-86400 (default 260, RFC 3376's membership interval)
  --config=FILE           the same options, one per line
  --help                  this text
  --version               hvswitch's version
With no --port, hvswitch starts two vhost-user ports (vm1, vm2) and one memif port (mem1)
with sockets in the runtime directory.
)";
}

}  // namespace hvswitch
