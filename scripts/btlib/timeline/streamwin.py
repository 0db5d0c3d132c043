"""A stream's trace as a series of windows: each a Dump of the events of
every CPU in a span of time, in order, so that an exporter writes the
whole stream a window at a time and memory follows a window, not the run
(docs/streaming.md).

    wins = Windows(join)                      # a btlib.dump.stream.Join
    for part in ordered_parts(dumps, key):
        for w in wins.add(part): write(Timeline(w, t0=wins.t0))
    for w in wins.finish(): ...

Parts are cut by time, not by part: a part is taken CPU by CPU while the
writers run, so the next part may hold a CPU's events older than the
newest of another CPU in this one. A window takes the events older than
the newest part's first event on every CPU that has one (the watermark),
and no later than a BEGIN still open on its CPU (HOLD events looked back
at most), so a slice lies whole in one window and the windows follow one
another in time. Its holes (*LOST*) are the join's (CpuInfo.holes).
"""

from __future__ import annotations

import bisect
from collections import Counter

from ..dump import builtin
from ..dump.model import RECORD_SIZE, CpuInfo, Dump
from ..util.tables import format_table
from .timeline import NOMINAL_HZ, unknown_name

WINDOW_EVENTS = 1 << 16      # events held before a window is written
FORCE_EVENTS = 16 * WINDOW_EVENTS   # held beyond this: written even through an open slice
HOLD = 4096                  # events looked back for a BEGIN still open
TSC_STRIDE = RECORD_SIZE // 8        # a record's tsc: its first u64
TYPE_AT, TYPE_STRIDE = 6, RECORD_SIZE // 2   # its type: its 7th u16


class _Held:
    """One CPU's events not yet written: records and holes (index into them)."""
    __slots__ = ('records', 'holes')

    def __init__(self):
        self.records, self.holes = bytearray(), []

    def add(self, records: bytes, holes: list) -> None:
        at = len(self.records) // RECORD_SIZE
        self.holes += [(i + at, first, n, cause) for i, first, n, cause in holes]
        self.records += records

    @property
    def count(self) -> int:
        return len(self.records) // RECORD_SIZE

    def tscs(self) -> list[int]:
        return memoryview(self.records).cast('Q')[::TSC_STRIDE].tolist()

    def cut(self, n: int) -> tuple[bytes, list]:
        """The first n events and their holes, taken out."""
        head = bytes(self.records[:n * RECORD_SIZE])
        del self.records[:n * RECORD_SIZE]
        mine = [h for h in self.holes if h[0] < n]
        self.holes = [(i - n, f, c, w) for i, f, c, w in self.holes if i >= n]
        return head, mine


