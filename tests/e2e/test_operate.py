"""Operating hvswitch: what an operator watches and pulls out of a running switch.

Guests on a (vhost-user), b (memif) and c (vhost-user, quota=) exchange frames while:
- `hvswitchctl capture` writes frames of one port to a pcapng file that tshark reads back
  as exactly what the guest sent (rx) or what the port was sent (tx);
- a scrape passes `promtool check metrics`;
- a real Prometheus server (Debian's) on loopback scrapes hvswitch every second; its query
  API then returns the switch's own counter values, and every metric the alert rules and
  the Grafana dashboard use exists;
- DPDK telemetry (dpdk-telemetry.py) and `hvswitchctl pmd` agree with the metrics.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from harness import (HVSWITCHCTL, _live, free_port, start_bridge, stop_bridge,  # noqa: E402
                     wait_flow, wait_for)

A, B, C = "02:00:00:00:0c:0a", "02:00:00:00:0c:0b", "02:00:00:00:0c:0c"
BCAST = "ff:ff:ff:ff:ff:ff"
DEPLOY = os.path.join(os.path.dirname(__file__), "..", "..", "deploy")


class OperateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge(
            [("a", "vhost-user", ""), ("b", "memif", ""), ("c", "vhost-user", ",quota=1024")])
        for name, mac in (("a", A), ("b", B), ("c", C)):
            cls.guests[name].send(BCAST, mac, 1)
        wait_for(lambda: cls.sw.value("hvswitch_fdb_entries") == 3, 10, "3 MACs learned")

    @classmethod
    def tearDownClass(cls):
        assert stop_bridge(cls.sw, cls.guests) == 0

    def capture(self, port, count, direction, send):
        """Runs hvswitchctl capture while `send()` makes traffic; returns tshark's lines
        (source, destination, frame length) of the file."""
        path = os.path.join(self.sw.dir, f"{port}-{direction}.pcapng")
        ctl = subprocess.Popen([HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "capture", port,
                                "--count", str(count), "--direction", direction, "-w", path,
                                "--timeout", "20"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        _live.append(ctl)
        # Started: the pool and ring a capture creates may take half a second on a busy
        # machine, and frames sent before are not in it.
        wait_for(lambda: self.sw.ctl("capture", "status")["active"], 10, "capture started")
        send()
        out, err = ctl.communicate(timeout=30)
        self.assertEqual(ctl.returncode, 0, err)
        self.assertEqual(out, f"captured {count} frames to {path}\n")
        r = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "eth.src", "-e",
                            "eth.dst", "-e", "frame.len"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [tuple(line.split("\t")) for line in r.stdout.splitlines()]

    def test_capture_received_and_sent_frames(self):
        a, b = self.guests["a"], self.guests["b"]
        frames = self.capture("a", 30, "rx", lambda: a.send(B, A, 30, 100))
        self.assertEqual(frames, [(A, B, "100")] * 30)
        # What b is sent: a's unicast and c's broadcast, and nothing b itself sends.
        c = self.guests["c"]
        frames = self.capture("b", 25, "tx", lambda: (b.send(A, B, 10), a.send(B, A, 20, 80),
                                                        c.send(BCAST, C, 5, 90)))
        self.assertEqual(sorted(frames), sorted([(A, B, "80")] * 20 + [(C, BCAST, "90")] * 5))
        wait_flow(b, A, B, 50)  # forwarding went on while captured
        # Errors: one line, non-zero.
        r = subprocess.run([HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "capture", "zz",
                            "-w", os.path.join(self.sw.dir, "zz.pcapng")],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stderr), (1, "hvswitchctl: no port named 'zz'\n"))

    def test_metrics_pass_promtool(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.sw.metrics_port}/metrics") as r:
            text = r.read()
        check = subprocess.run(["promtool", "check", "metrics"], input=text,
                               capture_output=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertEqual(check.stdout + check.stderr, b"")

    def test_prometheus_scrapes_during_traffic(self):
        d = tempfile.mkdtemp(prefix="hvs-prom-")
        shutil.copy(f"{DEPLOY}/prometheus/alerts.yml", d)
        with open(f"{DEPLOY}/prometheus/scrape.yml") as f:
            config = f.read().replace("scrape_interval: 15s", "scrape_interval: 1s")
        config = config.replace("127.0.0.1:9417", f"127.0.0.1:{self.sw.metrics_port}")
        with open(f"{d}/prometheus.yml", "w") as f:
            f.write(config)
        port = free_port()
        prom = subprocess.Popen(["prometheus", f"--config.file={d}/prometheus.yml",
                                 f"--storage.tsdb.path={d}/data",
                                 f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _live.append(prom)
        try:
            def query(expr):
                url = (f"http://127.0.0.1:{port}/api/v1/query?"
                       + urllib.parse.urlencode({"query": expr}))
                try:
                    with urllib.request.urlopen(url, timeout=5) as r:
                        return json.load(r)["data"]["result"]
                except OSError:
                    return None
            wait_for(lambda: query('up{job="hvswitch"}') == [] or query('up{job="hvswitch"}'),
                     30, "prometheus up")
            a, c = self.guests["a"], self.guests["c"]
            seen = c.flow(A, C)
            for _ in range(5):  # traffic while it scrapes
                a.send(C, A, 200)
                c.send(A, C, 100)
                time.sleep(0.5)
            wait_flow(c, A, C, seen + 1000)
            own = self.sw.value("hvswitch_port_receive_packets_total", port="a")

            def scraped():
                result = query('hvswitch_port_receive_packets_total{port="a"}')
                return result and float(result[0]["value"][1]) == own
            wait_for(scraped, 20, f"prometheus has a's {own} received frames")
            self.assertEqual(float(query('up{job="hvswitch"}')[0]["value"][1]), 1.0)
            # Every metric the alert rules and the dashboard use is there.
            names = {r["metric"]["__name__"]
                     for r in query('{__name__=~"hvswitch_.+"}')}
            with open(f"{DEPLOY}/prometheus/alerts.yml") as f:
                used = set(re.findall(r"hvswitch_\w+", f.read()))
            with open(f"{DEPLOY}/grafana/hvswitch-dashboard.json") as f:
                used |= set(re.findall(r"hvswitch_\w+", f.read()))
            # Histograms are stored as their _bucket/_sum/_count series.
            missing = {n for n in used if n not in names and n + "_bucket" not in names}
            self.assertEqual(missing, set())
            rules = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/rules"))
            self.assertEqual(sum(len(g["rules"]) for g in rules["data"]["groups"]), 9)
        finally:
            prom.send_signal(signal.SIGTERM)
            prom.wait(20)

    def test_telemetry_and_pmd_agree_with_metrics(self):
        a, b = self.guests["a"], self.guests["b"]
        seen = b.flow(A, B)
        a.send(B, A, 40)
        wait_flow(b, A, B, seen + 40)
        time.sleep(0.2)
        prefix = re.search(r"--file-prefix=(\S+)", " ".join(self.sw.proc.args)).group(1)
        r = subprocess.run(["dpdk-telemetry.py", "-f", prefix], input="/hvswitch/ports\n",
                           capture_output=True, text=True, timeout=30)
        answer = json.loads(r.stdout.strip().splitlines()[-1])["/hvswitch/ports"]
        self.assertEqual(set(answer), {"a", "b", "c"})
        for port in "abc":
            self.assertEqual(answer[port]["rx_packets"],
                             self.sw.value("hvswitch_port_receive_packets_total", port=port))
            self.assertEqual(answer[port]["up"], 1)
        pmd = self.sw.ctl("pmd")["cores"]
        self.assertEqual(len(pmd), 1)
        rx = sum(self.sw.value("hvswitch_port_receive_packets_total", port=p) for p in "abc")
        self.assertEqual(pmd[0]["packets"], rx)
        self.assertEqual(sum(b["count"] for b in pmd[0]["bursts"]),
                         self.sw.value("hvswitch_core_rx_burst_size_count",
                                       core=str(pmd[0]["core"])))
        self.assertGreater(pmd[0]["cycles_per_packet"], 0)
        self.assertGreaterEqual(pmd[0]["loop_cycles_per_packet"], pmd[0]["cycles_per_packet"])
        # Each port that sent is charged for its frames, one that did not with nothing.
        for port in "abc":
            sent = self.sw.value("hvswitch_port_receive_packets_total", port=port)
            charged = self.sw.value("hvswitch_port_cpu_seconds_total", port=port)
            self.assertEqual(charged > 0, sent > 0, f"port {port}: {sent} frames, {charged} s")
        # b was sent frames: its residence histogram has samples (the first transmit to a
        # port is sampled), at most one per transmit, the same in port show and /metrics.
        samples = self.sw.value("hvswitch_port_residence_seconds_count", port="b")
        self.assertGreater(samples, 0)
        self.assertLessEqual(samples,
                             self.sw.value("hvswitch_port_transmit_bursts_total", port="b"))
        self.assertEqual(samples, self.sw.value("hvswitch_port_residence_seconds_bucket",
                                                port="b", le="+Inf"))
        self.assertGreater(self.sw.value("hvswitch_port_residence_seconds_sum", port="b"), 0)
        shown = self.sw.ctl("port", "show", "b")["port"]["residence"]
        self.assertEqual(shown["samples"], samples)
        self.assertEqual(sum(b["count"] for b in shown["buckets"]), samples)
        self.assertLessEqual(shown["p50_ns"], shown["p99_ns"])
        text = self.sw.ctl("port", "show", "b", as_json=False).stdout
        self.assertRegex(text, r"residence:\s+\d+ samples, mean \S+, p50 ")


if __name__ == "__main__":
    unittest.main(verbosity=2)
