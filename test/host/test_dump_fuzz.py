"""Fuzzing the decoder with logs of several dumps from two boots.

Three real dumps (build/tools/gen_dump: the kernel's ring and encoder) of
two boots sit in one log: boot A's dumps 1 and 2, then a READY line and
boot B's dump 1 (the same dump number, another nonce). Each trial damages
the log as a serial line, a reset or a careless copy-paste would: lines
spliced from one dump into another (same boot and across boots), a line
replaced by the other dump's line of the same number, lines dropped,
duplicated, cut short or bit-flipped, markers lost.

The property, checked against gen_dump's ground truth: every event
decoded belongs to the dump it is reported in, with that dump's metadata
(its id and tsc_hz), and a dump called complete is exactly that dump.
"""

import random
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from btlib.dump.dumplog import parse_log
from test_decode_support import generate

TRIALS = 300
SMALL = ('cpus=3', 'events=300', 'cap=64', 'noise=0')
READY = b'READY cpus=3 found=3 max=3 parked=0 failed=0 tsc_hz=2400000000 tsc_src=hpet'
TABLE = [b'cpu        seq      since boot     event            args',       # the 'p' key
         b'  0       3993        2112719 us  DUMP_BEGIN       dump_no=1 a1=0',
         b'  0       3996        2259698 us  DUMP_END         dump_no=1 events=2062']


class Truth:
    """One generated dump: its lines, id, tsc_hz and records by (cpu, seq)."""

    def __init__(self, nonce, dump, hz, seed):
        log, records = generate(*SMALL, f'nonce={nonce}', f'dump={dump}', f'tsc_hz={hz}',
                                f'seed={seed}')
        self.lines = log.split(b'\n')[:-1]
        self.id = (str(dump), '%016X' % nonce)
        self.hz = hz
        self.records = {(r[14], r[8:12]): r for r in records}

    def holds(self, events):
        return all(self.records.get(k) == raw for k, raw in events.items())


def events_of(dump):
    return {(c.cpu, e.raw()[8:12]): e.raw() for c in dump.cpus for e in c.events}


