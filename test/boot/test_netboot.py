"""Booting over the network (issue 30): make netboot's TFTP root, booted by
QEMU's user-mode DHCP and TFTP (PXE under SeaBIOS and OVMF, through
iPXE's option ROM), with no CD and no stick, as capture --qemu --netboot
runs it. The kernel says boot=net, runs a workload and dumps unattended
over the same NIC to capture --net, and the dump decodes complete.

The network stays inside QEMU: its 10.0.2.2 is this host's 127.0.0.1."""
import csv
import io
import json
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

sys.path.insert(0, os.path.join(HERE, "..", "host"))

from harness import scaled
from test_netcapture import free_port
from test_net import Capture
from btlib.dump import dumplog
from btlib.dump import ready as readyline
from btlib.qemu import launch as qemu

REPO = os.path.dirname(os.path.dirname(HERE))
CAPTURE = os.path.join(REPO, "scripts", "capture")
REPORT = os.path.join(REPO, "scripts", "report")
NETBOOT = os.path.join(REPO, "build", "netboot")
WORKLOAD = "workload=tsc:rounds=4,dump=1"
TIMEOUT_S = {"bios": 240, "uefi": 360}


def need_netboot():
    """make test builds the TFTP root first (tests run in parallel: none builds it)."""
    kernel = os.path.join(REPO, "build", "iso", "boot", "baretrace.elf")
    stamp = os.path.join(NETBOOT, ".built")
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(kernel):
        raise AssertionError(f"{NETBOOT} is missing or older than the kernel: run make netboot")


class NetCapture(Capture):
    """test_net's capture --net in the background (with --qemu it boots the
    machine too), on a free port; logs in self.dir, one per MAC. Without
    --until-dump: a lab's machines dump unattended, each when its workload
    ends, and the test waits for the complete dumps itself."""

    def __init__(self, name, *args):
        self.port = free_port()
        super().__init__(name, self.port, *args)

    def logs(self):
        out = {}
        for fn in sorted(os.listdir(self.dir)):
            with open(os.path.join(self.dir, fn), "rb") as f:
                out[fn[:-len(".log")]] = f.read()
        return out

    def wait_complete(self, machines, timeout):
        """{mac: log} once `machines` logs each hold a complete dump."""
        deadline = time.monotonic() + scaled(timeout)
        while time.monotonic() < deadline and self.proc.poll() is None:
            logs = self.logs()
            done = {m: log for m, log in logs.items()
                    if any(d.complete for d in dumplog.parse_log(log))}
            if len(done) >= machines:
                return logs
            time.sleep(2)
        self.stop()
        with open(self.err_path) as f:
            raise AssertionError(f"{machines} complete dumps did not arrive in time; capture "
                                 f"said: {f.read()[-2000:]}; logs: {list(self.logs())}")

    def stop(self):
        """Ctrl-C, as a user stops it; returns its exit status."""
        super().stop()
        return self.proc.returncode


class Netboot(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        need_netboot()

    def boot_over_network(self, fw):
        cap = NetCapture(f"netboot-{fw}", "--qemu", "--net", "e1000", "--netboot", "--fw", fw,
                         "--accel", "tcg", "--smp", "2", "--cmdline", WORKLOAD)
        try:
            logs = cap.wait_complete(1, TIMEOUT_S[fw])
        finally:
            cap.stop()
        self.assertEqual(len(logs), 1, logs.keys())
        log = next(iter(logs.values()))
        ready = readyline.find(log)
        self.assertEqual(ready["boot"], "net")
        self.assertEqual(ready["fw"], fw)
        self.assertRegex(log, rb'(?m)^MACHINE .* boot="net" boot.root="tftp,10\.0\.2\.2"')
        self.assertNotIn(b"cdrom", log.lower())
        dumps = dumplog.parse_log(log)
        self.assertTrue(dumps and dumps[-1].complete)
        d = dumps[-1]
        self.assertEqual(d.header.get("trigger"), "workload")
        self.assertEqual(d.identity.get("boot"), "net")
        self.assertTrue(d.machine_name())

    def test_bios_pxe(self):
        self.boot_over_network("bios")

    def test_uefi_pxe(self):
        self.boot_over_network("uefi")


class Lab(unittest.TestCase):
    """Three machines at once, as a lab boots: three QEMUs with distinct
    MACs (and product names), netbooted with the same command line (a
    workload, then a dump, unattended), all sending to one capture --net;
    then report DIR makes them one table."""
    MACS = ("52:54:00:0b:a7:01", "52:54:00:0b:a7:02", "52:54:00:0b:a7:03")
    CMDLINE = "workload=c2c:samples=4,trips=20,dump=1"

    def test_three_machines_one_table(self):
        need_netboot()
        cap = NetCapture("lab-capture")
        port = cap.port
        procs = []
        try:
            for i, mac in enumerate(self.MACS):
                opts = qemu.Options(iso="", fw="bios", smp=2, accel="tcg", serial="none",
                                    netboot=NETBOOT, nic="e1000", mac=mac,
                                    cmdline=f"{self.CMDLINE} net.to=10.0.2.2:{port}",
                                    extra=["-smbios", f"type=1,manufacturer=QEMU,product=Lab PC {i}"])
                procs.append(qemu.launch(opts, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            logs = cap.wait_complete(3, 300)
        finally:
            for p in procs:
                p.kill()
                p.wait()
            status = cap.stop()
        self.assertEqual(status, 130)                             # stopped by Ctrl-C, as a user does
        with open(cap.err_path) as f:
            self.assertNotIn("Traceback", f.read())
        self.assertEqual(sorted(logs), [m.replace(":", "") for m in self.MACS])
        out_dir = cap.dir
        r = subprocess.run([sys.executable, REPORT, out_dir], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(len(lines), 4, r.stdout)                 # the head and three rows
        self.assertIn("C2C_MEDIAN_NS", lines[0])
        for i, line in enumerate(lines[1:]):
            self.assertTrue(line.startswith(self.MACS[i].replace(":", "")), line)
            self.assertIn(f"QEMU Lab PC {i}", line)
        r = subprocess.run([sys.executable, REPORT, out_dir, "--json", "-"], capture_output=True,
                           text=True, timeout=300)
        rows = json.loads(r.stdout)
        self.assertEqual(len(rows), 3)
        for row in rows:
            self.assertEqual((row["boot"], row["cpus"], row["complete_dumps"]), ("net", 2, 1))
            self.assertEqual(row["workloads"], "c2c")
            self.assertGreater(row["c2c_median_ns"], 0)
            self.assertIn(row["c2c_worst_pair"], ("0-1", "1-0"))
            self.assertEqual(row["missing_events"], 0)
        r = subprocess.run([sys.executable, REPORT, out_dir, "--csv", "-"], capture_output=True,
                           text=True, timeout=300)
        head, *body = list(csv.reader(io.StringIO(r.stdout)))
        self.assertEqual(len(body), 3)
        self.assertEqual(head[0], "machine")
        self.assertIn("c2c_median_ns", head)


if __name__ == "__main__":
    unittest.main()
