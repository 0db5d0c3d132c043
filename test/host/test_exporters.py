"""The exporters and their helpers on dumps built in memory from btlib.dump.model.

Each test builds the exact events it needs, so the expected output is
known event by event.  CLI-level tests on whole logs are in
test_decode_*.py.
"""

import copy
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))

from btlib.export import csvout
from btlib.export import ctfout
from btlib.export import jsonout
from btlib.export import rawout
from btlib.export import textout
from btlib.native import choice
from btlib.timeline import pairs
from btlib.timeline import stats
from btlib.dump.model import CpuInfo, Dump, Event, EventType
from btlib.timeline.timeline import Timeline, seq_gaps

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode_support import slices_nest

HZ = 2_000_000_000          # 2 ticks per ns: conversions are easy to check
BABELTRACE = shutil.which('babeltrace2')

TYPES = {
    1: EventType(1, 'BOOT_PHASE', 'boot', 'instant', ('phase', '')),
    2: EventType(2, 'IRQ_TIMER_BEGIN', 'irq', 'begin', ('tick', 'lateness_tsc')),
    3: EventType(3, 'IRQ_TIMER_END', 'irq', 'end', ('tick', '')),
    4: EventType(4, 'WORK_BEGIN', 'perf', 'begin', ('item', '')),
    5: EventType(5, 'WORK_END', 'perf', 'end', ('item', 'result')),
    6: EventType(6, 'MARK', 'misc', 'instant', ('', '')),
}
PHASES = {0: 'ENTRY', 1: 'SMP_START'}
B, E = {'IRQ_TIMER': 2, 'WORK': 4}, {'IRQ_TIMER': 3, 'WORK': 5}


def make_dump(rings, overwritten=None, dropped=None, damaged=None, types=TYPES):
    """rings: {cpu: [(tsc, type, a0, a1) or (tsc, type, a0, a1, seq)]}."""
    cpus = []
    for cpu, items in sorted(rings.items()):
        events = []
        for i, item in enumerate(items):
            tsc, typ, a0, a1 = item[:4]
            seq = item[4] if len(item) > 4 else i + (overwritten or {}).get(cpu, 0)
            events.append(Event(cpu, seq, tsc, typ, 0, a0, a1))
        gaps = sum(n for _, _, n in seq_gaps(events))
        cpus.append(CpuInfo(
            cpu=cpu, apic_id=cpu * 2, capacity=1024, recorded=len(events),
            overwritten=(overwritten or {}).get(cpu, 0), dropped=(dropped or {}).get(cpu, 0),
            first_seq=events[0].seq if events else None,
            last_seq=events[-1].seq if events else None, events=events,
            damaged=(damaged or {}).get(cpu, gaps), summary_seen=True))
    return Dump(index=0, header={'tsc_warp': '40'}, version=1, tsc_hz=HZ, cpus=cpus,
                types=dict(types), phases=dict(PHASES), complete=True,
                end_events=sum(len(c.events) for c in cpus), damaged_lines=0,
                missing_lines=0, warnings=[])


def timer_ring(start, ticks, period=2_000_000, with_work=True):
    """A CPU's ring of timer interrupts, each maybe around one work item."""
    out, t = [], start
    for k in range(ticks):
        out.append((t, B['IRQ_TIMER'], k, 10 + k))
        if with_work:
            out.append((t + 100, B['WORK'], k, 0))
            out.append((t + 300, E['WORK'], k, 7))
        out.append((t + 500, E['IRQ_TIMER'], k, 0))
        t += period
    return out


def render(writer, tl):
    buf = io.StringIO(newline='')
    result = writer(tl, buf)
    return buf.getvalue(), result


