"""Guardrails through the real daemon: storm control, ingress policing, the 802.1D reserved
group addresses, BPDU guard, and a Linux bridge's real BPDUs.

- Storm control (a: storm_broadcast=2k; b and c vhost-user): b's unicast to c arrives
  as completely while a floods broadcasts as fast as it can as without the flood; a's
  broadcasts delivered stay within the meter (rate x time + burst), the rest counted as
  `reason="storm"`, every frame a sent accounted for (storm drop or flooded to both b and
  c, delivered or a counted transmit drop).
- Policing (police_pps=, police_bps= with their bursts): what a port's frames get through
  stays within the meter, the rest is `reason="policed"`, every frame counted.
- Reserved addresses (01:80:C2:00:00:00-0F): never forwarded, counted `reason="reserved"`
  exactly, from vhost-user and memif; 01:80:C2:00:00:10 (outside the range) floods.
- BPDU guard: a BPDU (to 01:80:C2:00:00:00) from a bpdu_guard=1 port shuts it (gauge,
  counter, log line, `port show`), its frames are then dropped (`shut`), nothing is sent
  to it (a static MAC on it counts `link_down`), its learned MACs are gone; `hvswitchctl
  port enable` ends it. Other reserved frames (LACP) do not shut it; a port without the
  guard sending a BPDU is not shut.
- A kernel bridge with STP on, in a namespace behind a host port: its BPDUs (hello every
  2 s) reach no guest and are all counted `reserved`; behind a bpdu_guard=1 port the first
  one shuts the port, and again after `port enable`.

Pass/fail is decided on counts only; the meters' time is used only as an upper bound of
what they can let through (the wall time around the traffic, generously).
"""
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, Guest, in_netns, start_bridge, stop_bridge,  # noqa: E402
                     wait_flow, wait_for)

A, B, C = "02:00:00:00:17:0a", "02:00:00:00:17:0b", "02:00:00:00:17:0c"
S = "02:00:00:00:17:5a"  # a static FDB entry on port a
BCAST = "ff:ff:ff:ff:ff:ff"
STP = "01:80:c2:00:00:00"
LACP = "01:80:c2:00:00:02"
LLDP = "01:80:c2:00:00:0e"
RESERVED_LAST = "01:80:c2:00:00:0f"
NOT_RESERVED = "01:80:c2:00:00:10"  # just past the range: an ordinary group address
PID = os.getpid()

RX_DROP = "hvswitch_port_receive_drop_total"
TX_DROP = "hvswitch_port_transmit_drop_total"


def is_reserved(mac):
    return mac.lower().startswith("01:80:c2:00:00:0")


def port_counts(metrics, port):
    """One port's frame counters from a scrape: rx/tx packets and drops by reason."""
    out = {"rx": 0, "tx": 0, "rx_drops": {}, "tx_drops": {}}
    for (name, labels), value in metrics.items():
        labels = dict(labels)
        if labels.get("port") != port:
            continue
        if name == "hvswitch_port_receive_packets_total":
            out["rx"] = int(value)
        elif name == "hvswitch_port_transmit_packets_total":
            out["tx"] = int(value)
        elif name == RX_DROP:
            out["rx_drops"][labels["reason"]] = int(value)
        elif name == TX_DROP:
            out["tx_drops"][labels["reason"]] = int(value)
    return out


def delta(after, before):
    """after - before of port_counts() results."""
    reasons = lambda key: set(after[key]) | set(before[key])  # noqa: E731
    return {"rx": after["rx"] - before["rx"], "tx": after["tx"] - before["tx"],
            **{key: {r: after[key].get(r, 0) - before[key].get(r, 0) for r in reasons(key)}
               for key in ("rx_drops", "tx_drops")}}


def logged(sw, *parts):
    """Whether one line of the daemon's log holds every one of `parts`."""
    return any(all(p in line for p in parts) for line in sw.output().splitlines())


