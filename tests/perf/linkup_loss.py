#!/usr/bin/env python3
"""Frames lost at a guest's link-up: hvswitch with two ports, one hvs_guest owning both
guest ends (two virtio-user or memif clients), --reconnects times its `linkup` command
(tests/guest/linkup_probe.h): the receiving port is unplugged (its device closed and
removed: the guest's driver gone, its socket closed), a paced stream of numbered frames
goes from port 0 to a MAC nobody sends from (unknown unicast: flooded), the receiving
port is plugged back (probed and started: it reconnects), and the stream goes on after
the receiver's own driver reports its link up.

Lost at link-up: frames handed to the sending port after the receiver's driver first
reported its link up (one TSC for both) that never arrived. The switch's own counters are
read around every reconnect: p0's no_destination (flooded with no other port up: the
frames sent while p1 was down, and any the switch still flooded to nobody after p1's link
was up) and p1's link_down / queue_full (frames for p1 that were not sent).

Prints one line per reconnect, then per kind: lost after link-up (total, reconnects with
any), link-up -> first frame received (median, max). Loss is a count; the latencies are
this VM's and swing with its load.

usage: linkup_loss.py [--kinds vhost-user,memif] [--reconnects 20] [--rate 20000]
                      [--after-ms 200] [--hvswitch-args ARGS]
Run it by hand under `flock /tmp/cpu-bench.lock` (it busy-polls two processes).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import guest_latency  # noqa: E402  (HVS_GUEST)
import loopback  # noqa: E402  (GuestProcess, start, stop_process, cleanup)

ROOT = loopback.ROOT
HVSWITCHCTL = os.environ.get("HVSWITCHCTL", os.path.join(ROOT, "build", "switch",
                                                         "hvswitchctl"))
SRC, DST = "02:00:00:00:0c:00", "02:00:00:00:0c:01"


class LinkUpGuest(loopback.GuestProcess):
    """hvs_guest with both ports; virtio-user rings of 1024 (the default 256 fills in a
    few milliseconds of this process being scheduled out at the stream's rate)."""

    def __init__(self, kind, sockets, cpu, tag):
        if kind == "vhost-user":
            vdevs = [f"net_virtio_user{i},path={s},queue_size=1024"
                     for i, s in enumerate(sockets)]
        else:
            vdevs = [f"net_memif{i},role=client,socket={s},socket-abstract=no"
                     for i, s in enumerate(sockets)]
        super().__init__(
            [guest_latency.HVS_GUEST, "--no-pci", "--no-huge", "-m", "256",
             f"--lcores=0@{cpu}", f"--file-prefix=hvs-linkup-{tag}-{os.getpid()}",
             "--log-level=*:error"] + [f"--vdev={v}" for v in vdevs])

    def linkup(self, rate, before_ms, after_ms):
        return self.command(f"linkup {DST} {SRC} {rate} {before_ms} {after_ms}")


class LinkUpSwitch:
    def __init__(self, kind, cpu, extra=()):
        self.dir = tempfile.mkdtemp(prefix="hvs-linkup-")
        self.sockets = [os.path.join(self.dir, f"p{i}.sock") for i in range(2)]
        self.ctl_socket = os.path.join(self.dir, "hvswitch.ctl")
        self.log = open(os.path.join(self.dir, "switch.log"), "wb")
        ports = [f"--port=p{i},type={kind},path={s}" for i, s in enumerate(self.sockets)]
        self.proc = loopback.start(
            [loopback.HVSWITCH, *ports, f"--lcores={cpu}", "--metrics_address=none",
             f"--ctl_socket={self.ctl_socket}",
             f"--eal=--no-huge -m 1024 --file-prefix=hvs-linkup-sw-{os.getpid()}", *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not all(os.path.exists(s) for s in self.sockets + [self.ctl_socket]):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("hvswitch: no sockets")
            time.sleep(0.1)

    def drops(self):
        """(p0 no_destination, p1 link_down, p1 queue_full, p1 up)"""
        r = subprocess.run([HVSWITCHCTL, f"--socket={self.ctl_socket}", "--json", "stats"],
                           capture_output=True, text=True, timeout=30, check=True)
        ports = {p["name"]: p for p in json.loads(r.stdout)["ports"]}
        return (ports["p0"]["rx_drops"]["no_destination"],
                ports["p1"]["tx_drops"]["link_down"], ports["p1"]["tx_drops"]["queue_full"],
                ports["p1"]["up"])

    def wait_up(self, timeout=30):
        deadline = time.monotonic() + timeout
        while not self.drops()[3]:
            if time.monotonic() > deadline:
                raise RuntimeError("hvswitch: p1 not up")
            time.sleep(0.05)

    def stop(self):
        loopback.stop_process(self.proc)
        self.log.close()


def run_kind(kind, args):
    """[(probe answer, switch counter deltas)] for one kind."""
    sw = LinkUpSwitch(kind, args.switch_cpu, args.hvswitch_args.split())
    guest = None
    runs = []
    try:
        guest = LinkUpGuest(kind, sw.sockets, args.guest_cpu, kind)
        sw.wait_up()
        for i in range(args.reconnects):
            before = sw.drops()
            answer = guest.linkup(args.rate, args.before_ms, args.after_ms)
            after = sw.drops()
            delta = {"no_destination": after[0] - before[0],
                     "link_down": after[1] - before[1], "queue_full": after[2] - before[2]}
            runs.append((answer, delta))
            print(f"{kind} #{i}: lost_after_up={answer['lost_after_up']} "
                  f"of {answer['sent_after_up']} (last {answer['last_lost_ns'] / 1e3:.1f} us "
                  f"after up), lost_after_first={answer['lost_after_first']}, "
                  f"received_before_up={answer['received_before_up']}, "
                  f"up {answer['up_ns'] / 1e3:.0f} us after plug-in, "
                  f"first frame {answer['first_rx_ns'] / 1e3:.1f} us after up, "
                  f"dup={answer['duplicates']} reord={answer['reordered']}; switch: "
                  f"sent {answer['sent']}, received {answer['received']}, "
                  f"no_destination {delta['no_destination']}, link_down "
                  f"{delta['link_down']}, queue_full {delta['queue_full']}", flush=True)
        return runs
    finally:
        if guest:
            guest.stop()
        sw.stop()


def summarize(kind, runs):
    lost = [a["lost_after_up"] for a, _ in runs]
    first = sorted(a["first_rx_ns"] / 1e3 for a, _ in runs)
    up = sorted(a["up_ns"] / 1e3 for a, _ in runs)
    unexplained = sum(a["sent"] - a["received"] - d["no_destination"] - d["link_down"] -
                      d["queue_full"] for a, d in runs)
    print(f"{kind}: {len(runs)} reconnects, lost after link-up {sum(lost)} frames "
          f"(in {sum(1 for x in lost if x)} reconnects, at most {max(lost)}), of "
          f"{sum(a['sent_after_up'] for a, _ in runs)} sent after link-up; lost after "
          f"the first frame arrived {sum(a['lost_after_first'] for a, _ in runs)}; "
          f"duplicates {sum(a['duplicates'] for a, _ in runs)}, reordered "
          f"{sum(a['reordered'] for a, _ in runs)}; link-up -> first frame median "
          f"{statistics.median(first):.1f} us, max {first[-1]:.1f} us; plug-in -> link-up "
          f"median {statistics.median(up):.0f} us; frames lost that the switch's drop "
          f"counters do not explain: {unexplained}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", default="vhost-user,memif")
    ap.add_argument("--reconnects", type=int, default=20)
    ap.add_argument("--rate", type=int, default=20000, help="frames/s of the stream")
    ap.add_argument("--before-ms", type=int, default=50)
    ap.add_argument("--after-ms", type=int, default=200)
    ap.add_argument("--switch-cpu", type=int, default=1)
    ap.add_argument("--guest-cpu", type=int, default=0)
    ap.add_argument("--hvswitch-args", default="")
    args = ap.parse_args()
    results = {}
    try:
        for kind in args.kinds.split(","):
            results[kind] = run_kind(kind, args)
    finally:
        loopback.cleanup()
    for kind, runs in results.items():
        summarize(kind, runs)


if __name__ == "__main__":
    main()
