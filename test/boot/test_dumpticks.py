"""CPU 0 keeps its interrupts through a dump (issue #10, "The boot CPU
goes deaf during a dump").

With timer_hz=1000 and full rings, press d twice. The second dump holds
the first dump's whole period (its DUMP_BEGIN..DUMP_END on CPU 0), so the
timer ticks CPU 0 took while it streamed dump 1 can be examined: there
must be one per period, numbered consecutively, as late as ticks outside
a dump are and no later. Before the fix the console lock did cli for the
whole transfer: 2 ticks in a 1.9 s dump, one of them as late as the dump
was long.
"""
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

from harness import Machine
from btlib.dump import dumplog
from btlib.dump.model import as_signed

DUMP_TIMEOUT_S = 120
TIMER_HZ = 1000
RING_EVENTS = 8192             # CPU 0 fills it in ~4 s of ticks
FILL_S = 6.0                   # settle until the rings have wrapped
# Under TCG on a loaded host ticks are lost and late by up to ~100 ms,
# inside a dump and outside alike, so the comparison is statistical:
# Inside, at least a fifth of the outside tick rate: a deaf CPU 0 (the bug)
# ticks in ~0.1% of the periods; a loaded CI host, where vCPU 0's port I/O
# to the serial socket delays QEMU's timer thread, was seen at 37% vs 82%.
RATE_FRACTION = 0.2
JITTER_FACTOR = 3              # 90th percentile lateness: 3x outside's ...
FLOOR_PERIODS = 20             # ... or 20 periods, whichever is larger
STALL_FRACTION = 0.25          # no single tick late by a quarter of the dump ...
STALL_OUTSIDE_FACTOR = 2       # ... or by twice the worst stall outside it


def named(dump, name):
    return {i for i, t in dump.types.items() if t.name == name}


class DumpKeepsTicking(unittest.TestCase):

    def dump(self, m):
        start = len(m.output())
        m.send(b"d")
        m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", DUMP_TIMEOUT_S, start=start)
        dumps = dumplog.parse_log(m.output()[start:])
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
        self.assertTrue(inside, "not one tick during the dump")
        # Consecutive tick numbers, from the last tick before to the first after.
        span = ticks[max(inside[0] - 1, 0):inside[-1] + 2]
        numbers = [e.a0 for e in span]
        self.assertEqual(numbers, list(range(numbers[0], numbers[0] + len(numbers))),
                         "a tick is missing from the dump's period")
        # As many ticks per period inside as outside (TCG loses some under
        # host load, inside and outside alike; a deaf CPU loses them all).
        rate_in = len(inside) / ((hi - lo) / period)
        rate_out = len(outside) / ((lo - ticks[outside[0]].tsc) / period)
        self.assertGreaterEqual(rate_in, rate_out * RATE_FRACTION,
                                f"{rate_in:.0%} of the periods ticked during the dump, "
                                f"{rate_out:.0%} before it")
        # Typical lateness as outside; no stall of the dump's making.
        late_in = self.p90([as_signed(ticks[i].a1) for i in inside])
        late_out = self.p90([as_signed(ticks[i].a1) for i in outside])
        self.assertLessEqual(late_in, max(JITTER_FACTOR * late_out, FLOOR_PERIODS * period),
                             f"90th percentile tick lateness {late_in} during the dump, "
                             f"{late_out} outside (TSC ticks)")
        # A deaf CPU makes one tick as late as the dump is long; a host that
        # starves vCPU 0 makes ticks late outside a dump too, so the bound
        # is a quarter of the dump or twice the worst stall outside it.
        edges = [inside[0] - 1] + inside + [inside[-1] + 1]
        worst_late = max(as_signed(ticks[i].a1) for i in edges)
        worst_gap = max(ticks[i].tsc - ticks[i - 1].tsc for i in edges[1:])
        late_bound = max((hi - lo) * STALL_FRACTION,
                         STALL_OUTSIDE_FACTOR * max(as_signed(ticks[i].a1) for i in outside))
        gap_bound = max((hi - lo) * STALL_FRACTION, STALL_OUTSIDE_FACTOR *
                        max(ticks[i].tsc - ticks[i - 1].tsc for i in outside[1:]))
        self.assertLess(worst_late, late_bound,
                        f"a tick {worst_late} TSC late in a dump {hi - lo} TSC long")
        self.assertLess(worst_gap, gap_bound,
                        f"no tick for {worst_gap} TSC in a dump {hi - lo} TSC long")

    @staticmethod
    def p90(values):
        values = sorted(values)
        return values[int(0.9 * (len(values) - 1))]


if __name__ == "__main__":
    unittest.main()
