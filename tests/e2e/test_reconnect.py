"""Guests coming and going under traffic: a vhost-user guest and a memif guest exit and
new ones connect, 100 times each, while two other guests exchange frames. The daemon stays up, the pair's frames all arrive, each disconnect flushes the
guest's MACs, its counters are kept, and the packet buffers out of the pool return to what
they were before (no mbuf leaked).
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Guest, start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A, B, C, D = ("02:00:00:00:08:0a", "02:00:00:00:08:0b", "02:00:00:00:08:0c",
              "02:00:00:00:08:0d")
BCAST = "ff:ff:ff:ff:ff:ff"
CYCLES = 100


class ReconnectTest(unittest.TestCase):
    def test_restarting_guests_under_traffic(self):
        sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "memif", ""),
                                   ("c", "vhost-user", ""), ("d", "memif", "")])
        a, b, c, d = (guests[p] for p in "abcd")
        try:
            a.send(BCAST, A, 1)
            b.send(BCAST, B, 1)
            wait_flow(b, A, BCAST, 1)
            wait_flow(a, B, BCAST, 1)
            baseline = sw.value("hvswitch_mbufs_in_use")
            sent = 0
            for i in range(CYCLES):
                # The guests' processes go away (VMs shut down) and new ones connect. (DPDK
                # 22.11's memif client crashes now and then in its interrupt thread when
                # its port is stopped and started many times, so d is restarted whole too.)
                c.quit()
                d.quit()
                a.send(B, A, 20)  # unicast A -> B throughout
                sent += 20
                for name in "cd":  # seen down: its MACs flushed, its counters kept
                    sw.wait_port_up(name, up=False)
                    self.assertEqual(sw.value("hvswitch_port_fdb_entries", port=name), 0)
                c = guests["c"] = Guest("vhost-user", f"{sw.dir}/c.sock", "c")
                d = guests["d"] = Guest("memif", f"{sw.dir}/d.sock", "d")
                for guest, mac in ((c, C), (d, D)):
                    guest.wait_link()
                    sw.wait_port_up(guest.name)
                    guest.send(BCAST, mac, 1)
                    # "sent" means in the guest's ring; a guest that quits before the
                    # switch polled takes the frame with it. Counters kept across
                    # disconnects: the port's count is one per cycle so far.
                    wait_for(lambda: sw.value("hvswitch_port_receive_packets_total",
                                              port=guest.name) >= i + 1, 10,
                             f"switch received {guest.name}'s frame of cycle {i}")
                a.send(B, A, 20)
                sent += 20
                self.assertIsNone(sw.proc.poll(), f"hvswitch died in cycle {i}")
            wait_flow(b, A, B, sent)
            # Every disconnect seen; the vhost-user guests' own restarts as they start may
            # add some (Daemon.link_changes), memif guests' none.
            sw.assert_link_changes("c", min_downs=CYCLES)
            sw.assert_link_changes("d", min_downs=CYCLES, exact=True)
            for guest, name in ((c, "c"), (d, "d")):
                # Counters survive disconnects (they are the port's, not the guest's).
                self.assertGreaterEqual(
                    sw.value("hvswitch_port_receive_packets_total", port=name), CYCLES,
                    f"counters kept across disconnects; b saw {b.stats()['flows']}")
            # Back to the buffers out of the pool before the restarts.
            try:
                wait_for(lambda: sw.value("hvswitch_mbufs_in_use") <= baseline, 10,
                         "mbufs back to the baseline")
            except AssertionError:
                time.sleep(1)
                self.fail(f"mbufs in use {sw.value('hvswitch_mbufs_in_use')} > {baseline}")
        finally:
            self.assertEqual(stop_bridge(sw, guests), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
