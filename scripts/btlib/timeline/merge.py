"""The timeline's order in C: several CPUs' records merged by (tsc, cpu,
seq) a chunk at a time (decoder/kmerge.c, merge.c), and the record scans the
exporters share (which types a CPU holds, whether it may have holes).

    m = Merge([c.record_source() for c in dump.cpus], [c.cpu for c in dump.cpus])
    for buf, n in m.chunks(): ...

Used only when btlib.native.choice.compiled(); the pure-Python order is
Dump.events()'s sort (btlib.timeline.timeline).
"""

from __future__ import annotations

import ctypes

from ..dump.linedecode import WINDOW_EVENTS
from ..dump.model import RECORD_SIZE, RECORD_WORDS, SEQ_WORD
from ..native import library as native

_Scan, _Src, _Head, _KMerge = (native.S[t] for t in (
    'bt_scan', 'bt_kmerge_src', 'bt_kmerge_head', 'bt_kmerge'))

# The timeline's merge holds a window of every CPU: together at most
# MERGE_WINDOWS events (16 CPUs of WINDOW_EVENTS, 2 MiB of records), at
# least MIN_WINDOW each (a 1024-CPU dump: 8 MiB, not 128).
MERGE_WINDOWS = 16 * WINDOW_EVENTS
MIN_WINDOW = 256


class _Whole:
    """Records already in memory, read like a LineSource."""

    def __init__(self, records: bytes):
        self.data, self.count = records, len(records) // RECORD_SIZE

    def records(self) -> bytes:
        return self.data

    def windows(self, events: int = WINDOW_EVENTS):
        yield self.data


def merge_order(records: bytes) -> memoryview:
    """Indices of records (CPU by CPU) in timeline order: (tsc, cpu, seq),
    stable, as a memoryview of u32."""
    lib = native.lib()
    n = len(records) // RECORD_SIZE
    order = (ctypes.c_uint32 * max(1, n))()
    tmp = (ctypes.c_uint32 * max(1, n))()
    lib.bt_merge_order(records, n, order, tmp)
    return memoryview(order).cast('B').cast('I')[:n]


def gather(records: bytes, order: memoryview) -> bytes:
    """records reordered: the k-th is records' order[k]-th."""
    out = ctypes.create_string_buffer(max(1, len(records)))
    native.lib().bt_gather(records, order.obj, len(order), out)
    return out.raw[:len(records)]


def sort_records(records: bytes) -> bytes:
    """Records (CPU by CPU) in timeline order, all at once (see Merge for
    the way that needs no copy of them)."""
    return gather(records, merge_order(records))


MERGE_CHUNK = 1 << 15        # events per chunk of Merge.chunks(): 1 MiB of records


