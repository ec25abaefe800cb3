"""The deployment files are valid: the systemd unit (systemd-analyze verify), the
Prometheus alert rules and scrape configuration (promtool), the Grafana dashboard (JSON,
panels with queries) and the Kubernetes manifests (YAML with the fields that make them
work: host networking, hugepages, the shared socket directory, the ConfigMap's config).
Whether the metrics they use exist is checked against a running hvswitch in
test_operate.py.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(__file__))
from harness import HVSWITCH  # noqa: E402

DEPLOY = os.path.join(os.path.dirname(__file__), "..", "..", "deploy")


class DeployTest(unittest.TestCase):
    def test_systemd_unit_verifies(self):
        if shutil.which("systemd-analyze") is None:
            self.skipTest("no systemd-analyze")
        # The unit as the build made it (deploy/meson.build: the install paths filled in).
        built = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(HVSWITCH))),
                             "deploy", "hvswitch.service")
        with open(built) as f:
            unit = f.read()
        self.assertIn("Restart=on-failure", unit)
        self.assertIn("RuntimeDirectory=hvswitch", unit)
        self.assertNotIn("@", unit)  # every path filled in
        # The installed paths point at this checkout's files.
        unit, n = re.subn(r"/\S+/hvswitch-host-setup",
                          os.path.abspath(os.path.join(DEPLOY, "systemd", "hvswitch-host-setup")),
                          unit)
        self.assertEqual(n, 1)
        unit, n = re.subn(r"/\S+/sbin/hvswitch ", os.path.abspath(HVSWITCH) + " ", unit)
        self.assertEqual(n, 1)
        d = tempfile.mkdtemp()
        path = os.path.join(d, "hvswitch.service")
        with open(path, "w") as f:
            f.write(unit)
        # --man=no: its man pages are not installed here (tests/deploy/package.sh checks
        # them with the package).
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", path], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("hvswitch.service", r.stdout + r.stderr)  # no warning about it

    def test_example_config_is_accepted(self):
        # The unit's example configuration parses (hvswitch --help reads it first).
        r = subprocess.run([HVSWITCH, f"--config={DEPLOY}/systemd/hvswitch.conf", "--help"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_prometheus_rules_and_config(self):
        r = subprocess.run(["promtool", "check", "rules", f"{DEPLOY}/prometheus/alerts.yml"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("SUCCESS: 9 rules found", r.stdout)
        d = tempfile.mkdtemp()
        for name in ("alerts.yml", "scrape.yml"):
            shutil.copy(f"{DEPLOY}/prometheus/{name}", d)
        r = subprocess.run(["promtool", "check", "config", f"{d}/scrape.yml"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_grafana_dashboard(self):
        with open(f"{DEPLOY}/grafana/hvswitch-dashboard.json") as f:
            dashboard = json.load(f)
        self.assertEqual(dashboard["uid"], "hvswitch")
        titles = [p["title"] for p in dashboard["panels"]]
        for wanted in ("Received packets/s by port", "Drops by port and reason",
                       "Worker core busy", "FDB", "Offload work by port: hardware vs software"):
            self.assertIn(wanted, titles)
        for panel in dashboard["panels"]:
            self.assertTrue(panel["targets"], panel["title"])
            for target in panel["targets"]:
                self.assertIn("hvswitch_", target["expr"], panel["title"])

    def test_kubernetes_manifests(self):
        docs = []
        for path in sorted(glob.glob(f"{DEPLOY}/kubernetes/*.yaml")):
            with open(path) as f:
                docs += [d for d in yaml.safe_load_all(f) if d]
        by_kind = {d["kind"]: d for d in docs}
        for d in docs:
            self.assertIn("apiVersion", d)
            self.assertIn("name", d["metadata"])
        self.assertEqual(set(by_kind), {"Namespace", "DaemonSet", "ConfigMap", "Service",
                                        "ServiceMonitor"})
        pod = by_kind["DaemonSet"]["spec"]["template"]["spec"]
        self.assertTrue(pod["hostNetwork"])
        container = pod["containers"][0]
        self.assertIn("hugepages-2Mi", container["resources"]["limits"])
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(volumes[mounts["/run/hvswitch"]]["hostPath"]["path"], "/run/hvswitch")
        self.assertEqual(volumes[mounts["/etc/hvswitch"]]["configMap"]["name"],
                         by_kind["ConfigMap"]["metadata"]["name"])
        # The ConfigMap's configuration is one hvswitch accepts.
        d = tempfile.mkdtemp()
        with open(f"{d}/hvswitch.conf", "w") as f:
            f.write(by_kind["ConfigMap"]["data"]["hvswitch.conf"])
        r = subprocess.run([HVSWITCH, f"--config={d}/hvswitch.conf", "--help"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        monitor = by_kind["ServiceMonitor"]["spec"]
        self.assertEqual(monitor["endpoints"][0]["port"],
                         by_kind["Service"]["spec"]["ports"][0]["name"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
