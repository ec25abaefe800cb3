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

The host port (type=host, "hp": a tap with a virtio-net header that hvswitch creates in a
namespace of its own, 10.0.1.200, fd01::200): TCP guest -> host and host -> guest, IPv4 and
IPv6, with vm1's offloads on and off, a fixed few MB each (TCG is slow). With them on, the
guest's super-frames and partial checksums reach the kernel whole (the host port's tx
queue statistics count them); off, none are sent. The host's kernel sends super-frames
(rx statistics), which go whole to the guest; hvswitch segments nothing for either. Neither
kernel counts a TCP checksum error (/proc/net/snmp in the namespace and in the guest).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from qemu_guest import GuestsAndHost  # noqa: E402

SECONDS = 3
HOST, HOST6 = GuestsAndHost.HOST, GuestsAndHost.HOST6
HP, HP6 = GuestsAndHost.HOST_PORT, GuestsAndHost.HOST_PORT6
AMOUNT = "8M"  # per host port transfer


class QemuGuestsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rig = GuestsAndHost(host_port=True)
        cls.sw = cls.rig.sw

    @classmethod
    def tearDownClass(cls):
        cls.rig.stop()

    def offload(self, port, kind, how):
        return self.sw.value("hvswitch_port_offload_total", port=port, kind=kind, how=how)

    def iperf(self, guest, server, *options):
        mbps = self.rig.iperf(guest, server, SECONDS, *options)
        self.assertGreater(mbps, 0)

    def test_worker_blocked_and_woke_by_interrupt(self):
        """Run as qemu_guests_interrupt (HVS_IDLE=interrupt): every port here interrupts (the
        guests' virtio-net kicks through QEMU's ioeventfd, the taps' descriptors), so the
        worker blocks between the tests' exchanges and Linux guests wake it."""
        if os.environ.get("HVS_IDLE") != "interrupt":
            self.skipTest("--idle=interrupt only")
        self.rig.guests["vm1"].run("ping -c 3 -i 0.5 -W 5 10.0.1.2")
        metrics = self.sw.scrape()
        modes = {dict(k[1])["core"]: v for k, v in metrics.items()
                 if k[0] == "hvswitch_core_idle_mode" and ("mode", "interrupt") in k[1]}
        self.assertTrue(modes and all(v == 1 for v in modes.values()), modes)
        woken = sum(v for k, v in metrics.items()
                    if k[0] == "hvswitch_core_wakeups_total" and ("cause", "interrupt") in k[1])
        self.assertGreater(woken, 0)

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

    def hp_stat(self, direction, stat):
        return self.sw.value("hvswitch_port_queue_stat_total", port="hp", direction=direction,
                             queue="0", stat=stat) or 0

    def test_tcp_between_guest_and_host_port_offloads_on_and_off(self):
        errors = self.rig.tcp_csum_errors(), self.rig.tcp_csum_errors("vm1")
        try:
            for on in (True, False):
                self.rig.set_offloads("vm1", on)
                for server in (HP, HP6):
                    for reverse in (False, True):
                        with self.subTest(offloads=on, server=server, reverse=reverse):
                            self.host_port_transfer(on, server, reverse)
        finally:
            self.rig.set_offloads("vm1", True)
        after = self.rig.tcp_csum_errors(), self.rig.tcp_csum_errors("vm1")
        print(f"\nTcp InCsumErrors (host port's namespace, vm1): {errors} before, {after} after",
              file=sys.stderr)
        self.assertEqual(after, errors, "TCP checksum errors (host port's namespace, guest)")
        for direction, stat in (("rx", "bad_offload"), ("rx", "truncated"),
                                ("tx", "bad_request")):
            self.assertEqual(self.hp_stat(direction, stat), 0, stat)

    def host_port_transfer(self, on, server, reverse):
        before = {(d, s): self.hp_stat(d, s) for d in ("rx", "tx")
                  for s in ("super_frames", "partial_csum")}
        segmented = self.offload("hp", "tso", "sw"), self.offload("vm1", "tso", "sw")
        whole_to_guest = self.offload("vm1", "tso", "hw") or 0
        mbps, retr = self.rig.iperf_summary(
            "vm1", f"-c {server} -n {AMOUNT}" + (" -R" if reverse else ""))
        delta = {key: int(self.hp_stat(*key) - value) for key, value in before.items()}
        to_guest = int((self.offload("vm1", "tso", "hw") or 0) - whole_to_guest)
        print(f"\nhost port, vm1 offloads {'on' if on else 'off'}, "
              f"{'host -> guest' if reverse else 'guest -> host'} {server}: {mbps:.0f} Mbit/s, "
              f"{retr} retransmits; to the kernel {delta['tx', 'super_frames']} super-frames, "
              f"{delta['tx', 'partial_csum']} partial checksums; from it "
              f"{delta['rx', 'super_frames']} super-frames ({to_guest} whole to vm1), "
              f"{delta['rx', 'partial_csum']} partial checksums", file=sys.stderr)
        if reverse:  # the host's kernel segments nothing: hvswitch passes it to vm1 whole
            self.assertGreater(delta["rx", "super_frames"], 0)
            self.assertGreater(to_guest, 0)
        elif on:  # the guest's super-frames and partial checksums reach the kernel as such
            self.assertGreater(delta["tx", "super_frames"], 0)
            self.assertGreater(delta["tx", "partial_csum"], 0)
        else:  # complete, MTU-sized frames
            self.assertEqual(delta["tx", "super_frames"], 0)
            self.assertEqual(delta["tx", "partial_csum"], 0)
        self.assertEqual((self.offload("hp", "tso", "sw"), self.offload("vm1", "tso", "sw")),
                         segmented, "hvswitch segmented")


if __name__ == "__main__":
    unittest.main(verbosity=2)
