"""The JSON export written in C (decoder/jsonout.c) against the pure-Python
writer (jsonout._cpu_records), byte for byte.

On workload dumps (gen_dump's timer and mixed workloads, wrapped rings,
excluded and refused slots, the fixtures), on logs damaged as a serial
line damages them, and on dumps built event by event for what real dumps
rarely hold: signed arguments, values at and beyond 2^53, phase names,
unknown types, unmatched and crossing halves, END before BEGIN, holes at
both ends, tick periods beyond 2^53 and odd clock rates. Also decode -f
json against BT_PURE_PYTHON=1 decode -f json (test_oracle). Both paths
run through the shared oracle (oracle.py).

Run from the repository root:
    python3 -m unittest discover -s test/host -t . -p 'test_json_native.py'
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
from btlib.export import jsonout
from btlib.dump.model import CpuInfo, Dump, Event, EventType
from btlib.timeline.timeline import TIMER_EVENT, Timeline
import oracle
from test_decode_support import generate, require_compiled_core

U64 = 1 << 64
BIG = (0, 1, 3, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 63) - 1, 1 << 63,
       U64 - (1 << 53), U64 - (1 << 53) + 1, U64 - 1)
PHASES = {0: 'ENTRY', 1: 'SMP_START', (1 << 53) - 1: 'EDGE', 1 << 53: 'TOO_BIG',
          U64 + 5: 'HUGE'}


def both(dump):
    """(C output, Python output) of write_json on dump, each with its
    unmatched count; fails unless the C writer is what ran first."""
    tl = Timeline(dump)
    w = jsonout._Writer(tl)
    timer = next((t.id for t in dump.types.values() if t.name == TIMER_EVENT), None)
    assert jsonout._native_writer(w, tl, timer) is not None, 'the C writer is not used'

    def run():
        out = io.StringIO(newline='')
        n = jsonout.write_json(Timeline(dump), out)
        return out.getvalue(), n
    return oracle.both(run)


def types(with_pairs):
    def t(i, name, kind, args, pair=None, signed=(False, False), cat='misc'):
        return EventType(i, name, cat, kind, args, signed=signed,
                         pair=pair if with_pairs else None)
    return {x.id: x for x in (
        t(1, 'BOOT_PHASE', 'instant', ('phase', 'value'), cat='boot'),
        t(2, 'IRQ_TIMER_BEGIN', 'begin', ('tick', 'lateness_tsc'), 3, (False, True), 'irq'),
        t(3, 'IRQ_TIMER_END', 'end', ('tick', ''), 2),
        t(4, 'WORK_BEGIN', 'begin', ('item', 'phase'), 5),
        t(5, 'WORK_END', 'end', ('item', 'result'), 4, (False, True)),
        t(6, 'MARK', 'instant', ('', '')),
        t(7, 'TIMER_RANGE', 'instant', ('min_tsc', 'max_tsc'), signed=(True, True)),
        t(8, 'SPAN_BEGIN', 'begin', ('x', 'y'), 9, (True, False)),
        t(9, 'OTHER_END', 'end', ('x', 'x'), 8, (False, True)),       # end_x
        t(10, 'we"ird\u00fc', 'instant', ('a"b', '\u00e9'), cat='c\\at'),
        t(11, 'LONE_BEGIN', 'begin', ('a', 'b')),                     # no partner
        t(70000, 'BEYOND_U16_BEGIN', 'begin', ('a', ''), 11),          # no record has it
    )}


def ring(rnd, cpu, n, hz):
    """n random events of CPU cpu: runs of nested BEGIN/END, instants,
    unknown types (99, 300), ticks (some periods tie at %.3f, some beyond
    2^53), TSC going back, seq holes."""
    out, tsc, seq = [], rnd.randrange(1 << 40), rnd.randrange(1 << 32)
    kinds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 99, 300]
    for _ in range(n):
        r = rnd.random()
        if r < 0.05:
            tsc = (tsc - rnd.randrange(1000)) % U64            # TSC going back
        elif r < 0.08:
            tsc = (tsc + rnd.randrange(1 << 60)) % U64         # a period beyond 2^53
        elif r < 0.15:
            tsc = (tsc + 16 * rnd.randrange(1, 4)) % U64       # ticks of hz=16001: x.0625
        else:
            tsc = (tsc + rnd.randrange(1, 5000)) % U64
        seq = (seq + (1 if rnd.random() > 0.03 else rnd.randrange(2, 50))) % (1 << 32)
        typ = rnd.choice(kinds)
        a0 = rnd.randrange(3) if rnd.random() < 0.7 else rnd.choice(BIG + (rnd.randrange(U64),))
        a1 = rnd.choice(BIG + (rnd.randrange(U64), rnd.randrange(1 << 53)))
        out.append(Event(cpu, seq, tsc, typ, rnd.randrange(256), a0, a1))
    return out


def built_dump(rnd, hz, with_pairs, ncpus=3, n=300):
    cpus = []
    for cpu in range(ncpus):
        events = ring(rnd, cpu, rnd.randrange(0, n), hz)
        first = events[0].seq - rnd.choice((0, 0, 4)) if events else None
        last = events[-1].seq + rnd.choice((0, 0, 2)) if events else None
        cpus.append(CpuInfo(
            cpu=cpu, apic_id=rnd.choice((-1, cpu)), capacity=1024, recorded=len(events),
            overwritten=rnd.choice((0, 7)), refused=rnd.choice((0, 3)),
            first_seq=None if first is None else first % (1 << 32),
            last_seq=None if last is None else last % (1 << 32), events=events,
            damaged=rnd.choice((0, 2)), excluded=rnd.choice((0, 1)), pinned=rnd.choice((0, 4)),
            summary_seen=True))
    return Dump(index=0, header={'tsc_warp': '40'}, version=2, tsc_hz=hz, cpus=cpus,
                types=types(with_pairs), phases=dict(PHASES), complete=True,
                end_events=sum(len(c.events) for c in cpus), damaged_lines=0,
                missing_lines=0, warnings=[])


def damaged(log, rnd):
    """log with a few lines dropped, duplicated, cut or bit-flipped."""
    lines = log.split(b'\n')
    for _ in range(rnd.randrange(1, 6)):
        i = rnd.randrange(len(lines))
        what = rnd.randrange(4)
        if what == 0:
            del lines[i]
        elif what == 1:
            lines.insert(rnd.randrange(len(lines)), lines[i])
        elif what == 2:
            lines[i] = lines[i][:rnd.randrange(len(lines[i]) + 1)]
        elif lines[i]:
            b = bytearray(lines[i])
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(7)
            lines[i] = bytes(b)
    return b'\n'.join(lines)


class NativeJson(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_compiled_core('the compiled JSON writer')

    def same(self, dump, label):
        native, python = both(dump)
        self.assertEqual(native[1], python[1], label)
        if native[0] != python[0]:        # the first differing line, not 100 MB of diff
            a, b = native[0].split('\n'), python[0].split('\n')
            k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            self.fail(f'{label}: line {k}: C {a[k:k + 1]} Python {b[k:k + 1]}')
        return native[0]

    def test_workload_dumps(self):
        logs = [p.read_bytes() for p in sorted((ROOT / 'test' / 'fixtures').glob('*.log'))]
        logs += [generate(*args)[0] for args in (
            ('cpus=3', 'events=3000', 'cap=1024', 'seed=3'),                  # wrapped
            ('cpus=2', 'events=1500', 'cap=2048', 'workload=mixed', 'seed=8'),
            ('cpus=2', 'events=800', 'cap=512', 'excluded=3', 'refused=5', 'seed=4'),
            ('cpus=2', 'events=600', 'cap=1024', 'clear_at=200', 'tsc_hz=3', 'seed=5'),
            ('cpus=1', 'events=400', 'cap=512', 'previous=1', 'tsc_hz=0', 'seed=6'))]
        text = ''
        for i, log in enumerate(logs):
            for d in dumplog.parse_log(log):
                text += self.same(d, f'log {i} dump {d.index}')
        for what in ('"ph":"X"', '"ph":"C"', '*LOST*', '"unmatched":true', '"0x'):
            self.assertIn(what, text)

    def test_damaged_logs(self):
        rnd = random.Random(11)
        bases = [generate('cpus=3', 'events=700', 'cap=512', 'seed=9')[0],
                 generate('cpus=2', 'events=500', 'cap=512', 'workload=mixed', 'seed=2')[0]]
        for n in range(30):
            log = damaged(bases[n % 2], rnd)
            for d in dumplog.parse_log(log):
                self.same(d, f'trial {n} dump {d.index}')

    def test_built_dumps(self):
        rnd = random.Random(5)
        text = ''
        for n in range(40):
            hz = (2_000_000_000, 0, 1, 3, 16001, (1 << 53) + 1, U64 - 1)[n % 7]
            text += self.same(built_dump(rnd, hz, with_pairs=n % 3 != 0), f'case {n} hz {hz}')
        for what in ('"end_x":', '"phase":"EDGE"', '"0x20000000000000"', '"-0x', '.062}',
                     '"unmatched":true', '*LOST*', 'UNKNOWN_300', '\\u00fc', '"ph":"X"'):
            self.assertIn(what, text)


if __name__ == '__main__':
    unittest.main()
