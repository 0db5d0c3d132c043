"""btlib.report.streambench: the arithmetic behind make bench's stream rows
(issue 35, item 5) on parts built as the log parser models them.

A stream's parts are dumps whose DUMP BEGIN says stream= part= [final=1]
(docs/streaming.md). The rates must come from part 1 on (part 0 reaches
back before the stream began), every overwritten or missing part must
make a step lossy, and the wire's bytes must be those of the stream's own
dump ids. No timing is asserted: the figures are computed from given
counters. `EncodedParts` reads parts the real encoder wrote (gen_dump
stream=), parsed as bench parses the captured log.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_streambench.py'
"""

import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
sys.path.insert(0, os.path.join(ROOT, 'test', 'host'))

from btlib.dump.dumplog import parse_log
from btlib.dump.model import CpuInfo, Dump
from btlib.report import benchlines
from btlib.report import streambench as sb
from test_decode_support import generate

NONCE = '0123456789ABCDEF'
HZ = 1000000


def part(n, uptime, counts, final=False, stream=1, complete=True):
    """A part as dumplog would model it: counts {cpu: (recorded, sent,
    overwritten)}."""
    header = {'v': '2', 'dump': str(10 + n), 'nonce': NONCE, 'cpus': str(len(counts)),
              'stream': str(stream), 'part': str(n), 'tsc_hz': str(HZ),
              'uptime_tsc': str(uptime)}
    if final:
        header['final'] = '1'
    cpus = [CpuInfo(cpu=c, apic_id=c, capacity=256, recorded=r, overwritten=o, sent=s,
                    events=[]) for c, (r, s, o) in counts.items()]
    return Dump(index=n, header=header, version=2, tsc_hz=HZ, cpus=cpus, types={}, phases={},
                complete=complete, end_events=None, damaged_lines=0, missing_lines=0,
                warnings=[])


def stream_of(*dumps):
    got = sb.streams(sb.part_of(d) for d in dumps)
    return got[(NONCE, 1)]


class Figures(unittest.TestCase):
    def test_rates_from_part_one_on(self):
        # part 0: 500 events before the stream, 300 of them overwritten:
        # not the stream's loss; parts 1-2: 2 s, 4000 + 2000 events, none lost
        parts = stream_of(part(0, 1 * HZ, {0: (500, 200, 300), 1: (400, 400, 0)}),
                          part(1, 2 * HZ, {0: (2000, 2000, 0), 1: (1000, 1000, 0)}),
                          part(2, 3 * HZ, {0: (2000, 2000, 0), 1: (1000, 1000, 0)}, final=True))
        f = sb.figures(parts)
        self.assertEqual(f['window_s'], 2.0)
        self.assertEqual((f['recorded'], f['streamed'], f['lost']), (6000, 6000, 0))
        self.assertEqual(f['offered_per_s'], 3000)
        self.assertEqual(f['per_cpu'][0]['streamed_per_s'], 2000)
        self.assertEqual(f['per_cpu'][1]['streamed_per_s'], 1000)
        self.assertTrue(f['lossless'] and f['final'])
        self.assertEqual(f['events_streamed_all_parts'], 6600)

    def test_overwritten_in_the_window_is_loss(self):
        parts = stream_of(part(0, 0, {0: (10, 10, 0)}),
                          part(1, HZ, {0: (5000, 4000, 1000)}, final=True))
        f = sb.figures(parts)
        self.assertFalse(f['lossless'])
        self.assertEqual((f['overwritten'], f['lost'], f['streamed']), (1000, 1000, 4000))
        self.assertEqual(f['offered_per_s'], 5000)

    def test_a_missing_part_is_not_lossless(self):
        parts = stream_of(part(0, 0, {0: (10, 10, 0)}), part(2, 2 * HZ, {0: (10, 10, 0)}))
        f = sb.figures(parts)
        self.assertEqual(f['parts_missing'], 1)
        self.assertFalse(f['lossless'])
        self.assertFalse(f['final'])

    def test_an_incomplete_part_is_not_lossless(self):
        parts = stream_of(part(0, 0, {0: (10, 10, 0)}),
                          part(1, HZ, {0: (10, 10, 0)}, complete=False))
        self.assertFalse(sb.figures(parts)['lossless'])

    def test_no_window_without_part_zero_or_a_later_part(self):
        self.assertIn('part 0 missing', sb.figures(stream_of(part(1, HZ, {0: (1, 1, 0)})))['error'])
        self.assertIn('only part 0', sb.figures(stream_of(part(0, HZ, {0: (1, 1, 0)})))['error'])
        self.assertIn('error', sb.figures([]))

    def test_not_a_part(self):
        d = part(0, 0, {0: (1, 1, 0)})
        del d.header['stream']
        self.assertIsNone(sb.part_of(d))

    def test_a_part_twice_counts_once_and_streams_apart(self):
        p0, p1 = part(0, 0, {0: (1, 1, 0)}), part(1, HZ, {0: (7, 7, 0)})
        other = part(0, 0, {0: (1, 1, 0)}, stream=2)
        got = sb.streams(sb.part_of(d) for d in (p1, p0, p1, other))
        self.assertEqual([p['part'] for p in got[(NONCE, 1)]], [0, 1])
        self.assertEqual(len(got[(NONCE, 2)]), 1)


