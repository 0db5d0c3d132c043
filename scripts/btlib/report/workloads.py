"""Workload results (src/perf/, docs/workloads.md) recovered from a dump.

The kernel records every workload result as a WORK trace event, so any
dump taken after a run carries it.  This module finds the runs in a
decoded dump and turns their events into plain, JSON-ready results:

    from btlib.dump.dumplog import parse_log
    from btlib.report import workloads
    dump = parse_log(open('serial.log', 'rb').read())[-1]
    for run in workloads.runs(dump):
        print(run.name, run.number, run.result)

Events are found by name in the dump's own event table, never by a
hard-coded id, and workloads by the dump's own %W lines (src/trace/
workloads.def: id, name, result events); WORKLOAD_IDS and RESULT_EVENTS
below only serve dumps without %W lines (kernels before them).  A run is
delimited by the WORKLOAD_BEGIN/WORKLOAD_END events (a0 = workload id,
a1 = run number); a result event belongs to the run of its workload whose
END is the first at or after it (so a run whose BEGIN the ring overwrote
still gets its results).  The stress workload is
checked event by event by stresscheck.verify_stress(); the bench workload
prints its table as BENCH lines instead (benchlines.bench_lines()).
"""

from __future__ import annotations

import ctypes
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field

from ..native import choice
from ..timeline import merge
from ..dump.model import RECORD_SIZE, Dump, Event, as_signed
from ..timeline.timeline import merged_events
from .stresscheck import verify_stress

# For dumps without %W lines only: a0 of WORKLOAD_BEGIN/END and the result
# events as src/recorder/workloads.def declared them when %W was introduced.
WORKLOAD_IDS = {1: 'hwlat', 2: 'ipi', 3: 'c2c', 4: 'tsc', 5: 'timer', 6: 'stress', 7: 'bench'}

# result event name -> the workload it belongs to
RESULT_EVENTS = {
    'HWLAT_GAP': 'hwlat', 'HWLAT_WINDOW': 'hwlat', 'HWLAT_CPU': 'hwlat', 'HWLAT_LOST': 'hwlat',
    'IPI_RTT': 'ipi', 'C2C_RTT': 'c2c', 'TSC_DELTA': 'tsc',
    'TIMER_WAKE': 'timer', 'TIMER_CPU': 'timer', 'TIMER_RANGE': 'timer',
    'STRESS': 'stress', 'STRESS_IRQ': 'stress', 'STRESS_CPU': 'stress',
}

SMI_UNKNOWN = (1 << 64) - 1          # a1 of HWLAT_GAP without an SMI counter
U64 = (1 << 64) - 1


# ---- runs ----------------------------------------------------------------------

class ResultEvents:
    """The result events of one type, in timeline order, as columns of
    ints (arrays), not an object each: a 1024-CPU matrix run's million
    events take 33 bytes each, not an Event's few hundred.  Iterating
    gives Event objects one at a time; len() counts them."""

    __slots__ = ('type', 'tsc', 'cpu', 'seq', 'flags', 'a0', 'a1')
    COLUMNS = (('tsc', 'Q'), ('cpu', 'I'), ('seq', 'I'), ('flags', 'B'), ('a0', 'Q'),
               ('a1', 'Q'))

    def __init__(self, type_id: int):
        self.type = type_id
        for name, code in self.COLUMNS:
            setattr(self, name, array(code))

    def __len__(self) -> int:
        return len(self.tsc)

    def __iter__(self):
        t = self.type
        for tsc, cpu, seq, flags, a0, a1 in zip(self.tsc, self.cpu, self.seq, self.flags,
                                                self.a0, self.a1):
            yield Event(cpu, seq, tsc, t, flags, a0, a1)

    def append(self, e: Event) -> None:
        for name, _ in self.COLUMNS:
            getattr(self, name).append(getattr(e, name))

    def add_records(self, records: bytes, cpus) -> None:
        """Append packed 32-byte records (model.RECORD) of this type, the
        k-th of CPU cpus[k] (the record keeps only its CPU's low byte)."""
        v = memoryview(records)
        q, i = v.cast('Q'), v.cast('I')
        self.tsc.frombytes(q[0::4].tobytes())
        self.seq.frombytes(i[2::8].tobytes())
        self.flags.frombytes(v[15::RECORD_SIZE].tobytes())
        self.a0.frombytes(q[2::4].tobytes())
        self.a1.frombytes(q[3::4].tobytes())
        self.cpu.extend(cpus)

    def part(self, lo: int, hi: int) -> 'ResultEvents':
        """Events lo..hi-1 (itself when that is all of them)."""
        if lo == 0 and hi == len(self):
            return self
        out = ResultEvents(self.type)
        out.extend(self, lo, hi)
        return out

    def extend(self, other: 'ResultEvents', lo: int, hi: int) -> None:
        for name, _ in self.COLUMNS:
            getattr(self, name).extend(getattr(other, name)[lo:hi])


