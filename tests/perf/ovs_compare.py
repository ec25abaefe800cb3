#!/usr/bin/env python3
"""iperf3 TCP between real QEMU guests and the host, hvswitch against Open vSwitch-DPDK
(and dpdk-testpmd io-forwarding) on the same set-up, in alternating runs. By hand, under
the CPU lock for the whole set; never a pass/fail test:

    flock /tmp/cpu-bench.lock python3 tests/perf/ovs_compare.py \\
        --variants hvs-tap,hvs-host,ovs --runs 5 --seconds 10

The set-up: two QEMU guests (tests/qemu/build_guest.sh: Debian's kernel, virtio-net,
TCG here) vm1 (10.0.1.1) and vm2 (10.0.1.2), each owning its vhost-user socket (QEMU
`server=on`, 256-entry rings unless --device-extra says otherwise); the switch under
test runs in a network namespace of its own ("the host") and connects to both sockets
as a client; its host-side interface there is the host's 10.0.1.100/24. For every run
the variant's switch is started afresh, the guests booted on it, the measurements made,
and both stopped.
(The guests cannot move from one switch to another: QEMU's vhost-user netdev refuses a
backend that lacks a feature the guest acked from the first — hvswitch offers
HOST_ECN/HOST_UFO, Open vSwitch does not — and waits for its backend before it boots.)
TCP metrics are not cached (tcp_no_metrics_save=1 in the host namespace and the guests),
so that no run starts from the ssthresh of the one before. Variants:

  hvs-tap    hvswitch, host side a `type=dpdk,devargs=net_tap0,iface=...` port
  hvs-host   hvswitch, host side a `type=host` port (virtio-net header, offloads)
  hvs-none   hvswitch with the two guests only (guest <-> guest tests)
  ovs        Open vSwitch 3.1 with DPDK (tests/perf/ovs.py): netdev bridge, NORMAL
             action, `userspace-tso-enable=true`, guests on `dpdkvhostuserclient`
             ports, host side the bridge's `internal` port (a tap with a virtio-net header)
  testpmd    dpdk-testpmd --forward-mode=io between the guests' sockets (net_vhost,
             client=1, tso=1): no switching, no host side (guest <-> guest tests)
A variant may carry settings after slashes: for hvswitch, daemon options
(`hvs-none/tx_flush_us=50`) or keys of the guests' port specs (`hvs-none/tx_retries=0`);
for OVS, Open_vSwitch other_config keys (`ovs/tx-flush-interval=50`) or options of the
guests' interfaces (`ovs/tx-retries-max=0`); for testpmd, `app=ARGS` (its command line) and
`tx_retries=N` (io forwarding with retry: N retries of a partly sent burst, 2 us apart;
without it testpmd drops what the ring does not take at once).

Placement (the same for every variant): the switch's poll-mode core on --switch-cpu
(hvswitch --lcores, OVS pmd-cpu-mask, testpmd's forwarding lcore), both QEMUs on
--guest-cpus, the host-side iperf3 on --host-cpus. The control threads float (OVS's
main thread, which also reads and writes the internal port's tap, included).

Tests (--tests), each an iperf3 TCP stream of --seconds:
  h2g    host -> vm1 (client in the host namespace, vm1 the server)
  g2h    vm1 -> host (the same with -R)
  g2g    vm1 -> vm2 (client in vm1)
  g2g_r  vm2 -> vm1 (the same with -R)
Reported per run and test: the receiver's Mbit/s and the sender's TCP retransmissions;
with --details, also the senders' and receivers' TCP counters (DSACKs: spurious
retransmissions; OFO: reordering), the guests' device drops and the switch's drops and
retries. Medians, min and max per variant and test at the end; every figure also in the
JSON file given by --out.

    python3 tests/perf/ovs_compare.py --report FILE.json [FILE.json ...]

pools the runs of such files per variant (g2g and g2g_r together: the guests are alike)
and prints, with --details figures, the transmit drops toward the guests (hvswitch
`queue_full`, OVS `tx_dropped`, testpmd `TX-dropped`), the sender's retransmissions per
drop, and the switch's transmit retries.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, HERE)
from harness import Daemon, in_netns, wait_for  # noqa: E402
from qemu_guest import QemuGuest  # noqa: E402
import loopback  # noqa: E402
import ovs  # noqa: E402

HOST_IP = "10.0.1.100"
GUEST_IPS = {"vm1": "10.0.1.1", "vm2": "10.0.1.2"}
TESTS = ("h2g", "g2h", "g2g", "g2g_r")
HVS_DAEMON_KEYS = {"tx_flush_us", "burst", "rx_descriptors", "tx_descriptors", "mbufs"}
OVS_GLOBAL_KEYS = {"tx-flush-interval", "smc-enable", "pmd-rxq-assign", "vhost-postcopy-support"}
# TCP counters worth following (/proc/net/snmp Tcp, /proc/net/netstat TcpExt).
TCP_KEYS = ("RetransSegs", "InSegs", "OutSegs", "TCPLostRetransmit", "TCPFastRetrans",
            "TCPSlowStartRetrans", "TCPTimeouts", "TCPSpuriousRTOs", "TCPSackRecovery",
            "TCPDSACKRecv", "TCPDSACKOfoRecv", "TCPDSACKOldSent", "TCPDSACKOfoSent",
            "TCPOFOQueue", "TCPOFODrop", "TCPRcvQDrop", "TCPBacklogDrop", "TCPLossProbes",
            "TCPLossProbeRecovery", "TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder",
            "TCPSpuriousRtxHostQueues", "TCPRcvCoalesce", "InCsumErrors", "TCPWqueueTooBig")


def parse_tcp_counters(text):
    """{name: int} of the TCP counters in the concatenation of /proc/net/snmp and netstat."""
    out = {}
    lines = [line.split() for line in text.splitlines() if line.strip()]
    for names, values in zip(lines, lines[1:]):
        if names[0] in ("Tcp:", "TcpExt:") and names[0] == values[0] and not values[1].isalpha():
            for k, v in zip(names[1:], values[1:]):
                if k in TCP_KEYS:
                    out[k] = int(v)
    return out


def delta(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def split_variant(spec):
    name, *settings = spec.split("/")
    return name, dict(s.split("=", 1) for s in settings)


class HvswitchVariant:
    """hvswitch in the host namespace: the guests' ports (client=1) and the host side."""

    def __init__(self, name, settings, args, ns, sockets):
        host = name.split("-", 1)[1]
        self.iface = {"tap": f"hvt{os.getpid() % 10000}", "host": f"hvh{os.getpid() % 10000}",
                      "none": None}[host]
        port_opts = "".join(f",{k}={v}" for k, v in settings.items() if k not in HVS_DAEMON_KEYS)
        extra = [f"--lcores={args.switch_cpu}"]
        extra += [f"--{k}={v}" for k, v in settings.items() if k in HVS_DAEMON_KEYS]
        ports = [f"{vm},type=vhost-user,path={sockets[vm]},client=1{port_opts}"
                 for vm in ("vm1", "vm2")]
        if host == "tap":
            ports.append(f"host,type=dpdk,devargs=net_tap0,iface={self.iface}")
        elif host == "host":
            ports.append(f"host,type=host,iface={self.iface}")
        self.sw = Daemon(ports, extra=extra, netns=ns, eal="--no-huge -m 1024")
        self.sw.wait_ready()
        if host == "tap":
            in_netns(ns, "ip", "link", "set", self.iface, "up")

    def wait_links(self):
        for vm in ("vm1", "vm2"):
            self.sw.wait_port_up(vm)

    def counters(self):
        """The daemon's counters that tell where frames went and what the worker spent:
        {metric{labels}: value}, and the guests' notifications from DPDK telemetry."""
        out = {}
        for (name, labels), value in self.sw.scrape().items():
            if re.search(r"drop|retr|transmit_packets|receive_packets|offload|bursts|"
                         r"core_(busy|idle)_cycles|core_packets", name):
                key = name + "{" + ",".join(f"{k}={v}" for k, v in sorted(labels)) + "}"
                out[key] = value
        out.update(self.notifications())
        return out

    def notifications(self):
        """vmN.{rx,tx}_q0_guest_notifications (ethdev rx: the guest's transmit ring), read
        over DPDK telemetry, which pairs xstats names and values by position: hvswitch's
        hvswitch_port_queue_stat_total pairs them by id, and DPDK 22.11's vhost PMD numbers
        each ring's statistics from 0, so there the transmit ring's values carry the
        receive ring's names."""
        ethdev = dict(re.findall(r"port '(\w+)' \(.*?\): ready, ethdev (\d+)", self.sw.output()))
        paths = glob.glob(f"/var/run/dpdk/hvs-e2e-{os.getpid()}-{id(self.sw)}/dpdk_telemetry.v2")
        out = {}
        if not paths:
            return out
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.connect(paths[0])
            s.recv(4096)
            for vm in ("vm1", "vm2"):
                s.send(f"/ethdev/xstats,{ethdev[vm]}".encode())
                stats = json.loads(s.recv(1 << 20)).get("/ethdev/xstats") or {}
                for k, v in stats.items():
                    if k.endswith("guest_notifications"):
                        out[f"{vm}.{k}"] = v
        return out

    def stop(self):
        self.sw.stop()


