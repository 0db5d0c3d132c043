"""decode -f perfetto (btlib/perfettoout.py, decoder/perfettoout.c) and
the flows both it and the JSON export draw (btlib/flows.py).

The output is parsed by protoc against test/host/perfetto_trace.proto
(our schema, with the field numbers of Perfetto's published protos) and
its tracks, slices, instants, flows, counters and loss markers are
counted against what the model says the dump holds: every fixture, a
gen_dump dump, a damaged log. The C writer is compared with the
pure-Python reference byte for byte (oracle.py) on dumps built event by
event; test_oracle does the same for decode -f perfetto on the fixtures. protoc comes from Debian's protobuf-compiler
(scripts/install-deps --test): without it these tests skip, except under
CI=true, where they fail.
"""

import contextlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))
sys.path.insert(0, str(ROOT / 'test' / 'host'))

from btlib.dump import dumplog
from btlib.export import perfettoout
from btlib.timeline import flows
from btlib.timeline import losses
from btlib.timeline import pairs
from btlib.dump.model import CpuInfo, Dump, Event, EventType
from btlib.timeline.timeline import Timeline
import oracle
from test_decode_support import (FIXTURES, decode, generate,
                                 require_compiled_core)
from test_json_native import built_dump, damaged, types

SCHEMA = ROOT / 'test' / 'host' / 'perfetto_trace.proto'
MAX_BYTES_PER_EVENT = 40     # issue 21's target
SIGNED_MAX = (1 << 63) - 1   # Perfetto reads a packet's timestamp as signed


def protoc():
    path = shutil.which('protoc')
    if path is None:
        if os.environ.get('CI') == 'true':
            raise AssertionError('protoc is missing (scripts/install-deps --test installs '
                                 'protobuf-compiler): the Perfetto export must be checked in CI')
        raise unittest.SkipTest('no protoc: scripts/install-deps --test installs it')
    return path


