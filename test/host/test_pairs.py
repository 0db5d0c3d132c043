"""btlib.timeline.pairs: BEGIN/END partners from the dump's pair= and the one
nesting rule the kernel's `s` summary uses too (docs/dump-format.md,
"BEGIN/END pairs"); test_workloads.Schema compares both on a real dump.
The rule runs in Python and in C (the kernel's src/recorder/pairing.c in
libbtdecode.so): NativeRule compares the two on fixtures, gen_dump dumps,
damaged logs and adversarial orders.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_pairs.py'
"""

import random
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))
sys.path.insert(0, str(ROOT / 'test' / 'host'))

from btlib.dump import dumplog
from btlib.dump.model import CpuInfo, Dump, Event, EventType
from btlib.timeline.pairs import MAX_DEPTH, match_cpu, match_records
from btlib.timeline.timeline import Timeline
from test_decode_support import flip_bits, generate, require_compiled_core
import oracle

WB, WE, TB, TE, ODD_B, ODD_E = 16, 17, 3, 4, 40, 41


def types(with_pairs):
    def t(i, name, kind, pair):
        return EventType(i, name, 'X', kind, ('a', ''), pair=pair if with_pairs else None)
    return {i: t(i, n, k, p) for i, n, k, p in (
        (WB, 'WORKLOAD_BEGIN', 'begin', WE), (WE, 'WORKLOAD_END', 'end', WB),
        (TB, 'IRQ_TIMER_BEGIN', 'begin', TE), (TE, 'IRQ_TIMER_END', 'end', TB),
        # partners by pair= although their names do not say so
        (ODD_B, 'SPAN_BEGIN', 'begin', ODD_E), (ODD_E, 'OTHER_END', 'end', ODD_B))}


def timeline(evs, with_pairs=True):
    events = [Event(0, seq, tsc, typ, 0, a0, 0) for seq, (tsc, typ, a0) in enumerate(evs)]
    cpu = CpuInfo(0, 0, 64, len(events), 0, 0, 0, len(events) - 1, events)
    dump = Dump(0, {}, 2, 1000, [cpu], types(with_pairs), {}, True, len(events), 0, 0, [])
    return Timeline(dump)


def durations(tl):
    slices, unmatched = match_cpu(tl, tl.dump.cpus[0].events)
    return sorted((s.name, s.ticks) for s in slices), [(e.tsc, e.type) for e in unmatched]


def python_rule(tl, events):
    """match_cpu's answer in pure Python, as match_records' indices."""
    with oracle.reference_path():
        slices, unmatched = match_cpu(tl, events)
    at = {id(e): i for i, e in enumerate(events)}
    return [(at[id(s.begin)], at[id(s.end)]) for s in slices], [at[id(e)] for e in unmatched]


def comparison_logs(*gen_dump_args, damaged=10, seed=7):
    """The fixtures, a gen_dump log per argument list, and `damaged` copies
    of each of those with a few bits flipped inside the dump."""
    made = [generate(*args)[0] for args in gen_dump_args]
    rnd = random.Random(seed)
    bad_logs = [flip_bits(log, rnd, 8) for log in made for _ in range(damaged)]
    fixtures = [p.read_bytes() for p in sorted((ROOT / 'test' / 'fixtures').glob('*.log'))]
    return fixtures + made + bad_logs


def records_of(events):
    return b''.join(e.raw() for e in events)


class Pairs(unittest.TestCase):
    def test_nested_begins_of_one_pair_and_a0_both_count(self):
        # CPU 0 of a workload run: the run's BEGIN, then its own part's BEGIN
        tl = timeline([(10, WB, 5), (20, WB, 5), (25, TB, 1), (26, TE, 1), (30, WE, 5),
                       (50, WE, 5)])
        self.assertEqual(durations(tl), ([('IRQ_TIMER', 1), ('WORKLOAD', 10),
                                          ('WORKLOAD', 40)], []))

    def test_pairs_that_cross_are_both_durations(self):
        """B1 B2 E1 E2 with a steady TSC: two durations that cross (issue
        34: the old rule gave up B2 when E1 closed B1, then E2 found
        nothing, and the exports called them halves without a partner)."""
        tl = timeline([(10, WB, 5), (20, TB, 1), (30, WE, 5), (40, TE, 1)])
        self.assertEqual(durations(tl), ([('IRQ_TIMER', 20), ('WORKLOAD', 20)], []))

    def test_pairs_that_cross_are_exported_as_crossing(self):
        import io
        from btlib.export import perfettoout
        tl = timeline([(10, WB, 5), (20, TB, 1), (30, WE, 5), (40, TE, 1)])
        summary = perfettoout.write_perfetto(tl, io.BytesIO())
        # the one that cannot nest on the CPU's track: two instants, crossing=
        self.assertEqual((summary.crossing_slices, summary.unmatched_halves), (1, 0))

    def test_a_begin_whose_end_never_came_is_unmatched_at_the_end(self):
        tl = timeline([(10, WB, 5), (20, TB, 1), (30, WE, 5)])
        self.assertEqual(durations(tl), ([('WORKLOAD', 20)], [(20, TB)]))

    def test_partners_come_from_pair_not_from_names(self):
        tl = timeline([(10, ODD_B, 0), (15, ODD_E, 0)])
        self.assertEqual(durations(tl), ([('SPAN', 5)], []))
        old = timeline([(10, ODD_B, 0), (15, ODD_E, 0)], with_pairs=False)
        self.assertEqual(durations(old), ([], [(10, ODD_B), (15, ODD_E)]),
                         'without pair= only X_BEGIN/X_END pair up')

    def test_end_before_its_begin_is_no_duration(self):
        tl = timeline([(10, WB, 5), (5, WE, 5)])
        self.assertEqual(durations(tl), ([], [(10, WB), (5, WE)]))


