"""Real guests: two QEMU VMs with Debian's kernel and virtio-net driver on hvswitch.

hvswitch runs in a network namespace of its own ("the host") with vhost-user ports vm1 and
vm2 and a net_tap port whose interface is the host's 10.0.1.100/24, fd01::100/64 there.
QEMU runs the guests under TCG where KVM does not work. Through the switch: ping and
ping6 between guests and the host; an iperf3 TCP stream guest to guest with the guests'
offloads on (checksums and TSO: super-frames pass whole to a guest that takes them) and
off (`ethtool -K eth0 tx off tso off`: the guest sends complete, MTU-sized frames); and
guest <-> host TCP in both directions (the guest's super-frames are cut by hvswitch for
the tap, whose kernel would drop any segment with a wrong checksum).
"""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, _live, wait_for  # noqa: E402
from qemu_guest import QemuGuest  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
NS = f"hvs-qemu-{os.getpid()}"
TAP = f"hvq{os.getpid() % 10000}"
HOST, HOST6 = "10.0.1.100", "fd01::100"
SECONDS = 3


def ns(*cmd):
    r = subprocess.run(["ip", "netns", "exec", NS, *cmd], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} in {NS}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


def receiver_mbps(iperf_output):
    """The receiver's bitrate from iperf3's summary, in Mbit/s."""
    m = re.search(r"([\d.]+) ([KMG])bits/sec\s+receiver", iperf_output)
    if not m:
        raise AssertionError(f"no iperf3 summary in:\n{iperf_output}")
    return float(m.group(1)) * {"K": 1e-3, "M": 1, "G": 1e3}[m.group(2)]


class QemuGuestsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        subprocess.run([os.path.join(ROOT, "tests/qemu/build_guest.sh")], check=True)
        subprocess.run(["ip", "netns", "add", NS], check=True)
        cls.guests = {}
        try:
            subprocess.run(["ip", "-n", NS, "link", "set", "lo", "up"], check=True)
            cls.sw = Daemon(["vm1,type=vhost-user,path={dir}/vm1.sock",
                             "vm2,type=vhost-user,path={dir}/vm2.sock",
                             f"host,type=dpdk,devargs=net_tap0,iface={TAP}"], netns=NS)
            cls.sw.wait_ready()
            ns("ip", "addr", "add", f"{HOST}/24", "dev", TAP)
            ns("ip", "-6", "addr", "add", f"{HOST6}/64", "dev", TAP, "nodad")
            ns("ip", "link", "set", TAP, "up")
            for index, name in ((1, "vm1"), (2, "vm2")):
                cls.guests[name] = QemuGuest(name, f"{cls.sw.dir}/{name}.sock", index)
                cls.sw.wait_port_up(name)
            # iperf3 servers: in vm2 and in the host namespace (started here, killed by PID)
            cls.guests["vm2"].run("iperf3 -s -D")
            cls.host_iperf = subprocess.Popen(["ip", "netns", "exec", NS, "iperf3", "-s"],
                                              stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL)
            _live.append(cls.host_iperf)
            # IPv6 addresses are usable once duplicate address detection is done
            for guest in cls.guests.values():
                wait_for(lambda g=guest: "tentative" not in g.run("ip -6 addr show eth0")[1],
                         30, f"{guest.name}'s IPv6 address")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            if getattr(cls, "host_iperf", None) is not None:
                cls.host_iperf.kill()
                cls.host_iperf.wait()
            for guest in cls.guests.values():
                guest.stop()
            if hasattr(cls, "sw"):
                assert cls.sw.stop() == 0
        finally:
            subprocess.run(["ip", "netns", "del", NS], check=False)

    def offload(self, port, kind, how):
        return self.sw.value("hvswitch_port_offload_total", port=port, kind=kind, how=how)

    def iperf(self, guest, server, *options):
        _, out = self.guests[guest].run(
            f"iperf3 -c {server} -t {SECONDS} {' '.join(options)}", timeout=90)
        mbps = receiver_mbps(out)
        self.assertGreater(mbps, 0, out)
        return mbps

    def set_offloads(self, guest, on):
        state = "on" if on else "off"
        self.guests[guest].run(f"ethtool -K eth0 tx {state} tso {state}")

    def test_ping_between_guests_and_host(self):
        vm1 = self.guests["vm1"]
        vm1.run("ping -c 3 -W 5 10.0.1.2")
        vm1.run(f"ping -c 3 -W 5 {HOST}")
        vm1.run("ping6 -c 3 -W 5 fd01::2")
        self.guests["vm2"].run(f"ping6 -c 3 -W 5 {HOST6}")
        ns("ping", "-c", "3", "-W", "5", "10.0.1.1")

    def test_tcp_between_guests_with_offloads_on_and_off(self):
        for on in (True, False):
            with self.subTest(offloads=on):
                for name in self.guests:
                    self.set_offloads(name, on)
                tso_hw = self.offload("vm2", "tso", "hw")
                self.iperf("vm1", "10.0.1.2")
                self.iperf("vm1", "fd01::2")
                if on:  # super-frames went whole to vm2, which takes them
                    self.assertGreater(self.offload("vm2", "tso", "hw"), tso_hw)
                else:
                    self.assertEqual(self.offload("vm2", "tso", "hw"), tso_hw)
        for name in self.guests:
            self.set_offloads(name, True)

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
