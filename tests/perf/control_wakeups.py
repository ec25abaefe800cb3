#!/usr/bin/env python3
"""Control thread wake-ups: how often hvswitch's control thread (the process's main
thread) is switched in while the switch idles with guests attached, and how long an
hvswitchctl command takes to answer.

Wake-ups are the thread's context switches (voluntary + involuntary, from
/proc/PID/task/PID/status) over --seconds, per second. Set-ups (--setup):
  vhost   two vhost-user guests attached, idle
  memif   two vhost-user guests attached and a memif port whose guest is attached
  waiting two vhost-user guests attached and a memif port nobody connects to
Then --commands `hvswitchctl port list` are run one after the other: median and maximum
wall-clock milliseconds (the client's start included).

  flock /tmp/cpu-bench.lock python3 tests/perf/control_wakeups.py [--setup vhost]
        [--seconds 10] [--commands 50]          (root; build first)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
for var, path in (("HVSWITCH", "switch/hvswitch"), ("HVS_GUEST", "tests/hvs_guest"),
                  ("HVSWITCHCTL", "switch/hvswitchctl")):
    os.environ.setdefault(var, os.path.join(os.path.dirname(__file__), "..", "..", "build",
                                            path))
from harness import HVSWITCHCTL, Daemon, Guest, stop_bridge  # noqa: E402


def switches(pid):
    total = 0
    with open(f"/proc/{pid}/task/{pid}/status") as f:
        for line in f:
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setup", choices=["vhost", "memif", "waiting"], default="vhost")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--commands", type=int, default=50)
    args = parser.parse_args()
    ports = [("g1", "vhost-user"), ("g2", "vhost-user")]
    if args.setup != "vhost":
        ports.append(("m1", "memif"))
    sw = Daemon([f"{name},type={kind},path={{dir}}/{name}.sock" for name, kind in ports])
    sw.wait_ready()
    attached = ports if args.setup != "waiting" else ports[:2]
    guests = {name: Guest(kind, f"{sw.dir}/{name}.sock", name) for name, kind in attached}
    for name, guest in guests.items():
        guest.wait_link()
        sw.wait_port_up(name)
    time.sleep(1)  # the guests' start-up settled
    pid = sw.proc.pid
    before, start = switches(pid), time.monotonic()
    time.sleep(args.seconds)
    after, end = switches(pid), time.monotonic()
    rate = (after - before) / (end - start)
    times = []
    for _ in range(args.commands):
        t = time.monotonic()
        subprocess.run([HVSWITCHCTL, f"--socket={sw.ctl_socket}", "port", "list"], check=True,
                       capture_output=True, timeout=30)
        times.append((time.monotonic() - t) * 1000)
    print(f"setup {args.setup}: control thread {rate:.1f} wake-ups/s over {end - start:.1f} s; "
          f"hvswitchctl port list: median {statistics.median(times):.2f} ms, "
          f"max {max(times):.2f} ms over {args.commands}")
    stop_bridge(sw, guests)


if __name__ == "__main__":
    main()