class EncodedParts(unittest.TestCase):
    """gen_dump's parts: 2 CPUs, 64-event rings, four parts of 10, 30, 100
    (laps the consumer by 36) and 20 events per CPU, 0.1 s apart."""

    def test_parsed_parts_give_the_encoders_counts(self):
        log, records = generate('cpus=2', 'cap=64', 'stream=1', 'parts=4',
                                'chunks=10,30,100,20', 'noise=0')
        parts = sb.streams(sb.part_of(d) for d in parse_log(log))
        self.assertEqual(list(parts), [('0123456789ABCDEF', 1)])
        f = sb.figures(parts[('0123456789ABCDEF', 1)])
        self.assertEqual((f['parts'], f['parts_missing'], f['final']), (4, 0, True))
        self.assertAlmostEqual(f['window_s'], 0.3)
        self.assertEqual((f['recorded'], f['streamed'], f['overwritten'], f['lost']),
                         (300, 228, 72, 72))
        self.assertEqual(f['events_streamed_all_parts'], len(records))
        self.assertAlmostEqual(f['offered_per_s'], 1000)
        self.assertAlmostEqual(f['per_cpu'][1]['streamed_per_s'], 380)
        self.assertFalse(f['lossless'])

    def test_a_clean_stream_is_lossless(self):
        log, _ = generate('cpus=3', 'cap=64', 'stream=2', 'parts=3', 'chunks=5,40,40',
                          'noise=0')
        f = sb.figures(sb.streams(sb.part_of(d) for d in parse_log(log))[('0123456789ABCDEF', 2)])
        self.assertTrue(f['lossless'])
        self.assertEqual((f['recorded'], f['streamed']), (240, 240))


class Wire(unittest.TestCase):
    def test_bytes_of_the_streams_ids_only(self):
        w = sb.WireCount()
        ids = [f'{NONCE}.10', f'{NONCE}.11']
        w.feed(f'BT1 D 525400123456 {ids[0]} 0 5 tag\n'.encode() + b'x' * 100)
        w.feed(f'BT1 D 525400123456 {ids[1]} 0 6 tag\n'.encode() + b'x' * 50)
        w.feed(f'BT1 W 525400123456 {ids[1]} 9 4800 7 tag\n'.encode())
        w.feed(f'BT1 D 525400123456 {NONCE}.3 0 8 tag\n'.encode() + b'x' * 999)   # a hotkey dump
        w.feed(b'BT1 T 525400123456 4 ' + NONCE.encode() + b' 9 tag\nconsole text\n')
        nbytes, grams = w.of(ids)
        self.assertEqual(grams, 3)
        self.assertEqual(nbytes, sum(len(f'BT1 D 525400123456 {i} 0 5 tag\n') for i in ids)
                         + 150 + len(f'BT1 W 525400123456 {ids[1]} 9 4800 7 tag\n'))
        self.assertGreater(w.other_bytes, 0)
        parts = stream_of(part(0, 0, {0: (10, 10, 0)}), part(1, HZ, {0: (15, 15, 0)}))
        f = sb.figures(parts, w)
        self.assertEqual(f['bytes_per_event'], nbytes / 25)
        self.assertEqual(f['frame_bytes_per_event'], (nbytes + 3 * sb.FRAME_OVERHEAD) / 25)


