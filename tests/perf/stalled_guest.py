#!/usr/bin/env python3
"""Stalled-guest impact: what one guest that stops draining its ring costs the others.

Two hvswitch set-ups take turns in alternating slices (see loopback.py: this VM's speed
drifts too much for anything else):

  without:  ports p0, p1 and the loop guest (dpdk-testpmd, mac forwarding) on them
  stalled:  the same, plus port s with a guest that connected and never polls (a VM whose
            vCPUs stopped): its ring is full, every frame for it is refused

The loop guest's port 0 sends broadcasts (they flood to p1, and in the stalled set-up to
s as well); port 1 answers port 0 by unicast. So half the frames the switch forwards try
the stalled guest too. Reported: the loop guest's received Mpps in each set-up, their
ratio per round (stalled / without), switch core busy cycles per forwarded packet, and
the frames hvswitch dropped for s (reason queue_full) per packet the loop guest received.

usage: stalled_guest.py [--kind vhost-user|memif] [--size 64] [--rounds 5] [--slice 3]
                        [--quota N]   (s gets quota=N; 0: none)
"""
import argparse
import os
import re
import statistics
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import loopback as lb  # noqa: E402

BCAST = "ff:ff:ff:ff:ff:ff"
STALLED_MAC = "02:00:00:00:01:5a"


def scrape(metrics_port, name, **labels):
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
        text = r.read().decode()
    total = 0.0
    for m in re.finditer(rf"^{name}\{{([^}}]*)\}} (\S+)$", text, re.M):
        if all(f'{k}="{v}"' in m.group(1) for k, v in labels.items()):
            total += float(m.group(2))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=["vhost-user", "memif"], default="vhost-user")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--slice", type=float, default=3.0)
    ap.add_argument("--switch-cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--guest-cpu", type=int, default=0)
    ap.add_argument("--quota", type=int, default=0)
    args = ap.parse_args()
    tun = argparse.Namespace(burst=32, descriptors=1024, tx_flush_us=0, guest_burst=32, seed=8)

    quota = f",quota={args.quota}" if args.quota else ""
    without = lb.Setup("without", args.kind, "hvswitch", tun, peer0=BCAST)
    stalled = lb.Setup("stalled", args.kind, "hvswitch", tun, peer0=BCAST,
                       extra_ports=[f"s,type=vhost-user,path={{dir}}/s.sock{quota}"])
    try:
        without.launch(args.switch_cpu, args.guest_cpu, args.size)
        without.pause()
        stalled.launch(args.switch_cpu, args.guest_cpu, args.size)
        # The stalled guest: its device is started (link up, rings posted), its
        # forwarding never is, so nothing ever takes frames off its ring.
        sg = lb.Testpmd([f"--lcores=0@{args.guest_cpu},1@{args.guest_cpu}",
                         f"--file-prefix=hvs-perf-stuckguest-{os.getpid()}",
                         f"--vdev=net_virtio_user0,path={stalled.dir}/s.sock,mac={STALLED_MAC}"],
                        ["--forward-mode=rxonly"])
        deadline = time.monotonic() + 30
        while scrape(stalled.metrics_port, "hvswitch_port_up", port="s") != 1:
            if time.monotonic() > deadline:
                raise RuntimeError("the stalled guest did not connect")
            time.sleep(0.2)
        stalled.watch = lambda: scrape(stalled.metrics_port, "hvswitch_port_transmit_drop_total",
                                       port="s", reason="queue_full")
        stalled.pause()
        print(f"# {args.kind} loop guest, {args.size}-byte frames, half of them broadcasts; "
              f"{args.rounds} rounds of {args.slice}s slices; switch on CPU "
              f"{args.switch_cpu}, guests on CPU {args.guest_cpu}; s quota {args.quota or 'none'}")
        rates = {"without": [], "stalled": []}
        cycles = {"without": [], "stalled": []}
        ratios, drops_per_packet = [], []
        for r in range(args.rounds):
            a, ca = without.measure(args.slice)
            b, cb = stalled.measure(args.slice)
            rates["without"].append(a)
            rates["stalled"].append(b)
            cycles["without"].append(ca)
            cycles["stalled"].append(cb)
            ratios.append(b / a if a else float("nan"))
            drops_per_packet.append(stalled.watched / max(b * 1e6 * args.slice, 1))
            print(f"round {r + 1}: without {a:6.2f} Mpps {ca:6.0f} cyc/pkt   stalled "
                  f"{b:6.2f} Mpps {cb:6.0f} cyc/pkt   ratio {ratios[-1]:.2f}   "
                  f"dropped for s per loop packet {drops_per_packet[-1]:.2f}", flush=True)
        print(f"median: without {statistics.median(rates['without']):.2f} Mpps, stalled "
              f"{statistics.median(rates['stalled']):.2f} Mpps; per-round ratio stalled / "
              f"without: median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, "
              f"max {max(ratios):.2f})")
        print(f"switch core busy cycles per packet (median): without "
              f"{statistics.median(cycles['without']):.0f}, stalled "
              f"{statistics.median(cycles['stalled']):.0f}")
        print(f"s: frames dropped for it (queue_full) per packet the loop guest received "
              f"(median) {statistics.median(drops_per_packet):.2f}")
    finally:
        lb.cleanup()


if __name__ == "__main__":
    sys.exit(main())
