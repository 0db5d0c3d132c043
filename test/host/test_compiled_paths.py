"""The compiled event-line core (decoder/decode.c) against the reference.

btlib.dump.linedecode must return, for every '%E' line, exactly what the
reference decoder in btlib.dump.dumpfmt returns: the same header and the same
events, or "damaged" where it rejects the line (or PUNT, which hands the
line back to the reference). These tests compare the two line by line on
the real-kernel fixtures, on gen_dump output (intact, wrapped, random
fields), and on damaged lines: bit flips and cuts that the CRC catches,
and CRC-valid garbage and mutated payloads that only the decoding logic
can judge, with format v1's seed (0) and a v2 seed.
"""

import binascii
import glob
import io
import inspect
import os
import random
import subprocess
import sys
import tempfile
import unittest
from unittest import mock
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
from test_decode_support import FIXTURES, REPO, flip_bits, generate
import oracle
from oracle import exported, packed_copy

sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.dump import dumpfmt
from btlib.dump import dumplog
from btlib.dump import linedecode
from btlib.dump import model
from btlib.export import cwriters
from btlib.native import choice
from btlib.timeline import merge
from btlib.timeline import losses
from btlib.native import library as native
from btlib.export.csvout import csv_field, write_csv
from btlib.export.ctfout import write_ctf
from btlib.export.textout import write_text
from btlib.timeline.stats import write_stats
from btlib.dump.model import CpuInfo, Dump, Event, EventType
from btlib.timeline.timeline import Timeline, merged_events

V2_SEED = zlib.crc32(bytes.fromhex('0123456789abcdef') + (7).to_bytes(4, 'little'))
MAX_PUNT_SHARE = 0.1       # punts are for pathological lines only (over-long varints)


def setUpModule():
    subprocess.run(['make', '-s', '-C', REPO, 'build/host/libbtdecode.so'],
                   capture_output=True, timeout=300)
    if not choice.compiled():
        raise AssertionError(f'{native.LIB_PATH} did not build or load: '
                             'the compiled decoder must be tested')


def reference(text, seed):
    """The reference decoder's verdict: DAMAGED or (header..., events)."""
    try:
        if seed and not _REFERENCE_TAKES_SEED:
            text = _reseal(text, seed)
        run = (_REFERENCE(text, seed) if seed and _REFERENCE_TAKES_SEED else _REFERENCE(text))
    except dumpfmt.Damaged:
        return linedecode.DAMAGED
    return (run.line, run.cpu, run.start, run.gap_over, run.gap_excl, run.events)


_REFERENCE = dumpfmt.decode_event_line_py
_REFERENCE_TAKES_SEED = len(inspect.signature(_REFERENCE).parameters) > 1


