"""Bad configuration: hvswitch exits non-zero with one line naming the port and the
problem, and leaves no socket and no process behind."""
import glob
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import HVSWITCH  # noqa: E402


class BadConfigTest(unittest.TestCase):
    def run_switch(self, *ports, eal="--no-huge -m 256", extra=()):
        self.dir = tempfile.mkdtemp(prefix="hvs-bad-")
        args = [HVSWITCH, "--metrics_address=none",
                f"--eal={eal} --file-prefix=hvs-bad-{os.getpid()}"]
        args += [f"--port={p.format(dir=self.dir)}" for p in ports] + list(extra)
        proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
        self.output = proc.stdout + proc.stderr
        self.assertNotEqual(proc.returncode, 0, self.output)
        self.assertEqual(glob.glob(os.path.join(self.dir, "*")), [],
                         "a socket was left behind")
        return proc.returncode

    def assertLine(self, *parts):
        """One line of the output names every part."""
        for line in self.output.splitlines():
            if line.startswith("hvswitch: ") and all(p in line for p in parts):
                return
        self.fail(f"no line with {parts} in:\n{self.output}")

    def test_unknown_type(self):
        self.assertEqual(self.run_switch("p1,type=tap,path={dir}/p1.sock"), 2)
        self.assertLine("port 'p1'", "unknown type 'tap'")

    def test_unknown_key(self):
        self.assertEqual(self.run_switch("p1,type=memif,path={dir}/p1.sock,colour=red"), 2)
        self.assertLine("port 'p1'", "unknown key 'colour'")

    def test_duplicate_port_name(self):
        self.run_switch("p1,type=memif,path={dir}/a.sock", "p1,type=memif,path={dir}/b.sock")
        self.assertLine("port 'p1'", "duplicate port name")

    def test_missing_path(self):
        self.run_switch("p1,type=vhost-user")
        self.assertLine("port 'p1'", "missing path")

    def test_socket_path_not_creatable(self):
        self.run_switch("p0,type=vhost-user,path={dir}/ok.sock",
                        "p1,type=vhost-user,path=/nonexistent-hvs/dir/p1.sock")
        self.assertLine("port 'p1'", "/nonexistent-hvs/dir", "does not exist")

    def test_socket_path_is_a_file(self):
        d = tempfile.mkdtemp(prefix="hvs-bad-file-")
        path = os.path.join(d, "taken")
        open(path, "w").close()
        self.run_switch(f"p1,type=memif,path={path}")
        self.assertLine("port 'p1'", "exists and is not a socket")
        self.assertTrue(os.path.isfile(path), "the operator's file was removed")

    def test_eal_failure(self):
        self.assertEqual(self.run_switch("p1,type=vhost-user,path={dir}/p1.sock",
                                         eal="--no-huge -m 256 --no-such-eal-option"), 1)
        self.assertLine("cannot start DPDK")

    def test_port_start_failure_cleans_up_earlier_ports(self):
        self.assertEqual(self.run_switch("p1,type=vhost-user,path={dir}/p1.sock",
                                         "m1,type=memif,path={dir}/m1.sock",
                                         "p2,type=dpdk,devargs=net_nosuchdriver0"), 1)
        self.assertLine("port 'p2'", "cannot probe device 'net_nosuchdriver0'")

    def test_a_ring_that_cannot_hold_the_longest_sleep_given(self):
        # net_null: 1024 descriptors at its 10 Gb/s hold 68.8 us of 64-byte frames.
        self.assertEqual(self.run_switch("p1,type=vhost-user,path={dir}/p1.sock",
                                         "n1,type=dpdk,devargs=net_null0",
                                         extra=["--idle_max_us=250"]), 1)
        self.assertLine("port 'n1'", "1024 descriptors holds 68.8 us", "--idle_max_us=250")

    def test_no_process_left_behind(self):
        self.run_switch("p1,type=vhost-user,path={dir}/p1.sock",
                        "p2,type=dpdk,devargs=net_nosuchdriver0")
        left = subprocess.run(["pgrep", "-f", f"hvs-bad-{os.getpid()}"],
                              capture_output=True, text=True).stdout.split()
        self.assertEqual(left, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
