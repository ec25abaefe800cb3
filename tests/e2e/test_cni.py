"""hvswitch-cni against the real daemon, run exactly as a container runtime runs a CNI
plugin: CNI_* environment variables, the network configuration on stdin, the result or
the spec's error object on stdout.

VERSION; ADD of a vhost-user port (the port in `hvswitchctl port show`, its socket in the
pod's folder, the result as the spec has it) with a DPDK guest attached to the socket
exchanging frames with a guest on another port, its MAC enforced; CHECK; DEL, DEL again,
DEL of a container never seen; a memif port removed behind the plugin's back, which CHECK
reports; every bad configuration and environment answered with its code and nothing
left behind; and a chain as libcni runs one, hvswitch-cni followed by the reference
plugins' `portmap` (Debian's containernetworking-plugins), which only passes prevResult on.
"""
import json
import os
import stat
import subprocess
import sys
import unittest

import yaml

sys.path.insert(0, os.path.dirname(__file__))
from harness import HVSWITCH, Guest, start_bridge, stop_bridge, wait_flow  # noqa: E402

HVSWITCH_CNI = os.environ.get("HVSWITCH_CNI",
                              os.path.join(os.path.dirname(HVSWITCH), "hvswitch-cni"))
# Where Debian's containernetworking-plugins puts the reference plugins.
REFERENCE_PLUGINS = os.environ.get("CNI_REFERENCE_PLUGINS", "/usr/lib/cni")
MULTUS_EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "kubernetes",
                              "multus", "network-attachment.yaml")

PEER = "02:00:00:00:0c:0a"
POD = "02:00:00:00:0c:01"
OTHER = "02:00:00:00:0c:77"
BCAST = "ff:ff:ff:ff:ff:ff"


def container_id(n):
    """A 64-hex id, as containerd and CRI-O make them; ids of one test share a prefix, so
    the port names must still differ."""
    return f"{os.getpid():08x}" + f"{n:056x}"


