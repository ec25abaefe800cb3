"""memif ports where the guest serves the socket (client=1), in copy mode and in zero-copy
mode (zero_copy=1: the guest reads and writes hvswitch's buffers in place).

hvswitch starts first, with a vhost-user port a and memif client ports z (zero-copy) and m
(copy) whose servers do not exist yet: they stay down and are tried every second. When
the guests start serving, hvswitch connects; frames then flow between all three in every
direction, 64-byte and 3000-byte (chains), unicast and flooded. A memif guest going away
takes its port down (MACs flushed); a new one on the same socket is connected to again.
The buffers DPDK 22.11's memif PMD loses at a zero-copy disconnect (those it had posted on
its receive ring) come from the port's own pool (zero_copy needs quota=): the shared
pool is back at its baseline after the reconnect and after the port is removed.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Guest, wait_flow, wait_for  # noqa: E402

A, Z, M = "02:00:00:00:0a:0a", "02:00:00:00:0a:0f", "02:00:00:00:0a:0e"
BCAST = "ff:ff:ff:ff:ff:ff"


class MemifClientTest(unittest.TestCase):
    def test_copy_and_zero_copy_client_ports(self):
        sw = Daemon(["a,type=vhost-user,path={dir}/a.sock,mtu=3000",
                     "z,type=memif,path={dir}/z.sock,client=1,zero_copy=1,quota=4096,mtu=3000",
                     "m,type=memif,path={dir}/m.sock,client=1,mtu=3000"])
        guests = {}
        try:
            sw.wait_ready()
            self.assertIn("port 'z': no memif server at", sw.output())
            guests["a"] = Guest("vhost-user", f"{sw.dir}/a.sock", "a")
            for name in "zm":  # the servers appear after hvswitch started
                guests[name] = Guest("memif-server", f"{sw.dir}/{name}.sock", name)
            for name, guest in guests.items():
                guest.wait_link()
                sw.wait_port_up(name)
            a, z, m = guests["a"], guests["z"], guests["m"]
            baseline = sw.value("hvswitch_mbufs_in_use")
            # Floods teach the MACs and reach everyone.
            for guest, mac, others in ((a, A, (z, m)), (z, Z, (a, m)), (m, M, (a, z))):
                guest.send(BCAST, mac, 3)
                for other in others:
                    wait_flow(other, mac, BCAST, 3)
            # Unicast in every direction, small frames and chains.
            for src, smac, dst, dmac in ((a, A, z, Z), (z, Z, a, A), (z, Z, m, M),
                                         (m, M, z, Z), (a, A, m, M), (m, M, a, A)):
                src.send(dmac, smac, 50, 64)
                src.send(dmac, smac, 10, 3000)
                wait_flow(dst, smac, dmac, 60)
            self.assertEqual(z.stats()["rx_max"], 3000)
            # The zero-copy guest goes away and another starts on the same socket.
            z.quit()
            sw.wait_port_up("z", up=False)
            self.assertEqual(sw.value("hvswitch_port_fdb_entries", port="z"), 0)
            z = guests["z"] = Guest("memif-server", f"{sw.dir}/z.sock", "z")
            z.wait_link()
            sw.wait_port_up("z")
            a.send(Z, A, 20)  # Z is unknown again: flooded, and z gets it
            wait_flow(z, A, Z, 20)
            z.send(A, Z, 20)
            wait_flow(a, Z, A, 80)
            wait_for(lambda: sw.value("hvswitch_mbufs_in_use") <= baseline, 10,
                     f"mbufs back to {baseline}")
            self.assertLessEqual(sw.value("hvswitch_port_buffers_in_use", port="z"), 4096)
            sw.ctl("port", "del", "z")  # while connected
            wait_for(lambda: sw.value("hvswitch_mbufs_in_use") <= baseline, 10,
                     "mbufs back after removing z")
            self.assertIsNone(sw.proc.poll())
        finally:
            for guest in guests.values():
                guest.quit()
            self.assertEqual(sw.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
