"""No log line per scrape: /metrics asked again and again while nothing changes logs
nothing again.

Ports a (vhost-user, no guest ever attaches) and b (vhost-user with a guest). Every scrape
reads the devices' per-queue statistics; a vhost-user port without a guest has none, and
asking DPDK's vhost PMD for them anyway made the vhost library log
`VHOST_CONFIG: (device) (-1) device not found.` once per queue and scrape. The guest's
per-queue statistics are still there.
"""
import collections
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Guest  # noqa: E402

SCRAPES = 20


class QuietScrapeTest(unittest.TestCase):
    def setUp(self):
        self.sw = Daemon(["a,type=vhost-user,path={dir}/a.sock",
                          "b,type=vhost-user,path={dir}/b.sock"])
        self.sw.wait_ready()
        self.guest = Guest("vhost-user", f"{self.sw.dir}/b.sock", "b")
        self.guest.wait_link()
        self.sw.wait_port_up("b")

    def tearDown(self):
        self.guest.quit()
        self.assertEqual(self.sw.stop(), 0)

    def test_scrapes_log_nothing_again(self):
        self.sw.scrape()  # anything a first scrape may say once
        before = len(self.sw.output())
        metrics = None
        for _ in range(SCRAPES):
            metrics = self.sw.scrape()
        logged = self.sw.output()[before:].splitlines()
        repeated = {line: n for line, n in collections.Counter(logged).items() if n > 1}
        self.assertEqual(repeated, {}, f"lines logged again and again by {SCRAPES} scrapes")
        self.assertFalse([line for line in logged if "device not found" in line])
        queue_stats = [labels for name, labels in metrics
                       if name == "hvswitch_port_queue_stat_total"]
        self.assertTrue(any(("port", "b") in labels for labels in queue_stats),
                        "the connected guest's per-queue statistics")
        self.assertFalse(any(("port", "a") in labels for labels in queue_stats))


if __name__ == "__main__":
    unittest.main(verbosity=2)
