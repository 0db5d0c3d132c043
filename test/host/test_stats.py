"""decode --stats: the numbers computed in C from records (decoder/stats.c,
pairing by the kernel's src/recorder/pairing.c) against the Python reference
in btlib.timeline.stats, on real-kernel fixtures, gen_dump dumps, damaged logs and
adversarial rings (TSCs going backwards, 64-bit extremes, orphans, depth
overflow, END before BEGIN, shared base names, dumps without pair=),
through the shared oracle (oracle.py); the whole command with and without
the library (BT_PURE_PYTHON=1) is test_oracle's.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_stats.py'
"""

import io
import random
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))
sys.path.insert(0, str(ROOT / 'test' / 'host'))

from btlib.dump import dumplog
from btlib.timeline import stats
from btlib.dump.model import CpuInfo, Dump, Event, EventType
from btlib.timeline.pairs import MAX_DEPTH
from btlib.timeline.timeline import Timeline
from oracle import exported, packed_copy
from test_decode_support import require_compiled_core
from test_pairs import comparison_logs

TOP = (1 << 64) - 1
TIMER_B, TIMER_E, WB, WE, XB, X2, XE, X2E, INST = 3, 4, 16, 17, 40, 41, 42, 43, 7


def report(dump, native):
    """write_stats' output for dump: from records in C, or in Python."""
    if native and stats.native_figures(Timeline(packed_copy(dump))) is None:
        raise AssertionError('the compiled statistics were not used')
    return exported(stats.write_stats, dump, native, out=io.StringIO())


def table(with_pairs=True):
    """Event types: the timer pair, WORKLOAD, two BEGIN types sharing the
    base name X (X_BEGIN and X) and an instant."""
    def t(i, name, kind, pair=None):
        return EventType(i, name, 'c', kind, ('a', 'b'), pair=pair if with_pairs else None)
    return {x.id: x for x in (
        t(TIMER_B, 'IRQ_TIMER_BEGIN', 'begin', TIMER_E), t(TIMER_E, 'IRQ_TIMER_END', 'end', TIMER_B),
        t(WB, 'WORKLOAD_BEGIN', 'begin', WE), t(WE, 'WORKLOAD_END', 'end', WB),
        t(XB, 'X_BEGIN', 'begin', XE), t(XE, 'X_END', 'end', XB),
        t(X2, 'X', 'begin', X2E), t(X2E, 'X2_END', 'end', X2), t(INST, 'HOTKEY', 'instant'))}


def dump_of(rings, types, hz=2_400_000_000):
    """A Dump of rings {cpu: [(tsc, type, a0)]}."""
    cpus = []
    for cpu, items in rings.items():
        events = [Event(cpu, seq, tsc, typ, 0, a0, 0) for seq, (tsc, typ, a0) in enumerate(items)]
        cpus.append(CpuInfo(cpu, cpu, 64, len(events), 0, 0, 0 if events else None,
                            len(events) - 1 if events else None, events))
    return Dump(0, {}, 2, hz, cpus, types, {}, True, sum(map(len, rings.values())), 0, 0, [])


class NativeStats(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_compiled_core('the compiled statistics')

    def same(self, dump, label):
        got = report(dump, native=True)
        self.assertEqual(got, report(dump, native=False), label)
        return got

    def test_logs(self):
        logs = comparison_logs(['cpus=3', 'events=6000', 'cap=4096', 'seed=9'],
                               ['cpus=4', 'events=3000', 'cap=1024', 'workload=mixed', 'seed=2'],
                               damaged=8, seed=3)
        pairs = 0
        for i, log in enumerate(logs):
            for d in dumplog.parse_log(log):
                pairs += self.same(d, f'log {i} dump {d.index}').count('IRQ_TIMER ')
        self.assertGreater(pairs, 5, 'the logs must have BEGIN/END durations')

    def test_extremes_and_backwards_tscs(self):
        rings = {0: [(TOP, TIMER_B, 1), (TOP, TIMER_E, 1), (0, TIMER_B, 2), (TOP, TIMER_B, 3),
                     (5, TIMER_B, 4), (5, TIMER_B, 5), (1 << 63, TIMER_B, 6)],
                 1: [(10, WB, TOP), (TOP, WE, TOP), (20, XB, 0), (21, X2, 0), (22, X2E, 0),
                     (1 << 40, XE, 0)],
                 2: [], 3: [(7, INST, 0), (1, 999, 0)]}
        for with_pairs in (True, False):
            got = self.same(dump_of(rings, table(with_pairs)), f'pairs={with_pairs}')
        self.assertIn('-18446744073709551615', got)     # the period from TOP back to 0

    def test_orphans_depth_and_end_before_begin(self):
        deep = [(i, TIMER_B, i) for i in range(MAX_DEPTH + 5)] + [(900, TIMER_E, 2)]
        rings = {0: deep + [(1000, TIMER_E, 70), (1001, TIMER_E, MAX_DEPTH + 3)],
                 1: [(50, WB, 1), (40, WE, 1), (60, WB, 1), (61, TIMER_B, 0), (70, WE, 1),
                     (71, TIMER_E, 0)]}
        self.same(dump_of(rings, table()), 'orphans')

    def test_random_rings_and_ranks(self):
        """Every count from 1 up (the nearest ranks), narrow and wide value
        ranges (counted and sorted in C), several groups at once."""
        rnd = random.Random(21)
        kinds = [TIMER_B, TIMER_E, WB, WE, XB, XE, X2, X2E, INST]
        for case in range(30):
            rings = {}
            for cpu in range(rnd.randrange(1, 12)):
                tsc, items = rnd.randrange(1 << 40), []
                wide = rnd.random() < 0.3
                for _ in range(rnd.randrange(0, 400)):
                    tsc += rnd.randrange(-(1 << 20) if wide else -3, (1 << 24) if wide else 300)
                    items.append((tsc % (1 << 64), rnd.choice(kinds), rnd.randrange(2)))
                rings[cpu] = items
            for with_pairs in (True, False):
                self.same(dump_of(rings, table(with_pairs), hz=rnd.choice((3, 2_400_000_000))),
                          f'case {case} pairs={with_pairs}')

    def test_no_cpus(self):
        self.same(dump_of({}, table()), 'no CPUs')


if __name__ == '__main__':
    unittest.main()