@dataclass
class Run:
    """One run of one workload, as far as the dump holds it."""
    name: str
    number: int | None               # run number since boot; None: its END is not in the dump
    begin_tsc: int | None
    end_tsc: int | None
    events: dict[str, ResultEvents] = field(default_factory=dict)   # result events by name
    result: dict = field(default_factory=dict)                       # JSON-ready (see _RESULTS)

    @property
    def complete(self) -> bool:
        """Both ends of the run are in the dump."""
        return self.begin_tsc is not None and self.end_tsc is not None

    def count(self, name: str) -> int:
        return len(self.events.get(name, ()))


def type_ids(dump: Dump) -> dict[str, int]:
    """Event name -> id, from the dump's own table."""
    return {t.name: i for i, t in dump.types.items()}


def declared(dump: Dump) -> tuple[dict[int, str], dict[str, str]]:
    """(workload id -> name, result event name -> workload name) of a dump:
    what its %W lines declare; the built-in table for a dump without them."""
    if not dump.workloads:
        return dict(WORKLOAD_IDS), dict(RESULT_EVENTS)
    ids = {w.id: w.name for w in dump.workloads.values()}
    return ids, {ev: w.name for w in dump.workloads.values() for ev in w.results}


def runs(dump: Dump) -> list[Run]:
    """Every workload run the dump shows, oldest first, with its result."""
    ids = type_ids(dump)
    names = {i: n for n, i in ids.items()}
    workload_ids, result_events = declared(dump)
    begin, end = ids.get('WORKLOAD_BEGIN'), ids.get('WORKLOAD_END')
    bounds: dict[tuple[str, int], list] = {}          # (name, number) -> [begin, end]
    wanted = {begin, end} | {i for i, n in names.items() if n in result_events}
    found = _events_of_types(dump, wanted - {None})
    for t in (begin, end):
        for e in found.pop(t, ()):
            if e.a0 not in workload_ids:
                continue
            b = bounds.setdefault((workload_ids[e.a0], e.a1), [None, None])
            if t == begin:
                b[0] = e.tsc if b[0] is None else min(b[0], e.tsc)
            else:
                b[1] = e.tsc if b[1] is None else max(b[1], e.tsc)
    out = [Run(name, number, b[0], b[1]) for (name, number), b in bounds.items()]
    out.sort(key=lambda r: (r.end_tsc if r.end_tsc is not None else U64, r.number or 0))
    owner_of = {t: _stretches(col, result_events[names[t]], out, dump.tsc_hz)
                for t, col in found.items()}
    # An event no run owns starts a run of its own (numbered None) at the
    # first such event of its workload, which takes every later event of
    # that workload that no finished run owns.
    orphan_at: dict[str, tuple] = {}
    for t, col in found.items():
        for lo, _, run in owner_of[t]:
            if run is None:
                w, k = result_events[names[t]], _key(col, lo)
                orphan_at[w] = min(orphan_at.get(w, k), k)
                break
    orphans = {w: Run(w, None, None, None) for w in sorted(orphan_at, key=orphan_at.get)}
    out += orphans.values()
    parts = []
    for t, col in found.items():
        w = result_events[names[t]]
        parts += _give(col, names[t], owner_of[t], orphans.get(w), orphan_at.get(w))
    parts.sort(key=lambda p: p[0])                    # names in the order they first came
    for _, run, name, events in parts:
        run.events[name] = events
    for run in out:
        run.result = _RESULTS[run.name](run, dump) if run.name in _RESULTS else {}
    return out


