"""The timeline merge in bounded memory (decoder/kmerge.c, merge.Merge).

The k-way merge must give exactly the order of Python's stable sort of
all CPUs' events (CPU after CPU) by (tsc, cpu, seq), which Dump.events()
uses without the compiled core: compared here on adversarial rings (equal
keys across CPUs, TSCs going backwards, seq wraps, empty CPUs, one CPU,
none) and random ones, at every chunk size. The CSV and text exporters fed
by it are compared with their pure-Python code, on text and binary
streams. And decoding a large generated dump must add next to nothing to
the memory parsing it takes: the exporters hold a chunk of the timeline,
never a copy of the whole dump.
"""

import dataclasses
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
from test_decode_support import DECODE, REPO, generate
import oracle
from test_compiled_paths import setUpModule     # noqa: F401 (builds and requires the C core)

sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.timeline import merge
from btlib.export.csvout import write_csv
from btlib.export.textout import write_text
from btlib.dump.model import CpuInfo, Dump, Event, EventType
from btlib.timeline.timeline import Timeline, merged, merged_events

TOP = (1 << 64) - 1
SEQ_TOP = (1 << 32) - 1


def ring(cpu, items):
    """Events of one CPU from (tsc, seq) tuples."""
    return [Event(cpu, it[1], it[0], 1 + i % 3, i % 4, i, TOP - i)
            for i, it in enumerate(items)]


def cpus_of(rings):
    """Each ring's CPU number (an empty one: its index)."""
    return [r[0].cpu if r else k for k, r in enumerate(rings)]


def python_order(rings):
    """Dump.events()' reference: a stable sort of the concatenation, by
    the CPUs' whole numbers (a record keeps only their low 8 bits)."""
    flat = [e for r in rings for e in r]
    return sorted(range(len(flat)), key=lambda i: (flat[i].tsc, flat[i].cpu, flat[i].seq))


ADVERSARIAL = {
    'equal keys on every CPU': [ring(c, [(7, 0, 0), (7, 0, 0), (7, 1, 0)]) for c in range(4)],
    'equal TSCs, CPUs out of order': [ring(9, [(5, 3), (5, 2)]), ring(1, [(5, 1), (5, 1)])],
    'CPUs 256 apart share a record byte': [ring(300, [(5, 0), (6, 1)]), ring(44, [(5, 0), (6, 1)]),
                                           ring(1023, [(5, 0)]), ring(255, [(5, 0), (6, 0)])],
    'TSC going backwards': [ring(0, [(10, 0), (20, 1), (5, 2), (15, 3), (1, 4), (20, 5)]),
                            ring(1, [(4, 0), (12, 1), (19, 2)])],
    'every CPU backwards': [ring(c, [(100 - 7 * i - c, i) for i in range(12)])
                            for c in range(3)],
    'seq wrap at one TSC': [ring(0, [(3, SEQ_TOP - 1), (3, SEQ_TOP), (3, 0), (3, 1)]),
                            ring(1, [(3, 0), (2, 5)])],
    'empty CPUs around': [[], ring(1, [(1, 0), (3, 1)]), [], ring(3, [(2, 0)]), []],
    'one CPU': [ring(0, [(TOP, 0), (0, 1), (TOP, 2), (TOP, 1)])],
    'one empty CPU': [[]],
    'no CPU': [],
    'extremes': [ring(0, [(TOP, SEQ_TOP), (0, 0)]), ring(1, [(0, SEQ_TOP), (TOP, 0)])],
}


def random_rings(rnd):
    rings = []
    for cpu in rnd.sample(range(1024), rnd.randrange(0, 9)):
        n = rnd.choice((0, 1, 2, rnd.randrange(50)))
        tscs = sorted(rnd.randrange(20) for _ in range(n))
        if rnd.random() < 0.3:          # some rings out of order
            rnd.shuffle(tscs)
        seqs = [(rnd.randrange(4) if rnd.random() < 0.2 else i) for i in range(n)]
        rings.append(ring(cpu, list(zip(tscs, seqs))))
    return rings


def packed(rings):
    return [b''.join(e.raw() for e in r) for r in rings]


class MergeOrder(unittest.TestCase):
    """merge.Merge against the stable sort, every way it hands out events."""

    def check(self, rings):
        want = python_order(rings)
        flat = [e for r in rings for e in r]
        m = merge.Merge(packed(rings), cpus_of(rings))
        self.assertEqual(list(m.order()), want)
        records = b''.join(flat[i].raw() for i in want)
        self.assertEqual(m.records(), records)
        for size in (1, 2, 3, 7, 64):
            got = b''.join(bytes(buf[:n * 32]) for buf, n in m.chunks(size))
            self.assertEqual(got, records, f'chunks of {size}')
            got = [c for _, cpus, n in m.chunks(size, cpus=True) for c in cpus[:n]]
            self.assertEqual(got, [flat[i].cpu for i in want], f'CPUs in chunks of {size}')
        self.assertEqual(m.count, len(flat))
        self.assertEqual(m.first_tsc, min((e.tsc for e in flat), default=0))
        self.assertEqual(m.last_tsc, max((e.tsc for e in flat), default=0))
        self.assertEqual(m.types, {e.type for e in flat})

    def test_adversarial(self):
        for label, rings in ADVERSARIAL.items():
            with self.subTest(label):
                self.check(rings)

    def test_random(self):
        rnd = random.Random(11)
        for i in range(300):
            with self.subTest(i):
                self.check(random_rings(rnd))

    def test_dump_events_both_paths(self):
        """Dump.events() from records (merged in C) equals the pure-Python sort."""
        for label, rings in ADVERSARIAL.items():
            with self.subTest(label):
                native = dump_of(rings, records=True)
                self.assertIsNotNone(merged(native), 'the C merge was not used')
                with oracle.reference_path():
                    python = merged_events(dump_of(rings, records=False))
                self.assertEqual(merged_events(native), python)