def parsed(data):
    """protoc --decode's text of a trace, and its counts."""
    res = subprocess.run([protoc(), f'--proto_path={SCHEMA.parent}',
                          '--decode=perfetto.protos.Trace', SCHEMA.name],
                         input=data, capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr.decode(errors='replace')
    text = res.stdout.decode()
    assert not re.search(r'^\s*\d+: ', text, re.M), 'a field our schema does not know'
    count = lambda pattern: len(re.findall(pattern, text, re.M))   # noqa: E731
    return text, {
        'packets': count(r'^packet \{'),
        'tracks': count(r'^  track_descriptor \{'),
        'counter_tracks': count(r'^    counter \{'),
        'slice_begins': count(r'type: TYPE_SLICE_BEGIN'),
        'slice_ends': count(r'type: TYPE_SLICE_END'),
        'instants': count(r'type: TYPE_INSTANT'),
        'counters': count(r'type: TYPE_COUNTER'),
        'flow_starts': count(r'^    flow_ids: '),
        'flow_ends': count(r'^    terminating_flow_ids: '),
        'lost': count(rf'name_iid: {perfettoout.NAME_IID_LOST}$'),
        'unmatched': count(r'name_iid: \d+\n\s*bool_value: true'),
        'extra_counter_values': count(r'^    extra_counter_values: '),
    }


def exported(tl):
    out = io.BytesIO()
    summary = perfettoout.write_perfetto(tl, out)
    return out.getvalue(), summary


def expected(tl):
    """What the model says the export must hold."""
    d = tl.dump
    matched = pairs.match_all(tl)
    found = flows.flows(tl)
    timer = any(t.name == 'IRQ_TIMER_BEGIN' for t in d.types.values())
    fills = sum(1 for c in d.cpus if c.summary_seen and c.capacity > 0 and c.last_seq is not None)
    return {
        'slices': sum(len(s) for s, _ in matched.values()),
        'unmatched': sum(len(u) for _, u in matched.values()),
        'events': sum(len(c.events) for c in d.cpus),
        'flows': found.matched,
        'lost': sum(len(losses.hole_causes(c)) for c in d.cpus),
        'tracks': 1 + 2 * len(d.cpus) + fills + (len(d.cpus) if timer else 0),
        'counter_tracks': len(d.cpus) + fills + (len(d.cpus) if timer else 0),
        'ticks': sum(1 for c in d.cpus for e in c.events if d.types.get(e.type) is not None
                     and d.types[e.type].name == 'IRQ_TIMER_BEGIN'),
    }


class Counts(unittest.TestCase):
    def check(self, tl):
        data, summary = exported(tl)
        _, got = parsed(data)
        want = expected(tl)
        self.assertEqual(got['tracks'], want['tracks'])
        self.assertEqual(got['counter_tracks'], want['counter_tracks'])
        self.assertEqual(got['slice_begins'], want['slices'])
        self.assertEqual(got['slice_ends'], want['slices'])
        # every event is one packet: slices take two, the rest are instants
        # (plus the lost markers and the dump's metadata instant)
        self.assertEqual(got['instants'], want['events'] - 2 * want['slices'] + want['lost'] + 1)
        self.assertEqual(got['unmatched'], want['unmatched'])
        self.assertEqual(summary.unmatched_halves, want['unmatched'])
        self.assertEqual(got['flow_starts'], want['flows'])
        self.assertEqual(got['flow_ends'], want['flows'])
        self.assertEqual(summary.flows, want['flows'])
        self.assertEqual(got['lost'], want['lost'])
        self.assertEqual(got['extra_counter_values'], want['ticks'])
        if want['events']:
            self.assertGreater(got['counters'], 0)
        return got, want, data

    def test_every_fixture(self):
        for name in sorted(os.listdir(FIXTURES)):
            if name.endswith('.log'):
                with self.subTest(log=name):
                    d = dumplog.parse_log((Path(FIXTURES) / name).read_bytes())[-1]
                    self.check(Timeline(d))

    def test_the_ipi_workload_draws_every_receive(self):
        """The ipi workload's pings (one at a time, each receive traced
        after the next send at worst) are all proven; the wake IPIs
        (vector 81) merge, and what a merge leaves uncertain is counted,
        not drawn (the old rule drew 6 wrong-looking arrows here, up to
        26 ms long; issue 34: only proven ones)."""
        d = dumplog.parse_log((Path(FIXTURES) / 'workloads-4cpu.log').read_bytes())[-1]
        got, _, _ = self.check(Timeline(d))
        found = flows.flows(Timeline(d))
        self.assertEqual((found.matched, found.unmatched_causes, found.unmatched_effects),
                         (424, 11, 6))
        self.assertEqual(found.reasons('effect'), {'loss': 0, 'ambiguous': 6, 'disorder': 0})
        self.assertEqual(got['flow_starts'], 424)
        ends = {}
        for cpu, fs in found.by_cpu.items():
            for f in fs:
                ends.setdefault(f.flow_id, {})[f.terminating] = (cpu, f.event)
        recvs = sum(1 for c in d.cpus for e in c.events if d.types[e.type].name == 'IPI_RECV'
                    and e.a1 != 81)
        drawn = {(cpu, e.seq) for fid, x in ends.items() for cpu, e in [x[True]]
                 if e.a1 != 81}
        self.assertEqual(len(drawn), recvs, 'every ping received is drawn')
        by_key = {}
        for (sc, s), (rc, r) in (((x[False]), (x[True])) for x in ends.values()):
            self.assertEqual((s.a0, s.a1), (rc, r.a1))
            self.assertEqual(r.a0, sc)
            self.assertLessEqual(s.tsc, r.tsc)
            by_key.setdefault((sc, rc, s.a1), []).append((s.tsc, r.tsc))
        for key, arrows in by_key.items():                 # in order: no two cross
            arrows.sort()
            self.assertEqual([r for _, r in arrows], sorted(r for _, r in arrows), key)

    def test_a_gen_dump_dump_is_small(self):
        log, _ = generate('cpus=4', 'events=20000', 'cap=16384', 'seed=3', 'noise=0')
        d = dumplog.parse_log(log)[-1]
        got, want, data = self.check(Timeline(d))
        self.assertLessEqual(len(data) / want['events'], MAX_BYTES_PER_EVENT)
        self.assertGreater(want['lost'], 0)          # the rings wrapped: markers

    def test_a_damaged_log_still_exports_its_loss_markers(self):
        log, _ = generate('cpus=4', 'events=3000', 'cap=2048', 'seed=12')
        bad = damaged(log, random.Random(1))
        d = dumplog.parse_log(bad)[-1]
        got, want, _ = self.check(Timeline(d))
        self.assertGreater(got['lost'], 0)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'bad.log')
            Path(path).write_bytes(bad)
            out = os.path.join(tmp, 'trace.pftrace')
            r = decode(path, '-f', 'perfetto', '-o', out)
            self.assertIn(r.returncode, (3, 4), r.stderr)
            self.assertIn('wrote Perfetto trace', r.stderr)
            self.assertEqual(parsed(Path(out).read_bytes())[1]['lost'], want['lost'])

    def test_metadata_names_the_dump(self):
        d = dumplog.parse_log((Path(FIXTURES) / 'wrapped-64.log').read_bytes())[-1]
        text, _ = parsed(exported(Timeline(d))[0])
        for want in ('name: "baretrace dump 0"', 'name: "header.v"',
                     f'uint_value: {d.tsc_hz}', 'name: "missing_events.cpu1"'):
            self.assertTrue(want in text, want)


