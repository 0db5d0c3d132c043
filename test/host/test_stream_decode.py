"""decode and report on a stream (issue 35 items 3 and 4; docs/streaming.md):
a stream's parts, each a small v2 dump, joined into one trace.

1. decode --list: one row per stream (events, CPUs, duration, losses,
   parts, complete or not) beside the dumps' rows, and why a stream is
   incomplete;
2. decode --stream S: one trace of the whole stream in every format,
   every seq accounted (decoded, or in a *LOST* record whose cause is
   "overwritten before it was streamed" or "never arrived"), parts put
   back in order, slices whole across windows, the same output however
   the stream is cut into windows; the exit status says complete (0),
   parts missing (3) or no final part (4);
3. part 0 missing: the built-in event table, said;
4. report --window: per time window and CPU, events, timer lateness,
   missing events.

The parts come from streamparts.py (the kernel's encoder mirrored, so a
test can drop, reorder and overwrite exactly what it wants) and, in
RealEncoder, from gen_dump's stream parts (the kernel's ring and encoder:
test_genstream). Every test failed on the code before: it had no stream,
no --stream, no --window.
"""

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_decode_support import BABELTRACE, DECODE, REPO, TempDirTest, decode
from test_decode_support import require_compiled_core
from test_genstream import stream as gen_stream
from test_perfetto import check_trace
import streamparts
from streamparts import stream_log

sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.dump import dumplog, stream as streams
from btlib.dump.dumpfmt import empty_dump
from btlib.export import streamout
from btlib.timeline import streamwin

REPORT = os.path.join(REPO, 'scripts', 'report')
PER = 30                     # seqs per CPU per part: 10 timer ticks and 10 IPIs


def rows_of(stdout, first='STREAM'):
    """The table whose header starts with `first`, as dicts."""
    lines = stdout.decode().splitlines()
    at = next(i for i, x in enumerate(lines) if x.split()[:1] == [first])
    head = lines[at].split()
    out = []
    for line in lines[at + 1:]:
        if not line.strip():
            break
        out.append(dict(zip(head, line.split())))
    return out


def accounted(trace_events, csv_text):
    """{cpu: seqs decoded (CSV) or in a *LOST* record (JSON)}, and the
    LOST records' causes."""
    seqs, causes = {}, set()
    for e in trace_events:
        if e.get('name') == '*LOST*':
            a = e['args']
            seqs.setdefault(e['tid'], []).extend(range(a['first_seq'],
                                                       a['first_seq'] + a['events']))
            causes.add(a['cause'])
    for row in csv.DictReader(io.StringIO(csv_text.decode())):
        seqs.setdefault(int(row['cpu']), []).append(int(row['seq']))
    return seqs, causes


