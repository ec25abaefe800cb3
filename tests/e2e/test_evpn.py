"""EVPN for hvswitch's VXLAN tunnels: BGP (FRR's bgpd) carries the MACs and VTEPs that
`--vxlan=100,...,evpn=1` tunnels would otherwise learn by flooding.

Two "hosts" joined by an underlay veth (vxlan_topology.py: namespaces `a` 10.0.0.1 and
`b` 10.0.0.2), each with FRR (frr_host.py: zebra + bgpd, iBGP EVPN, advertise-all-vni) in
its namespace:

- EvpnBetweenSwitchesTest: hvswitch on both hosts. Host A's guests A1 and A2, host B's B1
  (tap ports in guest namespaces). Host A's FRR starts after its hvswitch, host B's
  before: either order must work (zebra follows the shadow devices as they appear,
  hvswitch what zebra installs). The BGP session and the VNI as zebra sees it (hvswitch's
  shadow VXLAN device, its VTEP address, the peer in the flood list); each side's guest
  MACs local in its FRR, remote in the other's FRR, on the other hvswitch's port vxlan100
  and counted in its `vxlan show`; pings both ways; known unicast (static ARP, so no
  broadcast) crossing without one frame flooded; a guest moving from A to B (its port
  removed on A, a port with its MAC and address added on B): A withdraws it, B
  advertises it, A1 reaches it behind B; the shadow devices gone once hvswitch stops.
- MixedEvpnTest: host B is the plain Linux EVPN VTEP (a bridge with a VXLAN device,
  its guest on a veth): the same MAC exchange (zebra installs A's MACs in B's kernel),
  pings both ways, no flooding once known; removing the tunnel on A withdraws its MACs
  and its VTEP from B and deletes the shadow devices, adding it again (hvswitchctl vxlan
  add) brings everything back.

Guests run without IPv6 (no router solicitations or MLD reports of their own), so every
frame they send is one a test asked for: the flood counters move only with the tests'
frames."""
import contextlib
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, in_netns, wait_for  # noqa: E402
import frr_host  # noqa: E402
import vxlan_topology as topo  # noqa: E402

VNI = topo.VNI
TUNNEL = f"vxlan{VNI}"
SHADOW = {"bridge": f"hvsbr{VNI}", "vxlan": f"hvsvx{VNI}", "tap": f"hvsl{VNI}"}
MTU = topo.GUEST_MTU
A1_MAC, A2_MAC, B1_MAC = "02:00:00:0a:00:01", "02:00:00:0a:00:02", "02:00:00:0b:00:01"
A1_IP, B1_IP, A2_IP = "192.168.100.1", "192.168.100.2", "192.168.100.3"
PINGS = 30


def names(tag):
    """vxlan_topology's names, and the guest namespaces and taps added here."""
    n = topo.names(tag)
    pid = topo.PID
    n.update({"ga2": f"hvs-{tag}g2-{pid}", "gm": f"hvs-{tag}gm-{pid}",
              "a2tap": f"{tag}a2{pid}", "b1tap": f"{tag}b1{pid}", "mtap": f"{tag}mv{pid}"})
    return n


def delete(n):
    topo.delete(n)
    for ns in ("ga2", "gm"):
        subprocess.run(["ip", "netns", "del", n[ns]], check=False, capture_output=True)


def guest_ns(ns, create=True):
    """A guest namespace without IPv6: its interfaces (made or moved here later) send
    nothing unasked."""
    if create:
        topo.ip("netns", "add", ns)
        topo.ip("-n", ns, "link", "set", "lo", "up")
    in_netns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
             "net.ipv6.conf.default.disable_ipv6=1")


def address_guest(ns, iface, mac, address):
    """The guest's interface: its MAC (before it sends anything), MTU, IPv4 address, up."""
    topo.ip("-n", ns, "link", "set", iface, "down")
    topo.ip("-n", ns, "link", "set", iface, "address", mac, "mtu", str(MTU))
    topo.ip("-n", ns, "addr", "add", f"{address}/24", "dev", iface)
    topo.ip("-n", ns, "link", "set", iface, "up")


def static_arp(ns, iface, address, mac):
    topo.ip("-n", ns, "neigh", "replace", address, "lladdr", mac, "dev", iface, "nud",
            "permanent")