class Windows:
    """Windows (Dumps) of the stream a Join joins, as its parts come."""

    def __init__(self, join, window: int = WINDOW_EVENTS):
        self.join = join
        self.window = window
        self.held: dict[int, _Held] = {}
        self.t0: int | None = None
        self.count = 0               # windows made
        self.events = 0              # events in them
        self.begins: set[int] = set()
        self.ends: set[int] = set()

        self.builtin: builtin.Table | None = None    # used: part 0 is missing

    def tables(self):
        """Part 0 (its tables), else the built-in table (builtin.py), else None."""
        if self.join.part0 is not None:
            return self.join.part0
        if self.builtin is None:
            self.builtin = builtin.table()
        return self.builtin

    def _kinds(self):
        t = self.tables()
        if t is not None and not self.begins:
            self.begins = {i for i, x in t.types.items() if x.kind == 'begin'}
            self.ends = {i for i, x in t.types.items() if x.kind == 'end'}

    def add(self, part: Dump) -> list[Dump]:
        """Join part; the windows it lets go (none, or one)."""
        firsts = []
        for cpu, records, holes in self.join.add(part):
            self.held.setdefault(cpu, _Held()).add(records, holes)
            if records:
                tsc = int.from_bytes(records[:8], 'little')
                firsts.append(tsc)
                self.t0 = tsc if self.t0 is None else min(self.t0, tsc)
        held = sum(h.count for h in self.held.values())
        if held < self.window or not firsts:
            return []
        # Past FORCE_EVENTS (a BEGIN open for long: a CPU hung inside a
        # slice) the window goes at the watermark, that slice cut in two.
        mark = min(firsts) if held > FORCE_EVENTS else self._open(min(firsts))
        w = self._take(mark)
        return [w] if w is not None else []

    def finish(self) -> list[Dump]:
        """The last window: every event still held."""
        w = self._take(None, last=True)
        return [w] if w is not None else []

    def _open(self, mark: int) -> int:
        """The watermark lowered to the oldest BEGIN still open below it, on
        any CPU (again until none is: a lower mark may open another's)."""
        self._kinds()
        if not self.begins:
            return mark
        while True:
            lower = self._open_once(mark)
            if lower == mark:
                return mark
            mark = lower

    def _open_once(self, mark: int) -> int:
        for h in self.held.values():
            tscs = h.tscs()
            n = bisect.bisect_left(tscs, mark)
            types = memoryview(h.records).cast('H')[TYPE_AT::TYPE_STRIDE]
            depth, oldest = 0, None
            for j in range(n - 1, max(-1, n - 1 - HOLD), -1):
                t = types[j]
                if t in self.ends:
                    depth += 1
                elif t in self.begins:
                    if depth:
                        depth -= 1
                    else:
                        oldest = j
            if oldest is not None:
                mark = min(mark, tscs[oldest])
        return mark

    def _take(self, mark: int | None, last: bool = False) -> Dump | None:
        """A window of the events below mark (None: all held)."""
        cpus = []
        for cpu in sorted(self.held):
            h = self.held[cpu]
            n = h.count if mark is None else bisect.bisect_left(h.tscs(), mark)
            records, holes = h.cut(n)
            cpus.append(self._cpu(cpu, records, holes))
        got = sum(c.count for c in cpus)
        if not got and not last:
            return None
        self.count += 1
        self.events += got
        return self.window_dump(cpus)

    def _cpu(self, cpu: int, records: bytes, holes: list) -> CpuInfo:
        j = self.join.cpus.get(cpu)
        c = CpuInfo(cpu=cpu, apic_id=j.apic if j else -1, capacity=j.capacity if j else 0,
                    recorded=0, overwritten=0, events=None, records=records, holes=holes)
        c.summary_seen = True
        return c

    def window_dump(self, cpus: list[CpuInfo]) -> Dump:
        """A Dump of these CPUs with the stream's tables (part 0's, or the
        built-in ones) and part 0's header (else the newest part's)."""
        t = self.tables()
        first = self.join.part0 or self.join.last
        header = dict(first.header if first is not None else {})
        header.pop('final', None)
        header['window'] = str(self.count - 1)
        return Dump(index=first.index if first is not None else 0, header=header, version=2,
                    tsc_hz=first.tsc_hz if first is not None else 0,
                    cpus=cpus, types=t.types if t is not None else {},
                    phases=t.phases if t is not None else {}, complete=True,
                    end_events=None, damaged_lines=0, missing_lines=0, warnings=[],
                    categories=t.categories if t is not None else {},
                    workloads=getattr(t, 'workloads', {}),
                    identity=getattr(t, 'identity', {}))


class WindowStats:
    """decode --stream --stats: counts of the whole stream, gathered window
    by window (nothing kept of an event but its counts): per CPU events,
    events/s over its span and losses by cause; per event type its count.
    Distributions over time are report --window's."""

    def __init__(self):
        self.windows = self.events = self.tsc_hz = 0
        self.cpus: dict[int, list] = {}       # cpu -> [events, first tsc, last tsc]
        self.types: Counter = Counter()
        self.names: dict[int, str] = {}

    def add(self, w: Dump) -> Dump:
        self.windows += 1
        self.tsc_hz = self.tsc_hz or w.tsc_hz
        self.names.update((i, t.name) for i, t in w.types.items())
        for c in w.cpus:
            rec = c.records or b''
            n = len(rec) // RECORD_SIZE
            self.events += n
            row = self.cpus.setdefault(c.cpu, [0, None, None])
            if not n:
                continue
            tscs = memoryview(rec).cast('Q')[::TSC_STRIDE]
            row[0] += n
            row[1] = tscs[0] if row[1] is None else min(row[1], tscs[0])
            row[2] = tscs[-1] if row[2] is None else max(row[2], tscs[-1])
            self.types.update(memoryview(rec).cast('H')[TYPE_AT::TYPE_STRIDE])
        return w

    def lines(self, join) -> list[str]:
        hz = self.tsc_hz or NOMINAL_HZ
        lost = join.lost()
        rows = []
        for cpu, (n, lo, hi) in sorted(self.cpus.items()):
            span = (hi - lo) / hz if n > 1 else 0
            rows.append([cpu, n, f'{n / span:.1f}' if span else '-',
                         f'{span:.3f}', sum(lost.get(cpu, {}).values())])
        out = [f'stream of {join.parts.top} parts, {self.events} events'
               + ('' if self.tsc_hz else ' (tsc_hz unknown: 1 GHz assumed)'), '']
        out += format_table(['CPU', 'EVENTS', 'EVENTS/S', 'SPAN_S', 'MISSING'], rows, indent='')
        out.append('')
        out += format_table(['TYPE', 'NAME', 'COUNT'],
                            [[t, self.names.get(t, unknown_name(t)), k]
                             for t, k in sorted(self.types.items())], indent='')
        return out