def reserved_flows(guest):
    """The guest's received flows to a reserved address: {"SRC>DST": n}."""
    return {flow: n for flow, n in guest.stats()["flows"].items()
            if is_reserved(flow.split(">")[1].split("@")[0])}


def settle(sw, guests, timeout=30):
    """Waits until every port's counters stopped moving and each port has counted, as
    received, every frame its guest sent; returns ({port: port_counts}, {port: stats})."""
    last = [None]

    def settled():
        metrics = sw.scrape()
        now = ({p: port_counts(metrics, p) for p in guests},
               {p: g.stats() for p, g in guests.items()})
        done = last[0] == now and all(now[0][p]["rx"] == now[1][p]["tx"] for p in guests)
        last[0] = now
        return done and now
    return wait_for(settled, timeout, "counters to settle")


class Flood(threading.Thread):
    """A guest sending DST<-SRC frames as fast as it can until stop(): hvs_guest's send
    gives up after 5 s, so it is sent again and again. Only this thread talks to the guest
    meanwhile."""

    def __init__(self, guest, dst, src, per_command=500000):
        super().__init__(daemon=True)
        self.guest, self.line = guest, f"send {dst} {src} {per_command}"
        self.sent, self.commands, self.error = 0, 0, None
        self._halt = threading.Event()

    def run(self):
        try:
            while not self._halt.is_set():
                self.sent += self.guest.cmd(self.line, timeout=60)["sent"]
                self.commands += 1
        except BaseException as e:  # noqa: BLE001  re-raised by finish()
            self.error = e

    def finish(self):
        self._halt.set()
        self.join(90)
        if self.is_alive():
            raise AssertionError("the flooding guest did not answer")
        if self.error:
            raise self.error
        return self.sent