class OvsVariant:
    """Open vSwitch-DPDK in the host namespace: the bridge's internal port is the host."""

    def __init__(self, name, settings, args, ns, sockets):
        glob = {k: v for k, v in settings.items() if k in OVS_GLOBAL_KEYS}
        iface_opts = {k: v for k, v in settings.items() if k not in OVS_GLOBAL_KEYS}
        self.ovs = ovs.OvsDpdk(netns=ns, pmd_cpus=[args.switch_cpu], other_config=glob)
        self.iface = f"ovb{os.getpid() % 10000}"
        try:
            self.ovs.add_bridge(self.iface)
            for vm in ("vm1", "vm2"):
                self.ovs.add_port(self.iface, vm, "dpdkvhostuserclient",
                                  **{"vhost-server-path": sockets[vm]}, **iface_opts)
            in_netns(ns, "ip", "link", "set", self.iface, "up")
        except BaseException:
            self.ovs.stop()
            raise

    def wait_links(self):
        try:
            wait_for(lambda: all(self.ovs.vsctl("get", "Interface", vm, "link_state").strip()
                                 == "up" for vm in ("vm1", "vm2")), 30, "OVS vhost links")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.ovs.log()}")

    def counters(self):
        out = {}
        for port in ("vm1", "vm2", self.iface):
            for k, v in self.ovs.interface_stats(port).items():
                if re.search(r"drop|retr|error|packets|notification", k):
                    out[f"{port}.{k}"] = v
        # The PMD's cycles (dpif-netdev/pmd-stats-show: idle, processing) and packets.
        pmd = self.ovs.appctl("dpif-netdev/pmd-stats-show")
        for k, v in re.findall(r"^\s*(idle cycles|processing cycles|packets received):\s*(\d+)",
                               pmd, re.M):
            out[f"pmd.{k.replace(' ', '_')}"] = int(v)
        return out

    def stop(self):
        self.ovs.stop()


