#!/usr/bin/env python3
"""VXLAN benchmarks (issue 17): two switch instances joined by a memif underlay, each in
its own network namespace, with a VXLAN tunnel between them or joined plainly, hvswitch
against Open vSwitch-DPDK 3.1 (and testpmd-io); set-ups take turns in alternating slices
(the idle ones paused with SIGSTOP), as loopback.py does, because this VM's speed drifts.

Set-ups (--setups, comma list):
  hvs-vxlan   hvswitch A and B, each `--vxlan=100,vlan=10,uplink=u,local=IP,remote=PEER`
              over a memif uplink `u` (A: server, B: client=1; vlan=4094, mtu=1550). Their
              namespaces are joined by a veth pair holding the VTEP addresses (10.0.0.1/24
              in A, .2 in B) with permanent neighbour entries: hvswitch resolves each
              VTEP's next hop there (routes, neighbours over rtnetlink), the frames go over
              memif (the receiving hvswitch checks the outer IP and UDP port, not the MAC).
  hvs-plain   the same two hvswitch instances, the link between them an ordinary port of
              VLAN 10 (no tunnel): the plain-L2 reference for the per-packet cost.
  ovs-vxlan   two private OVS-DPDK instances (tests/perf/ovs.py), one per namespace, OVS's
              userspace tunnelling: br-phy holds the memif uplink (n_rxq=2, mtu_request=1550)
              and the VTEP address on its internal port; br-int the frames' ports and a
              type=vxlan port (key 100); the next hop set statically (`tnl/arp/set br-phy
              PEER MAC`, the peer's br-phy hwaddr; the route is br-phy's connected subnet).
  ovs-plain   the same two OVS instances, one bridge each, joined by the memif link.
  testpmd-io  (ring only) two dpdk-testpmd --forward-mode=io instances, the floor of any
              plain forwarder.

Topologies (--topology):
  guest  what the issue describes: one dpdk-testpmd guest (memif clients, mac forwarding,
         seeded with `start tx_first`) whose port 0 is attached to A and port 1 to B, so
         that every frame goes guest -> A (encap) -> B (decap) -> guest -> B (encap) -> A
         (decap) -> guest. Three busy pollers on this VM's two CPUs: the guest has
         --guest-cpu (0) to itself and the two switches share --switch-cpu (1), so they
         must give the CPU up when idle: hvswitch runs with --idle=sleep (its default)
         and OVS with other_config:pmd-maxsleep=--ovs-maxsleep (250 us, the same longest
         sleep); pure pollers sharing a CPU would be time-sliced by the kernel in
         milliseconds. Mpps: frames the guest received a second (each is one switch
         pass on each switch: an encapsulation on one, a decapsulation on the other).
  ring   each switch on a CPU of its own (A on --ring-cpus' first, B on its second), no
         guest while measuring: A's port l1 and B's port l1 are joined by a memif link,
         and the tunnel (or, plain, a second memif link l2) closes the ring. Frames
         injected once (--inflight bursts of 32, by testpmd guests on ports `g` that are
         then removed) go round for ever, their destination MACs static in both FDBs (and
         OVS's, fdb/add). --flow both (default): one stream each way round, so each core
         encapsulates and decapsulates equally (each tunnel learns the other stream's
         source as a remote MAC: known unicast, a hash hit, as real traffic) and is the
         ring's bottleneck half the time: its cycles per pass are (encap + decap) / 2,
         the figure to set against a plain pass. --flow one: A only encapsulates (l1 ->
         tunnel), B only decapsulates (tunnel -> l1); a frame from B's `g` first teaches
         A's tunnel the destination as a remote MAC behind B. Switches poll (--idle=poll,
         pmd-maxsleep=0). Mpps: passes a second on A (the ring's rate, = B's).

Per slice: Mpps; per switch core, TSC cycles per packet: `busy` (hvswitch: what
hvswitch_core_busy_cycles_total counts, poll calls that returned frames and their work;
OVS: pmd-stats-show's processing cycles over packets received; testpmd: its
--record-core-cycles) and `awake` (hvswitch: all the worker's loop cycles but its
sleeps, empty polls included; OVS: processing + idle cycles). hvswitch's `busy` does NOT count the decapsulation: the
uplink's receive callback takes every VXLAN frame out of the burst, the uplink's poll
returns 0 and the worker counts that call (the uplink's receive and the callback's work)
as idle; `awake` counts everything. In the ring (poll mode) `awake` per pass is the
ring's period, the same on both cores: a switch's own cost when it is the bottleneck,
i.e. with --flow both, where both cores do the same work, the cost of an average pass.
Each round is classified by the placement probe of design-notes.md (a cache line bounced
between CPU 0 and CPU 1 for 0.2 s, all set-ups paused, before and after the round:
~100 ns "near" or ~500 ns "far"), and the medians are also given per class.

--instructions: instead of timing, valgrind --tool=callgrind on one hvswitch of the
--flow one ring (A: encapsulating passes, B: decapsulating; --toggle-collect=
'*Worker::Run*', as memif_instructions.py), against the plain ring: instructions per
pass, and the inclusive instructions of the tunnel's functions per pass (callgrind's
files kept in --cg-dir). The switch under valgrind is the ring's bottleneck, so its polls
find full bursts.

--idle-cpu: the guest topology's two hvswitch pairs with no traffic (guests absent):
each process's CPU and its worker's wake-ups, VXLAN pair against plain pair.

usage: vxlan_loopback.py [--topology guest|ring] [--sizes 64,1518] [--rounds 8]
                         [--slice 2] [--setups hvs-vxlan,hvs-plain,ovs-vxlan,ovs-plain]
                         [--switch-cpu 1] [--guest-cpu 0] [--ring-cpus 0,1]
                         [--flow both|one] [--inflight 8] [--seed 8]
                         [--ovs-maxsleep N] [--idle sleep|poll]
                         [--instructions [--seconds 20] [--cg-dir DIR]]
                         [--idle-cpu [--seconds 10]] [--json FILE]
Needs root (namespaces), openvswitch-switch-dpdk for the OVS set-ups, valgrind for
--instructions. HVSWITCH / HVSWITCHCTL (environment): the binaries measured.
Run it under `flock /tmp/cpu-bench.lock flock /tmp/e2e.lock`.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopback as lb  # noqa: E402
import ovs as ovs_mod  # noqa: E402

HVSWITCH = lb.HVSWITCH
HVSWITCHCTL = os.environ.get("HVSWITCHCTL",
                             os.path.join(lb.ROOT, "build", "switch", "hvswitchctl"))
PID = os.getpid()
VNI = 100
VLAN = 10
IP = {"a": "10.0.0.1", "b": "10.0.0.2"}
OTHER = {"a": "b", "b": "a"}
S_MAC = lb.MAC0                  # the ring's source (A's injector)
X_MAC = lb.MAC1                  # the ring's destination (B's injector's own MAC)
Y_MAC = "02:00:00:00:01:77"      # where B's teaching frame goes: dropped at A
OVS_PHY_MAC = {"a": "02:00:00:0a:00:01", "b": "02:00:00:0a:00:02"}
PLACEMENT_NS = 250               # probe round trips below: the CPUs are near each other
UPLINK_MTU = 1550                # a 1500-byte inner MTU + 50 bytes of VXLAN headers

namespaces = []    # made here, deleted by cleanup()
dpdk_prefixes = []  # EAL file prefixes used here: /var/run/dpdk/<prefix> removed at the end


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True)


def make_netns(name):
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    ip("netns", "add", name)
    namespaces.append(name)
    ip("-n", name, "link", "set", "lo", "up")


def link_mac(ns, iface):
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", iface], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[0]["address"]


def vtep_underlay(ns, tag):
    """The two namespaces' VTEP addresses on a veth pair, each side's neighbour entry for
    the other permanent: hvswitch resolves its VTEPs' next hops here."""
    ends = {s: f"vx{tag}{PID}{s}" for s in "ab"}
    ip("link", "add", ends["a"], "netns", ns["a"], "type", "veth", "peer", "name", ends["b"],
       "netns", ns["b"])
    for s in "ab":
        ip("-n", ns[s], "addr", "add", f"{IP[s]}/24", "dev", ends[s])
        ip("-n", ns[s], "link", "set", ends[s], "up")
    macs = {s: link_mac(ns[s], ends[s]) for s in "ab"}
    for s in "ab":
        ip("-n", ns[s], "neigh", "replace", IP[OTHER[s]], "lladdr", macs[OTHER[s]], "dev",
           ends[s], "nud", "permanent")


