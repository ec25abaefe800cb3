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

--kind memif-client: the switch's memif ports are clients of sockets the guest serves
(--zero-copy 1: in zero-copy mode); `--kind memif-client --against-hvswitch zero_copy=1`
compares the two modes.

usage: loopback.py [--kind vhost-user|memif|memif-client] [--size 64] [--rounds 5]
                   [--slice 3] [--zero-copy 0|1]
                   [--burst N] [--descriptors N] [--tx-flush-us N] [--guest-burst N]
                   [--against-hvswitch KEY=VALUE[,KEY=VALUE]]
   --burst/--descriptors apply to both switches (testpmd: --burst, --rxd, --txd);
   --tx-flush-us to hvswitch only; --guest-burst is the guests' testpmd --burst and
   --seed how many such bursts circulate (few small bursts make small switch bursts,
   the case tx_flush_us is for).
   --against-hvswitch compares hvswitch with itself under other settings (e.g.
   burst=32,descriptors=1024) instead of with testpmd-io: the way to sweep a tunable on
   a VM whose speed drifts.
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
MAC0, MAC1 = "02:00:00:00:01:00", "02:00:00:00:01:01"
procs = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, **kw):
    p = subprocess.Popen(args, **kw)
    procs.append(p)
    return p


def cleanup():
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


def guest(kind, sockets, cpu, name, burst, peer0=MAC1):
    """A two-port guest: port 0's frames go to `peer0` (port 1's MAC, or a broadcast
    that reaches port 1 among others) and port 1's back to port 0's MAC."""
    if kind == "vhost-user":
        vdevs = [f"net_virtio_user{i},path={s},mac={m}"
                 for i, (s, m) in enumerate(zip(sockets, (MAC0, MAC1)))]
    elif kind == "memif-client":  # the switch is the memif client, the guest serves
        vdevs = [f"net_memif{i},role=server,socket={s},socket-abstract=no,mac={m}"
                 for i, (s, m) in enumerate(zip(sockets, (MAC0, MAC1)))]
    else:
        vdevs = [f"net_memif{i},role=client,socket={s},socket-abstract=no,mac={m}"
                 for i, (s, m) in enumerate(zip(sockets, (MAC0, MAC1)))]
    eal = [f"--lcores=0@{cpu},1@{cpu}",
           f"--file-prefix=hvs-perf-{re.sub('[^A-Za-z0-9-]', '', name)}-{os.getpid()}"]
    eal += [f"--vdev={v}" for v in vdevs]
    return Testpmd(eal, ["--forward-mode=mac", f"--eth-peer=0,{peer0}", f"--eth-peer=1,{MAC0}",
                         f"--burst={burst}"])


def scrape_busy(port):
    """(busy cycles, received packets) of hvswitch from its metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
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


def scrape_bursts(port):
    """(tx bursts, tx packets) of hvswitch from its metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    bursts = sum(float(v) for v in re.findall(
        r"^hvswitch_port_transmit_bursts_total\S* (\S+)$", text, re.M))
    tx = sum(float(v) for v in re.findall(
        r"^hvswitch_port_transmit_packets_total\S* (\S+)$", text, re.M))
    return bursts, tx