class TimelineTest(unittest.TestCase):
    def test_merge_time_and_names(self):
        d = make_dump({0: [(1000, 1, 0, 0), (5000, 1, 1, 0)], 1: [(3000, 6, 5, 6)]})
        tl = Timeline(d)
        self.assertEqual([e.tsc for e in tl.events], [1000, 3000, 5000])
        self.assertEqual([tl.ns(e.tsc) for e in tl.events], [0, 1000, 2000])
        self.assertEqual(tl.format_args(tl.events[2]), 'phase=SMP_START')
        self.assertEqual(tl.format_args(tl.events[1]), '')   # MARK names no args

    def test_unknown_type_keeps_raw_args(self):
        d = make_dump({0: [(10, 99, 3, 4)]})
        tl = Timeline(d)
        self.assertEqual(tl.unknown_types, [99])
        self.assertEqual(tl.name(99), 'UNKNOWN_99')
        self.assertEqual(tl.format_args(tl.events[0]), 'a0=3 a1=4')

    def test_seq_gaps_wrap_at_2_32(self):
        d = make_dump({0: [(1, 6, 0, 0, 0xFFFFFFFE), (2, 6, 0, 0, 0xFFFFFFFF),
                           (3, 6, 0, 0, 0), (4, 6, 0, 0, 3)]})
        self.assertEqual(list(seq_gaps(d.cpus[0].events)), [(3, 1, 2)])


class PairsTest(unittest.TestCase):
    def test_nested_pairs_match(self):
        d = make_dump({0: timer_ring(0, 3)})
        slices, unmatched = pairs.match_cpu(Timeline(d), d.cpus[0].events)
        self.assertEqual([(s.name, s.begin.a0, s.ticks) for s in slices],
                         [('IRQ_TIMER', 0, 500), ('WORK', 0, 200), ('IRQ_TIMER', 1, 500),
                          ('WORK', 1, 200), ('IRQ_TIMER', 2, 500), ('WORK', 2, 200)])
        self.assertEqual(unmatched, [])

    def test_orphans_are_unmatched_and_crossings_pair(self):
        ring = [(0, B['IRQ_TIMER'], 1, 0),      # its END is missing
                (10, B['WORK'], 5, 0),
                (20, B['IRQ_TIMER'], 2, 0),     # crosses WORK 5: still its own pair
                (30, E['WORK'], 5, 0),
                (40, E['IRQ_TIMER'], 2, 0),     # BEGIN 2 stayed open above WORK 5
                (50, E['WORK'], 9, 0)]          # no BEGIN at all
        d = make_dump({0: ring})
        slices, unmatched = pairs.match_cpu(Timeline(d), d.cpus[0].events)
        self.assertEqual([(s.name, s.begin.a0) for s in slices], [('WORK', 5), ('IRQ_TIMER', 2)])
        self.assertEqual([(e.tsc, e.a0) for e in unmatched], [(0, 1), (50, 9)])

    def test_end_before_begin_in_time_is_not_a_slice(self):
        d = make_dump({0: [(100, B['WORK'], 1, 0), (50, E['WORK'], 1, 0)]})
        slices, unmatched = pairs.match_cpu(Timeline(d), d.cpus[0].events)
        self.assertEqual(slices, [])
        self.assertEqual(len(unmatched), 2)


class TextCsvTest(unittest.TestCase):
    def setUp(self):
        ring1 = timer_ring(4000, 2, with_work=False)
        ring1 = ring1[:1] + [(r[0], r[1], r[2], r[3], 5 + i) for i, r in enumerate(ring1[1:])]
        self.dump = make_dump({0: [(2000, 1, 0, 0), (2100, 1, 1, 0)], 1: ring1})
        self.tl = Timeline(self.dump)

    def test_text_columns(self):
        text, _ = render(textout.write_text, self.tl)
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith('# baretrace dump 0: 2 CPUs, 6 events'))
        self.assertEqual(lines[1].split(), ['TIME_US', 'CPU', 'EVENT', 'ARGS'])
        self.assertEqual(lines[2].split(), ['0.000', '0', 'BOOT_PHASE', 'phase=ENTRY'])
        self.assertEqual(lines[3].split(), ['0.050', '0', 'BOOT_PHASE', 'phase=SMP_START'])
        self.assertEqual(lines[4].split(), ['1.000', '1', 'IRQ_TIMER_BEGIN',
                                            'tick=0', 'lateness_tsc=10'])
        # the jump from seq 0 to 5 is shown where it happened
        self.assertEqual(lines[5].split(), ['1.250', '1', '*LOST*', 'events=4', 'first_seq=1', 'cause=damaged'])
        self.assertEqual(lines[6].split(), ['1.250', '1', 'IRQ_TIMER_END', 'tick=0'])
        # aligned: every EVENT column starts at the same offset
        self.assertEqual(len({line.index(line.split()[2]) for line in lines[2:]}), 1)

    def test_csv_rows(self):
        text, _ = render(csvout.write_csv, self.tl)
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(list(rows[0].keys()), list(csvout.COLUMNS))
        self.assertEqual(len(rows), len(self.tl.events))
        first = rows[2]
        self.assertEqual((first['cpu'], first['seq'], first['tsc'], first['ns'],
                          first['type'], first['name'], first['a0'], first['a1'],
                          first['args']),
                         ('1', '0', '4000', '1000', '2', 'IRQ_TIMER_BEGIN', '0', '10',
                          'tick=0 lateness_tsc=10'))