def tap_port(port, tap, ns):
    return f"{port},type=host,iface={tap},netns={ns},vlan=10,mtu={MTU}"


def start_switch(netns, uplink, local, guest_ports):
    """hvswitch with EVPN on VNI 100 (VLAN 10): the uplink on the underlay veth and the
    given guest ports. Returns the Daemon once its metrics answer."""
    return Daemon([f"u,type=netdev,iface={uplink},vlan=4094", *guest_ports],
                  extra=[f"--vxlan={VNI},vlan=10,uplink=u,local={local},evpn=1,mtu={MTU}"],
                  netns=netns)


def links(ns):
    return {link["ifname"] for link in json.loads(in_netns(ns, "ip", "-j", "link", "show"))}


def tunnel(sw):
    [t] = [t for t in sw.ctl("vxlan", "show")["tunnels"] if t["vni"] == VNI]
    return t


def vtep(sw, ip):
    return next((v for v in tunnel(sw)["vteps"] if v["ip"] == ip), None)


def is_flood_vtep(sw, ip):
    v = vtep(sw, ip)
    return bool(v and v["flood"])


def tunnel_macs(sw):
    """{mac: entry} of hvswitch's FDB on the tunnel's port."""
    return {e["mac"]: e for e in sw.ctl("fdb", "show", "--port", TUNNEL)["entries"]}


def remote_macs_cover(t, macs):
    """`vxlan show`'s remote_macs (a count, or a list of MACs) accounts for `macs`."""
    remote = t["remote_macs"]
    if isinstance(remote, list):
        return set(macs) <= {m if isinstance(m, str) else m.get("mac") for m in remote}
    return remote >= len(macs)


def flooded(sw):
    """The tunnel's flood count, as the metric and as `vxlan show` give it."""
    metric = sw.value("hvswitch_vxlan_flooded_total", port=TUNNEL, vni=str(VNI))
    return metric, tunnel(sw)["counters"]["flooded"]


def remote_vteps(vni):
    """The flood VTEPs of `show evpn vni VNI json` (FRR 8.4 lists them under
    "numRemoteVteps")."""
    remote = vni.get("numRemoteVteps", [])
    return remote if isinstance(remote, list) else []


def fast_pings(ns, address, count=PINGS):
    in_netns(ns, "ping", "-q", "-c", str(count), "-i", "0.02", "-W", "2", address)


def host_report(title, ns, sw=None, frr=None):
    """Everything worth reading about one host when an assertion fails."""
    parts = [f"===== {title} (namespace {ns})"]
    if frr:
        parts.append(frr.diagnostics())
    parts.append(f"--- bridge fdb show (in {ns})\n{frr_host.bridge_fdb(ns)}")
    r = subprocess.run(["ip", "-n", ns, "-d", "-br", "link", "show"], capture_output=True,
                       text=True)
    parts.append(f"--- ip -br link show (in {ns})\n{r.stdout}{r.stderr}")
    if sw:
        for words in (("vxlan", "show"), ("fdb", "show")):
            try:
                answer = json.dumps(sw.ctl(*words), indent=1)
            except Exception as e:  # noqa: BLE001 (a report: show what failed)
                answer = f"({e})"
            parts.append(f"--- hvswitchctl {' '.join(words)}\n{answer}")
        lines = sw.output().splitlines()
        notable = [line for line in lines
                   if any(w in line.lower() for w in ("evpn", "netlink", "shadow", "vxlan",
                                                      "error", "warn"))]
        parts.append("--- hvswitch log: EVPN/VXLAN/netlink lines\n" + "\n".join(notable[-40:]))
        parts.append("--- hvswitch log: last lines\n" + "\n".join(lines[-20:]))
    return "\n".join(parts)