def packets_of(text):
    """[(sequence id, timestamp, 'B' | 'E' | None)] of protoc's text, in file order."""
    out = []
    for block in text.split('\npacket {')[1:]:
        seq = re.search(r'^  trusted_packet_sequence_id: (\d+)', block, re.M)
        ts = re.search(r'^  timestamp: (-?\d+)', block, re.M)
        kind = re.search(r'type: TYPE_SLICE_(BEGIN|END)', block)
        out.append((int(seq.group(1)) if seq else 0, int(ts.group(1)) if ts else 0,
                    kind.group(1)[0] if kind else None))
    return out


def stack_pairs(items):
    """[(BEGIN, END)] of (position, 'B'|'E') items paired as a track's
    slice stack does (an END closes the innermost open BEGIN); an END
    with nothing open pairs with None."""
    open_, pairs_ = [], []
    for pos, kind in items:
        if kind == 'B':
            open_.append(pos)
        elif kind == 'E':
            pairs_.append((open_.pop() if open_ else None, pos))
    return sorted(pairs_, key=lambda p: p[1])


def check_trace(test, data):
    """The project's Perfetto checker: every timestamp in Perfetto's signed
    range, and on each sequence (a CPU's track) the trace processor's
    pairing (packets in timestamp order, the sequence's order at equal
    times) is the export's own (packets in the order written): no slice
    is re-paired. Returns the packets."""
    text, _ = parsed(data)
    packets = packets_of(text)
    test.assertTrue(all(0 <= ts <= SIGNED_MAX for _, ts, _ in packets),
                    'a timestamp outside 0..2^63-1')
    by_seq = {}
    for pos, (seq, ts, kind) in enumerate(packets):
        by_seq.setdefault(seq, []).append((ts, pos, kind))
    for seq, items in by_seq.items():
        written = stack_pairs([(pos, kind) for _, pos, kind in items])
        shown = stack_pairs([(pos, kind) for _, pos, kind in sorted(items)])
        test.assertEqual(shown, written, f'sequence {seq}: slices re-paired')
    return text


class CrossingAndRange(unittest.TestCase):
    """Issue 29, item 6: what Perfetto shows is what the export means."""

    def test_the_mixed_workload(self):
        log, _ = generate('cpus=4', 'events=3000', 'cap=2048', 'workload=mixed', 'seed=8')
        tl = Timeline(dumplog.parse_log(log)[-1])
        data, summary = exported(tl)
        text = check_trace(self, data)
        self.assertGreater(summary.crossing_slices, 0)
        self.assertEqual(len(re.findall(rf'name_iid: {self.crossing_iid(tl)}\n\s*uint_value',
                                        text)), 2 * summary.crossing_slices)

    def crossing_iid(self, tl):
        return perfettoout.Schema(tl).label_iid[perfettoout.CROSSING]

    def on_both_paths(self, evs, hz):
        """(text, summary) of a one-CPU dump of evs exported by C and by
        Python, checked; the same on both."""
        n = len(evs)
        d = Dump(index=0, header={}, version=2, tsc_hz=hz, types=types(True), phases={},
                 complete=True, end_events=n, damaged_lines=0, missing_lines=0, warnings=[],
                 cpus=[CpuInfo(cpu=0, apic_id=0, capacity=64, recorded=n, overwritten=0,
                               first_seq=0, last_seq=n - 1, events=evs, summary_seen=True)])
        got = []
        for pure in (False, True):
            with oracle.reference_path() if pure else contextlib.nullcontext():
                data, summary = exported(Timeline(d))
            got.append((check_trace(self, data), summary))
        self.assertEqual(got[0], got[1])
        return got[0][0], got[0][1], Timeline(d)

    def test_crossing_halves_name_their_partner(self):
        begin, end = 4, 5                          # WORK_BEGIN, WORK_END
        # in ring order 1..2 nests in 0..3; in time 0..3 (100..250) ends
        # inside 1..2 (200..300): a non-monotonic TSC
        text, summary, tl = self.on_both_paths(
            [Event(0, 0, 100, begin, 0, 1, 0), Event(0, 1, 200, begin, 0, 1, 0),
             Event(0, 2, 300, end, 0, 1, 0), Event(0, 3, 250, end, 0, 1, 0)], 10**9)
        self.assertEqual(summary.crossing_slices, 1)
        self.assertIn(f'name_iid: {self.crossing_iid(tl)}\n      uint_value: 2', text)

    def test_times_past_the_signed_range(self):
        mark = 6                                   # MARK
        text, summary, _ = self.on_both_paths(
            [Event(0, 0, 0, mark, 0, 0, 0), Event(0, 1, 1 << 62, mark, 0, 0, 0)], 1000)
        self.assertTrue(summary.times_clamped)
        self.assertIn(f'timestamp: {SIGNED_MAX}', text)