class StormControlTest(unittest.TestCase):
    RATE = 2000    # storm_broadcast=2k
    BURST = 64     # its default: max(64, RATE / 100)
    N = 20000      # b's unicast frames to c, each time
    # Sent at a time: well inside c's ring (virtio-user's 256, less what the guest has yet
    # to refill, plus the storm meter's burst of a's broadcasts), so that b's frames alone
    # never overflow it. Without storm control c's ring is full of a's broadcasts and c
    # gets 60-70 % of b's frames (75-90 % with a memif c and its larger ring: a weaker test).
    CHUNK = 160

    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", ",storm_broadcast=2k"), ("b", "vhost-user", ""),
             ("c", "vhost-user", "")])

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    def storm(self, port):
        return self.sw.value(RX_DROP, port=port, reason="storm") or 0

    def paced_unicast(self, total):
        """b sends `total` frames to C, CHUNK at a time, each chunk once c has received the
        last (or its count has not moved for 0.2 s: lost frames never come); returns how
        many c got. The pacing keeps c's ring from overflowing by b's frames alone, so what
        is lost is lost to other traffic."""
        b, c = self.guests["b"], self.guests["c"]
        before = c.flow(B, C)
        sent = 0
        while sent < total:
            n = min(self.CHUNK, total - sent)
            b.send(C, B, n)
            sent += n
            # (a guest sharing its CPU with the flooding one may take tens of ms to drain)
            last, moved = -1, time.monotonic()
            while time.monotonic() - moved < 0.2:
                got = c.flow(B, C) - before
                if got >= sent:
                    break
                if got != last:
                    last, moved = got, time.monotonic()
                time.sleep(0.002)
        return wait_for(lambda: self.settled_flow(c, B, C), 10, "c's count to settle") - before

    def settled_flow(self, guest, src, dst):
        first = guest.flow(src, dst)
        time.sleep(0.1)
        return first if guest.flow(src, dst) == first else None

    def test_storm_control_keeps_other_guests_traffic(self):
        a, b, c = (self.guests[p] for p in "abc")
        b.send(BCAST, B, 1)
        c.send(BCAST, C, 1)
        wait_flow(c, B, BCAST, 1)
        wait_flow(b, C, BCAST, 1)
        baseline = self.paced_unicast(self.N)
        print(f"\nbaseline: c received {baseline} of {self.N}", file=sys.stderr)
        self.assertGreaterEqual(baseline, self.N // 2,
                                "c loses b's frames even without a flood: nothing to compare")

        counts0, stats0 = settle(self.sw, self.guests)
        flood = Flood(a, BCAST, A)
        t0 = time.monotonic()
        flood.start()
        try:  # the flood is on once the meter drops some of it
            wait_for(lambda: flood.error or self.storm("a") > 0, 30, "storm drops on a")
            during = self.paced_unicast(self.N)
        finally:
            sent = flood.finish()
        counts1, stats1 = settle(self.sw, self.guests)
        t1 = time.monotonic()
        d = {p: delta(counts1[p], counts0[p]) for p in "abc"}
        flows = {p: {f: n - stats0[p]["flows"].get(f, 0) for f, n in stats1[p]["flows"].items()}
                 for p in "abc"}
        flooded = d["b"]["tx"] + sum(d["b"]["tx_drops"].values())
        self.assertEqual(flows["c"].get(f"{B}>{C}", 0), during)  # nothing arrived later
        print(f"flood: a sent {sent} broadcasts in {t1 - t0:.1f} s ({flood.commands} sends); "
              f"storm drops {d['a']['rx_drops'].get('storm')}, flooded {flooded}; "
              f"c received {during} of b's {self.N}; drops a {d['a']['rx_drops']}, "
              f"b {d['b']['tx_drops']}, c {d['c']['tx_drops']}", file=sys.stderr)

        # The acceptance point: b's frames reach c as they did without the flood.
        self.assertGreaterEqual(during, 0.9 * baseline,
                                f"c received {during} of {self.N} during a's flood, "
                                f"{baseline} without")
        # Every frame a sent was received and is a storm drop or flooded; nothing else.
        self.assertEqual(d["a"]["rx"], sent)
        self.assertEqual(stats1["a"]["tx"] - stats0["a"]["tx"], sent)
        rx_drops_a = {r: n for r, n in d["a"]["rx_drops"].items() if n}
        storm = rx_drops_a.pop("storm", 0)
        self.assertEqual(rx_drops_a, {}, "a's frames dropped for other reasons than storm")
        self.assertEqual(d["a"]["rx"], storm + flooded)
        # Flooded frames went to c as well as b (c also got b's frames, none dropped at b).
        self.assertEqual({r: n for r, n in d["b"]["rx_drops"].items() if n}, {})
        self.assertEqual(d["c"]["tx"] + sum(d["c"]["tx_drops"].values()), flooded + self.N)
        # What b's guest received is what the switch sent it: a's broadcasts only.
        self.assertEqual(flows["b"].get(f"{A}>{BCAST}", 0), d["b"]["tx"])
        self.assertEqual(flows["c"].get(f"{A}>{BCAST}", 0) + during, d["c"]["tx"])
        # The meter: far below what a sent, at most its rate over the time plus a burst
        # (5 % and a burst more for the meter's arithmetic and the clocks).
        # (a sent nothing before the flood: its meter was full, a burst at least passes)
        self.assertGreaterEqual(flooded, self.BURST, "storm control let less than a burst through")
        self.assertLess(flooded * 4, sent, "storm control let most of the flood through")
        self.assertLessEqual(flooded, self.RATE * (t1 - t0) * 1.05 + 2 * self.BURST)


