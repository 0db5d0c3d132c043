"""The host tools on input they must not trust (found in issue 21), each
by its shortest repro.

1. a file that is no log (zeros, a sparse file, /dev/zero) is read in
   bounded memory and refused quickly;
2. report's stress check judges the dump reported, and transit damage is
   damage (exit 4), not a kernel failure;
3. every v1 decode says, in one warning line, that v1 has no dump identity;
4. a repeated DUMP END line is a duplicate, not a phantom dump;
5. a truncated stick image is said to be truncated, and the dumps it still
   holds are read;
6. the smaller ones: decode --help names sticks and images; the loss table
   folds identical rows; --list tells dumps apart and a replayed older dump
   is not the default; v1's signed arguments print signed; capture says when
   the line dies mid-dump; mkusb's messages for a directory and a
   loop-device image; bench says what it is about to do.

Each test failed on the code before the fix (issue 21's report).
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_decode_support import DECODE, FIXTURES, REPO, TempDirTest, decode
from test_stick_image import FIRST, ID, SECTOR, fixture_dumps, gen_stick, gpt_table

PYTHON = '/usr/bin/python3' if os.access('/usr/bin/python3', os.X_OK) else sys.executable
REPORT = os.path.join(REPO, 'scripts', 'report')
MKUSB = os.path.join(REPO, 'scripts', 'mkusb')
BENCH = os.path.join(REPO, 'scripts', 'bench')
MEMORY_CAP = 400 << 20            # address space for a decode of a file of any size


def fixture(name):
    with open(os.path.join(FIXTURES, name), 'rb') as f:
        return f.read()


def capped_decode(*args, timeout=20):
    """decode under `ulimit -v` MEMORY_CAP: a read of the whole input fails."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    r = subprocess.run([PYTHON, DECODE, *args], capture_output=True, text=True,
                       timeout=timeout, preexec_fn=cap)
    return r


class Tmp(TempDirTest):
    def path(self, name):
        return os.path.join(self.tmp, name)


