#!/usr/bin/env python3
"""Loopback benchmark: forwarded Mpps of hvswitch against dpdk-testpmd io-forwarding.

Two identical set-ups run side by side and take turns (the idle one is paused with
SIGSTOP), because this VM's speed drifts by up to 5x over seconds to minutes: only rates
measured in alternating slices compare fairly.

  set-up H: hvswitch with two vhost-user (or memif) ports, pinned to --switch-cpu
  set-up T: dpdk-testpmd --forward-mode=io on the same kind of ports, same CPU
  each with one dpdk-testpmd guest on --guest-cpu: two ports (virtio-user or memif
  client), --forward-mode=mac with --eth-peer so port 0's frames go to port 1's MAC and
  back; seeded with `start tx_first 8`. Every frame crosses the switch once per lap.

The guest's received packets per second is the switch's forwarded rate. Also reported:
TSC cycles the switch core spends per forwarded packet in poll rounds that received
frames (hvswitch: hvswitch_core_busy_cycles_total; testpmd: --record-core-cycles), a
figure far steadier than Mpps here. Prints each slice, the medians and the ratios.

For hvswitch it also reports transmit packets per burst (from its metrics) and guest
notifications per forwarded packet (the vhost library's per-queue `guest_notifications`
xstats, read over DPDK telemetry; a polling guest such as testpmd suppresses them, so
expect 0 here and count bursts instead: an interrupt-driven guest is notified at most
once per burst).

--size is the Ethernet frame size with its FCS, as in RFC 2544 (64 and 1518).

Many MACs (--macs N, N > 1): the guest is tests/guest/hvs_guest's `gen` loop instead of
testpmd (tests/guest/mac_generator.h): frames received on one port leave by the other with
a source among N MACs of that side and a destination among the N of the other side, each
frame a new random pair (--pattern random) or 8-32 frames per pair (--pattern runs). Before
the loop it sends one broadcast from every MAC (paced at --learn-rate, repeated at half the
rate while the switch knows fewer than 2N; at most --learn-seconds a pass), so that a
learning switch starts with all 2N;
hvswitch's ports get learn_limit=0 and its FDB room for them. Also reported: the share of
the guest's core the generator's address rewriting takes. The default, --macs 1, keeps the
testpmd mac-forwarding guest (2 MACs), so that earlier results stay comparable.

--against testpmd-io,ovs: the switches hvswitch takes turns with (ratios hvswitch / each):
testpmd-io as above, and `ovs`: Open vSwitch-DPDK (tests/perf/ovs.py, a private instance,
NORMAL bridge, one PMD on --switch-cpu, MAC table raised to hold 2N; vhost-user: the
guest connects to `dpdkvhostuser` ports; memif: `dpdk` ports with net_memif servers and
options:n_rxq=2, without which OVS does not forward over memif). Its cycles per packet are
pmd-stats-show's processing cycles over packets received by the PMD.
--json FILE writes every slice's figures (tests/perf/scale_table.py reads them).

--kind memif-client: the switch's memif ports are clients of sockets the guest serves
(--zero-copy 1: in zero-copy mode); `--kind memif-client --against-hvswitch zero_copy=1`
compares the two modes.

--port-keys KEYS: appended to every hvswitch port spec (e.g. the guardrails:
police_pps=1G,storm_broadcast=1G,bpdu_guard=1,ip=198.18.0.0/15; testpmd's frames are IPv4
UDP from 198.18.0.1 to 198.18.0.2). In --against-hvswitch, `port_keys=KEYS` comes last
and takes the rest of the words, commas and all: `--port-keys K --against-hvswitch
port_keys=` measures hvswitch with K against the same without. After the rounds, each
hvswitch set-up's receive drops by reason (from its metrics) are printed.

usage: loopback.py [--kind vhost-user|memif|memif-client] [--size 64] [--rounds 5]
                   [--slice 3] [--zero-copy 0|1]
                   [--burst N] [--descriptors N] [--tx-flush-us N] [--guest-burst N]
                   [--against-hvswitch KEY=VALUE[,KEY=VALUE][,port_keys=KEYS]]
                   [--port-keys KEY=VALUE[,KEY=VALUE]]
                   [--macs N] [--pattern random|runs] [--learn-rate R]
                   [--against testpmd-io[,ovs]] [--json FILE] [--smoke]
   --burst/--descriptors apply to both switches (testpmd: --burst, --rxd, --txd);
   --tx-flush-us to hvswitch only; --guest-burst is the guests' testpmd --burst and
   --seed how many such bursts circulate (few small bursts make small switch bursts,
   the case tx_flush_us is for).
   --against-hvswitch compares hvswitch with itself under other settings (e.g.
   burst=32,descriptors=1024) instead of with testpmd-io: the way to sweep a tunable on
   a VM whose speed drifts (`--against-hvswitch idle=poll`: its idle modes, issue 16).
   --idle and --fdb-aging: hvswitch's --idle and --fdb_aging (defaults as its own).
   --smoke: CI's short form (1,000 MACs per side, random pairs, against testpmd-io and
   OVS, one round of short slices); fails only if a switch yields no figure.
HVSWITCH (environment) is the hvswitch binary measured; HVS_GUEST the test guest.
"""
import argparse
import json
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HVSWITCH = os.environ.get("HVSWITCH", os.path.join(ROOT, "build", "switch", "hvswitch"))
HVS_GUEST = os.environ.get("HVS_GUEST", os.path.join(ROOT, "build", "tests", "hvs_guest"))
MAC0, MAC1 = "02:00:00:00:01:00", "02:00:00:00:01:01"
procs = []
switches_ovs = []  # OvsDpdk instances of ovs set-ups, stopped by cleanup()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tag(name):
    """A set-up's name for file and directory names: short enough for a UNIX socket's path
    (108 bytes) however long its --against-hvswitch words are."""
    return re.sub("[^A-Za-z0-9-]", "", name)[:24]


