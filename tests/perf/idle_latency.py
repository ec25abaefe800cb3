#!/usr/bin/env python3
"""Wake-up latency per --idle mode (issue 16, benchmark 3): what a worker's sleeping costs
the frames that find it asleep.

The probe set-up is guest_latency.py's: one hvs_guest owns both guest ports (two
virtio-user or memif clients, --kind) on --guest-cpu, sends TSC-stamped probes on port 0
and reads them back on port 1 (one-way latency, one TSC); hvswitch runs on --switch-cpu
with --idle=MODE. The modes take turns round by round (a fresh switch and guest each
time), the order reversed every other round, because this VM's speed swings up to 5x
between phases: only figures taken close together compare.

(a) First frame after idle: `latency DST SRC N 1`, N (--first-frames) probes one second
    apart, so that each finds the switch idle for a second. The guest sends a learning
    broadcast 20 ms before a run's first probe, so one probe in N finds it idle for 20 ms
    only (all the others for 1 s); hvs_guest returns percentiles, not samples, so per round
    the median and the max of the N are reported (its p99 of fewer than 100 is the max).
(b) Load: guest_latency.run_round at --loads fractions of the saturation rate (measured
    once, in the first mode's first run, or given with --saturation PPS), the same
    absolute rates for every mode: p50/p99/p99.9 one way, and the p99 bucket of hvswitch's
    residence histogram (the switch's own share).

Summary: medians over rounds per mode, and what each mode adds to poll's p99 (and to the
first frame's median): the median over rounds of the per-round differences, since a
round's modes run back to back. Issue 16's target: p99 added by sleep <= 50 us at any
load.

Timing is this benchmark's purpose; nothing here is a pass/fail test. Run it under the
CPU lock (poll mode spins):

    flock /tmp/cpu-bench.lock python3 tests/perf/idle_latency.py --kind vhost-user
    flock /tmp/cpu-bench.lock python3 tests/perf/idle_latency.py --kind memif \\
        --modes poll,sleep,interrupt --rounds 5 --first-frames 10 --loads 0.01,0.1,0.5

usage: idle_latency.py [--kind vhost-user|memif] [--modes poll,sleep,interrupt]
                       [--rounds 5] [--first-frames 10] [--loads 0.01,0.1,0.5]
                       [--seconds 2] [--size 64] [--saturation PPS]
                       [--parts first,loads] [--hvswitch-args ARGS]
HVSWITCH and HVS_GUEST (environment) are the binaries, as for guest_latency.py.
"""
import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import guest_latency  # noqa: E402  (Switch, ProbeGuest, run_round, DST, SRC)
import loopback  # noqa: E402  (cleanup)


def mode_args(mode, args):
    """args for guest_latency.run_round with hvswitch in `mode`."""
    a = argparse.Namespace(**vars(args))
    a.hvswitch_args = f"--idle={mode} {args.hvswitch_args}".strip()
    return a


@contextlib.contextmanager
def probe_setup(mode, args):
    """hvswitch in `mode` and a probe guest whose probes arrive (links up, DST learned);
    both stopped by PID on the way out."""
    sw = guest_latency.Switch("hvswitch", args.kind, args.switch_cpu, args.guest_cpu,
                              mode_args(mode, args).hvswitch_args.split())
    guest = None
    try:
        time.sleep(0.5)
        guest = guest_latency.ProbeGuest(args.kind, sw.sockets, args.guest_cpu, f"idle-{mode}")
        deadline = time.monotonic() + 30
        while guest.latency(100, 10000, args.frame)["received"] < 100:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{mode}: probes do not arrive")
        yield sw, guest
    finally:
        if guest:
            guest.stop()
        sw.stop()


def first_frames(mode, args):
    """(a): N probes a second apart; hvs_guest's answer (p50_ns, max_ns, sent, received)."""
    with probe_setup(mode, args) as (_, guest):
        return guest.command(f"latency {guest_latency.DST} {guest_latency.SRC} "
                             f"{args.first_frames} 1 {args.frame}",
                             timeout=args.first_frames + 60)


def loads(mode, args, rates):
    """(b): {label: answer} for saturation and each of `rates`."""
    return dict(guest_latency.run_round("hvswitch", mode_args(mode, args), rates, args.frame))


def saturation_rates(args, modes):
    """[(label, frames/s)] at --loads fractions of --saturation, or of the saturation
    measured with the first mode."""
    sat = args.saturation
    if not sat:
        answer = guest_latency.run_round("hvswitch", mode_args(modes[0], args), [],
                                         args.frame)[0][1]
        sat = answer["received"] / max(answer["seconds"], 1e-9)
    rates = [(f"{f * 100:g}%", f * sat) for f in args.loads]
    print(f"saturation {sat / 1e6:.3f} Mpps ({'given' if args.saturation else modes[0]}): "
          + ", ".join(f"{l} = {r / 1e6:.4f} Mpps" for l, r in rates), flush=True)
    return rates


def median_of(answers, key):
    return statistics.median(a[key] for a in answers)


def added(results, mode, base, key):
    """Median over rounds of results[mode][r][key] - results[base][r][key] (None without
    `base`)."""
    if base not in results or mode == base:
        return None
    return statistics.median(m[key] - b[key] for m, b in zip(results[mode], results[base]))


def fmt(value):
    return "-" if value is None else f"{value:.0f}"


