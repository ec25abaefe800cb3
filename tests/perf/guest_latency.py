#!/usr/bin/env python3
"""One-way latency through the switch at low, medium and near-saturation load: hvswitch
against dpdk-testpmd io-forwarding on the same kind of ports.

One hvs_guest process owns both guest ports (two virtio-user or memif clients) on
--guest-cpu, so sender and receiver read one TSC and no scheduler sits between them: its
`latency` command sends frames stamped as they are handed to port 0 at a paced rate and
reads them back on port 1 (tests/guest/latency_probe.h). Every frame is a probe, so the
rate is the load. The switch runs on --switch-cpu.

Per round and switch (taking turns, a fresh switch and guest each time, because this VM's
speed drifts): the saturation rate (probes sent as fast as the guest's port takes them:
received / seconds), then runs at --loads fractions of hvswitch's saturation measured in
the first round, the same absolute rates for both switches. Prints every run, then per
load the medians over rounds of p50/p99/p99.9 and the ratio hvswitch / testpmd-io.

For hvswitch, each load also reports the p99 of its residence histogram for the probes'
egress port (`hvswitch_port_residence_seconds`, a bucket bound): the switch's own share
of the probes' time, against the one-way p99 that includes the guest's side.

Timing is this benchmark's purpose; nothing here is a pass/fail test. --smoke runs one
short round and only checks that numbers come out (CI).

usage: guest_latency.py [--kind vhost-user|memif] [--rounds 5] [--seconds 2]
                        [--loads 0.01,0.5,0.9] [--size 64] [--hvswitch-args ARGS]
                        [--smoke]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import loopback  # noqa: E402  (GuestProcess, Testpmd, start, stop_process, cleanup)

ROOT = loopback.ROOT
HVS_GUEST = os.environ.get("HVS_GUEST", os.path.join(ROOT, "build", "tests", "hvs_guest"))
SRC, DST = "02:00:00:00:0a:00", "02:00:00:00:0a:01"


class ProbeGuest(loopback.GuestProcess):
    """hvs_guest with two ports, driven over its stdin."""

    def __init__(self, kind, sockets, cpu, tag):
        if kind == "vhost-user":
            vdevs = [f"net_virtio_user{i},path={s}" for i, s in enumerate(sockets)]
        else:
            vdevs = [f"net_memif{i},role=client,socket={s},socket-abstract=no"
                     for i, s in enumerate(sockets)]
        super().__init__(
            [HVS_GUEST, "--no-pci", "--no-huge", "-m", "256", f"--lcores=0@{cpu}",
             f"--file-prefix=hvs-lat-guest-{tag}-{os.getpid()}", "--log-level=*:error"]
            + [f"--vdev={v}" for v in vdevs])

    def latency(self, count, rate, size):
        return self.command(f"latency {DST} {SRC} {count} {rate} {size}", 120)


class Switch:
    def __init__(self, name, kind, cpu, guest_cpu, extra=()):
        self.dir = tempfile.mkdtemp(prefix=f"hvs-lat-{name}-")
        self.sockets = [os.path.join(self.dir, f"p{i}.sock") for i in range(2)]
        self.log = open(os.path.join(self.dir, "switch.log"), "wb")
        self.metrics_port = None
        if name == "hvswitch":
            ports = [f"--port=p{i},type={kind},path={s}" for i, s in enumerate(self.sockets)]
            self.metrics_port = loopback.free_port()
            self.proc = loopback.start(
                [loopback.HVSWITCH, *ports, f"--lcores={cpu}",
                 f"--metrics_address=127.0.0.1:{self.metrics_port}",
                 f"--ctl_socket={self.dir}/hvswitch.ctl",
                 f"--eal=--no-huge -m 1024 --file-prefix=hvs-lat-sw-{os.getpid()}",
                 *extra],
                stdout=self.log, stderr=subprocess.STDOUT)
        else:
            if kind == "vhost-user":
                vdevs = [f"net_vhost{i},iface={s},queues=1" for i, s in enumerate(self.sockets)]
            else:
                vdevs = [f"net_memif{i},role=server,socket={s},socket-abstract=no"
                         for i, s in enumerate(self.sockets)]
            eal = [f"--lcores=0@{guest_cpu},1@{cpu}", "--single-file-segments",
                   f"--file-prefix=hvs-lat-io-{os.getpid()}"] + [f"--vdev={v}" for v in vdevs]
            self.testpmd = loopback.Testpmd(eal, ["--forward-mode=io"])
            self.testpmd.cmd("start")
            self.proc = self.testpmd.p
        deadline = time.monotonic() + 30
        while not all(os.path.exists(s) for s in self.sockets):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"{name}: no sockets")
            time.sleep(0.1)

    def residence(self):
        """hvswitch's residence histogram of port p1 (the probes' egress): {le_ns: count},
        cumulative, le_ns None for +Inf; None for testpmd."""
        if self.metrics_port is None:
            return None
        text = loopback.metrics_text(self.metrics_port)
        out = {}
        for le, v in re.findall(r'^hvswitch_port_residence_seconds_bucket\{port="p1",le="([^"]+)"\} (\S+)$',
                                text, re.M):
            out[None if le == "+Inf" else round(float(le) * 1e9)] = float(v)
        return out

    def stop(self):
        loopback.stop_process(self.proc)
        self.log.close()


def residence_p99(before, after):
    """The smallest residence bucket bound (ns) holding 99 % of the samples taken between
    two histograms (None: no samples, or beyond the last bound)."""
    total = after[None] - before[None]
    if total <= 0:
        return None
    for le in sorted(k for k in after if k is not None):
        if after[le] - before[le] >= 0.99 * total:
            return le
    return None


def run_round(name, args, rates, size):
    """One switch and guest: [(label, answer)] for saturation, then each rate."""
    sw = Switch(name, args.kind, args.switch_cpu, args.guest_cpu,
                args.hvswitch_args.split() if name == "hvswitch" else ())
    guest = None
    try:
        time.sleep(0.5)
        guest = ProbeGuest(args.kind, sw.sockets, args.guest_cpu, name)
        # Until both links are up and DST learned: probes arrive.
        deadline = time.monotonic() + 30
        while guest.latency(100, 10000, size)["received"] < 100:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: probes do not arrive")
        results = [("saturation", guest.latency(args.saturation_count, 0, size))]
        for label, rate in rates:
            count = max(1000, int(rate * args.seconds))
            before = sw.residence()
            answer = guest.latency(count, int(rate), size)
            if before is not None:  # the switch's share of the probes' time
                answer["residence_p99_le_ns"] = residence_p99(before, sw.residence())
            results.append((label, answer))
        return results
    finally:
        if guest:
            guest.stop()
        sw.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=["vhost-user", "memif"], default="vhost-user")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0, help="per load")
    ap.add_argument("--loads", default="0.01,0.5,0.9",
                    help="fractions of hvswitch's saturation rate")
    ap.add_argument("--size", type=int, default=64, help="with the FCS (RFC 2544)")
    ap.add_argument("--switch-cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--guest-cpu", type=int, default=0)
    ap.add_argument("--saturation-count", type=int, default=1000000)
    ap.add_argument("--hvswitch-args", default="",
                    help="more hvswitch options, e.g. --control_cpus=1")
    ap.add_argument("--smoke", action="store_true", help="one short round; checks numbers")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.seconds, args.saturation_count = 1, 0.2, 20000
    size = args.size - 4
    loads = [float(x) for x in args.loads.split(",")]
    table = {}  # (switch, label) -> [answers]
    rates = None
    try:
        for r in range(args.rounds):
            for name in ("hvswitch", "testpmd-io") if r % 2 == 0 else ("testpmd-io", "hvswitch"):
                if rates is None:
                    sat = run_round(name, args, [], size)[0][1]
                    sat_rate = sat["received"] / max(sat["seconds"], 1e-9)
                    rates = [(f"{int(f * 100)}%", f * sat_rate) for f in loads]
                    print(f"hvswitch saturation {sat_rate / 1e6:.3f} Mpps: rates "
                          + ", ".join(f"{l}={v / 1e6:.3f} Mpps" for l, v in rates), flush=True)
                for label, answer in run_round(name, args, rates, size):
                    table.setdefault((name, label), []).append(answer)
                    print(f"round {r} {name:10s} {label:10s} " + json.dumps(answer), flush=True)
    finally:
        loopback.cleanup()
    print(f"\n{args.kind}, {args.size} B, medians over {args.rounds} rounds (ns, one way):")
    print(f"{'load':10s} {'switch':10s} {'Mpps':>7s} {'lost':>7s} {'p50':>8s} {'p99':>8s} "
          f"{'p99.9':>8s}")
    ok = True
    for label in ["saturation"] + [l for l, _ in rates]:
        med = {}
        for name in ("hvswitch", "testpmd-io"):
            answers = table.get((name, label), [])
            if not answers:
                continue
            m = {k: statistics.median(a[k] for a in answers) for k in
                 ("p50_ns", "p99_ns", "p999_ns")}
            mpps = statistics.median(a["received"] / max(a["seconds"], 1e-9) for a in answers) / 1e6
            lost = statistics.median(a["sent"] - a["received"] for a in answers)
            med[name] = m
            print(f"{label:10s} {name:10s} {mpps:7.3f} {lost:7.0f} {m['p50_ns']:8.0f} "
                  f"{m['p99_ns']:8.0f} {m['p999_ns']:8.0f}")
            ok &= all(a["received"] > 0 and a["p50_ns"] > 0 for a in answers)
            residence = [a["residence_p99_le_ns"] for a in answers
                         if a.get("residence_p99_le_ns") is not None]
            if residence:  # hvswitch's own share: its residence histogram's p99 bucket
                print(f"{label:10s} {'':10s} residence in hvswitch, p99 <= "
                      f"{statistics.median(residence):.0f} ns (median over rounds)")
        if len(med) == 2 and med["testpmd-io"]["p99_ns"] > 0:
            print(f"{label:10s} {'ratio':10s} p50 {med['hvswitch']['p50_ns'] / max(med['testpmd-io']['p50_ns'], 1):.2f}"
                  f"  p99 {med['hvswitch']['p99_ns'] / med['testpmd-io']['p99_ns']:.2f}"
                  f"  p99.9 {med['hvswitch']['p999_ns'] / max(med['testpmd-io']['p999_ns'], 1):.2f}")
    if args.smoke and not ok:
        print("smoke: a run produced no latency figure", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
