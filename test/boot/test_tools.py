"""The boot tooling on real boots: run-qemu (make run) scripted through a
pipe, and the test harness's waits, QMP and keys. Broken tooling would
make every boot test's verdict meaningless, so it is checked like the
kernel is. What needs no QEMU is in test/host: test_install_deps,
test_qemu_argv (the command lines), test_harness (fault patterns).
"""
import os
import subprocess
import sys
import tempfile
import unittest

import harness
from harness import Machine, BootError, REPO

PYTHON = sys.executable
RUN_QEMU = os.path.join(REPO, "scripts", "run-qemu")
RUN_QEMU_TIMEOUT_S = 180
GRUB_COUNTDOWN = b"will be executed automatically"


class RunQemu(unittest.TestCase):
    """`make run` scripted through a pipe."""

    def run_qemu(self, stdin, *args):
        log = os.path.join(self.tmp.name, "serial.log")
        res = subprocess.run(
            [PYTHON, RUN_QEMU, "--iso", harness.ISO, "--accel", "tcg",
             "--log", log, *args], input=stdin, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, timeout=RUN_QEMU_TIMEOUT_S)
        with open(log, "rb") if os.path.exists(log) else open(os.devnull,
                                                              "rb") as f:
            return res, f.read()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_stdin_eof_boots_then_stops(self):
        res, log = self.run_qemu(b"", "--smp", "2", "--cmdline", "nosmp")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertRegex(log, rb"READY cpus=1 ")
        self.assertIn(log, res.stdout)  # stdout got every byte the log did

    def test_input_waits_for_ready(self):
        # No --cmdline: GRUB's menu counts down. A key reaching GRUB then
        # stops the countdown for good, so run-qemu must hold stdin bytes
        # until READY. Type one while the countdown is on screen.
        log = os.path.join(self.tmp.name, "serial.log")
        proc = subprocess.Popen(
            [PYTHON, RUN_QEMU, "--iso", harness.ISO, "--accel", "tcg",
             "--smp", "1", "--ready-timeout", "30", "--log", log],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        self.addCleanup(proc.kill)
        seen = b""
        while GRUB_COUNTDOWN not in seen:
            chunk = proc.stdout.read1(4096)
            self.assertTrue(chunk, "run-qemu ended before GRUB's menu")
            seen += chunk
        proc.stdin.write(b"x")
        proc.stdin.close()
        proc.stdin = None  # communicate() must not flush it again
        rest, err = proc.communicate(timeout=RUN_QEMU_TIMEOUT_S)
        self.assertEqual(proc.returncode, 0, err)
        self.assertRegex(seen + rest, rb"READY cpus=1 ")

    def test_ready_timeout_is_an_error(self):
        res, _ = self.run_qemu(b"", "--ready-timeout", "0.2")
        self.assertEqual(res.returncode, 1)
        self.assertIn(b"no READY line within", res.stderr)
        self.assertNotIn(b"Traceback", res.stderr)


class Harness(unittest.TestCase):
    """The harness on a real boot: a wait that times out fails with the
    log's tail (the runner's deadline catches one that hangs), QMP answers
    and keys go in. Its QEMU-free parts: test/host/test_harness.py."""

    def test_timeout_qmp_and_keys(self):
        with Machine(self.id(), smp=1) as m:
            m.ready()
            with self.assertRaises(BootError) as cm:
                m.wait_for(rb"this is never printed", 1)
            self.assertIn("READY cpus=1", str(cm.exception))
            self.assertEqual(m.qmp().command("query-status")["status"],
                             "running")
            self.assertEqual(m.sendkey("d"), {})
            m.send(b"\r")  # serial input path accepted


if __name__ == "__main__":
    unittest.main()
