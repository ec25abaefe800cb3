#!/usr/bin/env python3
"""Idle CPU (issue 16, benchmarks 1 and 5): a switch with two guests attached (hvs_guest
processes on CPU 0) and no traffic; the worker thread's CPU time over --seconds, read from
/proc/PID/task/TID/stat, per --idle mode, the modes taking turns for --rounds rounds (a
fresh switch and guests each time). Also the daemon's other threads (control thread,
DPDK's), the time the worker slept and its wake-ups a second (every cause), from the
metrics. Prints every run, then medians per mode.

--against-ovs: Open vSwitch-DPDK (tests/perf/ovs.py, started as loopback.py starts it: a
private instance, NORMAL bridge, one PMD on --switch-cpu) takes its turn in every round
too, once per --ovs-maxsleep value, with the same guests (vhost-user: `dpdkvhostuser`
ports; memif: `dpdk` ports with net_memif servers). Its "worker" is its PMD thread
(pmd-cNN/id:N); slept % and wake-ups/s come from `dpif-netdev/pmd-perf-show` (sleep
time, sleep iterations). Debian's OVS 3.1 has `other_config:pmd-maxsleep` (µs, 0-10000,
default 0: never sleeps), the knob OVS 3.2 renamed `pmd-sleep-max`; 3.1's PMD asks for
sleeps only while its queues bring (almost) nothing, growing them up to that bound. With
--against-ovs the guests default to two vhost-user ones for every switch (--ports).

Timing is this benchmark's purpose; nothing here is a pass/fail test. Run it from the
repository root, under the CPU lock (poll mode and OVS's PMD spin):

    flock /tmp/cpu-bench.lock python3 tests/perf/idle_cpu.py --rounds 3 --seconds 30
    flock /tmp/cpu-bench.lock python3 tests/perf/idle_cpu.py --rounds 3 --seconds 30 \\
        --modes poll,sleep,interrupt --against-ovs --ovs-maxsleep 0,250

usage: idle_cpu.py [--modes poll,sleep,interrupt] [--rounds 3] [--seconds 30]
                   [--switch-cpu 1] [--ports vhost-user,memif] [--hvswitch-args ARGS]
                   [--against-ovs] [--ovs-maxsleep 0,250]
"""
import argparse
import os
import re
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
import loopback  # noqa: E402  (Setup.start_ovs, cleanup)

TICKS = os.sysconf("SC_CLK_TCK")
HVSWITCH_WORKER = "rte-worker"  # EAL names the worker lcores' threads rte-worker-N
OVS_PMD = "pmd-c"  # OVS names its PMD threads pmd-cNN/id:N (NN: the core)


