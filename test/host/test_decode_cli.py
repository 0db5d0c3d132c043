"""scripts/decode as a user runs it: options, exit codes, damage, formats.

Logs come from build/tools/gen_dump (real rings, the real encoder) with the
records the dump must hold, so every check is exact: intact logs decode
to exactly those records; damaged ones decode to a subset, every missing
one is reported on stderr, and no event is ever wrong.
"""

import collections
import json
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode_support import (BABELTRACE, DECODE, RECORD, TempDirTest,
                                 babeltrace_cycles, csv_records, decode, generate,
                                 loss_table, slices_nest)

SMALL = ('cpus=4', 'events=900', 'cap=512')      # wraps; decodes in well under a second


def event_lines(log):
    lines = log.split(b'\n')
    return lines, [i for i, ln in enumerate(lines) if ln.startswith(b'%E')]


class IntactTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.log, cls.expected = generate(*SMALL)

    def setUp(self):
        super().setUp()
        self.path = self.write('run.log', self.log)

    def test_csv_holds_exactly_the_dump(self):
        r = decode(self.path, '-f', 'csv')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(collections.Counter(csv_records(r.stdout)),
                         collections.Counter(self.expected))
        self.assertIn('dump 0: complete, 4 CPUs', r.stderr)
        self.assertIn('worst cross-CPU TSC warp', r.stderr)
        # the wrapped rings are reported per CPU, as overwritten
        table = loss_table(r.stderr)
        self.assertEqual(sorted(table), [0, 1, 2, 3])
        self.assertTrue(all(t['OVERWRITTEN'] > 0 and t['DAMAGED'] == 0 for t in table.values()))

    def test_csv_rows_are_in_time_order_with_ns(self):
        r = decode(self.path, '-f', 'csv')
        rows = r.stdout.decode().splitlines()
        self.assertEqual(rows[0], 'cpu,seq,tsc,ns,type,name,flags,a0,a1,args')
        cells = [row.split(',') for row in rows[1:]]
        tscs = [int(c[2]) for c in cells]
        self.assertEqual(tscs, sorted(tscs))
        self.assertEqual(int(cells[0][3]), 0)
        hz = 2_400_000_000
        self.assertEqual(int(cells[-1][3]), (tscs[-1] - tscs[0]) * 10**9 // hz)

    def test_text_is_the_default_and_aligned(self):
        r = decode(self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertEqual(lines[1].split(), ['TIME_US', 'CPU', 'EVENT', 'ARGS'])
        body = [ln for ln in lines[2:] if '*LOST*' not in ln]
        self.assertEqual(len(body), len(self.expected))
        self.assertIn('BOOT_PHASE', lines[2])
        self.assertIn('phase=ENTRY', lines[2])
        self.assertRegex(r.stdout.decode(), r'IRQ_TIMER_BEGIN +tick=\d+ lateness_tsc=\d+')
        starts = {len(ln) - len(ln.lstrip()) + len(ln.split()[0]) for ln in body}
        self.assertEqual(len(starts), 1, 'time column not right-aligned')

    def test_stdin_and_output_file(self):
        out = os.path.join(self.tmp, 'out.csv')
        r = decode('-', '-f', 'csv', '-o', out, stdin=self.log)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b'')
        with open(out, 'rb') as f:
            self.assertEqual(len(csv_records(f.read())), len(self.expected))

    def test_json_tracks_and_nesting(self):
        r = decode(self.path, '-f', 'json')
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = json.loads(r.stdout)
        ev = trace['traceEvents']
        threads = sorted(e['tid'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name')
        self.assertEqual(threads, [0, 1, 2, 3])
        self.assertIsNone(slices_nest(ev))
        self.assertEqual(min(e['ts'] for e in ev if 'ts' in e), 0)
        shown = sum(2 if e['ph'] == 'X' else 1 for e in ev
                    if e['ph'] in 'Xi' and e['name'] != '*LOST*')
        self.assertEqual(shown, len(self.expected))
        self.assertTrue(any(e['ph'] == 'C' for e in ev))

    def test_raw_files_are_the_records(self):
        out = os.path.join(self.tmp, 'raw')
        r = decode(self.path, '-f', 'raw', '-o', out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)), [f'cpu{c:02d}.bin' for c in range(4)])
        for cpu in range(4):
            with open(os.path.join(out, f'cpu{cpu:02d}.bin'), 'rb') as f:
                self.assertEqual(f.read(), b''.join(e for e in self.expected if e[14] == cpu))

    @unittest.skipUnless(BABELTRACE, 'babeltrace2 not installed')
    def test_ctf_read_by_babeltrace(self):
        out = os.path.join(self.tmp, 'ctf')
        r = decode(self.path, '-f', 'ctf', '-o', out)
        self.assertEqual(r.returncode, 0, r.stderr)
        cycles, warnings = babeltrace_cycles(out)
        self.assertEqual(cycles, sorted(RECORD.unpack(e)[0] for e in self.expected))
        self.assertIn('discarded', warnings)      # the overwritten events
        # exporting again into the same directory replaces the trace
        self.assertEqual(decode(self.path, '-f', 'ctf', '-o', out).returncode, 0)

    def test_stats(self):
        r = decode(self.path, '--stats')
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.decode()
        for section in ('per CPU', 'per event type', 'BEGIN/END durations', 'timer period'):
            self.assertIn(section, text)
        self.assertRegex(text, r'\n  IRQ_TIMER +\d+ +\d+')
        per_cpu = re.findall(r'^\s+(\d)\s+\d+\s+(\d+)\s', text.split('per event type')[0], re.M)
        counts = collections.Counter(e[14] for e in self.expected)
        self.assertEqual({int(c): int(n) for c, n in per_cpu}, dict(counts))

    def test_stats_with_an_export(self):
        out = os.path.join(self.tmp, 'x.json')
        r = decode(self.path, '--stats', '-f', 'json', '-o', out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b'timer period', r.stdout)
        with open(out) as f:
            json.load(f)

    def test_broken_pipe_is_quiet(self):
        p = subprocess.Popen([sys.executable, DECODE, self.path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        p.stdout.read(100)
        p.stdout.close()
        err = p.stderr.read().decode()
        p.stderr.close()
        p.wait(60)
        self.assertNotIn('Traceback', err)


class DamageTest(TempDirTest):
    """Each kind of damage: reported, counted, and never a wrong event."""

    @classmethod
    def setUpClass(cls):
        cls.log, cls.expected = generate(*SMALL)

    def decode_damaged(self, log, status):
        r = decode(self.write('damaged.log', log), '-f', 'csv')
        self.assertEqual(r.returncode, status, r.stderr)
        self.assertNotIn('Traceback', r.stderr)
        got = collections.Counter(csv_records(r.stdout))
        wrong = got - collections.Counter(self.expected)
        self.assertFalse(wrong, f'events that are not in the dump: {list(wrong)[:3]}')
        return r, sum(got.values())

    def assertCountedAsDamaged(self, r, decoded):
        damaged = sum(t['DAMAGED'] for t in loss_table(r.stderr).values())
        self.assertEqual(damaged, len(self.expected) - decoded)
        self.assertGreater(damaged, 0)

    def test_flipped_byte_in_an_event_line(self):
        lines, ev = event_lines(self.log)
        line = bytearray(lines[ev[3]])
        line[40] ^= 0x04
        lines[ev[3]] = bytes(line)
        r, n = self.decode_damaged(b'\n'.join(lines), 3)
        self.assertIn('1 damaged lines skipped', r.stderr)
        self.assertCountedAsDamaged(r, n)

    def test_dropped_lines(self):
        lines, ev = event_lines(self.log)
        for i in sorted((ev[1], ev[7], ev[-1]), reverse=True):
            del lines[i]
        r, n = self.decode_damaged(b'\n'.join(lines), 3)
        self.assertIn('3 lines missing', r.stderr)
        self.assertCountedAsDamaged(r, n)

    def test_truncated_dump(self):
        cut = self.log[:len(self.log) * 2 // 3]
        r, n = self.decode_damaged(cut, 4)
        self.assertIn('no complete dump', r.stderr)
        self.assertIn('truncated', r.stderr)
        m = re.search(r'announced (\d+) events: (\d+) arrived, (\d+) did not', r.stderr)
        self.assertIsNotNone(m, r.stderr)
        self.assertEqual([int(x) for x in m.groups()],
                         [len(self.expected), n, len(self.expected) - n])

    def test_console_text_inside_the_dump(self):
        lines, ev = event_lines(self.log)
        for i in sorted(ev[::5], reverse=True):
            lines.insert(i, b'\x1b[1mkernel: something happened\x1b[0m\r')
        r, n = self.decode_damaged(b'\n'.join(lines), 0)
        self.assertEqual(n, len(self.expected))

    def test_crlf(self):
        r, n = self.decode_damaged(self.log.replace(b'\n', b'\r\n'), 0)
        self.assertEqual(n, len(self.expected))

    def test_garbage_and_empty_logs(self):
        for data in (b'', b'\xff\xfe random bytes\n' * 100, b'DUMP END nothing\n'):
            with self.subTest(data=data[:20]):
                r = decode(self.write('junk.log', data))
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertNotIn('Traceback', r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn('no dump', r.stderr)


class TwoDumpsTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.first, cls.first_expected = generate('cpus=2', 'events=300', 'cap=256', 'dump=1')
        cls.second, cls.second_expected = generate('cpus=3', 'events=200', 'cap=256',
                                                   'dump=2', 'seed=7')

    def csv_of(self, path, *args, status=0):
        r = decode(path, '-f', 'csv', *args)
        self.assertEqual(r.returncode, status, r.stderr)
        return collections.Counter(csv_records(r.stdout)), r

    def test_default_is_the_last_complete_dump(self):
        path = self.write('two.log', self.first + b'reboot\r\n' + self.second)
        got, _ = self.csv_of(path)
        self.assertEqual(got, collections.Counter(self.second_expected))
        for args in (('--dump', '0'), ('--dump', '-2')):
            got, _ = self.csv_of(path, *args)
            self.assertEqual(got, collections.Counter(self.first_expected))

    def test_a_damaged_newer_dump_is_pointed_out(self):
        path = self.write('two.log', self.first + self.second[:len(self.second) // 2])
        got, r = self.csv_of(path)
        self.assertEqual(got, collections.Counter(self.first_expected))
        self.assertIn('dump 1, after the one decoded, is truncated', r.stderr)
        _, r = self.csv_of(path, '--dump', '1', status=4)

    def test_list(self):
        path = self.write('two.log', self.first + self.second[:len(self.second) // 2])
        r = decode(path, '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [ln.split() for ln in r.stdout.decode().splitlines()]
        self.assertEqual(rows[0][:3], ['INDEX', 'STATE', 'CPUS'])
        self.assertEqual([row[:3] for row in rows[1:]],
                         [['0', 'complete', '2'], ['1', 'truncated', '3']])

    def test_dump_index_out_of_range(self):
        path = self.write('two.log', self.first + self.second)
        r = decode(path, '--dump', '2')
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn('numbered 0..1', r.stderr)


class UsageTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.log, _ = generate('cpus=1', 'events=50', 'cap=64')

    def test_bad_command_lines_exit_2(self):
        path = self.write('run.log', self.log)
        for args in (['--format', 'xml'], ['--format', 'ctf'], ['--format', 'raw'],
                     ['--dump', 'last'], ['--list', '--stats'], ['--stats', '-f', 'csv']):
            with self.subTest(args=args):
                r = decode(path, *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertNotIn('Traceback', r.stderr)

    def test_missing_log(self):
        r = decode(os.path.join(self.tmp, 'nope.log'))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(),
                         f'decode: cannot read {os.path.join(self.tmp, "nope.log")}: '
                         'No such file or directory')

    def test_refuses_to_mix_into_a_foreign_directory(self):
        path = self.write('run.log', self.log)
        out = os.path.join(self.tmp, 'mine')
        os.mkdir(out)
        with open(os.path.join(out, 'notes.txt'), 'w') as f:
            f.write('keep')
        r = decode(path, '-f', 'ctf', '-o', out)
        self.assertEqual(r.returncode, 1)
        self.assertIn('holds other files', r.stderr)
        self.assertEqual(os.listdir(out), ['notes.txt'])

    def test_unknown_tsc_rate_is_said(self):
        log, _ = generate('cpus=1', 'events=50', 'cap=64', 'tsc_hz=0')
        r = decode(self.write('nohz.log', log))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('does not give tsc_hz', r.stderr)


if __name__ == '__main__':
    unittest.main()
