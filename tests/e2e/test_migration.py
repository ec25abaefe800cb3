"""Live migration: a Linux guest moved by QEMU from one hvswitch port to another.

hvswitch runs with the rig of test_qemu_guests.py (qemu_guest.GuestsAndHost): guest A on
vm1 (hvswitch's socket), guest B on vm2, and the host's tap 10.0.1.100. A port vm1b
(client=1: the destination QEMU owns its socket) is added for A's destination. Each
migration starts a second QEMU for A with `-incoming` on the destination port and moves A
there with QMP `migrate` (precopy; the vhost library logs the pages it writes into A's
memory meanwhile, VHOST_USER_PROTOCOL_F_LOG_SHMFD). Under TCG, so guest memory is small.

1. vm1 -> vm1b, the network quiet: once QEMU says the migration completed, the MAC table
   has A's MAC on vm1b although A sent nothing but its announcement (the guest's own
   gratuitous ARP and unsolicited neighbour advertisements, VIRTIO_NET_F_GUEST_ANNOUNCE,
   or else the RARP QEMU has the vhost library send): counted on vm1b
   (hvswitch_port_announcements_total); vm1's link went down when A's source stopped.
   Then A works from vm1b (ping B).
2. vm1b -> vm1 (a client=1 port as the source, hvswitch's own socket as the destination)
   while the host pings A every 10 ms: the stream continues after the switch-over, and
   what was lost is reported: pings without a reply, the longest silence, hvswitch's drops
   (frames for A while no port had it) and QEMU's downtime.
"""
import os
import re
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import _live, wait_for  # noqa: E402
from qemu_guest import GuestsAndHost, Qmp, QemuGuest  # noqa: E402
from test_guards import delta, port_counts  # noqa: E402

A_MAC = "52:54:00:00:01:01"
A_IP = "10.0.1.1"
B_IP = "10.0.1.2"
PING_INTERVAL_MS = 10


def chardev_connected(qmp_path):
    """Whether the vhost-user chardev (chr0) of the QEMU behind `qmp_path` is connected."""
    qmp = Qmp(qmp_path)
    try:
        return any(c["label"] == "chr0" and c["frontend-open"]
                   for c in qmp.execute("query-chardev"))
    finally:
        qmp.close()


class MigrationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rig = GuestsAndHost(qmp=True)
        cls.sw = cls.rig.sw
        cls.dir = cls.sw.dir
        cls.sw.ctl("port", "add", f"vm1b,type=vhost-user,path={cls.dir}/vm1b.sock,client=1",
                   as_json=False)

    @classmethod
    def tearDownClass(cls):
        cls.rig.stop()

    def fdb_port(self, mac):
        for entry in self.sw.ctl("fdb", "show")["entries"]:
            if entry["mac"] == mac:
                return entry["port"]
        return None

    def announcements(self, port):
        return self.sw.value("hvswitch_port_announcements_total", port=port) or 0

    def migrate(self, source, to_port, server):
        """Moves guest A from QEMU `source` (a key of rig.guests) to a new QEMU on port
        `to_port` (server: QEMU owns the socket, for a client=1 port); returns the new
        guest's key and QEMU's query-migrate answer."""
        key = f"A@{to_port}"
        qmp_path = f"{self.dir}/{key}.qmp"
        socket_path = f"{self.dir}/{to_port}.sock"
        incoming = f"unix:{self.dir}/migrate-{to_port}.sock"
        self.rig.guests[key] = QemuGuest(key, socket_path, 1, server=server, qmp=qmp_path,
                                         incoming=incoming)
        # The destination's vhost-user connection is set up before the guest arrives: its
        # device starts when the migrated guest runs.
        wait_for(lambda: chardev_connected(qmp_path), 30, f"hvswitch on {socket_path}")
        src_qmp = Qmp(self.rig.guests[source].qmp_path)
        try:
            src_qmp.execute("migrate", uri=incoming)

            def finished():
                info = src_qmp.execute("query-migrate")
                if info.get("status") in ("failed", "cancelled"):
                    raise AssertionError(f"migration {info['status']}: {info}")
                return info if info.get("status") == "completed" else None
            info = wait_for(finished, 180, f"migration to {to_port}")
        finally:
            src_qmp.close()
        return key, info

    def test_1_the_announcement_moves_the_mac(self):
        a = self.rig.guests["vm1"]
        a.run(f"ping -c 1 -W 5 {B_IP}")
        wait_for(lambda: self.fdb_port(A_MAC) == "vm1", 10, "A's MAC on vm1")
        before = self.announcements("vm1b")

        key, info = self.migrate("vm1", "vm1b", server=True)
        self.sw.wait_port_up("vm1", up=False)
        wait_for(lambda: self.fdb_port(A_MAC) == "vm1b", 20, "A's MAC moved to vm1b")
        announced = self.announcements("vm1b") - before
        print(f"\nvm1 -> vm1b: {announced} announcements; QEMU: downtime "
              f"{info.get('downtime')} ms, total {info.get('total-time')} ms",
              file=sys.stderr)
        self.assertGreaterEqual(announced, 1)
        self.assertIn("port 'vm1b'", self.sw.output())
        # The link-up line says what the destination's QEMU negotiated for migration.
        self.assertRegex(self.sw.output(), r"port 'vm1b'.*up.*migration: dirty_log=yes")

        moved = self.rig.guests[key]
        # Which announcement: the guest's own (feature bit 21 negotiated) or QEMU's RARP.
        _, features = moved.run("cat /sys/class/net/eth0/device/features")
        print(f"GUEST_ANNOUNCE negotiated: {features.strip()[21:22] == '1'}", file=sys.stderr)
        moved.run(f"ping -c 2 -W 5 {B_IP}")
        self.rig.guests.pop("vm1").stop()

    def test_2_a_stream_survives_the_switch_over(self):
        source = "A@vm1b"
        if source not in self.rig.guests:
            self.skipTest("needs test_1's migration")
        ping = subprocess.Popen(
            ["ip", "netns", "exec", self.rig.netns, "ping", "-n", "-D", "-W", "1",
             "-i", str(PING_INTERVAL_MS / 1000), A_IP],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        _live.append(ping)
        try:
            # Steady before the move.
            wait_for(lambda: self.fdb_port(A_MAC) == "vm1b", 10, "A's MAC on vm1b")
            metrics_before = self.sw.scrape()
            announced_before = self.announcements("vm1")
            key, info = self.migrate(source, "vm1", server=False)
            wait_for(lambda: self.fdb_port(A_MAC) == "vm1", 20, "A's MAC moved to vm1")
            after_move = self.sw.value("hvswitch_port_transmit_packets_total", port="vm1")
            # The stream goes on: replies come from A on vm1.
            wait_for(lambda: self.sw.value("hvswitch_port_transmit_packets_total",
                                           port="vm1") >= after_move + 100, 30,
                     "100 more pings delivered to A on vm1")
            metrics_after = self.sw.scrape()
        finally:
            ping.send_signal(signal.SIGINT)
            out, _ = ping.communicate(timeout=10)
        sent = re.search(r"(\d+) packets transmitted, (\d+) received", out)
        self.assertIsNotNone(sent, out)
        transmitted, received = int(sent.group(1)), int(sent.group(2))
        stamps = [float(t) for t in re.findall(r"^\[(\d+\.\d+)\] \d+ bytes from", out, re.M)]
        gap_ms = max((b - a for a, b in zip(stamps, stamps[1:])), default=0) * 1000
        host = delta(port_counts(metrics_after, "host"), port_counts(metrics_before, "host"))
        vm1b = delta(port_counts(metrics_after, "vm1b"), port_counts(metrics_before, "vm1b"))
        dropped = {f"host rx {r}": n for r, n in host["rx_drops"].items() if n} | {
            f"vm1b tx {r}": n for r, n in vm1b["tx_drops"].items() if n}
        print(f"\nvm1b -> vm1 under a 10 ms ping: {transmitted - received} of {transmitted} "
              f"pings lost, longest silence {gap_ms:.0f} ms; hvswitch drops {dropped}; "
              f"QEMU: downtime {info.get('downtime')} ms, total {info.get('total-time')} ms",
              file=sys.stderr)
        self.assertGreater(received, 0)
        self.assertGreater(self.announcements("vm1"), announced_before)
        self.rig.guests[key].run(f"ping -c 1 -W 5 {B_IP}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
