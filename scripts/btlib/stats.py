"""Statistics of one dump: counts, rates and latency distributions.

What `decode --stats` prints:
- per CPU: events, events/s over that CPU's own first-to-last span, and
  the losses (overwritten, dropped, damaged, sequence gaps);
- per event type: count and events/s over the whole dump's span;
- the duration of every matched BEGIN/END pair (pairs.py), per base name;
- the period between successive IRQ_TIMER_BEGIN events, per CPU.
Distributions give count, min, median, p99 and max, in TSC ticks and in
nanoseconds.  Percentiles use the nearest-rank method on the sorted
values (the median of an even count is the lower middle value), so every
number printed is one that was measured.
"""

import math
from dataclasses import dataclass

from .pairs import match_cpu
from .tables import format_table
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


def pair_durations(tl):
    """{base name: [ticks, ...]} over every CPU."""
    out = {}
    for cpu in tl.dump.cpus:
        for s in match_cpu(tl, cpu.events)[0]:
            out.setdefault(s.name, []).append(s.ticks)
    return out


def timer_periods(tl):
    """{cpu: [ticks between successive IRQ_TIMER_BEGIN]}."""
    timer = {t.id for t in tl.types.values() if t.name == TIMER_EVENT}
    out = {}
    for cpu in tl.dump.cpus:
        ticks = [e.tsc for e in cpu.events if e.type in timer]
        out[cpu.cpu] = [b - a for a, b in zip(ticks, ticks[1:])]
    return out


def type_counts(tl):
    counts = {}
    for e in tl.events:
        counts[e.type] = counts.get(e.type, 0) + 1
    return counts


def _fmt_rate(r):
    return '-' if r is None else f'{r:.1f}'


def _dist_row(tl, d):
    ns = [f'{tl.ticks_ns(x):.1f}' for x in (d.min, d.median, d.p99, d.max)]
    return [d.count, d.min, d.median, d.p99, d.max] + ns


DIST_HEADERS = ['N', 'MIN_TICKS', 'MEDIAN_TICKS', 'P99_TICKS', 'MAX_TICKS',
                'MIN_NS', 'MEDIAN_NS', 'P99_NS', 'MAX_NS']


def report_lines(tl):
    """The whole --stats report as a list of lines."""
    dump, events, hz = tl.dump, tl.events, tl.hz
    span = events[-1].tsc - events[0].tsc if events else 0
    lines = [f'dump {dump.index}: {len(dump.cpus)} CPUs, {len(events)} events '
             f'over {span / hz:.6f} s (tsc_hz={dump.tsc_hz})', '', 'per CPU']
    missing = dump.missing_events()
    rows = []
    for c in dump.cpus:
        m = missing.get(c.cpu, {})
        cspan = c.events[-1].tsc - c.events[0].tsc if c.events else 0
        rows.append([c.cpu, c.apic_id if c.apic_id >= 0 else '-', len(c.events), _fmt_rate(rate(len(c.events), cspan, hz)),
                     m.get('overwritten', 0), m.get('dropped', 0), m.get('damaged', 0),
                     m.get('seq_gaps', 0)])
    lines += format_table(['CPU', 'APIC', 'EVENTS', 'EVENTS/S', 'OVERWRITTEN',
                           'DROPPED', 'DAMAGED', 'SEQ_GAPS'], rows)
    lines += ['', 'per event type']
    rows = [[t, tl.name(t), n, _fmt_rate(rate(n, span, hz))]
            for t, n in sorted(type_counts(tl).items())]
    lines += format_table(['TYPE', 'NAME', 'COUNT', 'EVENTS/S'], rows)
    lines += ['', 'BEGIN/END durations']
    rows = [[name] + _dist_row(tl, distribution(v))
            for name, v in sorted(pair_durations(tl).items())]
    lines += format_table(['NAME'] + DIST_HEADERS, rows) if rows else ['  (no pairs)']
    lines += ['', f'timer period ({TIMER_EVENT} to the next, per CPU)']
    rows = [[cpu] + _dist_row(tl, distribution(v))
            for cpu, v in sorted(timer_periods(tl).items()) if v]
    lines += format_table(['CPU'] + DIST_HEADERS, rows) if rows else ['  (no timer ticks)']
    return lines


def write_stats(tl, out):
    out.write('\n'.join(report_lines(tl)) + '\n')
