"""scripts/capture against a pseudo-terminal that plays the kernel's part.

The test opens a pty pair, runs capture on the slave side (as it would
run on /dev/ttyUSB0), writes a recorded console stream into the master
side and reads back the hotkeys capture sends.  The stream is a real dump
made by build/tools/gen_dump, framed by console noise and a READY line.
capture --qemu's boots are test/boot/test_capture_qemu.py's.
"""

import fcntl
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tty
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAPTURE = os.path.join(REPO, 'scripts', 'capture')
DECODE = os.path.join(REPO, 'scripts', 'decode')
GEN_DUMP = os.path.join(REPO, 'build', 'tools', 'gen_dump')
ISO = os.path.join(REPO, 'build', 'baretrace.iso')

BOOT_NOISE = (b'\x1b[2J\x1b[H  GNU GRUB  version 2.06\r\n  Booting `baretrace\'\r\n'
              b'baretrace: starting\r\n')
READY = b'READY cpus=4 found=4 max=16 tsc_hz=2400000000 invariant_tsc=0 tsc_warp=123\r\n'
STEP_S = 30          # deadline for anything the test waits for (a loaded CI machine)


def gen_dump(*args):
    if not os.path.exists(GEN_DUMP):
        subprocess.run(['make', '-s', '-C', REPO, 'build/tools/gen_dump'],
                       capture_output=True, timeout=300)
    if not os.path.exists(GEN_DUMP):
        raise unittest.SkipTest('build/tools/gen_dump could not be built')
    return subprocess.run([GEN_DUMP, *args], capture_output=True, check=True,
                          timeout=60).stdout