def _key(col: 'ResultEvents', i: int) -> tuple:
    """The timeline key (tsc, cpu, seq) of col's i-th event."""
    return col.tsc[i], col.cpu[i], col.seq[i]


def _stretches(col: 'ResultEvents', workload: str, all_runs: list[Run],
               tsc_hz: int) -> list[tuple]:
    """[(lo, hi, run)]: col's events (timeline order) in stretches of one
    owner as _owner() gives it (None: no run): the owner only changes
    where a run of `workload` starts or ends, so it is asked once a
    stretch."""
    slack = tsc_hz // 1000 if tsc_hz else 0
    mine = [r for r in all_runs if r.name == workload]
    edges = {0, len(col)}
    for r in mine:
        if r.begin_tsc is not None:
            edges.add(bisect_left(col.tsc, max(0, r.begin_tsc - slack)))
        if r.end_tsc is not None:
            edges.add(bisect_left(col.tsc, r.end_tsc + slack + 1))
    edges = sorted(edges)
    return [(lo, hi, _owner(mine, workload, col.tsc[lo], tsc_hz))
            for lo, hi in zip(edges, edges[1:]) if lo < hi]


def _give(col: 'ResultEvents', name: str, stretches: list, orphan: Run | None,
          orphan_at: tuple | None) -> list:
    """[(first event's key, run, name, its events)] for each run that owns
    some of col's events; from orphan_at on, those no finished run owns
    go to orphan."""
    spans: dict[int, tuple] = {}                      # id(run) -> (run, [[lo, hi]])
    for lo, hi, run in stretches:
        pieces = [(lo, hi, run)]
        if orphan is not None:
            cut = _at_or_after(col, orphan_at, lo, hi)
            later = run if run is not None and run.end_tsc is not None else orphan
            pieces = [(lo, cut, run), (cut, hi, later)]
        for a, b, r in pieces:
            if a == b:
                continue
            mine = spans.setdefault(id(r), (r, []))[1]
            if mine and mine[-1][1] == a:
                mine[-1][1] = b
            else:
                mine.append([a, b])
    out = []
    for run, runs_of in spans.values():
        if len(runs_of) == 1:
            events = col.part(*runs_of[0])
        else:
            events = ResultEvents(col.type)
            for lo, hi in runs_of:
                events.extend(col, lo, hi)
        out.append((_key(col, runs_of[0][0]), run, name, events))
    return out


def _at_or_after(col: 'ResultEvents', key: tuple, lo: int, hi: int) -> int:
    """The first index in lo..hi whose event's key is not before key."""
    i = bisect_left(col.tsc, key[0], lo, hi)
    while i < hi and col.tsc[i] == key[0] and (col.cpu[i], col.seq[i]) < key[1:]:
        i += 1
    return i