class JsonTest(unittest.TestCase):
    def load(self, dump):
        text, unmatched = render(jsonout.write_json, Timeline(dump))
        return json.loads(text), unmatched

    def test_tracks_slices_instants_counters(self):
        dump = make_dump({0: [(500, 1, 0, 0)] + timer_ring(1000, 4),
                          1: timer_ring(1500, 3), 2: []})
        trace, unmatched = self.load(dump)
        self.assertEqual(unmatched, 0)
        ev = trace['traceEvents']
        names = {e['tid']: e['args']['name'] for e in ev
                 if e['ph'] == 'M' and e['name'] == 'thread_name'}
        self.assertEqual(names, {0: 'CPU 0 (APIC 0)', 1: 'CPU 1 (APIC 2)', 2: 'CPU 2 (APIC 4)'})
        self.assertTrue(all(e['pid'] == 0 for e in ev))
        xs = [e for e in ev if e['ph'] == 'X']
        self.assertEqual(len(xs), 2 * (4 + 3))
        timer0 = [e for e in xs if e['tid'] == 0 and e['name'] == 'IRQ_TIMER']
        self.assertEqual(timer0[1]['ts'], (1000 + 2_000_000 - 500) / 2000)
        self.assertEqual(timer0[1]['dur'], 0.25)
        self.assertEqual(timer0[1]['args'], {'tick': 1, 'lateness_tsc': 11})
        work = [e for e in xs if e['name'] == 'WORK'][0]
        self.assertEqual(work['args'], {'item': 0, 'result': 7})
        inst = [e for e in ev if e['ph'] == 'i']
        self.assertEqual([(i['name'], i['ts'], i['s'], i['args']) for i in inst],
                         [('BOOT_PHASE', 0.0, 't', {'phase': 'ENTRY'})])
        counters = [e for e in ev if e['ph'] == 'C' and e['name'] == 'tick rate CPU 0']
        self.assertEqual(len(counters), 3)
        self.assertAlmostEqual(counters[0]['args']['Hz'], HZ / 2_000_000)
        self.assertIsNone(slices_nest(ev))

    def test_unmatched_halves_are_counted_instants(self):
        ring = [(0, B['IRQ_TIMER'], 1, 0), (10, B['WORK'], 5, 0),
                (20, E['WORK'], 5, 0), (30, E['IRQ_TIMER'], 8, 0)]
        trace, unmatched = self.load(make_dump({0: ring}))
        self.assertEqual(unmatched, 2)
        inst = [(e['name'], e['args'].get('unmatched')) for e in trace['traceEvents']
                if e['ph'] == 'i']
        self.assertEqual(inst, [('IRQ_TIMER_BEGIN', True), ('IRQ_TIMER_END', True)])
        self.assertEqual(trace['otherData']['unmatched_halves'], 2)

    def test_numbers_beyond_2_53_are_exact_hex_strings(self):
        big = 0xFFFFFFFF80001234
        trace, _ = self.load(make_dump({0: [(0, 99, big, 7), (5, 6, 1, 2)]}))
        inst = [e['args'] for e in trace['traceEvents'] if e['ph'] == 'i']
        self.assertEqual(inst, [{'a0': '0xffffffff80001234', 'a1': 7}, {}])

    def test_sequence_gap_is_a_lost_instant(self):
        ring = [(0, 6, 0, 0, 0), (10, 6, 0, 0, 4)]
        trace, _ = self.load(make_dump({0: ring}))
        lost = [e for e in trace['traceEvents'] if e['name'] == '*LOST*']
        self.assertEqual([(e['ts'], e['args']) for e in lost],
                         [(0.005, {'events': 3, 'first_seq': 1, 'cause': 'damaged'})])


