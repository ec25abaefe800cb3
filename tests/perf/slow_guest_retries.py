"""A slow guest and transmit retries: a guest alive but slower than its traffic gets more
of its frames with tx_retries= than without, and another guest's exchange loses nothing
meanwhile.

Ports a (the sender, a ring of 1024), s0 (tx_retries=0), sn (tx_retries=32) and c. s0 and
sn run the same slow guest (one frame at a time, polling all the time); a sends each of
them the same unicast traffic in alternating turns while the other is paused. a shares
the switch's CPU, so its frames reach the switch in backlogs (its ring fills while the
switch is off the CPU) that the switch forwards while the slow guest drains on the other
CPU: what the slow guest's ring cannot take is dropped at once for s0 and retried for sn.
(With a on the slow guest's CPU the two seldom run at once and retries have little to
wait for: the difference drowns in noise.) Compared: frames delivered / frames offered
over the whole run, a ratio, not a rate. Between turns a sends c a chunk that c must get
whole: the retries for sn cost c nothing.

A measurement run by hand (under flock /tmp/cpu-bench.lock), not a CI test: its ratio
depends on how the two CPUs are shared (it failed under a parallel build, and its
teardown has hung for minutes in about one run of four). CI checks the retry rules
deterministically in tests/integration/forwarder_test.cc (RingPort::DrainOnTransmit).
From the project's root, after deploy/build.sh: python3 tests/perf/slow_guest_retries.py
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from harness import start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A, C = "02:00:00:00:0a:0a", "02:00:00:00:0a:0c"
SLOW = {"s0": "02:00:00:00:0a:10", "sn": "02:00:00:00:0a:1e"}
BCAST = "ff:ff:ff:ff:ff:ff"
TURNS, FRAMES, CHUNK = 8, 10000, 200  # FRAMES a turn to a slow guest, CHUNK to c
ROUNDS = 3  # at most, until the retrying guest is ahead


class SlowGuestTest(unittest.TestCase):
    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", ""), ("s0", "vhost-user", ",tx_retries=0"),
             ("sn", "vhost-user", ",tx_retries=32"), ("c", "vhost-user", "")],
            guest_args={"a": {"cpu": os.cpu_count() - 1, "queue_size": 1024}})
        for name, mac in (*SLOW.items(), ("c", C)):
            self.guests[name].send(BCAST, mac, 1)
        wait_for(lambda: self.sw.value("hvswitch_fdb_entries") == 3, 10, "3 MACs learned")

    def tearDown(self):
        # The sender, on the switch's busy CPU, is killed and waited for only once the
        # switch is gone: in about one run of four, teardown with it there took minutes
        # (not understood yet; see the issue 14 report).
        sender = self.guests.pop("a")
        sender.proc.kill()
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)
        sender.proc.wait(30)
        sender.kill()

    def counter(self, name, port, **labels):
        return self.sw.value(name, port=port, **labels)

    def handled(self, port):
        """Frames for `port` sent or dropped as queue_full."""
        return (self.counter("hvswitch_port_transmit_packets_total", port) +
                self.counter("hvswitch_port_transmit_drop_total", port, reason="queue_full"))

    def turns(self, delivered):
        """TURNS turns of FRAMES to each slow guest, alternating, and a chunk to c after
        each; adds what each slow guest received to `delivered`."""
        a, c = self.guests["a"], self.guests["c"]
        to_c = c.flow(A, C)
        started = time.monotonic()
        for turn in range(TURNS):
            for name in ("s0", "sn") if turn % 2 == 0 else ("sn", "s0"):
                slow, other = self.guests[name], self.guests["sn" if name == "s0" else "s0"]
                self.assertEqual(other.cmd("pause"), {"ok": 1})
                self.assertEqual(slow.cmd("resume"), {"ok": 1})
                self.assertEqual(slow.cmd("slow 1"), {"ok": 1})
                before = slow.flow(A, SLOW[name])
                for _ in range(FRAMES // 1000):
                    a.send(SLOW[name], A, 1000)
                # Whatever the switch took is in the guest's ring by now or soon; count it
                # once the guest stops receiving.
                seen = wait_for(lambda: _settled(slow, A, SLOW[name]), 20, f"{name} settled")
                delivered[name] += seen - before
                print(f"turn {turn} {name}: {(seen - before) / FRAMES:.3f} "
                      f"({time.monotonic() - started:.1f} s)", file=sys.stderr)
                a.send(C, A, CHUNK)
                to_c += CHUNK
                wait_flow(c, A, C, to_c)

    def test_retries_get_a_slow_guest_more_of_its_frames(self):
        delivered = {name: 0 for name in SLOW}
        handled = {name: self.handled(name) for name in SLOW}
        # The comparison needs the slow guest to drain while the switch forwards: other
        # processes taking the CPUs (a build beside the test) can hide the difference for
        # a while, so up to ROUNDS rounds are measured, compared on what all of them got.
        for rounds in range(1, ROUNDS + 1):
            self.turns(delivered)
            if delivered["sn"] > delivered["s0"]:
                break
        offered = rounds * TURNS * FRAMES
        offered = TURNS * FRAMES
        ratio = {name: delivered[name] / offered for name in SLOW}
        retries = self.counter("hvswitch_port_transmit_retries_total", "sn")
        cycles = self.counter("hvswitch_port_transmit_retry_cycles_total", "sn")
        gained = max(delivered["sn"] - delivered["s0"], 1)
        print(f"delivered / offered: tx_retries=0 {ratio['s0']:.3f}, "
              f"tx_retries=32 {ratio['sn']:.3f}; sn: {retries:.0f} retries, "
              f"{cycles / gained:.0f} retry cycles per frame gained", file=sys.stderr)
        self.assertGreater(ratio["sn"], ratio["s0"])
        self.assertLess(ratio["s0"], 1.0, "s0 was not slower than its traffic")
        # Every frame offered was delivered or dropped as queue_full; only sn retried.
        for name in SLOW:
            self.assertEqual(self.handled(name) - handled[name], offered, name)
        self.assertEqual(self.counter("hvswitch_port_transmit_retries_total", "s0"), 0)
        self.assertGreater(self.counter("hvswitch_port_transmit_retries_total", "sn"), 0)
        self.assertGreater(self.counter("hvswitch_port_transmit_retry_cycles_total", "sn"), 0)
        # c lost nothing: every chunk arrived whole (wait_flow), none dropped for it.
        self.assertEqual(self.counter("hvswitch_port_transmit_drop_total", "c",
                                      reason="queue_full"), 0)


def _settled(guest, src, dst):
    """The guest's count of src>dst once two looks 0.2 s apart agree (0: not yet)."""
    first = guest.flow(src, dst)
    time.sleep(0.2)
    return first if guest.flow(src, dst) == first and first > 0 else 0


if __name__ == "__main__":
    unittest.main(verbosity=2)