class Pty:
    """The kernel's end of a serial line: write console bytes, read keys."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)

    def write(self, data, chunk=4096):
        for i in range(0, len(data), chunk):
            os.write(self.master, data[i:i + chunk])

    def read_keys(self, want, timeout=STEP_S):
        """Bytes capture sent, until `want` of them arrived or timeout."""
        got, deadline = b'', time.monotonic() + timeout
        while len(got) < want and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                got += os.read(self.master, 64)
        return got

    def close(self):
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


class CaptureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dump = gen_dump('cpus=2', 'events=600', 'cap=512', 'noise=0')

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='bt-capture-')
        self.log = os.path.join(self.tmp, 'run.log')
        self.pty = Pty()
        self.addCleanup(self.pty.close)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def start(self, *args, stderr=subprocess.PIPE):
        proc = subprocess.Popen([sys.executable, CAPTURE, '--port', self.pty.path,
                                 '-o', self.log, *args],
                                stdout=subprocess.DEVNULL, stderr=stderr)
        self.addCleanup(_reap, proc)
        self.wait_for_port(proc)
        return proc

    def wait_for_port(self, proc):
        """capture has the port once it holds its lock."""
        deadline = time.monotonic() + STEP_S
        while time.monotonic() < deadline and proc.poll() is None:
            fd = os.open(self.pty.path, os.O_RDWR | os.O_NOCTTY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            finally:
                os.close(fd)
            time.sleep(0.02)

    def finish(self, proc):
        _, err = proc.communicate(timeout=STEP_S * 2)
        return proc.returncode, err.decode()

    def read_log(self):
        with open(self.log, 'rb') as f:
            return f.read()

    def log_size(self):
        """Bytes capture wrote so far (0 before it created the log)."""
        try:
            return os.path.getsize(self.log)
        except FileNotFoundError:
            return 0

    def test_key_after_ready_then_stops_after_dump(self):
        proc = self.start('--key', 'd', '--until-dump', '--timeout', '30')
        self.pty.write(BOOT_NOISE)
        self.assertEqual(self.pty.read_keys(1, timeout=0.5), b'', 'key sent before READY')
        self.pty.write(READY)
        self.assertEqual(self.pty.read_keys(1), b'd')
        self.pty.write(self.dump)
        rc, err = self.finish(proc)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.read_log(), BOOT_NOISE + READY + self.dump)
        self.assertRegex(err, r'dump ended: \d+ events')
        self.assertNotIn('Traceback', err)
        r = subprocess.run([sys.executable, DECODE, self.log], capture_output=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_keys_in_order_and_hex_bytes(self):
        proc = self.start('--key', 'c', '--key', '0x0d', '--key', 'd', '--timeout', '60')
        self.pty.write(READY)
        self.assertEqual(self.pty.read_keys(3), b'c\rd')
        proc.send_signal(signal.SIGINT)
        self.finish(proc)

    def test_delay_holds_the_keys_back(self):
        proc = self.start('--key', 'd', '--delay', '1', '--timeout', '10')
        self.pty.write(READY)
        started = time.monotonic()
        self.assertEqual(self.pty.read_keys(1), b'd')
        self.assertGreaterEqual(time.monotonic() - started, 0.9)
        proc.send_signal(signal.SIGINT)
        self.finish(proc)

    def test_no_wait_ready_sends_at_once(self):
        proc = self.start('--key', 'd', '--no-wait-ready', '--timeout', '60')
        self.assertEqual(self.pty.read_keys(1), b'd')
        proc.send_signal(signal.SIGINT)
        self.finish(proc)

    def test_dump_before_the_keys_does_not_end_it(self):
        proc = self.start('--key', 'd', '--until-dump', '--timeout', '30')
        self.pty.write(self.dump)             # e.g. a dump from before a reboot
        self.pty.write(READY)
        self.assertEqual(self.pty.read_keys(1), b'd')
        time.sleep(0.3)
        self.assertIsNone(proc.poll(), 'stopped after a dump begun before the key')
        self.pty.write(self.dump)
        rc, err = self.finish(proc)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.read_log(), self.dump + READY + self.dump)

    def test_timeout_without_until_dump_is_success(self):
        proc = self.start('--timeout', '0.5')
        self.pty.write(BOOT_NOISE)
        rc, err = self.finish(proc)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.read_log(), BOOT_NOISE)

    def test_timeout_before_dump_exits_3(self):
        proc = self.start('--key', 'd', '--until-dump', '--timeout', '1')
        half = self.dump[:len(self.dump) // 2]
        self.pty.write(READY)
        self.pty.read_keys(1)
        self.pty.write(half)
        rc, err = self.finish(proc)
        self.assertEqual(rc, 3, err)
        self.assertIn('a dump was still streaming', err)
        self.assertEqual(self.read_log(), READY + half)

    def test_timeout_without_ready_says_so(self):
        proc = self.start('--key', 'd', '--until-dump', '--timeout', '0.5')
        rc, err = self.finish(proc)
        self.assertEqual(rc, 3)
        self.assertIn('READY line never came', err)

    def test_port_closing_ends_capture(self):
        proc = self.start('--until-dump', '--key', 'd', '--timeout', '30')
        self.pty.write(READY)
        self.pty.read_keys(1)
        self.pty.write(BOOT_NOISE)
        time.sleep(0.2)
        os.close(self.pty.master)             # the adapter is unplugged
        rc, err = self.finish(proc)
        self.assertEqual(rc, 3, err)
        self.assertIn('port closed before a complete dump', err)
        self.assertEqual(self.read_log(), READY + BOOT_NOISE)

    def test_ctrl_c_leaves_flushed_log_and_exits_130(self):
        proc = self.start('--timeout', '30')
        self.pty.write(BOOT_NOISE + READY)
        deadline = time.monotonic() + STEP_S
        while self.log_size() < len(BOOT_NOISE + READY) and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        rc, err = self.finish(proc)
        self.assertEqual(rc, 130)
        self.assertEqual(err.strip().splitlines(), [f'capture: interrupted; log saved to {self.log}'])
        self.assertEqual(self.read_log(), BOOT_NOISE + READY)

    def test_sigterm_also_leaves_the_log_and_exits_143(self):
        proc = self.start('--timeout', '30')
        self.pty.write(READY)
        deadline = time.monotonic() + STEP_S
        while self.log_size() < len(READY) and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.terminate()
        rc, err = self.finish(proc)
        self.assertEqual(rc, 143)
        self.assertIn('terminated; log saved', err)
        self.assertEqual(self.read_log(), READY)

    def test_progress_goes_to_a_terminal_never_to_the_log(self):
        err_master, err_slave = os.openpty()
        self.addCleanup(os.close, err_master)
        proc = self.start('--key', 'd', '--until-dump', '--timeout', '30', stderr=err_slave)
        os.close(err_slave)
        self.pty.write(READY)
        self.assertEqual(self.pty.read_keys(1), b'd')
        # stream slowly so the progress line gets drawn
        for i in range(0, len(self.dump), 512):
            self.pty.write(self.dump[i:i + 512])
            time.sleep(0.01)
        shown = b''
        while proc.poll() is None or select.select([err_master], [], [], 0.1)[0]:
            try:
                shown += os.read(err_master, 4096)
            except OSError:
                break
        proc.wait(STEP_S)
        self.assertEqual(proc.returncode, 0, shown)
        self.assertRegex(shown, rb'dump: \d+/\d+ events .*/s  ETA')
        self.assertEqual(self.read_log(), READY + self.dump)

    def test_busy_port_is_refused(self):
        holder = os.open(self.pty.path, os.O_RDWR | os.O_NOCTTY)
        self.addCleanup(os.close, holder)
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = run_capture('--port', self.pty.path, '-o', self.log, '--timeout', '1')
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn('port busy', r.stderr)


class CaptureErrorsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='bt-capture-')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.log = os.path.join(self.tmp, 'run.log')

    def assertOneLineError(self, r, words, status=1):
        self.assertEqual(r.returncode, status, r.stderr)
        self.assertNotIn('Traceback', r.stderr)
        self.assertIn(words, r.stderr)
        if status == 1:
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_no_such_port(self):
        self.assertOneLineError(run_capture('--port', '/dev/ttyNOPE9', '-o', self.log),
                                'no such serial port')

    def test_not_a_terminal(self):
        self.assertOneLineError(run_capture('--port', '/dev/null', '-o', self.log),
                                'not a serial port')

    def test_log_not_writable(self):
        pty = Pty()
        self.addCleanup(pty.close)
        self.assertOneLineError(
            run_capture('--port', pty.path, '-o', os.path.join(self.tmp, 'no', 'dir.log')),
            'cannot write')

    def test_bad_values_are_usage_errors(self):
        for args in (['--key', 'dd'], ['--key', '0xZZ'], ['--timeout', '-1'],
                     ['--timeout', 'nan'], ['--delay', '-2'], ['--baud', '12345'],
                     ['--smp', '4'], ['--qemu', '--smp', '0']):
            with self.subTest(args=args):
                self.assertOneLineError(
                    run_capture('--port', '/dev/null', '-o', self.log, *args), '', status=2)

    def test_qemu_with_missing_iso(self):
        r = run_capture('--qemu', '--iso', os.path.join(self.tmp, 'none.iso'), '-o', self.log)
        self.assertOneLineError(r, 'not found')


class CaptureKeepsOldLogTest(unittest.TestCase):
    """-o names yesterday's capture: a failed start must not cost a byte of it."""

    OLD = b'DUMP BEGIN yesterday\r\n' * 100

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='bt-capture-')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.log = os.path.join(self.tmp, 'run.log')
        with open(self.log, 'wb') as f:
            f.write(self.OLD)

    def assertLogIs(self, data):
        with open(self.log, 'rb') as f:
            self.assertEqual(f.read(), data)

    def test_bad_port_keeps_the_log(self):
        for port in ('/dev/ttyNOPE9', '/dev/null'):
            with self.subTest(port=port):
                r = run_capture('--port', port, '-o', self.log, '--timeout', '1')
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertLogIs(self.OLD)

    def test_busy_port_keeps_the_log(self):
        pty = Pty()
        self.addCleanup(pty.close)
        holder = os.open(pty.path, os.O_RDWR | os.O_NOCTTY)
        self.addCleanup(os.close, holder)
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = run_capture('--port', pty.path, '-o', self.log, '--timeout', '1')
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLogIs(self.OLD)

    def test_qemu_that_cannot_start_keeps_the_log(self):
        r = run_capture('--qemu', '--iso', os.path.join(self.tmp, 'none.iso'), '-o', self.log)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLogIs(self.OLD)

    def test_silent_port_keeps_the_log_and_says_so(self):
        pty = Pty()
        self.addCleanup(pty.close)
        r = run_capture('--port', pty.path, '-o', self.log, '--timeout', '0.5')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('nothing arrived', r.stderr)
        self.assertLogIs(self.OLD)

    def test_first_byte_replaces_the_log(self):
        pty = Pty()
        self.addCleanup(pty.close)
        proc = subprocess.Popen([sys.executable, CAPTURE, '--port', pty.path, '-o', self.log,
                                 '--timeout', '1.5'], stderr=subprocess.PIPE)
        self.addCleanup(_reap, proc)
        time.sleep(0.5)
        pty.write(READY)
        _, err = proc.communicate(timeout=STEP_S * 2)
        self.assertEqual(proc.returncode, 0, err)
        self.assertLogIs(READY)

    def test_append_keeps_the_old_bytes(self):
        pty = Pty()
        self.addCleanup(pty.close)
        proc = subprocess.Popen([sys.executable, CAPTURE, '--port', pty.path, '-o', self.log,
                                 '--append', '--timeout', '1.5'], stderr=subprocess.PIPE)
        self.addCleanup(_reap, proc)
        time.sleep(0.5)
        pty.write(READY)
        _, err = proc.communicate(timeout=STEP_S * 2)
        self.assertEqual(proc.returncode, 0, err)
        self.assertLogIs(self.OLD + READY)


def run_capture(*args, timeout=60):
    return subprocess.run([sys.executable, CAPTURE, *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _reap(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait()


if __name__ == '__main__':
    unittest.main()