class Summary(unittest.TestCase):
    def test_sustained_is_the_fastest_lossless_step(self):
        def step(name, rate, lossless):
            return {'step': name, 'figures': {'streamed_per_s': rate, 'lossless': lossless,
                                              'cpus': 4, 'lost': 0 if lossless else 9}}
        got = sb.sustained([step('a', 100, True), step('b', 400, True), step('c', 300, False),
                            step('d', 900, False), {'step': 'e', 'error': 'no boot'}])
        self.assertEqual(got['lossless']['step'], 'b')
        self.assertEqual(got['lossless']['per_cpu'], 100)
        self.assertEqual(got['ceiling']['step'], 'd')
        self.assertEqual(sb.sustained([step('c', 300, False)]).get('lossless'), None)

    def test_counters_line(self):
        got = sb.stream_counters(
            b'stream: on, stream 1 part 3, 10 events streamed, 0 overwritten before they were '
            b'streamed, 0 excluded, 2 parts unconfirmed, 900 bytes sent (0 lines again), '
            b'1 parts confirmed, 0 given up\r\n'
            b'stream: stream 1 ending: its final part follows\r\n'
            b'stream: off, stream 1 part 9, 42 events streamed, 5 overwritten before they were '
            b'streamed, 1 excluded, 0 parts unconfirmed, 777 bytes sent (3 lines again), '
            b'10 parts confirmed, 0 given up\r\n'
            b'stream: stream 1 ended: 10 parts, 42 events\n')
        self.assertEqual((got['state'], got['stream'], got['part']), ('off', 1, 9))
        self.assertEqual((got['events streamed'], got['overwritten before they were streamed'],
                          got['bytes sent'], got['lines again'], got['given up']),
                         (42, 5, 777, 3, 0))
        self.assertTrue(got['line'].startswith('stream: off'))
        self.assertEqual(sb.stream_counters(b'stream: off (n starts one)\n'), {})

    def test_trace_cost_ratio(self):
        def table(on1, on4):
            return benchlines.bench_lines(
                b'BENCH BEGIN where=kernel cpus=4 n=20000 rounds=5\n'
                b'BENCH variant=rdtsc scope=1 ticks=20.0\n'
                b'BENCH variant=trace_on scope=1 ticks=%.1f\n'
                b'BENCH variant=rdtsc scope=4 ticks=40.0\n'
                b'BENCH variant=trace_on scope=4 ticks=%.1f\n'
                b'BENCH END\n' % (on1, on4))[-1]
        got = sb.trace_cost(table(30.0, 80.0), table(31.5, 100.0))
        self.assertAlmostEqual(got[1]['ratio'], 1.05)
        self.assertTrue(got[1]['met'])
        self.assertAlmostEqual(got[4]['ratio'], 1.25)
        self.assertFalse(got[4]['met'])

    def test_host_cost_from_hostbench_rows(self):
        table = benchlines.bench_lines(
            b'BENCH BEGIN where=host cpus=2 n=1000 rounds=1\n'
            b'BENCH variant=trace_on scope=1 ticks=30.0\n'
            b'BENCH variant=trace_on_alone scope=1 ticks=20.0 x_rdtsc=1.00\n'
            b'BENCH variant=trace_streamed scope=1 ticks=21.0 x_rdtsc=1.05 read=77\n'
            b'BENCH variant=trace_on scope=2 ticks=30.0\n'
            b'BENCH END\n')[-1]
        got = sb.host_cost(table)
        self.assertAlmostEqual(got['ratio'], 1.05)
        self.assertEqual((got['read'], got['met']), (77, True))
        self.assertEqual(sb.host_cost(None), {})

    def test_hostbench_prints_the_consumer_rows(self):
        exe = os.path.join(ROOT, 'build', 'bench', 'hostbench')
        subprocess.run(['make', '-s', '-C', ROOT, 'build/bench/hostbench'], capture_output=True,
                       timeout=300)
        if not os.access(exe, os.X_OK) or (os.cpu_count() or 1) < 2:
            self.skipTest('no build/bench/hostbench, or one CPU (the consumer needs a second)')
        out = subprocess.run([exe, 'n=2000', 'rounds=1', 'threads=2'], capture_output=True,
                             timeout=120, check=True).stdout
        got = sb.host_cost(benchlines.bench_lines(out)[-1])
        self.assertGreater(got['alone_ticks'], 0)
        self.assertGreater(got['streamed_ticks'], 0)
        self.assertRegex(out, rb'variant=trace_streamed .* look_us=1000\n', 'a tick, by default')
        out = subprocess.run([exe, 'n=2000', 'rounds=1', 'threads=2', 'look_us=20'],
                             capture_output=True, timeout=120, check=True).stdout
        self.assertRegex(out, rb'variant=trace_streamed .* look_us=20\n')
        bad = subprocess.run([exe, 'look_us=0'], capture_output=True, timeout=60)
        self.assertEqual(bad.returncode, 2)
        self.assertIn(b'look_us 1..1000000', bad.stderr)

    def test_printing_every_kind_of_row(self):
        parts = stream_of(part(0, 0, {0: (10, 10, 0)}), part(1, HZ, {0: (15, 12, 3)}))
        steps = [{'step': 'timer 1 kHz', 'figures': sb.figures(parts)},
                 {'step': 'stress', 'error': 'QEMU did not start'}]
        doc = {'cpus': 4, 'events': 4096, 'seconds': 10,
               'nics': {'e1000': {'steps': steps, 'sustained': sb.sustained(steps)}},
               'trace_cost': {'error': 'no part arrived'},
               'host_cost': {'alone_ticks': 20.0, 'streamed_ticks': 30.0, 'read': 5,
                             'ratio': 1.5, 'target': '<= 1.1', 'met': False}}
        lines = []
        sb.print_stream(doc, lines.append)
        text = '\n'.join(lines)
        self.assertIn('LOST 3 (3 overwritten before streamed)', text)
        self.assertIn('QEMU did not start', text)
        self.assertIn('no lossless step', text)
        self.assertIn('no part arrived', text)
        self.assertIn('1.50x (must stay within today\'s figure, <= 1.1: NOT met)', text)


if __name__ == '__main__':
    unittest.main()
