"""CPU 0 keeps its interrupts through a dump (issue #10, "The boot CPU
goes deaf during a dump").

With timer_hz=1000 and full rings, press d twice. The second dump holds
the first dump's whole period (its DUMP_BEGIN..DUMP_END on CPU 0), so the
timer ticks CPU 0 took while it streamed dump 1 can be examined: there
must be one per period, numbered consecutively, as late as ticks outside
a dump are and no later. Before the fix the console lock did cli for the
whole transfer: no tick at all inside, then one tick as late as the dump
was long.
"""
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

from harness import Machine                     # noqa: E402
from btlib import dumpfmt                       # noqa: E402

DUMP_TIMEOUT_S = 120
TIMER_HZ = 1000
RING_EVENTS = 8192             # CPU 0 fills it in ~4 s of ticks
FILL_S = 6.0                   # settle until the rings have wrapped
# Inside the dump, the worst tick may be this much worse than the worst
# one outside it (TCG's own jitter), or this floor, whichever is larger.
JITTER_FACTOR = 3
FLOOR_PERIODS = 20


def named(dump, name):
    return {i for i, t in dump.types.items() if t.name == name}


class DumpKeepsTicking(unittest.TestCase):

    def dump(self, m):
        start = len(m.output())
        m.send(b"d")
        m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", DUMP_TIMEOUT_S, start=start)
        dumps = dumpfmt.parse_log(m.output()[start:])
        self.assertTrue(dumps and dumps[-1].complete, "dump incomplete")
        return dumps[-1]

    def test_timer_ticks_through_a_dump(self):
        cmdline = f"timer_hz={TIMER_HZ} trace.events={RING_EVENTS}"
        with Machine(self.id(), smp=2, cmdline=cmdline) as m:
            m.ready()
            time.sleep(FILL_S)
            first = self.dump(m)
            self.assertGreater(first.cpu(0).overwritten, 0, "rings not full yet")
            second = self.dump(m)
            self.assertEqual(m.faults(), [])
        self.check_ticks(second, int(first.header.get("dump", "1")))

    def check_ticks(self, d, dump_no):
        cpu0 = sorted(d.cpu(0).events, key=lambda e: e.tsc)
        begin = [e.tsc for e in cpu0 if e.type in named(d, "DUMP_BEGIN") and e.a0 == dump_no]
        end = [e.tsc for e in cpu0 if e.type in named(d, "DUMP_END") and e.a0 == dump_no]
        self.assertTrue(begin and end, f"dump {dump_no}'s period is not in the next dump")
        lo, hi = begin[0], end[0]
        ticks = [e for e in cpu0 if e.type in named(d, "IRQ_TIMER_BEGIN")]
        inside = [i for i, e in enumerate(ticks) if lo <= e.tsc <= hi]
        outside = [i for i, e in enumerate(ticks) if e.tsc < lo]
        period = d.tsc_hz // TIMER_HZ
        self.assertGreater(len(outside), 100, "too few ticks before the dump to compare")
        # One tick per period inside the dump (give or take the edges).
        self.assertGreaterEqual(len(inside), (hi - lo) // period // 2,
                                f"{len(inside)} ticks in a dump of {(hi - lo) // period} periods")
        # Consecutive tick numbers, from the last tick before to the first after.
        span = ticks[max(inside[0] - 1, 0):inside[-1] + 2]
        numbers = [e.a0 for e in span]
        self.assertEqual(numbers, list(range(numbers[0], numbers[0] + len(numbers))),
                         "a tick is missing from the dump's period")

        def worst(idx):
            late = max(ticks[i].a1 for i in idx)
            gap = max(ticks[i].tsc - ticks[i - 1].tsc for i in idx if i > 0)
            return late, gap

        in_late, in_gap = worst([inside[0] - 1] + inside + [inside[-1] + 1])
        out_late, out_gap = worst(outside)
        floor = FLOOR_PERIODS * period
        self.assertLessEqual(in_late, max(JITTER_FACTOR * out_late, floor),
                             f"tick lateness {in_late} during the dump, {out_late} outside")
        self.assertLessEqual(in_gap, max(JITTER_FACTOR * out_gap, floor),
                             f"ticks {in_gap} TSC apart during the dump, {out_gap} outside")


if __name__ == "__main__":
    unittest.main()
