"""A private Open vSwitch with DPDK (Debian's openvswitch-switch-dpdk, OVS 3.1, DPDK 22.11)
for benchmarks against hvswitch: the one place that knows how to start, configure and stop
it. Nothing of the system's Open vSwitch is touched: the instance has its own ovsdb, run
directory, sockets and logs in a temporary directory, and both daemons are children of
this process (killed by PID at the end, also when the benchmark fails or is interrupted).

    ovs = OvsDpdk(netns="ns", pmd_cpus=[1])   # ovs-vswitchd-dpdk runs in "ns"
    ovs.add_bridge("br0")                       # netdev datapath; br0 itself is an
                                                # `internal` port: a tap in "ns"
    ovs.add_port("br0", "vm1", "dpdkvhostuserclient", **{"vhost-server-path": SOCK})
    ovs.add_port("br0", "a", "dpdk", **{"dpdk-devargs": "net_af_packet0,iface=veth0"})
    ovs.stop()

DPDK runs without hugepages (`--no-huge -m 1024`; OVS adds `--in-memory` unless the
arguments say `--legacy-mem`, which `--no-huge` needs) and without PCI (`--no-pci`). The
PMD threads run on `pmd_cpus` (`pmd-cpu-mask`); the main thread, which also serves the
ports that are not DPDK ports (a netdev datapath's `internal`, `tap` and `system` ports are
polled there, not by a PMD), floats. `tso=True`: `userspace-tso-enable=true`, so vhost-user
guests negotiate TSO and checksum offload and the internal/tap ports are opened with a
virtio-net header.

Run a benchmark that uses it under `flock /tmp/cpu-bench.lock` (the PMD busy-polls).
"""
import atexit
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"

_instances = []


@atexit.register
def _stop_all():
    for ovs in list(_instances):
        ovs.stop()