class Listing(TempDirTest):
    """Item 1."""

    def test_a_row_per_stream_beside_the_dumps(self):
        log = self.write('s.log', empty_dump(0x1234) + stream_log(
            cpus=2, parts=6, drop_parts={2}, overwrite={3: 7}))
        r = decode(log, '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(rows_of(r.stdout, 'INDEX')), 1)      # the dump; parts are no rows
        (row,) = rows_of(r.stdout)
        self.assertEqual((row['STATE'], row['CPUS'], row['PARTS'], row['MISSING_PARTS']),
                         ('incomplete', '2', '6', '1'))
        self.assertEqual(int(row['EVENTS']), 2 * (5 * PER - 7))
        self.assertEqual((int(row['OVERWRITTEN']), int(row['NEVER_ARRIVED']),
                          int(row['LOST'])), (14, 2 * PER, 14 + 2 * PER))
        self.assertIn('stream 1 (nonce 00C0FFEE12345678): incomplete: parts 2 missing',
                      r.stderr)

    def test_complete_stream(self):
        r = decode(self.write('s.log', stream_log(cpus=3, parts=4)), '--list')
        (row,) = rows_of(r.stdout)
        self.assertEqual((row['STATE'], row['EVENTS'], row['LOST']), ('complete', str(12 * PER),
                                                                      '0'))
        # 4 parts of 10 ticks at 1 ms: the first to the last event
        self.assertAlmostEqual(float(row['DURATION_S']), 0.039, places=3)

    def test_no_final_part(self):
        r = decode(self.write('s.log', stream_log(parts=3, final=False)), '--list')
        self.assertEqual(rows_of(r.stdout)[0]['STATE'], 'incomplete')
        self.assertIn('no final part (after part 2)', r.stderr)


class Trace(TempDirTest):
    """Item 2."""

    def json_trace(self, data, *args):
        r = decode(self.write('s.log', data), '-f', 'json', *args)
        return r, json.loads(r.stdout)

    def test_every_seq_accounted(self):
        parts, cpus = 7, 2
        data = stream_log(cpus=cpus, parts=parts, drop_parts={2, 4}, overwrite={3: 7, 6: 4},
                          order=[0, 1, 3, 6, 5])
        r, trace = self.json_trace(data)
        self.assertEqual(r.returncode, 3, r.stderr)
        rows = decode(self.write('s.log', data), '-f', 'csv').stdout
        seqs, causes = accounted(trace['traceEvents'], rows)
        for cpu in range(cpus):
            self.assertEqual(sorted(seqs[cpu]), list(range(parts * PER)), f'CPU {cpu}')
        self.assertEqual(causes, {'never arrived', 'never arrived + overwritten before it was '
                                  'streamed', 'overwritten before it was streamed'})
        other = trace['otherData']
        self.assertEqual((other['complete'], other['missing_parts']), (False, [[2, 3], [4, 5]]))
        self.assertEqual(other['missing_events']['0'], {
            'never arrived': 2 * PER, 'overwritten before it was streamed': 11})
        self.assertIn('parts 2, 4 never arrived', r.stderr)

    def test_a_damaged_line_costs_only_its_events(self):
        per = 45                     # a CPU's part in three lines: 16, 16, 13 events
        clean = stream_log(parts=4, per_part=per)
        lines = [clean.index(b'\n%E', clean.index(b'dump=3 ')) + 5]    # part 2's event lines
        for _ in range(2):
            lines.append(clean.index(b'\n%E', lines[-1]) + 5)
        for at, seq, n in zip(lines, (2 * per, 2 * per + 16, 2 * per + 32), (16, 16, 13)):
            data = clean[:at] + bytes([clean[at] ^ 1]) + clean[at + 1:]
            r, trace = self.json_trace(data)
            self.assertEqual(r.returncode, 3, r.stderr)
            lost = [e['args'] for e in trace['traceEvents'] if e.get('name') == '*LOST*']
            self.assertEqual(lost, [{'events': n, 'first_seq': seq, 'cause': 'damaged'}])
            self.assertIn('part 2: 1 damaged and 0 missing lines', r.stderr)
        r = decode(self.write('s.log', data), '--list')
        self.assertIn('incomplete: parts 2 damaged or truncated', r.stderr)

    def test_csv_is_every_event_in_time_order(self):
        parts, cpus = 5, 3
        r = decode(self.write('s.log', stream_log(cpus=cpus, parts=parts)), '-f', 'csv')
        self.assertEqual(r.returncode, 0, r.stderr)
        got = [(int(x['tsc']), int(x['cpu']), int(x['seq']), int(x['type']), int(x['a0']),
                int(x['a1'])) for x in csv.DictReader(io.StringIO(r.stdout.decode()))]
        want = sorted((e[1], cpu, e[0], e[2], e[4], e[5]) for cpu in range(cpus)
                      for e in streamparts.cpu_events(cpu, range(parts * PER)))
        self.assertEqual(got, want)

    def test_slices_whole(self):
        r, trace = self.json_trace(stream_log(cpus=2, parts=6))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(trace['otherData']['unmatched_halves'], 0)
        self.assertEqual(sum(e['ph'] == 'X' for e in trace['traceEvents']), 2 * 6 * PER // 3)

    def test_exit_status_and_every_format(self):
        cases = ((stream_log(parts=3), 0), (stream_log(parts=4, drop_parts={1}), 3),
                 (stream_log(parts=3, final=False), 4))
        for data, rc in cases:
            log = self.write(f'{rc}.log', data)
            for fmt in ('text', 'csv', 'json', 'perfetto', 'ctf', 'raw'):
                out = os.path.join(self.tmp, f'{rc}.{fmt}')
                r = decode(log, '--stream', '1', '-f', fmt, '-o', out)
                self.assertEqual(r.returncode, rc, f'{fmt}: {r.stderr}')
                self.assertTrue(os.path.exists(out), fmt)

    def test_ctf_reads_as_one_trace(self):
        if BABELTRACE is None:
            raise unittest.SkipTest('no babeltrace2')
        out = os.path.join(self.tmp, 'ctf')
        r = decode(self.write('s.log', stream_log(parts=5, overwrite={2: 6})), '-f', 'ctf',
                   '-o', out)
        self.assertEqual(r.returncode, 0, r.stderr)
        bt = subprocess.run([BABELTRACE, out], capture_output=True, text=True, timeout=120)
        self.assertEqual(bt.returncode, 0, bt.stderr)
        self.assertEqual(len(bt.stdout.splitlines()), 2 * (5 * PER - 6))
        self.assertEqual(bt.stderr.count('discarded 6 events'), 2, bt.stderr)

    def test_part_zero_missing_takes_the_built_in_table(self):
        r = decode(self.write('s.log', stream_log(parts=3, drop_parts={0})))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn('IRQ_TIMER_BEGIN  tick=10', r.stdout.decode())
        self.assertIn('events named by the built-in table of', r.stderr)

    def test_a_part_is_still_a_dump(self):
        """Older tools see parts as small dumps: --dump N still decodes one."""
        r = decode(self.write('s.log', stream_log(parts=3)), '--dump', '1', '-f', 'csv')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 1 + 2 * PER)

    def test_choosing_a_stream(self):
        two = stream_log(parts=2) + stream_log(parts=3, nonce=0xABCDEF0123456789,
                                               first_dump=1)
        log = self.write('two.log', empty_dump(0x77) + two)
        r = decode(log)                           # the dump, and a note on the streams
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('the log also holds 2 stream(s)', r.stderr)
        r = decode(log, '--stream', '1', '-f', 'csv')
        self.assertEqual(len(r.stdout.splitlines()), 1 + 2 * 2 * PER)
        self.assertIn('boot ABCDEF0123456789 has a stream 1 too', r.stderr)
        r = decode(log, '--stream', 'abcdef0123456789.1', '-f', 'csv')
        self.assertEqual(len(r.stdout.splitlines()), 1 + 2 * 3 * PER)
        r = decode(log, '--stream', '9')
        self.assertEqual(r.returncode, 1)
        self.assertIn('no stream 9 in', r.stderr)
        r = decode('-', stdin=stream_log(parts=2))
        self.assertEqual(r.returncode, 1)
        self.assertIn('give --stream S', r.stderr)
        r = decode('-', '--stream', '1', '-f', 'csv', stdin=stream_log(parts=2))
        self.assertEqual(r.returncode, 0, r.stderr)


class Windows(unittest.TestCase):
    """Item 2: the trace does not depend on where the windows fall."""

    def written(self, data, fmt, window):
        dumps = dumplog.iter_dumps([data.split(b'\n')])
        join = streams.Join(None)
        wins = streamwin.Windows(join, window=window)

        def windows():
            for part in streams.ordered_parts(d for d in dumps if d.stream == 1):
                yield from wins.add(part)
            yield from wins.finish()
        about = streamout.StreamAbout(lambda w: 'stream', lambda: {})
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'out')
            streamout.write(windows(), fmt, out, about)
            if fmt == 'ctf':
                return subprocess.run([BABELTRACE, out], capture_output=True,
                                      timeout=120).stdout, wins.count
            with open(out, 'rb') as f:
                return f.read(), wins.count

    def test_small_windows_write_the_same(self):
        # CPU 0 runs ahead of CPU 1 in some parts, behind in others: a part's
        # events are not all after the previous part's.
        ranges = [{0: (0, 50), 1: (0, 20)}, {0: (50, 70), 1: (20, 90)},
                  {0: (70, 130), 1: (90, 100)}, {0: (130, 150), 1: (100, 150)}]
        data = b''.join(streamparts.part_text(1, k, 2, r, k + 1, final=k == 3)
                        for k, r in enumerate(ranges))
        formats = ['text', 'csv', 'json'] + (['ctf'] if BABELTRACE else [])
        for fmt in formats:
            whole, n = self.written(data, fmt, 1 << 20)
            cut, m = self.written(data, fmt, 7)
            self.assertEqual((n, fmt), (1, fmt))
            self.assertGreater(m, 2, fmt)
            if fmt == 'json':         # each window names the CPUs' tracks (M) again,
                cut, whole = (sorted(json.dumps(e, sort_keys=True)    # and starts their rates (C)
                                     for e in json.loads(x)['traceEvents']
                                     if e['ph'] not in 'MC')
                              for x in (cut, whole))
            self.assertEqual(cut, whole, fmt)
        rows = list(csv.DictReader(io.StringIO(self.written(data, 'csv', 7)[0].decode())))
        self.assertEqual(len(rows), 300)
        tscs = [int(x['tsc']) for x in rows]
        self.assertEqual(tscs, sorted(tscs))


