"""btlib.pairs: BEGIN/END partners from the dump's pair= and the one
nesting rule the kernel's `s` summary uses too (docs/dump-format.md,
"BEGIN/END pairs"); test_workloads.Schema compares both on a real dump.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_pairs.py'
"""

import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))

from btlib.model import CpuInfo, Dump, Event, EventType   # noqa: E402
from btlib.pairs import match_cpu                         # noqa: E402
from btlib.timeline import Timeline                       # noqa: E402

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


class Pairs(unittest.TestCase):
    def test_nested_begins_of_one_pair_and_a0_both_count(self):
        # CPU 0 of a workload run: the run's BEGIN, then its own part's BEGIN
        tl = timeline([(10, WB, 5), (20, WB, 5), (25, TB, 1), (26, TE, 1), (30, WE, 5),
                       (50, WE, 5)])
        self.assertEqual(durations(tl), ([('IRQ_TIMER', 1), ('WORKLOAD', 10),
                                          ('WORKLOAD', 40)], []))

    def test_an_end_gives_up_the_begins_above_its_own(self):
        tl = timeline([(10, WB, 5), (20, TB, 1), (30, WE, 5), (40, TE, 1)])
        self.assertEqual(durations(tl), ([('WORKLOAD', 20)], [(20, TB), (40, TE)]))

    def test_partners_come_from_pair_not_from_names(self):
        tl = timeline([(10, ODD_B, 0), (15, ODD_E, 0)])
        self.assertEqual(durations(tl), ([('SPAN', 5)], []))
        old = timeline([(10, ODD_B, 0), (15, ODD_E, 0)], with_pairs=False)
        self.assertEqual(durations(old), ([], [(10, ODD_B), (15, ODD_E)]),
                         'without pair= only X_BEGIN/X_END pair up')

    def test_end_before_its_begin_is_no_duration(self):
        tl = timeline([(10, WB, 5), (5, WE, 5)])
        self.assertEqual(durations(tl), ([], [(10, WB), (5, WE)]))


if __name__ == '__main__':
    unittest.main()