def _events_of_types(dump: Dump, wanted: set[int]) -> dict[int, ResultEvents]:
    """The dump's events of the types in `wanted`, by type, each in
    timeline order (tsc, cpu, seq) as merged_events() gives them, kept as
    columns (ResultEvents), never as an Event each: a CPU's records are
    read a window at a time and the wanted ones picked (C), then the
    picked records of all CPUs merged (C) into columns a chunk at a time,
    so memory follows the results, not the dump (a 16.7 M-event dump of
    no workload keeps nothing), and a result takes 33 bytes (65 while
    they are merged)."""
    found: dict[int, ResultEvents] = {}
    if not all(c.compiled() for c in dump.cpus) or not choice.compiled():
        for e in merged_events(dump):
            if e.type in wanted:
                found.setdefault(e.type, ResultEvents(e.type)).append(e)
        return found
    picked_of = []
    for c in dump.cpus:
        source = c.record_source()
        parts = []
        for records in [source] if isinstance(source, bytes) else source.windows():
            parts += [records[i * RECORD_SIZE:(i + 1) * RECORD_SIZE]
                      for i in merge.pick_types(records, wanted)]
        picked_of.append(b''.join(parts))
    if not any(picked_of):
        return found
    kmerge = merge.Merge(picked_of, [c.cpu for c in dump.cpus])
    del picked_of                                     # the merge holds them
    for buf, cpu_buf, n in kmerge.chunks(cpus=True):
        records = ctypes.string_at(buf, n * RECORD_SIZE)
        types = memoryview(records).cast('H')[6::RECORD_SIZE // 2].tolist()
        cpus = memoryview(cpu_buf).cast('B').cast('I')[:n]
        if types.count(types[0]) == n:               # a matrix run: one type throughout
            found.setdefault(types[0], ResultEvents(types[0])).add_records(records, cpus)
            continue
        by_type: dict[int, list[int]] = {}
        for i, t in enumerate(types):
            by_type.setdefault(t, []).append(i)
        for t, idx in by_type.items():
            found.setdefault(t, ResultEvents(t)).add_records(
                b''.join([records[i * RECORD_SIZE:(i + 1) * RECORD_SIZE] for i in idx]),
                [cpus[i] for i in idx])
    return found


def _owner(all_runs: list[Run], name: str, tsc: int, tsc_hz: int) -> Run | None:
    """The run of workload `name` an event at `tsc` belongs to: the first
    whose END is at or after it (a CPU's TSC may be a little behind the boot
    CPU's: one millisecond of slack), else one still open."""
    slack = tsc_hz // 1000 if tsc_hz else 0
    open_run = None
    for r in all_runs:
        if r.name != name:
            continue
        if r.end_tsc is None:
            if r.begin_tsc is None or tsc + slack >= r.begin_tsc:
                open_run = r
            continue
        if tsc <= r.end_tsc + slack and (r.begin_tsc is None or tsc + slack >= r.begin_tsc):
            return r
    return open_run


def latest(dump: Dump, name: str) -> Run | None:
    """The newest run of workload `name` with results, or None."""
    found = [r for r in runs(dump) if r.name == name and r.events]
    return found[-1] if found else None


# ---- per-workload results ----------------------------------------------------

def _ns(ticks: float, tsc_hz: int) -> float | None:
    return ticks * 1e9 / tsc_hz if tsc_hz else None


SHARED_MAX = 1 << 16      # distinct values per matrix that share one object each


class _Shared:
    """make(key), once per distinct key (up to SHARED_MAX of them): the
    cells of a matrix with equal values hold one int or float object, not
    one each, so a 1024-CPU matrix of a few thousand distinct medians is
    its 8 MB of references (a value past the cap is made for its cell)."""

    def __init__(self, make):
        self.made, self.make = {}, make

    def __call__(self, key):
        v = self.made.get(key)
        if v is None:
            v = self.make(key)
            if len(self.made) < SHARED_MAX:
                self.made[key] = v
        return v


def _cpus(dump: Dump) -> int:
    return max((c.cpu for c in dump.cpus), default=-1) + 1


def _matrix(n: int):
    return [[None] * n for _ in range(n)]


def measured_cpus(m) -> list[int]:
    """The CPUs of square matrix m with a value in their row or column, in
    order (a run over cpus=LIST measured only those)."""
    n = len(m)
    rows = [row.count(None) != n for row in m]
    cols = [col.count(None) != n for col in zip(*m)]
    return [c for c in range(n) if rows[c] or cols[c]]


def _cells(run: Run, name: str, signed: bool = False):
    """(cpu, a0, a1) of each of run's `name` events, in timeline order,
    from the columns (a1 as int64 when signed)."""
    ev = run.events.get(name)
    if not ev:
        return ()
    if isinstance(ev, ResultEvents):
        return zip(ev.cpu, ev.a0, array('q', ev.a1.tobytes()) if signed else ev.a1)
    return ((e.cpu, e.a0, as_signed(e.a1) if signed else e.a1) for e in ev)


def _ipi(run: Run, dump: Dump) -> dict:
    n = _cpus(dump)
    ticks = _matrix(n)
    same = _Shared(int)
    for cpu, a0, a1 in _cells(run, 'IPI_RTT'):
        if a0 < n:
            ticks[cpu][a0] = same(a1)
    return _matrix_result(ticks, dump, 'median IPI round trip (send to acknowledgement)',
                          'row = sender, column = receiver')


def _c2c(run: Run, dump: Dump) -> dict:
    n = _cpus(dump)
    ticks = _matrix(n)
    half = _Shared(lambda a1: a1 / 2)
    for cpu, a0, a1 in _cells(run, 'C2C_RTT'):
        if a0 < n:
            ticks[cpu][a0] = ticks[a0][cpu] = half(a1)
    return _matrix_result(ticks, dump, 'one-way cache-line latency (median round trip / 2)',
                          'symmetric')


def _tsc(run: Run, dump: Dump) -> dict:
    n = _cpus(dump)
    delta = _matrix(n)
    same = _Shared(int)
    for cpu, a0, a1 in _cells(run, 'TSC_DELTA', signed=True):
        if a0 < n:
            delta[a0][cpu] = same(a1)                     # [writer][reader]
    half = _Shared(lambda diff: diff / 2)
    offset = _matrix(n)
    bound = 0.0
    worst = None
    for w, row in enumerate(delta):
        out_row = offset[w]
        for r, d in enumerate(row):
            if w == r or d is None:
                continue
            back = delta[r][w]
            if back is None:
                continue
            out_row[r] = half(d - back)
            both = (d + back) / 2
            if both > bound:
                bound = both
            if worst is None or d < worst['delta_ticks']:
                worst = {'writer': w, 'reader': r, 'delta_ticks': d}
    out = _matrix_result(offset, dump, "TSC offset of the column CPU against the row CPU",
                         'antisymmetric; exact within +-bound_ticks')
    out['delta_ticks'] = delta
    out['bound_ticks'] = bound
    out['worst'] = worst
    out['warp'] = bool(worst and worst['delta_ticks'] < 0)
    return out


def _matrix_result(ticks, dump: Dump, what: str, layout: str) -> dict:
    hz = dump.tsc_hz
    in_ns = _Shared(lambda v: v * 1e9 / hz)
    ns = [[None if v is None else in_ns(v) for v in row] for row in ticks] if hz else \
        [[None] * len(row) for row in ticks]
    vals = [v for row in ticks for v in row if v is not None]
    return {'what': what, 'layout': layout, 'cpus': len(ticks), 'ticks': ticks, 'ns': ns,
            'cells': len(vals), 'min_ticks': min(vals, default=None),
            'max_ticks': max(vals, default=None),
            'median_ticks': _median(vals), 'measured_cpus': measured_cpus(ticks)}


def _median(vals):
    if not vals:
        return None
    v = sorted(vals)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def _percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, int(round(p / 100 * (len(sorted_vals) - 1))))
    return sorted_vals[k]


