"""Restart without restarting guests: hvswitch is killed with SIGKILL (and later stopped
with SIGTERM) and started again
from the configuration it saved by itself (--save_config) as ports and static MACs were
changed with hvswitchctl, while its guests keep running.

vhost-user ports in client mode (client=1: the guest owns the socket, as QEMU does in
production; here virtio-user with server=1) from the start, and a memif port added at run
time (one more is added and removed again). After the restart every port comes back from
the saved file, the guests reconnect (vhost-user: hvswitch connects to
them again; memif: the guest restarts its port when it sees the link down), a static MAC
added at run time is there again, and traffic flows. The same guest processes throughout.
Then a guest restarts on its own and hvswitch connects to its new socket.
"""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Guest, wait_flow, wait_for  # noqa: E402

G1, G2, M1 = "02:00:00:00:07:01", "02:00:00:00:07:02", "02:00:00:00:07:03"
STATIC = "02:00:00:00:07:5a"
BCAST = "ff:ff:ff:ff:ff:ff"


class RestartTest(unittest.TestCase):
    def test_guests_keep_running_across_sigkill_and_restart(self):
        d = tempfile.mkdtemp(prefix="hvs-e2e-")
        g1 = Guest("vhost-user", f"{d}/g1.sock", "g1", server=True)
        g2 = Guest("vhost-user", f"{d}/g2.sock", "g2", server=True)
        saved = f"{d}/saved.conf"
        sw = Daemon(["g1,type=vhost-user,path={dir}/g1.sock,client=1",
                     "g2,type=vhost-user,path={dir}/g2.sock,client=1"], sockdir=d,
                    extra=[f"--save_config={saved}"])
        guests = [g1, g2]
        try:
            sw.wait_ready()
            g1.wait_ready()
            g2.wait_ready()
            sw.ctl("port", "add", "m1", "memif", f"path={d}/m1.sock")
            sw.ctl("port", "add", "gone", "memif", f"path={d}/gone.sock")
            sw.ctl("port", "del", "gone")
            m1 = Guest("memif", f"{d}/m1.sock", "m1")
            guests.append(m1)
            for guest in guests:
                guest.wait_link()
                sw.wait_port_up(guest.name)
            g1.send(BCAST, G1, 3)
            wait_flow(g2, G1, BCAST, 3)
            wait_flow(m1, G1, BCAST, 3)
            sw.ctl("fdb", "add", "m1", STATIC)
            with open(saved) as f:
                self.assertIn(f"save_config={saved}\n", f.read())
            pids = [guest.proc.pid for guest in guests]

            def start_again():
                """hvswitch from the saved file; the same guests back on every port."""
                again = Daemon.from_config(saved, d)
                again.wait_ready()
                for guest in guests:
                    guest.wait_link(reconnect=True)
                    again.wait_port_up(guest.name)
                self.assertEqual([guest.proc.pid for guest in guests], pids)
                return again

            sw.proc.kill()
            sw.proc.wait()
            sw.log.close()
            sw = start_again()
            self.assertTrue(all(guest.proc.poll() is None for guest in guests))
            ports = sw.ctl("port", "list")["ports"]
            self.assertEqual([p["name"] for p in ports], ["g1", "g2", "m1"])
            self.assertIn({"mac": STATIC, "vlan": 0, "port": "m1", "static": True},
                          sw.ctl("fdb", "show")["entries"])
            # Traffic in every direction again.
            g1.send(BCAST, G1, 2)
            wait_flow(g2, G1, BCAST, 5)
            wait_flow(m1, G1, BCAST, 5)
            m1.send(BCAST, M1, 1)
            wait_flow(g1, M1, BCAST, 1)
            g2.send(M1, G2, 4)
            wait_flow(m1, G2, M1, 4)
            g2.send(STATIC, G2, 2)  # the static entry steers to m1 without learning
            wait_flow(m1, G2, STATIC, 2)
            self.assertEqual(g1.flow(G2, STATIC), 0)
            # Stopped cleanly (SIGTERM, as systemd does) and started again: the same.
            self.assertEqual(sw.stop(), 0)
            sw = start_again()
            g1.send(BCAST, G1, 1)
            wait_flow(g2, G1, BCAST, 6)
            wait_flow(m1, G1, BCAST, 6)
            m1.send(G2, M1, 2)
            wait_flow(g2, M1, G2, 2)
            # A guest restarting on its own (QEMU restarted): hvswitch, the client, keeps
            # trying its socket and connects to the new one.
            g1.quit()
            sw.wait_port_up("g1", up=False)
            g1 = guests[0] = Guest("vhost-user", f"{d}/g1.sock", "g1", server=True)
            g1.wait_ready()
            g1.wait_link()
            sw.wait_port_up("g1")
            g2.send(BCAST, G2, 1)
            wait_flow(g1, G2, BCAST, 1)
        finally:
            for guest in guests:
                guest.quit()
            self.assertEqual(sw.stop(), 0)

    def test_ports_whose_runtime_folder_went_with_a_reboot_are_left_out(self):
        """A reboot empties /run: a port whose socket folder below the runtime directory is
        gone (a CNI plugin's per-pod folder) is left out when hvswitch starts again from
        what it saved, logged; a folder gone anywhere else still stops the start."""
        d = tempfile.mkdtemp(prefix="hvs-e2e-")
        elsewhere = tempfile.mkdtemp(prefix="hvs-e2e-other-")
        saved = f"{d}/saved.conf"
        sw = Daemon(["keep,type=memif,path={dir}/keep.sock"], sockdir=d,
                    extra=[f"--runtime_dir={d}", f"--save_config={saved}"])
        sw.wait_ready()
        os.makedirs(f"{d}/cni/pod1")
        sw.ctl("port", "add", f"pod,type=memif,path={d}/cni/pod1/eth1.sock")
        self.assertEqual(sw.stop(), 0)
        shutil.rmtree(f"{d}/cni")  # the reboot
        again = Daemon.from_config(saved, d)
        try:
            again.wait_ready()
            self.assertEqual([p["name"] for p in again.ctl("port", "list")["ports"]], ["keep"])
            self.assertIn(f"port 'pod': left out: the folder of its socket {d}/cni/pod1/eth1.sock"
                          f" is gone", again.output())
            os.makedirs(f"{elsewhere}/vms")
            again.ctl("port", "add", f"vm,type=memif,path={elsewhere}/vms/vm.sock")
        finally:
            self.assertEqual(again.stop(), 0)
        shutil.rmtree(f"{elsewhere}/vms")
        refused = Daemon.from_config(saved, d)
        self.assertEqual(refused.proc.wait(timeout=30), 1)
        refused.log.close()
        self.assertIn(f"directory {elsewhere}/vms does not exist", refused.output())
        shutil.rmtree(elsewhere)
        shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main(verbosity=2)