def _reseal(text, seed):
    """For a reference without a seed (format v1 only): the same line with
    its seeded CRC checked here and replaced by the plain one."""
    body = text[2:]
    try:
        raw = binascii.a2b_base64(body + b'=' * (-len(body) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return text
    if len(raw) < 5 or zlib.crc32(raw[:-4], seed) != int.from_bytes(raw[-4:], 'little'):
        raise dumpfmt.Damaged
    return line_of(raw[:-4])


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def event_lines(log):
    """[(text, seed)]: every '%E' line with the seed of the DUMP BEGIN before it."""
    out, seed = [], 0
    for raw in dumpfmt.NEWLINE.split(log):
        text = dumpfmt.clean(raw)
        if text.startswith(b'%E'):
            out.append((text, seed))
        elif b'DUMP BEGIN' in text and hasattr(dumpfmt, 'begin_seed'):
            seed = dumpfmt.begin_seed(text)
    return out


def texts(pairs):
    return [t for t, _ in pairs]


def line_of(payload, seed=0):
    """An event line carrying `payload` with a valid CRC."""
    raw = payload + zlib.crc32(payload, seed).to_bytes(4, 'little')
    return b'%E' + binascii.b2a_base64(raw, newline=False).rstrip(b'=')


def payload_of(text):
    body = text[2:]
    return binascii.a2b_base64(body + b'=' * (-len(body) % 4))[:-4]


class NativeMatchesReference(unittest.TestCase):
    def compare(self, lines, seed=0, want_events=False):
        """Native == reference on every line (bytes, checked with `seed`, or
        (bytes, seed) pairs); returns (events, punts)."""
        pairs = [ln if isinstance(ln, tuple) else (ln, seed) for ln in lines]
        got = [None] * len(pairs)
        for s in {s for _, s in pairs}:               # one batch per seed
            at = [i for i, (_, si) in enumerate(pairs) if si == s]
            for i, res in zip(at, linedecode.decode_lines([pairs[i][0] for i in at], s)):
                got[i] = res
        self.assertEqual(len(got), len(lines))
        events = punts = 0
        for i, ((text, seed), res) in enumerate(zip(pairs, got)):
            if res == linedecode.PUNT:
                punts += 1
                continue
            ref = reference(text, seed)
            if ref == linedecode.DAMAGED or res == linedecode.DAMAGED:
                self.assertEqual(res, ref, f'line {i}: {text[:60]!r}')
                continue
            self.assertEqual(res[:5], ref[:5], f'line {i} header')
            self.assertEqual(model.events_of(res[5], res[1]), ref[5], f'line {i} events')
            events += len(ref[5])
        if want_events:
            self.assertGreater(events, 0)
        self.assertLessEqual(punts, max(1, len(lines) * MAX_PUNT_SHARE))
        return events, punts

    def test_fixtures(self):
        logs = sorted(glob.glob(os.path.join(FIXTURES, '*.log')))
        self.assertTrue(logs)
        for path in logs:
            with self.subTest(fixture=os.path.basename(path)), open(path, 'rb') as f:
                self.compare(event_lines(f.read()), want_events=True)

    def test_gen_dump_workloads(self):
        for args in (('cpus=4', 'events=3000', 'cap=1024'),
                     ('cpus=3', 'events=2000', 'cap=4096', 'workload=mixed', 'seed=5'),
                     ('cpus=2', 'events=500', 'cap=8', 'excluded=2', 'refused=3'),
                     ('cpus=2', 'events=900', 'cap=256', 'clear_at=300', 'crlf=1')):
            with self.subTest(args=args):
                log, records = generate(*args)
                lines = event_lines(log)
                events, punts = self.compare(lines, want_events=True)
                self.assertEqual(punts, 0)
                self.assertEqual(events, len(records))

    def test_flipped_and_cut_lines(self):
        log, _ = generate('cpus=2', 'events=800', 'cap=512', 'workload=mixed', 'seed=9')
        lines = event_lines(log)
        rnd = random.Random(3)
        bad = []
        for _ in range(600):
            text, seed = rnd.choice(lines)
            text = bytearray(text)
            kind = rnd.randrange(4)
            at = rnd.randrange(len(text))
            if kind == 0:
                text[at] ^= 1 << rnd.randrange(8)
            elif kind == 1:
                del text[at:]
            elif kind == 2:
                text.insert(at, rnd.choice(b'A=/+ \x80*'))
            else:
                del text[at]
            bad.append((bytes(text), seed))
        self.compare(bad)

    def test_crc_valid_mutations(self):
        """Payloads the CRC accepts: only the decoding rules judge them."""
        rnd = random.Random(17)
        for seed in (0, V2_SEED):
            log, _ = generate('cpus=2', 'events=600', 'cap=512', 'workload=mixed', 'seed=2')
            payloads = [payload_of(t) for t in texts(event_lines(log))]
            lines = []
            for _ in range(1500):
                p = bytearray(rnd.choice(payloads))
                for _ in range(rnd.randrange(1, 4)):
                    if not p:
                        break
                    op = rnd.randrange(4)
                    at = rnd.randrange(len(p))
                    if op == 0:
                        p[at] = rnd.randrange(256)
                    elif op == 1:
                        del p[at:]
                    elif op == 2:
                        p[at:at] = bytes([0xFF] * rnd.randrange(1, 12))
                    else:
                        p[at] |= 0x80
                lines.append(line_of(bytes(p), seed))
            with self.subTest(seed=seed):
                self.compare(lines)

    def test_crc_valid_garbage(self):
        rnd = random.Random(23)
        lines = [line_of(bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 150))))
                 for _ in range(2000)]
        lines += [line_of(bytes([rnd.choice((0x80, 0xFF, 0x01))] * rnd.randrange(1, 40)))
                  for _ in range(200)]
        self.compare(lines)

    def test_seed_is_checked(self):
        log, _ = generate('cpus=1', 'events=200', 'cap=256')
        good = [line_of(payload_of(t), V2_SEED) for t in texts(event_lines(log))]
        self.compare(good, V2_SEED, want_events=True)
        self.assertTrue(all(r == linedecode.DAMAGED for r in linedecode.decode_lines(good, 0)))

    def test_limits(self):
        """Each field just inside and just outside what the reference accepts."""
        def head(cpu=b'\x01', tsc=b'\x00'):
            return b'\x05' + cpu + b'\x00\x00\x00' + tsc
        top = b'\xff' * 9 + b'\x01'                   # 2**64 - 1 in ten bytes
        cases = {
            'type 0xFFFF': head() + b'\x01\xff\xff\x03', 'type 0x10000': head() + b'\x01\x80\x80\x04',
            'cpu 1023': head(b'\xff\x07') + b'\x01\x02', 'cpu 1024': head(b'\x80\x08') + b'\x01\x02',
            'no events': head(), 'no type first': head() + b'\x00',
            'flags cut': head() + b'\x03\x02', 'tsc cut': head() + b'\x81\x02\x80',
            'a0 a1': head() + b'\x0d\x02\x03\x04' + b'\x00\x0c\x05\x06',
            'full tsc': head(tsc=top) + b'\xf1\x02' + b'\xff' * 8 + b'\x1f',
            'full args': head() + b'\x0d\x02' + top + top + b'\x0c' + top + top,
            'predicted next': head() + b'\x01\x02\x01\x03\x00\x00\x00\x01\x02\x00',
            'same slot': head() + b'\x01\x02\x01\x12\x01\x02\x00\x01\x12\x00',
            'empty': b'',
        }
        lines = [line_of(p) for p in cases.values()]
        got = linedecode.decode_lines(lines)
        for (name, _), text, res in zip(cases.items(), lines, got):
            with self.subTest(name):
                ref = reference(text, 0)
                self.assertNotEqual(res, linedecode.PUNT)
                if ref == linedecode.DAMAGED:
                    self.assertEqual(res, ref)
                else:
                    self.assertEqual(res[:5], ref[:5])
                    self.assertEqual(model.events_of(res[5], res[1]), ref[5])
        self.assertEqual(got[1], linedecode.DAMAGED)
        self.assertEqual(got[3], linedecode.DAMAGED)
        self.assertEqual(got[2][1], 1023)
        self.assertEqual(bytes(got[2][5])[14], 1023 & 0xFF, 'a record keeps the low 8 bits')

    def test_punts_are_decoded_by_the_reference(self):
        """Lines beyond 64-bit arithmetic come back PUNT, never a guess."""
        over = b'\xff' * 9 + b'\x7f'                # a varint of 70 bits
        head = b'\x05\x01\x00\x00\x00\x00'          # line 5, cpu 1, seq 0, tsc 0
        cases = [line_of(over + head[1:] + b'\x01\x02'),
                 line_of(head + b'\x81\x01' + over),  # tsc residual over 64 bits
                 b'%E' + b'QUJD' * 2000,              # over-long line
                 line_of(head + b'\x01\x02')[:-2] + b'==']
        got = linedecode.decode_lines(cases)
        self.assertEqual(got[:3], [linedecode.PUNT] * 3)
        self.assertIn(got[3], (linedecode.PUNT, linedecode.DAMAGED))