class PolicingTest(unittest.TestCase):
    """a: police_pps=1000 with a burst of 100 frames; d: police_bps=1M (bits a second,
    whole frames: 1953 frames of 64 bytes) with a burst of 10k bytes (156 frames)."""

    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", ",police_pps=1k,police_pps_burst=100"),
             ("d", "vhost-user", ",police_bps=1M,police_bps_burst=10k"),
             ("b", "memif", "")])

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    ROUNDS, PER_ROUND, PAUSE = 25, 4000, 0.02

    def check_policed(self, port, src, burst, max_frames):
        """`port` sends frames to B (learned on b) as fast as it can, ROUNDS times PER_ROUND
        with PAUSE seconds between (shorter than the meters' bursts take to refill: a meter
        refilling too fast lets more through than its rate allows): b gets at most
        max_frames(seconds) of them and, the meter full at the start (the port sent nothing
        before), at least its burst; the rest are policed, each one counted."""
        guest, b = self.guests[port], self.guests["b"]
        counts0, stats0 = settle(self.sw, self.guests)
        t0 = time.monotonic()
        sent = 0
        for _ in range(self.ROUNDS):
            sent += guest.cmd(f"send {B} {src} {self.PER_ROUND}", timeout=60)["sent"]
            time.sleep(self.PAUSE)
        counts1, stats1 = settle(self.sw, self.guests)
        seconds = time.monotonic() - t0
        d = {p: delta(counts1[p], counts0[p]) for p in self.guests}
        got = b.stats()["flows"].get(f"{src}>{B}", 0) - stats0["b"]["flows"].get(f"{src}>{B}", 0)
        policed = d[port]["rx_drops"].get("policed", 0)
        print(f"\n{port}: sent {sent} in {seconds:.2f} s, {policed} policed, b received {got} "
              f"(at most {max_frames(seconds):.0f})", file=sys.stderr)
        self.assertEqual(d[port]["rx"], sent)
        self.assertEqual({r: n for r, n in d[port]["rx_drops"].items() if n and r != "policed"},
                         {})
        self.assertEqual(d["b"]["tx"] + sum(d["b"]["tx_drops"].values()), sent - policed)
        self.assertEqual(got, d["b"]["tx"])
        self.assertGreater(policed, 0)
        self.assertGreaterEqual(got, burst)
        self.assertLessEqual(sent - policed, max_frames(seconds))

    def test_policing_drops_what_exceeds_the_meter(self):
        self.guests["b"].send(BCAST, B, 1)
        wait_flow(self.guests["a"], B, BCAST, 1)
        wait_flow(self.guests["d"], B, BCAST, 1)
        wait_for(lambda: any(e["mac"] == B for e in self.sw.ctl("fdb", "show")["entries"]), 10,
                 "B learned")
        # Frames a second and their burst; 5 % and 8 frames more for the meter's arithmetic.
        self.check_policed("a", A, 100, lambda s: 1000 * s * 1.05 + 100 + 8)
        # Bytes: hvs_guest's frames are 64 bytes long.
        self.check_policed("d", C, 10000 // 64, lambda s: (1e6 / 8 * s * 1.05 + 10000) / 64 + 8)


class ReservedAddressTest(unittest.TestCase):
    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", ""), ("b", "vhost-user", ""), ("c", "memif", "")])

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    def reserved(self, port):
        return self.sw.value(RX_DROP, port=port, reason="reserved") or 0

    def test_reserved_group_addresses_are_never_forwarded(self):
        a, b, c = (self.guests[p] for p in "abc")
        sent = {STP: 3, LACP: 2, LLDP: 4, RESERVED_LAST: 1}
        for dst, n in sent.items():
            a.send(dst, A, n)
        a.send(NOT_RESERVED, A, 2)  # not reserved: floods like any group address
        a.send(BCAST, A, 1)  # sent after the others: once it arrives, they would have
        for guest in (b, c):
            wait_flow(guest, A, BCAST, 1)
            wait_flow(guest, A, NOT_RESERVED, 2)
        wait_for(lambda: self.reserved("a") >= 10, 10, "10 reserved drops on a")
        for guest in (b, c):
            self.assertEqual(reserved_flows(guest), {}, guest.name)
        # From a memif port too.
        c.send(STP, C, 2)
        c.send(LLDP, C, 1)
        c.send(BCAST, C, 1)
        for guest in (a, b):
            wait_flow(guest, C, BCAST, 1)
        wait_for(lambda: self.reserved("c") >= 3, 10, "3 reserved drops on c")
        counts, stats = settle(self.sw, self.guests)
        self.assertEqual(self.reserved("a"), sum(sent.values()))
        self.assertEqual(self.reserved("c"), 3)
        self.assertEqual(self.reserved("b"), 0)
        for guest in (a, b, c):
            self.assertEqual(reserved_flows(guest), {}, guest.name)
        # every frame counted as received, nothing else dropped
        self.assertEqual(counts["a"]["rx"], sum(sent.values()) + 3)
        for port in "abc":
            self.assertEqual({r: n for r, n in counts[port]["rx_drops"].items()
                              if n and r != "reserved"}, {}, port)


class BpduGuardTest(unittest.TestCase):
    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", ",bpdu_guard=1"), ("b", "vhost-user", ""),
             ("c", "memif", "")], extra=[f"--fdb_static=a,{S}"])

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    def v(self, name, **labels):
        return self.sw.value(name, **labels) or 0

    def drop(self, port, reason):
        return self.v(RX_DROP, port=port, reason=reason)

    def shut(self, port):
        return self.sw.value("hvswitch_port_shut", port=port)

    def shutdowns(self, port):
        return self.sw.value("hvswitch_port_bpdu_guard_shutdowns_total", port=port)

    def fdb(self, port):
        return {e["mac"] for e in self.sw.ctl("fdb", "show")["entries"] if e["port"] == port}

    def test_a_bpdu_shuts_a_guarded_port_until_enabled(self):
        a, b, c = (self.guests[p] for p in "abc")
        a.send(BCAST, A, 1)
        for guest in (b, c):
            wait_flow(guest, A, BCAST, 1)
        b.send(BCAST, B, 1)
        wait_flow(a, B, BCAST, 1)
        wait_for(lambda: self.fdb("a") == {A, S}, 10, "A learned on a")
        self.assertEqual(self.shut("a"), 0)
        self.assertEqual(self.shutdowns("a"), 0)
        self.assertFalse(self.sw.ctl("port", "show", "a")["port"]["shut"])

        # Another reserved address (LACP) is dropped, but does not shut the port.
        a.send(LACP, A, 1)
        a.send(BCAST, A, 1)
        wait_flow(b, A, BCAST, 2)
        self.assertEqual(self.drop("a", "reserved"), 1)
        self.assertEqual(self.shut("a"), 0)

        # A BPDU shuts it.
        a.send(STP, A, 1)
        wait_for(lambda: self.shut("a") == 1, 10, "a shut")
        wait_for(lambda: logged(self.sw, "port 'a': shut", "bpdu_guard"), 10, "the shut logged")
        self.assertEqual(self.shutdowns("a"), 1)
        self.assertTrue(self.sw.ctl("port", "show", "a")["port"]["shut"])
        # the BPDU itself: dropped (as reserved or as shut, not forwarded)
        wait_for(lambda: self.drop("a", "reserved") + self.drop("a", "shut") == 2, 10,
                 "the BPDU counted as dropped")
        # its learned MAC is gone, the static entry stays
        wait_for(lambda: self.fdb("a") == {S}, 10, "a's learned MACs flushed")

        # Its frames are dropped as shut.
        shut_before = self.drop("a", "shut")
        a.send(BCAST, A, 5)
        a.send(STP, A, 1)
        wait_for(lambda: self.drop("a", "shut") == shut_before + 6, 10, "6 shut drops on a")
        # Nothing is sent to it: to its static MAC counts link_down, its learned MAC is
        # unknown now (floods to c only), broadcasts reach c only.
        link_down = self.v(TX_DROP, port="a", reason="link_down")
        b.send(S, B, 3)
        wait_for(lambda: self.v(TX_DROP, port="a", reason="link_down") == link_down + 3, 10,
                 "3 link_down drops on a")
        b.send(A, B, 2)
        wait_flow(c, B, A, 2)
        b.send(BCAST, B, 1)
        wait_flow(c, B, BCAST, 2)  # its first one came at the start
        counts, stats = settle(self.sw, self.guests)
        self.assertEqual(stats["a"]["flows"], {f"{B}>{BCAST}": 1})
        for guest in (b, c):
            self.assertEqual(guest.flow(A, BCAST), 2, guest.name)
            self.assertEqual(reserved_flows(guest), {}, guest.name)
        self.assertEqual(counts["a"]["rx"], stats["a"]["tx"])  # every frame still counted
        self.assertEqual(self.shutdowns("a"), 1)
        self.assertEqual(self.shut("a"), 1)

        # Enabled again: it forwards and is sent to.
        self.sw.ctl("port", "enable", "a", as_json=False)
        wait_for(lambda: self.shut("a") == 0, 10, "a enabled")
        wait_for(lambda: logged(self.sw, "port 'a': enabled"), 10, "the enable logged")
        self.assertFalse(self.sw.ctl("port", "show", "a")["port"]["shut"])
        a.send(BCAST, A, 1)
        for guest in (b, c):
            wait_flow(guest, A, BCAST, 3)
        b.send(S, B, 1)
        wait_flow(a, B, S, 1)
        wait_for(lambda: self.fdb("a") == {A, S}, 10, "A learned on a again")
        b.send(A, B, 1)
        wait_flow(a, B, A, 1)  # A learned on a again
        self.assertEqual(c.flow(B, A), 2)
        self.assertEqual(self.shutdowns("a"), 1)

        # A second BPDU shuts it a second time.
        a.send(STP, A, 1)
        wait_for(lambda: self.shut("a") == 1, 10, "a shut again")
        self.assertEqual(self.shutdowns("a"), 2)
        self.sw.ctl("port", "enable", "a", as_json=False)
        wait_for(lambda: self.shut("a") == 0, 10, "a enabled again")

        # A port without the guard that sends a BPDU is not shut: a reserved drop only.
        c.send(STP, C, 2)
        wait_for(lambda: self.drop("c", "reserved") == 2, 10, "2 reserved drops on c")
        c.send(BCAST, C, 1)
        for guest in (a, b):
            wait_flow(guest, C, BCAST, 1)
            self.assertEqual(reserved_flows(guest), {}, guest.name)
        self.assertIn(self.shut("c"), (0, None))
        self.assertIn(self.shutdowns("c"), (0, None))
        self.assertFalse(self.sw.ctl("port", "show", "c")["port"]["shut"])
        self.assertEqual(self.drop("c", "shut"), 0)
        self.assertFalse(logged(self.sw, "port 'c': shut"))


