#!/usr/bin/env python3
"""Duty cycle per --idle mode (issue 16, benchmark 4): traffic --on seconds on, --off
seconds off (1 and 1) for --seconds (60) between two guest ports of hvswitch; per mode the
frames sent against the frames received (lost must be 0) and the worker thread's CPU share
over the run next to the share of time traffic was on and the worker's busy share.

The traffic is guest_latency.py's probe set-up (idle_latency.probe_setup): one hvs_guest
owns both guest ports (two virtio-user or memif clients, --kind), and each on-period is
one `latency DST SRC N RATE` run: N = RATE x --on probes paced at --rate frames/s out of
port 0, read back on port 1 (so every on-period also yields one-way latency figures; its
first probe finds the worker after --off seconds of nothing, less the 20 ms of the
learning broadcast the guest sends first). The pacing is hvs_guest's, so the offered load
is the same in every mode. Per run:

  sent, lost      probes port 0 took, and those of them port 1 never got (must be 0);
                  a probe later than the 200 ms hvs_guest waits after an on-period's last
                  send counts as late if it comes in the next on-period, as lost if it
                  comes during an off-period (hvs_guest drops what arrives between runs);
  drops           frames hvswitch dropped (its receive and transmit drop counters, every
                  port and reason): what of the lost the switch itself dropped;
  refused         probes port 0's ring did not take (the worker let the guest's ring fill:
                  backpressure, not loss; hvs_guest goes on with its schedule);
  on %            time traffic was on (the runs' first-to-last send) over the whole run;
  busy %          the worker's busy TSC cycles (rounds that received frames and their work)
                  over all its cycles: the CPU forwarding itself needs at that rate;
  worker CPU %    the worker thread's CPU time (/proc/PID/task/TID/stat, rte-worker-N);
                  poll: ~100; an ideal idle mode: about on % (a worker spins through an
                  on-period whose frames come closer than its 50 us quiet time) plus its
                  idle cost for the rest;
  wake-ups/s, slept %   from hvswitch's metrics (every wake-up cause);
  p99 / max       median over the on-periods of each one's p99, and the largest max.

--rate: frames/s the guests sustain without loss in poll mode on this VM in its slow
phases (checked with short runs: see --help's default); raise it only after a poll run
shows lost and refused 0 at the new rate.

The modes take turns round by round (a fresh switch and guest each time, the order
reversed every other round): this VM's speed swings up to 5x between phases.
Timing is this benchmark's purpose; nothing here is a pass/fail test. Run it under the
CPU lock (poll mode spins):

    flock /tmp/cpu-bench.lock python3 tests/perf/duty_cycle.py --kind vhost-user
    flock /tmp/cpu-bench.lock python3 tests/perf/duty_cycle.py --kind memif \\
        --modes poll,sleep,interrupt --rounds 3 --seconds 60 --rate 100000

usage: duty_cycle.py [--kind vhost-user|memif] [--modes poll,sleep,interrupt]
                     [--rounds 3] [--seconds 60] [--on 1] [--off 1] [--rate 100000]
                     [--size 64] [--hvswitch-args ARGS]
"""
import argparse
import os
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.dirname(__file__))
import guest_latency  # noqa: E402  (DST, SRC)
import harness  # noqa: E402  (parse_metrics)
import idle_cpu  # noqa: E402  (thread_cpu, split_cpu, core_totals)
import idle_latency  # noqa: E402  (probe_setup)
import loopback  # noqa: E402  (metrics_text, cleanup)


DROPS = {"hvswitch_port_receive_drop_total": "rx", "hvswitch_port_transmit_drop_total": "tx"}


def switch_counters(sw):
    """hvswitch's worker totals (idle_cpu.core_totals) and its frames dropped, by
    "PORT/rx|tx/REASON" (its receive and transmit drop counters)."""
    metrics = harness.parse_metrics(loopback.metrics_text(sw.metrics_port))
    drops = {}
    for (name, labels), v in metrics.items():
        if name in DROPS:
            label = dict(labels)
            drops[f"{label.get('port')}/{DROPS[name]}/{label.get('reason')}"] = v
    return idle_cpu.core_totals(metrics), drops


def on_period(guest, args):
    """One on-period: hvs_guest's answer to a paced latency run of --on seconds."""
    count = max(1, int(args.rate * args.on))
    answer = guest.command(f"latency {guest_latency.DST} {guest_latency.SRC} {count} "
                           f"{int(args.rate)} {args.size - 4}", timeout=args.on + 60)
    answer["offered"] = count
    return answer


