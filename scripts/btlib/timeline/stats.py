"""Statistics of one dump: counts, rates and latency distributions.

What `decode --stats` prints:
- per CPU: events, events/s over that CPU's own first-to-last span, and
  the losses (the glossary's overwritten, excluded, damaged, unexplained,
  refused: docs/dump-format.md);
- per event type: count and events/s over the whole dump's span;
- the duration of every matched BEGIN/END pair (pairs.py), per base name;
- the period between successive IRQ_TIMER_BEGIN events, per CPU;
- the flows (IPI arrows) drawn, and the ends left unpaired with why
  (flows.py: the same in both paths, as the exporters use it).
Distributions give count, min, median, p99 and max, in TSC ticks and in
nanoseconds.  Percentiles use the nearest-rank method on the sorted
values (the median of an even count is the lower middle value), so every
number printed is one that was measured.

With the compiled decoder, when every CPU's events are packed records,
the counts, periods and durations come from decoder/stats.c in one pass
over the records (the kernel's pairing.c pairs them); the Python below is
the reference it must equal, and what BT_PURE_PYTHON=1 runs.
"""

import ctypes
import math
from collections import Counter, namedtuple
from dataclasses import dataclass
from itertools import compress, repeat

from ..native import library as native
from .losses import LOSS_KINDS
from ..dump.model import DEPRECATED_KINDS, RECORD
from . import flows
from .pairs import compiled, match_cpu, role_table, roles
from ..util.tables import format_table
from .timeline import TIMER_EVENT

PERCENTILES = (50, 99)


@dataclass
class Distribution:
    count: int
    min: int
    median: int
    p99: int
    max: int


def nearest_rank(sorted_values, pct):
    """The pct-th percentile by nearest rank of a sorted non-empty list."""
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def distribution(values):
    """Distribution of a list of ints, or None when it is empty."""
    if not values:
        return None
    v = sorted(values)
    return Distribution(len(v), v[0], nearest_rank(v, 50), nearest_rank(v, 99), v[-1])


def rate(count, ticks, hz):
    """Events per second over `ticks`, or None for an empty span."""
    return count * hz / ticks if ticks > 0 else None


# A record as a tuple with Event's field names: pairing reads only these,
# and a million of them cost a fraction of a million Events.
Rec = namedtuple('Rec', 'tsc seq type cpu flags a0 a1')
TSC_WORD, RECORD_QWORDS = 0, RECORD.size // 8        # a record's tsc: its 1st u64
TYPE_HALF, RECORD_HALVES = 6, RECORD.size // 2       # its type: its 7th u16


def _tscs_types(c):
    """CPU c's (tscs, types) as sequences, oldest first, from its records
    when the compiled decoder made them (no Event objects), else its events."""
    rec = c.packed() if hasattr(c, 'packed') else None
    if rec is None:
        return [e.tsc for e in c.events], [e.type for e in c.events]
    mv = memoryview(rec)                # views, not lists: C reads the records
    return mv.cast('Q')[TSC_WORD::RECORD_QWORDS], mv.cast('H')[TYPE_HALF::RECORD_HALVES]


def _paired_events(tl, c, types):
    """CPU c's BEGIN and END events, in ring order: all that pairing reads
    (instants never open or close a slice)."""
    paired = {t for t, v in tl.views.items() if v.kind in ('begin', 'end')}
    keep = [t in paired for t in types]
    rec = c.packed() if hasattr(c, 'packed') else None
    if rec is None:
        return list(compress(c.events, keep))
    return list(map(tuple.__new__, repeat(Rec), compress(RECORD.iter_unpack(rec), keep)))


def _columns(tl):
    """[_tscs_types(c) for each CPU c of the dump]."""
    return [_tscs_types(c) for c in tl.dump.cpus]