def synthetic_dumps(types, rings, overwritten=0, first_seq=None, last_seq=None):
    """(label, Dump) of rings {cpu: [Event]} at three TSC rates, with and
    without boot phase names; every CPU gets the counters given."""
    cpus = [CpuInfo(cpu=cpu, apic_id=cpu, capacity=8, recorded=len(events),
                    overwritten=overwritten, dropped=0, first_seq=first_seq,
                    last_seq=last_seq, events=events) for cpu, events in rings.items()]
    for hz in (2_400_000_000, 3, 1_000_000_000):
        for phases in ({0: 'ENTRY', 2: 'SMP,"START"', 7: 'X'}, {}):
            yield f'hz={hz} phases={bool(phases)}', Dump(
                index=0, header={}, version=1, tsc_hz=hz, cpus=cpus, types=types,
                phases=phases, complete=True, end_events=10, damaged_lines=0,
                missing_lines=0, warnings=[])


class TimelineAndCsv(unittest.TestCase):
    """The C merge sort and CSV rows against Dump.events() and write_csv."""

    def check(self, dump):
        tl = Timeline(dump)
        by_cpu = b''.join(e.raw() for c in dump.cpus for e in c.events)
        merged = merge.sort_records(by_cpu)
        self.assertEqual(merged, b''.join(e.raw() for e in tl.events))
        ref = io.StringIO(newline='')
        write_csv(tl, ref)
        names = {t: csv_field(v.name) for t, v in tl.views.items()}
        write = cwriters.csv_writer(tl.views, tl.phases, tl.t0, tl.hz, names)
        self.assertIsNotNone(write)
        out = io.StringIO(newline='')
        out.write(ref.getvalue().split('\n', 1)[0] + '\n')
        write(merged, out)
        self.assertEqual(out.getvalue(), ref.getvalue())
        return len(tl.events)

    def test_fixtures_and_gen_dump(self):
        logs = [read(p) for p in sorted(glob.glob(os.path.join(FIXTURES, '*.log')))]
        logs.append(generate('cpus=3', 'events=3000', 'cap=1024', 'workload=mixed', 'seed=4')[0])
        logs.append(generate('cpus=4', 'events=2000', 'cap=4096')[0])
        for i, log in enumerate(logs):
            for d in dumplog.parse_log(log):
                with self.subTest(log=i, dump=d.index):
                    self.check(d)

    def test_ties_quotes_phases_and_extremes(self):
        """Equal keys keep CPU order; names needing quotes; phases by name;
        TSC at 2**64 - 1 (ns past 64 bits); unknown types."""
        top = (1 << 64) - 1
        types = {1: EventType(1, 'BOOT_PHASE', 'boot', 'instant', ('phase', '')),
                 2: EventType(2, 'A,"B"', 'x', 'instant', ('x,y', 'q"')),
                 3: EventType(3, 'PLAIN', 'x', 'instant', ('', ''))}
        rings = {0: [(500, 1, 0, 0), (500, 2, 1, 2), (400, 3, top, 0), (top, 99, top, top)],
                 1: [(500, 1, 7, 0), (500, 1, 1, 0), (10, 2, 0, top), (top, 1, 2, 0)],
                 3: [(500, 2, 5, 5), (0, 1, 2, 0)]}
        rings = {cpu: [Event(cpu, (7 - i) % 4, tsc, t, i % 3, a0, a1)
                       for i, (tsc, t, a0, a1) in enumerate(items)]
                 for cpu, items in rings.items()}
        for label, d in synthetic_dumps(types, rings):
            with self.subTest(dump=label):
                self.assertEqual(self.check(d), 10)

    def test_too_long_names_fall_back(self):
        views = Timeline(Dump(index=0, header={}, version=1, tsc_hz=1, cpus=[], types={
            1: EventType(1, 'N', 'x', 'instant', ('p' * 3000, ''))}, phases={}, complete=True,
            end_events=0, damaged_lines=0, missing_lines=0, warnings=[])).views
        self.assertIsNone(cwriters.csv_writer(views, {}, 0, 1, {1: 'N'}))


