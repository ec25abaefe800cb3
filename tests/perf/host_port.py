"""iperf3 TCP between two network namespaces through hvswitch's kernel ports, in
alternating runs. By hand, under the CPU lock; never a pass/fail test:

    flock /tmp/cpu-bench.lock python3 tests/perf/host_port.py --runs 3 --seconds 5
    flock /tmp/cpu-bench.lock python3 tests/perf/host_port.py --kinds netdev,af_packet,host

Kinds (two ports of the kind, one per namespace):
  host       type=host: taps with a virtio-net header, created in the namespaces
  tap        type=dpdk,devargs=net_tapN: created in hvswitch's namespace and moved
             (`ip link set ... netns`), which the data path does not notice
  netdev     type=netdev: veths, the namespaces' ends with default offloads, hvswitch's
             ends in its own namespace
  af_packet  type=dpdk,devargs=net_af_packetN on the same veths, the namespaces' ends
             with transmit checksum offload (and so TSO) off: with it on, DPDK's PMD
             forwards broken checksums and TCP does not connect at all
  bridge     no hvswitch: a Linux bridge on the same veths (the veth path's own figures:
             its retransmissions are spurious ones, from reordering in the veths'
             per-CPU backlogs as the iperf3 processes move between CPUs)
A kind may name another build of hvswitch: `--kinds netdev,netdev@old --binary
old=/tmp/hvswitch-old` runs netdev ports with both.

Each run starts hvswitch afresh with the variant's ports. Prints Mbit/s and
retransmissions per run and direction, and the medians.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import harness  # noqa: E402
from harness import Daemon, in_netns, wait_for  # noqa: E402

PID = os.getpid()
NS = (f"hvs-pa-{PID}", f"hvs-pb-{PID}")
IFACES = (f"pa{PID % 100000}", f"pb{PID % 100000}")  # the namespaces' interfaces
OUTER = (f"qa{PID % 100000}", f"qb{PID % 100000}")   # hvswitch's veth ends
ADDRS = ("10.7.0.1", "10.7.0.2")
VETH_KINDS = ("netdev", "af_packet", "bridge")
BRIDGE = f"hvbr{PID % 100000}"
BUILT = harness.HVSWITCH  # this tree's hvswitch


def ports(kind):
    if kind == "host":
        return [f"{p},type=host,iface={i},netns={n}" for p, i, n in zip("ab", IFACES, NS)]
    if kind == "tap":
        return [f"{p},type=dpdk,devargs=net_tap{k},iface={i}"
                for k, (p, i) in enumerate(zip("ab", IFACES))]
    if kind == "netdev":
        return [f"{p},type=netdev,iface={o}" for p, o in zip("ab", OUTER)]
    if kind == "af_packet":
        return [f"{p},type=dpdk,devargs=net_af_packet{k},iface={o}"
                for k, (p, o) in enumerate(zip("ab", OUTER))]
    raise ValueError(kind)


class Bridge:
    """A Linux bridge over hvswitch's veth ends, where hvswitch would be."""

    def __init__(self):
        subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
        for outer in OUTER:
            subprocess.run(["ip", "link", "set", outer, "master", BRIDGE], check=True)
        subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)

    def wait_ready(self):
        pass

    def wait_port_up(self, _):
        pass

    def stop(self):
        subprocess.run(["ip", "link", "del", BRIDGE], check=False)


def make_veths(kind):
    for ns, inner, outer in zip(NS, IFACES, OUTER):
        subprocess.run(["ip", "link", "add", outer, "type", "veth", "peer", "name", inner,
                        "netns", ns], check=True)
        subprocess.run(["ip", "link", "set", outer, "up"], check=True)
        if kind == "af_packet":
            in_netns(ns, "ethtool", "-K", inner, "tx", "off")


def run_once(variant, binary, seconds):
    kind = variant.split("@")[0]
    if kind in VETH_KINDS:
        make_veths(kind)
    harness.HVSWITCH = binary
    sw = Bridge() if kind == "bridge" else Daemon(ports(kind), eal="--no-huge -m 1024")
    try:
        sw.wait_ready()
        for ns, iface, addr in zip(NS, IFACES, ADDRS):
            if kind == "tap":
                subprocess.run(["ip", "link", "set", iface, "netns", ns], check=True)
            in_netns(ns, "ip", "addr", "add", f"{addr}/24", "dev", iface)
            in_netns(ns, "ip", "link", "set", iface, "up")
        sw.wait_port_up("a")
        sw.wait_port_up("b")
        in_netns(NS[0], "ping", "-c", "1", "-W", "5", ADDRS[1])
        out = {}
        for reverse in (False, True):
            server = subprocess.Popen(["ip", "netns", "exec", NS[1], "iperf3", "-s", "-1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_for(lambda: "5201" in in_netns(NS[1], "ss", "-ltn"), 10, "iperf3 server")
                args = ["iperf3", "-c", ADDRS[1], "-t", str(seconds), "-J"] + (["-R"] if reverse else [])
                r = subprocess.run(["ip", "netns", "exec", NS[0], *args], capture_output=True,
                                   text=True, timeout=seconds + 60)
                end = json.loads(r.stdout)["end"]
                out["b>a" if reverse else "a>b"] = (end["sum_received"]["bits_per_second"] / 1e6,
                                                    end["sum_sent"]["retransmits"])
            finally:
                server.wait(timeout=30)
        return out
    finally:
        sw.stop()
        if kind in VETH_KINDS:
            for outer in OUTER:  # (its peer goes with it)
                subprocess.run(["ip", "link", "del", outer], check=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--kinds", default="host,tap",
                        help="comma-separated: host, tap, netdev, af_packet, bridge[@BUILD]")
    parser.add_argument("--binary", action="append", default=[],
                        help="BUILD=PATH: the hvswitch a kind@BUILD runs")
    args = parser.parse_args()
    binaries = dict(b.split("=", 1) for b in args.binary)
    variants = args.kinds.split(",")
    for ns in NS:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    results = {v: [] for v in variants}
    try:
        for i in range(args.runs):
            # every order in turn: each variant runs first, last, in between
            order = variants[i % len(variants):] + variants[:i % len(variants)]
            for variant in order:
                build = variant.partition("@")[2]
                r = run_once(variant, binaries[build] if build else BUILT,
                             args.seconds)
                results[variant].append(r)
                print(f"run {i} {variant}: " + ", ".join(
                    f"{d} {mbit:.0f} Mbit/s {retr} retr" for d, (mbit, retr) in r.items()),
                    flush=True)
                time.sleep(1)
    finally:
        for ns in NS:
            subprocess.run(["ip", "netns", "del", ns], check=False)
    for variant, runs in results.items():
        for d in ("a>b", "b>a"):
            mbits = [r[d][0] for r in runs]
            retrs = [r[d][1] for r in runs]
            print(f"{variant} {d}: median {statistics.median(mbits):.0f} Mbit/s "
                  f"(min {min(mbits):.0f}, max {max(mbits):.0f}), retransmits {retrs}")


if __name__ == "__main__":
    main()