class EvpnTestBase(unittest.TestCase):
    """Set-up and clean-up shared by both topologies: `cls.frrs` FRR instances,
    `cls.switches` {host namespace: Daemon}."""

    N = None

    @classmethod
    def start_frr(cls, ns, local, peer):
        frr = frr_host.Frr(ns, local, peer)
        cls.frrs.append(frr)  # first: stopped even if it fails to start
        return frr.start()

    @classmethod
    def start_switch(cls, ns, uplink, local, guest_ports):
        sw = start_switch(ns, uplink, local, guest_ports)
        cls.switches[ns] = sw
        sw.wait_ready()
        return sw

    @classmethod
    def stop_all(cls):
        """Stops every hvswitch (exit 0, its shadow devices gone), every FRR (by PID),
        then deletes the namespaces; raises what went wrong once all is cleaned up."""
        problems = []
        try:
            for ns, sw in cls.switches.items():
                try:
                    rc = sw.stop()
                    if rc != 0:
                        problems.append(f"hvswitch in {ns} exited {rc}:\n{sw.output()[-3000:]}")
                    left = links(ns) & set(SHADOW.values())
                    if left:
                        problems.append(f"hvswitch in {ns} stopped, its shadow devices stay: "
                                        f"{sorted(left)}")
                except AssertionError as e:
                    problems.append(f"hvswitch in {ns}: {e}")
        finally:
            try:
                for frr in cls.frrs:
                    killed = frr.stop()
                    if killed:
                        problems.append(f"FRR {frr.name}: {killed} needed SIGKILL")
            finally:
                delete(cls.N)
        if problems:
            raise AssertionError("\n".join(problems))

    def report(self):
        raise NotImplementedError

    @contextlib.contextmanager
    def explained(self):
        """An assertion failing inside carries both hosts' state: FRR's view, the
        kernel's FDB in each namespace, hvswitch's tables and log."""
        try:
            yield
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.report()}") from None

    def wait_tunnel_macs(self, sw, macs, timeout=15):
        wait_for(lambda: set(macs) <= set(tunnel_macs(sw)), timeout,
                 f"{sorted(macs)} on port {TUNNEL}")
        entries = tunnel_macs(sw)
        for mac in macs:
            self.assertEqual(entries[mac]["vlan"], 10, entries[mac])
        wait_for(lambda: remote_macs_cover(tunnel(sw), macs), timeout,
                 f"vxlan show: remote_macs covering {sorted(macs)}")

    def vtep_counter(self, sw, ip, counter):
        v = vtep(sw, ip)
        self.assertIsNotNone(v, f"no VTEP {ip} in vxlan show: {tunnel(sw)}")
        return v["counters"][counter]

    def assert_not_flooded(self, sw, peer_vtep, pings):
        """`PINGS` pings from each (namespace, address) of `pings` cross the tunnel as
        known unicast: the peer VTEP's counters grow by a frame per request or reply
        sent from this side, the tunnel's flood count (metric and `vxlan show`) not at
        all."""
        before_flooded = flooded(sw)
        self.assertIsNotNone(before_flooded[0], "no hvswitch_vxlan_flooded_total sample")
        before_tx = self.vtep_counter(sw, peer_vtep, "tx_packets")
        for ns, address in pings:
            fast_pings(ns, address)
        sent = self.vtep_counter(sw, peer_vtep, "tx_packets") - before_tx
        self.assertGreaterEqual(sent, PINGS * len(pings), "the pings did not cross the tunnel")
        self.assertEqual(flooded(sw), before_flooded,
                         "known unicast flooded (metric, vxlan show)")