class BothPaths(unittest.TestCase):
    """parse_log on the compiled core and on pure Python (the fallback when
    the library is missing): equal Dumps, warnings and all."""

    def logs(self):
        logs = [read(p) for p in sorted(glob.glob(os.path.join(FIXTURES, '*.log')))]
        mixed = generate('cpus=3', 'events=900', 'cap=512', 'workload=mixed', 'seed=8')[0]
        rnd = random.Random(5)
        damaged = [flip_bits(mixed, rnd, 6) for _ in range(40)]
        lines = mixed.split(b'\n')
        damaged.append(b'\n'.join(lines[:len(lines) // 2]))                  # truncated
        damaged.append(b'\n'.join(lines[::2]))                               # every other line
        # lines that need cleaning miss the batch and are decoded one by one
        damaged.append(b'\n'.join(b'\x1b[0m' + ln if i % 3 else ln for i, ln in enumerate(lines)))
        return logs + [mixed] + damaged

    def test_native_and_python_agree(self):
        for i, log in enumerate(self.logs()):
            native = dumplog.parse_log(log)
            with oracle.reference_path():
                python = dumplog.parse_log(log)
            with self.subTest(log=i):
                self.assertTrue(all(c.compiled() for d in native for c in d.cpus if c.count),
                                'the native path was not used')
                self.assertTrue(not any(c.compiled() for d in python for c in d.cpus))
                # holes from the records' seqs (no Event built) as from the events'
                self.assertEqual([[(c.seqs(), losses.holes(c)) for c in d.cpus] for d in native],
                                 [[(c.seqs(), losses.holes(c)) for c in d.cpus] for d in python])
                self.assertTrue(all(c.compiled() for d in native for c in d.cpus if c.count),
                                'seqs() built Event objects')
                for c in (c for d in native for c in d.cpus if c.source and c.count):
                    self.assertEqual(c.source.seq_facts(), seq_facts(c.seqs()))
                # the lines a CPU keeps decode to the records the parse checked
                self.assertEqual([[c.packed() or b'' for c in d.cpus] for d in native],
                                 [[b''.join(e.raw() for e in c.events) for c in d.cpus]
                                  for d in python])
                self.assertEqual(native, python)
                self.assertEqual([merged_events(d) for d in native], [merged_events(d) for d in python])

    def test_the_decoder_is_chosen_once_per_parse(self):
        """The parse asks which line decoder to use once, not per line (issue
        26, item 5): with the choice counted, a log of thousands of event
        lines, some needing cleaning, asks once, on either path."""
        log = self.logs()[-1]
        self.assertGreater(log.count(b'%E'), 100)
        for pure in (False, True):
            asked = []
            with mock.patch.object(choice, 'compiled',
                                   lambda: asked.append(1) or not pure):
                dumps = dumplog.parse_log(log)
            with self.subTest(pure=pure):
                self.assertTrue(dumps and dumps[0].cpus)
                self.assertEqual(len(asked), 1)


def seq_facts(seqs):
    """(first, last, consecutive) of a CPU's seqs, as bt_scan judges them."""
    return seqs[0], seqs[-1], all(b == a + 1 for a, b in zip(seqs, seqs[1:]))


class SeqFacts(unittest.TestCase):
    """LineSource.seq_facts() from line headers alone, against the seqs
    the lines' events would have: contiguous lines, holes, seqs over
    2^32 (a u32 in the record) and a wrap inside a line or between two."""

    def test_against_the_seqs(self):
        top = 1 << 32
        cases = [[(0, 5)], [(0, 5), (5, 3)], [(0, 5), (6, 3)], [(0, 5), (0, 0), (5, 1)],
                 [(top - 2, 2)], [(top - 2, 3)], [(top - 2, 2), (top, 2)],
                 [(3 * top + 7, 4), (3 * top + 11, 1)], [(10, 2), (4, 3)]]
        for runs in cases:
            with self.subTest(runs=runs):
                src = linedecode.LineSource([mock.Mock(start=s, count=n, records=None)
                                             for s, n in runs])
                seqs = [(s + i) % top for s, n in runs for i in range(n)]
                self.assertEqual(src.seq_facts(), seq_facts(seqs))


class NativeWriters(unittest.TestCase):
    """Each exporter written in C from records against its Python code, on
    the fixtures, gen_dump dumps, damaged logs and extreme values."""
    WRITERS = {'text': (write_text, 'text_writer')}

    def compare(self, dump, label):
        for name, (writer, native_fn) in self.WRITERS.items():
            made = []
            real = getattr(cwriters, native_fn)

            def spy(*args, **kw):
                made.append(real(*args, **kw))
                return made[-1]
            with self.subTest(dump=label, writer=name):
                with mock.patch.object(cwriters, native_fn, spy):
                    got = exported(writer, dump)
                self.assertTrue(made and None not in made, f'the native {name} writer was not used')
                self.assertEqual(got, exported(writer, dump, native=False))

    def test_logs(self):
        lost = 0
        for i, log in enumerate(BothPaths.logs(None)):
            for d in dumplog.parse_log(log):
                self.compare(d, f'log {i} dump {d.index}')
                lost += exported(write_text, d).count('*LOST*')
        self.assertGreater(lost, 10, 'the logs must show LOST markers')

    def test_stats_from_records(self):
        """--stats from packed records builds no Event objects and prints
        what it prints from Events."""
        for i, log in enumerate(BothPaths.logs(None)):
            for d in dumplog.parse_log(log):
                with self.subTest(log=i, dump=d.index):
                    packed = packed_copy(d)
                    out = io.StringIO()
                    write_stats(Timeline(packed), out)
                    self.assertTrue(all(c.__dict__.get('_events') is None
                                        for c in packed.cpus), 'Events were built')
                    self.assertEqual(out.getvalue(), exported(write_stats, d, native=False))

    def ctf_files(self, dump, native):
        """{file name: bytes} of write_ctf's trace directory for dump."""
        out = {}
        with tempfile.TemporaryDirectory(prefix='bt-ctf-') as tmp:
            def writer(tl, _):
                for path in write_ctf(tl, tmp) + [os.path.join(tmp, 'metadata')]:
                    with open(path, 'rb') as f:
                        out[os.path.basename(path)] = f.read()
            exported(writer, dump, native)
            return out

    def test_ctf_streams(self):
        """CTF streams packed in C from records equal the Python-packed
        ones (as `diff -r` of the two directories would find), and every
        event went through C: by ctf_events, or by ctf_stream for a file
        of several stretches (a CPU whose TSC went back)."""
        real, real_stream, packed = cwriters.ctf_events, cwriters.ctf_stream, []

        def spy(records):
            packed.append(len(records) // model.RECORD_SIZE)
            return real(records)

        def spy_stream(header, discarded, packets, segments):
            packed.extend(end - first for _, first, end, *_ in segments)
            return real_stream(header, discarded, packets, segments)
        dumps = [d for log in BothPaths.logs(None) for d in dumplog.parse_log(log)]
        for i, d in enumerate(dumps):
            with self.subTest(dump=i):
                with mock.patch.object(cwriters, 'ctf_events', spy), \
                        mock.patch.object(cwriters, 'ctf_stream', spy_stream):
                    got = self.ctf_files(d, native=True)
                self.assertEqual(got, self.ctf_files(d, native=False))
        self.assertEqual(sum(packed), sum(c.count for d in dumps for c in d.cpus),
                         'the native CTF packing was not used for every event')

    def test_ties_phases_signed_and_extremes(self):
        """Equal keys, phases by name, signed arguments, TSC at 2**64 - 1,
        unknown types, holes at both ends and in the middle, a seq wrap."""
        top = (1 << 64) - 1
        types = {1: EventType(1, 'BOOT_PHASE', 'boot', 'instant', ('phase', '')),
                 2: EventType(2, 'LATE', 'x', 'instant', ('tick', 'lateness_tsc'),
                              signed=(False, True)),
                 3: EventType(3, 'PLAIN', 'x', 'instant', ('', ''))}
        rings = {0: [(500, 1, 0, 0, 1), (500, 2, 1, top - 4, 2), (400, 3, top, 0, 5),
                     (top, 99, top, top, 6)],
                 1: [(500, 1, 7, 0, top - 1 & 0xFFFFFFFF), (500, 1, 1, 0, 0xFFFFFFFF),
                     (10, 2, 0, top, 0), (top, 1, 2, 0, 3)],
                 3: [(500, 2, 5, 5, 9), (0, 1, 2, 0, 9)]}
        rings = {cpu: [Event(cpu, seq, tsc, t, i % 3, a0, a1)
                       for i, (tsc, t, a0, a1, seq) in enumerate(items)]
                 for cpu, items in rings.items()}
        for label, d in synthetic_dumps(types, rings, overwritten=2, first_seq=0, last_seq=12):
            self.compare(d, label)
            self.assertEqual(exported(write_stats, d), exported(write_stats, d, native=False))
            self.assertEqual(self.ctf_files(d, True), self.ctf_files(d, False))
        self.assertIn('*LOST*', exported(write_text, d))


if __name__ == '__main__':
    unittest.main()
