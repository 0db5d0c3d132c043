"""btlib.dump.ready: the READY line found and read, rule by rule, and the
console watch keeping its rule.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_ready_line.py'
"""

import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))

from btlib.capture.consolewatch import ConsoleWatch
from btlib.dump import ready

# The kernel's line as README shows it.
KERNEL = (b'READY cpus=16 found=16 max=1024 parked=0 failed=0 tsc_hz=1999999800 '
          b'tsc_src=hpet invariant_tsc=0 tsc_warp=0 x2apic=0 timer_hz=100 fw=bios '
          b'console=ttyS0 prev_events=0 net=e1000:00:03.0 ip=10.0.2.15')


class Parse(unittest.TestCase):
    def test_the_kernels_fields(self):
        fields = ready.parse(KERNEL[len(ready.WORD):])
        self.assertEqual(fields['cpus'], '16')
        self.assertEqual(fields['net'], 'e1000:00:03.0')
        self.assertEqual(fields['ip'], '10.0.2.15')
        self.assertEqual(len(fields), 16)

    def test_str_and_bytes_alike_and_odd_items(self):
        text = 'cpus=2 lonely a=b=c empty= fw=uefi\r'
        want = {'cpus': '2', 'a': 'b=c', 'empty': '', 'fw': 'uefi'}
        self.assertEqual(ready.parse(text), want)
        self.assertEqual(ready.parse(text.encode()), want)

    def test_bad_bytes_do_not_raise(self):
        self.assertEqual(ready.parse(b'cpus=\xff2'), {'cpus': '\ufffd2'})


class Line(unittest.TestCase):
    """LINE: a whole READY line in a byte stream, at a line's start."""

    def test_at_the_start_and_after_each_line_end(self):
        for before in (b'', b'smp: 2 CPUs\n', b'smp: 2 CPUs\r\n', b'smp: 2 CPUs\r'):
            with self.subTest(before=before):
                m = ready.LINE.search(before + KERNEL + b'\r\n')
                self.assertIsNotNone(m)
                self.assertEqual(m.start(), len(before))
                self.assertEqual(ready.parse(m.group(1))['fw'], 'bios')

    def test_a_partial_line_waits_for_its_end(self):
        data = b'boot\r\n' + KERNEL
        self.assertIsNone(ready.LINE.search(data))
        self.assertIsNone(ready.find(data[:-7]))
        self.assertEqual(ready.find(data + b'\n')['ip'], '10.0.2.15')

    def test_not_inside_other_text(self):
        for data in (b'NOT READY cpus=1\r\n', b'\x1b[0mREADY cpus=1\r\n', b'xREADY cpus=1\n',
                     b'READYcpus=1\n', b'ready cpus=1\n'):
            with self.subTest(data=data):
                self.assertIsNone(ready.LINE.search(data))

    def test_searched_from_a_position(self):
        data = b'abc\n' + KERNEL + b'\n'
        self.assertIsNotNone(ready.LINE.search(data, 4))     # data[3] is the line end
        self.assertIsNone(ready.LINE.search(b'ab ' + KERNEL + b'\n', 3))
        self.assertIsNone(ready.find(data, 5))


class Starts(unittest.TestCase):
    """STARTS: a READY line's start is enough (network datagrams cut lines)."""

    def test_a_cut_line_counts(self):
        self.assertTrue(ready.STARTS.search(b'smp: 2\nREADY cpus='))
        self.assertTrue(ready.STARTS.search(b'READY '))

    def test_only_at_a_line_start(self):
        self.assertFalse(ready.STARTS.search(b'smp: NOT READY yet\n'))
        self.assertFalse(ready.STARTS.search(b'READY\n'))


class InLineAndBoot(unittest.TestCase):
    def test_in_line_is_any_word_not_inside_a_word(self):
        for line, found in ((KERNEL, True), (b'] READY cpus=1', True), (b']READY x', True),
                            (b'NOTREADY cpus=1', False), (b'_READY x', False),
                            (b'READY', False)):
            with self.subTest(line=line):
                self.assertEqual(bool(ready.IN_LINE.search(line)), found)

    def test_boot_wants_white_space_before_and_the_cpus_field(self):
        for line, found in ((KERNEL, True), (b'booted READY cpus=1', True),
                            (b'READY fw=bios', False), (b']READY cpus=1', False),
                            (b'NOTREADY cpus=1', False)):
            with self.subTest(line=line):
                self.assertEqual(bool(ready.BOOT.search(line)), found)


class Users(unittest.TestCase):
    def test_console_watch_sees_ready_once_the_line_is_whole(self):
        w = ConsoleWatch()
        self.assertEqual(w.feed(b'\x1b[2J\x1b[0m' + KERNEL[:20]), [])
        self.assertEqual(w.feed(KERNEL[20:] + b'\r\n'), ['ready'])
        self.assertEqual(w.feed(b'GRUB\x1b[0m' + KERNEL + b'\r\n'), [])   # inside a word
        self.assertEqual(w.feed(b'keys: NOTREADY here\r\n'), [])


if __name__ == '__main__':
    unittest.main()