class RealEncoder(TempDirTest):
    """Item 2 on gen_dump's parts: the kernel's rings and encoder."""

    def test_many_windows_are_the_rings(self):
        require_compiled_core('the stream written by the compiled writers')
        log, want = gen_stream('stream=1', 'parts=100', 'cpus=4', 'events=40000', 'cap=4096')
        path = self.write('g.log', log)
        r = decode(path, '-f', 'csv')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r'160000 events decoded in \d\d windows')
        got = [(int(x['tsc']), int(x['cpu']), int(x['seq']), int(x['type']), int(x['a0']),
                int(x['a1'])) for x in csv.DictReader(io.StringIO(r.stdout.decode()))]
        self.assertEqual(got, sorted((e[1], cpu, e[0], e[2], e[3], e[4])
                                     for cpu, evs in want.items() for e in evs))
        r = decode(path, '-f', 'perfetto', '-o', os.path.join(self.tmp, 'g.pftrace'))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp, 'g.pftrace'), 'rb') as f:
            check_trace(self, f.read())
        for fmt in ('text', 'perfetto'):     # the pure-Python reference writes the same bytes
            runs = [subprocess.run([sys.executable, DECODE, path, '-f', fmt],
                                   capture_output=True, timeout=300,
                                   env={**os.environ, 'BT_PURE_PYTHON': flag})
                    for flag in ('0', '1')]
            self.assertEqual(runs[0].stdout, runs[1].stdout, fmt)

    def test_a_lapped_consumer_is_counted_exactly(self):
        log, want = gen_stream('stream=1', 'cpus=4', 'cap=256', 'chunks=100,600,100,300,50,90')
        path = self.write('g.log', log)
        r = decode(path, '-f', 'json')
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = json.loads(r.stdout)
        rows = decode(path, '-f', 'csv').stdout
        seqs, causes = accounted(trace['traceEvents'], rows)
        self.assertEqual(causes, {'overwritten before it was streamed'})
        over = {}
        for d in dumplog.parse_log(log):
            for c in d.cpus:
                over[c.cpu] = over.get(c.cpu, 0) + c.overwritten
        for cpu in range(4):
            self.assertEqual(sorted(seqs[cpu]), list(range(1240)), f'CPU {cpu}')
            self.assertEqual(trace['otherData']['missing_events'][str(cpu)],
                             {'overwritten before it was streamed': over[cpu]})
            self.assertEqual(len(seqs[cpu]) - over[cpu], len(want[cpu]))
        (row,) = rows_of(decode(path, '--list').stdout)
        self.assertEqual((row['STATE'], int(row['OVERWRITTEN'])), ('complete', sum(over.values())))