class TestpmdVariant:
    """dpdk-testpmd io-forwarding between the two guests' sockets: the floor of what a
    vhost-user data path costs them (no switching, no host side)."""

    iface = None

    def __init__(self, name, settings, args, ns, sockets):
        vdevs = [f"net_vhost{i},iface={sockets[vm]},client=1,queues=1,tso=1"
                 for i, vm in enumerate(("vm1", "vm2"))]
        eal = [f"--lcores=0@{args.guest_cpus.split(',')[0]},1@{args.switch_cpu}",
               f"--file-prefix=hvs-oc-io-{os.getpid()}"] + [f"--vdev={v}" for v in vdevs]
        self.pmd = loopback.Testpmd(eal, ["--forward-mode=io", *settings.get("app", "").split()])
        if "tx_retries" in settings:  # io forwarding with retry, as hvswitch's (2 us each)
            self.pmd.cmd("set fwd io retry")
            self.pmd.cmd(f"set burst tx delay 2 retry {int(settings['tx_retries'])}")
        self.pmd.cmd("start")

    def wait_links(self):
        wait_for(lambda: self.pmd.cmd("show port info all").count("Link status: up") == 2,
                 30, "testpmd's vhost links")

    def counters(self):
        out = self.pmd.cmd("show fwd stats all")
        stats = {}
        for m in re.finditer(r"Forward statistics for port (\d+)\s+-+\n(.*?)\n\s*-{10}", out, re.S):
            for k, v in re.findall(r"([A-Za-z-]+): (\d+)", m.group(2)):
                stats[f"port{m.group(1)}.{k}"] = int(v)
        return stats

    def stop(self):
        try:
            self.pmd.p.stdin.write(b"quit\n")
            self.pmd.p.stdin.flush()
            self.pmd.p.wait(20)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.pmd.p.kill()
            self.pmd.p.wait()