class EvpnBetweenSwitchesTest(EvpnTestBase):
    N = names("ew")

    @classmethod
    def setUpClass(cls):
        n = cls.N
        cls.frrs, cls.switches = [], {}
        try:
            topo.make_underlay(n)
            for ns in ("ga", "gb"):
                guest_ns(n[ns], create=False)
            for ns in ("ga2", "gm"):
                guest_ns(n[ns])
            # Host A: hvswitch, then FRR. Host B: FRR, then hvswitch.
            cls.sw_a = cls.start_switch(n["a"], n["ua"], topo.A_IP,
                                        [tap_port("a1", n["gtap"], n["ga"]),
                                         tap_port("a2", n["a2tap"], n["ga2"])])
            cls.frr_a = cls.start_frr(n["a"], topo.A_IP, topo.B_IP)
            cls.frr_b = cls.start_frr(n["b"], topo.B_IP, topo.A_IP)
            cls.sw_b = cls.start_switch(n["b"], n["ub"], topo.B_IP,
                                        [tap_port("b1", n["b1tap"], n["gb"])])
            address_guest(n["ga"], n["gtap"], A1_MAC, A1_IP)
            address_guest(n["ga2"], n["a2tap"], A2_MAC, A2_IP)
            address_guest(n["gb"], n["b1tap"], B1_MAC, B1_IP)
            for sw, ports in ((cls.sw_a, ("u", "a1", "a2", TUNNEL)),
                              (cls.sw_b, ("u", "b1", TUNNEL))):
                for port in ports:
                    sw.wait_port_up(port)
            cls.frr_a.wait_established()
            cls.frr_b.wait_established()
            # The flood lists (EVPN type-3) before the first broadcast: without them an
            # ARP request stays on its host.
            wait_for(lambda: is_flood_vtep(cls.sw_a, topo.B_IP), 15, "B in A's flood list")
            wait_for(lambda: is_flood_vtep(cls.sw_b, topo.A_IP), 15, "A in B's flood list")
            # Every guest speaks, so that its switch learns its MAC (and publishes it).
            topo.wait_ping(n["ga"], B1_IP)
            topo.wait_ping(n["ga2"], A1_IP)
        except BaseException as e:
            report = ""
            if isinstance(e, AssertionError):
                report = cls._report()
            try:
                cls.tearDownClass()
            finally:
                if report:
                    raise AssertionError(f"{e}\n{report}") from None
            raise

    @classmethod
    def tearDownClass(cls):
        cls.stop_all()

    @classmethod
    def _report(cls):
        n = cls.N
        return "\n".join([
            host_report("host A", n["a"], cls.switches.get(n["a"]),
                        getattr(cls, "frr_a", None)),
            host_report("host B", n["b"], cls.switches.get(n["b"]),
                        getattr(cls, "frr_b", None))])

    def report(self):
        return self._report()

    def test_1_bgp_session_and_vni(self):
        with self.explained():
            for frr, local, peer in ((self.frr_a, topo.A_IP, topo.B_IP),
                                     (self.frr_b, topo.B_IP, topo.A_IP)):
                self.assertTrue(frr.established(), frr.bgp_peers())
                vni = frr.evpn_vni(VNI)
                self.assertEqual(vni.get("vxlanInterface"), SHADOW["vxlan"], vni)
                self.assertEqual(vni.get("vtepIp"), local, vni)
                self.assertIn(peer, remote_vteps(vni), vni)
            for sw in (self.sw_a, self.sw_b):
                self.assertTrue(tunnel(sw)["evpn"])
                self.assertEqual(links(sw.netns) & set(SHADOW.values()), set(SHADOW.values()))
            self.assertTrue(vtep(self.sw_a, topo.B_IP)["flood"])
            self.assertTrue(vtep(self.sw_b, topo.A_IP)["flood"])
            self.assertEqual(tunnel(self.sw_a)["flood_vteps"], 1)
            self.assertEqual(tunnel(self.sw_b)["flood_vteps"], 1)

    def test_2_macs_exchanged(self):
        with self.explained():
            self.frr_a.wait_macs(VNI, {A1_MAC: ("local", SHADOW["tap"]),
                                       A2_MAC: ("local", SHADOW["tap"]),
                                       B1_MAC: ("remote", topo.B_IP)})
            self.frr_b.wait_macs(VNI, {B1_MAC: ("local", SHADOW["tap"]),
                                       A1_MAC: ("remote", topo.A_IP),
                                       A2_MAC: ("remote", topo.A_IP)})
            self.wait_tunnel_macs(self.sw_a, [B1_MAC])
            self.wait_tunnel_macs(self.sw_b, [A1_MAC, A2_MAC])
            # A local MAC is never on the tunnel's port of its own switch.
            self.assertNotIn(A1_MAC, tunnel_macs(self.sw_a))
            self.assertNotIn(B1_MAC, tunnel_macs(self.sw_b))

    def test_3_ping_both_ways(self):
        with self.explained():
            topo.ping(self.N["ga"], B1_IP)
            topo.ping(self.N["gb"], A1_IP)

    def test_4_known_unicast_not_flooded(self):
        n = self.N
        with self.explained():
            self.wait_tunnel_macs(self.sw_a, [B1_MAC])
            self.wait_tunnel_macs(self.sw_b, [A1_MAC])
            static_arp(n["ga"], n["gtap"], B1_IP, B1_MAC)
            static_arp(n["gb"], n["b1tap"], A1_IP, A1_MAC)
            pings = [(n["ga"], B1_IP), (n["gb"], A1_IP)]
            self.assert_not_flooded(self.sw_a, topo.B_IP, pings)
            self.assert_not_flooded(self.sw_b, topo.A_IP, pings)

    def test_5_guest_moves_from_a_to_b(self):
        n = self.N
        with self.explained():
            self.frr_b.wait_macs(VNI, {A2_MAC: ("remote", topo.A_IP)})
            # A2 leaves host A: its MAC is withdrawn everywhere.
            self.sw_a.ctl("port", "del", "a2")
            self.frr_a.wait_mac_gone(VNI, A2_MAC)
            self.frr_b.wait_mac_gone(VNI, A2_MAC)
            wait_for(lambda: A2_MAC not in tunnel_macs(self.sw_b), 10,
                     f"{A2_MAC} gone from B's port {TUNNEL}")
            # ... and reappears on host B with the same MAC and address.
            self.sw_b.ctl("port", "add", tap_port("m", n["mtap"], n["gm"]))
            address_guest(n["gm"], n["mtap"], A2_MAC, A2_IP)
            self.sw_b.wait_port_up("m")
            topo.wait_ping(n["gm"], A1_IP)  # its frames teach B its MAC
            self.frr_b.wait_macs(VNI, {A2_MAC: ("local", SHADOW["tap"])})
            self.frr_a.wait_macs(VNI, {A2_MAC: ("remote", topo.B_IP)})
            self.wait_tunnel_macs(self.sw_a, [A2_MAC])
            self.assertNotIn(A2_MAC, tunnel_macs(self.sw_b))
            topo.wait_ping(n["ga"], A2_IP, timeout=10)
            topo.ping(n["ga"], A2_IP)