def fnv1a32(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def port_name(cid, ifname):
    """The plugin's naming, written again from its definition (switch/cni/port_naming.h):
    a name that changed between builds would lose every pod's port at DEL."""
    digest = fnv1a32(cid.encode() + b"\0" + ifname.encode())
    return f"cni-{cid[:12]}-{digest:08x}"


class CniTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge([("peer", "vhost-user", "")])
        cls.socket_dir = os.path.join(cls.sw.dir, "cni")
        cls.netns = f"hvs-cni-{os.getpid()}"
        subprocess.run(["ip", "netns", "add", cls.netns], check=True)
        cls.netns_path = f"/var/run/netns/{cls.netns}"

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["ip", "netns", "del", cls.netns], check=False)
        assert stop_bridge(cls.sw, cls.guests) == 0

    def conf(self, version="1.0.0", **keys):
        conf = {"cniVersion": version, "name": "hvs-net", "type": "hvswitch-cni",
                "portType": "vhost-user", "socketDir": self.socket_dir,
                "controlSocket": self.sw.ctl_socket}
        conf.update(keys)
        return {k: v for k, v in conf.items() if v is not None}

    def cni(self, command, conf, cid=None, ifname="net1", netns=True, args=None, env=None,
            plugin=HVSWITCH_CNI, stdin=None):
        """Runs a plugin as a runtime does: a clean environment with the CNI variables.
        Returns (exit status, stdout parsed as JSON or None when empty, stderr)."""
        environ = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "CNI_COMMAND": command,
                   "CNI_PATH": f"{os.path.dirname(HVSWITCH_CNI)}:{REFERENCE_PLUGINS}"}
        if cid is not None:
            environ["CNI_CONTAINERID"] = cid
        if ifname is not None:
            environ["CNI_IFNAME"] = ifname
        if netns:
            environ["CNI_NETNS"] = self.netns_path
        if args is not None:
            environ["CNI_ARGS"] = args
        environ.update(env or {})
        text = stdin if stdin is not None else json.dumps(conf)
        r = subprocess.run([plugin], input=text, env=environ, capture_output=True, text=True,
                           timeout=60)
        out = json.loads(r.stdout) if r.stdout.strip() else None
        return r.returncode, out, r.stderr

    def ok(self, command, conf, **kw):
        rc, out, err = self.cni(command, conf, **kw)
        self.assertEqual(rc, 0, f"{command}: {out} {err}")
        return out

    def fails(self, command, conf, code, version="1.0.0", **kw):
        """The spec's error object on stdout with `code`, a non-zero exit."""
        rc, out, err = self.cni(command, conf, **kw)
        self.assertNotEqual(rc, 0, f"{command} succeeded: {out}")
        self.assertIsInstance(out, dict, f"{command}: no error object on stdout: {err}")
        self.assertEqual(out.get("code"), code, out)
        self.assertEqual(out.get("cniVersion"), version, out)
        self.assertIsInstance(out.get("msg"), str)
        self.assertTrue(out["msg"])
        self.assertLessEqual(set(out), {"cniVersion", "code", "msg", "details"})
        return out

    def ports(self):
        return [p["name"] for p in self.sw.ctl("port", "list")["ports"]]

    def check_result(self, result, cid, ifname, version="1.0.0", mac=None):
        """A result as the spec has it, with this attachment's interface last."""
        self.assertEqual(result["cniVersion"], version)
        interface = result["interfaces"][-1]
        path = os.path.join(self.socket_dir, cid, f"{ifname}.sock")
        expected = {"name": ifname, "sandbox": self.netns_path, "socketPath": path}
        if mac:
            expected["mac"] = mac
        self.assertEqual(interface, expected)
        self.assertLessEqual(set(result), {"cniVersion", "interfaces", "ips", "routes", "dns"})
        return path

    def test_version(self):
        for stdin in ('{"cniVersion": "1.0.0"}', '{"cniVersion": "0.4.0"}', ""):
            rc, out, _ = self.cni("VERSION", None, netns=False, ifname=None, stdin=stdin)
            self.assertEqual(rc, 0)
            self.assertEqual(out["cniVersion"], "1.0.0")
            self.assertIn("1.0.0", out["supportedVersions"])
            self.assertIn("0.4.0", out["supportedVersions"])

    def test_vhost_user_lifecycle(self):
        cid = container_id(1)
        name = port_name(cid, "net1")
        conf = self.conf(mac=POD, portKeys={"learn_limit": 16, "tx_retries": 4})
        result = self.ok("ADD", conf, cid=cid)
        path = self.check_result(result, cid, "net1", mac=POD)
        self.assertNotIn("ips", result)
        # The port, with what the configuration asked for.
        port = self.sw.ctl("port", "show", name)["port"]
        self.assertEqual(port["type"], "vhost-user")
        # (in hvswitch's own order of keys)
        self.assertEqual(port["spec"], f"{name},type=vhost-user,path={path},learn_limit=16,"
                                       f"mac={POD},tx_retries=4")
        # Its socket, in the pod's own folder, which other users cannot enter.
        self.assertTrue(stat.S_ISSOCK(os.lstat(path).st_mode))
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode), 0o750)

        # The pod's userspace stack attaches to the socket and talks to the other guest.
        pod = Guest("vhost-user", path, "pod")
        try:
            pod.wait_link()
            self.sw.wait_port_up(name)
            peer = self.guests["peer"]
            pod.send(PEER, POD, 5)
            wait_flow(peer, POD, PEER, 5)
            peer.send(POD, PEER, 7)
            wait_flow(pod, PEER, POD, 7)
            # mac=: frames from another source never leave the port. The good frame sent
            # after them on the same queue marks when they would have arrived.
            pod.send(PEER, OTHER, 3)
            pod.send(PEER, POD, 1)
            wait_flow(peer, POD, PEER, 6)
            self.assertEqual(peer.flow(OTHER, PEER), 0)

            # CHECK with ADD's result as prevResult, as the runtime gives it.
            self.assertIsNone(self.ok("CHECK", dict(conf, prevResult=result), cid=cid))
            # CHECK of a prevResult without this interface is an error.
            stranger = dict(result, interfaces=[dict(result["interfaces"][0], name="net9")])
            self.fails("CHECK", dict(conf, prevResult=stranger), 7, cid=cid)
            # A configuration that no longer matches the port: another VLAN.
            self.fails("CHECK", dict(conf, vlan=42, prevResult=result), 101, cid=cid)

            # DEL with the guest attached: the port, its socket and the folder go.
            self.assertIsNone(self.ok("DEL", dict(conf, prevResult=result), cid=cid))
            self.assertNotIn(name, self.ports())
            self.assertFalse(os.path.exists(os.path.dirname(path)))
        finally:
            pod.quit()
        # DEL again, as runtimes do after a failure: nothing to do, success.
        self.assertIsNone(self.ok("DEL", conf, cid=cid))
        # DEL without a network namespace (the spec lets the runtime leave it out).
        self.assertIsNone(self.ok("DEL", conf, cid=cid, netns=False))
        # CHECK of what is gone.
        self.fails("CHECK", dict(conf, prevResult=result), 100, cid=cid)

    def test_memif_port_removed_behind_its_back(self):
        cid = container_id(2)
        name = port_name(cid, "eth1")
        conf = self.conf(portType="memif", vlan=0, mtu=9000)
        result = self.ok("ADD", conf, cid=cid, ifname="eth1")
        path = self.check_result(result, cid, "eth1")
        pod = Guest("memif", path, "pod-memif")
        try:
            pod.wait_link()
            self.sw.wait_port_up(name)
            seen = self.guests["peer"].flow(POD, BCAST)
            pod.send(BCAST, POD, 2)
            wait_flow(self.guests["peer"], POD, BCAST, seen + 2)
            self.assertIsNone(self.ok("CHECK", dict(conf, prevResult=result), cid=cid,
                                      ifname="eth1"))
            # An operator removes the port with hvswitchctl: CHECK says so.
            self.sw.ctl("port", "del", name)
            out = self.fails("CHECK", dict(conf, prevResult=result), 100, cid=cid,
                             ifname="eth1")
            self.assertIn(name, out["msg"])
        finally:
            pod.quit()
        # DEL still succeeds and clears the pod's folder.
        self.assertIsNone(self.ok("DEL", conf, cid=cid, ifname="eth1"))
        self.assertFalse(os.path.exists(os.path.dirname(path)))

    def test_two_interfaces_of_one_pod(self):
        """A pod with two attachments shares its folder: DEL of one leaves the other's."""
        cid = container_id(3)
        conf = self.conf()
        first = self.check_result(self.ok("ADD", conf, cid=cid, ifname="net1"), cid, "net1")
        second = self.check_result(self.ok("ADD", conf, cid=cid, ifname="net2"), cid, "net2")
        self.assertNotEqual(port_name(cid, "net1"), port_name(cid, "net2"))
        self.ok("DEL", conf, cid=cid, ifname="net1")
        self.assertFalse(os.path.exists(first))
        self.assertTrue(stat.S_ISSOCK(os.lstat(second).st_mode))
        self.ok("DEL", conf, cid=cid, ifname="net2")
        self.assertFalse(os.path.exists(os.path.dirname(second)))

    def test_pod_uid_folder(self):
        """With K8S_POD_UID in CNI_ARGS (kubelet gives it) the folder is the pod's UID, which
        the pod can mount with subPathExpr; other CNI_ARGS are ignored."""
        cid = container_id(4)
        uid = "0c9bd1f4-57a5-4d53-9a5d-3b0c0c4c1e29"
        args = f"IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=pod-a;K8S_POD_UID={uid}"
        result = self.ok("ADD", self.conf(), cid=cid, args=args)
        path = os.path.join(self.socket_dir, uid, "net1.sock")
        self.assertEqual(result["interfaces"][0]["socketPath"], path)
        self.assertTrue(stat.S_ISSOCK(os.lstat(path).st_mode))
        # DEL without CNI_ARGS finds the folder from the port itself.
        self.ok("DEL", self.conf(), cid=cid)
        self.assertFalse(os.path.exists(os.path.dirname(path)))
        # A MAC in CNI_ARGS (MAC=, the reference plugins' convention) is the port's.
        result = self.ok("ADD", self.conf(), cid=cid, args=f"MAC={POD}")
        self.assertEqual(result["interfaces"][0]["mac"], POD)
        self.assertIn(f"mac={POD}", self.sw.ctl("port", "show", port_name(cid, "net1"))
                      ["port"]["spec"])
        self.ok("DEL", self.conf(), cid=cid)

    def test_del_of_unknown_container(self):
        rc, out, _ = self.cni("DEL", self.conf(), cid="never-added-0123")
        self.assertEqual((rc, out), (0, None))

    def test_bad_requests(self):
        before = self.ports()
        cid = container_id(5)
        bad_configs = [
            (self.conf(portType=None), 7),
            (self.conf(portType="tap"), 7),
            (self.conf(vlan=5000), 7),
            (self.conf(vlan="10"), 7),
            (self.conf(mtu=20000), 7),
            (self.conf(mac="01:00:5e:00:00:01"), 7),
            (self.conf(mac="not-a-mac"), 7),
            (self.conf(socketDir="relative/dir"), 7),
            (self.conf(socketDir="/run/../etc"), 7),
            (self.conf(socketDir="/" + "d" * 100), 7),
            (self.conf(portKeys={"zero_copy": True}), 7),
            (self.conf(portKeys={"path": "/etc/x"}), 7),
            (self.conf(portKeys={"lock": "1,path=/etc/x"}), 7),
            (self.conf(portKeys=["lock"]), 7),
            (self.conf(name=None), 7),
            (self.conf(ipam={"type": "host-local", "subnet": "10.1.0.0/24"}), 2),
            (self.conf(prevResult="nope"), 7),
        ]
        for conf, code in bad_configs:
            with self.subTest(conf=conf):
                self.fails("ADD", conf, code, cid=cid)
        # Versions this plugin does not speak, or none.
        self.fails("ADD", self.conf(version="0.2.0"), 1, version="0.2.0", cid=cid)
        self.fails("ADD", self.conf(version="9.9.9"), 1, version="9.9.9", cid=cid)
        self.fails("ADD", self.conf(version=None), 1, cid=cid)
        self.fails("CHECK", self.conf(version="0.3.1"), 1, version="0.3.1", cid=cid)
        # Not JSON at all.
        self.fails("ADD", None, 6, cid=cid, stdin="{not json")
        # The environment.
        self.fails("ADD", self.conf(), 4, cid=None)
        self.fails("ADD", self.conf(), 4, cid="../../etc")
        self.fails("ADD", self.conf(), 4, cid=cid, ifname=None)
        self.fails("ADD", self.conf(), 4, cid=cid, ifname="a/b")
        self.fails("ADD", self.conf(), 4, cid=cid, ifname="x" * 16)
        self.fails("ADD", self.conf(), 4, cid=cid, netns=False)
        self.fails("ADD", self.conf(), 4, cid=cid, args="NOEQUALS")
        self.fails("FROB", self.conf(), 4, cid=cid, env={"CNI_COMMAND": "FROB"})
        rc, out, _ = self.cni("ADD", self.conf(), cid=cid, env={"CNI_COMMAND": ""})
        self.assertEqual((rc != 0, out["code"]), (True, 4))
        # A key hvswitch refuses: its own words, the plugin's code, no folder left.
        out = self.fails("ADD", self.conf(portKeys={"bogus_key": 1}), 102, cid=cid)
        self.assertIn("bogus_key", out["msg"])
        # No daemon to ask: try again later.
        self.fails("ADD", self.conf(controlSocket=f"{self.sw.dir}/none.ctl"), 11, cid=cid)
        self.fails("DEL", self.conf(controlSocket=f"{self.sw.dir}/none.ctl"), 11, cid=cid)
        self.assertEqual(self.ports(), before)
        self.assertFalse(os.path.exists(os.path.join(self.socket_dir, cid)))
        # ADD twice without DEL: refused, the first port untouched.
        self.ok("ADD", self.conf(), cid=cid)
        self.fails("ADD", self.conf(), 102, cid=cid)
        self.ok("CHECK", self.conf(prevResult=None), cid=cid)
        self.ok("DEL", self.conf(), cid=cid)
        self.assertEqual(self.ports(), before)

    def test_versions_of_results(self):
        """A 0.4.0 configuration gets a 0.4.0 result: a previous plugin's IPs keep their
        "version"; in 1.0.0 they have none."""
        cid = container_id(6)
        prev = {"cniVersion": "0.4.0",
                "interfaces": [{"name": "eth0", "sandbox": self.netns_path}],
                "ips": [{"version": "4", "address": "10.1.0.5/24", "interface": 0}],
                "dns": {}}
        result = self.ok("ADD", self.conf(version="0.4.0", prevResult=prev), cid=cid)
        self.check_result(result, cid, "net1", version="0.4.0")
        self.assertEqual(result["interfaces"][0], prev["interfaces"][0])
        self.assertEqual(result["ips"], prev["ips"])
        self.ok("CHECK", self.conf(version="0.4.0", prevResult=result), cid=cid)
        self.ok("DEL", self.conf(version="0.4.0", prevResult=result), cid=cid)
        prev1 = dict(prev, cniVersion="1.0.0", ips=[{"address": "10.1.0.5/24", "interface": 0}])
        result = self.ok("ADD", self.conf(prevResult=prev1), cid=cid)
        self.assertEqual(result["ips"], prev1["ips"])
        self.ok("DEL", self.conf(), cid=cid)

    def test_multus_example(self):
        """deploy/kubernetes/multus/: each NetworkAttachmentDefinition's configuration as
        Multus hands it to the plugin (the pod's MAC as runtimeConfig when the plugin has
        the capability, K8S_POD_UID in CNI_ARGS) is accepted, and the example pod mounts
        the folder the plugin makes and opens the sockets it names."""
        with open(MULTUS_EXAMPLE) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        pod = next(d for d in docs if d["kind"] == "Pod")
        uid = "7d4c2a52-3f0e-4a9e-8f51-0c2b9a7e6d10"
        selections = json.loads(pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])
        nads = {d["metadata"]["name"]: json.loads(d["spec"]["config"])
                for d in docs if d["kind"] == "NetworkAttachmentDefinition"}
        container = pod["spec"]["containers"][0]
        mount = container["volumeMounts"][0]
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
        self.assertEqual(mount["subPathExpr"], "$(POD_UID)")
        self.assertEqual(container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
                         "metadata.uid")
        cid = container_id(9)
        for n, selection in enumerate(selections):
            conflist = nads[selection["name"]]
            plugin = conflist["plugins"][0]
            self.assertEqual(plugin["type"], "hvswitch-cni")
            self.assertEqual(plugin.get("socketDir", "/run/hvswitch/cni"),
                             volume["hostPath"]["path"])
            conf = dict(plugin, cniVersion=conflist["cniVersion"], name=conflist["name"],
                        socketDir=self.socket_dir, controlSocket=self.sw.ctl_socket)
            conf.pop("capabilities", None)
            if plugin.get("capabilities", {}).get("mac") and "mac" in selection:
                conf["runtimeConfig"] = {"mac": selection["mac"]}
            ifname = selection["interface"]
            args = f"IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=dpdk-app;" \
                   f"K8S_POD_UID={uid}"
            result = self.ok("ADD", conf, cid=cid, ifname=ifname, args=args)
            path = os.path.join(self.socket_dir, uid, f"{ifname}.sock")
            self.assertEqual(result["interfaces"][0]["socketPath"], path)
            self.assertEqual(result["interfaces"][0].get("mac"), selection.get("mac"))
            self.assertTrue(stat.S_ISSOCK(os.lstat(path).st_mode))
            # The pod's DPDK arguments name the same socket inside its mount.
            self.assertTrue(any(f"{mount['mountPath']}/{ifname}.sock" in arg
                                for arg in container["command"]), ifname)
            port = self.sw.ctl("port", "show", port_name(cid, ifname))["port"]
            self.assertEqual(port["type"], plugin["portType"])
            self.assertIn(f"vlan={plugin['vlan']}", port["spec"])
        for selection in selections:
            self.ok("DEL", dict(conf, prevResult=None), cid=cid, ifname=selection["interface"])
        self.assertFalse(os.path.exists(os.path.join(self.socket_dir, uid)))

    @unittest.skipUnless(os.access(os.path.join(REFERENCE_PLUGINS, "portmap"), os.X_OK),
                         "containernetworking-plugins is not installed")
    def test_chain_with_portmap(self):
        """A conflist [hvswitch-cni, portmap] as libcni runs it (Debian ships no cnitool):
        ADD in order, each plugin given the previous result as prevResult, the last result
        cached; CHECK in order with the cached result; DEL in reverse order. portmap only passes prevResult on when no
        port mappings are asked for (tuning, bandwidth and the like would need a kernel
        interface, which a vhost-user or memif attachment does not have)."""
        cid = container_id(7)
        conflist = {"cniVersion": "1.0.0", "name": "hvs-chain", "plugins": [
            {k: v for k, v in self.conf().items() if k not in ("cniVersion", "name")},
            {"type": "portmap", "capabilities": {"portMappings": True}, "snat": False}]}
        plugins = {"hvswitch-cni": HVSWITCH_CNI,
                   "portmap": os.path.join(REFERENCE_PLUGINS, "portmap")}

        def run(command, prev):
            order = conflist["plugins"]
            if command == "DEL":
                order = list(reversed(order))
            for plugin in order:
                conf = dict(plugin, cniVersion=conflist["cniVersion"], name=conflist["name"])
                if prev is not None:
                    conf["prevResult"] = prev
                rc, out, err = self.cni(command, conf, cid=cid, plugin=plugins[plugin["type"]])
                self.assertEqual(rc, 0, f"{command} {plugin['type']}: {out} {err}")
                if command == "ADD":
                    prev = out
            return prev

        result = run("ADD", None)
        # portmap (libcni 1.1) passes the interface on without "socketPath", a CNI 1.1
        # field it does not know: a chain's result has it only when hvswitch-cni is last.
        interface = dict(result["interfaces"][0])
        path = interface.pop("socketPath", os.path.join(self.socket_dir, cid, "net1.sock"))
        self.assertEqual(interface, {"name": "net1", "sandbox": self.netns_path})
        self.assertEqual(len(result["interfaces"]), 1)
        self.assertTrue(stat.S_ISSOCK(os.lstat(path).st_mode))
        self.assertIn(port_name(cid, "net1"), self.ports())
        run("CHECK", result)
        run("DEL", result)
        self.assertNotIn(port_name(cid, "net1"), self.ports())
        self.assertFalse(os.path.exists(os.path.dirname(path)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
