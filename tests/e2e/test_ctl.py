"""hvswitchctl against the real daemon: every command, its JSON, its errors, and who may
use the control socket.

Ports a and b (vhost-user) and c (memif) with guests, a static MAC on c. Commands run as
the test (root) with --json and are checked against what the guests did; bad commands
exit non-zero with one line; a user outside the socket's group is refused by the file
system, and one inside --ctl_group is let in.
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Guest, start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A, B = "02:00:00:00:06:0a", "02:00:00:00:06:0b"
STATIC = "02:00:00:00:06:5c"
BCAST = "ff:ff:ff:ff:ff:ff"


class CtlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge(
            [("a", "vhost-user", ""), ("b", "vhost-user", ",vlan=7"), ("c", "memif", "")],
            extra=[f"--fdb_static=c,{STATIC}", "--ctl_group=nogroup"])

    @classmethod
    def tearDownClass(cls):
        assert stop_bridge(cls.sw, cls.guests) == 0

    def learn(self, guest, mac):
        self.guests[guest].send(BCAST, mac, 1)
        wait_for(lambda: any(e["mac"] == mac for e in self.sw.ctl("fdb", "show")["entries"]),
                 10, f"{mac} learned")

    def test_port_add_and_del(self):
        sock = f"{self.sw.dir}/x.sock"
        added = self.sw.ctl("port", "add", "x", "vhost-user", f"path={sock}", "vlan=7")
        self.assertEqual(added["spec"], f"x,type=vhost-user,path={sock},vlan=7")
        self.assertEqual([p["name"] for p in self.sw.ctl("port", "list")["ports"]],
                         ["a", "b", "c", "x"])
        x = Guest("vhost-user", sock, "x")
        try:
            x.wait_link()
            self.sw.wait_port_up("x")
            # In VLAN 7 with b at once: b's flood reaches it, its unicast reaches b.
            X = "02:00:00:00:06:78"
            self.learn("b", B)
            wait_flow(x, B, BCAST, 1)
            seen = self.guests["b"].flow(X, B)
            x.send(B, X, 3)
            wait_flow(self.guests["b"], X, B, seen + 3)
            self.sw.ctl("fdb", "add", "x", "02:00:00:00:06:79", "--vlan", "7")
            saved = self.sw.ctl("config", "save", f"{self.sw.dir}/with-x.conf")["path"]
            with open(saved) as f:
                self.assertIn(f"port=x,type=vhost-user,path={sock},vlan=7\n", f.read())
            # Removed with its guest connected: its MACs (static too), socket and
            # metrics go.
            self.sw.ctl("port", "del", "x")
            self.assertEqual([p["name"] for p in self.sw.ctl("port", "list")["ports"]],
                             ["a", "b", "c"])
            self.assertEqual([e for e in self.sw.ctl("fdb", "show")["entries"]
                              if e["port"] == "x"], [])
            self.assertFalse(os.path.exists(sock))
            self.assertIsNone(self.sw.value("hvswitch_port_receive_packets_total", port="x"))
        finally:
            x.quit()
        # The name and the slot again, another type: counters start from zero.
        self.sw.ctl("port", "add", f"x,type=memif,path={self.sw.dir}/x2.sock,quota=1024")
        x = self.sw.ctl("port", "show", "x")["port"]
        self.assertEqual((x["type"], x["rx_packets"], x["tx_packets"], x["buffer_quota"]),
                         ("memif", 0, 0, 1024))
        self.sw.ctl("port", "del", "x")
        self.assertIn("port 'x': removed", self.sw.output())

    def test_port_list_and_show(self):
        ports = self.sw.ctl("port", "list")["ports"]
        self.assertEqual([p["name"] for p in ports], ["a", "b", "c"])
        self.assertTrue(all(p["up"] for p in ports))
        self.assertEqual([p["type"] for p in ports], ["vhost-user", "vhost-user", "memif"])
        before = self.sw.ctl("port", "show", "a")["port"]
        seen = self.guests["c"].flow(A, BCAST)
        self.guests["a"].send(BCAST, A, 5)
        wait_flow(self.guests["c"], A, BCAST, seen + 5)
        a = self.sw.ctl("port", "show", "a")["port"]
        self.assertEqual(a["rx_packets"] - before["rx_packets"], 5)
        self.assertEqual(a["rx_bytes"] - before["rx_bytes"], 5 * 64)
        self.assertEqual(a["rx_packets"], self.sw.value("hvswitch_port_receive_packets_total",
                                                        port="a"))
        self.assertEqual(a["spec"], f"a,type=vhost-user,path={self.sw.dir}/a.sock")
        self.assertEqual(set(a["rx_drops"]), {"no_mbuf", "malformed", "vlan", "hairpin",
                                              "bad_offload", "spoofed", "no_destination",
                                              "policed", "storm", "reserved", "shut",
                                              "spoofed_ip", "mirror_port", "missed",
                                              "rx_error"})
        self.assertFalse(a["shut"])
        self.assertIn("offload", a)
        b = self.sw.ctl("port", "show", "b")["port"]
        self.assertIn("vlan=7", b["spec"])

    def test_fdb_show_filters_add_del_flush(self):
        self.learn("a", A)
        self.learn("b", B)
        entries = self.sw.ctl("fdb", "show")["entries"]
        by_mac = {e["mac"]: e for e in entries}
        self.assertEqual(by_mac[A]["port"], "a")
        self.assertEqual(by_mac[A]["vlan"], 0)
        self.assertFalse(by_mac[A]["static"])
        self.assertGreaterEqual(by_mac[A]["age"], 0)
        self.assertEqual(by_mac[B]["vlan"], 7)
        self.assertEqual(by_mac[STATIC], {"mac": STATIC, "vlan": 0, "port": "c", "static": True})
        only_a = self.sw.ctl("fdb", "show", "--port", "a")["entries"]
        self.assertEqual({e["port"] for e in only_a}, {"a"})
        vlan7 = self.sw.ctl("fdb", "show", "--vlan", "7")["entries"]
        self.assertEqual([e["mac"] for e in vlan7], [B])
        # A static entry added at run time steers traffic at once.
        self.sw.ctl("fdb", "add", "b", "02:00:00:00:06:77", "--vlan", "7")
        entry = [e for e in self.sw.ctl("fdb", "show", "--vlan", "7")["entries"]
                 if e["mac"] == "02:00:00:00:06:77"]
        self.assertEqual(entry, [{"mac": "02:00:00:00:06:77", "vlan": 7, "port": "b",
                                  "static": True}])
        self.sw.ctl("fdb", "del", "02:00:00:00:06:77", "--vlan", "7")
        self.assertNotIn("02:00:00:00:06:77",
                         [e["mac"] for e in self.sw.ctl("fdb", "show")["entries"]])
        # Flushing one port forgets its learned MACs only; flushing all keeps statics.
        self.sw.ctl("fdb", "flush", "--port", "a")
        macs = [e["mac"] for e in self.sw.ctl("fdb", "show")["entries"]]
        self.assertNotIn(A, macs)
        self.assertIn(B, macs)
        self.sw.ctl("fdb", "flush")
        self.assertEqual([e["mac"] for e in self.sw.ctl("fdb", "show")["entries"]], [STATIC])

    def test_stats(self):
        stats = self.sw.ctl("stats")
        self.assertEqual([p["name"] for p in stats["ports"]], ["a", "b", "c"])
        self.assertEqual(stats["fdb"]["static"], 1)
        one = self.sw.ctl("stats", "c")["ports"]
        self.assertEqual([p["name"] for p in one], ["c"])
        table = self.sw.ctl("stats", as_json=False)
        self.assertEqual(table.returncode, 0)
        self.assertTrue(table.stdout.startswith("PORT"), table.stdout)

    def test_top(self):
        # Rates a table an interval, as many as asked; with --json one object a line.
        r = self.sw.ctl("top", "--interval", "0.2", "--count", "2", as_json=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        tables = r.stdout.split("\n\n")
        self.assertEqual(len(tables), 2, r.stdout)
        for table in tables:
            lines = table.strip().splitlines()
            self.assertEqual(lines[0].split(), ["PORT", "RX/S", "TX/S", "RX", "MBIT/S", "TX",
                                                "MBIT/S", "DROPS/S", "MOSTLY"])
            self.assertEqual([line.split()[0] for line in lines[1:]], ["a", "b", "c"])
        r = self.sw.ctl("--json", "top", "--interval", "0.2", "--count", "1", as_json=False)
        [line] = r.stdout.splitlines()
        rates = json.loads(line)
        self.assertGreater(rates["seconds"], 0.15)
        self.assertEqual({p["name"] for p in rates["ports"]}, {"a", "b", "c"})
        self.assertEqual(set(rates["ports"][0]), {"name", "rx_pps", "tx_pps", "rx_mbps",
                                                  "tx_mbps", "drops_per_second", "main_drop"})
        bad = self.sw.ctl("top", "--interval", "0", as_json=False, check=False)
        self.assertEqual((bad.returncode, bad.stderr.strip()),
                         (1, "hvswitchctl: --interval must be 0.1 to 3600 seconds"))

    def test_tables_for_people(self):
        out = self.sw.ctl("port", "list", as_json=False).stdout.splitlines()
        self.assertEqual(out[0].split(), ["NAME", "TYPE", "LINK", "MTU", "MAC", "RX", "TX", "MACS"])
        self.assertEqual([line.split()[0] for line in out[1:]], ["a", "b", "c"])
        fdb = self.sw.ctl("fdb", "show", "--port", "c", as_json=False).stdout.splitlines()
        self.assertEqual(fdb[1].split(), [STATIC, "0", "c", "static", "-"])

    def test_bad_commands_fail_with_one_line(self):
        for words, message in (
                (["bogus"], "unknown command 'bogus'"),
                (["port", "show", "zz"], "no port named 'zz'"),
                (["port"], "port: list | show NAME | add NAME TYPE KEY=VALUE... | add SPEC"),
                (["port", "add", "a", "memif", "path=/tmp/a2.sock"], "a port named 'a' exists"),
                (["port", "add", "y", "bogus"], "port 'y': unknown type 'bogus'"),
                (["port", "add", "y", "memif", f"path={self.sw.dir}/c.sock"],
                 "socket " + f"{self.sw.dir}/c.sock belongs to port 'c'"),
                (["port", "del", "zz"], "no port named 'zz'"),
                (["fdb", "add", "zz", A], "no port named 'zz'"),
                (["fdb", "add", "a", "01:00:5e:00:00:01"], "is not a unicast MAC"),
                (["fdb", "add", "b", A, "--vlan", "5"], "does not carry VLAN 5"),
                (["fdb", "del", "02:00:00:00:06:99"], "no entry for 02:00:00:00:06:99"),
                (["fdb", "show", "--vlan", "5000"], "--vlan must be 0-4094"),
                (["fdb", "show", "--port"], "--port needs a value"),
                (["fdb", "show", "--colour", "red"], "unknown option --colour"),
                (["stats", "zz"], "no port named 'zz'")):
            r = self.sw.ctl(*words, check=False)
            self.assertEqual(r.returncode, 1, words)
            self.assertEqual(r.stdout, "", words)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn(message, r.stderr, words)
        r = self.sw.ctl(check=False)  # no command at all
        self.assertEqual(r.returncode, 2)

    def test_help(self):
        # Every command, from the table the daemon parses with: what it accepts is listed.
        r = self.sw.ctl("help", as_json=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("Usage: hvswitchctl"), r.stdout)
        for line in ("port list", "port add NAME TYPE KEY=VALUE...", "port add SPEC",
                     "fdb show [--port P] [--vlan V]", "fdb add PORT MAC [--vlan V]",
                     "stats [PORT]", "pmd", "capture status", "config save [FILE]",
                     "help [COMMAND]"):
            self.assertIn(f"\n{line}\n", r.stdout)
        self.assertNotIn("capture start", r.stdout)  # what hvswitchctl sends, not a command
        self.assertEqual(self.sw.ctl("--help", as_json=False).stdout, r.stdout)
        one = self.sw.ctl("help", "fdb", "add", as_json=False)
        self.assertEqual(one.returncode, 0, one.stderr)
        self.assertEqual(one.stdout.splitlines()[0], "fdb add PORT MAC [--vlan V]")
        self.assertEqual(len(one.stdout.splitlines()), 2, one.stdout)
        # What help shows, the daemon takes.
        self.assertEqual(self.sw.ctl("fdb", "show", "--port", "c", "--vlan", "0")["entries"],
                         [{"mac": STATIC, "vlan": 0, "port": "c", "static": True}])
        bad = self.sw.ctl("help", "bogus", as_json=False, check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("no command 'bogus'", bad.stderr)

    def test_only_root_and_the_group_may_connect(self):
        os.chmod(self.sw.dir, 0o755)  # let other users reach the socket file itself
        refused = self.sw.ctl("port", "list", user="daemon", check=False)
        self.assertEqual(refused.returncode, 2)
        self.assertIn("Permission denied", refused.stderr)
        # nobody in group nogroup (the daemon's --ctl_group) is let in
        allowed = self.sw.ctl("port", "list", user="nobody", check=False)
        self.assertEqual(allowed.returncode, 0, allowed.stderr)
        mode = os.stat(self.sw.ctl_socket).st_mode & 0o777
        self.assertEqual(mode, 0o660)


if __name__ == "__main__":
    unittest.main(verbosity=2)