class NativeRule(unittest.TestCase):
    """match_records (C, the kernel's pairing.c) against match_cpu in
    Python: the same slices and the same unmatched halves."""

    @classmethod
    def setUpClass(cls):
        require_compiled_core('the compiled pairing rule')

    def same(self, tl, events, label=''):
        want = python_rule(tl, events)
        got = match_records(tl, records_of(events))
        self.assertIsNotNone(got, 'the compiled rule was not used')
        self.assertEqual((got[0], list(got[1])), want, label)
        # match_cpu given records takes the compiled path: the same Events
        slices, unmatched = match_cpu(tl, records_of(events))
        self.assertEqual([(s.order, s.name, s.begin, s.end) for s in slices],
                         [(b, tl.views[events[b].type].base, events[b], events[e])
                          for b, e in want[0]], label)
        self.assertEqual(unmatched, [events[i] for i in want[1]], label)
        return want

    def test_the_cases_above(self):
        for evs in ([(10, WB, 5), (20, WB, 5), (25, TB, 1), (26, TE, 1), (30, WE, 5), (50, WE, 5)],
                    [(10, WB, 5), (20, TB, 1), (30, WE, 5), (40, TE, 1)],
                    [(10, ODD_B, 0), (15, ODD_E, 0)], [(10, WB, 5), (5, WE, 5)], []):
            for with_pairs in (True, False):
                tl = timeline(evs, with_pairs)
                self.same(tl, tl.dump.cpus[0].events, f'{evs} {with_pairs}')

    def test_depth_overflow_end_before_begin_and_orphans(self):
        deep = [(1, WB, 9)] + [(1 + i, TB, i) for i in range(1, MAX_DEPTH + 3)]
        cases = [deep + [(1000, WE, 9)], deep + [(1000, TE, 1)], deep + [(1000, TE, 3)],
                 deep + [(1000, TE, MAX_DEPTH + 2)] * 3,
                 [(10, WB, 5), (9, WE, 5), (8, WE, 5), (20, WB, 5), (20, WE, 5)],
                 [(5, TE, 1), (6, WE, 2), (7, TB, 1), (8, TB, 1), (9, WE, 1), (10, TE, 1)]]
        for evs in cases:
            tl = timeline(evs)
            want = self.same(tl, tl.dump.cpus[0].events, str(evs[-3:]))
            self.assertTrue(want[1] or not want[0])
        tl = timeline(deep + [(1000, TE, 3)])
        slices, unmatched = match_records(tl, records_of(tl.dump.cpus[0].events))
        self.assertEqual(slices, [(3, MAX_DEPTH + 3)])
        self.assertEqual(list(unmatched), [0, 1, 2] + list(range(4, MAX_DEPTH + 3)))

    def test_random_orders(self):
        rnd = random.Random(12)
        kinds = [WB, WE, TB, TE, ODD_B, ODD_E, 1, 99]      # 1, 99: not in the table
        for n in range(400):
            evs = [(rnd.randrange(0, 1 << 64 if n % 7 == 0 else 60), rnd.choice(kinds),
                    rnd.randrange(3) if n % 5 else rnd.randrange(1 << 64))
                   for _ in range(rnd.randrange(0, 200 if n % 10 else 3000))]
            for with_pairs in (True, False):
                tl = timeline(evs, with_pairs)
                self.same(tl, tl.dump.cpus[0].events, f'case {n} {with_pairs}')

    def test_dumps(self):
        logs = comparison_logs(['cpus=3', 'events=5000', 'cap=4096', 'seed=3'],
                               ['cpus=2', 'events=900', 'cap=512', 'workload=mixed', 'seed=8'])
        halves = 0
        for i, log in enumerate(logs):
            for d in dumplog.parse_log(log):
                tl = Timeline(d)
                for c in d.cpus:
                    s, u = self.same(tl, c.events, f'log {i} dump {d.index} cpu {c.cpu}')
                    halves += len(s) + len(u)
        self.assertGreater(halves, 1000)


if __name__ == '__main__':
    unittest.main()