def ctl(sock, *args, timeout=30):
    r = subprocess.run([HVSWITCHCTL, f"--socket={sock}", "--json", *args],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"hvswitchctl {' '.join(args)}: {r.stdout}{r.stderr}")
    return json.loads(r.stdout)


def wait(predicate, what, timeout=60, proc=None, log=None):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return
        except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired):
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: process exited {proc.returncode}\n{tail(log)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}\n{tail(log)}")
        time.sleep(0.2)


def tail(path, n=3000):
    if not path:
        return ""
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


def testpmd(name, vdevs, lcores, app, mbufs=16384):
    """An interactive dpdk-testpmd (loopback.Testpmd) with these vdevs."""
    prefix = f"hvs-vxl-{name}-{PID}"
    dpdk_prefixes.append(prefix)
    eal = [f"--lcores={lcores}", "--single-file-segments", f"--file-prefix={prefix}"]
    eal += [f"--vdev={v}" for v in vdevs]
    return lb.Testpmd(eal, app)


def memif(i, role, sock, mac=None):
    return (f"net_memif{i},role={role},socket={sock},socket-abstract=no" +
            (f",mac={mac}" if mac else ""))


def seed(guest, bursts, what):
    """Seeds a mac-forwarding guest's loop until frames circulate (loopback.Setup)."""
    for _ in range(10):
        guest.cmd(f"start tx_first {bursts}")
        before = guest.rx_packets()
        time.sleep(1)
        if guest.rx_packets() - before > 1000:
            return
        guest.cmd("stop")
    raise RuntimeError(f"{what}: frames do not circulate")