def print_first(first, modes, args):
    print(f"\n(a) first frame after 1 s idle, {args.kind}, {args.size} B: one-way ns, "
          f"medians over {args.rounds} rounds of {args.first_frames} probes")
    print(f"{'mode':10} {'lost':>5} {'median':>8} {'max':>8} {'median +poll':>13}")
    for mode in modes:
        runs = first[mode]
        lost = sum(a["sent"] - a["received"] for a in runs)
        print(f"{mode:10} {lost:5d} {median_of(runs, 'p50_ns'):8.0f} "
              f"{median_of(runs, 'max_ns'):8.0f} {fmt(added(first, mode, 'poll', 'p50_ns')):>13}")


def print_loads(by_label, modes, labels, args):
    print(f"\n(b) latency under load, {args.kind}, {args.size} B: one-way ns, medians over "
          f"{args.rounds} rounds; +poll: median over rounds of (mode - poll)")
    print(f"{'load':10} {'mode':10} {'Mpps':>7} {'lost':>6} {'p50':>8} {'p99':>8} "
          f"{'p99.9':>8} {'res.p99<=':>9} {'p50 +poll':>9} {'p99 +poll':>9}")
    for label in labels:
        results = by_label[label]
        for mode in modes:
            runs = results[mode]
            mpps = statistics.median(a["received"] / max(a["seconds"], 1e-9) for a in runs) / 1e6
            lost = statistics.median(a["sent"] - a["received"] for a in runs)
            res = [a["residence_p99_le_ns"] for a in runs if a.get("residence_p99_le_ns")]
            print(f"{label:10} {mode:10} {mpps:7.3f} {lost:6.0f} {median_of(runs, 'p50_ns'):8.0f} "
                  f"{median_of(runs, 'p99_ns'):8.0f} {median_of(runs, 'p999_ns'):8.0f} "
                  f"{fmt(statistics.median(res) if res else None):>9} "
                  f"{fmt(added(results, mode, 'poll', 'p50_ns')):>9} "
                  f"{fmt(added(results, mode, 'poll', 'p99_ns')):>9}")
    for mode in modes:
        worst = [added(by_label[l], mode, "poll", "p99_ns") for l in labels[1:]]
        if None not in worst and worst:
            print(f"{mode}: p99 added to poll's at most {max(worst) / 1000:.1f} us over the "
                  f"loads (issue 16's target for sleep: <= 50 us)")


def budget(args, modes):
    """A generous bound on the whole run (s): SIGALRM stops it, the switches with it."""
    per_run = 15 + (args.first_frames if "first" in args.parts else 0)
    if "loads" in args.parts:
        per_run += 15 + len(args.loads) * (args.seconds + 1)
    return int(3 * args.rounds * len(modes) * per_run + 300)


def add_probe_args(ap, rounds):
    """The options of a run of the probe set-up per --idle mode (here and duty_cycle.py)."""
    ap.add_argument("--kind", choices=["vhost-user", "memif"], default="vhost-user")
    ap.add_argument("--modes", default="poll,sleep,interrupt", help="hvswitch --idle modes")
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--size", type=int, default=64, help="with the FCS (RFC 2544)")
    ap.add_argument("--switch-cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--guest-cpu", type=int, default=0)
    ap.add_argument("--hvswitch-args", default="", help="more hvswitch options")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_probe_args(ap, rounds=5)
    ap.add_argument("--first-frames", type=int, default=10, help="(a): probes per run, 1 s apart")
    ap.add_argument("--loads", default="0.01,0.1,0.5", help="(b): fractions of saturation")
    ap.add_argument("--seconds", type=float, default=2.0, help="(b): per load")
    ap.add_argument("--saturation", type=float, default=0,
                    help="(b): frames/s the loads are fractions of (default: measured)")
    ap.add_argument("--saturation-count", type=int, default=1000000,
                    help="probes of run_round's saturation run, every run")
    ap.add_argument("--parts", default="first,loads", help="which of (a) first, (b) loads")
    args = ap.parse_args()
    args.loads = [float(x) for x in args.loads.split(",")]
    args.parts = args.parts.split(",")
    args.frame = args.size - 4  # hvs_guest's sizes are without the FCS
    return args


def main():
    args = parse_args()
    modes = args.modes.split(",")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    signal.signal(signal.SIGALRM, lambda *_: sys.exit("idle_latency.py: over its time budget"))
    signal.alarm(budget(args, modes))
    first = {m: [] for m in modes}
    by_label = {}  # label -> mode -> [answers], one per round
    try:
        rates = saturation_rates(args, modes) if "loads" in args.parts else []
        for r, mode in loopback.turns(modes, args.rounds):
            if "first" in args.parts:
                first[mode].append(first_frames(mode, args))
                print(f"round {r} {mode:10} first-frames {json.dumps(first[mode][-1])}",
                      flush=True)
            if "loads" in args.parts:
                for label, answer in loads(mode, args, rates).items():
                    by_label.setdefault(label, {m: [] for m in modes})[mode].append(answer)
                    print(f"round {r} {mode:10} {label:10} {json.dumps(answer)}", flush=True)
    finally:
        loopback.cleanup()
    if "first" in args.parts:
        print_first(first, modes, args)
    if "loads" in args.parts:
        print_loads(by_label, modes, ["saturation"] + [l for l, _ in rates], args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
