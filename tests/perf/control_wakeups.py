#!/usr/bin/env python3
"""Control thread wake-ups: how often hvswitch's control thread (the process's main
thread) is switched in while the switch idles with guests attached, and how long an
hvswitchctl command takes to answer.

Wake-ups are the thread's context switches over --seconds, per second, from
/proc/PID/task/PID/status: voluntary (it slept and was woken) and involuntary (preempted
while it ran). Set-ups (--setup):
  vhost   two vhost-user guests attached, idle
  memif   two vhost-user guests attached and a memif port whose guest is attached
  waiting two vhost-user guests attached and a memif port nobody connects to
Then --commands requests "port list" are sent over the control socket one after the other
(connect, request, answer read to its end), and as many `hvswitchctl port list` runs:
median and maximum wall-clock milliseconds of each (hvswitchctl's: its process start
included).

  flock /tmp/cpu-bench.lock python3 tests/perf/control_wakeups.py [--setup vhost]
        [--seconds 10] [--commands 50]          (root; build first)
"""
import argparse
import os
import socket
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
    """(voluntary, involuntary) context switches of the process's main thread."""
    counts = {}
    with open(f"/proc/{pid}/task/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            counts[key] = int(value) if key.endswith("ctxt_switches") else None
    return counts["voluntary_ctxt_switches"], counts["nonvoluntary_ctxt_switches"]


def ask(path, line):
    """One request over the control socket, as hvswitchctl sends it; the answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall((line + "\n").encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return answer.decode()


def milliseconds(run, times):
    out = []
    for _ in range(times):
        t = time.monotonic()
        run()
        out.append((time.monotonic() - t) * 1000)
    return f"median {statistics.median(out):.2f} ms, max {max(out):.2f} ms"


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
    seconds = end - start
    voluntary, involuntary = ((a - b) / seconds for a, b in zip(after, before))
    answer = ask(sw.ctl_socket, "port list")
    if '"g1"' not in answer:
        raise AssertionError(f"port list: {answer}")
    requests = milliseconds(lambda: ask(sw.ctl_socket, "port list"), args.commands)
    ctl = milliseconds(lambda: subprocess.run(
        [HVSWITCHCTL, f"--socket={sw.ctl_socket}", "port", "list"], check=True,
        capture_output=True, timeout=30), args.commands)
    print(f"setup {args.setup}: control thread {voluntary + involuntary:.1f} wake-ups/s "
          f"({voluntary:.1f} voluntary, {involuntary:.1f} involuntary) over {seconds:.1f} s; "
          f"{args.commands} requests over the socket: {requests}; hvswitchctl port list: {ctl}")
    stop_bridge(sw, guests)


if __name__ == "__main__":
    main()