VARIANTS = {"hvs-tap": HvswitchVariant, "hvs-host": HvswitchVariant,
            "hvs-none": HvswitchVariant, "ovs": OvsVariant, "testpmd": TestpmdVariant}


class Rig:
    """The host namespace (kept over the whole set) and the guests (booted for each run,
    on its switch: boot(), shutdown())."""

    def __init__(self, args):
        self.args = args
        self.ns = f"hvs-oc-{os.getpid()}"
        self.dir = tempfile.mkdtemp(prefix="hvs-oc-")
        self.sockets = {vm: os.path.join(self.dir, f"{vm}.sock") for vm in ("vm1", "vm2")}
        self.guests = {}
        subprocess.run(["ip", "netns", "add", self.ns], check=True)
        in_netns(self.ns, "ip", "link", "set", "lo", "up")
        in_netns(self.ns, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
        subprocess.run([os.path.join(ROOT, "tests/qemu/build_guest.sh")], check=True)

    def boot(self):
        for index, vm in ((1, "vm1"), (2, "vm2")):
            self.guests[vm] = QemuGuest(vm, self.sockets[vm], index, cpus=self.args.guest_cpus,
                                        server=True, device_extra=self.args.device_extra)
        for g in self.guests.values():
            g.run("echo 1 > /proc/sys/net/ipv4/tcp_no_metrics_save; iperf3 -s -D")

    def shutdown(self):
        for g in self.guests.values():
            g.stop()
        self.guests = {}

    def attach(self, variant):
        """Addresses the variant's host-side interface; waits until every path answers."""
        if variant.iface:
            in_netns(self.ns, "ip", "addr", "add", f"{HOST_IP}/24", "dev", variant.iface)
        targets = [("vm1", GUEST_IPS["vm2"])] + ([("host", ip) for ip in GUEST_IPS.values()]
                                                 if variant.iface else [])
        for src, dst in targets:
            def answers(src=src, dst=dst):
                if src == "host":
                    return subprocess.run(["ip", "netns", "exec", self.ns, "ping", "-c", "1",
                                           "-W", "1", dst], capture_output=True).returncode == 0
                return self.guests[src].run(f"ping -c 1 -W 1 {dst}", check=False)[0] == 0
            wait_for(answers, 60, f"{src} -> {dst}")
        # The virtio features the guests' drivers negotiated with this switch (bit 0 first).
        return {vm: g.run("cat /sys/class/net/eth0/device/features")[1].strip()
                for vm, g in self.guests.items()}

    def tcp(self, where):
        text = (self.guests[where].run("cat /proc/net/snmp /proc/net/netstat")[1]
                if where in self.guests else in_netns(self.ns, "cat", "/proc/net/snmp",
                                                      "/proc/net/netstat"))
        return parse_tcp_counters(text)

    def device(self, vm):
        """vm's eth0 drop/error counters and its virtio queues' statistics (ethtool -S)."""
        out = {}
        _, text = self.guests[vm].run(
            "cd /sys/class/net/eth0/statistics && grep . *drop* *err* *fifo*; cd /; "
            "ethtool -S eth0")
        for k, v in re.findall(r"^\s*([\w.]+):\s*(\d+)\s*$", text, re.M):
            out[k] = int(v)
        return out

    def iperf(self, test, seconds):
        """(Mbit/s at the receiver, retransmissions at the sender, sender, receiver)."""
        if test in ("h2g", "g2h"):
            cmd = ["iperf3", "-c", GUEST_IPS["vm1"], "-t", str(seconds), "-J"]
            if test == "g2h":
                cmd.append("-R")
            r = subprocess.run(["ip", "netns", "exec", self.ns] +
                               (["taskset", "-c", self.args.host_cpus] if self.args.host_cpus
                                else []) + cmd, capture_output=True, text=True,
                               timeout=seconds + 60)
            text = r.stdout
            sender, receiver = ("host", "vm1") if test == "h2g" else ("vm1", "host")
        else:
            reverse = " -R" if test == "g2g_r" else ""
            _, text = self.guests["vm1"].run(
                f"iperf3 -c {GUEST_IPS['vm2']} -t {seconds} -J{reverse}", timeout=seconds + 90)
            sender, receiver = ("vm1", "vm2") if test == "g2g" else ("vm2", "vm1")
        try:
            end = json.loads(text[text.index("{"):text.rindex("}") + 1])["end"]
            return (end["sum_received"]["bits_per_second"] / 1e6,
                    end["sum_sent"].get("retransmits"), sender, receiver)
        except (ValueError, KeyError) as e:
            raise RuntimeError(f"iperf3 {test}: no result ({e}):\n{text[-2000:]}")

    def stop(self):
        self.shutdown()
        subprocess.run(["ip", "netns", "del", self.ns], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


def consoles(rig):
    out = ""
    for vm, g in rig.guests.items():
        text = g.console.decode(errors="replace")
        qemu = "\n".join(line for line in text.splitlines() if "qemu-system" in line)
        out += f"--- {vm}: QEMU said:\n{qemu[-3000:]}\n--- console:\n{text[-1500:]}\n"
    return out


def run_variant(rig, spec, args):
    name, settings = split_variant(spec)
    variant = VARIANTS[name](name, settings, args, rig.ns, rig.sockets)
    results = {}
    try:
        rig.boot()
        variant.wait_links()
        results["features"] = rig.attach(variant)
        for test in args.tests:
            if test in ("h2g", "g2h") and not variant.iface:
                continue
            before = {}
            if args.details:
                before = {"tcp": {w: rig.tcp(w) for w in ("host", "vm1", "vm2")},
                          "dev": {vm: rig.device(vm) for vm in rig.guests},
                          "switch": variant.counters()}
            mbit, retr, sender, receiver = rig.iperf(test, args.seconds)
            r = {"mbit": mbit, "retr": retr}
            if args.details:
                r["sender_tcp"] = delta(rig.tcp(sender), before["tcp"][sender])
                r["receiver_tcp"] = delta(rig.tcp(receiver), before["tcp"][receiver])
                r["dev"] = {vm: delta(rig.device(vm), before["dev"][vm]) for vm in rig.guests}
                r["switch"] = delta(variant.counters(), before["switch"])
            results[test] = r
    except BaseException:
        print(consoles(rig), file=sys.stderr)
        raise
    finally:
        rig.shutdown()
        variant.stop()
    return results


def summarize(all_runs):
    print("\nsummary (median [min-max] over runs; retransmissions likewise)")
    for spec, runs in all_runs.items():
        for test in TESTS:
            got = [r[test] for r in runs if test in r]
            if not got:
                continue
            mbit = [g["mbit"] for g in got]
            retr = [g["retr"] for g in got if g["retr"] is not None]
            print(f"  {spec:28s} {test:6s} {statistics.median(mbit):7.0f} Mbit/s "
                  f"[{min(mbit):.0f}-{max(mbit):.0f}]   retr "
                  f"{statistics.median(retr) if retr else float('nan'):7.0f} "
                  f"[{min(retr) if retr else 0}-{max(retr) if retr else 0}]   runs {len(got)}")


def guest_drops(spec, switch):
    """Frames the switch dropped on transmit to the guests, from its counters."""
    if spec.startswith("hvs"):
        return sum(v for k, v in switch.items() if "transmit_drop_total" in k
                   and re.search(r"port=vm[12]\b", k))
    if spec.startswith("ovs"):
        return sum(v for k, v in switch.items() if re.fullmatch(r"vm[12]\.tx_dropped", k))
    return sum(v for k, v in switch.items() if k.endswith("TX-dropped"))


def busy_cycles(spec, switch):
    """Cycles the switch's poll-mode core spent on frames (None where not counted)."""
    if spec.startswith("hvs"):
        return sum(v for k, v in switch.items() if k.startswith("hvswitch_core_busy_cycles"))
    if spec.startswith("ovs"):
        return switch.get("pmd.processing_cycles")
    return None


def report(paths):
    pool = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        seconds = data["args"]["seconds"]
        for spec, runs in data["runs"].items():
            for run in runs:
                for test, r in run.items():
                    if test not in TESTS:
                        continue
                    key = ("g2g*" if test.startswith("g2g") else test, spec)
                    sw = r.get("switch", {})
                    retries = sum(v for k, v in sw.items()
                                  if "transmit_retries_total" in k or k.endswith("tx_retries"))
                    mbytes = r["mbit"] * seconds / 8
                    notes = sum(v for k, v in sw.items() if k.endswith("guest_notifications"))
                    busy = busy_cycles(spec, sw)
                    pool.setdefault(key, []).append(
                        (r["mbit"], r["retr"] or 0, guest_drops(spec, sw), retries,
                         notes / mbytes if notes else None,
                         busy / mbytes / 1e3 if busy else None))
    print("test  variant                  runs  Mbit/s med [min-max]  retr med (mean) [min-max]"
          "  runs w/o retr  drops/run  retr/drop  retries  notif/MB  kcycles/MB")

    def med(values):
        values = [v for v in values if v is not None]
        return f"{statistics.median(values):8.1f}" if values else "       -"
    for (test, spec), v in sorted(pool.items()):
        mbit, retr, drops, retries, notes, busy = ([x[i] for x in v] for i in range(6))
        print(f"{test:5s} {spec:24s} {len(v):4d}  {statistics.median(mbit):6.0f} "
              f"[{min(mbit):.0f}-{max(mbit):.0f}]  {statistics.median(retr):7.0f} "
              f"({statistics.mean(retr):.0f}) [{min(retr)}-{max(retr)}]  "
              f"{sum(1 for x in retr if x == 0):4d}  {statistics.mean(drops):9.1f}  "
              f"{sum(retr) / sum(drops) if sum(drops) else float('nan'):9.1f}  "
              f"{sum(retries):7.0f}  {med(notes)}  {med(busy)}")


def main():
    if sys.argv[1:2] == ["--report"]:
        return report(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", default="hvs-tap,hvs-host,ovs",
                    help="comma-separated, see above")
    ap.add_argument("--tests", default="h2g,g2h,g2g,g2g_r")
    ap.add_argument("--runs", type=int, default=5, help="runs of each variant")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--switch-cpu", type=int, default=1)
    ap.add_argument("--guest-cpus", default="0", help="taskset list for both QEMUs")
    ap.add_argument("--host-cpus", default="0",
                    help="taskset list for the host's iperf3; '' lets it float")
    ap.add_argument("--device-extra", default="",
                    help="more virtio-net-pci properties, e.g. ',rx_queue_size=1024'")
    ap.add_argument("--details", action="store_true",
                    help="TCP, device and switch counters per test (slower)")
    ap.add_argument("--out", default=f"/tmp/ovs_compare-{os.getpid()}.json")
    args = ap.parse_args()
    args.tests = args.tests.split(",")
    specs = args.variants.split(",")
    for spec in specs:
        if split_variant(spec)[0] not in VARIANTS:
            ap.error(f"unknown variant {spec}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(1))
    all_runs = {spec: [] for spec in specs}
    rig = Rig(args)
    try:
        for i in range(args.runs):
            for spec in (specs if i % 2 == 0 else specs[::-1]):
                results = run_variant(rig, spec, args)
                all_runs[spec].append(results)
                tests = {t: r for t, r in results.items() if t in TESTS}
                print(f"run {i} {spec}: " + ", ".join(
                    f"{t} {r['mbit']:.0f} Mbit/s {r['retr']} retr" for t, r in tests.items()),
                    flush=True)
                if args.details:
                    print(f"    guest features: {results['features']}")
                    for t, r in tests.items():
                        print(f"    {t}: sender {r['sender_tcp']}\n    {t}: receiver "
                              f"{r['receiver_tcp']}\n    {t}: devices {r['dev']}\n"
                              f"    {t}: switch {r['switch']}", flush=True)
                with open(args.out, "w") as f:
                    json.dump({"args": vars(args), "runs": all_runs}, f, indent=1)
    finally:
        rig.stop()
    summarize(all_runs)
    print(f"raw figures: {args.out}")


if __name__ == "__main__":
    main()