def inject(name, sock, mac, peer, bursts, size, queues=1):
    """A one-port testpmd guest sends `bursts` bursts of 32 frames peer <- mac, then quits."""
    g = testpmd(name, [memif(0, "client", sock, mac)], f"0@{ARGS.guest_cpu},1@{ARGS.guest_cpu}",
                ["--forward-mode=mac", f"--eth-peer=0,{peer}", "--burst=32",
                 f"--rxq={queues}", f"--txq={queues}"])
    try:
        deadline = time.monotonic() + 30
        while "Link status: up" not in g.cmd("show port info 0"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: the injector's link is not up")
            time.sleep(0.2)
        g.cmd(f"set txpkts {size - 4}")
        g.cmd(f"start tx_first {bursts}")
        time.sleep(0.5)
        g.cmd("stop")
        return g
    finally:
        g.p.stdin.close()
        lb.stop_process(g.p)


# The placement probe of design-notes.md ("Measuring on this machine"): a cache line
# bounced between the two CPUs for 0.2 s while every set-up is paused; its round trip is
# ~100 ns or ~500 ns here, and the same forwarding runs at very different speeds in the
# two placements.
PROBE_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static _Alignas(64) _Atomic long line;
static _Atomic int stop;
static void pin(int cpu) {
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}
static void* pong(void* arg) {
  pin(*(int*)arg);
  long want = 1;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    if (atomic_load_explicit(&line, memory_order_acquire) == want) {
      atomic_store_explicit(&line, want + 1, memory_order_release);
      want += 2;
    }
  }
  return NULL;
}
int main(int argc, char** argv) {
  int cpu[2] = {atoi(argv[1]), atoi(argv[2])};
  double seconds = atof(argv[3]), elapsed;
  pthread_t t;
  pthread_create(&t, NULL, pong, &cpu[1]);
  pin(cpu[0]);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  long v = 0, n = 0;
  do {
    for (int i = 0; i < 1000; ++i, ++n) {
      atomic_store_explicit(&line, v + 1, memory_order_release);
      v += 2;
      while (atomic_load_explicit(&line, memory_order_acquire) != v) {}
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    elapsed = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
  } while (elapsed < seconds);
  atomic_store(&stop, 1);
  pthread_join(t, NULL);
  printf("%.1f\n", elapsed / n * 1e9);
  return 0;
}
"""
_probe_bin = None


def probe_ns():
    """The round trip of a cache line between CPU 0 and CPU 1, ns."""
    global _probe_bin
    if _probe_bin is None:
        d = tempfile.mkdtemp(prefix="hvs-vxl-probe-")
        with open(os.path.join(d, "probe.c"), "w") as f:
            f.write(PROBE_C)
        _probe_bin = os.path.join(d, "probe")
        subprocess.run(["gcc", "-O2", "-pthread", "-o", _probe_bin,
                        os.path.join(d, "probe.c")], check=True)
    out = subprocess.run([_probe_bin, "0", "1", "0.2"], capture_output=True, text=True,
                         check=True).stdout
    return float(out)


# ---------------------------------------------------------------------------------------


class Pair:
    """Two switch instances (A, B), their namespaces and, in the guest topology, the
    guest. Subclasses: launch(size) and read()."""

    def __init__(self, name, topology, args, wrap=None):
        self.name = name
        self.topology = topology
        self.args = args
        self.dir = tempfile.mkdtemp(prefix=f"hvs-vxl-{name}-")
        os.chmod(self.dir, 0o755)
        self.ns = {s: f"hvs-vxl-{name}-{s}-{PID}" for s in "ab"}
        self.procs = []     # what pause() stops
        self.guest = None
        self.wrap = wrap or {}  # side -> command the switch runs under (valgrind)
        if topology == "guest":
            self.cpu = {"a": args.switch_cpu, "b": args.switch_cpu}
        else:
            self.cpu = dict(zip("ab", args.ring_cpus))

    def launch(self, size):
        raise NotImplementedError

    def read(self, start=False):
        """{"t": time, "rate": count whose rate is Mpps, "a"/"b": (busy, awake,
        packets)}; `start`: the slice begins (OVS clears its counters)."""
        raise NotImplementedError

    def pause(self):
        for p in self.procs:
            os.kill(p.pid, signal.SIGSTOP)

    def resume(self):
        for p in self.procs:
            os.kill(p.pid, signal.SIGCONT)

    def start_guest(self, sockets, size, queues=1):
        """The guest topology's mac-forwarding guest: port 0 on A, port 1 on B."""
        name = re.sub("[^A-Za-z0-9-]", "", self.name)
        self.guest = testpmd(f"{name}-guest", lb.guest_vdevs("memif", sockets),
                             f"0@{self.args.guest_cpu},1@{self.args.guest_cpu}",
                             ["--forward-mode=mac", f"--eth-peer=0,{lb.MAC1}",
                              f"--eth-peer=1,{lb.MAC0}", "--burst=32", f"--rxq={queues}",
                              f"--txq={queues}"])
        self.procs.append(self.guest.p)
        self.guest.cmd(f"set txpkts {size - 4}")
        seed(self.guest, self.args.seed, self.name)

    def measure(self, seconds):
        """One slice: (Mpps, {side: (busy, awake) cycles per packet})."""
        self.resume()
        try:
            time.sleep(0.5)
            r0 = self.read(start=True)
            time.sleep(seconds)
            r1 = self.read()
        finally:
            self.pause()
        mpps = (r1["rate"] - r0["rate"]) / (r1["t"] - r0["t"]) / 1e6
        per = {}
        for s in "ab":
            busy, awake, packets = (r1[s][i] - r0[s][i] for i in range(3))
            per[s] = (busy / packets if packets > 0 else float("nan"),
                      awake / packets if packets > 0 and awake > 0 else float("nan"))
        return mpps, per


class HvsPair(Pair):
    def __init__(self, name, topology, args, vxlan, wrap=None):
        super().__init__(name, topology, args, wrap)
        self.vxlan = vxlan
        self.sw = {}
        self.sock = {s: os.path.join(self.dir, f"{s}.ctl") for s in "ab"}
        self.log = {s: os.path.join(self.dir, f"hvswitch-{s}.log") for s in "ab"}

    def ports(self, side):
        d, client = self.dir, (",client=1" if side == "b" else "")
        ports = [f"g,type=memif,path={d}/g{side}.sock,vlan={VLAN}"]
        extra = []
        if self.topology == "ring":
            ports.append(f"l1,type=memif,path={d}/l1.sock{client},vlan={VLAN}")
        if self.vxlan:
            ports.append(f"u,type=memif,path={d}/u.sock{client},vlan=4094,mtu={UPLINK_MTU}")
            extra.append(f"--vxlan={VNI},vlan={VLAN},uplink=u,local={IP[side]},"
                         f"remote={IP[OTHER[side]]}")
        elif self.topology == "ring":
            ports.append(f"l2,type=memif,path={d}/l2.sock{client},vlan={VLAN}")
        else:
            ports.append(f"u,type=memif,path={d}/u.sock{client},vlan={VLAN},mtu={UPLINK_MTU}")
        if self.topology == "ring":
            # X's frames go clockwise: A sends them into the tunnel (or l2), B onto l1;
            # S's (--flow both) the other way round.
            tunnel = f"vxlan{VNI}" if self.vxlan else "l2"
            out = {"a": (tunnel, "l1"), "b": ("l1", tunnel)}[side]
            extra.append(f"--fdb_static={out[0]},{X_MAC},vlan={VLAN}")
            if self.args.flow == "both":
                extra.append(f"--fdb_static={out[1]},{S_MAC},vlan={VLAN}")
            elif self.vxlan:  # B's teaching frame: dropped at A (to its ingress port)
                extra.append(f"--fdb_static=vxlan{VNI},{Y_MAC},vlan={VLAN}")
        return ports, extra

    def start_switch(self, side):
        ports, extra = self.ports(side)
        prefix = f"hvs-vxl-{re.sub('[^A-Za-z0-9-]', '', self.name)}-{side}-{PID}"
        dpdk_prefixes.append(prefix)
        idle = self.args.idle if self.topology == "guest" else "poll"
        if side in self.wrap:
            idle = "sleep"  # under valgrind: no empty polls counted while it waits
        args = ["ip", "netns", "exec", self.ns[side], *self.wrap.get(side, []), HVSWITCH,
                *[f"--port={p}" for p in ports], *extra, f"--lcores={self.cpu[side]}",
                "--metrics_address=none", f"--ctl_socket={self.sock[side]}",
                f"--eal=--no-huge -m 1024 --file-prefix={prefix}", f"--idle={idle}",
                "--burst=32"]
        log = open(self.log[side], "wb")
        self.sw[side] = lb.start(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(self.sw[side])

    def wait_up(self, side, names, timeout):
        def up():
            ports = {p["name"]: p["up"] for p in ctl(self.sock[side], "port", "list")["ports"]}
            return all(ports.get(n) for n in names)
        wait(up, f"{self.name} {side}: ports {names} up", timeout, self.sw[side],
             self.log[side])

    def launch(self, size):
        for s in "ab":
            make_netns(self.ns[s])
        if self.vxlan:
            vtep_underlay(self.ns, re.sub("[^a-z]", "", self.name)[-2:])
        slow = 240 if self.wrap else 60
        self.start_switch("a")
        wait(lambda: os.path.exists(self.sock["a"]), f"{self.name} a: control socket", slow,
             self.sw["a"], self.log["a"])
        self.start_switch("b")
        # (`g` comes up when its guest connects.)
        names = ["u"] if self.topology == "guest" else ["l1", "u" if self.vxlan else "l2"]
        if self.vxlan:
            names.append(f"vxlan{VNI}")
        for s in "ab":
            wait(lambda: os.path.exists(self.sock[s]), f"{self.name} {s}: control socket",
                 slow, self.sw[s], self.log[s])
        for s in "ab":
            self.wait_up(s, names, slow)
        if self.topology == "guest":
            if size:  # 0: no guest (--idle-cpu)
                self.start_guest([f"{self.dir}/ga.sock", f"{self.dir}/gb.sock"], size)
            return
        tag = re.sub("[^A-Za-z0-9-]", "", self.name)
        both = self.args.flow == "both"
        if self.vxlan and not both:
            # A learns X behind B's VTEP (the tunnel's remote MACs come from decapsulated
            # sources), so that the ring's frames are encapsulated as known unicast. (Both
            # ways, each tunnel learns its remote MAC from the other stream.)
            inject(f"{tag}-teach", f"{self.dir}/gb.sock", X_MAC, Y_MAC, 1, 64)

            def learned():
                [t] = ctl(self.sock["a"], "vxlan", "show")["tunnels"]
                return t["remote_macs"] >= 1
            wait(learned, f"{self.name}: A's tunnel learning {X_MAC}", slow)
        inject(f"{tag}-inject", f"{self.dir}/ga.sock", S_MAC, X_MAC, self.args.inflight, size)
        if both:
            inject(f"{tag}-injectb", f"{self.dir}/gb.sock", X_MAC, S_MAC, self.args.inflight,
                   size)
        for s in "ab":
            ctl(self.sock[s], "port", "del", "g", timeout=slow)
        r0 = self.read()
        time.sleep(1)
        r1 = self.read()
        if r1["rate"] - r0["rate"] < 1000:
            raise RuntimeError(f"{self.name}: frames do not go round\n{tail(self.log['a'])}")

    def cpu_seconds(self, side):
        """The switch process's CPU time so far (every thread)."""
        with open(f"/proc/{self.sw[side].pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def wakeups(self, side):
        [core] = ctl(self.sock[side], "pmd")["cores"]
        return core["wakeups"], core["max_sleep_us"]

    def pmd(self, side):
        [core] = ctl(self.sock[side], "pmd", timeout=120 if self.wrap else 30)["cores"]
        cycles = core["busy_cycles"] + core["idle_cycles"]
        awake = cycles * (1 - core["sleep_percent"] / 100)
        return core["busy_cycles"], awake, core["packets"]

    def read(self, start=False):
        out = {s: self.pmd(s) for s in "ab"}
        if self.guest is not None:
            out["rate"] = self.guest.rx_packets()
        else:
            out["rate"] = out["a"][2]
        out["t"] = time.monotonic()
        return out

    def stop(self):
        for s, p in self.sw.items():
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
        if self.guest is not None:
            lb.stop_process(self.guest.p)
        for p in self.sw.values():
            lb.stop_process(p)


class OvsPair(Pair):
    def __init__(self, name, topology, args, vxlan):
        super().__init__(name, topology, args)
        self.vxlan = vxlan
        self.ovs = {}
        self.memif_ids = {"a": 0, "b": 0}

    def dpdk_port(self, side, bridge, port, role, sock, **opts):
        i = self.memif_ids[side]
        self.memif_ids[side] += 1
        self.ovs[side].add_port(bridge, port, "dpdk", n_rxq=2,
                                **{"dpdk-devargs": memif(i, role, sock)}, **opts)

    def build(self, side):
        maxsleep = self.args.ovs_maxsleep if self.topology == "guest" else 0
        o = ovs_mod.OvsDpdk(netns=self.ns[side], pmd_cpus=[self.cpu[side]], tso=False,
                            memory_mb=1024,
                            other_config={"per-port-memory": "true",
                                          "pmd-maxsleep": str(maxsleep)})
        self.ovs[side] = o
        lb.switches_ovs.append(o)
        dpdk_prefixes.append(f"hvs-ovs-{os.getpid()}-{id(o)}")
        d, role = self.dir, ("server" if side == "a" else "client")
        bridge = "br-int" if self.vxlan else "br0"
        if self.vxlan:
            o.vsctl("add-br", "br-phy", "--", "set", "bridge", "br-phy", "datapath_type=netdev",
                    "--", "set", "bridge", "br-phy", f"other-config:hwaddr={OVS_PHY_MAC[side]}")
            o.bridges.append("br-phy")
            self.dpdk_port(side, "br-phy", "u", role, f"{d}/u.sock")
            o.vsctl("set", "Interface", "u", f"mtu_request={UPLINK_MTU}")
            ip("-n", self.ns[side], "addr", "add", f"{IP[side]}/24", "dev", "br-phy")
            ip("-n", self.ns[side], "link", "set", "br-phy", "up")
        o.add_bridge(bridge)
        if self.topology == "guest" or side == "a" or self.args.flow == "both":
            self.dpdk_port(side, bridge, "g", "server", f"{d}/g{side}.sock")
        if self.topology == "ring":
            self.dpdk_port(side, bridge, "l1", role, f"{d}/l1.sock")
        if self.vxlan:
            o.vsctl("add-port", bridge, "vx", "--", "set", "interface", "vx", "type=vxlan",
                    f"options:remote_ip={IP[OTHER[side]]}", f"options:local_ip={IP[side]}",
                    f"options:key={VNI}")
            o.appctl("tnl/arp/set", "br-phy", IP[OTHER[side]], OVS_PHY_MAC[OTHER[side]])
        elif self.topology == "ring":
            self.dpdk_port(side, bridge, "l2", role, f"{d}/l2.sock")
        else:
            self.dpdk_port(side, bridge, "u", role, f"{d}/u.sock")
            o.vsctl("set", "Interface", "u", f"mtu_request={UPLINK_MTU}")
        self.bridge = bridge
        self.procs.append(o.vswitchd)

    def polled(self, side, ports):
        out = self.ovs[side].appctl("dpif-netdev/pmd-rxq-show")
        return all(f"port: {p} " in out for p in ports)

    def launch(self, size):
        for s in "ab":
            make_netns(self.ns[s])
        for s in "ab":
            self.build(s)
        for s in "ab":
            ports = ["u"] if self.vxlan or self.topology == "guest" else ["l2"]
            ports += ["l1"] if self.topology == "ring" else ["g"]
            wait(lambda: self.polled(s, ports), f"{self.name} {s}: ports polled", 90,
                 self.ovs[s].vswitchd)
        if self.topology == "guest":
            # OVS's PMD sends on transmit queue 1 of a memif port: two queues (loopback.py).
            self.start_guest([f"{self.dir}/ga.sock", f"{self.dir}/gb.sock"], size, queues=2)
            return
        tunnel = "vx" if self.vxlan else "l2"
        out = {"a": (tunnel, "l1"), "b": ("l1", tunnel)}
        both = self.args.flow == "both"
        for s in "ab":
            self.ovs[s].appctl("fdb/add", self.bridge, out[s][0], "0", X_MAC)
            if both:
                self.ovs[s].appctl("fdb/add", self.bridge, out[s][1], "0", S_MAC)
        tag = re.sub("[^A-Za-z0-9-]", "", self.name)
        inject(f"{tag}-inject", f"{self.dir}/ga.sock", S_MAC, X_MAC, self.args.inflight, size,
               queues=2)
        if both:
            inject(f"{tag}-injectb", f"{self.dir}/gb.sock", X_MAC, S_MAC, self.args.inflight,
                   size, queues=2)
        for s in ("ab" if both else "a"):
            self.ovs[s].vsctl("del-port", self.bridge, "g")
        r0 = self.read()
        time.sleep(1)
        r1 = self.read()
        if r1["rate"] - r0["rate"] < 1000:
            raise RuntimeError(f"{self.name}: frames do not go round\n{self.ovs['a'].log()}")

    def stats(self, side, clear=False):
        o = self.ovs[side]
        if clear:
            o.appctl("dpif-netdev/pmd-stats-clear")
            return 0, 0, 0
        out = o.appctl("dpif-netdev/pmd-stats-show")
        total = {}
        for key in ("processing cycles", "idle cycles", "packets received",
                    "packet recirculations"):
            total[key] = sum(int(x) for x in re.findall(rf"{key}:\s+(\d+)", out))
        self.recirculations = total["packet recirculations"]
        return (total["processing cycles"], total["processing cycles"] + total["idle cycles"],
                total["packets received"])

    def read(self, start=False):
        out = {s: self.stats(s, clear=start) for s in "ab"}
        out["t"] = time.monotonic()
        # OVS's counters restart at every clear: the guest's count is the rate in the
        # guest topology, A's packets (cleared at the start) in the ring.
        out["rate"] = self.guest.rx_packets() if self.guest is not None else out["a"][2]
        return out

    def stop(self):
        if self.guest is not None:
            os.kill(self.guest.p.pid, signal.SIGCONT)
            lb.stop_process(self.guest.p)
        for o in self.ovs.values():
            if o.vswitchd.poll() is None:
                os.kill(o.vswitchd.pid, signal.SIGCONT)
            o.stop()
            if o in lb.switches_ovs:
                lb.switches_ovs.remove(o)


class TestpmdPair(Pair):
    """Ring only: two testpmd io forwarders joined by two memif links (l1, l2)."""

    def __init__(self, name, topology, args):
        super().__init__(name, topology, args)
        if topology != "ring":
            raise SystemExit("testpmd-io: --topology ring only (two io forwarders sharing a "
                             "CPU are time-sliced by the kernel: no figure of a switch)")
        self.tp = {}

    def launch(self, size):
        d = self.dir
        for s in "ab":
            role = "server" if s == "a" else "client"
            self.tp[s] = testpmd(f"io-{s}", [memif(0, role, f"{d}/l1.sock"),
                                             memif(1, role, f"{d}/l2.sock")],
                                 f"0@{self.cpu[OTHER[s]]},1@{self.cpu[s]}",
                                 ["--forward-mode=io", "--record-core-cycles", "--burst=32",
                                  "--rxd=1024", "--txd=1024"])
            self.procs.append(self.tp[s].p)
        self.tp["a"].cmd(f"set txpkts {size - 4}")
        self.tp["b"].cmd("start")
        # io forwarding: tx_first sends on both ports, so frames go round both ways.
        self.tp["a"].cmd(f"start tx_first {self.args.inflight}")
        r0 = self.read()
        time.sleep(1)
        r1 = self.read()
        if r1["rate"] - r0["rate"] < 1000:
            raise RuntimeError(f"{self.name}: frames do not go round")

    def read(self, start=False):
        out = {}
        for s in "ab":
            cycles, packets = self.tp[s].busy_cycles()
            out[s] = (cycles, 0, packets)
        out["rate"] = out["a"][2]
        out["t"] = time.monotonic()
        return out

    def stop(self):
        for t in self.tp.values():
            if t.p.poll() is None:
                os.kill(t.p.pid, signal.SIGCONT)
            lb.stop_process(t.p)


def make_pair(name, topology, args, wrap=None):
    if name == "hvs-vxlan":
        return HvsPair(name, topology, args, vxlan=True, wrap=wrap)
    if name == "hvs-plain":
        return HvsPair(name, topology, args, vxlan=False, wrap=wrap)
    if name == "ovs-vxlan":
        return OvsPair(name, topology, args, vxlan=True)
    if name == "ovs-plain":
        return OvsPair(name, topology, args, vxlan=False)
    if name == "testpmd-io":
        return TestpmdPair(name, topology, args)
    raise SystemExit(f"unknown set-up {name}")


def cleanup(pairs):
    for p in pairs:
        try:
            p.stop()
        except Exception as e:  # noqa: BLE001 (the rest must still go)
            print(f"# {p.name}: stop: {e}", file=sys.stderr)
    lb.cleanup()
    for ns in namespaces:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    namespaces.clear()
    for p in pairs:
        shutil.rmtree(p.dir, ignore_errors=True)
    for prefix in dpdk_prefixes:
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


# ---------------------------------------------------------------------------------------


def fmt(x, digits=0):
    return "   -" if x != x else f"{x:.{digits}f}"


def timing(args, size):
    """Alternating slices of the set-ups at one frame size; returns the summary."""
    names = args.setups.split(",")
    pairs = [make_pair(n, args.topology, args) for n in names]
    rounds = []
    try:
        for p in pairs:
            t0 = time.monotonic()
            p.launch(size)
            p.pause()
            print(f"# {p.name}: up in {time.monotonic() - t0:.0f}s", flush=True)
        mpps = {n: [] for n in names}
        cyc = {n: {s: ([], []) for s in "ab"} for n in names}
        by = {p.name: p for p in pairs}
        row = {}
        probes = []
        for r, n in lb.turns(names, args.rounds):
            if not row:
                probes.append(probe_ns())
            rate, per = by[n].measure(args.slice)
            mpps[n].append(rate)
            for s in "ab":
                cyc[n][s][0].append(per[s][0])
                cyc[n][s][1].append(per[s][1])
            row[n] = {"mpps": rate, "cycles": per}
            if len(row) == len(names):
                after = probe_ns()
                row["probe_ns"] = [probes[-1], after]
                line = "   ".join(
                    f"{k} {row[k]['mpps']:5.2f} Mpps A {fmt(row[k]['cycles']['a'][0])}"
                    f"/{fmt(row[k]['cycles']['a'][1])} B {fmt(row[k]['cycles']['b'][0])}"
                    f"/{fmt(row[k]['cycles']['b'][1])}" for k in names)
                print(f"{size} B round {r + 1} (probe {probes[-1]:.0f}/{after:.0f} ns): "
                      f"{line}", flush=True)
                rounds.append(row)
                row = {}
    finally:
        cleanup(pairs)

    def med(values):
        values = [v for v in values if v == v]
        return statistics.median(values) if values else float("nan")
    summary = {"size": size, "rounds": rounds, "mpps": {n: med(mpps[n]) for n in names},
               "cycles": {n: {s: [med(cyc[n][s][0]), med(cyc[n][s][1])] for s in "ab"}
                          for n in names}, "ratios": {}}
    print(f"# {size} B, medians over {args.rounds} rounds (cycles per packet on each switch "
          f"core, busy/awake; OVS's awake: processing + idle cycles; testpmd: busy only):")
    for n in names:
        c = summary["cycles"][n]
        print(f"  {n:11s} {summary['mpps'][n]:6.2f} Mpps   A {fmt(c['a'][0]):>6}/"
              f"{fmt(c['a'][1]):>6}   B {fmt(c['b'][0]):>6}/{fmt(c['b'][1]):>6}")
    pairs_of = [("hvs-vxlan", "ovs-vxlan"), ("hvs-vxlan", "hvs-plain"), ("ovs-vxlan", "ovs-plain"),
                ("hvs-plain", "ovs-plain"), ("hvs-vxlan", "testpmd-io"),
                ("hvs-plain", "testpmd-io")]
    for a, b in pairs_of:
        if a in names and b in names:
            per_round = [x[a]["mpps"] / x[b]["mpps"] for x in rounds if x[b]["mpps"] > 0]
            summary["ratios"][f"{a}/{b}"] = {
                "median": med(per_round), "min": min(per_round), "max": max(per_round)}
            print(f"  Mpps {a} / {b}: median of per-round ratios {med(per_round):.2f} "
                  f"(min {min(per_round):.2f}, max {max(per_round):.2f})")

    def cycles(x, n):  # a round's cycles per packet of a set-up: both cores' mean
        i = 0 if n == "testpmd-io" else 1
        return (x[n]["cycles"]["a"][i] + x[n]["cycles"]["b"][i]) / 2
    for a, b in (("hvs-vxlan", "hvs-plain"), ("ovs-vxlan", "ovs-plain"),
                 ("ovs-vxlan", "hvs-vxlan"), ("ovs-plain", "hvs-plain")):
        if a in names and b in names:
            r = [cycles(x, a) / cycles(x, b) for x in rounds]
            d = [cycles(x, a) - cycles(x, b) for x in rounds]
            summary["ratios"][f"cycles {a}/{b}"] = {"median": med(r), "min": min(r),
                                                     "max": max(r), "difference": med(d)}
            print(f"  cycles per packet (awake) {a} / {b}: median of per-round ratios "
                  f"{med(r):.2f} (min {min(r):.2f}, max {max(r):.2f}); difference "
                  f"{med(d):+.0f}")
    # By placement: rounds whose probes before and after agree (both under or both over
    # PLACEMENT_NS), medians of each class.
    for label, fast in (("near", True), ("far", False)):
        sel = [x for x in rounds if all((p < PLACEMENT_NS) == fast for p in x["probe_ns"])]
        if not sel:
            continue
        cyc_line = "  ".join(
            f"{n} {med([x[n]['mpps'] for x in sel]):.2f} Mpps "
            f"{med([x[n]['cycles'][s][i] for x in sel for s in 'ab']):.0f} cyc"
            for n in names for i in (0 if n == "testpmd-io" else 1,))
        print(f"  {label} placement (probe {'<' if fast else '>='} {PLACEMENT_NS} ns before "
              f"and after, {len(sel)} rounds; cycles: awake, testpmd busy): {cyc_line}")
        for a, b in pairs_of:
            if a in names and b in names:
                r = [x[a]["mpps"] / x[b]["mpps"] for x in sel if x[b]["mpps"] > 0]
                print(f"    Mpps {a} / {b}: {med(r):.2f} (min {min(r):.2f}, max {max(r):.2f})")
    return summary


def idle_cpu(args):
    """hvswitch A and B of the guest topology with no guest traffic (the guests' memif
    ports down, the uplink up): each process's CPU and its worker's wake-ups, the VXLAN
    pair against the plain one, in alternating slices."""
    pairs = [make_pair(n, "guest", args) for n in ("hvs-vxlan", "hvs-plain")]
    cpu = {p.name: {s: [] for s in "ab"} for p in pairs}
    wake = {p.name: {s: [] for s in "ab"} for p in pairs}
    by = {p.name: p for p in pairs}
    try:
        for p in pairs:
            p.launch(0)
            p.pause()
        print(f"# idle: CPU % of each hvswitch process (--idle={args.idle}), worker wake-ups "
              f"a second; {args.rounds} rounds of {args.seconds:.0f}s slices")
        for r, n in lb.turns(list(by), args.rounds):
            p = by[n]
            p.resume()
            try:
                time.sleep(1)
                c0 = {s: p.cpu_seconds(s) for s in "ab"}
                w0 = {s: p.wakeups(s)[0] for s in "ab"}
                t0 = time.monotonic()
                time.sleep(args.seconds)
                c1 = {s: p.cpu_seconds(s) for s in "ab"}
                w1 = {s: p.wakeups(s) for s in "ab"}
                t1 = time.monotonic()
            finally:
                p.pause()
            for s in "ab":
                cpu[n][s].append(100 * (c1[s] - c0[s]) / (t1 - t0))
                wake[n][s].append((w1[s][0] - w0[s]) / (t1 - t0))
            print(f"round {r + 1} {n}: " + "  ".join(
                f"{s.upper()} {cpu[n][s][-1]:5.2f}% {wake[n][s][-1]:6.0f} wake-ups/s "
                f"(longest sleep {w1[s][1]:.0f} us)" for s in "ab"), flush=True)
    finally:
        cleanup(pairs)
    for n in by:
        print(f"median {n}: " + "  ".join(
            f"{s.upper()} {statistics.median(cpu[n][s]):.2f}% "
            f"{statistics.median(wake[n][s]):.0f} wake-ups/s" for s in "ab"))
    return {"cpu_percent": cpu, "wakeups_per_s": wake}


# --------------------------------------------------------------------------- callgrind --


FUNCTIONS = [  # inclusive instructions shown per pass (callgrind_annotate's names)
    ("Worker::Round (poll, switch, send)", "hvswitch::Worker::Round"),
    ("Forwarder::HandleBurst", "hvswitch::Forwarder::HandleBurst"),
    ("uplink demux (the decap callback)", "hvswitch::DemuxBurst"),
    ("  ParseOuter", "hvswitch::ParseOuter"),
    ("vxlan rx burst (ring dequeue)", "hvswitch::(anonymous namespace)::RxBurst"),
    ("vxlan tx burst (encap + uplink tx)", "hvswitch::(anonymous namespace)::TxBurst"),
    ("  Encapsulate", "hvswitch::Encapsulate"),
    ("  InnerFlowPort", "hvswitch::InnerFlowPort"),
    ("  rte_hash_lookup_bulk_data", "rte_hash_lookup_bulk_data"),
]
MEMIF = "memif PMD (self, rx + tx)"
LINE = re.compile(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?([^:\s]*):(.*?)(?:\s+\[([^\]]*)\])?$")


def annotate(out):
    """{function: inclusive Ir} of FUNCTIONS, and MEMIF: the memif driver's own
    instructions (a plugin without symbols here: its functions are ???:0x...)."""
    found = {}
    for inclusive in (True, False):
        # cwd "/": run from the source tree, callgrind_annotate also lists a function's
        # code under relative paths it resolves there (build/../x.cc), a second entry.
        text = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}",
                               "--threshold=100", out], capture_output=True, text=True,
                              cwd="/").stdout
        for line in text.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            ir, fn, obj = int(m.group(1).replace(",", "")), m.group(3).strip(), m.group(4) or ""
            if not inclusive:
                if "net_memif" in obj:
                    found[MEMIF] = found.get(MEMIF, 0) + ir
                continue
            for _, want in FUNCTIONS:
                # A function is listed once per source file its code comes from (inlined
                # headers); the entry of its own file includes the others: the largest.
                if fn.startswith(want + "(") or fn == want:
                    found[want] = max(found.get(want, 0), ir)
    return found