def pair_durations(tl, columns=None):
    """{base name: [ticks, ...]} over every CPU (columns: _columns(tl))."""
    out = {}
    for cpu, (_, types) in zip(tl.dump.cpus, columns or _columns(tl)):
        for s in match_cpu(tl, _paired_events(tl, cpu, types), cpu.cpu)[0]:
            out.setdefault(s.name, []).append(s.ticks)
    return out


def timer_periods(tl, columns=None):
    """{cpu: [ticks between successive IRQ_TIMER_BEGIN]}."""
    timer = {t.id for t in tl.types.values() if t.name == TIMER_EVENT}
    out = {}
    for cpu, (tscs, types) in zip(tl.dump.cpus, columns or _columns(tl)):
        ticks = list(compress(tscs, [t in timer for t in types]))
        out[cpu.cpu] = [b - a for a, b in zip(ticks, ticks[1:])]
    return out


def type_counts(tl, columns=None):
    counts = Counter()
    for _, types in columns or _columns(tl):
        counts.update(types)
    return dict(counts)


# ---- the same numbers from decoder/stats.c -------------------------------------

_Type, _In, _Dist, _Cpu = (native.S[t] for t in (
    'bt_stats_type', 'bt_stats_in', 'bt_dist', 'bt_cpu_stats'))


def _distribution(d):
    """A struct bt_dist as a Distribution, or None for no values."""
    if not d.count:
        return None
    v = [-x if neg else x for x, neg in zip(d.value, d.negative)]
    return Distribution(d.count, *v)


def _type_table(tl, names, types_max, no_group):
    """struct bt_stats_type by type (below types_max): each BEGIN's group
    (its base name's index in names, else no_group) and the timer event's
    mark."""
    role = roles(tl)
    timer = {t.id for t in tl.types.values() if t.name == TIMER_EVENT}
    group = {t: names.index(tl.views[t].base) for t, (kind, _) in role.items()
             if kind == 'begin' and 0 <= t < types_max}
    marked = {t for t in timer if 0 <= t < types_max} | set(group)
    n = max(marked, default=-1) + 1
    table = (_Type * max(1, n))()
    for t in marked:
        table[t].group, table[t].timer = group.get(t, no_group), t in timer
    return table, n


