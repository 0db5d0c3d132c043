"""btlib.qemu.session: the parts of a QEMU session that need no QEMU.

A socketpair plays COM1's socket (Session.follow reads it as start() reads
QEMU's) and a shell plays a QEMU that exits; the boot tests (test/boot,
all through harness.Machine), capture --qemu and bench run the rest.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_qemu_session.py'
"""

import os
import socket
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))

from btlib.capture.serialport import PortClosed
from btlib.qemu import launch, session

KERNEL_READY = b'READY cpus=2 found=2 max=16 parked=0 failed=0 fw=bios console=ttyS0\r\n'


class Line(unittest.TestCase):
    """A Session following one end of a socketpair; the test holds the other."""

    def open(self, keep=True):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.log_path = os.path.join(tmp.name, 'serial.log')
        log = open(self.log_path, 'wb')
        self.addCleanup(log.close)
        s = session.Session(launch.Options(iso='none.iso'), name='t', log=log, keep=keep)
        ours, theirs = socket.socketpair()
        self.addCleanup(theirs.close)
        s.follow(ours)
        self.addCleanup(s.stop)
        return s, theirs

    def test_every_byte_kept_and_logged_in_order(self):
        s, guest = self.open()
        chunks = [b'SeaBIOS\r\n', b'\x1b[2J', b'smp: 2 CPUs\r', b'\n' + KERNEL_READY]
        for c in chunks:
            guest.sendall(c)
        self.assertEqual(s.ready(10)['console'], 'ttyS0')
        self.assertEqual(s.output(), b''.join(chunks))
        guest.close()
        s.stop()
        with open(self.log_path, 'rb') as f:
            self.assertEqual(f.read(), b''.join(chunks))

    def test_waits_go_on_from_the_last_match(self):
        s, guest = self.open()
        guest.sendall(b'a 1\na 2\nb\n')
        self.assertEqual(s.wait_for(rb'^a (\d)', 10).group(1), b'1')
        self.assertEqual(s.wait_for(rb'^a (\d)', 10).group(1), b'2')
        self.assertEqual(s.wait_for(rb'^a (\d)', 10, start=0).group(1), b'1')

    def test_a_timeout_names_what_and_shows_the_tail(self):
        s, guest = self.open()
        guest.sendall(b'\x1b[0mfirst line\r\nlast words of the guest\r\n')
        s.wait_for(rb'guest', 10)
        with self.assertRaises(launch.QemuError) as cm:
            s.wait_for(rb'^DUMP END', 0.2, what='the dump\'s end')
        msg = str(cm.exception)
        self.assertIn("no the dump's end within 0 s", msg)
        self.assertIn('last words of the guest', msg)
        self.assertNotIn('\x1b', msg)
        with self.assertRaises(launch.QemuError) as cm:
            s.wait_for(rb'^nothing$', 0.1)
        self.assertIn('/^nothing$/', str(cm.exception))

    def test_the_line_ending_fails_a_wait_at_once(self):
        s, guest = self.open()
        guest.sendall(b'half a li')
        guest.close()
        with self.assertRaises(launch.QemuError) as cm:
            s.wait_for(rb'line\n', 600, what='a whole line')
        self.assertIn('serial closed before a whole line appeared', str(cm.exception))

    def test_a_match_across_reads_after_megabytes(self):
        s, guest = self.open()
        filler = (b'%E ' + b'x' * 97 + b'\r\n') * 20000         # 2 MB of dump lines
        guest.sendall(filler + b'DUMP E')
        s.wait_for(rb'DUMP E', 30)
        guest.sendall(b'ND dump=0 events=5 *0\r\n')
        m = s.wait_for(rb'^DUMP END [^\r\n]*\r?\n', 30, start=0)
        self.assertEqual(m.start(), len(filler))

    def test_line_anchors_respect_the_start(self):
        s, guest = self.open()
        guest.sendall(b'xxab\nab\n')
        s.wait_for(rb'ab\n', 10, start=0)
        self.assertEqual(s.search(rb'^ab', 2).start(), 5)
        self.assertIsNone(s.search(rb'^ab', 6))

    def test_read_hands_out_each_byte_once(self):
        for keep in (True, False):
            with self.subTest(keep=keep):
                s, guest = self.open(keep)
                guest.sendall(b'one ')
                got = s.read(10)
                guest.sendall(b'two')
                while not got.endswith(b'two'):
                    got += s.read(10)
                self.assertEqual(got, b'one two')
                self.assertEqual(s.output(), b'one two' if keep else b'')
                self.assertEqual(s.read(0.05), b'')
                guest.close()
                with self.assertRaises(PortClosed):
                    while True:
                        s.read(10)

    def test_send_reaches_the_guest(self):
        s, guest = self.open()
        s.send(b'd')
        s.write(b'\x1bq')
        s.send('7')
        guest.settimeout(10)
        got = b''
        while len(got) < 4:
            got += guest.recv(16)
        self.assertEqual(got, b'd\x1bq7')

    def test_stop_ends_the_reader_while_the_line_is_open(self):
        s, guest = self.open()
        s.stop()
        self.assertFalse(s.reader.is_alive())
        self.assertTrue(s.closed)
        s.stop()                                     # again: nothing to do


class Exits(unittest.TestCase):
    """exit_reason(): QEMU's own error, or the guest leaving by the exit port."""

    def exited(self, said, status):
        s = session.Session(launch.Options(iso='none.iso'))
        s.messages = tempfile.TemporaryFile('w+b')
        self.addCleanup(s.messages.close)
        s.proc = subprocess.Popen(['sh', '-c', f'printf "{said}" >&2; exit {status}'],
                                  stderr=s.messages)
        return s.exit_reason()

    def test_qemus_error_is_a_failure(self):
        said = ("QEMU waiting for connection on: disconnected:unix:/tmp/x/serial,server=on\\n"
                "qemu-system-x86_64: Invalid SMP CPUs 0\\n")
        self.assertEqual(self.exited(said, 1),
                         ('QEMU failed: qemu-system-x86_64: Invalid SMP CPUs 0', True))

    def test_the_guest_writing_0_is_no_failure_despite_the_sockets_chatter(self):
        said = "QEMU waiting for connection on: disconnected:unix:/tmp/x/serial,server=on\\n"
        what, failed = self.exited(said, 1)
        self.assertFalse(failed, what)
        self.assertIn('guest exited via port 0xf4 with value 0', what)

    def test_the_guest_writing_2(self):
        self.assertEqual(self.exited('', 5),
                         ('QEMU exited (guest exited via port 0xf4 with value 2)', False))


if __name__ == '__main__':
    unittest.main()