TYPES = {1: EventType(1, 'BOOT_PHASE', 'boot', 'instant', ('phase', '')),
         2: EventType(2, 'LATE,"Q"', 'x', 'instant', ('tick', 'lateness_tsc'),
                      signed=(False, True)),
         3: EventType(3, 'PLAIN', 'x', 'instant', ('', ''))}


def dump_of(rings, records):
    """A Dump of rings: CPUs with packed records (the compiled decoder's
    form) or with Event lists."""
    cpus = []
    for cpu, r in zip(cpus_of(rings), rings):
        c = CpuInfo(cpu=cpu, apic_id=cpu, capacity=64, recorded=len(r), overwritten=0,
                    dropped=0, first_seq=None, last_seq=None, events=list(r))
        if records:
            c = dataclasses.replace(c, events=None, records=b''.join(e.raw() for e in r))
        cpus.append(c)
    return Dump(index=0, header={}, version=1, tsc_hz=3, cpus=cpus, types=TYPES,
                phases={0: 'ENTRY', 2: 'SMP'}, complete=True, end_events=None,
                damaged_lines=0, missing_lines=0, warnings=[])


class Writers(unittest.TestCase):
    """CSV and text rows from the chunked merge equal the pure-Python rows,
    written to a text stream or (as decode does) a binary one, buffered or
    raw."""

    def test_csv_and_text(self):
        cases = dict(ADVERSARIAL, **{f'random {i}': random_rings(random.Random(i))
                                     for i in range(20)})
        for label, rings in cases.items():
            for name, writer in (('csv', write_csv), ('text', write_text)):
                with self.subTest(label, writer=name):
                    with oracle.reference_path():
                        ref, ref_binary = io.StringIO(newline=''), Trickle()
                        writer(Timeline(dump_of(rings, records=False)), ref)
                        writer(Timeline(dump_of(rings, records=False)), ref_binary)
                    tl = Timeline(dump_of(rings, records=True))
                    self.assertIsNotNone(tl.merge)
                    text, binary, raw = io.StringIO(newline=''), io.BytesIO(), Trickle()
                    writer(tl, text)
                    writer(Timeline(dump_of(rings, records=True)), binary)
                    writer(Timeline(dump_of(rings, records=True)), raw)
                    want = ref.getvalue().encode()
                    self.assertEqual(text.getvalue(), ref.getvalue())
                    self.assertEqual(binary.getvalue(), want)
                    self.assertEqual(bytes(raw.data), want)
                    self.assertEqual(bytes(ref_binary.data), want)


class Trickle(io.RawIOBase):
    """A raw stream that takes at most 5 bytes per write (as an unbuffered
    stdout may take only part of one)."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.data += bytes(memoryview(b)[:5])
        return min(5, len(memoryview(b)))


PEAK_CHILD = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""
PER_CPU = 65536
SMALL, BIG = 4, 16           # CPUs of PER_CPU events each
RECORD_KB = 32 / 1024
GROWTH_SHARE = 0.75          # of the records the BIG dump's extra CPUs hold


def peak_kb(*args):
    """Peak RSS (KB) of `decode args`, run by a child that runs nothing else."""
    r = subprocess.run([sys.executable, '-c', PEAK_CHILD, sys.executable, DECODE, *args],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, BT_PURE_PYTHON='0'))
    return int(r.stdout)


class BoundedMemory(unittest.TestCase):
    """A decode holds the log's lines and one CPU's records at a time (a
    window of each, for the timeline's merge), never a whole dump's
    records. From a 4-CPU to a 16-CPU dump of 65536 events per CPU, each
    format's peak RSS grows by less than three quarters of the records
    the 12 more CPUs hold (24 MiB): holding the records, the parse alone
    grew by all of them and the exports by up to 3x more. (--stats keeps
    every BEGIN/END duration for its exact percentiles: not bounded so.)"""

    def test_peak_grows_with_the_log_not_the_records(self):
        with tempfile.TemporaryDirectory(prefix='bt-kmerge-') as tmp:
            peaks = {}
            for cpus in (SMALL, BIG):
                path = os.path.join(tmp, f'{cpus}.log')
                with open(path, 'wb') as f:
                    f.write(generate(f'cpus={cpus}', f'events={PER_CPU}', f'cap={PER_CPU}',
                                     'noise=0')[0])
                peaks[cpus] = {'list': peak_kb('--list', path)}
                for fmt in ('csv', 'text', 'json', 'ctf', 'raw'):
                    peaks[cpus][fmt] = peak_kb('-f', fmt, '-o', os.path.join(tmp, fmt), path)
                    shutil.rmtree(os.path.join(tmp, fmt), ignore_errors=True)
            bound = GROWTH_SHARE * (BIG - SMALL) * PER_CPU * RECORD_KB
            for fmt, big in peaks[BIG].items():
                with self.subTest(fmt):
                    self.assertLess(big - peaks[SMALL][fmt], bound,
                                    f'{fmt}: peak {peaks[SMALL][fmt]} KB with {SMALL} CPUs, '
                                    f'{big} KB with {BIG}')


if __name__ == '__main__':
    unittest.main()