def _timer(run: Run, dump: Dump) -> dict:
    hz = dump.tsc_hz
    per_cpu = {}
    for e in run.events.get('TIMER_WAKE', ()):
        per_cpu.setdefault(e.cpu, []).append(as_signed(e.a1))
    summary = {e.cpu: (e.a0, e.a1) for e in run.events.get('TIMER_CPU', ())}
    ranges = {e.cpu: (as_signed(e.a0), as_signed(e.a1)) for e in run.events.get('TIMER_RANGE', ())}
    cpus = []
    for cpu in sorted(set(per_cpu) | set(summary)):
        lat = sorted(per_cpu.get(cpu, []))
        samples, missed = summary.get(cpu, (None, None))
        lo, hi = ranges.get(cpu, (None, None))
        row = {'cpu': cpu, 'samples': samples, 'missed': missed, 'in_dump': len(lat),
               'min_ticks': lo if lo is not None else (lat[0] if lat else None),
               'max_ticks': hi if hi is not None else (lat[-1] if lat else None),
               'avg_ticks': sum(lat) / len(lat) if lat else None,
               'p99_ticks': _percentile(lat, 99), 'early': sum(1 for v in lat if v < 0)}
        for k in ('min', 'max', 'avg', 'p99'):
            v = row[k + '_ticks']
            row[k + '_us'] = None if v is None else _ns(v, hz) / 1000 if hz else None
        cpus.append(row)
    return {'what': 'one-shot LAPIC timer wake-up latency: handler entry - deadline',
            'cpus': cpus, 'latency_ticks': {str(c): v for c, v in sorted(per_cpu.items())},
            'histogram_us': _log_histogram([v for vs in per_cpu.values() for v in vs], hz)}


