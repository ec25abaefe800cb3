#!/usr/bin/env python3
"""Namespace <-> namespace latency: sockperf UDP ping-pong (64 B) between two network
namespaces through hvswitch's kernel ports, the Linux bridge and Open vSwitch-DPDK, in
alternating runs. By hand, under the CPU lock for the whole set; never a pass/fail test:

    flock /tmp/cpu-bench.lock python3 tests/perf/latency.py \\
        --variants bridge,hvs-netdev,hvs-host,ovs-afpacket,ovs-tap --runs 5 --seconds 10

Namespaces a (10.8.0.1) and b (10.8.0.2) and a switch namespace s; every run builds its
variant's interfaces afresh and removes them after:

  bridge        veth pairs, namespace ends in a and b, the others in a Linux bridge in s
  hvs-netdev    hvswitch (in s) with two `type=netdev` ports on the veths' ends in s
  hvs-host      hvswitch (in s) with two `type=host` ports whose taps it creates in a, b
  hvs-tap       hvswitch with two `net_tap` ports (`type=dpdk`), taps moved into a, b (no
                longer comes up: since main, a net_tap interface moved out of hvswitch's
                namespace looks down to its PMD for good)
  hvs-afpacket  hvswitch with two `net_af_packet` ports on the veths' ends in s
  ovs-afpacket  Open vSwitch-DPDK (tests/perf/ovs.py), netdev bridge, NORMAL action, two
                `type=dpdk` ports `net_af_packet` on the veths' ends in s (PMD-polled)
  ovs-system    the same bridge with `type=system` ports on the veths (served by OVS's
                main thread, not a PMD)
  ovs-tap       the same bridge with two `internal` ports (taps) moved into a and b
A variant may carry settings after slashes: hvswitch daemon options
(`hvs-host/tx_flush_us=50`, `hvs-host/burst=8`), or for OVS other_config keys
(`ovs-afpacket/tx-flush-interval=0`); any variant takes `client_cpu=N` and `server_cpu=N`
(`bridge/server_cpu=1`: the bridge with its two ends on different CPUs).

The veths' checksum offload is turned off on the namespace side (--veth-offloads on
keeps the default): DPDK's af_packet PMD forwards the partial checksums a veth hands it
(TP_STATUS_CSUMNOTREADY) as they are, and the receiver drops them.

Placement: the switch's poll-mode core on --switch-cpu (hvswitch --lcores, OVS
pmd-cpu-mask), sockperf's client on --client-cpu, its server on --server-cpu (default
both on the other CPU: the switch core busy-polls). --spin-cpus runs a SCHED_IDLE busy
loop on those CPUs, so that they never halt while waiting: it separates what the wake-up
of an idle vCPU costs (an interrupt to a halted vCPU on this VM) from the switches' own.

    python3 tests/perf/latency.py --report FILE.json [FILE.json ...]

pools the runs of such files per variant (batches run one at a time under the lock).

Reported per run: sockperf's one-way latency (half the round trip, as sockperf prints
it: avg, p50, p99, p99.9, max) and the messages exchanged; per variant the medians over
runs and the ratios of the medians to the bridge's. Raw figures in --out (JSON).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, HERE)
from harness import Daemon, _live, in_netns, wait_for  # noqa: E402
import ovs  # noqa: E402

PID = os.getpid()
NS = {"a": f"hvs-la-{PID}", "b": f"hvs-lb-{PID}", "s": f"hvs-ls-{PID}"}
IP = {"a": "10.8.0.1", "b": "10.8.0.2"}
PORT = 11111
HVS_DAEMON_KEYS = {"tx_flush_us", "burst", "rx_descriptors", "tx_descriptors", "mbufs"}


def sh(*cmd):
    subprocess.run(cmd, check=True)


def split_variant(spec):
    name, *settings = spec.split("/")
    return name, dict(s.split("=", 1) for s in settings)


class Veths:
    """veth pairs: `ns` end in a/b (named like the namespace's interface), peer in s."""

    def __init__(self, offloads):
        self.ifaces = {k: f"lv{k}{PID % 10000}" for k in "ab"}
        self.peers = {k: f"lp{k}{PID % 10000}" for k in "ab"}
        for k in "ab":
            sh("ip", "link", "add", self.ifaces[k], "netns", NS[k], "type", "veth",
               "peer", "name", self.peers[k], "netns", NS["s"])
            if not offloads:
                in_netns(NS[k], "ethtool", "-K", self.ifaces[k], "tx", "off")
            # Both ends up: a type=netdev port follows the veth's carrier.
            sh("ip", "-n", NS[k], "link", "set", self.ifaces[k], "up")
            sh("ip", "-n", NS["s"], "link", "set", self.peers[k], "up")

    def remove(self):
        for k in "ab":
            subprocess.run(["ip", "-n", NS["s"], "link", "del", self.peers[k]],
                           capture_output=True)


class Bridge:
    def __init__(self, settings, args):
        self.veths = Veths(args.veth_offloads == "on")
        self.ifaces = self.veths.ifaces
        self.br = f"lbr{PID % 10000}"
        sh("ip", "-n", NS["s"], "link", "add", self.br, "type", "bridge")
        for peer in self.veths.peers.values():
            sh("ip", "-n", NS["s"], "link", "set", peer, "master", self.br)
        sh("ip", "-n", NS["s"], "link", "set", self.br, "up")

    def counters(self):
        return {}

    def stop(self):
        self.veths.remove()
        subprocess.run(["ip", "-n", NS["s"], "link", "del", self.br], capture_output=True)


class Hvswitch:
    def __init__(self, name, settings, args):
        kind = name.split("-", 1)[1]
        extra = [f"--lcores={args.switch_cpu}"]
        extra += [f"--{k}={v}" for k, v in settings.items() if k in HVS_DAEMON_KEYS]
        port_opts = "".join(f",{k}={v}" for k, v in settings.items() if k not in HVS_DAEMON_KEYS)
        self.veths = None
        if kind == "netdev":
            self.veths = Veths(args.veth_offloads == "on")
            self.ifaces = self.veths.ifaces
            ports = [f"{k},type=netdev,iface={self.veths.peers[k]}{port_opts}" for k in "ab"]
        elif kind == "afpacket":
            self.veths = Veths(args.veth_offloads == "on")
            self.ifaces = self.veths.ifaces
            ports = [f"{k},type=dpdk{port_opts},devargs=net_af_packet{i},"
                     f"iface={self.veths.peers[k]}" for i, k in enumerate("ab")]
        elif kind == "tap":
            self.ifaces = {k: f"lt{k}{PID % 10000}" for k in "ab"}
            ports = [f"{k},type=dpdk{port_opts},devargs=net_tap{i},iface={self.ifaces[k]}"
                     for i, k in enumerate("ab")]
        elif kind == "host":
            self.ifaces = {k: f"lh{k}{PID % 10000}" for k in "ab"}
            ports = [f"{k},type=host,iface={self.ifaces[k]},netns={NS[k]}{port_opts}"
                     for k in "ab"]
        else:
            raise ValueError(name)
        self.sw = Daemon(ports, extra=extra, netns=NS["s"], eal="--no-huge -m 512")
        try:
            self.sw.wait_ready()
            if kind == "tap":  # net_tap makes its taps in hvswitch's namespace
                for k in "ab":
                    sh("ip", "-n", NS["s"], "link", "set", self.ifaces[k], "netns", NS[k])
            for k in "ab":
                self.sw.wait_port_up(k)
        except BaseException:
            self.stop()
            raise

    def counters(self):
        out = {}
        for (name, labels), value in self.sw.scrape().items():
            if re.search(r"core_(busy|idle)_cycles|core_packets|drop|port_(receive|transmit)_"
                         r"(packets|bursts)", name):
                out[name + "{" + ",".join(f"{k}={v}" for k, v in sorted(labels)) + "}"] = value
        return out

    def stop(self):
        self.sw.stop()
        if self.veths:
            self.veths.remove()


class Ovs:
    def __init__(self, name, settings, args):
        kind = name.split("-", 1)[1]
        self.ovs = ovs.OvsDpdk(netns=NS["s"], pmd_cpus=[args.switch_cpu], other_config=settings)
        self.veths = None
        self.br = f"lsw{PID % 10000}"
        try:
            self.ovs.add_bridge(self.br)
            if kind in ("afpacket", "system"):
                self.veths = Veths(args.veth_offloads == "on")
                self.ifaces = self.veths.ifaces
                for i, k in enumerate("ab"):
                    if kind == "afpacket":
                        self.ovs.add_port(self.br, k, "dpdk", **{
                            "dpdk-devargs": f"net_af_packet{i},iface={self.veths.peers[k]}"})
                    else:
                        self.ovs.add_port(self.br, self.veths.peers[k], "system")
            elif kind == "tap":
                self.ifaces = {k: f"lo{k}{PID % 10000}" for k in "ab"}
                for k in "ab":
                    self.ovs.add_port(self.br, self.ifaces[k], "internal")
                    sh("ip", "-n", NS["s"], "link", "set", self.ifaces[k], "netns", NS[k])
            else:
                raise ValueError(name)
        except BaseException:
            self.stop()
            raise

    def counters(self):
        return {}

    def stop(self):
        self.ovs.stop()
        if self.veths:
            self.veths.remove()


PLACEMENT_KEYS = ("client_cpu", "server_cpu")


def make(spec, args):
    name, settings = split_variant(spec)
    settings = {k: v for k, v in settings.items() if k not in PLACEMENT_KEYS}
    if name == "bridge":
        return Bridge(settings, args)
    if name.startswith("hvs-"):
        return Hvswitch(name, settings, args)
    if name.startswith("ovs-"):
        return Ovs(name, settings, args)
    raise ValueError(spec)


def parse_sockperf(text):
    out = {}
    m = re.search(r"avg-latency=([\d.]+)", text)
    if m:
        out["avg"] = float(m.group(1))
    for m in re.finditer(r"---> (?:<(MAX|MIN)> observation|percentile ([\d.]+)) =\s*([\d.]+)",
                         text):
        key = m.group(1).lower() if m.group(1) else "p" + m.group(2).rstrip("0").rstrip(".")
        out[key] = float(m.group(3))
    m = re.search(r"\[Valid Duration\].*?ReceivedMessages=(\d+)", text)
    if m:
        out["messages"] = int(m.group(1))
    m = re.search(r"# dropped messages = (\d+)", text)
    if m:
        out["dropped"] = int(m.group(1))
    return out


def measure(variant, spec, args):
    place = {k: int(split_variant(spec)[1].get(k, getattr(args, k))) for k in PLACEMENT_KEYS}
    for k in "ab":
        iface = variant.ifaces[k]
        in_netns(NS[k], "ip", "addr", "add", f"{IP[k]}/24", "dev", iface)
        in_netns(NS[k], "ip", "link", "set", iface, "up")
    wait_for(lambda: subprocess.run(["ip", "netns", "exec", NS["a"], "ping", "-c", "1", "-W",
                                     "1", IP["b"]], capture_output=True).returncode == 0,
             30, "a -> b ping")
    server = subprocess.Popen(["ip", "netns", "exec", NS["b"], "taskset", "-c",
                               str(place["server_cpu"]), "sockperf", "server", "-i", IP["b"],
                               "-p", str(PORT)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    _live.append(server)
    try:
        wait_for(lambda: f":{PORT}" in in_netns(NS["b"], "ss", "-lun"), 10, "sockperf server")
        before = variant.counters()
        r = subprocess.run(["ip", "netns", "exec", NS["a"], "taskset", "-c",
                            str(place["client_cpu"]), "sockperf", "ping-pong", "-i", IP["b"],
                            "-p", str(PORT), "-m", str(args.size), "-t", str(args.seconds)],
                           capture_output=True, text=True, timeout=args.seconds + 30)
        after = variant.counters()
        result = parse_sockperf(r.stdout + r.stderr)
        if "p50" not in result:
            raise RuntimeError(f"sockperf: no result:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        result["counters"] = {k: v - before.get(k, 0) for k, v in after.items()
                              if v - before.get(k, 0)}
        return result
    finally:
        server.kill()
        server.wait()


def spinners(cpus):
    procs = []
    for cpu in cpus:
        p = subprocess.Popen(["chrt", "-i", "0", "taskset", "-c", str(cpu), "sh", "-c",
                              "while :; do :; done"])
        _live.append(p)
        procs.append(p)
    return procs


def summarize(results):
    """Per variant: the medians over runs [min-max] and their ratios to the bridge's."""
    print("\nsummary: one-way latency, median over runs [min-max], us")
    medians = {spec: {k: statistics.median(r[k] for r in runs) for k in ("p50", "p99", "avg")}
               for spec, runs in results.items() if runs}
    base = next((m for spec, m in medians.items() if spec.split("/")[0] == "bridge"), None)
    for spec, runs in results.items():
        if not runs:
            continue
        med = medians[spec]
        ratio = (f"   x bridge: p50 {med['p50'] / base['p50']:.2f}, p99 "
                 f"{med['p99'] / base['p99']:.2f}") if base else ""
        print(f"  {spec:26s} runs {len(runs)}  p50 {med['p50']:6.2f} [{min(r['p50'] for r in runs):.2f}-"
              f"{max(r['p50'] for r in runs):.2f}]  p99 {med['p99']:6.2f} "
              f"[{min(r['p99'] for r in runs):.2f}-{max(r['p99'] for r in runs):.2f}]  avg "
              f"{med['avg']:6.2f}{ratio}")


def report(paths):
    """Pools the runs of --out files (batches run one at a time) per variant."""
    pooled = {}
    for path in paths:
        with open(path) as f:
            for spec, runs in json.load(f)["runs"].items():
                pooled.setdefault(spec, []).extend(runs)
    summarize(dict(sorted(pooled.items(), key=lambda kv: kv[0] != "bridge")))


def main():
    if sys.argv[1:2] == ["--report"]:
        return report(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants",
                    default="bridge,hvs-netdev,hvs-host,ovs-afpacket,ovs-tap")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--size", type=int, default=64, help="sockperf message size (UDP payload)")
    ap.add_argument("--switch-cpu", type=int, default=1)
    ap.add_argument("--client-cpu", type=int, default=0)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--spin-cpus", default="", help="CPUs kept busy by a SCHED_IDLE loop")
    ap.add_argument("--veth-offloads", choices=["on", "off"], default="off")
    ap.add_argument("--out", default=f"/tmp/latency-{PID}.json")
    args = ap.parse_args()
    specs = args.variants.split(",")
    for spec in specs:
        make_name = split_variant(spec)[0]
        if make_name not in ("bridge", "hvs-netdev", "hvs-host", "hvs-tap", "hvs-afpacket",
                             "ovs-afpacket",
                             "ovs-system", "ovs-tap"):
            ap.error(f"unknown variant {spec}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(1))
    results = {spec: [] for spec in specs}
    spin = []
    for ns in NS.values():
        sh("ip", "netns", "add", ns)
    try:
        for ns in NS.values():
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            in_netns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                     "net.ipv6.conf.default.disable_ipv6=1")
        spin = spinners([int(c) for c in args.spin_cpus.split(",") if c])
        for i in range(args.runs):
            for spec in (specs if i % 2 == 0 else specs[::-1]):
                variant = make(spec, args)
                try:
                    r = measure(variant, spec, args)
                finally:
                    variant.stop()
                results[spec].append(r)
                print(f"run {i} {spec:24s} avg {r['avg']:6.2f} p50 {r['p50']:6.2f} p99 "
                      f"{r['p99']:7.2f} p99.9 {r.get('p99.9', 0):7.2f} max {r.get('max', 0):8.1f} "
                      f"us, {r.get('messages', 0)} messages", flush=True)
                if r["counters"]:
                    print(f"    {r['counters']}", flush=True)
                with open(args.out, "w") as f:
                    json.dump({"args": vars(args), "runs": results}, f, indent=1)
                time.sleep(0.5)
    finally:
        for p in spin:
            p.kill()
            p.wait()
        for ns in NS.values():
            subprocess.run(["ip", "netns", "del", ns], check=False)
    summarize(results)
    print(f"raw figures: {args.out}")


if __name__ == "__main__":
    main()