class OvsDpdk:
    def __init__(self, netns=None, pmd_cpus=(1,), tso=True, memory_mb=1024, other_config=None,
                 vswitchd_cpus=None):
        """`other_config`: more Open_vSwitch other_config keys (e.g. tx-flush-interval).
        `vswitchd_cpus`: a taskset CPU list for the whole ovs-vswitchd process (its main
        thread included); default: no restriction."""
        if not os.path.exists(VSWITCHD):
            raise RuntimeError(f"{VSWITCHD} missing: apt-get install openvswitch-switch-dpdk")
        self.dir = tempfile.mkdtemp(prefix="hvs-ovs-")
        self.netns = netns
        self.db = os.path.join(self.dir, "db.sock")
        self.ctl = os.path.join(self.dir, "vswitchd.ctl")
        self.procs = []
        self.bridges = []
        _instances.append(self)
        try:
            self._start(pmd_cpus, tso, memory_mb, other_config or {}, vswitchd_cpus)
        except BaseException:
            self.stop()
            raise

    def _env(self):
        env = dict(os.environ)
        for var in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR"):
            env[var] = self.dir
        return env

    def _spawn(self, args, log):
        p = subprocess.Popen(args, stdout=open(os.path.join(self.dir, log), "wb"),
                             stderr=subprocess.STDOUT, env=self._env(), cwd=self.dir)
        self.procs.append(p)
        return p

    def _start(self, pmd_cpus, tso, memory_mb, other_config, vswitchd_cpus):
        conf = os.path.join(self.dir, "conf.db")
        subprocess.run(["ovsdb-tool", "create", conf, SCHEMA], check=True)
        self.ovsdb = self._spawn(["ovsdb-server", conf, f"--remote=punix:{self.db}",
                                  f"--unixctl={self.dir}/ovsdb.ctl",
                                  f"--log-file={self.dir}/ovsdb.log"], "ovsdb.out")
        self._wait(lambda: os.path.exists(self.db), "ovsdb-server's socket", self.ovsdb)
        mask = hex(sum(1 << c for c in pmd_cpus))
        config = {
            "dpdk-init": "true",
            "dpdk-extra": f"--no-pci --no-huge -m {memory_mb} --legacy-mem "
                          f"--file-prefix=hvs-ovs-{os.getpid()}-{id(self)}",
            "pmd-cpu-mask": mask,
            "userspace-tso-enable": "true" if tso else "false",
        }
        config.update(other_config)
        self.vsctl("--no-wait", "init", "--", "set", "Open_vSwitch", ".",
                   *[f'other_config:{k}="{v}"' for k, v in config.items()])
        args = [VSWITCHD, f"unix:{self.db}", f"--unixctl={self.ctl}",
                f"--log-file={self.dir}/vswitchd.log"]
        if vswitchd_cpus:
            args = ["taskset", "-c", vswitchd_cpus] + args
        if self.netns:
            args = ["ip", "netns", "exec", self.netns] + args
        self.vswitchd = self._spawn(args, "vswitchd.out")
        self._wait(lambda: self.vsctl("get", "Open_vSwitch", ".", "dpdk_initialized",
                                      check=False).strip() == "true",
                   "ovs-vswitchd's DPDK", self.vswitchd, timeout=60)

    def _wait(self, predicate, what, proc, timeout=30):
        deadline = time.monotonic() + timeout
        while not predicate():
            if proc.poll() is not None:
                raise RuntimeError(f"OVS: {what}: exited {proc.returncode}\n{self.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"OVS: timed out waiting for {what}\n{self.log()}")
            time.sleep(0.1)

    def log(self, tail=3000):
        try:
            with open(os.path.join(self.dir, "vswitchd.log"), errors="replace") as f:
                return f.read()[-tail:]
        except OSError:
            return ""

    def vsctl(self, *args, check=True):
        r = subprocess.run(["ovs-vsctl", f"--db=unix:{self.db}", "--timeout=30", *args],
                           capture_output=True, text=True, env=self._env())
        if check and r.returncode != 0:
            raise RuntimeError(f"ovs-vsctl {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def appctl(self, *args):
        r = subprocess.run(["ovs-appctl", "-t", self.ctl, *args], capture_output=True,
                           text=True, env=self._env(), timeout=30)
        if r.returncode != 0:
            raise RuntimeError(f"ovs-appctl {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def add_bridge(self, bridge):
        """A netdev (userspace) bridge with the NORMAL (learning) flow; the bridge's own
        port is an `internal` port, a tap of the same name in ovs-vswitchd's namespace."""
        self.vsctl("add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev")
        self.bridges.append(bridge)

    def add_port(self, bridge, port, kind, **options):
        """An interface of `kind` (dpdkvhostuserclient, dpdk, internal, tap, system) with
        options:KEY=VALUE (write keys with dashes as **{"vhost-server-path": ...})."""
        cmd = ["add-port", bridge, port, "--", "set", "Interface", port, f"type={kind}"]
        cmd += [f'options:{k}="{v}"' for k, v in options.items()]
        self.vsctl(*cmd)

    def interface_stats(self, port):
        """The interface's statistics column as {name: int}."""
        out = self.vsctl("get", "Interface", port, "statistics")
        return {k: int(v) for k, v in re.findall(r'"?([\w-]+)"?=(\d+)', out)}

    def coverage(self):
        """{counter: total} from `coverage/show`."""
        out = self.appctl("coverage/show")
        return {m.group(1): int(m.group(2))
                for m in re.finditer(r"^(\w+)\s+.*total:\s+(\d+)$", out, re.M)}

    def stop(self):
        """Removes the bridges (and so their taps: ovs-vswitchd leaves them behind when it
        exits), stops ovs-vswitchd and ovsdb-server, removes the directory."""
        if self.procs and all(p.poll() is None for p in self.procs):
            for bridge in self.bridges:
                self.vsctl("--if-exists", "del-br", bridge, check=False)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        # The datapath's own tap ("ovs-netdev") and any bridge tap still there.
        for link in ["ovs-netdev"] + self.bridges:
            subprocess.run((["ip", "-n", self.netns] if self.netns else ["ip"])
                           + ["link", "del", link], capture_output=True)
        self.bridges = []
        if self in _instances:
            _instances.remove(self)
        shutil.rmtree(self.dir, ignore_errors=True)