def start(args, **kw):
    p = subprocess.Popen(args, **kw)
    procs.append(p)
    return p


def cleanup():
    for o in switches_ovs:
        if o.vswitchd.poll() is None:
            os.kill(o.vswitchd.pid, signal.SIGCONT)  # paused between slices
        o.stop()
    switches_ovs.clear()
    for p in procs:
        if p.poll() is None:
            try:
                os.kill(p.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            p.kill()
            p.wait()


class Testpmd:
    """Interactive dpdk-testpmd, driven over stdin."""

    def __init__(self, eal, app):
        # stdbuf: testpmd's printf output to a pipe is otherwise block-buffered and
        # arrives after the prompt that follows it.
        args = ["stdbuf", "-o0", "dpdk-testpmd", "--no-pci", "--no-huge", "-m", "1024",
                "--log-level=*:error", *eal, "--", "-i", "--total-num-mbufs=16384",
                "--no-lsc-interrupt", *app]
        self.p = start(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
        self.buf = b""
        self.expect("testpmd> ", 60)

    def expect(self, token, timeout=30):
        deadline = time.monotonic() + timeout
        while token.encode() not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or self.p.poll() is not None:
                raise RuntimeError(f"testpmd guest: no '{token}':\n{self.buf.decode()[-2000:]}")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                self.buf += os.read(self.p.stdout.fileno(), 65536)
        out, self.buf = self.buf.split(token.encode(), 1)
        return out.decode(errors="replace")

    def cmd(self, line):
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        return self.expect("testpmd> ")

    def rx_packets(self):
        out = self.cmd("show port stats all")
        return sum(int(x) for x in re.findall(r"RX-packets:\s+(\d+)", out))

    def busy_cycles(self):
        """(busy cycles, packets) of the forwarding core (needs --record-core-cycles)."""
        out = self.cmd("show fwd stats all")
        m = re.search(r"total cycles=(\d+) / total \S+ packets=(\d+)", out)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def guest(kind, sockets, cpu, name, burst, peer0=MAC1, queues=1):
    """A two-port guest: port 0's frames go to `peer0` (port 1's MAC, or a broadcast
    that reaches port 1 among others) and port 1's back to port 0's MAC."""
    vdevs = guest_vdevs(kind, sockets)
    eal = [f"--lcores=0@{cpu},1@{cpu}",
           f"--file-prefix=hvs-perf-{tag(name)}-{os.getpid()}"]
    eal += [f"--vdev={v}" for v in vdevs]
    return Testpmd(eal, ["--forward-mode=mac", f"--eth-peer=0,{peer0}", f"--eth-peer=1,{MAC0}",
                         f"--burst={burst}", f"--rxq={queues}", f"--txq={queues}"])


def guest_vdevs(kind, sockets, macs=(MAC0, MAC1)):
    if kind == "vhost-user":
        return [f"net_virtio_user{i},path={s},mac={m}"
                for i, (s, m) in enumerate(zip(sockets, macs))]
    if kind == "memif-client":  # the switch is the memif client, the guest serves
        return [f"net_memif{i},role=server,socket={s},socket-abstract=no,mac={m}"
                for i, (s, m) in enumerate(zip(sockets, macs))]
    return [f"net_memif{i},role=client,socket={s},socket-abstract=no,mac={m}"
            for i, (s, m) in enumerate(zip(sockets, macs))]


class GuestProcess:
    """A process answering one JSON line per command on its stdout (hvs_guest), started
    with `args`; its first line must be {"ready": 1}."""

    def __init__(self, args, ready_timeout=30):
        self.p = start(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
        self.buf = b""
        if json.loads(self.read(ready_timeout)).get("ready") != 1:
            raise RuntimeError("hvs_guest did not start")

    def read(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or self.p.poll() is not None:
                raise RuntimeError(f"hvs_guest: no answer (exit {self.p.poll()})")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    raise RuntimeError("hvs_guest closed its output")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def command(self, line, timeout=60):
        """Sends one command line; its answer, which must not be an error."""
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        answer = json.loads(self.read(timeout))
        if "error" in answer:
            raise RuntimeError(f"hvs_guest {line}: {answer['error']}")
        return answer

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def turns(names, rounds):
    """(round, name) for `rounds` rounds in which the names take turns, the order reversed
    every other round: this VM changes speed between phases, and only figures taken close
    together compare."""
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            yield r, name


def stop_process(proc):
    """SIGTERM, then SIGKILL if it has not exited within 20 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class GenGuest(GuestProcess):
    """hvs_guest with two ports running its many-MAC loop (`gen`), driven over stdin."""

    def __init__(self, kind, sockets, cpu, name):
        super().__init__(
            [HVS_GUEST, "--no-pci", "--no-huge", "-m", "512", f"--lcores=0@{cpu}",
             f"--file-prefix=hvs-gen-{tag(name)}-{os.getpid()}",
             "--log-level=*:error"] + [f"--vdev={v}" for v in guest_vdevs(kind, sockets)],
            ready_timeout=60)

    def gen(self, line, timeout=30):
        return self.command(f"gen {line}", timeout)

    def stats(self):
        return self.gen("stats")

    def rx_packets(self):
        return self.stats()["rx"]


def ovs_busy(ovs, clear=False):
    """(processing cycles, packets received) of OVS's PMD threads since the last clear
    (its counters restart when a PMD reloads: a difference of two readings can be wrong)."""
    if clear:
        ovs.appctl("dpif-netdev/pmd-stats-clear")
        return 0, 0
    out = ovs.appctl("dpif-netdev/pmd-stats-show")
    cycles = sum(int(x) for x in re.findall(r"processing cycles:\s+(\d+)", out))
    packets = sum(int(x) for x in re.findall(r"packets received:\s+(\d+)", out))
    return cycles, packets


def ovs_macs(ovs, bridge):
    """MAC entries in OVS's table of `bridge`."""
    out = ovs.appctl("fdb/stats-show", bridge)
    m = re.search(r"Current/maximum MAC entries in the table:\s+(\d+)", out)
    return int(m.group(1)) if m else 0


def metrics_text(port):
    """hvswitch's metrics page; patient, as its control thread shares a CPU with the guest
    (and, on a loaded machine, with everything else)."""
    for attempt in range(3):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=20) as r:
                return r.read().decode()
        except (TimeoutError, OSError):
            if attempt == 2:
                raise
    return ""


def scrape_fdb(port):
    """(FDB entries, learn requests the workers dropped, learns refused for a full table)
    of hvswitch from its metrics."""
    text = metrics_text(port)

    def total(name):
        return int(sum(float(v) for v in re.findall(rf"^{name}\S* (\S+)$", text, re.M)))
    return (total("hvswitch_fdb_entries"), total("hvswitch_core_learn_queue_drops_total"),
            total("hvswitch_port_learn_table_full_total"))


def scrape_busy(port):
    """(busy cycles, received packets) of hvswitch from its metrics."""
    text = metrics_text(port)
    busy = sum(float(v) for v in re.findall(r"^hvswitch_core_busy_cycles_total\S* (\S+)$",
                                             text, re.M))
    rx = sum(float(v) for v in re.findall(r"^hvswitch_port_receive_packets_total\S* (\S+)$",
                                           text, re.M))
    return busy, rx


def telemetry_sum(prefix, suffix, ports=2):
    """Sum of the ethdev xstats ending in `suffix` over ports 0..ports-1, via telemetry."""
    total = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.connect(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2")
        s.recv(4096)
        for port in range(ports):
            s.send(f"/ethdev/xstats,{port}".encode())
            stats = json.loads(s.recv(1 << 20)).get("/ethdev/xstats") or {}
            total += sum(v for k, v in stats.items() if k.endswith(suffix))
    return total


def scrape_drops(port):
    """{reason: frames} of hvswitch's receive drops (all ports) from its metrics."""
    drops = {}
    for reason, v in re.findall(
            r'^hvswitch_port_receive_drop_total\{[^}]*reason="([^"]+)"[^}]*\} (\S+)$',
            metrics_text(port), re.M):
        drops[reason] = drops.get(reason, 0) + int(float(v))
    return drops


def scrape_bursts(port):
    """(tx bursts, tx packets) of hvswitch from its metrics."""
    text = metrics_text(port)
    bursts = sum(float(v) for v in re.findall(
        r"^hvswitch_port_transmit_bursts_total\S* (\S+)$", text, re.M))
    tx = sum(float(v) for v in re.findall(
        r"^hvswitch_port_transmit_packets_total\S* (\S+)$", text, re.M))
    return bursts, tx


class Setup:
    """A switch and its loop guest. `extra_ports`: more hvswitch --port specs ({dir} is the
    set-up's directory); `peer0`: where the guest's port 0 sends."""

    def __init__(self, name, kind, switch, args, extra_ports=(), peer0=MAC1):
        self.dir = tempfile.mkdtemp(prefix=f"hvs-perf-{tag(name)}-")
        self.name = name
        self.kind = kind
        self.sockets = [os.path.join(self.dir, f"p{i}.sock") for i in range(2)]
        self.switch_args = args
        self.switch = switch
        self.extra_ports = [p.format(dir=self.dir) for p in extra_ports]
        self.peer0 = peer0
        # A reading taken at the start and the end of every slice (the switch runs only
        # then); measure() leaves the difference in self.watched.
        self.watch = None
        self.watched = 0
        self.wrap = []  # a command hvswitch runs under (e.g. valgrind)
        self.macs = getattr(args, "macs", 1)  # per side; 1: the testpmd guest
        self.ovs = None
        self.learned = None  # MACs the switch knew after the learning pass
        self.gen_share = 0.0  # the generator's share of the guest core, last slice
        self.guest_drops = 0  # frames the guest's transmit rings refused, last slice

    def launch(self, switch_cpu, guest_cpu, size):
        self.log = open(os.path.join(self.dir, "switch.log"), "wb")
        # memif-client: the switch connects to sockets the guest serves, so the guest
        # comes first; otherwise the switch creates them.
        serves = self.kind == "memif-client"
        if serves:
            self.start_guest(guest_cpu)
        if self.switch == "hvswitch":
            self.start_hvswitch(switch_cpu)
        elif self.switch == "ovs":
            self.start_ovs(switch_cpu)
        else:
            self.start_testpmd(switch_cpu, guest_cpu)
        if not serves:
            deadline = time.monotonic() + 30
            while not all(os.path.exists(s) for s in self.sockets):
                if time.monotonic() > deadline or self.sw.poll() is not None:
                    raise RuntimeError(f"{self.name}: switch did not create its sockets")
                time.sleep(0.1)
            time.sleep(0.5)
            self.start_guest(guest_cpu)
        if self.macs > 1:
            return self.start_generator(size)
        # --size counts the 4-byte FCS, as RFC 2544 frame sizes do (64 ... 1518); testpmd's
        # txpkts does not.
        self.guest.cmd(f"set txpkts {size - 4}")
        # Seed the loop; frames sent before the switch marks both links up are lost, so
        # seed again until frames circulate.
        for _ in range(10):
            self.guest.cmd(f"start tx_first {self.switch_args.seed}")
            before = self.guest.rx_packets()
            time.sleep(1)
            if self.guest.rx_packets() - before > 1000:
                return
            self.guest.cmd("stop")
        raise RuntimeError(f"{self.name}: frames do not circulate")

    def start_guest(self, guest_cpu):
        if self.macs > 1:
            self.guest = GenGuest(self.kind, self.sockets, guest_cpu, self.name)
        else:
            # OVS's PMD sends on its transmit queue 1 of a memif port: the guest
            # receives on two queues there.
            queues = 2 if self.switch == "ovs" and self.kind == "memif" else 1
            self.guest = guest(self.kind, self.sockets, guest_cpu, self.name,
                               self.switch_args.guest_burst, self.peer0, queues)

    def known_macs(self):
        """MACs the switch has learned; None for one that does not learn."""
        if self.switch == "hvswitch":
            return scrape_fdb(self.metrics_port)[0]
        if self.switch == "ovs":
            return ovs_macs(self.ovs, "br0")
        return None

    def start_generator(self, size):
        """The many-MAC loop: links up, every MAC learned, then seeded."""
        a, g, want = self.switch_args, self.guest, 2 * self.macs
        deadline = time.monotonic() + 30
        while g.stats()["links"] != [1, 1]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: guest links do not come up")
            time.sleep(0.1)
        g.gen(f"config {self.macs} {a.pattern} {size - 4}")
        if self.switch == "ovs" and self.kind == "memif":
            # OVS's PMD sends on its own transmit queue (1) of a memif port: the guest
            # receives on two queues there, as OVS does (options:n_rxq=2).
            # DPDK 22.11's memif client sometimes does not reconnect after the restart
            # this takes: restart it again.
            for attempt in range(4):
                g.gen("queues 2")
                again = time.monotonic() + 10
                while g.stats()["links"] != [1, 1] and time.monotonic() < again:
                    time.sleep(0.1)
                if g.stats()["links"] == [1, 1]:
                    break
                print(f"# {self.name}: guest links down after restart {attempt + 1}",
                      flush=True)
            else:
                raise RuntimeError(f"{self.name}: guest links do not come up again")
        if self.known_macs() is not None:
            rate = a.learn_rate
            for _ in range(6):
                t0 = time.monotonic()
                answer = g.gen(f"learn {rate} {a.learn_seconds}", timeout=a.learn_seconds + 30)
                # The switch's control thread may still be applying what it was sent.
                settle = time.monotonic() + 5
                while self.known_macs() < want and time.monotonic() < settle:
                    time.sleep(0.2)
                self.learned = self.known_macs()
                lost = ""
                if self.switch == "hvswitch":
                    _, drops, full = scrape_fdb(self.metrics_port)
                    lost = f" (so far: {drops} learn requests dropped, {full} refused: table full)"
                print(f"# {self.name}: learning pass at {rate} frames/s: sent "
                      f"{answer['sent']} in {time.monotonic() - t0:.1f}s, switch knows "
                      f"{self.learned} of {want} MACs{lost}", flush=True)
                # Cut short by the time budget (OVS learns through upcalls, a few
                # thousand a second): what the switch does not know yet, it floods to
                # the other port, which is where it goes anyway.
                if self.learned >= want or answer["sent"] < want:
                    break
                rate = max(rate // 2, 10000)
        for _ in range(10):
            g.gen(f"start {a.seed}")
            before = g.rx_packets()
            time.sleep(1)
            if g.rx_packets() - before > 1000:
                return
            g.gen("stop")
        raise RuntimeError(f"{self.name}: frames do not circulate")

    def start_hvswitch(self, switch_cpu):
        a = self.switch_args
        if self.kind == "memif-client":
            # Both modes with a pool of their own (zero-copy needs one), so that they
            # differ in the copy only.
            extra = ",client=1,quota=16384" + (",zero_copy=1" if a.zero_copy else "")
            ports = [f"--port=p{i},type=memif,path={s}{extra}"
                     for i, s in enumerate(self.sockets)]
        else:
            ports = [f"--port=p{i},type={self.kind},path={s}" for i, s in enumerate(self.sockets)]
        if self.macs > 1:  # every MAC of a side on one port, and room for all of them
            ports = [p + ",learn_limit=0" for p in ports]
        ports += [f"--port={p}" for p in self.extra_ports]
        if getattr(a, "port_keys", ""):
            ports = [f"{p},{a.port_keys}" for p in ports]
        self.metrics_port = free_port()
        self.prefix = f"hvs-perf-sw-{tag(self.name)}-{os.getpid()}"
        args = self.wrap + [HVSWITCH, *ports, f"--lcores={switch_cpu}",
                            f"--metrics_address=127.0.0.1:{self.metrics_port}",
                            f"--ctl_socket={self.dir}/hvswitch.ctl",
                            f"--eal=--no-huge -m {2048 if self.macs > 50000 else 1024} "
                            f"--file-prefix={self.prefix}"]
        args += [f"--burst={a.burst}", f"--rx_descriptors={a.descriptors}",
                 f"--tx_descriptors={a.descriptors}", f"--tx_flush_us={a.tx_flush_us}",
                 f"--fdb_aging={a.fdb_aging}", f"--idle={a.idle}"]
        if self.macs > 1:
            capacity = 65536
            while capacity < 4 * self.macs:  # 2N at a load of at most one half
                capacity *= 2
            args.append(f"--fdb_capacity={capacity}")
        self.sw = start(args, stdout=self.log, stderr=subprocess.STDOUT)

    def start_testpmd(self, switch_cpu, guest_cpu):
        a = self.switch_args
        if self.kind == "vhost-user":
            vdevs = [f"net_vhost{i},iface={s},queues=1" for i, s in enumerate(self.sockets)]
        elif self.kind == "memif":
            vdevs = [f"net_memif{i},role=server,socket={s},socket-abstract=no"
                     for i, s in enumerate(self.sockets)]
        else:
            zc = ",zero-copy=yes" if a.zero_copy else ""
            vdevs = [f"net_memif{i},role=client,socket={s},socket-abstract=no{zc}"
                     for i, s in enumerate(self.sockets)]
        eal = [f"--lcores=0@{guest_cpu},1@{switch_cpu}", "--single-file-segments",
               f"--file-prefix=hvs-perf-io-{os.getpid()}"] + [f"--vdev={v}" for v in vdevs]
        self.testpmd = Testpmd(eal, ["--forward-mode=io", "--record-core-cycles",
                                     f"--burst={a.burst}", f"--rxd={a.descriptors}",
                                     f"--txd={a.descriptors}"])
        self.testpmd.cmd("start")
        self.sw = self.testpmd.p

    def start_ovs(self, switch_cpu):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import ovs  # noqa: E402  (only this variant needs it)
        # TSO off: neither other switch here offers it to the guests either.
        # per-port-memory: pools sized from each port's rings, not one shared pool of
        # 262,144 buffers (which takes ovs-vswitchd half a minute of page faults here).
        self.ovs = ovs.OvsDpdk(pmd_cpus=[switch_cpu], tso=False, memory_mb=2048,
                               other_config={"per-port-memory": "true"})
        switches_ovs.append(self.ovs)
        self.ovs.add_bridge("br0")
        self.ovs.vsctl("set", "bridge", "br0",
                       f"other_config:mac-table-size={max(8192, 2 * self.macs + 1024)}")
        for i, s in enumerate(self.sockets):
            if self.kind == "vhost-user":
                # dpdkvhostuser: OVS serves the socket (in its run directory), as hvswitch
                # and testpmd's net_vhost do.
                self.ovs.add_port("br0", f"p{i}", "dpdkvhostuser")
                self.sockets[i] = os.path.join(self.ovs.dir, f"p{i}")
            elif self.kind == "memif":
                self.ovs.add_port("br0", f"p{i}", "dpdk", n_rxq=2, **{
                    "dpdk-devargs": f"net_memif{i},role=server,socket={s},socket-abstract=no"})
            else:
                raise RuntimeError("ovs: --kind vhost-user or memif")
        self.sw = self.ovs.vswitchd
        # Until the PMD polls both ports (a port's pool is made first).
        deadline = time.monotonic() + 60
        while not all(f"port: p{i} " in self.ovs.appctl("dpif-netdev/pmd-rxq-show")
                      for i in range(2)):
            if time.monotonic() > deadline or self.sw.poll() is not None:
                raise RuntimeError(f"ovs: ports not polled\n{self.ovs.log()}")
            time.sleep(0.2)

    def pause(self):
        os.kill(self.sw.pid, signal.SIGSTOP)
        os.kill(self.guest.p.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.sw.pid, signal.SIGCONT)
        os.kill(self.guest.p.pid, signal.SIGCONT)

    def switch_busy(self, start=False):
        """(busy cycles, packets) of the switch core so far (OVS: since `start`)."""
        if self.switch == "hvswitch":
            return scrape_busy(self.metrics_port)
        if self.switch == "ovs":
            return ovs_busy(self.ovs, clear=start)
        return self.testpmd.busy_cycles()

    def guest_counters(self):
        """(generator cycles, TSC Hz, guest tx drops) so far; zeros for testpmd guests."""
        if self.macs <= 1:
            return 0, 1, 0
        st = self.guest.stats()
        return st["gen_cycles"], st["tsc_hz"], st["tx_dropped"]

    def tx_extras(self):
        """(tx bursts, tx packets, guest notifications) of hvswitch; zeros for testpmd."""
        if self.switch != "hvswitch":
            return 0, 0, 0
        bursts, tx = scrape_bursts(self.metrics_port)
        notes = telemetry_sum(self.prefix, "guest_notifications") if self.kind == "vhost-user" else 0
        return bursts, tx, notes

    def measure(self, seconds):
        """(Mpps, switch busy cycles per packet, packets per tx burst, guest notifications
        per packet) over one slice."""
        self.resume()
        time.sleep(0.5)  # let caches and rings warm up again
        c0, p0 = self.switch_busy(start=True)
        b0, x0, n0 = self.tx_extras()
        w0 = self.watch() if self.watch else 0
        g0, _, d0 = self.guest_counters()
        r0, t0 = self.guest.rx_packets(), time.monotonic()
        time.sleep(seconds)
        r1, t1 = self.guest.rx_packets(), time.monotonic()
        g1, hz, d1 = self.guest_counters()
        self.gen_share = (g1 - g0) / hz / (t1 - t0)
        self.guest_drops = d1 - d0
        c1, p1 = self.switch_busy()
        b1, x1, n1 = self.tx_extras()
        self.watched = (self.watch() if self.watch else 0) - w0
        self.pause()
        self.per_burst = (x1 - x0) / max(b1 - b0, 1)
        self.notes_per_packet = (n1 - n0) / max(x1 - x0, 1)
        return (r1 - r0) / (t1 - t0) / 1e6, (c1 - c0) / max(p1 - p0, 1)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=["vhost-user", "memif", "memif-client"],
                    default="vhost-user")
    ap.add_argument("--zero-copy", type=int, default=0,
                    help="memif-client: the switch's ports in zero-copy mode")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--slice", type=float, default=3.0)
    ap.add_argument("--switch-cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--guest-cpu", type=int, default=0)
    ap.add_argument("--burst", type=int, default=32)
    ap.add_argument("--descriptors", type=int, default=1024)
    ap.add_argument("--tx-flush-us", type=int, default=0)
    ap.add_argument("--fdb-aging", type=int, default=300, help="hvswitch --fdb_aging")
    ap.add_argument("--idle", default="sleep", choices=["poll", "sleep", "interrupt"],
                    help="hvswitch --idle (what its worker does between empty rounds)")
    ap.add_argument("--guest-burst", type=int, default=32)
    ap.add_argument("--seed", type=int, default=8, help="bursts the guest seeds the loop with")
    ap.add_argument("--against-hvswitch", default="")
    ap.add_argument("--port-keys", default="",
                    help="KEY=VALUE,... appended to every hvswitch port spec")
    ap.add_argument("--against", default="testpmd-io",
                    help="comma list of testpmd-io, ovs: the switches hvswitch takes turns with")
    ap.add_argument("--macs", type=int, default=1,
                    help="MACs per side; above 1 the guest is hvs_guest's gen loop")
    ap.add_argument("--pattern", choices=["random", "runs"], default="random")
    ap.add_argument("--learn-rate", type=int, default=500000,
                    help="frames/s of the learning pass (halved while MACs are missed)")
    ap.add_argument("--learn-seconds", type=int, default=60,
                    help="time budget of one learning pass")
    ap.add_argument("--json", default="", help="write every slice's figures to this file")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: 1k MACs, against testpmd-io and OVS, one short round")
    args = ap.parse_args(argv)
    if args.smoke:
        args.macs, args.pattern, args.against = 1000, "random", "testpmd-io,ovs"
        args.rounds, args.slice, args.learn_seconds = 1, 0.3, 20
    return args


def on_alarm(signum, frame):
    raise TimeoutError("loopback.py: over its time budget")


def main():
    args = parse_args()
    if args.smoke:  # bounded: cleanup() runs on the way out
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(200)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))

    hv = Setup("hvswitch", args.kind, "hvswitch", args)
    others = []
    if args.against_hvswitch:
        base = argparse.Namespace(**vars(args))
        # port_keys= last: its value is a port spec's keys, commas and all.
        words, keyed, base_keys = args.against_hvswitch.partition("port_keys=")
        for item in filter(None, words.split(",")):
            key, value = item.split("=")
            setattr(base, key.replace("-", "_"), int(value) if value.isdigit() else value)
        if keyed:
            base.port_keys = base_keys
        others.append(Setup(f"hvswitch[{args.against_hvswitch}]", args.kind, "hvswitch", base))
    else:
        for name in args.against.split(","):
            if name not in ("testpmd-io", "ovs"):
                raise SystemExit(f"--against: unknown switch {name}")
            others.append(Setup(name, args.kind, "testpmd" if name == "testpmd-io" else "ovs",
                                args))
    setups = [hv] + others
    names = [x.name for x in setups]
    A = hv.name
    try:
        for x in setups:
            x.launch(args.switch_cpu, args.guest_cpu, args.size)
            x.pause()
        rates = {n: [] for n in names}
        cycles = {n: [] for n in names}
        shares = {n: [] for n in names}
        ratios = {n: [] for n in names[1:]}
        per_burst, notes, rounds = [], [], []
        macs = ("2 MACs (testpmd guest)" if args.macs <= 1 else
                f"{args.macs} MACs per side, {args.pattern} pairs")
        print(f"# {args.kind} loopback, {args.size}-byte frames, {macs}, {args.rounds} rounds "
              f"of {args.slice}s slices; switch on CPU {args.switch_cpu}, guest on CPU "
              f"{args.guest_cpu}; burst {args.burst}, descriptors {args.descriptors}, "
              f"hvswitch tx_flush_us {args.tx_flush_us}; hvswitch {HVSWITCH}"
              + (f"; hvswitch port keys {args.port_keys}" if args.port_keys else ""))
        for r in range(args.rounds):
            row = {}
            for x in setups:
                mpps, cyc = x.measure(args.slice)
                rates[x.name].append(mpps)
                cycles[x.name].append(cyc)
                shares[x.name].append(x.gen_share)
                row[x.name] = {"mpps": mpps, "cycles": cyc, "gen_share": x.gen_share,
                               "guest_drops": x.guest_drops}
            for n in names[1:]:
                b = rates[n][-1]
                ratios[n].append(rates[A][-1] / b if b else float("nan"))
            per_burst.append(hv.per_burst)
            notes.append(hv.notes_per_packet)
            rounds.append(row)
            line = "   ".join(f"{n} {rates[n][-1]:6.2f} Mpps {cycles[n][-1]:6.0f} cyc/pkt"
                            for n in names)
            line += "   " + "  ".join(f"ratio/{n} {ratios[n][-1]:.2f}" for n in names[1:])
            if args.macs > 1:
                line += f"   gen {100 * hv.gen_share:.1f}% of guest core"
            print(f"round {r + 1}: {line}   {A} {hv.per_burst:.1f} pkt/tx burst", flush=True)
        med = {k: statistics.median(v) for k, v in rates.items()}
        for B in names[1:]:
            print(f"median: {A} {med[A]:.2f} Mpps, {B} "
                  f"{med[B]:.2f} Mpps, ratio of medians "
                  f"{med[A] / med[B]:.2f}, median of per-round ratios "
                  f"{statistics.median(ratios[B]):.2f} (min {min(ratios[B]):.2f}, max "
                  f"{max(ratios[B]):.2f})")
        ch = statistics.median(cycles[A])
        for B in names[1:]:
            ct = statistics.median(cycles[B])
            print(f"switch core busy cycles per packet (median): {A} {ch:.0f}, {B} "
                  f"{ct:.0f}, ratio {B} / {A} {ct / ch:.2f}")
        for x in others:
            if x.switch == "hvswitch":
                print(f"{x.name} tx: {x.per_burst:.1f} packets per burst (last round)")
        print(f"{A} tx: {statistics.median(per_burst):.1f} packets per burst, "
              f"{statistics.median(notes):.4f} guest notifications per packet (median)")
        for x in setups:
            if x.switch == "hvswitch":
                x.resume()  # paused since its last slice; its metrics thread too
                drops = {k: v for k, v in scrape_drops(x.metrics_port).items() if v}
                print(f"{x.name} receive drops: " +
                      (", ".join(f"{k} {v}" for k, v in sorted(drops.items())) or "none"))
        if args.macs > 1:
            print("generator (address rewriting) share of the guest core (median): " +
                  ", ".join(f"{n} {100 * statistics.median(shares[n]):.1f}% at "
                            f"{med[n]:.2f} Mpps" for n in names))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"kind": args.kind, "size": args.size, "macs": args.macs,
                           "pattern": args.pattern if args.macs > 1 else "testpmd-mac",
                           "slice": args.slice, "hvswitch": HVSWITCH,
                           "learned": {x.name: x.learned for x in setups},
                           "rounds": rounds}, f, indent=1)
        if args.smoke:
            bad = [n for n in names if not (med[n] > 0 and statistics.median(cycles[n]) > 0)]
            if bad:
                print(f"smoke: no figures from {', '.join(bad)}", file=sys.stderr)
                return 1
            print("smoke: figures from " + ", ".join(names))
        return 0
    finally:
        cleanup()


if __name__ == "__main__":
    sys.exit(main())