def instructions_run(args, name, side, size):
    os.makedirs(args.cg_dir, exist_ok=True)
    out = os.path.join(args.cg_dir, f"callgrind-{name}-{side}-{size}.out")
    wrap = {side: ["valgrind", "--tool=callgrind", "--fair-sched=yes",
                   f"--callgrind-out-file={out}", "--toggle-collect=*Worker::Run*"]}
    pair = make_pair(name, "ring", args, wrap=wrap)
    try:
        pair.launch(size)
        time.sleep(args.seconds)
        # Stop the ring: the other switch stops, the measured one drains what waits for
        # it and then only polls (asleep: --idle=sleep under valgrind).
        os.kill(pair.sw[OTHER[side]].pid, signal.SIGSTOP)
        time.sleep(3)
        _, _, packets = pair.pmd(side)
        sw = pair.sw[side]
        sw.send_signal(signal.SIGTERM)
        sw.wait(600)
    finally:
        cleanup([pair])
    # callgrind's file is whole once its last line (totals) is there and it stops growing.
    size = -1
    for _ in range(120):
        with open(out) as f:
            text = f.read()
        if re.search(r"^totals: \d+", text, re.M) and len(text) == size:
            break
        size = len(text)
        time.sleep(1)
    m = re.search(r"^totals: (\d+)", text, re.M)
    funcs = annotate(out)
    return int(m.group(1)), packets, funcs


