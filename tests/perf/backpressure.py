"""Backpressure from kernel ports, measured (issue 14): this build's hvswitch against
another binary (--against, e.g. main's, which drops what a full guest refuses) in
alternating runs. By hand, under the CPU lock; never a pass/fail test:

    flock /tmp/cpu-bench.lock python3 tests/perf/backpressure.py slow-guest \\
        --against /path/to/main/build/switch/hvswitch --runs 5 --seconds 10
    flock /tmp/cpu-bench.lock python3 tests/perf/backpressure.py stalled-guest \\
        --against /path/to/main/build/switch/hvswitch --runs 5 --seconds 5

slow-guest: iperf3 TCP from a network namespace behind a kernel port (--source tap: a
net_tap port, which gets MTU-sized frames, the kernel segmenting for it; --source host: a
host port, whose super-frames a guest with TSO takes whole) to a QEMU guest (TCG: far
slower than the host's kernel) on a vhost-user port, the guest on CPU 0,
the switch's worker on CPU 1. QEMU serves the socket (client=1 port), so the guest boots
once and each run starts a switch afresh. Per run: Mbit/s, the sender's TCP
retransmissions, frames dropped for the guest (queue_full), the tap's TX drops in the
namespace (where a paused host port's frames are lost), the host port's pauses and the
share of time it was paused.

bursts: frames lost, with and without backpressure, from a kernel port (--source host: a
type=host tap; netdev: a type=netdev veth) to a slow hvs_guest (`slow NS`: one frame every
NS ns). A sender in the namespace offers UDP datagrams in bursts (--burst back to back,
then --gap ms idle: on average slower than the guest, at their peak far faster). Variants:
the guest's port with tx_retries=0 (never waited for: neither retries nor backpressure),
with tx_retries=8 (this build: retries, then the tap's frames wait in its queue), and
--against's binary with tx_retries=8 (e.g. main's: retries, the rest dropped), if given.
Per run: offered (the sender's datagrams), delivered (the guest's count), lost (offered -
delivered), of them dropped in the switch (queue_full for the guest; it also counts the
namespace's own multicast, a few frames) and in the kernel (a host port's tap: its TX
dropped; a netdev port's packet sockets' drops are not shown here), the host port's
pauses, and the retries' and pauses' TSC cycles per frame delivered:

    flock /tmp/cpu-bench.lock python3 tests/perf/backpressure.py bursts --runs 3 \\
        [--source netdev] [--against /path/to/main/build/switch/hvswitch] \\
        [--frames 40000 --burst 400 --gap 20 --slow-ns 10000]

stalled-guest: the uplink's other traffic while a guest it sends to has stopped
draining: iperf3 TCP between two namespaces behind host ports a and b, while a also
sends UDP to a stalled hvs_guest (its ring full). Per run: a > b Mbit/s with and
without the stalled guest's traffic, and a's pauses (one, then none: the guest is
marked stalled).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import harness  # noqa: E402
from harness import Daemon, Guest, in_netns, wait_for  # noqa: E402

PID = os.getpid()
THIS = harness.HVSWITCH


def metric(sw, name, **labels):
    return sw.value(name, **labels) or 0.0


def tap_tx_dropped(netns, iface):
    link = json.loads(in_netns(netns, "ip", "-s", "-j", "link", "show", iface))[0]
    return link["stats64"]["tx"]["dropped"]


def iperf(netns, server, seconds, *options):
    """(receiver's Mbit/s, sender's retransmissions) of an iperf3 client in `netns`."""
    r = subprocess.run(["ip", "netns", "exec", netns, "timeout", str(seconds + 60), "iperf3",
                        "-c", server, "-t", str(seconds), "-J", "--connect-timeout", "10000",
                        *options], capture_output=True, text=True)
    try:
        end = json.loads(r.stdout)["end"]
    except (ValueError, KeyError):
        raise AssertionError(f"iperf3 to {server}: exit {r.returncode}\n{r.stdout[-2000:]}"
                             f"{r.stderr[-2000:]}")
    return end["sum_received"]["bits_per_second"] / 1e6, end["sum_sent"].get("retransmits")


def print_medians(results):
    for variant, runs in results.items():
        line = ", ".join(f"{k} {statistics.median(r[k] for r in runs):.4g} "
                         f"({min(r[k] for r in runs):.4g}-{max(r[k] for r in runs):.4g})"
                         for k in runs[0])
        print(f"{variant} medians (min-max): {line}")


def variants(i):
    """The order of run i: alternating, so that neither always goes first."""
    return ("this", "against") if i % 2 == 0 else ("against", "this")


def slow_guest(args):
    from qemu_guest import QemuGuest  # noqa: E402  (boots a VM: only this scenario)
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    subprocess.run([os.path.join(root, "tests/qemu/build_guest.sh")], check=True)
    ns, iface = f"hvs-bp-{PID}", f"bph{PID % 10000}"
    sockdir = tempfile.mkdtemp(prefix="hvs-bp-")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    guest = None
    results = {"this": [], "against": []}
    try:
        in_netns(ns, "ip", "link", "set", "lo", "up")
        ports = [f"vm1,type=vhost-user,path={sockdir}/vm1.sock,client=1",
                 f"hp,type=host,iface={iface},netns={ns}" if args.source == "host"
                 else f"hp,type=dpdk,devargs=net_tap0,iface={iface}"]
        # QEMU's vhost-user device waits for the switch before the guest boots: a switch
        # for the boot, then one per run (it connects to QEMU's socket again).
        sw = Daemon(ports, sockdir=sockdir, eal="--no-huge -m 1024")
        try:
            sw.wait_ready()
            guest = QemuGuest("vm1", f"{sockdir}/vm1.sock", 1, cpus="0", server=True)
            guest.run("iperf3 -s -D")
        finally:
            sw.stop()
        for i in range(args.runs):
            for variant in variants(i):
                harness.HVSWITCH = THIS if variant == "this" else args.against
                sw = Daemon(ports, sockdir=sockdir, eal="--no-huge -m 1024")
                try:
                    sw.wait_ready()
                    if args.source == "tap":  # created in hvswitch's namespace
                        subprocess.run(["ip", "link", "set", iface, "netns", ns], check=True)
                        in_netns(ns, "ip", "link", "set", iface, "up")
                    sw.wait_port_up("vm1")
                    sw.wait_port_up("hp")
                    in_netns(ns, "ip", "addr", "add", "10.0.1.200/24", "dev", iface)
                    in_netns(ns, "ping", "-c", "1", "-W", "10", guest.ip)
                    dropped0 = tap_tx_dropped(ns, iface)
                    mbits, retr = iperf(ns, guest.ip, args.seconds)
                    r = {"mbit": mbits, "retr": retr,
                         "queue_full": metric(sw, "hvswitch_port_transmit_drop_total",
                                              port="vm1", reason="queue_full"),
                         "tap_dropped": tap_tx_dropped(ns, iface) - dropped0,
                         "pauses": metric(sw, "hvswitch_port_receive_pauses_total", port="hp"),
                         "paused": metric(sw, "hvswitch_port_receive_pause_cycles_total",
                                          port="hp") / (args.tsc_ghz * 1e9 * args.seconds),
                         "retries": metric(sw, "hvswitch_port_transmit_retries_total",
                                           port="vm1")}
                finally:
                    sw.stop()
                results[variant].append(r)
                print(f"run {i} {variant}: {r['mbit']:.0f} Mbit/s, {r['retr']} retransmits, "
                      f"queue_full {r['queue_full']:.0f}, tap TX dropped {r['tap_dropped']}, "
                      f"pauses {r['pauses']:.0f} ({100 * r['paused']:.1f}% of the time), "
                      f"retries {r['retries']:.0f}", flush=True)
                time.sleep(1)
    finally:
        if guest is not None:
            guest.stop()
        subprocess.run(["ip", "netns", "del", ns], check=False)
    print_medians(results)


def stalled_guest(args):
    namespaces = (f"hvs-bpa-{PID}", f"hvs-bpb-{PID}")
    ifaces = (f"bpa{PID % 10000}", f"bpb{PID % 10000}")
    addrs = ("10.7.0.1", "10.7.0.2")
    stalled_ip, stalled_mac = "10.7.0.50", "02:00:00:00:0b:50"
    for ns in namespaces:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    results = {"this": [], "against": []}
    try:
        for i in range(args.runs):
            for variant in variants(i):
                harness.HVSWITCH = THIS if variant == "this" else args.against
                sw = Daemon([f"{p},type=host,iface={f},netns={n}"
                             for p, f, n in zip("ab", ifaces, namespaces)]
                            + ["s,type=vhost-user,path={dir}/s.sock"], eal="--no-huge -m 1024")
                stalled = None
                try:
                    sw.wait_ready()
                    stalled = Guest("vhost-user", f"{sw.dir}/s.sock", "s")
                    stalled.wait_link()
                    for p in ("a", "b", "s"):
                        sw.wait_port_up(p)
                    for ns, iface, addr in zip(namespaces, ifaces, addrs):
                        in_netns(ns, "ip", "addr", "add", f"{addr}/24", "dev", iface)
                    in_netns(namespaces[0], "ip", "neigh", "replace", stalled_ip, "lladdr",
                             stalled_mac, "dev", ifaces[0])
                    stalled.send("ff:ff:ff:ff:ff:ff", stalled_mac, 1)  # learned behind s
                    stalled.cmd("pause")
                    in_netns(namespaces[0], "ping", "-c", "1", "-W", "5", addrs[1])
                    server = subprocess.Popen(["ip", "netns", "exec", namespaces[1], "iperf3",
                                               "-s"], stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL)
                    try:
                        wait_for(lambda: ":5201" in in_netns(namespaces[1], "ss", "-ltn"), 10,
                                 "iperf3 server")
                        alone, _ = iperf(namespaces[0], addrs[1], args.seconds)
                        # The stalled guest's traffic: UDP from a as fast as a Python loop
                        # sends it; its ring is full after the first 256 frames.
                        udp = subprocess.Popen(
                            ["ip", "netns", "exec", namespaces[0], "python3", "-c",
                             "import socket\ns = socket.socket(socket.AF_INET, "
                             "socket.SOCK_DGRAM)\nd = bytes(1400)\nwhile True:\n"
                             f"    s.sendto(d, ('{stalled_ip}', 9))"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        time.sleep(1)
                        pauses0 = metric(sw, "hvswitch_port_receive_pauses_total", port="a")
                        beside, _ = iperf(namespaces[0], addrs[1], args.seconds)
                        udp.kill()
                        udp.wait()
                    finally:
                        server.kill()
                        server.wait()
                    r = {"alone": alone, "beside_stalled": beside,
                         "pauses": metric(sw, "hvswitch_port_receive_pauses_total", port="a"),
                         "pauses_during": metric(sw, "hvswitch_port_receive_pauses_total",
                                                 port="a") - pauses0,
                         "queue_full": metric(sw, "hvswitch_port_transmit_drop_total",
                                              port="s", reason="queue_full")}
                finally:
                    if stalled is not None:
                        stalled.kill()
                    sw.stop()
                results[variant].append(r)
                print(f"run {i} {variant}: a>b {r['alone']:.0f} Mbit/s alone, "
                      f"{r['beside_stalled']:.0f} beside the stalled guest's traffic "
                      f"(queue_full {r['queue_full']:.0f}); a paused {r['pauses']:.0f} times, "
                      f"{r['pauses_during']:.0f} during the second", flush=True)
    finally:
        for ns in namespaces:
            subprocess.run(["ip", "netns", "del", ns], check=False)
    print_medians(results)


SENDER = """
import socket, sys, time
dst, count, burst, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
d = bytes(64)
sent = bursts = 0
sending = 0.0
while sent < count:
    start = time.perf_counter()
    for _ in range(burst):
        try:
            s.sendto(d, (dst, 9))
            sent += 1
        except OSError:
            pass
    sending += time.perf_counter() - start
    bursts += 1
    time.sleep(gap / 1000)
