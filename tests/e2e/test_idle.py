"""--idle=sleep, the default: with two guests attached and nothing sent, the worker gives
its CPU back to the host (a bound on CPU seconds consumed, with a wide margin for this
VM, not a timing assertion); then every frame of a burst each way arrives."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, stop_bridge, wait_flow  # noqa: E402

A, B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
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


class IdleTest(unittest.TestCase):
    def test_an_idle_worker_sleeps_and_then_forwards_every_frame(self):
        sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "memif", "")])
        try:
            tids = worker_threads(sw.proc.pid)
            self.assertEqual(len(tids), 1, "one worker thread")
            time.sleep(0.5)  # link-up and learning settle
            before, start = cpu_seconds(sw.proc.pid, tids), time.monotonic()
            slept_before = sw.value("hvswitch_core_sleep_seconds_total", core="1") or 0
            time.sleep(3)
            used, elapsed = cpu_seconds(sw.proc.pid, tids) - before, time.monotonic() - start
            print(f"idle worker: {used:.2f} s of CPU in {elapsed:.2f} s", flush=True)
            # Polling would use all of it; a sleeping worker a few per cent.
            self.assertLess(used, 0.25 * elapsed)
            slept = sw.value("hvswitch_core_sleep_seconds_total", core="1") - slept_before
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
            for port in ("a", "b"):
                for direction in ("receive", "transmit"):
                    drops = {k: v for k, v in sw.scrape().items()
                             if k[0] == f"hvswitch_port_{direction}_drop_total"
                             and ("port", port) in k[1] and v}
                    self.assertEqual(drops, {}, f"port {port} {direction} drops")
        finally:
            self.assertEqual(stop_bridge(sw, guests), 0)


if __name__ == "__main__":
    unittest.main()