def instructions(args):
    args.flow = "one"  # each core does one kind of pass
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    print("# ring under callgrind: hvswitch worker instructions per pass (A: l1 -> tunnel, "
          "encapsulating; B: tunnel -> l1, decapsulating; plain: l1 <-> l2)")
    for size in sizes:
        for name in ("hvs-plain", "hvs-vxlan"):
            for side in "ab":
                ir, packets, funcs = instructions_run(args, name, side, size)
                per = ir / max(packets, 1)
                results[(size, name, side)] = {"ir": ir, "packets": packets, "per": per,
                                               "functions": funcs}
                print(f"{size:5d} B {name} {side} ({'encap' if side == 'a' else 'decap'} "
                      f"side): {ir} Ir / {packets} passes = {per:.0f} per pass", flush=True)
                for label, fn in FUNCTIONS + [(MEMIF, MEMIF)]:
                    if fn in funcs:
                        print(f"        {label:38s} {funcs[fn] / max(packets, 1):8.1f}")
        for side, what in (("a", "encapsulating pass"), ("b", "decapsulating pass")):
            v = results[(size, "hvs-vxlan", side)]["per"]
            p = results[(size, "hvs-plain", side)]["per"]
            print(f"{size:5d} B {what}: {v:.0f} vs plain {p:.0f} instructions, "
                  f"{v / p:.2f}x (+{v - p:.0f})")
        enc, dec = (results[(size, "hvs-vxlan", s)]["per"] for s in "ab")
        pa, pb = (results[(size, "hvs-plain", s)]["per"] for s in "ab")
        print(f"{size:5d} B a frame across both (encap + decap) vs two plain passes: "
              f"{enc + dec:.0f} vs {pa + pb:.0f}, {(enc + dec) / (pa + pb):.2f}x", flush=True)
    return {f"{k[0]}:{k[1]}:{k[2]}": v for k, v in results.items()}