def ipi_types(with_flow):
    t = types(True)
    t[20] = EventType(20, 'IPI_SEND', 'ipi', 'instant', ('dest_cpu', 'vector'),
                      flow=21 if with_flow else None)
    t[21] = EventType(21, 'IPI_RECV', 'ipi', 'instant', ('src_cpu', 'vector'))
    return t


def ipi_dump(script, with_flow=True):
    """A dump of IPIs: script is [(cpu, tsc, 'S'|'R', other cpu, vector)]."""
    per = {}
    for cpu, tsc, what, other, vec in script:
        per.setdefault(cpu, []).append((tsc, 20 if what == 'S' else 21, other, vec))
    cpus = []
    for cpu in range(max(per) + 1):
        evs = [Event(cpu, k, tsc, typ, 0, a0, a1)
               for k, (tsc, typ, a0, a1) in enumerate(sorted(per.get(cpu, [])))]
        cpus.append(CpuInfo(cpu=cpu, apic_id=cpu, capacity=64, recorded=len(evs), overwritten=0,
                            first_seq=0 if evs else None, last_seq=len(evs) - 1 if evs else None,
                            events=evs, summary_seen=True))
    return Dump(index=0, header={}, version=2, tsc_hz=10**9, cpus=cpus,
                types=ipi_types(with_flow), phases={}, complete=True,
                end_events=sum(len(c.events) for c in cpus), damaged_lines=0,
                missing_lines=0, warnings=[])


