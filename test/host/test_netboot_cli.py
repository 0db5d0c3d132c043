"""scripts/netboot's refusals, which serve nothing and boot nothing: a
missing TFTP root, an interface that does not exist, a --cmdline with a
bad option (checked by tools/cmdline_check, the kernel's own parser), no
interface at all: one clear line each. Serving a LAN for real is
test/boot/test_netboot_lan.py.
"""
import os
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "boot"))
from test_netboot import need_netboot

NETBOOT_CMD = os.path.join(REPO, "scripts", "netboot")


class BadInput(unittest.TestCase):
    """Each refusal: exit 1, one line on stderr, nothing served."""

    def netboot(self, *args):
        return subprocess.run([sys.executable, NETBOOT_CMD, *args], capture_output=True,
                              text=True, timeout=60)

    def refused(self, r, pattern):
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], pattern)

    def test_refusals(self):
        need_netboot()
        self.refused(self.netboot("--interface", "lo", "--root", "/nonexistent/tftp"),
                     r"^netboot: TFTP root /nonexistent/tftp not found: run make netboot")
        self.refused(self.netboot("--interface", "btnosuch0"),
                     r"^netboot: no network interface 'btnosuch0' on this machine \(there are: ")
        self.refused(self.netboot("--interface", "lo", "--cmdline", "workload=tsc timer_hz=0"),
                     r"^netboot: --cmdline: the kernel would say: cmdline: timer_hz=0: want a "
                     r"number from 1 to 10000")
        self.refused(self.netboot("--interface", "lo", "--cmdline", "bogus.option=1"),
                     r"bogus\.option=1: unknown option")
        r = self.netboot()                                   # no interface: says what it would do
        self.refused(r, r"^netboot: name the interface to serve on \(--interface IFACE\)")
        self.assertIn("would answer PXE requests", r.stdout)
        self.assertIn("proxy-DHCP", r.stdout)


if __name__ == "__main__":
    unittest.main()