print(sent, sending / bursts * 1e6)
"""


def bursts(args):
    ns, iface, peer = f"hvs-bp-{PID}", f"bph{PID % 10000}", f"bpv{PID % 10000}"
    src_ip, guest_ip, guest_mac = "10.9.0.1", "10.9.0.2", "02:00:00:00:0c:02"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    cases = [("tx_retries=0", THIS, 0), ("tx_retries=8", THIS, 8)]
    if args.against:
        cases.append(("against tx_retries=8", args.against, 8))
    results = {name: [] for name, _, _ in cases}
    try:
        in_netns(ns, "ip", "link", "set", "lo", "up")
        if args.source == "netdev":
            in_netns(ns, "ip", "link", "add", iface, "type", "veth", "peer", "name", peer)
            in_netns(ns, "ip", "link", "set", peer, "up")
            in_netns(ns, "ip", "link", "set", iface, "up")
            kernel_port = f"hp,type=netdev,iface={peer},netns={ns}"
        else:
            kernel_port = f"hp,type=host,iface={iface},netns={ns}"
        for i in range(args.runs):
            order = cases if i % 2 == 0 else cases[::-1]
            for name, binary, retries in order:
                harness.HVSWITCH = binary
                sw = Daemon([kernel_port,
                             f"g,type=vhost-user,path={{dir}}/g.sock,tx_retries={retries}"],
                            eal="--no-huge -m 1024")
                guest = None
                try:
                    sw.wait_ready()
                    guest = Guest("vhost-user", f"{sw.dir}/g.sock", "g", cpu=0)
                    guest.wait_link()
                    sw.wait_port_up("g")
                    sw.wait_port_up("hp")
                    in_netns(ns, "ip", "addr", "replace", f"{src_ip}/24", "dev", iface)
                    in_netns(ns, "ip", "neigh", "replace", guest_ip, "lladdr", guest_mac,
                             "dev", iface)
                    guest.send("ff:ff:ff:ff:ff:ff", guest_mac, 1)  # learned behind g
                    wait_for(lambda: sw.value("hvswitch_fdb_entries") or 0, 10, "g learned")
                    src_mac = json.loads(in_netns(ns, "ip", "-j", "link", "show",
                                                  iface))[0]["address"]
                    guest.cmd(f"slow {args.slow_ns}")
                    seen0 = guest.flow(src_mac, guest_mac)
                    dropped0 = tap_tx_dropped(ns, iface) if args.source == "host" else 0
                    out = in_netns(ns, "python3", "-c", SENDER, guest_ip, str(args.frames),
                                   str(args.burst), str(args.gap))
                    offered, burst_us = int(out.split()[-2]), float(out.split()[-1])
                    # What waits in the guest's ring: counted once it stops receiving.
                    last = [-1]

                    def settled():
                        now = guest.flow(src_mac, guest_mac)
                        done, last[0] = now == last[0], now
                        time.sleep(0.3)
                        return done

                    wait_for(settled, 60, "the guest settled")
                    delivered = guest.flow(src_mac, guest_mac) - seen0
                    queue_full = metric(sw, "hvswitch_port_transmit_drop_total", port="g",
                                        reason="queue_full")
                    r = {"burst_us": burst_us, "offered": offered, "delivered": delivered,
                         "delivered_share": delivered / offered,
                         "queue_full": queue_full,
                         "lost": offered - delivered,
                         "tap_dropped": (tap_tx_dropped(ns, iface) - dropped0
                                         if args.source == "host" else float("nan")),
                         "pauses": metric(sw, "hvswitch_port_receive_pauses_total", port="hp"),
                         "retries": metric(sw, "hvswitch_port_transmit_retries_total",
                                           port="g"),
                         "retry_cycles_per_frame": metric(
                             sw, "hvswitch_port_transmit_retry_cycles_total", port="g")
                         / max(delivered, 1),
                         "pause_cycles_per_frame": metric(
                             sw, "hvswitch_port_receive_pause_cycles_total", port="hp")
                         / max(delivered, 1)}
                finally:
                    if guest is not None:
                        guest.kill()
                    sw.stop()
                results[name].append(r)
                print(f"run {i} {name}: " + ", ".join(f"{k} {v:.4g}" for k, v in r.items()),
                      flush=True)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    print_medians(results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=("slow-guest", "stalled-guest", "bursts"))
    parser.add_argument("--against", help="the other hvswitch binary (bursts: optional)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--source", choices=("tap", "host", "netdev"), default=None,
                        help="slow-guest: the namespace's port: net_tap (the kernel "
                             "segments everything: MTU-sized frames, the default) or "
                             "type=host; bursts: type=host (the default) or type=netdev")
    parser.add_argument("--frames", type=int, default=100000, help="bursts: per run")
    parser.add_argument("--burst", type=int, default=400, help="bursts: datagrams a burst")
    parser.add_argument("--gap", type=float, default=10, help="bursts: ms between bursts")
    parser.add_argument("--slow-ns", type=int, default=10000,
                        help="bursts: the guest takes one frame every this many ns")
    parser.add_argument("--tsc-ghz", type=float, default=None,
                        help="TSC rate (default: read from the kernel's log of it)")
    args = parser.parse_args()
    if args.tsc_ghz is None:
        args.tsc_ghz = tsc_ghz()
    if args.scenario != "bursts" and not args.against:
        parser.error(f"{args.scenario} needs --against")
    if args.source is None:
        args.source = "host" if args.scenario == "bursts" else "tap"
    {"slow-guest": slow_guest, "stalled-guest": stalled_guest, "bursts": bursts}[
        args.scenario](args)


def tsc_ghz():
    """The TSC's rate: the CPU's nominal MHz is close enough for a share of time."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) / 1000
    return 1.0


if __name__ == "__main__":
    main()