class BoundedInput(Tmp):
    """Finding 1: zeros are no log; any file is read a chunk at a time."""

    def test_a_log_ending_in_a_lone_cr_is_whole(self):
        # capture can stop right after DUMP END's CR, before its LF: the
        # chunked reader held that CR back for a CR LF and gave it to the
        # last line, whose CRC then failed ("DUMP END line damaged").
        lf = fixture('v2-two-boots.log').replace(b'\r\n', b'\n').rstrip(b'\n')
        text = lf.replace(b'\n', b'\r\n') + b'\r'
        r = decode(self.write('cr.log', text), '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = r.stdout.decode().splitlines()[1:]
        self.assertEqual([row.split()[1] for row in rows], ['complete'] * 3, r.stdout)

    def test_sparse_file_without_partition_table_is_refused_quickly(self):
        img = self.path('z.img')
        with open(img, 'wb') as f:
            f.truncate(4 << 30)                       # 4 GiB of zeros, no table
        r = capped_decode(img, '--list')
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('is no serial log', r.stderr)
        self.assertNotIn('Traceback', r.stderr)

    def test_dev_zero_ends(self):
        r = capped_decode('/dev/zero')
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('is no serial log', r.stderr)

    def test_dumps_before_binary_tail_still_decode(self):
        log = fixture('v2-two-boots.log') + b'\0' * (20 << 20)
        r = capped_decode(self.write('tail.log', log), '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 4, r.stdout)
        self.assertIn(f'skipped {20 << 20} bytes without a line end at byte {len(log) - (20 << 20)}',
                      r.stderr)

    def test_log_with_zeros_between_lines_in_chunks(self):
        """A log read in many chunks (CR LF split across them) gives the same dumps."""
        sys.path.insert(0, os.path.join(REPO, 'scripts'))
        import io
        from btlib.dump import dumplog
        data = fixture('uefi-usb-two-dumps.log')
        whole = dumplog.parse_log(data)
        for chunk in (1, 7, 4096):
            old = dumplog.CHUNK
            dumplog.CHUNK = chunk
            try:
                parts = dumplog.parse_batches(dumplog.LogReader(io.BytesIO(data)))
            finally:
                dumplog.CHUNK = old
            self.assertEqual([(d.complete, d.end_events, d.damaged_lines, d.noise_lines)
                              for d in parts],
                             [(d.complete, d.end_events, d.damaged_lines, d.noise_lines)
                              for d in whole], chunk)


class StressJudgesOneDump(Tmp):
    """Finding 2: one line lost in another dump is not a kernel failure."""

    def setUp(self):
        super().setUp()
        lines = fixture('stress-2cpu.log').split(b'\n')
        del lines[59]                                   # awk 'NR!=60': a line of dump 0
        self.log = self.write('sd.log', b'\n'.join(lines))

    def test_damage_elsewhere_does_not_fail_the_dump_reported(self):
        r = subprocess.run([PYTHON, REPORT, self.log], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn('FAILED', r.stdout)

    def test_damage_in_the_dump_reported_is_damage(self):
        r = subprocess.run([PYTHON, REPORT, self.log, '--dump', '0'], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
        self.assertNotIn('FAILED', r.stdout)
        self.assertIn('lost in transit', r.stdout)
        self.assertIn('dump 0 is damaged', r.stderr)


class V1Identity(Tmp):
    """Finding 3: a v1 dump can be completed by another boot's line: say so."""

    def test_every_v1_decode_warns_once(self):
        bios = fixture('bios-cd-16cpu.log').split(b'\n')
        wrapped = fixture('wrapped-64.log').split(b'\n')
        spliced = bios[:46] + [wrapped[52]] + bios[47:]
        r = decode(self.write('v1.log', b'\n'.join(spliced)), '-f', 'csv',
                   '-o', self.path('x'))
        self.assertEqual(r.stderr.count('v1 has no dump identity'), 1, r.stderr)
        r = decode(os.path.join(FIXTURES, 'wrapped-64.log'), '-o', self.path('y'))
        self.assertEqual(r.stderr.count('v1 has no dump identity'), 1, r.stderr)

    def test_v2_decode_does_not(self):
        r = decode(os.path.join(FIXTURES, 'v2-two-boots.log'), '-o', self.path('y'))
        self.assertNotIn('no dump identity', r.stderr)


class RepeatedDumpEnd(Tmp):
    """Finding 4: DUMP END twice is one dump, with no "everything was lost"."""

    def test_repeated_end_is_a_duplicate(self):
        lines = []
        for line in fixture('v2-two-boots.log').split(b'\n'):
            lines.append(line)
            if line.startswith(b'DUMP END'):
                lines.append(line)
        log = self.write('de.log', b'\n'.join(lines))
        r = decode(log, '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = r.stdout.decode().splitlines()[1:]
        self.assertEqual(len(rows), 3, rows)
        self.assertTrue(all(' complete ' in row for row in rows), rows)
        r = decode(log, '-o', self.path('out'))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn('everything before it was lost', r.stderr)
        self.assertIn('DUMP END arrived twice', r.stderr)


class TruncatedImage(Tmp):
    """Finding 5: a stick image cut short keeps the dumps it still holds."""

    def image(self, dumps, area=2048):
        disk = FIRST + area + 40
        img = bytearray(disk * SECTOR)
        t = gpt_table(disk, FIRST, area)
        img[:len(t)] = t
        gen_stick('--format', self.path('area'), area, ID)
        with open(self.path('area'), 'rb') as f:
            img[FIRST * SECTOR:(FIRST + area) * SECTOR] = f.read()
        path = self.write('stick.img', bytes(img))
        files = [self.write(f'd{i}.txt', d) for i, d in enumerate(dumps)]
        gen_stick(path, ID, *files)
        with open(path, 'rb') as f:
            return f.read()

    def test_truncated_inside_the_area_reads_the_whole_dumps(self):
        dumps = fixture_dumps('uefi-usb-two-dumps.log')
        img = self.image(dumps)
        cut = (FIRST + 2 + len(dumps[0]) // SECTOR + 1) * SECTOR + 1000   # in dump 1's text
        r = decode(self.write('tr.img', img[:cut]), '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('truncated', r.stderr)
        self.assertIn('the image is truncated: it ends inside GPT partition', r.stderr)
        self.assertEqual(len(r.stdout.decode().splitlines()), 2, r.stdout)   # dump 0 only

    def test_truncated_before_the_area_says_so(self):
        img = self.image(fixture_dumps('wrapped-64.log'))
        r = decode(self.write('tr.img', img[:(FIRST - 10) * SECTOR]), '--list')
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('truncated', r.stderr)
        self.assertNotIn("no partition of the dump area's type", r.stderr)


class SmallFindings(Tmp):
    """Finding 6."""

    def test_decode_help_names_sticks_and_images(self):
        r = decode('--help')
        self.assertEqual(r.returncode, 0)
        text = r.stdout.decode()
        self.assertIn('/dev/sdX', text)
        self.assertIn('image', text)

    def test_v1_signed_arguments_print_signed(self):
        r = decode(os.path.join(FIXTURES, 'workloads-4cpu.log'), '-f', 'csv')
        self.assertIn(b'latency_tsc=-', r.stdout)
        self.assertNotIn(b'latency_tsc=1844674407', r.stdout)

    def test_loss_table_folds_identical_rows(self):
        from test_decode_support import generate, loss_table
        log, _ = generate('cpus=8', 'events=900', 'cap=512')
        r = decode(self.write('g8.log', log), '-o', self.path('out'))
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = r.stderr[r.stderr.index('events missing per CPU'):].splitlines()[2:-1]
        self.assertLess(len([x for x in rows if 'worst' not in x]), 8, r.stderr)
        self.assertEqual(sorted(loss_table(r.stderr)), list(range(8)))

    def test_list_tells_dumps_apart_and_replay_is_not_default(self):
        log = fixture('v2-two-boots.log')
        first = log[log.index(b'DUMP BEGIN'):log.index(b'\n', log.index(b'DUMP END')) + 1]
        path = self.write('rp.log', log + first)            # the first dump, captured again
        r = decode(path, '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertEqual(lines[0].split()[-4:], ['DUMP', 'NONCE', 'REPEATS', 'NETWORK'])
        self.assertIn('793ED942686274B5', lines[1])
        self.assertEqual(lines[4].split()[-3:], ['of', '0', '-'], lines[4])
        r = decode(path, '-f', 'csv')
        self.assertIn('dump 2 of 4', r.stderr)
        self.assertIn('dump 3 repeats an older dump', r.stderr)

    def test_bench_says_what_it_will_do(self):
        proc = subprocess.Popen([PYTHON, BENCH], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            first = proc.stderr.readline().decode()
        finally:
            os.killpg(proc.pid, 9)
            proc.wait()
        self.assertIn('about to run', first)
        self.assertIn('minutes', first)

    def test_mkusb_directory_target(self):
        iso = self.write('a.iso', b'\x55\xaa' * 512)
        os.mkdir(self.path('d'))
        r = subprocess.run([PYTHON, MKUSB, iso, self.path('d')], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn('is a directory', r.stderr)
        self.assertNotIn('not a block device', r.stderr)

    def test_mkusb_image_on_a_loop_device(self):
        iso = self.write('a.iso', os.urandom(1 << 20))
        r = subprocess.run(['losetup', '--find', '--show', '--read-only', iso],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            self.skipTest(f'losetup not permitted here: {r.stderr.strip()}')
        loop = r.stdout.strip()
        try:
            out = self.path('out.img')
            r = subprocess.run([PYTHON, MKUSB, loop, out, '--allow-file', '--yes'],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn('is empty', r.stderr)
            with open(out, 'rb') as a, open(iso, 'rb') as b:
                self.assertEqual(a.read(), b.read())
        finally:
            subprocess.run(['losetup', '-d', loop], capture_output=True, timeout=30)


class CaptureDeadLine(unittest.TestCase):
    """Finding 6: the line dies mid-dump: capture says so instead of waiting
    without a word."""

    def test_silence_mid_dump_is_reported(self):
        from test_capture import CAPTURE, READY, Pty, gen_dump, _reap
        pty = Pty()
        self.addCleanup(pty.close)
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.Popen([sys.executable, CAPTURE, '--port', pty.path, '-o',
                                     os.path.join(tmp, 'run.log'), '--key', 'd',
                                     '--until-dump', '--stall', '0.5', '--timeout', '3'],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            self.addCleanup(_reap, proc)
            dump = gen_dump('cpus=2', 'events=600', 'cap=512', 'noise=0')
            time.sleep(0.5)
            pty.write(READY)
            pty.read_keys(1)
            pty.write(dump[:len(dump) // 2])          # then the cable is pulled
            _, err = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 3, err)
        self.assertIn(b'in the middle of a dump', err)
        self.assertIn(b'the line may have died', err)


if __name__ == '__main__':
    unittest.main()


class ExportProgress(unittest.TestCase):
    """Finding 6: a long decode showed no progress while it wrote. On a
    terminal a line now says what the export has written, and for how
    long; anywhere else nothing is added."""

    class Tty:
        def __init__(self):
            self.text = ''

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    def test_progress_line_while_writing(self):
        from btlib.util.progress import WriteProgress
        tty, written = self.Tty(), [0]

        def size():
            written[0] += 3 << 20
            return written[0]
        with WriteProgress('decode: writing csv to out.csv', size, stream=tty, interval=0.02):
            time.sleep(0.2)
        self.assertRegex(tty.text, r'decode: writing csv to out\.csv: \d+\.\d MiB in \d+ s')
        self.assertTrue(tty.text.endswith('\r\033[K'), 'the line is cleared at the end')

    def test_nothing_when_not_a_terminal(self):
        from btlib.util.progress import WriteProgress

        class Pipe(self.Tty):
            def isatty(self):
                return False
        pipe = Pipe()
        with WriteProgress('decode: writing csv to out.csv', lambda: 1, stream=pipe,
                           interval=0.01):
            time.sleep(0.05)
        self.assertEqual(pipe.text, '')

    def test_decode_on_a_terminal(self):
        # The real command, its stderr on a pty: the line shows from the start.
        import pty
        gen = os.path.join(REPO, 'build', 'tools', 'gen_dump')
        with tempfile.TemporaryDirectory() as tmp:
            log, out = os.path.join(tmp, 'big.log'), os.path.join(tmp, 'out.csv')
            with open(log, 'wb') as f:
                subprocess.run([gen, 'cpus=16', 'events=16384', 'cap=16384', 'noise=0'],
                               stdout=f, check=True, timeout=120)
            master, slave = pty.openpty()
            proc = subprocess.Popen([sys.executable, DECODE, log, '-f', 'csv', '-o', out],
                                    stderr=slave, stdout=subprocess.DEVNULL)
            os.close(slave)
            got = b''
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                got += chunk
            proc.wait(timeout=120)
            os.close(master)
            self.assertEqual(proc.returncode, 0, got[-2000:])
            self.assertIn(b'decode: writing csv to ' + out.encode(), got)