NS_H, NS_G = f"hvs-stp-{PID}", f"hvs-stpg-{PID}"
IF_H, IF_G = f"sh{PID % 100000}", f"sg{PID % 100000}"


class KernelStpTest(unittest.TestCase):
    """Port h: a tap in namespace NS_H, enslaved there to a Linux bridge with STP on;
    port hg: the same in NS_G, with bpdu_guard=1; port g: a guest. The namespaces have IPv6
    off, so their bridges send nothing but BPDUs."""

    @classmethod
    def setUpClass(cls):
        cls.made = []
        try:
            for ns in (NS_H, NS_G):
                subprocess.run(["ip", "netns", "add", ns], check=True)
                cls.made.append(ns)
                for sysctl in ("net.ipv6.conf.all.disable_ipv6=1",
                               "net.ipv6.conf.default.disable_ipv6=1"):
                    in_netns(ns, "sysctl", "-qw", sysctl)
                in_netns(ns, "ip", "link", "set", "lo", "up")
                r = subprocess.run(["ip", "-n", ns, "link", "add", "br0", "type", "bridge",
                                    "stp_state", "1"],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise unittest.SkipTest(f"no Linux bridge here: {r.stderr.strip()}")
                stp = in_netns(ns, "cat", "/sys/class/net/br0/bridge/stp_state").strip()
                if stp != "1":
                    raise unittest.SkipTest(f"the kernel bridge's STP is off in a namespace "
                                            f"(stp_state {stp})")
            cls.sw = Daemon([f"h,type=host,iface={IF_H},netns={NS_H}",
                             f"hg,type=host,iface={IF_G},netns={NS_G},bpdu_guard=1",
                             "g,type=vhost-user,path={dir}/g.sock"])
            cls.sw.wait_ready()
            cls.g = Guest("vhost-user", f"{cls.sw.dir}/g.sock", "g")
            cls.g.wait_link()
            for port in ("h", "hg", "g"):
                cls.sw.wait_port_up(port)
            for ns, iface in ((NS_H, IF_H), (NS_G, IF_G)):
                in_netns(ns, "ip", "link", "set", iface, "master", "br0")
                in_netns(ns, "ip", "link", "set", "br0", "up")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            if hasattr(cls, "g"):
                cls.g.quit()
            if hasattr(cls, "sw"):
                assert cls.sw.stop() == 0
        finally:
            for ns in cls.made:
                subprocess.run(["ip", "netns", "del", ns], check=False)

    def tap_sent(self, ns, iface):
        """Frames the namespace's kernel sent into the tap (what hvswitch reads from it)."""
        return int(in_netns(ns, "cat", f"/sys/class/net/{iface}/statistics/tx_packets"))

    def counts(self, port):
        return port_counts(self.sw.scrape(), port)

    def consistent(self, ns, iface, port):
        """The port's counters when the tap's count is the same before and after them and
        the port received all of it."""
        before = self.tap_sent(ns, iface)
        counts = self.counts(port)
        return (counts if before == self.tap_sent(ns, iface) == counts["rx"] else None)

    def test_1_bpdus_are_never_forwarded(self):
        wait_for(lambda: (self.sw.value(RX_DROP, port="h", reason="reserved") or 0) >= 3, 30,
                 "3 BPDUs from the kernel bridge")
        counts = wait_for(lambda: self.consistent(NS_H, IF_H, "h"), 10,
                          "h's counters to match its tap's")
        print(f"\nh: {counts}", file=sys.stderr)
        self.assertGreaterEqual(counts["rx"], 3)
        # all it sent was BPDUs: every one counted as reserved
        self.assertEqual({r: n for r, n in counts["rx_drops"].items() if n},
                         {"reserved": counts["rx"]})
        self.assertEqual(reserved_flows(self.g), {})
        self.assertIn(self.sw.value("hvswitch_port_shut", port="h"), (0, None))
        self.assertIn(self.sw.value("hvswitch_port_bpdu_guard_shutdowns_total", port="h"),
                      (0, None))

    def test_2_bpdu_guard_shuts_the_port(self):
        wait_for(lambda: self.sw.value("hvswitch_port_shut", port="hg") == 1, 30, "hg shut")
        wait_for(lambda: logged(self.sw, "port 'hg': shut", "bpdu_guard"), 10,
                 "the shut logged")
        self.assertEqual(self.sw.value("hvswitch_port_bpdu_guard_shutdowns_total", port="hg"), 1)
        self.assertTrue(self.sw.ctl("port", "show", "hg")["port"]["shut"])
        # the next hellos are dropped as shut
        wait_for(lambda: (self.sw.value(RX_DROP, port="hg", reason="shut") or 0) >= 1, 30,
                 "a BPDU dropped as shut")
        counts = wait_for(lambda: self.consistent(NS_G, IF_G, "hg"), 10,
                          "hg's counters to match its tap's")
        print(f"\nhg: {counts}", file=sys.stderr)
        self.assertEqual(sum(counts["rx_drops"].values()), counts["rx"])
        self.assertEqual(reserved_flows(self.g), {})
        # Enabled, the next hello shuts it again.
        self.sw.ctl("port", "enable", "hg", as_json=False)
        wait_for(lambda: logged(self.sw, "port 'hg': enabled"), 10, "the enable logged")
        wait_for(lambda: self.sw.value("hvswitch_port_bpdu_guard_shutdowns_total",
                                       port="hg") == 2, 30, "hg shut a second time")
        self.assertEqual(self.sw.value("hvswitch_port_shut", port="hg"), 1)
        self.assertEqual(reserved_flows(self.g), {})


if __name__ == "__main__":
    unittest.main(verbosity=2)