class ReportWindows(TempDirTest):
    """Item 4."""

    def test_rows_per_window(self):
        log = self.write('s.log', stream_log(cpus=2, parts=6, drop_parts={4}))
        r = subprocess.run([sys.executable, REPORT, log, '--window', '20ms', '--json', '-'],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 4, r.stderr)           # a part is missing
        doc = json.loads(r.stdout)
        rows = doc['windows']
        self.assertEqual(sorted({x['window_s'] for x in rows}), [0.0, 0.02, 0.04])
        self.assertEqual(sum(x['events'] for x in rows), 2 * 5 * PER)
        self.assertEqual(sum(x['missing'] for x in rows), 2 * PER)
        # lateness_tsc of tick t on CPU c is (3t * 7 + c) % 900 ticks at 1 GHz
        first = next(x for x in rows if x['window_s'] == 0.0 and x['cpu'] == 0)
        late = sorted((3 * t * 7) % 900 for t in range(20))
        self.assertEqual(first['lateness_us']['max'], round(late[-1] / 1000, 1))
        self.assertEqual(first['events'], 2 * PER)
        text = subprocess.run([sys.executable, REPORT, log, '--window', '20ms'],
                              capture_output=True, text=True, timeout=120)
        self.assertIn('LATE_P99_US', text.stdout)
        self.assertIn('parts 4 missing', text.stdout)

    def test_bad_window(self):
        r = subprocess.run([sys.executable, REPORT, 'x.log', '--window', 'soon'],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn('is not a time span', r.stderr)


if __name__ == '__main__':
    unittest.main()
