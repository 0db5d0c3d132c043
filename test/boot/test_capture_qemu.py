"""scripts/capture --qemu on the real ISO, as a user runs it: capture
boots QEMU itself, presses d once READY came, stops at the dump's end and
exports it (--export) the moment it is whole; and a QEMU that refuses its
options is one clear line. capture on a pty playing the kernel, without a
boot: test/host/test_capture.py and test_tool_bounds.CaptureExport.
"""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))

from test_capture import run_capture
from test_decode_support import decode


class CaptureQemu(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bt-capture-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_boot_key_dump_and_perfetto_file(self):
        """One boot: the log holds READY and the dump of the key d (its
        HOTKEY event decodes), and the Perfetto file capture exported is
        byte for byte what decode writes from that log."""
        log, out = os.path.join(self.tmp, "run.log"), os.path.join(self.tmp, "run.pftrace")
        r = run_capture("--qemu", "--smp", "2", "--accel", "tcg", "-o", log, "--key", "d",
                        "--until-dump", "--timeout", "240", "--export", "perfetto", out,
                        timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("exported dump 0 (complete", r.stderr)
        with open(log, "rb") as f:
            self.assertIn(b"READY ", f.read())
        d = decode(log, "-f", "csv")
        self.assertEqual(d.returncode, 0, d.stderr)
        self.assertIn(b",HOTKEY,", d.stdout)
        want = os.path.join(self.tmp, "want.pftrace")
        d = decode(log, "-f", "perfetto", "-o", want)
        self.assertEqual(d.returncode, 0, d.stderr)
        with open(out, "rb") as a, open(want, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_qemu_refusing_its_options_is_an_error(self):
        r = run_capture("--qemu", "--smp", "2", "--accel", "tcg", "--topology", "bogus=1",
                        "-o", os.path.join(self.tmp, "run.log"), "--timeout", "60")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("QEMU failed", r.stderr)


if __name__ == "__main__":
    unittest.main()
