#!/usr/bin/env python3
"""Idle CPU (issue 16, benchmark 1): hvswitch with two guests attached (vhost-user and
memif, hvs_guest processes on CPU 0) and no traffic; the worker thread's CPU time over
--seconds, read from /proc/PID/task/TID/stat, per --idle mode, the modes taking turns for
--rounds rounds (a fresh switch and guests each time). Also the daemon's other threads
(control thread, DPDK's), the time the worker slept and its wake-ups a second, from the
metrics. Prints every run, then medians per mode.

Timing is this benchmark's purpose; nothing here is a pass/fail test.

usage: idle_cpu.py [--modes poll,sleep] [--rounds 3] [--seconds 30] [--switch-cpu 1]
                   [--hvswitch-args ARGS]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from harness import start_bridge, stop_bridge  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """{thread name: CPU seconds (user + system)} of the process's threads."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            head, tail = f.read().rsplit(")", 1)
        name = head.split("(", 1)[1]
        fields = tail.split()
        out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) / TICKS
    return out


def measure(mode, seconds, cpu, extra):
    sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "memif", "")],
                              extra=[f"--idle={mode}", f"--lcores={cpu}"] + extra)
    try:
        time.sleep(1)  # link-up, the guests' own start
        core = str(cpu)
        before, start = thread_cpu(sw.proc.pid), time.monotonic()
        slept0 = sw.value("hvswitch_core_sleep_seconds_total", core=core) or 0
        wakeups0 = sw.value("hvswitch_core_wakeups_total", core=core, cause="timer") or 0
        time.sleep(seconds)
        after, elapsed = thread_cpu(sw.proc.pid), time.monotonic() - start
        slept = (sw.value("hvswitch_core_sleep_seconds_total", core=core) or 0) - slept0
        wakeups = (sw.value("hvswitch_core_wakeups_total", core=core, cause="timer") or 0) - wakeups0
    finally:
        stop_bridge(sw, guests)
    used = {name: after[name] - before.get(name, 0) for name in after}
    worker = sum(v for name, v in used.items() if name.startswith("rte-worker"))
    others = sum(v for name, v in used.items() if not name.startswith("rte-worker"))
    return {"worker_pct": 100 * worker / elapsed, "others_pct": 100 * others / elapsed,
            "slept_pct": 100 * slept / elapsed, "wakeups_per_s": wakeups / elapsed}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="poll,sleep")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--switch-cpu", type=int, default=1)
    ap.add_argument("--hvswitch-args", default="")
    args = ap.parse_args()
    modes = args.modes.split(",")
    runs = {m: [] for m in modes}
    for r in range(args.rounds):
        for mode in modes if r % 2 == 0 else reversed(modes):
            result = measure(mode, args.seconds, args.switch_cpu, args.hvswitch_args.split())
            runs[mode].append(result)
            print(f"round {r} {mode:6} " + "  ".join(f"{k} {v:.2f}" for k, v in result.items()),
                  flush=True)
    print(f"\nmedians over {args.rounds} rounds of {args.seconds:.0f} s, two guests attached, "
          "no traffic:")
    print(f"{'mode':6} {'worker CPU %':>12} {'other threads %':>15} {'slept %':>8} "
          f"{'wake-ups/s':>11}")
    for mode in modes:
        med = {k: statistics.median(run[k] for run in runs[mode]) for k in runs[mode][0]}
        print(f"{mode:6} {med['worker_pct']:12.2f} {med['others_pct']:15.2f} "
              f"{med['slept_pct']:8.1f} {med['wakeups_per_s']:11.0f}")


if __name__ == "__main__":
    main()