def native_figures(tl):
    """(type counts, [(max, first, last) tsc per CPU], {base name:
    durations Distribution}, {cpu: timer periods Distribution or None})
    computed in C, a CPU's records at a time, or None without the compiled
    core or without every CPU's records."""
    lib = compiled()
    cpus = tl.dump.cpus
    if lib is None or not all(getattr(c, 'compiled', lambda: False)() for c in cpus):
        return None
    types_max, no_group = native.const('BT_STATS_TYPES'), native.const('BT_STATS_NO_GROUP')
    names = sorted({tl.views[t].base for t, (kind, _) in roles(tl).items()
                    if kind == 'begin' and 0 <= t < types_max})
    if len(names) >= no_group:
        return None
    rtable, nroles = role_table(tl)
    ttable, ntypes = _type_table(tl, names, types_max, no_group)
    ncpu = len(cpus)
    sizes = (ctypes.c_size_t * max(1, ncpu))(*[c.count for c in cpus])
    counts = (ctypes.c_uint64 * types_max)()
    out = (_Cpu * max(1, ncpu))()
    groups = (_Dist * max(1, len(names)))()
    spec = _In(rtable, nroles, ttable, ntypes, len(names))
    run = lib.bt_stats_start(ctypes.byref(spec), sizes, ncpu, counts)
    if not run:
        return None
    for k, c in enumerate(cpus):
        rec = c.packed()                 # one CPU's records in memory at a time
        lib.bt_stats_cpu(run, k, rec, len(rec) // RECORD.size, ctypes.byref(out[k]))
    if lib.bt_stats_finish(run, groups) != 0:
        return None
    flat = memoryview(counts).cast('B').cast('Q').tolist()
    type_n = dict(compress(enumerate(flat), flat))
    durations = {name: _distribution(groups[g]) for g, name in enumerate(names)
                 if groups[g].count}
    periods = {c.cpu: _distribution(out[k].period) for k, c in enumerate(cpus)}
    tscs = [(out[k].max_tsc, out[k].first_tsc, out[k].last_tsc) for k in range(ncpu)]
    return type_n, tscs, durations, periods


def _figures(tl):
    """(type counts, the dump's last TSC, {base name: durations
    Distribution}, {cpu: timer periods Distribution or None}, [(events,
    newest - oldest TSC) per CPU]), in C when native_figures can, else in
    Python."""
    native = native_figures(tl)
    if native is not None:
        counts, tscs, durations, periods = native
        n = [c.count for c in tl.dump.cpus]
        last = max((m for k, (m, _, _) in zip(n, tscs) if k), default=tl.t0)
        spans = [(k, b - a if k else 0) for k, (_, a, b) in zip(n, tscs)]
        return counts, last, durations, periods, spans
    columns = _columns(tl)
    last = max((max(tscs) for tscs, _ in columns if len(tscs)), default=tl.t0)
    durations = {name: distribution(v) for name, v in pair_durations(tl, columns).items()}
    periods = {cpu: distribution(v) for cpu, v in timer_periods(tl, columns).items()}
    spans = [(len(tscs), tscs[-1] - tscs[0] if len(tscs) else 0) for tscs, _ in columns]
    return type_counts(tl, columns), last, durations, periods, spans


def _fmt_rate(r):
    return '-' if r is None else f'{r:.1f}'


def _dist_row(tl, d):
    ns = [f'{tl.ticks_ns(x):.1f}' for x in (d.min, d.median, d.p99, d.max)]
    return [d.count, d.min, d.median, d.p99, d.max] + ns


DIST_HEADERS = ['N', 'MIN_TICKS', 'MEDIAN_TICKS', 'P99_TICKS', 'MAX_TICKS',
                'MIN_NS', 'MEDIAN_NS', 'P99_NS', 'MAX_NS']


def report_lines(tl):
    """The whole --stats report as a list of lines."""
    dump, hz = tl.dump, tl.hz
    counts, last, durations, periods, spans = _figures(tl)
    span = last - tl.t0 if tl.count else 0
    lines = [f'dump {dump.index}: {len(dump.cpus)} CPUs, {tl.count} events '
             f'over {span / hz:.6f} s (tsc_hz={dump.tsc_hz})', '', 'per CPU']
    missing = dump.missing_events()
    rows = []
    for c, (n, cspan) in zip(dump.cpus, spans):
        m = missing.get(c.cpu, {})
        rows.append([c.cpu, c.apic_id if c.apic_id >= 0 else '-', n, _fmt_rate(rate(n, cspan, hz))]
                    + [m.get(k, 0) for k in LOSS_KINDS + DEPRECATED_KINDS])
    lines += format_table(['CPU', 'APIC', 'EVENTS', 'EVENTS/S']
                          + [k.upper() for k in LOSS_KINDS + DEPRECATED_KINDS], rows)
    lines += ['', 'per event type']
    rows = [[t, tl.name(t), n, _fmt_rate(rate(n, span, hz))]
            for t, n in sorted(counts.items())]
    lines += format_table(['TYPE', 'NAME', 'COUNT', 'EVENTS/S'], rows)
    lines += ['', 'BEGIN/END durations']
    rows = [[name] + _dist_row(tl, d) for name, d in sorted(durations.items())]
    lines += format_table(['NAME'] + DIST_HEADERS, rows) if rows else ['  (no pairs)']
    lines += ['', f'timer period ({TIMER_EVENT} to the next, per CPU)']
    rows = [[cpu] + _dist_row(tl, d) for cpu, d in sorted(periods.items()) if d]
    lines += format_table(['CPU'] + DIST_HEADERS, rows) if rows else ['  (no timer ticks)']
    return lines + flows.report_lines(tl)


def write_stats(tl, out):
    out.write('\n'.join(report_lines(tl)) + '\n')
