"""--idle=sleep, the default, and --idle=interrupt: with two guests attached and nothing
sent, the worker gives its CPU back to the host (a bound on CPU seconds consumed, with a
wide margin for this VM, not a timing assertion); then every frame of a burst each way
arrives."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Guest, start_bridge, stop_bridge, wait_flow  # noqa: E402

A, B, C = "02:00:00:00:00:0a", "02:00:00:00:00:0b", "02:00:00:00:00:0c"
TICKS = os.sysconf("SC_CLK_TCK")


def worker_threads(pid):
    """The thread ids of the daemon's worker lcores (EAL names them rte-worker-N)."""
    tids = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().startswith("rte-worker"):
                tids.append(tid)
    return tids


def cpu_seconds(pid, tids):
    """User and system CPU time the threads used, in seconds."""
    total = 0
    for tid in tids:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def port_drops(sw, ports):
    """{(port, direction): {metric key: value}} of the non-zero drop counters."""
    out = {}
    for port in ports:
        for direction in ("receive", "transmit"):
            drops = {k: v for k, v in sw.scrape().items()
                     if k[0] == f"hvswitch_port_{direction}_drop_total"
                     and ("port", port) in k[1] and v}
            if drops:
                out[(port, direction)] = drops
    return out


def quiet_spell(sw, tids, seconds=3):
    """`seconds` with nothing sent: the worker threads' CPU seconds, the seconds elapsed,
    and what core 1 counted meanwhile: seconds slept, timer wake-ups."""
    def timer():
        return sw.value("hvswitch_core_wakeups_total", core="1", cause="timer") or 0
    before, start = cpu_seconds(sw.proc.pid, tids), time.monotonic()
    slept_before = sw.value("hvswitch_core_sleep_seconds_total", core="1") or 0
    timer_before = timer()
    time.sleep(seconds)
    used, elapsed = cpu_seconds(sw.proc.pid, tids) - before, time.monotonic() - start
    slept = sw.value("hvswitch_core_sleep_seconds_total", core="1") - slept_before
    return used, elapsed, slept, timer() - timer_before