def _log_histogram(ticks: list[int], hz: int) -> list[dict]:
    """The kernel's buckets: early (< 0), < 1 us, then powers of two in us."""
    if not hz:
        return []
    buckets: dict[int, int] = {}
    for t in ticks:
        if t < 0:
            b = -1
        else:
            b = int(t * 1e6 / hz).bit_length()      # 0: < 1 us, k: [2^(k-1), 2^k)
        buckets[b] = buckets.get(b, 0) + 1
    out = []
    for b in sorted(buckets):
        lo = None if b < 0 else (0 if b == 0 else 1 << (b - 1))
        hi = None if b < 0 else (1 if b == 0 else 1 << b)
        out.append({'from_us': lo, 'to_us': hi, 'count': buckets[b],
                    'label': 'early' if b < 0 else f'{lo}-{hi}'})
    return out


def _hwlat(run: Run, dump: Dump) -> dict:
    hz = dump.tsc_hz
    gaps: dict[int, list] = {}
    for e in run.events.get('HWLAT_GAP', ()):
        gaps.setdefault(e.cpu, []).append({'tsc': e.tsc, 'gap_ticks': e.a0,
                                           'smis': None if e.a1 == SMI_UNKNOWN else e.a1})
    per = {e.cpu: {'gaps': e.a0, 'max_gap_ticks': e.a1} for e in run.events.get('HWLAT_CPU', ())}
    for e in run.events.get('HWLAT_LOST', ()):
        per.setdefault(e.cpu, {}).update({'lost_ticks': e.a0, 'spin_ticks': e.a1})
    smis: dict[int, int | None] = {}
    for e in run.events.get('HWLAT_WINDOW', ()):
        if e.a1 == SMI_UNKNOWN:
            smis[e.cpu] = None
        elif smis.get(e.cpu, 0) is not None:
            smis[e.cpu] = smis.get(e.cpu, 0) + e.a1
    cpus = []
    for cpu in sorted(set(per) | set(gaps)):
        p = per.get(cpu, {})
        lost, spun = p.get('lost_ticks'), p.get('spin_ticks')
        row = {'cpu': cpu, 'gaps': p.get('gaps'), 'gaps_in_dump': len(gaps.get(cpu, ())),
               'max_gap_ticks': p.get('max_gap_ticks'), 'lost_ticks': lost, 'spin_ticks': spun,
               'lost_ppm': lost * 1e6 / spun if lost is not None and spun else None,
               'smis': smis.get(cpu)}
        for k in ('max_gap', 'lost'):
            v = row[k + '_ticks']
            row[k + '_us'] = None if v is None or not hz else v * 1e6 / hz
        cpus.append(row)
    return {'what': 'gaps in back-to-back TSC reads with interrupts off', 'cpus': cpus,
            'gaps': {str(c): v for c, v in sorted(gaps.items())},
            'total_gaps': sum(r['gaps'] or 0 for r in cpus),
            'max_gap_us': max((r['max_gap_us'] or 0 for r in cpus), default=0)}


def _stress(run: Run, dump: Dump) -> dict:
    check = verify_stress([dump])
    totals = {e.cpu: {'attempts': e.a0, 'refused': e.a1}
              for e in run.events.get('STRESS_CPU', ())}
    return {'what': 'ring reliability under nested writers', 'cpus': totals,
            'check': check.as_dict()}


_RESULTS = {'ipi': _ipi, 'c2c': _c2c, 'tsc': _tsc, 'timer': _timer, 'hwlat': _hwlat,
            'stress': _stress}


# ---- the machine ------------------------------------------------------------------

def machine(dump: Dump) -> str:
    """The machine a dump came from, in one line, from what its %M line
    carries: CPUs online (of those found), firmware, TSC rate and source;
    what the machine is (its %I lines: system, CPU, firmware, memory) on a
    line before them, when the dump has %I lines."""
    h = dump.header
    parts = []
    online, found = h.get('online'), h.get('found')
    cpus = online or h.get('cpus')
    if cpus:
        parts.append(f'{cpus} CPUs' + (f' of {found}' if found and found != cpus else ''))
    if h.get('fw'):
        parts.append(f'{h["fw"].upper() if h["fw"] in ("bios", "uefi") else h["fw"]} firmware')
    if dump.tsc_hz:
        src = f' ({h["tsc_src"]})' if h.get('tsc_src') else ''
        inv = '' if h.get('invariant_tsc') != '0' else ', not invariant'
        parts.append(f'TSC {dump.tsc_hz / 1e9:.3f} GHz{src}{inv}')
    return '\n'.join(x for x in (dump.machine_name(), ', '.join(parts)) if x)
