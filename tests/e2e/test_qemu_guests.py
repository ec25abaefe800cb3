"""Real guests: two QEMU VMs with Debian's kernel and virtio-net driver on hvswitch.

hvswitch runs in a network namespace of its own ("the host") with vhost-user ports vm1 and
vm2 (vm2 in client mode, QEMU owning its socket as the README recommends) and a net_tap
port whose interface is the host's 10.0.1.100/24, fd01::100/64 there
(qemu_guest.GuestsAndHost). QEMU runs the guests under TCG where KVM does not work.
Through the switch: ping and ping6 between guests and the host; an iperf3 TCP stream guest
to guest with the guests' offloads on (checksums and TSO: super-frames pass whole to a
guest that takes them) and off (`ethtool -K eth0 tx off tso off`: the guest sends
complete, MTU-sized frames); and guest <-> host TCP in both directions (the guest's
super-frames are cut by hvswitch for the tap, whose kernel drops any segment with a wrong
checksum).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from qemu_guest import GuestsAndHost  # noqa: E402

SECONDS = 3
HOST, HOST6 = GuestsAndHost.HOST, GuestsAndHost.HOST6


class QemuGuestsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rig = GuestsAndHost()
        cls.sw = cls.rig.sw

    @classmethod
    def tearDownClass(cls):
        cls.rig.stop()

    def offload(self, port, kind, how):
        return self.sw.value("hvswitch_port_offload_total", port=port, kind=kind, how=how)

    def iperf(self, guest, server, *options):
        mbps = self.rig.iperf(guest, server, SECONDS, *options)
        self.assertGreater(mbps, 0)

    def test_ping_between_guests_and_host(self):
        vm1 = self.rig.guests["vm1"]
        vm1.run("ping -c 3 -W 5 10.0.1.2")
        vm1.run(f"ping -c 3 -W 5 {HOST}")
        vm1.run("ping6 -c 3 -W 5 fd01::2")
        self.rig.guests["vm2"].run(f"ping6 -c 3 -W 5 {HOST6}")
        self.rig.ns("ping", "-c", "3", "-W", "5", "10.0.1.1")

    def test_tcp_between_guests_with_offloads_on_and_off(self):
        for on in (True, False):
            with self.subTest(offloads=on):
                for name in self.rig.guests:
                    self.rig.set_offloads(name, on)
                tso_hw = self.offload("vm2", "tso", "hw")
                self.iperf("vm1", "10.0.1.2")
                self.iperf("vm1", "fd01::2")
                if on:  # super-frames went whole to vm2, which takes them
                    self.assertGreater(self.offload("vm2", "tso", "hw"), tso_hw)
                else:
                    self.assertEqual(self.offload("vm2", "tso", "hw"), tso_hw)
        for name in self.rig.guests:
            self.rig.set_offloads(name, True)

    def test_tcp_between_guest_and_host_both_directions(self):
        tso_sw = self.offload("host", "tso", "sw")
        self.iperf("vm1", HOST)         # guest -> host: super-frames cut for the tap
        self.iperf("vm1", HOST, "-R")   # host -> guest
        self.iperf("vm2", HOST6)
        self.iperf("vm2", HOST6, "-R")
        self.assertGreater(self.offload("host", "tso", "sw"), tso_sw)
        self.assertEqual(self.sw.value("hvswitch_port_receive_drop_total", port="vm1",
                                       reason="bad_offload"), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