class MixedEvpnTest(EvpnTestBase):
    """Host B: the Linux VTEP of the research notes (bridge br100, device vxlan100 on
    UDP port 4789, guest veth `gveth`), with FRR."""

    N = names("em")

    @classmethod
    def setUpClass(cls):
        n = cls.N
        cls.frrs, cls.switches = [], {}
        try:
            topo.make_underlay(n)
            for ns in ("ga", "gb"):
                guest_ns(n[ns], create=False)
            cls.bridge, cls.vxlan = frr_host.linux_vtep(n["b"], VNI, topo.B_IP)
            frr_host.linux_vtep_guest(n["b"], cls.bridge, n["gveth"], n["gb"], mac=B1_MAC)
            address_guest(n["gb"], "eth0", B1_MAC, B1_IP)
            cls.frr_b = cls.start_frr(n["b"], topo.B_IP, topo.A_IP)
            cls.sw_a = cls.start_switch(n["a"], n["ua"], topo.A_IP,
                                        [tap_port("a1", n["gtap"], n["ga"])])
            cls.frr_a = cls.start_frr(n["a"], topo.A_IP, topo.B_IP)
            address_guest(n["ga"], n["gtap"], A1_MAC, A1_IP)
            for port in ("u", "a1", TUNNEL):
                cls.sw_a.wait_port_up(port)
            cls.frr_a.wait_established()
            cls.frr_b.wait_established()
            wait_for(lambda: is_flood_vtep(cls.sw_a, topo.B_IP), 15, "B in A's flood list")
            topo.wait_ping(n["ga"], B1_IP)
        except BaseException as e:
            report = ""
            if isinstance(e, AssertionError):
                report = cls._report()
            try:
                cls.tearDownClass()
            finally:
                if report:
                    raise AssertionError(f"{e}\n{report}") from None
            raise

    @classmethod
    def tearDownClass(cls):
        cls.stop_all()

    @classmethod
    def _report(cls):
        n = cls.N
        return "\n".join([
            host_report("host A (hvswitch)", n["a"], cls.switches.get(n["a"]),
                        getattr(cls, "frr_a", None)),
            host_report("host B (Linux VTEP)", n["b"], None, getattr(cls, "frr_b", None))])

    def report(self):
        return self._report()

    def kernel_vxlan_fdb(self):
        return frr_host.bridge_fdb(self.N["b"], self.vxlan)

    def test_1_bgp_session_and_vni(self):
        with self.explained():
            self.assertTrue(self.frr_a.established(), self.frr_a.bgp_peers())
            self.assertTrue(self.frr_b.established(), self.frr_b.bgp_peers())
            vni_a, vni_b = self.frr_a.evpn_vni(VNI), self.frr_b.evpn_vni(VNI)
            self.assertEqual(vni_a.get("vxlanInterface"), SHADOW["vxlan"], vni_a)
            self.assertEqual(vni_a.get("vtepIp"), topo.A_IP, vni_a)
            self.assertIn(topo.B_IP, remote_vteps(vni_a), vni_a)
            self.assertEqual(vni_b.get("vxlanInterface"), self.vxlan, vni_b)
            self.assertIn(topo.A_IP, remote_vteps(vni_b), vni_b)
            self.assertTrue(vtep(self.sw_a, topo.B_IP)["flood"])
            # zebra put A in the kernel VTEP's flood list
            self.assertIn(f"00:00:00:00:00:00 dst {topo.A_IP} self permanent",
                          self.kernel_vxlan_fdb())

    def test_2_macs_exchanged(self):
        with self.explained():
            self.frr_a.wait_macs(VNI, {A1_MAC: ("local", SHADOW["tap"]),
                                       B1_MAC: ("remote", topo.B_IP)})
            self.frr_b.wait_macs(VNI, {B1_MAC: ("local", self.N["gveth"]),
                                       A1_MAC: ("remote", topo.A_IP)})
            self.wait_tunnel_macs(self.sw_a, [B1_MAC])
            fdb = self.kernel_vxlan_fdb()
            self.assertIn(f"{A1_MAC} dst {topo.A_IP} self", fdb)
            self.assertIn(f"{A1_MAC} extern_learn master {self.bridge}", fdb)

    def test_3_ping_both_ways(self):
        with self.explained():
            topo.ping(self.N["ga"], B1_IP)
            topo.ping(self.N["gb"], A1_IP)

    def test_4_known_unicast_not_flooded(self):
        n = self.N
        with self.explained():
            self.wait_tunnel_macs(self.sw_a, [B1_MAC])
            self.frr_b.wait_macs(VNI, {A1_MAC: ("remote", topo.A_IP)})
            static_arp(n["ga"], n["gtap"], B1_IP, B1_MAC)
            static_arp(n["gb"], "eth0", A1_IP, A1_MAC)
            self.assert_not_flooded(self.sw_a, topo.B_IP, [(n["ga"], B1_IP), (n["gb"], A1_IP)])

    def test_5_tunnel_removed_and_added_again(self):
        """Last (it takes the tunnel away): the shadow devices go with the tunnel, and
        with them A's MACs and A's VTEP from B; added again at run time (hvswitchctl
        vxlan add), all of it comes back: A1's MAC, still in A's FDB, is advertised
        anew."""
        n = self.N
        spec = f"{VNI},vlan=10,uplink=u,local={topo.A_IP},evpn=1,mtu={MTU}"
        with self.explained():
            self.frr_b.wait_macs(VNI, {A1_MAC: ("remote", topo.A_IP)})
            self.sw_a.ctl("vxlan", "del", str(VNI))
            wait_for(lambda: not links(n["a"]) & set(SHADOW.values()), 10,
                     "the shadow devices deleted")
            self.frr_b.wait_mac_gone(VNI, A1_MAC)
            frr_host.poll(lambda: topo.A_IP not in self.kernel_vxlan_fdb(), 10,
                          "A gone from the kernel VTEP's FDB (MACs and flood list)")
            frr_host.poll(lambda: topo.A_IP not in remote_vteps(self.frr_b.evpn_vni(VNI)),
                          10, "A gone from B's remote VTEPs")

            self.sw_a.ctl("vxlan", "add", spec)
            wait_for(lambda: links(n["a"]) >= set(SHADOW.values()), 10,
                     "the shadow devices back")
            self.sw_a.wait_port_up(TUNNEL)
            frr_host.poll(lambda: topo.A_IP in remote_vteps(self.frr_b.evpn_vni(VNI)),
                          15, "A back in B's remote VTEPs")
            self.frr_b.wait_macs(VNI, {A1_MAC: ("remote", topo.A_IP)})
            wait_for(lambda: is_flood_vtep(self.sw_a, topo.B_IP), 15, "B in A's flood list")
            self.wait_tunnel_macs(self.sw_a, [B1_MAC])
            topo.ping(n["ga"], B1_IP)
            topo.ping(n["gb"], A1_IP)


if __name__ == "__main__":
    unittest.main()
