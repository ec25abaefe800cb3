#!/usr/bin/env python3
"""The many-MAC loopback table: hvswitch against dpdk-testpmd io-forwarding and Open
vSwitch-DPDK, at several frame sizes, port kinds, MAC counts and traffic patterns.

Each configuration is one run of tests/perf/loopback.py (alternating slices of hvswitch,
testpmd-io and OVS on the same ports and generator; see its docstring) under
`flock LOCK`, one configuration per lock, so that others sharing the CPUs get turns between
configurations. Each run's slices go to DIR/<configuration>.json (kept: an interrupted
sweep goes on where it stopped with --skip-existing, and --table-only rebuilds the table
from whatever DIR holds). Then one markdown table from every JSON file in DIR: medians over
rounds of Mpps and of switch-core busy cycles per packet, and the ratios hvswitch /
testpmd-io and hvswitch / OVS as the median of per-round ratios (min-max).

    python3 tests/perf/scale_table.py --out /tmp/scale --kinds vhost-user,memif \\
        --sizes 64 --macs 1,1000,100000,1000000 --patterns random,runs --rounds 20
    HVSWITCH=/work/wt-fast/build/switch/hvswitch python3 tests/perf/scale_table.py ...

--macs 1 is the 2-MAC row (loopback.py's testpmd mac-forwarding guest, one MAC per side;
no pattern); above 1, MACs per side through hvs_guest's generator. HVSWITCH (environment)
or --hvswitch chooses the hvswitch binary measured.
"""
import argparse
import glob
import json
import os
import signal
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SWITCHES = ("hvswitch", "testpmd-io", "ovs")


def config_name(kind, size, macs, pattern):
    return f"{kind}-{size}-{macs}-{pattern if macs > 1 else 'mac'}"


def run_config(args, kind, size, macs, pattern, path):
    cmd = [sys.executable, os.path.join(HERE, "loopback.py"), "--kind", kind, "--size", str(size),
           "--rounds", str(args.rounds if size == 64 else args.rounds_large),
           "--slice", str(args.slice), "--against", args.against, "--json", path]
    if macs > 1:
        cmd += ["--macs", str(macs), "--pattern", pattern]
    cmd += args.loopback_args.split()
    if args.lock:
        cmd = ["flock", args.lock] + cmd
    env = dict(os.environ)
    if args.hvswitch:
        env["HVSWITCH"] = args.hvswitch
    print("$ " + " ".join(cmd), flush=True)
    # A session of its own: on a timeout, loopback.py (under flock) is told to stop by its
    # process group, and cleans up what it started.
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)
        out, _ = p.communicate()
        out += "\nscale_table.py: timed out\n"
    with open(path[:-5] + ".log", "w") as f:
        f.write(out)
    for line in out.splitlines():
        if line.startswith(("median", "switch core", "generator", "#", "Traceback",
                            "RuntimeError")):
            print("  " + line, flush=True)
    return p.returncode == 0


def fmt_ratio(values):
    if not values:
        return "—"
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def fmt_mpps(v):
    return "—" if v is None else (f"{v:.2f}" if v >= 0.1 else f"{v:.3f}")


def table(files):
    rows = []
    for path in files:
        with open(path) as f:
            d = json.load(f)
        rounds = d["rounds"]
        if not rounds:
            continue
        med, cyc = {}, {}
        for s in SWITCHES:
            if s in rounds[0]:
                med[s] = statistics.median(r[s]["mpps"] for r in rounds)
                cyc[s] = statistics.median(r[s]["cycles"] for r in rounds)
        ratio = {s: [r["hvswitch"]["mpps"] / r[s]["mpps"] for r in rounds
                     if s in r and r[s]["mpps"] > 0] for s in ("testpmd-io", "ovs")}
        share = statistics.median(r["hvswitch"].get("gen_share", 0) for r in rounds)
        learned = d.get("learned", {})
        want = 2 * d["macs"]
        notes = [f"OVS knew {learned['ovs']:,} of {want:,} MACs"
                 for _ in [0] if learned.get("ovs") is not None and learned["ovs"] < want]
        if learned.get("hvswitch") is not None and learned["hvswitch"] < want:
            notes.append(f"hvswitch knew {learned['hvswitch']:,} of {want:,}")
        rows.append(((d["size"], d["kind"], d["macs"], d["pattern"]), [
            f"{d['size']} B", d["kind"], "1 (2 MACs)" if d["macs"] <= 1 else f"{d['macs']:,}",
            "—" if d["macs"] <= 1 else d["pattern"],
            " / ".join(fmt_mpps(med.get(s)) for s in SWITCHES),
            " / ".join("—" if s not in cyc else f"{cyc[s]:.0f}" for s in SWITCHES),
            fmt_ratio(ratio["testpmd-io"]), fmt_ratio(ratio["ovs"]), str(len(rounds)),
            "—" if d["macs"] <= 1 else f"{100 * share:.1f} %",
            "; ".join(notes)]))
    rows.sort(key=lambda r: (r[0][0], r[0][1] != "vhost-user", r[0][2], r[0][3]))
    out = ["| frame | ports | MACs per side | pattern | Mpps: hvswitch / testpmd-io / OVS "
           "| busy cycles/packet: hvswitch / testpmd-io / OVS | hvswitch / testpmd-io "
           "| hvswitch / OVS | rounds | generator's share of guest core | notes |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(cells) + " |" for _, cells in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory for per-configuration JSON")
    ap.add_argument("--kinds", default="vhost-user,memif")
    ap.add_argument("--sizes", default="64,1518")
    ap.add_argument("--macs", default="1,1000,100000,1000000")
    ap.add_argument("--patterns", default="random,runs")
    ap.add_argument("--rounds", type=int, default=20, help="at 64 B")
    ap.add_argument("--rounds-large", type=int, default=8, help="at other sizes")
    ap.add_argument("--slice", type=float, default=1.0)
    ap.add_argument("--against", default="testpmd-io,ovs")
    ap.add_argument("--lock", default="/tmp/cpu-bench.lock", help="'' for none")
    ap.add_argument("--hvswitch", default="", help="hvswitch binary (else HVSWITCH)")
    ap.add_argument("--loopback-args", default="", help="more loopback.py arguments")
    ap.add_argument("--timeout", type=int, default=1800, help="per configuration, seconds")
    ap.add_argument("--skip-existing", action="store_true")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = []
    if not args.table_only:
        for size in [int(x) for x in args.sizes.split(",")]:
            for kind in args.kinds.split(","):
                for macs in [int(x) for x in args.macs.split(",")]:
                    for pattern in (args.patterns.split(",") if macs > 1 else ["mac"]):
                        name = config_name(kind, size, macs, pattern)
                        path = os.path.join(args.out, name + ".json")
                        if args.skip_existing and os.path.exists(path):
                            continue
                        if not run_config(args, kind, size, macs, pattern, path):
                            failed.append(name)
    print(table(sorted(glob.glob(os.path.join(args.out, "*.json")))))
    if failed:
        print(f"failed: {', '.join(failed)} (logs in {args.out})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
