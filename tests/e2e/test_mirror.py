"""Port mirroring through the real daemon: an analyser port receives exactly the mirrored
frames, byte for byte what `hvswitchctl capture` records of the mirrored port, and nothing
else; a stalled analyser costs the mirrored ports nothing; sessions are shown, counted,
refused where they must be, saved and brought back.

- Exactness (four namespaces behind type=host ports, IPv6 off and static neighbours, so
  that nothing crosses the ports but the test's frames): a and c are access ports of
  VLAN 10, b a trunk of VLAN 10, m the analyser, where tshark captures (promiscuous). B
  sends echo requests to A, tagged (made here: this kernel has no VLAN interfaces), and
  A's kernel answers them; A sends small UDP datagrams (partial checksums, from its tap's
  offloads) to a host nobody is (flooded, to b too); B sends two untagged frames b drops
  (`vlan`); meanwhile C pings A (frames that never cross b). So every frame on b but the
  dropped ones is tagged, both ways. With b mirrored to m, `hvswitchctl capture b` of the
  same direction runs meanwhile: m's frames are the captured frames, in order, byte for
  byte (with `--vlan 100`: each with a tag 100 inserted after the MACs, in front of its
  own tag 10); `--direction rx` gives what B sent, the dropped frames included, `tx` what
  b was sent. The session's counters, m's transmit counters and its tap's receive count
  agree. (Compared against another port's capture, the same check fails.)
- The analyser takes nothing else: C's broadcast, unknown unicast and unicast to M's MAC
  (learned on m before the session, forgotten when it starts) reach a and b, never m;
  frames M sends are all dropped, counted `mirror_port` exactly, and never learned.
- A stalled analyser (a paused hvs_guest on s): two guests exchange a fixed number of
  frames at full speed, g1 mirrored to s both ways. Every frame arrives; the copies made
  are exactly the frames g1 received and was sent, and s's transmitted frames (its ring)
  plus its `queue_full` drops are the copies; s is never retried; `mirror show` and
  /metrics agree; resumed, s reads exactly what it took.
- A down analyser (a memif port without a guest) gets no copies, counted `link_down` on
  it; that count should be the copies it would have had, of the frames the mirrored port
  took, but it is every frame offered to the port (a bug, an expected failure).
- Control (vhost-user guests owning their sockets, so that they outlive a restart): a
  session from `--mirror=` with a tag and one added with hvswitchctl, to one analyser;
  `mirror show` (JSON and table), the copies at the analyser guest (tagged or not),
  `port show` analyser_of, /metrics (promtool); refused: `port del` of the analyser,
  sessions whose ports clash with another's, a static MAC on an analyser and an analyser
  with static MACs; `config show` and the --save_config file; after a restart from that
  file both sessions are back and copy again; deleting a mirrored port leaves its
  sessions (saved so), a session goes with its last port; `mirror del` makes the
  analyser an ordinary port again. A bad `--mirror=` stops the start with one line.

Pass/fail is decided on counts and bytes only, never on timing.
"""
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from harness import (HVSWITCH, HVSWITCHCTL, Daemon, Guest, _live, in_netns,  # noqa: E402
                     parse_metrics, start_bridge, stop_bridge, wait_flow, wait_for)
from netns_counters import send_udp  # noqa: E402
from test_guards import port_counts  # noqa: E402
from test_ip_guard import (checksum, ether, ipv4, mac, ping, ping_result, send_frames,  # noqa: E402
                           start_ping)

PID = os.getpid()
BCAST = "ff:ff:ff:ff:ff:ff"
COPIES = "hvswitch_mirror_copies_total"
FAILURES = "hvswitch_mirror_copy_failures_total"
TX_DROP = "hvswitch_port_transmit_drop_total"
TX_DROP_REASONS = ("link_down", "mtu", "queue_full", "vlan")  # some of them, at least


# --- pcapng -----------------------------------------------------------------------------

def pcapng_frames(path, growing=False):
    """The frames of a pcapng file, in order, each checked to be an Ethernet frame captured
    whole. `growing`: a file still being written, whose last block may be cut short."""
    with open(path, "rb") as f:
        data = f.read()
    frames, linktypes, at, order = [], [], 0, "<"
    while at < len(data):
        if growing and at + 8 > len(data):
            break
        kind = struct.unpack_from(order + "I", data, at)[0]
        if kind == 0x0A0D0D0A:  # section header: its byte-order magic says which
            order = "<" if data[at + 8:at + 12] == b"\x4d\x3c\x2b\x1a" else ">"
        length = struct.unpack_from(order + "I", data, at + 4)[0]
        if growing and at + length > len(data):
            break
        body = data[at + 8:at + length - 4]
        if kind == 1:  # interface description
            linktypes.append(struct.unpack_from(order + "H", body)[0])
        elif kind == 6:  # enhanced packet
            iface, _, _, captured, wire = struct.unpack_from(order + "5I", body)
            if linktypes[iface] != 1 or captured != wire:
                raise AssertionError(f"{path}: frame {len(frames)}: link type "
                                     f"{linktypes[iface]}, {captured} of {wire} bytes")
            frames.append(body[20:20 + captured])
        elif kind in (2, 3):
            raise AssertionError(f"{path}: a block of type {kind}")
        at += length
    return frames