class Fuzz(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.truths = [Truth(0xA0A0A0A0A0A0A0A0, 1, 1000000000, 1),
                      Truth(0xA0A0A0A0A0A0A0A0, 2, 1500000000, 2),
                      Truth(0xB0B0B0B0B0B0B0B0, 1, 3000000000, 3)]

    def base_log(self):
        """[(owner index or None, line)]: the log, each line with its dump."""
        a1, a2, b1 = self.truths
        return ([(0, ln) for ln in a1.lines] + [(None, ln) for ln in TABLE]
                + [(1, ln) for ln in a2.lines] + [(None, READY)]
                + [(2, ln) for ln in b1.lines])

    # ---- mutations: each takes the log and a Random, changes the log ----------

    def _dump_lines(self, log, owner=None):
        return [i for i, (o, _) in enumerate(log) if o is not None and (owner is None or o == owner)]

    def splice_across(self, log, rnd):
        """A line of one dump inserted anywhere inside another (same boot or not)."""
        src, dst = rnd.sample(range(3), 2)
        take, into = self._dump_lines(log, src), self._dump_lines(log, dst)
        if take and into:        # earlier mutations may have removed a dump
            log.insert(rnd.choice(into), (None, log[rnd.choice(take)][1]))

    def replace_same_number(self, log, rnd):
        """A line replaced by another dump's line of the same number."""
        src, dst = rnd.sample(range(3), 2)
        n = rnd.randrange(1, min(len(self.truths[src].lines), len(self.truths[dst].lines)))
        where = self._dump_lines(log, dst)
        if n < len(where):
            log[where[n]] = (None, self.truths[src].lines[n])

    def drop(self, log, rnd):
        if log:
            del log[rnd.randrange(len(log))]

    def duplicate(self, log, rnd):
        if log:
            i = rnd.randrange(len(log))
            log.insert(i + rnd.randrange(0, 5), log[i])

    def flip(self, log, rnd):
        if not log:
            return
        i = rnd.randrange(len(log))
        owner, line = log[i]
        if line:
            b = bytearray(line)
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(7)
            log[i] = (owner, bytes(b))

    def cut_line(self, log, rnd):
        if not log:
            return
        i = rnd.randrange(len(log))
        owner, line = log[i]
        log[i] = (owner, line[:rnd.randrange(len(line) + 1)])

    def lose_marker(self, log, rnd):
        marks = [i for i, (_, ln) in enumerate(log) if ln.startswith(b'DUMP ')]
        if marks:
            del log[rnd.choice(marks)]

    def truncate_dump(self, log, rnd):
        """A dump cut short (a reset during the transfer): the next one follows."""
        owner = rnd.randrange(2)
        lines = self._dump_lines(log, owner)
        if lines:
            cut = rnd.randrange(len(lines))
            del log[lines[cut]:lines[-1] + 1]

    MUTATIONS = ('splice_across', 'replace_same_number', 'drop', 'duplicate', 'flip',
                 'cut_line', 'lose_marker', 'truncate_dump')

    # ---- the property ------------------------------------------------------------

    def check(self, dumps, what):
        for d in dumps:
            got = events_of(d)
            stated = (d.header.get('dump'), d.header.get('nonce'))
            named = [t for t in self.truths if t.id == stated]
            owners = named or [t for t in self.truths if t.holds(got)]
            self.assertTrue(owners, f'{what}: dump {d.index} mixes events of several dumps')
            t = owners[0]
            self.assertTrue(t.holds(got),
                            f'{what}: dump {d.index} ({stated}) holds events of another dump')
            if got:
                self.assertIn(d.tsc_hz, (0, t.hz), f'{what}: dump {d.index} has another '
                              'dump\'s tsc_hz')
            if d.complete:
                self.assertEqual(got, t.records, f'{what}: complete dump {d.index} is not '
                                 'exactly one dump')

    def test_intact_log(self):
        dumps = parse_log(b'\n'.join(ln for _, ln in self.base_log()))
        self.assertEqual(len(dumps), 3)
        self.assertTrue(all(d.complete for d in dumps))
        self.check(dumps, 'intact')

    def test_mutations(self):
        rnd = random.Random(2026)
        for trial in range(TRIALS):
            log = self.base_log()
            applied = [rnd.choice(self.MUTATIONS) for _ in range(rnd.randrange(1, 4))]
            for m in applied:
                getattr(self, m)(log, rnd)
            data = b'\n'.join(ln for _, ln in log)
            with self.subTest(trial=trial, mutations=applied):
                self.check(parse_log(data), f'trial {trial} {applied}')

    def test_each_mutation_alone(self):
        """Each mutation on its own, many times: a failure names its cause."""
        for name in self.MUTATIONS:
            rnd = random.Random(name)
            for trial in range(25):
                log = self.base_log()
                getattr(self, name)(log, rnd)
                with self.subTest(mutation=name, trial=trial):
                    self.check(parse_log(b'\n'.join(ln for _, ln in log)), f'{name} {trial}')

    def test_splices_never_leave_a_dump_complete_and_wrong(self):
        """Lines of the other boot's dump in the middle of a dump: ignored
        (they fail its CRCs), so the dump stays exact."""
        rnd = random.Random(5)
        for trial in range(30):
            log = self.base_log()
            for _ in range(5):
                self.splice_across(log, rnd)
            dumps = parse_log(b'\n'.join(ln for _, ln in log))
            self.check(dumps, f'splices {trial}')
            ids = [(d.header.get('dump'), d.header.get('nonce')) for d in dumps]
            for t in self.truths:
                self.assertIn(t.id, ids)


if __name__ == '__main__':
    unittest.main()