def duty_run(mode, args):
    """hvswitch in `mode` through --seconds of on/off cycles: the run's figures."""
    cycles = max(1, round(args.seconds / (args.on + args.off)))
    with idle_latency.probe_setup(mode, args) as (sw, guest):
        pid = sw.proc.pid
        cpu0, (core0, drops0), t0 = (idle_cpu.thread_cpu(pid), switch_counters(sw),
                                     time.monotonic())
        periods = []
        for _ in range(cycles):
            periods.append(on_period(guest, args))
            time.sleep(args.off)  # nothing from the guest meanwhile: it only polls
        cpu1, (core1, drops1), elapsed = (idle_cpu.thread_cpu(pid), switch_counters(sw),
                                          time.monotonic() - t0)
    worker, others = idle_cpu.split_cpu(cpu0, cpu1, idle_cpu.HVSWITCH_WORKER)
    d = {k: core1[k] - core0[k] for k in core0}
    drops = {k: v - drops0.get(k, 0) for k, v in drops1.items() if v > drops0.get(k, 0)}
    sent = sum(p["sent"] for p in periods)
    # A probe later than the 200 ms hvs_guest waits after a run's last send is "foreign"
    # to the next run (the first run's foreign ones are the warm-up's).
    late = sum(p["foreign"] for p in periods[1:])
    return {
        "sent": sent,
        "lost": sent - sum(p["received"] for p in periods) - late,
        "late": late,
        "drops": sum(drops.values()),
        "drop_reasons": drops,
        "refused": sum(p["offered"] - p["sent"] for p in periods),
        "on_pct": 100 * sum(p["seconds"] for p in periods) / elapsed,
        # busy + idle cycles cover the worker's whole loop, sleeps included.
        "busy_pct": 100 * d["busy_cycles"] / max(d["busy_cycles"] + d["idle_cycles"], 1),
        "worker_pct": 100 * worker / elapsed,
        "others_pct": 100 * others / elapsed,
        "slept_pct": 100 * d["slept_s"] / elapsed,
        "wakeups_per_s": d["wakeups"] / elapsed,
        "p99_ns": statistics.median(p["p99_ns"] for p in periods),
        "max_ns": max(p["max_ns"] for p in periods),
    }


COLUMNS = [("sent", "sent", 10, 0), ("lost", "lost", 6, 0), ("late", "late", 5, 0),
           ("drops", "drops", 6, 0), ("refused", "refused", 8, 0),
           ("on_pct", "on %", 6, 1), ("busy_pct", "busy %", 7, 2),
           ("worker_pct", "worker CPU %", 12, 1), ("others_pct", "others %", 8, 1),
           ("slept_pct", "slept %", 7, 1), ("wakeups_per_s", "wake-ups/s", 10, 0),
           ("p99_ns", "p99 ns", 9, 0), ("max_ns", "max ns", 9, 0)]


def print_summary(runs, modes, args):
    print(f"\n{args.kind}, {args.size} B at {args.rate:.0f} frames/s, {args.on:g} s on / "
          f"{args.off:g} s off for {args.seconds:g} s; medians over {args.rounds} rounds "
          "(lost, late, drops, refused: totals):")
    print(f"{'mode':10} " + " ".join(f"{title:>{w}}" for _, title, w, _ in COLUMNS)
          + f" {'CPU/on':>6} {'CPU/poll':>8}")
    poll_cpu = statistics.median(r["worker_pct"] for r in runs["poll"]) if "poll" in runs else None
    for mode in modes:
        med = {k: statistics.median(r[k] for r in runs[mode]) for k, _, _, _ in COLUMNS}
        for total in ("lost", "late", "drops", "refused"):
            med[total] = sum(r[total] for r in runs[mode])
        line = " ".join(f"{med[k]:{w}.{p}f}" for k, _, w, p in COLUMNS)
        vs_poll = f"{med['worker_pct'] / poll_cpu:8.2f}" if poll_cpu else f"{'-':>8}"
        print(f"{mode:10} {line} {med['worker_pct'] / max(med['on_pct'], 1e-9):6.2f} {vs_poll}")
    lost = {m: sum(r["lost"] for r in runs[m]) for m in modes}
    print("frames lost: " + ", ".join(f"{m} {n}" for m, n in lost.items())
          + ("  (target 0: met)" if not any(lost.values()) else "  (target 0: MISSED)"))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    idle_latency.add_probe_args(ap, rounds=3)
    ap.add_argument("--seconds", type=float, default=60, help="per run: on/off cycles")
    ap.add_argument("--on", type=float, default=1.0)
    ap.add_argument("--off", type=float, default=1.0)
    ap.add_argument("--rate", type=float, default=100000, help="frames/s while on")
    args = ap.parse_args()
    args.frame = args.size - 4  # probe_setup's warm-up probes; hvs_guest sizes lack the FCS
    return args


def main():
    args = parse_args()
    modes = args.modes.split(",")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    # A bound on the whole run: each run is --seconds plus start, warm-up and stop.
    signal.signal(signal.SIGALRM, lambda *_: sys.exit("duty_cycle.py: over its time budget"))
    signal.alarm(int(2 * args.rounds * len(modes) * (args.seconds * 1.5 + 60) + 120))
    runs = {m: [] for m in modes}
    try:
        for r, mode in loopback.turns(modes, args.rounds):
            result = duty_run(mode, args)
            runs[mode].append(result)
            print(f"round {r} {mode:10} " + "  ".join(
                f"{k} {v:.{p}f}" for k, _, _, p in COLUMNS for v in [result[k]])
                + "".join(f"  drops {k} {v:.0f}" for k, v in result["drop_reasons"].items()),
                flush=True)
    finally:
        loopback.cleanup()
    print_summary(runs, modes, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