def tags(frame):
    """The VLANs of a frame's 802.1Q/802.1ad tags, outermost first."""
    out, at = [], 12
    while frame[at:at + 2] in (b"\x81\x00", b"\x88\xa8"):
        out.append(struct.unpack_from("!H", frame, at + 2)[0] & 0xfff)
        at += 4
    return out


def describe(frame):
    """One line for an assertion message: MACs, tags, and an IPv4 frame's addresses."""
    at = 12 + 4 * len(tags(frame))
    out = [f"{frame[6:12].hex(':')}>{frame[:6].hex(':')}"] + [f"tag {v}" for v in tags(frame)]
    if frame[at:at + 2] == b"\x08\x00":
        ip = frame[at + 2:]
        proto = {1: "icmp", 17: "udp"}.get(ip[9], str(ip[9]))
        out.append(f"{'.'.join(map(str, ip[12:16]))}>{'.'.join(map(str, ip[16:20]))} {proto}")
    else:
        out.append(f"type {frame[at:at + 2].hex()}")
    return f"{' '.join(out)} ({len(frame)} bytes)"


def icmp_echo(ident, seq):
    """An ICMP echo request with 32 bytes of data."""
    body = struct.pack("!HH", ident, seq) + bytes(range(32))
    return struct.pack("!BBH", 8, 0, checksum(b"\x08\x00\x00\x00" + body)) + body


def with_tag(frame, vlan):
    """The frame with an 802.1Q tag of `vlan` inserted after its MACs."""
    return frame[:12] + struct.pack("!HH", 0x8100, vlan) + frame[12:]


