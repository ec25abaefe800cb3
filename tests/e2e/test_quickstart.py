"""The README's first command as a newcomer runs it: deploy/quickstart.sh with its demo
guests (DEMO_ONLY=1: the switch stops after the demo). What it shows must read as a
working switch: every table of `hvswitchctl top` has frames going both ways between vm1
and mem1 and no port dropping anything (the demo is a closed loop: the README says none
is dropped), and the demo ends with the switch stopped cleanly.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$")


def rate(text):
    """'1.30M' as a number."""
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}
    return float(text[:-1]) * scale[text[-1]] if text[-1] in scale else float(text)


class QuickstartTest(unittest.TestCase):
    def test_demo_drops_nothing(self):
        run_dir = tempfile.mkdtemp(prefix="hvs-qs-")
        self.addCleanup(shutil.rmtree, run_dir, True)
        env = dict(os.environ, DEMO_ONLY="1", DEMO_SECONDS="3", RUN_DIR=run_dir)
        # Its own process group: whatever it leaves behind on a failure is killed whole.
        proc = subprocess.Popen([os.path.join(ROOT, "deploy", "quickstart.sh")], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()
        self.assertEqual(proc.returncode, 0, out[-3000:])
        self.assertIn("quickstart: demo done, hvswitch stopped", out)
        tables = []
        for line in out.splitlines():
            if line.startswith("PORT ") and "DROPS/S" in line:
                tables.append({})
            elif tables and (m := ROW.match(line)) and m.group(1) in ("vm1", "vm2", "mem1"):
                tables[-1][m.group(1)] = m.groups()[1:]
        self.assertEqual(len(tables), 3, out[-3000:])
        for n, table in enumerate(tables):
            self.assertEqual(set(table), {"vm1", "vm2", "mem1"}, out[-3000:])
            for port, (rx, tx, _, _, drops, mostly) in table.items():
                self.assertEqual((drops, mostly), ("0", "-"), f"table {n}, port {port}")
            for port in ("vm1", "mem1"):
                rx, tx = rate(table[port][0]), rate(table[port][1])
                self.assertGreater(rx, 0, f"table {n}: {port} receives")
                self.assertGreater(tx, 0, f"table {n}: {port} is sent frames")
            self.assertEqual(table["vm2"][:2], ("0", "0"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
