"""iperf3 TCP between two network namespaces through hvswitch: two host ports
(type=host, virtio-net header, offloads) against two net_tap ports (type=dpdk), in
alternating runs. By hand, under the CPU lock; never a pass/fail test:

    flock /tmp/cpu-bench.lock python3 tests/perf/host_port.py --runs 3 --seconds 5

Each run starts hvswitch afresh with the variant's ports. Host ports create their
interfaces in the namespaces themselves; net_tap's are created in hvswitch's namespace
and moved (`ip link set ... netns`), which the data path does not notice. Prints Mbit/s
and retransmissions per run and direction, and the medians.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from harness import Daemon, in_netns, wait_for  # noqa: E402

PID = os.getpid()
NS = (f"hvs-pa-{PID}", f"hvs-pb-{PID}")
IFACES = (f"pa{PID % 100000}", f"pb{PID % 100000}")
ADDRS = ("10.7.0.1", "10.7.0.2")


def ports(kind):
    if kind == "host":
        return [f"{p},type=host,iface={i},netns={n}" for p, i, n in zip("ab", IFACES, NS)]
    return [f"{p},type=dpdk,devargs=net_tap{k},iface={i}"
            for k, (p, i) in enumerate(zip("ab", IFACES))]


def run_once(kind, seconds):
    sw = Daemon(ports(kind), eal=f"--no-huge -m 1024")
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    for ns in NS:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    results = {"host": [], "tap": []}
    try:
        for i in range(args.runs):
            for kind in (("host", "tap") if i % 2 == 0 else ("tap", "host")):
                r = run_once(kind, args.seconds)
                results[kind].append(r)
                print(f"run {i} {kind}: " + ", ".join(f"{d} {mbit:.0f} Mbit/s {retr} retr"
                                                       for d, (mbit, retr) in r.items()),
                      flush=True)
                time.sleep(1)
    finally:
        for ns in NS:
            subprocess.run(["ip", "netns", "del", ns], check=False)
    for kind, runs in results.items():
        for d in ("a>b", "b>a"):
            mbits = [r[d][0] for r in runs]
            retrs = [r[d][1] for r in runs]
            print(f"{kind} {d}: median {statistics.median(mbits):.0f} Mbit/s "
                  f"(min {min(mbits):.0f}, max {max(mbits):.0f}), retransmits {retrs}")


if __name__ == "__main__":
    main()