class Tshark:
    """tshark capturing (promiscuous) on an interface in a namespace into a pcapng file,
    from when the constructor returns until stop()."""

    def __init__(self, ns, iface, path):
        self.path = path
        self.log = open(path + ".log", "wb")
        # A session of its own: tshark and its dumpcap are stopped together, by its id.
        self.proc = subprocess.Popen(["ip", "netns", "exec", ns, "tshark", "-q", "-n", "-i",
                                      iface, "-w", path], stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        _live.append(self.proc)
        # dumpcap writes the file's headers once its socket is open.
        wait_for(lambda: self.proc.poll() is not None or
                 (os.path.exists(path) and os.path.getsize(path) > 0), 30, "tshark started")
        if self.proc.poll() is not None:
            raise AssertionError(f"tshark exited {self.proc.returncode}: {self.output()}")

    def output(self):
        with open(self.path + ".log", "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self, count):
        """Stops it as Ctrl-C does once its file has `count` frames (dumpcap writes it out
        twice a second); returns the frames it captured."""
        wait_for(lambda: len(pcapng_frames(self.path, growing=True)) >= count, 20,
                 f"{count} frames in {self.path}")
        self.kill(signal.SIGINT)
        if self.proc.returncode != 0:
            raise AssertionError(f"tshark exited {self.proc.returncode}: {self.output()}")
        return pcapng_frames(self.path)

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(20)
        self.log.close()


class PortCapture:
    """`hvswitchctl capture PORT --direction D --count N -w FILE`, running once the
    constructor returns."""

    def __init__(self, sw, port, direction, count, path):
        self.sw, self.count, self.path = sw, count, path
        self.proc = subprocess.Popen([HVSWITCHCTL, f"--socket={sw.ctl_socket}", "capture", port,
                                      "--direction", direction, "--count", str(count), "-w",
                                      path, "--timeout", "30"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _live.append(self.proc)
        wait_for(lambda: self.proc.poll() is not None or sw.ctl("capture", "status")["active"],
                 10, "capture started")

    def frames(self):
        """Its frames once it has its count."""
        out, err = self.proc.communicate(timeout=40)
        if (self.proc.returncode, out) != (0, f"captured {self.count} frames to {self.path}\n"):
            raise AssertionError(f"capture: exit {self.proc.returncode}: {out}{err}")
        return pcapng_frames(self.path)


def assert_same_frames(test, got, expected, what):
    """got == expected, frame by frame; the message names the first difference."""
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            test.fail(f"{what}: frame {i} of {len(expected)} differs:\n  got      "
                      f"{describe(g)}\n  {g.hex()}\n  expected {describe(e)}\n  {e.hex()}")
    extra = [describe(f) for f in got[len(expected):]]
    missing = [describe(f) for f in expected[len(got):]]
    test.assertEqual((len(got), extra, missing), (len(expected), [], []),
                     f"{what}: {len(got)} frames, {len(expected)} expected")


def mirror(sw, name):
    """The session's `mirror show` row (None: no such session)."""
    return next((m for m in sw.ctl("mirror", "show")["mirrors"] if m["name"] == name), None)


def settled(read, pause=0.3):
    """read()'s value if it did not change for `pause` seconds, else None (for wait_for)."""
    first = read()
    time.sleep(pause)
    return first if read() == first else None


def increase(after, before):
    """The values of a dict that grew, by how much."""
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def stopped(sw):
    """Stops the daemon (SIGTERM), which must exit 0."""
    if sw.stop() != 0:
        raise AssertionError(f"hvswitch exited {sw.proc.returncode}")


def fdb(sw):
    """{(mac, vlan): port} of the learned and static entries."""
    return {(e["mac"], e["vlan"]): e["port"] for e in sw.ctl("fdb", "show")["entries"]}


# --- exactness and isolation, behind host ports ---------------------------------------

NS = {p: f"hvs-mir{p}-{PID}" for p in "abcm"}
IF = {p: f"mi{p}{PID % 100000}" for p in "abcm"}
V4 = {"a": "10.31.0.1", "b": "10.31.0.2", "c": "10.31.0.3"}
GHOST, GHOST_MAC = "10.31.0.99", "02:00:00:00:1d:99"  # a neighbour nobody is: flooded
VLAN, SESSION_VLAN = 10, 100
TAG = ((0x8100, VLAN),)
PINGS, DATAGRAMS, DROPPED = 20, 10, 2
# What crosses b in each direction during one round of traffic (see traffic()):
RECEIVED = PINGS + DROPPED  # B's echo requests to A and frames b drops
SENT = PINGS + DATAGRAMS    # A's echo replies and datagrams


def tap_count(ns, iface, counter):
    """The interface's rx_packets or tx_packets as its kernel counts them."""
    return int(in_netns(ns, "cat", f"/sys/class/net/{iface}/statistics/{counter}"))


class MirrorExactnessTest(unittest.TestCase):
    """Ports a (access, VLAN 10), b (trunk of VLAN 10), c (access, VLAN 10) and m (every
    VLAN), host ports in namespaces A, B, C and M; session `span` from b to m."""

    @classmethod
    def setUpClass(cls):
        # Class cleanups run last first, also when this fails: the daemon, then the
        # namespaces.
        for p in "abcm":
            subprocess.run(["ip", "netns", "add", NS[p]], check=True)
            cls.addClassCleanup(subprocess.run, ["ip", "netns", "del", NS[p]], check=False)
            for sysctl in ("net.ipv6.conf.all.disable_ipv6=1",
                           "net.ipv6.conf.default.disable_ipv6=1"):
                in_netns(NS[p], "sysctl", "-qw", sysctl)
            in_netns(NS[p], "ip", "link", "set", "lo", "up")
        cls.sw = Daemon([f"a,type=host,iface={IF['a']},netns={NS['a']},vlan={VLAN}",
                         f"b,type=host,iface={IF['b']},netns={NS['b']},trunk={VLAN}",
                         f"c,type=host,iface={IF['c']},netns={NS['c']},vlan={VLAN}",
                         f"m,type=host,iface={IF['m']},netns={NS['m']}"])
        cls.addClassCleanup(stopped, cls.sw)
        cls.sw.wait_ready()
        for p in "abcm":
            cls.sw.wait_port_up(p)
        cls.mac = {p: json.loads(in_netns(NS[p], "ip", "-j", "link", "show", IF[p]))[0]
                   ["address"] for p in "abcm"}
        # A and C have addresses; B none (its frames are made here, tagged), M none.
        for p in "ac":
            in_netns(NS[p], "ip", "addr", "add", f"{V4[p]}/24", "dev", IF[p])
            # Static neighbours: no ARP ever crosses the ports.
            for q, address in [(q, V4[q]) for q in "abc" if q != p] + [(None, GHOST)]:
                in_netns(NS[p], "ip", "neigh", "replace", address, "lladdr",
                         cls.mac[q] if q else GHOST_MAC, "dev", IF[p], "nud", "permanent")
        sent, got = ping(NS["c"], V4["a"], count=1)
        assert got == sent == 1, f"ping from C to A: {got} of {sent}"
        # B's MAC learned on b, M's on m, in VLAN 10 (m carries every VLAN until it is an
        # analyser).
        for p in "bm":
            send_frames(NS[p], IF[p], [cls.frame(BCAST, p, tags=TAG)])
        wait_for(lambda: {p: fdb(cls.sw).get((cls.mac[p], VLAN)) for p in "abcm"} ==
                 {p: p for p in "abcm"}, 10, "every MAC learned")

    @classmethod
    def frame(cls, dst, src_port, tags=()):
        return ether(dst, cls.mac[src_port], 0x88b5, bytes(46), tags)

    def add_mirror(self, *options):
        self.sw.ctl("mirror", "add", "span", "--from", "b", "--to", "m", *options)
        self.addCleanup(self.sw.ctl, "mirror", "del", "span")

    def counts(self):
        """Every port's counters (test_guards.port_counts), m's tap's received frames."""
        metrics = self.sw.scrape()
        out = {p: port_counts(metrics, p) for p in "abcm"}
        out["m_tap"] = tap_count(NS["m"], IF["m"], "rx_packets")
        return out

    def counts_once(self, reached, what):
        """The counters once reached(counts) holds and they have stopped moving."""
        wait_for(lambda: reached(self.counts()), 20, what)
        return wait_for(lambda: settled(self.counts), 20, "counters to settle")

    def traffic(self):
        """One round: RECEIVED frames from B into b, SENT frames out of b to B, and C's
        pings to A, which never cross b. B's echo requests to A are made here, tagged
        (this kernel has no VLAN interfaces); A's kernel answers each one (echo replies
        are not rate-limited), tagged again on their way out of b; A's datagrams to the
        ghost are flooded, to b too, with the partial checksums of A's tap offloads."""
        aside = start_ping(NS["c"], V4["a"], PINGS, 0.01)
        requests = [ether(self.mac["a"], self.mac["b"], 0x0800,
                          ipv4(V4["b"], V4["a"], 1, icmp_echo(PID & 0xffff, seq)), TAG)
                    for seq in range(PINGS)]
        self.assertEqual(send_frames(NS["b"], IF["b"], requests), PINGS)
        send_udp(NS["a"], GHOST, DATAGRAMS, 18)
        # Untagged, on a trunk without a native VLAN: dropped by b (after the copy).
        self.assertEqual(send_frames(NS["b"], IF["b"],
                                     [self.frame(GHOST_MAC, "b")] * DROPPED), DROPPED)
        self.assertEqual(ping_result(aside), (PINGS, PINGS), "C's pings to A")

    def mirrored(self, direction, vlan=None):
        """Mirrors b to m (`direction`, tagged with `vlan`), captures b's frames of that
        direction with hvswitchctl and m's with tshark during one round of traffic();
        checks the counters and returns (m's frames, b's captured frames)."""
        self.add_mirror("--direction", direction, *(["--vlan", str(vlan)] if vlan else []))
        copies = {"rx": RECEIVED if direction != "tx" else 0,
                  "tx": SENT if direction != "rx" else 0}
        count = copies["rx"] + copies["tx"]
        before = self.counts()
        files = tempfile.mkdtemp(prefix="mirror-", dir=self.sw.dir)
        tshark = Tshark(NS["m"], IF["m"], f"{files}/m.pcapng")
        self.addCleanup(tshark.kill)
        capture = PortCapture(self.sw, "b", direction, count, f"{files}/b.pcapng")
        self.traffic()
        captured = capture.frames()
        # Every copy sent to m and through its tap (and no more) before tshark stops.
        after = self.counts_once(lambda now: now["m"]["tx"] - before["m"]["tx"] >= count and
                                 now["m_tap"] - before["m_tap"] >= count,
                                 f"{count} frames sent to m")
        analysed = tshark.stop(count)
        session = mirror(self.sw, "span")
        self.assertEqual({k: session[f"{k}_copies"] for k in copies}, copies, "copies made")
        self.assertEqual(session["copy_failures"], 0)
        self.assertEqual({k: after["m"][k] - before["m"][k] for k in ("rx", "tx")},
                         {"rx": 0, "tx": count}, "m's frames")
        self.assertEqual(after["m"]["tx_drops"], before["m"]["tx_drops"], "m's transmit drops")
        self.assertEqual(after["m_tap"] - before["m_tap"], count, "frames m's tap received")
        # b really dropped B's untagged frames (copied as received all the same).
        self.assertEqual(increase(after["b"]["rx_drops"], before["b"]["rx_drops"]),
                         {"vlan": DROPPED})
        return analysed, captured

    def test_1_analyser_takes_nothing_else(self):
        self.add_mirror("--direction", "rx")
        wait_for(lambda: (self.mac["m"], VLAN) not in fdb(self.sw), 10,
                 "M's MAC forgotten when m became an analyser")
        # C's broadcast, unknown unicast and unicast to M's MAC: a and b, never m.
        before = self.counts()
        a_tap, b_tap = (tap_count(NS[p], IF[p], "rx_packets") for p in "ab")
        frames = [self.frame(dst, "c") for dst in (BCAST, GHOST_MAC, self.mac["m"])]
        self.assertEqual(send_frames(NS["c"], IF["c"], frames), 3)
        after = self.counts_once(lambda now: all(now[p]["tx"] - before[p]["tx"] >= 3
                                                 for p in "ab"), "3 frames sent to a and b")
        for p in "ab":
            self.assertEqual(after[p]["tx"] - before[p]["tx"], 3, f"frames sent to {p}")
        self.assertEqual((tap_count(NS["a"], IF["a"], "rx_packets") - a_tap,
                          tap_count(NS["b"], IF["b"], "rx_packets") - b_tap), (3, 3))
        self.assertEqual(after["m"], before["m"], "m was sent frames")
        self.assertEqual(after["m_tap"], before["m_tap"], "m's tap received frames")
        self.assertEqual(mirror(self.sw, "span")["tx_copies"], 0)

        # M's own frames: dropped, each counted mirror_port, none forwarded or learned.
        m_sent = tap_count(NS["m"], IF["m"], "tx_packets")
        frames = [self.frame(BCAST, "m"), self.frame(self.mac["a"], "m"),
                  self.frame(BCAST, "m", tags=TAG)] * 4
        self.assertEqual(send_frames(NS["m"], IF["m"], frames), len(frames))
        after = self.counts_once(lambda now: now["m"]["rx"] - before["m"]["rx"] >= len(frames),
                                 f"m received {len(frames)}")
        self.assertEqual(tap_count(NS["m"], IF["m"], "tx_packets") - m_sent, len(frames),
                         "M sent other frames too: the counts below would not be exact")
        self.assertEqual(after["m"]["rx"] - before["m"]["rx"], len(frames))
        self.assertEqual(increase(after["m"]["rx_drops"], before["m"]["rx_drops"]),
                         {"mirror_port": len(frames)})
        for p in "abc":
            self.assertEqual(after[p]["tx"], before[p]["tx"] + (3 if p != "c" else 0),
                             f"M's frames reached {p}")
        self.assertNotIn("m", set(fdb(self.sw).values()))

    def test_2_both_directions(self):
        analysed, captured = self.mirrored("both")
        # What crossed b is tagged (VLAN 10) both ways, but for the frames b dropped: the
        # copies are those bytes.
        self.assertEqual(sorted(map(tags, captured)), [[]] * DROPPED + [[VLAN]] * (SENT + PINGS))
        self.assertEqual(sum(f[6:12] == mac(self.mac["b"]) for f in captured), RECEIVED)
        assert_same_frames(self, analysed, captured, "m against b's capture")

    def test_3_both_directions_tagged(self):
        analysed, captured = self.mirrored("both", vlan=SESSION_VLAN)
        assert_same_frames(self, analysed, [with_tag(f, SESSION_VLAN) for f in captured],
                           f"m against b's capture with a tag {SESSION_VLAN} pushed")

    def test_4_received_only(self):
        analysed, captured = self.mirrored("rx")
        self.assertTrue(all(f[6:12] == mac(self.mac["b"]) for f in captured),
                        "b's capture: not all B's")
        self.assertEqual(sum(f[:6] == mac(GHOST_MAC) and f[12:14] == b"\x88\xb5"
                             for f in captured), DROPPED,
                         "the frames b dropped are not in its capture")
        assert_same_frames(self, analysed, captured, "m against b's received frames")

    def test_5_sent_only(self):
        analysed, captured = self.mirrored("tx")
        self.assertFalse(any(f[6:12] == mac(self.mac["b"]) for f in captured),
                         "b's capture: B's frames")
        assert_same_frames(self, analysed, captured, "m against b's sent frames")


# --- a stalled analyser, DPDK guests --------------------------------------------------

G1, G2, S = "02:00:00:00:1d:01", "02:00:00:00:1d:02", "02:00:00:00:1d:05"
STATIC = "02:00:00:00:1d:5a"
RING = 256  # virtio-user's default queue size: what a stalled vhost-user guest takes
# Frames each way per round, sent at full speed: within the receiving guest's ring, so
# that a guest busy sending loses nothing it is sent.
ROUNDS, CHUNK = 20, 200


def labelled(metrics, name, **labels):
    """One sample of a parse_metrics() scrape (None: none)."""
    return metrics.get((name, frozenset(labels.items())))


def settled_flows(guest, count):
    """The guest's received flows once it has `count` frames and gets no more."""
    wait_for(lambda: guest.stats()["rx"] >= count, 10, f"{count} frames at {guest.name}")
    return wait_for(lambda: settled(lambda: guest.stats()["flows"]), 10,
                    f"{guest.name}'s flows to settle")


class StalledAnalyserTest(unittest.TestCase):
    """g1 (vhost-user) mirrored both ways to s (vhost-user, paused); g2 (memif) its peer."""

    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("g1", "vhost-user", ""), ("g2", "memif", ""), ("s", "vhost-user", "")])
        for name, address in (("g1", G1), ("g2", G2)):
            self.guests[name].send(BCAST, address, 1)
        wait_for(lambda: self.sw.value("hvswitch_fdb_entries") == 2, 10, "2 MACs learned")
        self.sw.ctl("mirror", "add", "slow", "--from", "g1", "--to", "s")

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    def test_a_stalled_analyser_costs_the_mirrored_ports_nothing(self):
        g1, g2, s = (self.guests[p] for p in ("g1", "g2", "s"))
        self.assertEqual(s.cmd("pause"), {"ok": 1})
        before = {p: port_counts(self.sw.scrape(), p) for p in self.guests}
        for r in range(1, ROUNDS + 1):  # both ways at once
            g1.start(f"send {G2} {G1} {CHUNK}")
            g2.start(f"send {G1} {G2} {CHUNK}")
            for guest in (g1, g2):
                self.assertEqual(guest.answer()["sent"], CHUNK, guest.name)
            wait_flow(g2, G1, G2, r * CHUNK)
            wait_flow(g1, G2, G1, r * CHUNK)
        total = ROUNDS * CHUNK

        def handled(c):  # copies s took or dropped
            return c["tx"] + c["tx_drops"]["queue_full"]
        wait_for(lambda: handled(port_counts(self.sw.scrape(), "s")) >=
                 handled(before["s"]) + 2 * total, 10, "every copy at s")
        wait_for(lambda: settled(lambda: {p: port_counts(self.sw.scrape(), p)
                                          for p in self.guests}), 10, "counters to settle")
        metrics = self.sw.scrape()
        counts = {p: port_counts(metrics, p) for p in self.guests}
        session = mirror(self.sw, "slow")
        took = counts["s"]["tx"] - before["s"]["tx"]
        drops = increase(counts["s"]["tx_drops"], before["s"]["tx_drops"])
        print(f"\ns took {took} of {2 * total} copies, drops {drops}", file=sys.stderr)

        # The mirrored port and its peer lost nothing.
        for p in ("g1", "g2"):
            self.assertEqual((counts[p]["rx"] - before[p]["rx"],
                              counts[p]["tx"] - before[p]["tx"]), (total, total), p)
            self.assertEqual(counts[p]["tx_drops"], before[p]["tx_drops"], f"{p}'s drops")
            self.assertEqual(counts[p]["rx_drops"], before[p]["rx_drops"], f"{p}'s drops")
        # A copy of every frame g1 received and was sent, each taken by s or dropped there.
        self.assertEqual((session["rx_copies"], session["tx_copies"], session["copy_failures"]),
                         (total, total, 0))
        self.assertEqual(list(drops), ["queue_full"], "s's drops")
        self.assertLessEqual(took, RING, "s took more than its ring: it was not stalled")
        self.assertEqual(took + drops["queue_full"], 2 * total)
        # Never retried (a stalled guest's ring that took part of a burst would be).
        self.assertIn(labelled(metrics, "hvswitch_port_transmit_retries_total", port="s"),
                      (0, None))
        # mirror show and /metrics agree.
        for direction in ("rx", "tx"):
            self.assertEqual(labelled(metrics, COPIES, mirror="slow", direction=direction),
                             session[f"{direction}_copies"])
        self.assertEqual(labelled(metrics, FAILURES, mirror="slow"), 0)
        self.assertEqual(session["analyser_drops"]["queue_full"],
                         counts["s"]["tx_drops"]["queue_full"])
        # Resumed, s reads what it took, no more.
        self.assertEqual(s.cmd("resume"), {"ok": 1})
        flows = settled_flows(s, took)
        self.assertEqual(flows.get(f"{G1}>{G2}", 0) + flows.get(f"{G2}>{G1}", 0), took)


class DownAnalyserTest(unittest.TestCase):
    """g1 (vhost-user) sends to s (vhost-user, paused: its port takes RING frames and
    refuses the rest), mirrored as it is sent to idle, a memif port without a guest: an
    analyser that is down gets no copies, each counted `link_down` on it."""

    OFFERED = 1000

    def setUp(self):
        self.sw, self.guests = start_bridge([("g1", "vhost-user", ""), ("s", "vhost-user", "")])
        self.sw.ctl("port", "add", f"idle,type=memif,path={self.sw.dir}/idle.sock")
        self.guests["s"].send(BCAST, S, 1)
        wait_flow(self.guests["g1"], S, BCAST, 1)
        self.sw.ctl("mirror", "add", "down", "--from", "s", "--direction", "tx", "--to", "idle")

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    def offered(self):
        """g1 sends OFFERED frames to the paused s; returns what s took and refused, idle's
        link_down drops meanwhile, and the session's `mirror show` row."""
        def counts():
            metrics = self.sw.scrape()
            return {p: port_counts(metrics, p) for p in ("s", "idle")}

        def handled(c):  # frames s took or refused
            return c["s"]["tx"] + c["s"]["tx_drops"]["queue_full"]
        before = counts()
        self.assertEqual(self.guests["s"].cmd("pause"), {"ok": 1})
        self.guests["g1"].send(S, G1, self.OFFERED)
        wait_for(lambda: handled(counts()) >= handled(before) + self.OFFERED, 10,
                 f"{self.OFFERED} frames offered to s")
        after = wait_for(lambda: settled(counts), 10, "counters to settle")
        return (after["s"]["tx"] - before["s"]["tx"],
                after["s"]["tx_drops"]["queue_full"] - before["s"]["tx_drops"]["queue_full"],
                after["idle"]["tx_drops"]["link_down"] - before["idle"]["tx_drops"]["link_down"],
                mirror(self.sw, "down"))

    def test_a_down_analyser_gets_no_copies(self):
        took, refused, link_down, session = self.offered()
        print(f"\ns took {took}, refused {refused}; idle: link_down {link_down}",
              file=sys.stderr)
        self.assertEqual(took + refused, self.OFFERED)
        self.assertLessEqual(took, RING, "s took more than its ring: it was not stalled")
        self.assertEqual((session["rx_copies"], session["tx_copies"], session["copy_failures"]),
                         (0, 0, 0))
        self.assertEqual(session["analyser_drops"]["link_down"],
                         self.sw.value(TX_DROP, port="idle", reason="link_down"))

    # Counted for what the mirrored port took only, as an analyser that is up gets copies
    # of: not for frames it refused (queue_full) or that wait to be offered again.
    def test_a_down_analyser_counts_the_copies_it_would_have_had(self):
        took, _, link_down, _ = self.offered()
        self.assertEqual(link_down, took)


# --- control: show, refusals, save, restart, port removal -----------------------------

class MirrorControlTest(unittest.TestCase):
    """Ports g1, g2 and s, vhost-user in client mode: the guests own the sockets and
    outlive the daemon; idle, a memif port without a guest. Session `tap` from the command
    line: what g1 and g2 receive, tagged 7, to s; session `out`, added with hvswitchctl:
    what g2 is sent, to s too."""

    TAP = "tap,from=g1,g2,to=s,direction=rx,vlan=7"
    OUT = "out,from=g2,to=s,direction=tx"

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hvs-e2e-")
        self.saved = f"{self.dir}/saved.conf"
        self.guests = {p: Guest("vhost-user", f"{self.dir}/{p}.sock", p, server=True)
                       for p in ("g1", "g2", "s")}
        self.sw = Daemon([f"{p},type=vhost-user,path={{dir}}/{p}.sock,client=1"
                          for p in self.guests] + ["idle,type=memif,path={dir}/idle.sock"],
                         sockdir=self.dir,
                         extra=[f"--save_config={self.saved}", f"--mirror={self.TAP}"])
        self.addCleanup(lambda: self.assertEqual(stop_bridge(self.sw, self.guests), 0))
        self.sw.wait_ready()
        for guest in self.guests.values():
            guest.wait_ready()
        self.attached()

    def attached(self):
        for name, guest in self.guests.items():
            guest.wait_link()
            self.sw.wait_port_up(name)

    def refused(self, *words):
        """hvswitchctl's one-line error for a command that must fail."""
        r = self.sw.ctl(*words, as_json=False, check=False)
        self.assertEqual(r.returncode, 1, f"{' '.join(words)}: {r.stdout}")
        return r.stderr.strip()

    def saved_mirrors(self):
        with open(self.saved) as f:
            return [line.strip() for line in f if line.startswith("mirror=")]

    def specs(self):
        return [m["spec"] for m in self.sw.ctl("mirror", "show")["mirrors"]]

    def exchange(self):
        """g1 sends 3 frames to G2, g2 2 to G1."""
        g1, g2 = self.guests["g1"], self.guests["g2"]
        seen = (g2.flow(G1, G2), g1.flow(G2, G1))
        g1.send(G2, G1, 3)
        wait_flow(g2, G1, G2, seen[0] + 3)
        g2.send(G1, G2, 2)
        wait_flow(g1, G2, G1, seen[1] + 2)

    def assert_metrics(self, copies):
        """/metrics: {(mirror, direction): copies} exactly, no failures, promtool's check."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.sw.metrics_port}/metrics") as r:
            text = r.read()
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
        self.assertEqual((check.returncode, check.stdout + check.stderr), (0, b""))
        metrics = parse_metrics(text.decode())
        self.assertEqual({(dict(k)["mirror"], dict(k)["direction"]): v
                          for (name, k), v in metrics.items() if name == COPIES}, copies)
        self.assertEqual({dict(k)["mirror"]: v for (name, k), v in metrics.items()
                          if name == FAILURES}, {m: 0 for m, _ in copies})

    def test_sessions_are_shown_refused_saved_and_restored(self):
        s = self.guests["s"]
        sessions = self.sw.ctl("mirror", "show")["mirrors"]
        self.assertEqual(sessions, [{
            "name": "tap", "from": ["g1", "g2"], "direction": "rx", "to": "s", "vlan": 7,
            "spec": self.TAP, "rx_copies": 0, "tx_copies": 0, "copy_failures": 0,
            "analyser_drops": {r: 0 for r in sessions[0]["analyser_drops"]}}])
        self.assertTrue(set(TX_DROP_REASONS) <= set(sessions[0]["analyser_drops"]))
        self.sw.ctl("mirror", "add", "out", "--from", "g2", "--to", "s", "--direction", "tx")
        self.assertEqual(self.specs(), [self.TAP, self.OUT])
        self.assertEqual(self.saved_mirrors(), [f"mirror={self.TAP}", f"mirror={self.OUT}"])

        # g1's frames are copied as g1 receives them (tap, tagged) and as g2 is sent them
        # (out), g2's as g2 receives them (tap): s gets those copies and nothing else.
        self.exchange()
        copies = {f"{G1}>{G2}@7": 3, f"{G2}>{G1}@7": 2, f"{G1}>{G2}": 3}
        self.assertEqual(settled_flows(s, 8), copies)
        shown = {m["name"]: m for m in self.sw.ctl("mirror", "show")["mirrors"]}
        self.assertEqual({n: (m["rx_copies"], m["tx_copies"], m["copy_failures"])
                          for n, m in shown.items()}, {"tap": (5, 0, 0), "out": (0, 3, 0)})
        self.assert_metrics({("tap", "rx"): 5, ("tap", "tx"): 0, ("out", "rx"): 0,
                             ("out", "tx"): 3})
        table = self.sw.ctl("mirror", "show", as_json=False).stdout.splitlines()
        self.assertEqual([line.split() for line in table],
                         [["NAME", "FROM", "DIRECTION", "TO", "VLAN", "RX", "TX", "FAILED",
                           "DROPPED"], ["tap", "g1,g2", "rx", "s", "7", "5", "0", "0", "0"],
                          ["out", "g2", "tx", "s", "-", "0", "3", "0", "0"]])
        self.assertEqual(self.sw.ctl("port", "show", "s")["port"]["analyser_of"], ["tap", "out"])

        # Refused, each with its reason; nothing changes.
        self.assertIn("takes the copies of mirror 'tap'", self.refused("port", "del", "s"))
        for words, why in (
                (("x", "--from", "s", "--to", "idle"), "cannot be mirrored"),
                (("x", "--from", "g1", "--to", "g2"), "cannot take copies"),
                (("x", "--from", "g1", "--to", "g1"), "mirrored to itself"),
                (("x", "--from", "g1", "--to", "nosuch"), "no port named 'nosuch'"),
                (("x", "--from", "g1", "--to", "s", "--vlan", "4095"), "1-4094"),
                (("tap", "--from", "g1", "--to", "s"), "exists already")):
            self.assertIn(why, self.refused("mirror", "add", *words), words)
        self.assertIn("no mirror named 'nosuch'", self.refused("mirror", "del", "nosuch"))
        # An analyser carries no tunnel (its frames are dropped, it takes copies only).
        self.assertIn("is a mirror session's analyser", self.refused(
            "port", "add", "vx,type=vxlan,vni=5,vlan=7,uplink=s,local=127.0.0.1"))
        # Nothing but copies goes to an analyser: no static MAC on one, either way round.
        # (A static MAC for s is refused as on a port out of VLAN 0, which it is now.)
        self.assertIn(f"static MAC {STATIC}", self.refused("fdb", "add", "s", STATIC))
        self.sw.ctl("fdb", "add", "idle", STATIC, as_json=False)
        self.assertIn("has static MACs", self.refused("mirror", "add", "x", "--from", "g1",
                                                      "--to", "idle"))
        self.sw.ctl("fdb", "del", STATIC, as_json=False)
        self.assertEqual(self.specs(), [self.TAP, self.OUT])
        config = self.sw.ctl("config", "show", as_json=False).stdout.splitlines()
        self.assertEqual([line for line in config if line.startswith("mirror=")],
                         [f"mirror={self.TAP}", f"mirror={self.OUT}"])
        self.assertEqual(self.saved_mirrors(), [f"mirror={self.TAP}", f"mirror={self.OUT}"])

        # Started again from the saved file: both sessions, counting from zero, copying.
        self.assertEqual(self.sw.stop(), 0)
        self.sw = Daemon.from_config(self.saved, self.dir)
        self.sw.wait_ready()
        self.attached()
        self.assertEqual(self.specs(), [self.TAP, self.OUT])
        self.assertEqual([(m["rx_copies"], m["tx_copies"])
                          for m in self.sw.ctl("mirror", "show")["mirrors"]], [(0, 0), (0, 0)])
        self.exchange()
        self.assertEqual(settled_flows(s, 16), {flow: 2 * n for flow, n in copies.items()})
        self.assert_metrics({("tap", "rx"): 5, ("tap", "tx"): 0, ("out", "rx"): 0,
                             ("out", "tx"): 3})

        # A mirrored port removed leaves its sessions; `out` goes with its last port.
        self.sw.ctl("port", "del", "g2", as_json=False)
        self.assertEqual(self.specs(), ["tap,from=g1,to=s,direction=rx,vlan=7"])
        self.assertEqual(self.saved_mirrors(), ["mirror=tap,from=g1,to=s,direction=rx,vlan=7"])
        log = self.sw.output()
        self.assertIn("mirror 'tap': port 'g2' no longer mirrored (removed)", log)
        self.assertIn("mirror 'out': removed with port 'g2', its last mirrored port", log)
        self.guests.pop("g2").quit()
        g1 = self.guests["g1"]
        g1.send(BCAST, G1, 2)  # to no other port, but copied as received
        self.assertEqual(settled_flows(s, 18), {f"{G1}>{BCAST}@7": 2}
                         | {flow: 2 * n for flow, n in copies.items()})
        self.assert_metrics({("tap", "rx"): 7, ("tap", "tx"): 0})

        # mirror del: s is an ordinary port again, sent to and sending.
        self.sw.ctl("mirror", "del", "tap", as_json=False)
        self.assertEqual((self.specs(), self.saved_mirrors()), ([], []))
        self.assert_metrics({})
        g1.send(BCAST, G1, 1)
        wait_flow(s, G1, BCAST, 1)
        s.send(G1, S, 2)
        wait_flow(g1, S, G1, 2)
        self.assertEqual(self.sw.ctl("port", "show", "s")["port"].get("analyser_of", []), [])
        self.sw.ctl("port", "del", "s", as_json=False)



class BadMirrorTest(unittest.TestCase):
    def test_a_bad_mirror_stops_the_start(self):
        """Sessions from the command line are checked as hvswitchctl's are: hvswitch exits
        with one line naming the session and the problem, and leaves no socket behind."""
        for spec, why, status in (("x,from=nosuch,to=s", "no port named 'nosuch'", 1),
                                  ("x,from=g1,to=g1", "cannot be mirrored to itself", 2),
                                  ("x,from=g1,to=s,vlan=0", "vlan must be 1-4094", 2),
                                  ("x,from=g1,to=s,direction=up", "must be rx, tx or both", 2)):
            d = tempfile.mkdtemp(prefix="hvs-bad-")
            r = subprocess.run([HVSWITCH, "--metrics_address=none", f"--ctl_socket={d}/ctl",
                                f"--eal=--no-huge -m 256 --file-prefix=hvs-bad-{PID}",
                                f"--port=g1,type=memif,path={d}/g1.sock",
                                f"--port=s,type=memif,path={d}/s.sock", f"--mirror={spec}"],
                               capture_output=True, text=True, timeout=60)
            lines = [line for line in (r.stdout + r.stderr).splitlines()
                     if line.startswith("hvswitch: mirror 'x': ")]
            self.assertEqual((r.returncode, len(lines)), (status, 1), r.stdout + r.stderr)
            self.assertIn(why, lines[0])
            self.assertEqual(os.listdir(d), [], "left behind")


if __name__ == "__main__":
    unittest.main(verbosity=2)