class Setup:
    """A switch and its loop guest. `extra_ports`: more hvswitch --port specs ({dir} is the
    set-up's directory); `peer0`: where the guest's port 0 sends."""

    def __init__(self, name, kind, switch, args, extra_ports=(), peer0=MAC1):
        self.dir = tempfile.mkdtemp(prefix=f"hvs-perf-{re.sub('[^A-Za-z0-9-]', '', name)}-")
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

    def launch(self, switch_cpu, guest_cpu, size):
        self.log = open(os.path.join(self.dir, "switch.log"), "wb")
        # memif-client: the switch connects to sockets the guest serves, so the guest
        # comes first; otherwise the switch creates them.
        serves = self.kind == "memif-client"
        if serves:
            self.start_guest(guest_cpu)
        if self.switch == "hvswitch":
            self.start_hvswitch(switch_cpu)
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
        self.guest = guest(self.kind, self.sockets, guest_cpu, self.name,
                           self.switch_args.guest_burst, self.peer0)

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
        ports += [f"--port={p}" for p in self.extra_ports]
        self.metrics_port = free_port()
        self.prefix = f"hvs-perf-sw-{re.sub('[^A-Za-z0-9-]', '', self.name)}-{os.getpid()}"
        args = self.wrap + [HVSWITCH, *ports, f"--lcores={switch_cpu}",
                            f"--metrics_address=127.0.0.1:{self.metrics_port}",
                            f"--ctl_socket={self.dir}/hvswitch.ctl",
                            f"--eal=--no-huge -m 1024 --file-prefix={self.prefix}"]
        args += [f"--burst={a.burst}", f"--rx_descriptors={a.descriptors}",
                 f"--tx_descriptors={a.descriptors}", f"--tx_flush_us={a.tx_flush_us}"]
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

    def pause(self):
        os.kill(self.sw.pid, signal.SIGSTOP)
        os.kill(self.guest.p.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.sw.pid, signal.SIGCONT)
        os.kill(self.guest.p.pid, signal.SIGCONT)

    def switch_busy(self):
        """(busy cycles, packets) of the switch core so far."""
        if self.switch == "hvswitch":
            return scrape_busy(self.metrics_port)
        return self.testpmd.busy_cycles()

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
        c0, p0 = self.switch_busy()
        b0, x0, n0 = self.tx_extras()
        w0 = self.watch() if self.watch else 0
        r0, t0 = self.guest.rx_packets(), time.monotonic()
        time.sleep(seconds)
        r1, t1 = self.guest.rx_packets(), time.monotonic()
        c1, p1 = self.switch_busy()
        b1, x1, n1 = self.tx_extras()
        self.watched = (self.watch() if self.watch else 0) - w0
        self.pause()
        self.per_burst = (x1 - x0) / max(b1 - b0, 1)
        self.notes_per_packet = (n1 - n0) / max(x1 - x0, 1)
        return (r1 - r0) / (t1 - t0) / 1e6, (c1 - c0) / max(p1 - p0, 1)


def main():
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
    ap.add_argument("--guest-burst", type=int, default=32)
    ap.add_argument("--seed", type=int, default=8, help="bursts the guest seeds the loop with")
    ap.add_argument("--against-hvswitch", default="")
    args = ap.parse_args()

    hv = Setup("hvswitch", args.kind, "hvswitch", args)
    if args.against_hvswitch:
        base = argparse.Namespace(**vars(args))
        for item in args.against_hvswitch.split(","):
            key, value = item.split("=")
            setattr(base, key.replace("-", "_"), int(value))
        io = Setup(f"hvswitch[{args.against_hvswitch}]", args.kind, "hvswitch", base)
    else:
        io = Setup("testpmd-io", args.kind, "testpmd", args)
    A, B = hv.name, io.name
    try:
        hv.launch(args.switch_cpu, args.guest_cpu, args.size)
        hv.pause()
        io.launch(args.switch_cpu, args.guest_cpu, args.size)
        io.pause()
        rates = {A: [], B: []}
        cycles = {A: [], B: []}
        ratios, per_burst, notes = [], [], []
        print(f"# {args.kind} loopback, {args.size}-byte frames, {args.rounds} rounds of "
              f"{args.slice}s slices; switch on CPU {args.switch_cpu}, guest on CPU "
              f"{args.guest_cpu}; burst {args.burst}, descriptors {args.descriptors}, "
              f"hvswitch tx_flush_us {args.tx_flush_us}")
        for r in range(args.rounds):
            a, ca = hv.measure(args.slice)
            b, cb = io.measure(args.slice)
            rates[A].append(a)
            rates[B].append(b)
            cycles[A].append(ca)
            cycles[B].append(cb)
            ratios.append(a / b if b else float("nan"))
            per_burst.append(hv.per_burst)
            notes.append(hv.notes_per_packet)
            print(f"round {r + 1}: {A} {a:6.2f} Mpps {ca:6.0f} cyc/pkt   {B} "
                  f"{b:6.2f} Mpps {cb:6.0f} cyc/pkt   ratio {ratios[-1]:.2f}   {A} "
                  f"{hv.per_burst:.1f} pkt/tx burst", flush=True)
        med = {k: statistics.median(v) for k, v in rates.items()}
        print(f"median: {A} {med[A]:.2f} Mpps, {B} "
              f"{med[B]:.2f} Mpps, ratio of medians "
              f"{med[A] / med[B]:.2f}, median of per-round ratios "
              f"{statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
        ch, ct = statistics.median(cycles[A]), statistics.median(cycles[B])
        print(f"switch core busy cycles per packet (median): {A} {ch:.0f}, {B} "
              f"{ct:.0f}, ratio {B} / {A} {ct / ch:.2f}")
        if io.switch == "hvswitch":
            print(f"{B} tx: {io.per_burst:.1f} packets per burst (last round)")
        print(f"{A} tx: {statistics.median(per_burst):.1f} packets per burst, "
              f"{statistics.median(notes):.4f} guest notifications per packet (median)")
    finally:
        cleanup()


if __name__ == "__main__":
    sys.exit(main())