class Flows(unittest.TestCase):
    def matched(self, script, with_flow=True):
        f = flows.flows(Timeline(ipi_dump(script, with_flow)))
        pairs_ = {}
        for cpu, ends in f.by_cpu.items():
            for e in ends:
                pairs_.setdefault(e.flow_id, {})[e.terminating] = (cpu, e.event.tsc)
        return f, sorted((p[False], p[True]) for p in pairs_.values())

    def test_send_then_receive_on_the_named_cpu(self):
        f, got = self.matched([(0, 10, 'S', 1, 0xf1), (1, 15, 'R', 0, 0xf1),
                               (1, 20, 'S', 0, 0xf1), (0, 30, 'R', 1, 0xf1)])
        self.assertEqual(got, [((0, 10), (1, 15)), ((1, 20), (0, 30))])
        self.assertEqual((f.unmatched_causes, f.unmatched_effects), (0, 0))

    def test_a_receive_traced_after_the_next_send_is_still_the_first_ones(self):
        f, got = self.matched([(0, 10, 'S', 1, 1), (0, 20, 'S', 1, 1),
                               (1, 25, 'R', 0, 1), (1, 30, 'R', 0, 1)])
        self.assertEqual(got, [((0, 10), (1, 25)), ((0, 20), (1, 30))])

    def test_unmatched_ends_are_counted_not_drawn(self):
        f, got = self.matched([(0, 10, 'S', 1, 1), (0, 11, 'S', 1, 1),
                               (0, 12, 'S', 1, 1), (1, 20, 'R', 0, 1),     # merged, or pending
                               (0, 30, 'S', 1, 2), (1, 31, 'R', 0, 3),     # other vectors
                               (0, 40, 'S', 2, 1)])                        # nobody received
        self.assertEqual(got, [((0, 10), (1, 20))])               # only the oldest is sure
        self.assertEqual((f.unmatched_causes, f.unmatched_effects), (4, 1))
        self.assertEqual(f.reasons('cause'), {'loss': 0, 'ambiguous': 4, 'disorder': 0})
        self.assertEqual(f.reasons('effect'), {'loss': 0, 'ambiguous': 0, 'disorder': 1})

    def test_a_merged_ipi_leaves_unproven_what_it_makes_uncertain(self):
        """Two sends, one receive: the newer send may be merged into it or
        still pending (the next receive its), so every later arrow of the
        key would be a guess (issue 34: 85 wrong of 4,000): only the
        oldest send is drawn, and the last before a quiet spell longer
        than the window (which proves that nothing was pending then)."""
        script = [(0, 10, 'S', 1, 1), (0, 20, 'S', 1, 1), (1, 25, 'R', 0, 1)]
        script += [(0, t, 'S', 1, 1) for t in (30, 40, 50)]
        script += [(1, t + 5, 'R', 0, 1) for t in (30, 40, 50)]
        quiet = 200_000_000                          # 200 ms at tsc_hz 10**9
        script += [(0, quiet, 'S', 1, 1), (1, quiet + 5, 'R', 0, 1)]
        script.sort(key=lambda x: x[1])
        f, got = self.matched(script)
        self.assertEqual(got, [((0, 10), (1, 25)), ((0, 50), (1, 55)),
                               ((0, quiet), (1, quiet + 5))])
        self.assertEqual((f.matched, f.unmatched_causes, f.unmatched_effects), (3, 3, 2))
        f, got = self.matched(script[:3] + [(0, quiet, 'S', 1, 1), (1, quiet + 5, 'R', 0, 1)])
        self.assertEqual(got, [((0, 10), (1, 25)), ((0, 20), (1, 25)),     # merged: both
                               ((0, quiet), (1, quiet + 5))])

    def test_effects_that_lag_by_one_are_proven_by_what_follows(self):
        f, got = self.matched([(0, 10, 'S', 1, 1), (0, 20, 'S', 1, 1), (1, 21, 'R', 0, 1),
                               (0, 30, 'S', 1, 1), (1, 31, 'R', 0, 1), (1, 32, 'R', 0, 1)])
        self.assertEqual(got, [((0, 10), (1, 21)), ((0, 20), (1, 31)), ((0, 30), (1, 32))])
        self.assertEqual((f.unmatched_causes, f.unmatched_effects), (0, 0))

    def test_no_arrow_across_a_long_gap(self):
        second = 10**9                               # the dump's tsc_hz: 1 s
        f, got = self.matched([(0, 10, 'S', 1, 1), (1, 10 + second, 'R', 0, 1)])
        self.assertEqual(got, [])
        self.assertEqual((f.unmatched_causes, f.unmatched_effects), (1, 1))

    def test_old_dumps_without_flow_use_the_ipi_names(self):
        _, got = self.matched([(0, 10, 'S', 1, 1), (1, 15, 'R', 0, 1)], with_flow=False)
        self.assertEqual(len(got), 1)

    def test_json_draws_the_same_arrows(self):
        from btlib.export import jsonout
        tl = Timeline(ipi_dump([(0, 10, 'S', 1, 7), (1, 1500, 'R', 0, 7)]))
        out = io.StringIO(newline='')
        jsonout.write_json(tl, out)
        doc = json.loads(out.getvalue())
        ends = [e for e in doc['traceEvents'] if e.get('cat') == 'flow']
        self.assertEqual([(e['ph'], e['tid'], e['id'], e['ts']) for e in ends],
                         [('s', 0, 1, 0.0), ('f', 1, 1, 1.49)])
        self.assertEqual(ends[1]['bp'], 'e')
        self.assertEqual(doc['otherData']['flows'], 1)


class NativeAgainstReference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_compiled_core('the Perfetto writer in C')

    def both(self, dump):
        def run():
            return exported(Timeline(dump))[0]
        native, reference = oracle.both(run)
        self.assertEqual(native, reference)
        return native

    def test_built_dumps(self):
        for seed in range(12):
            rnd = random.Random(seed)
            hz = rnd.choice((10**9, 2400000000, 16001, 3))
            with self.subTest(seed=seed):
                self.both(oracle.packed_copy(built_dump(rnd, hz, with_pairs=seed % 2 == 0)))

    def test_ipi_dumps(self):
        rnd = random.Random(4)
        script = [(rnd.randrange(3), rnd.randrange(10**7), rnd.choice('SR'), rnd.randrange(3),
                   rnd.randrange(2)) for _ in range(400)]
        data = self.both(oracle.packed_copy(ipi_dump(script)))
        self.assertGreater(parsed(data)[1]['flow_starts'], 0)


if __name__ == '__main__':
    unittest.main()