# ---------------------------------------------------------------------------------------


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topology", choices=["guest", "ring"], default="guest")
    ap.add_argument("--sizes", default="64,1518")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--slice", type=float, default=2.0)
    ap.add_argument("--setups", default="")
    ap.add_argument("--switch-cpu", type=int, default=os.cpu_count() - 1,
                    help="guest topology: both switches' CPU")
    ap.add_argument("--guest-cpu", type=int, default=0)
    ap.add_argument("--ring-cpus", default="0,1", help="ring: A's CPU, B's CPU")
    ap.add_argument("--seed", type=int, default=8, help="guest: bursts seeded into the loop")
    ap.add_argument("--inflight", type=int, default=8,
                    help="ring: bursts of 32 going round (each way)")
    ap.add_argument("--flow", choices=["both", "one"], default="both",
                    help="ring: streams both ways round (each core encapsulates and "
                         "decapsulates) or one (A encapsulates, B decapsulates)")
    ap.add_argument("--idle", default="sleep", choices=["sleep", "poll", "interrupt"],
                    help="guest topology: hvswitch --idle (the ring polls)")
    ap.add_argument("--ovs-maxsleep", type=int, default=250,
                    help="guest topology: OVS other_config:pmd-maxsleep (the ring: 0)")
    ap.add_argument("--instructions", action="store_true",
                    help="callgrind instead of timing (ring, hvswitch only)")
    ap.add_argument("--seconds", type=float, default=20,
                    help="--instructions: run length; --idle-cpu: slice length")
    ap.add_argument("--cg-dir", default=os.path.join(tempfile.gettempdir(), f"hvs-vxl-cg-{PID}"),
                    help="--instructions: where callgrind's outputs are kept")
    ap.add_argument("--idle-cpu", action="store_true",
                    help="CPU of idle hvswitch instances, VXLAN pair against plain pair")
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    args.ring_cpus = [int(c) for c in args.ring_cpus.split(",")]
    if not args.setups:
        args.setups = "hvs-vxlan,hvs-plain,ovs-vxlan,ovs-plain" + (
            ",testpmd-io" if args.topology == "ring" else "")
    return args


ARGS = None


def main():
    global ARGS
    ARGS = args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    print(f"# vxlan_loopback.py {' '.join(sys.argv[1:])}; hvswitch {HVSWITCH}", flush=True)
    try:
        if args.instructions:
            result = instructions(args)
        elif args.idle_cpu:
            result = idle_cpu(args)
        else:
            result = [timing(args, int(s)) for s in args.sizes.split(",")]
    finally:
        cleanup([])
        if _probe_bin is not None:
            shutil.rmtree(os.path.dirname(_probe_bin), ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