class IdleTest(unittest.TestCase):
    def test_an_idle_worker_sleeps_and_then_forwards_every_frame(self):
        sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "memif", "")])
        try:
            tids = worker_threads(sw.proc.pid)
            self.assertEqual(len(tids), 1, "one worker thread")
            time.sleep(0.5)  # link-up and learning settle
            used, elapsed, slept, _ = quiet_spell(sw, tids)
            print(f"idle worker: {used:.2f} s of CPU in {elapsed:.2f} s", flush=True)
            # Polling would use all of it; a sleeping worker a few per cent.
            self.assertLess(used, 0.25 * elapsed)
            self.assertGreater(slept, 0.5 * elapsed)
            self.assertGreater(sw.value("hvswitch_core_wakeups_total", core="1", cause="timer"), 0)
            self.assertEqual(sw.value("hvswitch_core_idle_mode", core="1", mode="sleep"), 1)
            self.assertEqual(sw.value("hvswitch_core_sleep_max_seconds", core="1"), 250e-6)
            [core] = sw.ctl("pmd")["cores"]
            self.assertEqual((core["idle_mode"], core["max_sleep_us"]), ("sleep", 250))
            # Frames sent into a sleeping worker's rings wait there: every one arrives. (No
            # more than a guest ring holds: both guests share CPU 0, so the receiving one
            # may not run while the other sends, in any mode.)
            guests["a"].send(B, A, 200)
            wait_flow(guests["b"], A, B, 200)
            time.sleep(1)  # asleep again
            guests["b"].send(A, B, 200)
            wait_flow(guests["a"], B, A, 200)
            self.assertEqual(port_drops(sw, ("a", "b")), {})
        finally:
            self.assertEqual(stop_bridge(sw, guests), 0)

    def test_a_worker_blocks_until_a_guest_kicks_and_forwards_every_frame(self):
        # Two vhost-user guests: both can interrupt, so the worker blocks rather than sleeps.
        sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "vhost-user", "")],
                                  extra=["--idle=interrupt"])
        try:
            tids = worker_threads(sw.proc.pid)
            time.sleep(0.5)
            self.assertEqual(sw.value("hvswitch_core_idle_mode", core="1", mode="interrupt"), 1)
            used, elapsed, slept, timer_wakeups = quiet_spell(sw, tids)
            print(f"blocked worker: {used:.2f} s of CPU in {elapsed:.2f} s", flush=True)
            # Sleeping costs this VM ~6 %; blocked, the worker does not run at all.
            self.assertLess(used, 0.03 * elapsed)
            # Blocked, not sleeping: its time counts as slept while the block lasts, and
            # the timer does not wake it (a few wake-ups at most, from frames at start).
            self.assertGreater(slept, 0.5 * elapsed)
            self.assertLess(timer_wakeups, 100)
            interrupts = sw.value("hvswitch_core_wakeups_total", core="1", cause="interrupt")
            for round in range(1, 4):
                guests["a"].send(B, A, 200)
                wait_flow(guests["b"], A, B, 200 * round)
                time.sleep(0.5)  # blocked again
                guests["b"].send(A, B, 200)
                wait_flow(guests["a"], B, A, 200 * round)
                time.sleep(0.5)
            # Each burst after a quiet half second woke it by a guest's kick.
            self.assertGreaterEqual(
                sw.value("hvswitch_core_wakeups_total", core="1", cause="interrupt")
                - interrupts, 6)
            [core] = sw.ctl("pmd")["cores"]
            self.assertEqual(core["idle_mode"], "interrupt")
            self.assertGreaterEqual(core["wakeups_by_cause"]["interrupt"], 6)
            self.assertEqual(port_drops(sw, ("a", "b")), {})
        finally:
            self.assertEqual(stop_bridge(sw, guests), 0)

    def test_ports_come_and_go_under_a_blocked_worker(self):
        # The worker's epoll set names the queues of the ports it polls: a port removed
        # while it blocks must leave it (before the device closes), a port added must join
        # it, and its guest's kick must wake the worker.
        sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "vhost-user", "")],
                                  extra=["--idle=interrupt"])
        try:
            control = sw.value("hvswitch_core_wakeups_total", core="1", cause="control")
            for i in range(20):
                path = f"{sw.dir}/c{i % 2}.sock"
                sw.ctl("port", "add", "c", "vhost-user", f"path={path}")
                time.sleep(0.2)  # blocked, c's queue among those it waits on
                if i % 5 == 0:
                    c = Guest("vhost-user", path, "c")
                    try:
                        c.wait_link()
                        sw.wait_port_up("c")
                        time.sleep(0.2)
                        c.send(B, C, 5)
                        wait_flow(guests["b"], C, B, 5 * (i // 5 + 1))
                        sw.ctl("port", "del", "c")  # its guest still connected
                    finally:
                        c.quit()
                else:
                    sw.ctl("port", "del", "c")
                time.sleep(0.2)  # blocked without c
                guests["a"].send(B, A, 10)
                wait_flow(guests["b"], A, B, 10 * (i + 1))
            self.assertIsNone(sw.proc.poll())
            # Each removal came after 0.2 s of quiet, to a blocked worker: it was rung.
            self.assertGreaterEqual(
                sw.value("hvswitch_core_wakeups_total", core="1", cause="control") - control,
                20)
            self.assertEqual(sw.value("hvswitch_core_idle_mode", core="1", mode="interrupt"), 1)
            self.assertEqual(port_drops(sw, ("a", "b")), {})
        finally:
            self.assertEqual(stop_bridge(sw, guests), 0)

    def test_a_port_without_interrupts_keeps_its_worker_sleeping(self):
        sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "memif", "")],
                                  extra=["--idle=interrupt"])
        try:
            time.sleep(0.5)
            self.assertEqual(sw.value("hvswitch_core_idle_mode", core="1", mode="sleep"), 1)
            self.assertIn("port 'b': its device has no receive interrupts", sw.output())
            guests["a"].send(B, A, 200)
            wait_flow(guests["b"], A, B, 200)
            self.assertGreater(sw.value("hvswitch_core_wakeups_total", core="1", cause="timer"),
                               0)
        finally:
            self.assertEqual(stop_bridge(sw, guests), 0)


if __name__ == "__main__":
    unittest.main()