class RawTest(unittest.TestCase):
    def test_one_file_per_cpu_exact_records(self):
        dump = make_dump({0: timer_ring(100, 2), 3: [(7, 6, 1, 2)], 4: []})
        tmp = tempfile.mkdtemp(prefix='bt-raw-')
        self.addCleanup(shutil.rmtree, tmp)
        rawout.write_raw(Timeline(dump), tmp)
        self.assertEqual(sorted(os.listdir(tmp)), ['cpu00.bin', 'cpu03.bin', 'cpu04.bin'])
        for c in dump.cpus:
            with open(os.path.join(tmp, f'cpu{c.cpu:02d}.bin'), 'rb') as f:
                data = f.read()
            self.assertEqual(len(data), 32 * len(c.events))
            back = [Event.from_raw(data[i:i + 32]) for i in range(0, len(data), 32)]
            self.assertEqual(back, c.events)


@unittest.skipUnless(BABELTRACE, 'babeltrace2 not installed')
class CtfTest(unittest.TestCase):
    def export(self, dump):
        tmp = tempfile.mkdtemp(prefix='bt-ctf-')
        self.addCleanup(shutil.rmtree, tmp)
        ctfout.write_ctf(Timeline(dump), tmp)
        return tmp

    def test_babeltrace_reads_every_event_with_its_tsc(self):
        dump = make_dump({0: [(500, 1, 1, 0)] + timer_ring(1000, 3000),
                          1: timer_ring(1700, 10), 2: [(900, 99, 5, 6)]})
        out = babeltrace(self.export(dump))
        lines = out.stdout.splitlines()
        self.assertEqual(len(lines), len(dump.events()))
        self.assertEqual([parse_cycles(x) for x in lines], [e.tsc for e in dump.events()])
        self.assertIn('BOOT_PHASE: { cpu_id = 0 }, { seq = 0, flags = 0 }, '
                      '{ phase = ( "SMP_START" : container = 1 ), a1 = 0 }', lines[0])
        self.assertIn('UNKNOWN_99: { cpu_id = 2 }', out.stdout)
        self.assertIn('{ tick = 0, lateness_tsc = 10 }', out.stdout)
        self.assertNotIn('discarded', out.stderr)

    def test_losses_reach_events_discarded(self):
        ring = timer_ring(1000, 5)
        ring = ring[:7] + [r + (i + 10,) for i, r in enumerate(ring[7:])]  # 3 lost
        dump = make_dump({0: ring, 1: timer_ring(1200, 2)},
                         overwritten={1: 50}, dropped={1: 7})
        dump.cpus[0].last_seq += 2          # the last two never arrived
        dump.cpus[0].damaged += 2
        out = babeltrace(self.export(dump))
        self.assertEqual(len(out.stdout.splitlines()), len(dump.events()))
        found = sorted(int(w.split('discarded ')[1].split()[0])
                       for w in out.stderr.splitlines() if 'discarded' in w)
        # the hole inside CPU 0, its tail, and CPU 1's overwritten + dropped
        self.assertEqual(found, [2, 3, 57])

    def test_cpu_whose_tsc_goes_back_is_merged_not_refused(self):
        ring = [(1000, 6, 0, 0), (2000, 6, 1, 0), (500, 6, 2, 0), (600, 6, 3, 0)]
        tmp = self.export(make_dump({0: ring}))
        self.assertEqual(sorted(os.listdir(tmp)), ['metadata', 'stream_00'])
        out = babeltrace(tmp)
        self.assertEqual([parse_cycles(x) for x in out.stdout.splitlines()],
                         [500, 600, 1000, 2000])

    def shared_dump(self):
        """5 CPUs, for stream files of 3 and 2 CPUs: a hole and a tail
        (CPU 0), losses before the first event (1), a TSC going back with
        a hole after it (2), losses and no events (3)."""
        ring0 = timer_ring(1000, 5)
        ring0 = ring0[:7] + [r + (i + 10,) for i, r in enumerate(ring0[7:])]  # 3 lost
        back = [(1500, 6, 0, 0, 0), (2_600_000, 6, 1, 0, 1), (700, 6, 2, 0, 2),
                (4_100_000, 6, 3, 0, 5)]                                 # 2 lost
        dump = make_dump({0: ring0, 1: timer_ring(1200, 3), 2: back, 3: [],
                          4: timer_ring(1100, 4)},
                         overwritten={1: 50, 3: 4}, dropped={1: 7})
        dump.cpus[0].last_seq += 2          # the last two never arrived
        dump.cpus[0].damaged += 2
        return dump

    def test_cpus_share_stream_files_above_max_streams(self):
        dump = self.shared_dump()
        with mock.patch.object(ctfout, 'MAX_STREAMS', 2), \
                mock.patch.object(ctfout, 'SHARED_FILES', 2):
            tmp = self.export(dump)
        self.assertEqual(sorted(os.listdir(tmp)), ['metadata', 'stream_00-02', 'stream_03-04'])
        out = babeltrace(tmp, '--fields=all')
        got = [(parse_cycles(x), int(re.search(r'cpu_id = (\d+)', x)[1]))
               for x in out.stdout.splitlines()]
        self.assertEqual(sorted(got), sorted((e.tsc, e.cpu) for e in dump.events()))
        self.assertEqual([t for t, _ in got], sorted(t for t, _ in got))
        found = sorted(int(w.split('discarded ')[1].split()[0])
                       for w in out.stderr.splitlines() if 'discarded' in w)
        # each loss counted once, in the packet of the CPU's next event (a
        # shared file's packets hold every CPU's events), the tails at the end
        self.assertEqual(sum(found), 2 + 2 + 3 + 4 + 57)
        self.assertEqual(found, [2, 4, 62])

    @unittest.skipUnless(choice.compiled(), 'no compiled core (make build/host/libbtdecode.so)')
    def test_shared_stream_files_in_c_equal_the_reference(self):
        dump = self.shared_dump()
        packed = copy.deepcopy(dump)
        for c in packed.cpus:                 # records, as the compiled decoder gives them
            records = b''.join(e.raw() for e in c.events)
            c.events, c.records = None, records
            self.assertTrue(c.compiled() or not records)
        with mock.patch.object(ctfout, 'MAX_STREAMS', 2), \
                mock.patch.object(ctfout, 'SHARED_FILES', 2):
            ref, native = self.export(dump), self.export(packed)
        for name in os.listdir(ref):
            with open(os.path.join(ref, name), 'rb') as a, \
                    open(os.path.join(native, name), 'rb') as b:
                self.assertEqual(a.read(), b.read(), name)

    def test_packets_fill_their_declared_size(self):
        dump = make_dump({0: timer_ring(0, 5000)}, overwritten={0: 2})
        tmp = self.export(dump)
        with open(os.path.join(tmp, 'stream_00'), 'rb') as f:
            data = f.read()
        offset, packets = 0, 0
        while offset < len(data):
            header = ctfout.HEADER.unpack_from(data, offset)
            self.assertEqual(header[0], ctfout.CTF_MAGIC)
            ctx = ctfout.CONTEXT.unpack_from(data, offset + ctfout.HEADER.size)
            self.assertEqual(ctx[2], ctx[3])          # packet_size == content_size
            offset += ctx[2] // 8
            packets += 1
        self.assertEqual(offset, len(data))
        self.assertEqual(packets, 1 + -(-20000 // ctfout.EVENTS_PER_PACKET))


def babeltrace(path, *options):
    r = subprocess.run([BABELTRACE, '--clock-cycles', *options, path], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError(f'babeltrace2 failed: {r.stderr}')
    return r


def parse_cycles(line):
    return int(line[1:line.index(']')])


class StatsTest(unittest.TestCase):
    def test_nearest_rank(self):
        v = list(range(1, 101))
        self.assertEqual(stats.nearest_rank(v, 50), 50)
        self.assertEqual(stats.nearest_rank(v, 99), 99)
        self.assertEqual(stats.nearest_rank([7], 99), 7)
        self.assertEqual(stats.distribution([4, 1, 3, 2]), stats.Distribution(4, 1, 2, 4, 4))
        self.assertIsNone(stats.distribution([]))

    def test_durations_periods_and_report(self):
        dump = make_dump({0: timer_ring(0, 5, period=1000), 1: timer_ring(7, 3, period=4000)})
        tl = Timeline(dump)
        self.assertEqual(stats.pair_durations(tl), {'IRQ_TIMER': [500] * 8, 'WORK': [200] * 8})
        self.assertEqual(stats.timer_periods(tl), {0: [1000] * 4, 1: [4000] * 2})
        text = '\n'.join(stats.report_lines(tl))
        self.assertIn('IRQ_TIMER  8        500           500        500        500   250.0', text)
        self.assertRegex(text, r'\n\s+1\s+2\s+4000\s+4000\s+4000\s+4000\s+2000\.0')


SIGNED_TYPES = dict(TYPES)
SIGNED_TYPES[2] = EventType(2, 'IRQ_TIMER_BEGIN', 'irq', 'begin', ('tick', 'lateness_tsc'),
                            signed=(False, True))
SIGNED_TYPES[7] = EventType(7, 'TIMER_RANGE', 'work', 'instant', ('min_tsc', 'max_tsc'),
                            signed=(True, True))
MINUS = lambda v: (1 << 64) - v          # noqa: E731  (how the u64 holds -v)


class SignedTest(unittest.TestCase):
    """Arguments the table declares signed are negative numbers in every
    exporter; the raw CSV columns keep the exact u64 record."""

    def setUp(self):
        ring = [(1000, 2, 0, MINUS(40)), (1500, 3, 0, 0), (2000, 7, MINUS(1 << 60), 25),
                (2500, 7, MINUS(3), MINUS(1))]
        self.dump = make_dump({0: ring}, types=SIGNED_TYPES)
        self.tl = Timeline(self.dump)

    def test_text(self):
        text, _ = render(textout.write_text, self.tl)
        self.assertIn('tick=0 lateness_tsc=-40', text)
        self.assertIn(f'min_tsc={-(1 << 60)} max_tsc=25', text)
        self.assertIn('min_tsc=-3 max_tsc=-1', text)
        self.assertNotIn(str(MINUS(40)), text)

    def test_csv(self):
        text, _ = render(csvout.write_csv, self.tl)
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(rows[0]['args'], 'tick=0 lateness_tsc=-40')
        self.assertEqual(rows[0]['a1'], str(MINUS(40)))       # the raw record
        self.assertEqual(rows[3]['args'], 'min_tsc=-3 max_tsc=-1')

    def test_json(self):
        trace = json.loads(render(jsonout.write_json, self.tl)[0])
        by_name = {}
        for e in trace['traceEvents']:
            by_name.setdefault(e['name'], []).append(e)
        self.assertEqual(by_name['IRQ_TIMER'][0]['args']['lateness_tsc'], -40)
        ranges = [e['args'] for e in by_name['TIMER_RANGE']]
        self.assertEqual(ranges[1], {'min_tsc': -3, 'max_tsc': -1})
        # beyond 2^53 in magnitude: an exact (negative) hex string
        self.assertEqual(ranges[0]['min_tsc'], f'{-(1 << 60):#x}')
        self.assertEqual(ranges[0]['max_tsc'], 25)

    @unittest.skipUnless(BABELTRACE, 'babeltrace2 not installed')
    def test_ctf_signed_fields(self):
        tmp = tempfile.mkdtemp(prefix='bt-ctf-')
        self.addCleanup(shutil.rmtree, tmp)
        ctfout.write_ctf(self.tl, tmp)
        with open(os.path.join(tmp, 'metadata')) as f:
            meta = f.read()
        self.assertIn('int64_t lateness_tsc;', meta)
        self.assertIn('uint64_t tick;', meta)
        out = babeltrace(tmp).stdout
        self.assertIn('{ tick = 0, lateness_tsc = -40 }', out)
        self.assertIn('{ min_tsc = -3, max_tsc = -1 }', out)


if __name__ == '__main__':
    unittest.main()
