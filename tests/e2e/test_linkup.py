"""Frames lost at a guest's link-up: none that the switch could have delivered.

One hvs_guest owns both guest ends of a two-port switch (tests/guest/linkup_probe.h): its
`linkup` command unplugs the receiving port (the guest's driver goes: its socket closes),
streams numbered frames from the other port to a MAC nobody sends from (flooded), plugs
the receiving port back (it reconnects) and streams on after the receiver's own driver
reports its link up. The switch's drop counters are read around each run.

memif: the switch is the server; its link goes up as it takes the client's CONNECT, before
it answers CONNECTED, on which the guest's goes up, and the workers read a memif port's
link at every burst while it is down (Forwarder::LoadUpMask). So every frame sent after
the guest's link is up arrives: 0 lost, asserted.

vhost-user: DPDK's vhost library answers the guest's last message of the handshake before
it calls new_device (hvswitch's link-up event), so a guest can be up a moment before the
switch knows; frames in that moment are flooded to nobody (tests/perf/results.md has the
figures). What the switch owes: once it delivered a guest's first frame, nothing after is
lost (asserted), and nothing is lost unaccounted (every frame not received is in the
switch's no_destination, link_down or queue_full counts).

A run in which the switch dropped frames for a full ring (queue_full: the guest process
was scheduled out for longer than its ring lasts, this VM's load) proves nothing about
link-up and is run again, a few times at most.
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import HVS_GUEST, Daemon, Guest, _live, wait_for  # noqa: E402

SRC, DST = "02:00:00:00:0d:00", "02:00:00:00:0d:01"
RUNS = 5
RATE = 20000  # frames/s: a frame every 50 us
ATTEMPTS = 4  # per run, while the switch dropped frames for a full ring


class ProbeGuest(Guest):
    """hvs_guest with two ports (p0 sends, p1 receives); Guest's commands and quit."""

    def __init__(self, kind, sockdir):  # pylint: disable=super-init-not-called
        if kind == "vhost-user":
            vdevs = [f"net_virtio_user{i},path={sockdir}/p{i}.sock,queue_size=1024"
                     for i in range(2)]
        else:
            vdevs = [f"net_memif{i},role=client,socket={sockdir}/p{i}.sock,"
                     "socket-abstract=no" for i in range(2)]
        self.name = f"{kind} probe"
        args = [HVS_GUEST, "--no-pci", "--no-huge", "-m", "256", "--lcores=0@0",
                f"--file-prefix=hvs-linkup-{kind}-{os.getpid()}", "--log-level=*:error"]
        self.proc = subprocess.Popen(args + [f"--vdev={v}" for v in vdevs],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        _live.append(self.proc)
        self._buf = b""
        self.wait_ready()


def drops(sw):
    ports = {p["name"]: p for p in sw.ctl("stats")["ports"]}
    return {"no_destination": ports["p0"]["rx_drops"]["no_destination"],
            "link_down": ports["p1"]["tx_drops"]["link_down"],
            "queue_full": ports["p1"]["tx_drops"]["queue_full"]}


class LinkUpTest(unittest.TestCase):
    def run_kind(self, kind):
        """[(probe answer, switch drop deltas)] of RUNS runs without ring overflow."""
        sw = Daemon([f"p{i},type={kind},path={{dir}}/p{i}.sock" for i in range(2)])
        sw.wait_ready()
        guest = ProbeGuest(kind, sw.dir)
        runs = []
        try:
            for name in ("p0", "p1"):
                sw.wait_port_up(name)
            for i in range(RUNS):
                for _ in range(ATTEMPTS):
                    before = drops(sw)
                    downs = sw.link_changes("p1").count("down")
                    answer = guest.cmd(f"linkup {DST} {SRC} {RATE} 50 200", timeout=60)
                    self.assertNotIn("error", answer)
                    after = drops(sw)
                    delta = {k: after[k] - before[k] for k in after}
                    if delta["queue_full"] == 0:
                        break
                else:
                    self.skipTest(f"{kind}: the switch found the guest's ring full in "
                                  f"{ATTEMPTS} runs in a row (this machine is too loaded)")
                runs.append((answer, delta))
                what = f"{kind} run {i}: {answer}, switch drops {delta}"
                self.assertEqual(answer["link_up"], 1, what)
                # The receiver was really gone (its frames then were flooded to nobody,
                # unless the worker, scheduled out, still had them queued when it was back).
                wait_for(lambda: sw.link_changes("p1").count("down") > downs, 10,
                         f"{what}: the switch saw p1 go")
                self.assertGreater(answer["sent_after_up"], 0, what)
                self.assertEqual(answer["duplicates"], 0, what)
                self.assertEqual(answer["reordered"], 0, what)
                # Every frame not received is one the switch counted as dropped.
                self.assertEqual(answer["sent"] - answer["received"],
                                 delta["no_destination"] + delta["link_down"], what)
                # Once the switch delivered a frame to the guest, none after is lost.
                self.assertEqual(answer["lost_after_first"], 0, what)
            return runs
        finally:
            guest.quit()
            self.assertEqual(sw.stop(), 0)

    def test_memif_loses_nothing_after_the_guests_link_is_up(self):
        for answer, delta in self.run_kind("memif"):
            self.assertEqual(answer["lost_after_up"], 0, f"{answer}, switch drops {delta}")

    def test_vhost_user_loses_nothing_once_the_switch_knows(self):
        self.run_kind("vhost-user")


if __name__ == "__main__":
    unittest.main(verbosity=2)