class Merge:
    """The events of several CPUs (ring order each) in timeline order, as
    Dump.events() sorts them, merged in C (decoder/kmerge.c) a chunk at a
    time. A CPU is given as its records (bytes) or as a LineSource, which
    the merge reads a window at a time: beyond the chunk, memory holds a
    window per CPU, and whole only the CPUs whose records are out of TSC
    order (with their index array).

        m = Merge([c.record_source() for c in dump.cpus], [c.cpu for c in dump.cpus])
        m.count, m.first_tsc, m.last_tsc, m.types   # found in one pass
        for buf, n in m.chunks(): ...               # n records at buf (reused)
        for buf, cpus, n in m.chunks(cpus=True): ...   # and their CPUs (u32 each)

    cpus: each part's CPU number (default 0, 1, ...): the timeline orders
    by it, where a record keeps only its low 8 bits.
    """

    def __init__(self, parts: list, cpus: list | None = None):
        lib = native.lib()
        self.parts = [p if hasattr(p, 'windows') else _Whole(p) for p in parts]
        self.cpus = list(range(len(parts))) if cpus is None else list(cpus)
        self._whole = []             # per part: (records, order) when out of order
        scan = _Scan()
        lib.bt_scan_init(ctypes.byref(scan))
        for p in self.parts:
            rec = p.records()
            lib.bt_scan(native.addr_of(rec), len(rec) // RECORD_SIZE, ctypes.byref(scan))
            self._whole.append(None if scan.sorted else (rec, self._order_of(rec)))
        self.count = scan.events
        self.first_tsc = scan.min_tsc if self.count else 0
        self.last_tsc = scan.max_tsc if self.count else 0
        present = bytes(scan.types)
        self.types, at = set(), present.find(1)
        while at >= 0:
            self.types.add(at)
            at = present.find(1, at + 1)

    @staticmethod
    def _order_of(part: bytes):
        """The timeline order of one CPU's records (stable: ring order on ties)."""
        n = len(part) // RECORD_SIZE
        order, tmp = (ctypes.c_uint32 * n)(), (ctypes.c_uint32 * n)()
        native.lib().bt_merge_order(part, n, order, tmp)
        return order

    def _run(self, size: int, out=None, idx=None, cpus=None):
        """bt_kmerge_next over the parts, loading each CPU's next window
        when the merge stops for it: yields n after each call that gave n
        events, written to out and their CPUs to cpus (both reused) or at
        idx[given so far]."""
        lib, nparts = native.lib(), len(self.parts)
        srcs, heap, m = (_Src * max(1, nparts))(), (_Head * max(1, nparts))(), _KMerge()
        held, feeds, base = [None] * nparts, [None] * nparts, 0
        window = max(MIN_WINDOW, min(WINDOW_EVENTS, MERGE_WINDOWS // max(1, nparts)))
        for k, (s, p, whole) in enumerate(zip(srcs, self.parts, self._whole)):
            s.n, s.base, s.cpu = p.count, base, self.cpus[k]
            base += s.n
            if whole is not None:
                held[k] = whole
                s.ev, s.order, s.hi = native.addr_of(whole[0]), ctypes.addressof(whole[1]), s.n
            elif s.n:
                feeds[k] = p.windows(window)
                self._next_window(s, feeds[k], held, k)
        lib.bt_kmerge_init(ctypes.byref(m), srcs, nparts, heap)
        given, step = 0, ctypes.sizeof(ctypes.c_uint64)
        while True:
            n = lib.bt_kmerge_next(ctypes.byref(m), out, cpus,
                                   idx + given * step if idx else None, size)
            given += n
            if n:
                yield n
            if m.starved:
                k = m.starved - 1
                self._next_window(srcs[k], feeds[k], held, k)
                lib.bt_kmerge_refill(ctypes.byref(m), k)
            elif not n:
                return

    @staticmethod
    def _next_window(s, feed, held, k):
        """Source s (part k) gets its next window from feed, from its at."""
        win = next(feed, b'')
        held[k] = win                         # alive while C reads it
        s.lo, s.hi = s.hi, s.hi + len(win) // RECORD_SIZE
        if s.hi == s.lo or s.lo != s.at:
            raise ValueError(f'CPU source {k}: its records ran out at {s.at} of {s.n}')
        s.ev = native.addr_of(win)

    def chunks(self, size: int = MERGE_CHUNK, cpus: bool = False):
        """Yields (buffer, n): the next n records in timeline order at the
        start of buffer, a ctypes buffer reused for every chunk; with
        cpus, (buffer, cpu buffer, n), the second holding each record's
        CPU number (u32)."""
        buf = ctypes.create_string_buffer(size * RECORD_SIZE)
        cpu_buf = (ctypes.c_uint32 * size)() if cpus else None
        for n in self._run(size, out=buf, cpus=cpu_buf):
            yield (buf, cpu_buf, n) if cpus else (buf, n)

    def order(self) -> memoryview:
        """Each event's index among all CPUs' records (CPU after CPU), in
        timeline order: a memoryview of u64."""
        idx = (ctypes.c_uint64 * max(1, self.count))()
        for _ in self._run(MERGE_CHUNK, idx=ctypes.addressof(idx)):
            pass
        return memoryview(idx).cast('B').cast('Q')[:self.count]

    def records(self) -> bytes:
        """All the records in timeline order, as one bytes object."""
        return b''.join(ctypes.string_at(buf, n * RECORD_SIZE) for buf, n in self.chunks())


def may_have_holes(c) -> bool:
    """False when CPU c's records show it lacks nothing that has a place
    in its sequence (consecutive seqs, matching the summary's first and
    last): then btlib.timeline.losses.holes(c) is [] without building its events."""
    if not c.compiled() or c.holes:
        return True
    if not c.count:
        return False
    if c.records is None:
        first, last, consecutive = c.source.seq_facts()      # no decoding
    else:
        seqs = memoryview(c.records).cast('I')[SEQ_WORD::RECORD_WORDS]
        first, last = seqs[0], seqs[-1]
        scan = _Scan()
        native.lib().bt_scan(native.addr_of(c.records), c.count, ctypes.byref(scan))
        consecutive = scan.consecutive
    return c.first_seq not in (None, first) or c.last_seq not in (None, last) or not consecutive


def pick_types(records: bytes, wanted) -> list[int]:
    """The indices of the records whose type is in wanted (a set of ids)."""
    n = len(records) // RECORD_SIZE
    if not n:
        return []
    want = (ctypes.c_uint8 * native.TYPE_LIMIT)()
    for t in wanted:
        if 0 <= t < native.TYPE_LIMIT:
            want[t] = 1
    idx = (ctypes.c_uint32 * n)()
    k = native.lib().bt_pick_types(ctypes.c_char_p(bytes(records)), n, want, idx)
    return idx[:k]