def thread_cpu(pid):
    """{thread name: CPU seconds (user + system)} of the process's threads."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                head, tail = f.read().rsplit(")", 1)
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        name = head.split("(", 1)[1]
        fields = tail.split()
        out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) / TICKS
    return out


def split_cpu(before, after, worker_prefix):
    """(worker seconds, other threads' seconds) used between two thread_cpu readings."""
    used = {name: after[name] - before.get(name, 0) for name in after}
    worker = sum(v for name, v in used.items() if name.startswith(worker_prefix))
    return worker, sum(used.values()) - worker


def core_totals(metrics):
    """hvswitch's worker counters summed over its cores, from parsed metrics
    (harness.parse_metrics): busy and idle TSC cycles, seconds slept, wake-ups of every
    cause (timer, and whatever --idle=interrupt adds)."""
    def total(name):
        return sum(v for (n, _), v in metrics.items() if n == name)
    return {"busy_cycles": total("hvswitch_core_busy_cycles_total"),
            "idle_cycles": total("hvswitch_core_idle_cycles_total"),
            "slept_s": total("hvswitch_core_sleep_seconds_total"),
            "wakeups": total("hvswitch_core_wakeups_total")}


def window(pid, seconds, worker_prefix, idle_counters):
    """Worker and other threads' CPU %, slept % and wake-ups/s over `seconds` of nothing.
    `idle_counters()`: (seconds slept, wake-ups) so far."""
    before, start = thread_cpu(pid), time.monotonic()
    slept0, wakeups0 = idle_counters()
    time.sleep(seconds)
    after, elapsed = thread_cpu(pid), time.monotonic() - start
    slept1, wakeups1 = idle_counters()
    worker, others = split_cpu(before, after, worker_prefix)
    return {"worker_pct": 100 * worker / elapsed, "others_pct": 100 * others / elapsed,
            "slept_pct": 100 * (slept1 - slept0) / elapsed,
            "wakeups_per_s": (wakeups1 - wakeups0) / elapsed}


def measure_hvswitch(mode, args):
    ports = [(f"g{i}", kind, "") for i, kind in enumerate(args.ports)]
    sw, guests = harness.start_bridge(
        ports, extra=[f"--idle={mode}", f"--lcores={args.switch_cpu}"]
        + args.hvswitch_args.split())
    try:
        time.sleep(1)  # link-up, the guests' own start

        def idle_counters():
            c = core_totals(sw.scrape())
            return c["slept_s"], c["wakeups"]
        return window(sw.proc.pid, args.seconds, HVSWITCH_WORKER, idle_counters)
    finally:
        harness.stop_bridge(sw, guests)


def ovs_sleep_counters(ovs):
    """(seconds slept, sleeps) of OVS's PMD threads, from pmd-perf-show (OVS 3.1: "sleep
    iterations" and "Sleep time (us)" per PMD)."""
    out = ovs.appctl("dpif-netdev/pmd-perf-show")
    sleeps = sum(int(x) for x in re.findall(r"sleep iterations:\s+(\d+)", out))
    slept_us = sum(float(x) for x in re.findall(r"Sleep time \(us\):\s+([\d.]+)", out))
    return slept_us / 1e6, sleeps


def measure_ovs(maxsleep_us, args):
    kind = args.ports[0]
    setup = loopback.Setup(f"ovs-idle-{maxsleep_us}", kind, "ovs", argparse.Namespace())
    guests = []
    try:
        setup.start_ovs(args.switch_cpu)
        ovs = setup.ovs
        # Set at run time (OVS applies it at once, as its log says); 0 is its default.
        ovs.vsctl("set", "Open_vSwitch", ".", f"other_config:pmd-maxsleep={maxsleep_us}")
        harness.wait_for(lambda: f"PMD max sleep request is {maxsleep_us} usecs" in ovs.log(),
                         10, f"OVS pmd-maxsleep={maxsleep_us} applied")
        guests = [harness.Guest(kind, s, f"ovs{i}") for i, s in enumerate(setup.sockets)]
        for g in guests:
            g.wait_link()
        time.sleep(1)  # as for hvswitch
        return window(ovs.vswitchd.pid, args.seconds, OVS_PMD,
                      lambda: ovs_sleep_counters(ovs))
    finally:
        for g in guests:
            g.quit()
        loopback.cleanup()  # stops this OVS instance (loopback.switches_ovs)


def entries(args):
    """What takes turns: hvswitch's modes, then OVS's sleep settings ("ovs:US")."""
    out = args.modes.split(",")
    if args.against_ovs:
        out += [f"ovs:{us}" for us in args.ovs_maxsleep.split(",")]
    return out


def measure(entry, args):
    if entry.startswith("ovs:"):
        return measure_ovs(int(entry[4:]), args)
    return measure_hvswitch(entry, args)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modes", default="poll,sleep,interrupt", help="hvswitch --idle modes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--switch-cpu", type=int, default=1)
    ap.add_argument("--ports", default=None,
                    help="the two guests' kinds (default vhost-user,memif; with "
                         "--against-ovs vhost-user,vhost-user)")
    ap.add_argument("--hvswitch-args", default="")
    ap.add_argument("--against-ovs", action="store_true",
                    help="OVS-DPDK takes turns too, once per --ovs-maxsleep value")
    ap.add_argument("--ovs-maxsleep", default="0,250",
                    help="OVS other_config:pmd-maxsleep values (µs; OVS 3.1's name)")
    args = ap.parse_args()
    if args.ports is None:
        args.ports = "vhost-user,vhost-user" if args.against_ovs else "vhost-user,memif"
    args.ports = args.ports.split(",")
    if args.against_ovs and len(set(args.ports)) != 1:
        ap.error("--against-ovs: OVS's guests are all of one kind; give --ports of one kind")
    # Runnable from anywhere: the harness's default paths are relative to the root.
    harness.HVSWITCH, harness.HVS_GUEST = loopback.HVSWITCH, loopback.HVS_GUEST
    return args


def main():
    args = parse_args()
    # SIGTERM (a timeout's) exits through the finally clauses and atexit handlers that stop
    # the switches and guests.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    names = entries(args)
    runs = {m: [] for m in names}
    for r, name in loopback.turns(names, args.rounds):
        result = measure(name, args)
        runs[name].append(result)
        print(f"round {r} {name:8} " + "  ".join(f"{k} {v:.2f}" for k, v in result.items()),
              flush=True)
    print(f"\nmedians over {args.rounds} rounds of {args.seconds:.0f} s, guests "
          f"{' + '.join(args.ports)} attached, no traffic:")
    print(f"{'mode':8} {'worker CPU %':>12} {'other threads %':>15} {'slept %':>8} "
          f"{'wake-ups/s':>11}")
    for name in names:
        med = {k: statistics.median(run[k] for run in runs[name]) for k in runs[name][0]}
        print(f"{name:8} {med['worker_pct']:12.2f} {med['others_pct']:15.2f} "
              f"{med['slept_pct']:8.1f} {med['wakeups_per_s']:11.0f}")


if __name__ == "__main__":
    main()
