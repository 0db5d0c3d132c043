"""report on a stream (docs/streaming.md): the run per time window, read
window after window of the joined stream (btlib.timeline.streamwin), so a
day's stream is reported in the memory of one window of events plus one
time window's timer latenesses.

Per time window (report --window, default a minute) and CPU: events and
events/s, the local APIC timer's lateness (IRQ_TIMER_BEGIN's
lateness_tsc: median, p99 and max in us, by nearest rank as decode
--stats), the hwlat workload's gaps (HWLAT_GAP: count and longest, us)
and the events missing (the *LOST* records' counts: overwritten before
it was streamed, never arrived, ...), each counted in the window of the
event it stands before.
"""

from __future__ import annotations

import re

from ..dump.model import RECORD, RECORD_SIZE, as_signed
from ..timeline.merge import pick_types
from ..timeline.stats import distribution
from ..util.tables import format_table

TIMER_EVENT, GAP_EVENT = 'IRQ_TIMER_BEGIN', 'HWLAT_GAP'
DEFAULT_WINDOW_S = 60.0
UNITS = {'ms': 1e-3, 's': 1.0, 'm': 60.0, 'min': 60.0, 'h': 3600.0}
SPAN = re.compile(r'(\d+(?:\.\d+)?)(ms|s|m|min|h)?')
COLUMNS = ('WINDOW_S', 'CPU', 'EVENTS', 'EVENTS/S', 'LATE_P50_US', 'LATE_P99_US',
           'LATE_MAX_US', 'HWLAT_GAPS', 'HWLAT_MAX_US', 'MISSING')
TSC_STRIDE = RECORD_SIZE // 8


def window_seconds(text: str) -> float:
    """'60s', '500ms', '1m', '2h' or '30' (seconds) as seconds; ValueError."""
    m = SPAN.fullmatch(text.strip())
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f'{text!r} is not a time span (60s, 500ms, 5m, 1h)')
    return float(m.group(1)) * UNITS[m.group(2) or 's']


class _Cell:
    """One CPU in one time window."""
    __slots__ = ('events', 'late', 'gaps', 'gap_max', 'missing')

    def __init__(self):
        self.events, self.late, self.gaps, self.gap_max, self.missing = 0, [], 0, 0, 0


class WindowReport:
    """Rows per time window and CPU, from a stream's window Dumps (add()),
    a time window's rows made as soon as the stream has passed it."""

    def __init__(self, seconds: float = DEFAULT_WINDOW_S):
        self.seconds = seconds
        self.hz = self.t0 = self.span = None
        self.timer = self.gap = None
        self.cells: dict[int, dict[int, _Cell]] = {}    # window -> cpu -> cell
        self.rows: list[list] = []
        self.json: list[dict] = []

    def add(self, w):
        """One window Dump of the stream (returns it, for a chain)."""
        if self.hz is None:
            self.hz = w.tsc_hz or 1_000_000_000
            self.span = max(1, round(self.seconds * self.hz))
            names = {t.name: i for i, t in w.types.items()}
            self.timer, self.gap = names.get(TIMER_EVENT), names.get(GAP_EVENT)
        newest = None
        for c in w.cpus:
            rec = c.records or b''
            if not rec:
                continue
            tscs = memoryview(rec).cast('Q')[::TSC_STRIDE]
            if self.t0 is None:
                self.t0 = min(x for x in tscs[:1])
            self._count(c.cpu, tscs, rec, c.holes or ())
            last = tscs[-1]
            newest = last if newest is None else min(newest, last)
        if newest is not None:
            self._close(self._bucket(newest))
        return w

    def _bucket(self, tsc: int) -> int:
        return max(0, (tsc - self.t0) // self.span)

    def _cell(self, k: int, cpu: int) -> _Cell:
        return self.cells.setdefault(k, {}).setdefault(cpu, _Cell())

    def _count(self, cpu: int, tscs, rec: bytes, holes) -> None:
        n = len(tscs)
        i = 0
        while i < n:                      # events per window: bisect, not a step per event
            k = self._bucket(tscs[i])
            end = self.t0 + (k + 1) * self.span
            j = _first_at_or_after(tscs, end, i, n)
            self._cell(k, cpu).events += j - i
            i = j
        for i, _, count, _ in holes:
            self._cell(self._bucket(tscs[min(i, n - 1)]), cpu).missing += count
        for t, put in ((self.timer, self._late), (self.gap, self._gap)):
            if t is not None:
                for i in pick_types(rec, {t}):
                    put(cpu, RECORD.unpack_from(rec, i * RECORD_SIZE))

    def _late(self, cpu, r):
        self._cell(self._bucket(r[0]), cpu).late.append(as_signed(r[6]))

    def _gap(self, cpu, r):
        cell = self._cell(self._bucket(r[0]), cpu)
        cell.gaps += 1
        cell.gap_max = max(cell.gap_max, r[5])

    def _close(self, before: int | None) -> None:
        """The rows of the windows below `before` (None: all)."""
        for k in sorted(self.cells):
            if before is not None and k >= before:
                break
            for cpu, cell in sorted(self.cells.pop(k).items()):
                self._row(k, cpu, cell)

    def _row(self, k, cpu, cell):
        us = 1e6 / self.hz
        d = distribution(cell.late)
        start = k * self.span / self.hz
        late = [round(v * us, 1) for v in (d.median, d.p99, d.max)] if d else [None] * 3
        self.json.append({'window_s': start, 'cpu': cpu, 'events': cell.events,
                          'events_per_s': cell.events / self.seconds,
                          'lateness_us': dict(zip(('p50', 'p99', 'max'), late)),
                          'hwlat_gaps': cell.gaps, 'hwlat_max_us': cell.gap_max * us,
                          'missing': cell.missing})
        self.rows.append([f'{start:.3f}', cpu, cell.events, f'{cell.events / self.seconds:.1f}',
                          *('-' if v is None else f'{v:.1f}' for v in late), cell.gaps,
                          f'{cell.gap_max * us:.1f}' if cell.gaps else '-', cell.missing])

    def lines(self) -> list[str]:
        """The table, once every window has been added."""
        self._close(None)
        if not self.rows:
            return ['no events in the stream']
        head = [f'per {self.seconds:g} s window (WINDOW_S: its start, seconds since the '
                f'stream\'s first event); lateness of the timer ({TIMER_EVENT}) in us']
        return head + format_table(list(COLUMNS), self.rows, indent='')


def _first_at_or_after(tscs, end: int, lo: int, hi: int) -> int:
    """The first index in [lo, hi) whose TSC is >= end (TSCs ascending), else hi."""
    while lo < hi:
        mid = (lo + hi) // 2
        if tscs[mid] < end:
            lo = mid + 1
        else:
            hi = mid
    return lo
