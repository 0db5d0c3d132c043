"""The compiled event-line decoder (decoder/decode.c), through ctypes.

    from btlib import fastdecode
    if fastdecode.available():
        for res in fastdecode.decode_lines([b'%E...', ...], seed=0):
            ...   # DAMAGED, PUNT or (line, cpu, start, gap_over, gap_excl, records)

`make` builds build/host/libbtdecode.so (btlib.native: the handle, the
declarations and their check); without it, or with the environment
variable BT_PURE_PYTHON=1, available() is False and the callers take the
reference path in pure Python, with the same results: available() is the
one place that decides. `records` holds 32-byte
event records (btlib.model.RECORD): a memoryview into the batch the line
was decoded in, not a copy (decode_line: bytes); see events_of().

A line answered PUNT holds something only the reference decoder judges
exactly (a varint over 64 bits, '=' in its base64, an over-long line):
CLineDecoder.decode() decodes that one line with dumpfmt's Python code.
A parse picks its line decoder once (line_decoder(): CLineDecoder or
PyLineDecoder) and gives it every line.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct

from . import dumpfmt, native
from .dumpfmt import Damaged, Run
from .model import RECORD_SIZE, RECORD_WORDS, SEQ_MASK, SEQ_WORD, events_of   # noqa: F401 (events_of: for callers)
from .outsink import byte_sink

DISABLE_ENV = 'BT_PURE_PYTHON'

DAMAGED, PUNT = -1, -2           # decode_line()'s verdicts (the library's are translated)
BATCH_RUNS = 8192
BATCH_EVENTS = 1 << 16           # 2 MiB of scratch records per bt_decode_lines call

_CRun, _Scan, _Src, _Head, _KMerge = (native.S[t] for t in (
    'bt_run', 'bt_scan', 'bt_kmerge_src', 'bt_kmerge_head', 'bt_kmerge'))
_CsvType, _Phase, _Csv, _Marker, _Text = (native.S[t] for t in (
    'bt_csv_type', 'bt_phase', 'bt_csv', 'bt_marker', 'bt_text'))
_PfFmt, _PfMark, _PfFlow, _Pf, _PfCpu = (native.S[t] for t in (
    'bt_pf_fmt', 'bt_pf_mark', 'bt_pf_flow', 'bt_pf', 'bt_pf_cpu'))
_JsonFmt, _JsonPair, _JsonMark, _Json, _JsonCpu = (native.S[t] for t in (
    'bt_json_fmt', 'bt_json_pair', 'bt_json_mark', 'bt_json', 'bt_json_cpu'))
_RUN_LAYOUT = struct.Struct('<5QiI')          # struct bt_run, read in one C loop
assert _RUN_LAYOUT.size == ctypes.sizeof(_CRun)


def available() -> bool:
    """Whether the compiled path is used: the library loads (a stale one
    raises native.AbiError) and BT_PURE_PYTHON=1 is not set. Every caller
    that has two paths asks this (tests switch it off here)."""
    return os.environ.get(DISABLE_ENV) != '1' and native.available()


def _verdict(status: int) -> int:
    """The library's status of a line that gave no events, as DAMAGED or PUNT."""
    if status == native.const('BT_DAMAGED'):
        return DAMAGED
    if status == native.const('BT_PUNT'):
        return PUNT
    raise ValueError(f'{native.LIB_NAME}: line status {status}')


_one_run = _CRun()
_one_run_ref = ctypes.byref(_one_run)
_one_ev = None


def decode_line(text: bytes, seed: int = 0):
    """decode_lines() for one line: DAMAGED, PUNT or the tuple."""
    global _one_ev
    lib = native.lib()
    most = native.const('BT_LINE_MAX_CHARS')      # longer lines are punted: fewer events
    if _one_ev is None:
        _one_ev = ctypes.create_string_buffer(most * RECORD_SIZE)
    r = _one_run
    n = lib.bt_decode_line(text, len(text), seed & 0xFFFFFFFF, _one_run_ref, _one_ev, most)
    if n < 0:
        return _verdict(n)
    return (r.line, r.cpu, r.start, r.gap_over, r.gap_excl,
            ctypes.string_at(_one_ev, n * RECORD_SIZE))


_scratch_buf = None


def _scratch(size: int):
    """A ctypes buffer of at least size bytes, reused from call to call
    (each caller copies out what it keeps before the next use)."""
    global _scratch_buf
    if _scratch_buf is None or ctypes.sizeof(_scratch_buf) < size:
        _scratch_buf = ctypes.create_string_buffer(size)
    return _scratch_buf


def _batches(texts: list[bytes], seed: int):
    """bt_decode_lines over texts, a batch at a time: yields (runs, ev),
    runs as (line, cpu, start, gap_over, gap_excl, status, first) tuples
    and ev the batch's events (scratch: read them before the next)."""
    lib = native.lib()
    buf = b'\n'.join(texts) + b'\n'
    base = _addr(buf)                        # buf stays alive
    nruns = max(1, min(BATCH_RUNS, len(texts)))   # a window's few lines: a small array
    runs = (_CRun * nruns)()
    room = min(BATCH_EVENTS, len(buf))       # a line holds fewer events than bytes
    ev = _scratch(room * RECORD_SIZE)
    used = ctypes.c_size_t()
    pos, total = 0, len(buf)
    while pos < total:
        n = lib.bt_decode_lines(base + pos, total - pos, seed & 0xFFFFFFFF, runs, nruns,
                                ev, room, ctypes.byref(used))
        # the runs as tuples in one C loop: reading ctypes fields one by
        # one costs more than decoding the line did
        yield list(_RUN_LAYOUT.iter_unpack(memoryview(runs).cast('B')[:n * _RUN_LAYOUT.size])), ev
        pos += used.value


def _batch_events(runs, ev) -> bytes:
    """A copy of the events a batch decoded, in line order."""
    return ctypes.string_at(ev, max((r[6] + max(r[5], 0) for r in runs), default=0) * RECORD_SIZE)


def decode_lines(texts: list[bytes], seed: int = 0) -> list:
    """One result per '%E' line of texts (each without its newline):
    DAMAGED, PUNT, or (line, cpu, start, gap_over, gap_excl, records)."""
    out = []
    for runs, ev in _batches(texts, seed):
        raw = memoryview(_batch_events(runs, ev))       # the runs view it: no copies
        for line, cpu, start, over, excl, status, first in runs:
            if status < 0:
                out.append(_verdict(status))
            else:
                at = first * RECORD_SIZE
                out.append((line, cpu, start, over, excl, raw[at:at + status * RECORD_SIZE]))
    return out


def scan_lines(texts: list[bytes], seed: int = 0) -> list:
    """decode_lines() without keeping the events: DAMAGED, PUNT, or
    (line, cpu, start, gap_over, gap_excl, count) per line."""
    out = []
    for at in range(0, len(texts), BATCH_RUNS):     # no copy of the whole log's lines
        for runs, _ in _batches(texts[at:at + BATCH_RUNS], seed):
            out += [_verdict(r[5]) if r[5] < 0 else r[:5] + (r[5],) for r in runs]
    return out


def decode_records(texts: list[bytes], seed: int = 0) -> bytes:
    """The records of lines known to decode (scan_lines said so), joined
    in line order; by the reference decoder when the library is not
    loaded (BT_PURE_PYTHON=1 after the parse, as tests do)."""
    if not available():
        return b''.join(e.raw() for t in texts
                        for e in dumpfmt.decode_event_line_py(t, seed).events)
    parts = []
    for runs, ev in _batches(texts, seed):
        if any(r[5] < 0 for r in runs):
            raise ValueError('an event line that decoded before did not decode again')
        parts.append(_batch_events(runs, ev))
    return parts[0] if len(parts) == 1 else b''.join(parts)


class LineRun(Run):
    """An event line the batch decoder checked and counted: its events are
    decoded again from its text when they are wanted."""
    __slots__ = ()

    @property
    def events(self):
        if self._events is None:
            self._events = events_of(self.records if self.records is not None else
                                     decode_records([self.text], self.seed), self.cpu)
        return self._events


class PyLineDecoder:
    """The reference line decoder (dumpfmt.decode_event_line_py), as a
    parse uses it when the compiled core is not: line_decoder() picks one
    of the two once per parse, and every line then goes to that one."""

    @contextlib.contextmanager
    def batch(self, raws: list[bytes], seed: int = 0):
        """CLineDecoder.batch() for the reference decoder: nothing is
        decoded ahead, so no seed needs following (it yields `seed`)."""
        yield seed

    def decode(self, text: bytes, seed: int = 0) -> Run:
        """One event line; raises dumpfmt.Damaged."""
        return dumpfmt.decode_event_line_py(text, seed)


class CLineDecoder:
    """The compiled line decoder: a log's event lines decoded ahead, in one
    batch per seed (a ctypes call per line costs more than decoding it):
    `ahead` {seed: {text: LineRun or status}}. The batch keeps no events,
    only each line's header and count: a CPU's lines are decoded again, a
    CPU at a time, when its events are read (LineSource), so the parse
    holds the log, not the records."""

    def __init__(self):
        self.ahead: dict[int, dict] = {}

    @contextlib.contextmanager
    def batch(self, raws: list[bytes], seed: int = 0):
        """While it lasts, decode() finds the event lines of raws (a log's
        lines) decoded ahead, in batches, each with the seed of the DUMP
        BEGIN before it (`seed`: the one in force before raws' first line,
        when raws is a later part of a log); a line the batch missed (one
        that needed cleaning, or belongs to another dump's seed) is decoded
        on its own.  Yields the seed in force after raws' last line."""
        try:
            groups: dict[int, list[bytes]] = {}
            for raw in raws:
                if raw.startswith(b'%E'):
                    groups.setdefault(seed, []).append(raw)
                elif b'DUMP BEGIN' in raw:
                    seed = dumpfmt.begin_seed(raw)
            for group, texts in groups.items():
                self.ahead[group] = {text: _scanned_run(res, text, group) for text, res in
                                     zip(texts, scan_lines(texts, group))}
            yield seed
        finally:
            self.ahead.clear()

    def decode(self, text: bytes, seed: int = 0) -> Run:
        """One event line, with the same result as the reference decoder
        (test_fastdecode); raises dumpfmt.Damaged."""
        run = self.ahead.get(seed, _NOTHING).get(text)
        if run is None:
            res = decode_line(text, seed)
            run = res if isinstance(res, int) else Run(*res[:5], None, res[5])
        if not isinstance(run, int):
            return run
        if run == DAMAGED:
            raise Damaged
        run = dumpfmt.decode_event_line_py(text, seed)          # PUNT
        run.records = b''.join(e.raw() for e in run.events)
        return run


_NOTHING: dict = {}


def line_decoder():
    """The line decoder a parse uses from start to end: the compiled one
    when available(), else the reference one. Asked once per parse."""
    return CLineDecoder() if available() else PyLineDecoder()


def _scanned_run(res, text: bytes, seed: int) -> LineRun | int:
    """A scan_lines result as a LineRun (its text kept to decode again),
    or its status."""
    return res if isinstance(res, int) else LineRun(*res[:5], None, None, res[5], text, seed)


def decode_event_line(text: bytes, seed: int = 0) -> Run:
    """One event line on its own, by the decoder line_decoder() picks;
    raises dumpfmt.Damaged. A parse of many lines picks once instead."""
    return line_decoder().decode(text, seed)


WINDOW_EVENTS = 1 << 12      # events per window of LineSource: 128 KiB of records
# The timeline's merge holds a window of every CPU: together at most
# MERGE_WINDOWS events (16 CPUs of WINDOW_EVENTS, 2 MiB of records), at
# least MIN_WINDOW each (a 1024-CPU dump: 8 MiB, not 128).
MERGE_WINDOWS = 16 * WINDOW_EVENTS
MIN_WINDOW = 256


class LineSource:
    """One CPU's events as the intact event lines they arrived in, decoded
    again when asked for: the parse keeps about 6 bytes of log per event
    rather than a 32-byte record, and no more than one CPU's records (or
    a window of each CPU's, for the timeline's merge) are ever decoded at
    once. runs: its lines in seq order, each with .count and either its
    .text (to decode with its .seed) or, decoded another way, .records."""

    def __init__(self, runs):
        self.runs = runs
        self.count = sum(r.count for r in runs)

    def records(self) -> bytes:
        """All its records (a new copy each time)."""
        return self._decode(self.runs)

    def seq_facts(self) -> tuple[int, int, bool]:
        """(first seq, last seq, consecutive) of its records, from its
        lines' headers alone (a line's events have seqs start, start + 1,
        ... as u32): consecutive as bt_scan judges it, a wrap past
        2^32 - 1 being a break. Needs at least one event."""
        first = end = None
        consecutive = True
        for r in self.runs:
            if not r.count:
                continue
            seq = r.start & SEQ_MASK
            consecutive &= seq + r.count - 1 <= SEQ_MASK and end in (None, seq)
            first = seq if first is None else first
            end = seq + r.count
        return first, (end - 1) & SEQ_MASK, consecutive

    def windows(self, events: int = WINDOW_EVENTS):
        """Its records, a run of whole lines of at least `events` at a time."""
        group, n = [], 0
        for r in self.runs:
            group.append(r)
            n += r.count
            if n >= events:
                yield self._decode(group)
                group, n = [], 0
        if group:
            yield self._decode(group)

    def _decode(self, runs) -> bytes:
        parts, texts, seed = [], [], None
        for r in runs:
            if r.records is None and r.seed == seed:
                texts.append(r.text)
                continue
            if texts:
                parts.append(decode_records(texts, seed))
            texts, seed = ([], None) if r.records is not None else ([r.text], r.seed)
            if r.records is not None:
                parts.append(r.records)
        if texts:
            parts.append(decode_records(texts, seed))
        return parts[0] if len(parts) == 1 else b''.join(parts)


class _Whole:
    """Records already in memory, read like a LineSource."""

    def __init__(self, records: bytes):
        self.data, self.count = records, len(records) // RECORD_SIZE

    def records(self) -> bytes:
        return self.data

    def windows(self, events: int = WINDOW_EVENTS):
        yield self.data


# ---- timeline order and CSV rows, from records ---------------------------------







CSV_CHUNK = 1 << 20
U64_LIMIT = 1 << 64


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










def _addr(data) -> int:
    """The address of a bytes object's contents (valid while it lives)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value


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
            lib.bt_scan(_addr(rec), len(rec) // RECORD_SIZE, ctypes.byref(scan))
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
                s.ev, s.order, s.hi = _addr(whole[0]), ctypes.addressof(whole[1]), s.n
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
        s.ev = _addr(win)

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


def _table(views: dict, phases: dict, t0: int, hz: int, names: dict):
    """The struct bt_csv of views (each type's name column: names[type])
    and the size one row's args can take, or None when something does not
    fit csvout.c."""
    order = sorted(views)
    ctypes_types = (_CsvType * max(1, len(order)))()
    index = (ctypes.c_uint16 * 65536)()
    longest = 0
    for k, tid in enumerate(order):
        v, t = views[tid], ctypes_types[k]
        if not 0 <= tid < 65536 or len(v.fields) > 2:
            return None
        index[tid] = k
        name = names[tid].encode()
        t.name = name
        labels = [(' ' if j else '') + f'{n}=' for j, (n, _, _) in enumerate(v.fields)]
        for j, (_, i, is_phase) in enumerate(v.fields):
            t.label[j] = labels[j].encode()
            t.arg[j] = i
            t.phase[j] = is_phase
            t.sgn[j] = i in getattr(v, 'signed', ())
        t.nfields = len(v.fields)
        longest = max(longest, len(name) + 2 * sum(map(len, labels)))
    table = [(k, n.encode()) for k, n in phases.items() if 0 <= k < U64_LIMIT]
    ph = (_Phase * max(1, len(table)))(*[_Phase(k, n) for k, n in table])
    phase_len = max((len(n) for _, n in table), default=0)
    args_max = longest + 2 * (phase_len + 20) + 2
    if (args_max > native.const('BT_CSV_ARGS_MAX') or not 0 <= t0 < U64_LIMIT
            or not 0 < hz < U64_LIMIT):
        return None
    ctx = _Csv(ctypes_types, index, ph, len(table), t0, hz, 300 + 2 * args_max + longest)
    ctx.keep = (ctypes_types, index, ph, table)
    return ctx


def _chunks_of(records):
    """(address, CPU numbers' address or None, n) chunks of records: a
    Merge, or bytes of records (their CPUs: their own u8 cpu)."""
    if isinstance(records, Merge):
        return ((ctypes.addressof(buf), ctypes.addressof(cpus), n)
                for buf, cpus, n in records.chunks(cpus=True))
    return [(_addr(records), None, len(records) // RECORD_SIZE)]


def _rows(fn, ctx, row_max: int):
    """A function (records, out) writing fn's rows of records (a Merge or
    bytes of records in timeline order) to out (see outsink.byte_sink)."""
    def write(records, out):
        buf = ctypes.create_string_buffer(CSV_CHUNK + row_max)
        view, done, put = memoryview(buf), ctypes.c_size_t(), byte_sink(out)
        for base, cpus, n in _chunks_of(records):
            at = 0
            while at < n:
                size = fn(ctypes.byref(ctx), base + at * RECORD_SIZE,
                          cpus + at * 4 if cpus else None, n - at, buf, len(buf),
                          ctypes.byref(done))
                put(view[:size])
                at += done.value
        return ctx
    return write


def csv_writer(views: dict, phases: dict, t0: int, hz: int, names: dict):
    """A function (records, out) that writes the CSV rows of records (a
    Merge or bytes of records) to out, a text stream opened with
    newline='' or a binary one, or None when some name is too long for
    csvout.c. names: {type: its name column, quoted}."""
    ctx = _table(views, phases, t0, hz, names)
    return None if ctx is None else _rows(native.lib().bt_csv_rows, ctx, ctx.row_max)


# ---- text rows, from records ------------------------------------------------





TEXT_TIME_MAX = 64           # a time and CPU column's bytes beyond int_w


def text_writer(views: dict, phases: dict, t0: int, hz: int, heads: dict, int_w: int,
                before: dict, after: dict, cpu_w: int = 3):
    """A function (records, out) that writes export_text's event lines of
    records (heads: {type: its name column}; before/after: {(cpu, seq):
    marker text after the time and CPU}; cpu_w: the CPU column's width),
    or None when something does not fit textout.c."""
    ctx = _table(views, phases, t0, hz, heads)
    keys = sorted(set(before) | set(after))
    if ctx is None or not 0 <= int_w < 4096 or not 0 <= cpu_w < 64 or not all(
            0 <= c < U64_LIMIT and 0 <= q < U64_LIMIT for c, q in keys):
        return None
    marks = [(before.get(k), after.get(k)) for k in keys]
    texts = [(b and b.encode(), a and a.encode()) for b, a in marks]
    arr = (_Marker * max(1, len(keys)))(*[_Marker(c, q, b, a)
                                          for (c, q), (b, a) in zip(keys, texts)])
    mark_max = max((len(t or b'') for pair in texts for t in pair), default=0)
    row_max = 3 * (int_w + cpu_w + TEXT_TIME_MAX) + ctx.row_max + 2 * mark_max
    x = _Text(ctypes.pointer(ctx), arr, len(keys), int_w, cpu_w, row_max)
    x.keep = (ctx, arr, texts)
    return _rows(native.lib().bt_text_rows, x, row_max)


def ctf_events(records: bytes) -> bytes:
    """The CTF stream bytes of records' events (export_ctf.EVENT each)."""
    n, size = len(records) // RECORD_SIZE, native.const('BT_CTF_EVENT_SIZE')
    out = ctypes.create_string_buffer(max(1, n * size))
    native.lib().bt_ctf_events(records, n, out)
    return out.raw[:n * size]




_CtfSeg, _CtfStream = native.S['bt_ctf_seg'], native.S['bt_ctf_stream']


def ctf_stream(header: bytes, discarded: int, packets: int, segments) -> tuple[bytes, int]:
    """(the packets, the running events_discarded after them) of
    `segments` (records, first, end, {i: lost} holes, lead, tail, cpu),
    records[first:end] of each in TSC order, as export_ctf._stream_packets
    writes them, for a stream file that already has `packets` packets
    and `discarded` losses."""
    segs = (_CtfSeg * len(segments))()
    keep = []
    for seg, (records, first, end, cuts, lead, tail, cpu) in zip(segs, segments):
        at = sorted(i - first for i in cuts if first < i < end)
        cut_at, cut_n = (ctypes.c_uint64 * max(1, len(at)))(*at), \
            (ctypes.c_uint64 * max(1, len(at)))(*(cuts[first + i] for i in at))
        keep += [records, cut_at, cut_n]
        seg.ev, seg.cut_at, seg.cut_n = _addr(records) + first * RECORD_SIZE, \
            ctypes.addressof(cut_at), ctypes.addressof(cut_n)
        seg.n, seg.ncuts, seg.lead, seg.tail, seg.cpu = end - first, len(at), lead, tail, cpu
    st = _CtfStream(discarded=discarded, packets=packets)
    ctypes.memmove(st.header, header, len(header))
    lib = native.lib()
    out = ctypes.create_string_buffer(max(1, lib.bt_ctf_stream_bound(segs, len(segments))))
    heap = (ctypes.c_uint64 * max(1, len(segments)))()
    size = lib.bt_ctf_stream(ctypes.byref(st), segs, len(segments), heap, out)
    return ctypes.string_at(out, size), st.discarded


def may_have_holes(c) -> bool:
    """False when CPU c's records show it lacks nothing that has a place
    in its sequence (consecutive seqs, matching the summary's first and
    last): then btlib.losses.holes(c) is [] without building its events."""
    if not c.compiled():
        return True
    if not c.count:
        return False
    if c.records is None:
        first, last, consecutive = c.source.seq_facts()      # no decoding
    else:
        seqs = memoryview(c.records).cast('I')[SEQ_WORD::RECORD_WORDS]
        first, last = seqs[0], seqs[-1]
        scan = _Scan()
        native.lib().bt_scan(_addr(c.records), c.count, ctypes.byref(scan))
        consecutive = scan.consecutive
    return c.first_seq not in (None, first) or c.last_seq not in (None, last) or not consecutive


# ---- Chrome JSON records, one CPU at a time ------------------------------------

JSON_FIELDS = native.JSON_FIELDS
TYPE_LIMIT = native.TYPE_LIMIT
JSON_NO_TIMER = TYPE_LIMIT   # jsonout.h: a timer type above 0xffff is none
JSON_VALUE_MAX = 24          # the longest value: '"-0x8000000000000000"'
JSON_EVENT_MAX = 400         # one event's records beyond its head, labels and values












def _json_fmt(head: str, fields) -> tuple[_JsonFmt, int]:
    """One bt_json_fmt of (head, [(JSON key, value index, is_phase, signed)])
    and the bytes its head, labels and values can take."""
    f = _JsonFmt()
    f.head = head.encode()
    f.nfields = len(fields)
    size = len(f.head)
    for k, (key, index, is_phase, sgn) in enumerate(fields):
        f.label[k] = (',' if k else '').encode() + key.encode() + b':'
        f.arg[k], f.phase[k], f.sgn[k] = index, is_phase, sgn
        size += len(f.label[k]) + JSON_VALUE_MAX
    return f, size


def _json_table(instants: dict, slices: dict, phases: dict, t0: int, hz: int, timer):
    """The struct bt_json, or None when something does not fit jsonout.c.
    Types beyond a record's u16 are left out: no event has them."""
    if not 0 <= t0 < U64_LIMIT or not 0 < hz < U64_LIMIT:
        return None
    order = sorted(t for t in instants if 0 <= t < TYPE_LIMIT)
    keys = sorted((b, e) for b, e in slices if 0 <= b < TYPE_LIMIT and 0 <= e < TYPE_LIMIT)
    made = [_json_fmt(*instants[t]) for t in order] + [_json_fmt(*slices[k]) for k in keys]
    fmts = (_JsonFmt * max(1, len(made)))(*[f for f, _ in made])
    index = (ctypes.c_uint16 * TYPE_LIMIT)()
    for k, t in enumerate(order):
        index[t] = k
    pairs = (_JsonPair * max(1, len(keys)))(*[_JsonPair(b, e, len(order) + k)
                                              for k, (b, e) in enumerate(keys)])
    table = [(k, n.encode()) for k, n in phases.items()]
    ph = (_Phase * max(1, len(table)))(*[_Phase(k, n) for k, n in table])
    phase_len = max((len(n) for _, n in table), default=0)
    row_max = (max((size for _, size in made), default=0) + JSON_FIELDS * phase_len
               + JSON_EVENT_MAX)
    ctx = _Json(fmts, index, pairs, len(keys), ph, len(table), t0, hz,
                timer if timer is not None and 0 <= timer < TYPE_LIMIT else JSON_NO_TIMER,
                row_max)
    ctx.keep = (fmts, index, pairs, ph, table, made)
    return ctx


def json_writer(instants: dict, slices: dict, phases: dict, t0: int, hz: int, timer, roles):
    """A function (records, cpu, marks, out) that writes one CPU's records
    (export_json._cpu_records) to text stream out and returns its unmatched
    count, or None when something does not fit jsonout.c.

    instants: {type: (head, fields)}, slices: {(BEGIN type, END type):
    (head, fields)}, fields [(JSON key, value index, is_phase, signed)];
    phases: {value < 2^53: JSON-quoted name}; timer: the tick's type or
    None; roles: pairs.role_table()'s (table, its length). Per CPU: its
    records, its number and marks [(position, text)] sorted by position,
    one text per position."""
    ctx = _json_table(instants, slices, phases, t0, hz, timer)
    if ctx is None:
        return None
    lib = native.lib()
    ref = ctypes.byref(ctx)

    def write(records: bytes, cpu: int, marks, out) -> int:
        n = len(records) // RECORD_SIZE
        texts = [(at, t.encode()) for at, t in marks]
        arr = (_JsonMark * max(1, len(texts)))(*[_JsonMark(at, t) for at, t in texts])
        role = (ctypes.c_uint32 * max(1, n))()
        c = _JsonCpu(ctypes.cast(ctypes.c_char_p(records), ctypes.c_void_p), n, role, arr,
                     len(texts), cpu, 0, 0, 0, 0)
        cref = ctypes.byref(c)
        unmatched = lib.bt_json_pair(ref, cref, *roles)
        if unmatched < 0:
            raise ValueError(f'CPU {cpu}: its events cannot be paired for the JSON export')
        # An event's records take row_max bytes, and its marker's text
        # beyond that: room bt_json_rows is not told about.
        cap = CSV_CHUNK + ctx.row_max
        buf = ctypes.create_string_buffer(cap + max((len(t) for _, t in texts), default=0))
        while True:
            size = lib.bt_json_rows(ref, cref, buf, cap)
            out.write(ctypes.string_at(buf, size).decode('ascii'))
            if c.at == n and c.mark_at == len(texts):
                return unmatched
    return write


# ---- flow events, and Perfetto packets, one CPU at a time ------------------------

def pick_types(records: bytes, wanted) -> list[int]:
    """The indices of the records whose type is in wanted (a set of ids)."""
    n = len(records) // RECORD_SIZE
    if not n:
        return []
    want = (ctypes.c_uint8 * TYPE_LIMIT)()
    for t in wanted:
        if 0 <= t < TYPE_LIMIT:
            want[t] = 1
    idx = (ctypes.c_uint32 * n)()
    k = native.lib().bt_pick_types(ctypes.c_char_p(bytes(records)), n, want, idx)
    return idx[:k]


PF_FIELDS = native.PF_FIELDS
PF_CROSSING = 4              # perfettoout.c's kind of a crossing slice's half


def _pf_fmt(fmt):
    """One bt_pf_fmt of (head bytes, [(label iid, value index, is_phase, signed)])."""
    head, fields = fmt
    f = _PfFmt()
    f.head = ctypes.cast(ctypes.c_char_p(head), ctypes.c_void_p)
    f.nhead, f.nfields = len(head), len(fields)
    for k, (label, index, is_phase, sgn) in enumerate(fields):
        f.label[k], f.arg[k], f.phase[k], f.sgn[k] = label, index, is_phase, sgn
    return f


def perfetto_writer(instants: dict, slices: dict, phases: dict, t0: int, hz: int, timer,
                    unmatched_iid: int, bucket_ns: int, roles, crossing_iid: int):
    """A function (records, cpu, marks, flows, out) writing one CPU's
    packets (export_perfetto's reference writer, after the sequence's
    first packet) to write(bytes) `out`; returns its (unmatched halves,
    crossing slices), or None when something does not fit perfettoout.c.

    instants: {type: fmt}, slices: {(BEGIN type, END type): (BEGIN fmt,
    END fmt)}, a fmt (head bytes, [(label iid, value index, is_phase,
    signed)]); phases {value < 2^64: name}; roles: pairs.role_table()'s
    (table, length). Per CPU: its records, a dict of seq_id, rate_track,
    fill_track, base, cap; marks [(position, bytes)] sorted, one per
    position; flows [(position, id, terminating)] sorted by position."""
    if not 0 <= t0 < U64_LIMIT or not 0 < hz < U64_LIMIT:
        return None
    if any(len(f[1]) > PF_FIELDS for f in instants.values()) or \
            any(len(f[1]) > PF_FIELDS for b in slices.values() for f in b):
        return None
    order = sorted(t for t in instants if 0 <= t < TYPE_LIMIT)
    keys = sorted((b, e) for b, e in slices if 0 <= b < TYPE_LIMIT and 0 <= e < TYPE_LIMIT)
    made = [instants[t] for t in order] + [f for k in keys for f in slices[k]]
    fmts = (_PfFmt * max(1, len(made)))(*[_pf_fmt(f) for f in made])
    index = (ctypes.c_uint16 * TYPE_LIMIT)()
    for k, t in enumerate(order):
        index[t] = k
    pairs = (_JsonPair * max(1, len(keys)))(*[_JsonPair(b, e, len(order) + 2 * k)
                                              for k, (b, e) in enumerate(keys)])
    table = [(k, n.encode()) for k, n in phases.items() if 0 <= k < U64_LIMIT]
    ph = (_Phase * max(1, len(table)))(*[_Phase(k, n) for k, n in table])
    ctx = _Pf(fmts, index, pairs, len(keys), ph, len(table), t0, hz,
              timer if timer is not None and 0 <= timer < TYPE_LIMIT else TYPE_LIMIT, 0,
              unmatched_iid, bucket_ns, crossing_iid)
    keep = (fmts, index, pairs, ph, table, made)
    lib = native.lib()
    ref = ctypes.byref(ctx)
    row_max = native.const('BT_PF_ROW_MAX')

    def write(records: bytes, cpu: dict, marks, flows, out) -> int:
        assert keep
        n = len(records) // RECORD_SIZE
        marr = (_PfMark * max(1, len(marks)))(*[
            _PfMark(at, ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))
            for at, data in marks])
        farr = (_PfFlow * max(1, len(flows)))(*[_PfFlow(at, fid, term, 0)
                                                for at, fid, term in flows])
        partner = (ctypes.c_uint32 * max(1, n))()
        kind = (ctypes.c_uint8 * max(1, n))()
        c = _PfCpu(ctypes.cast(ctypes.c_char_p(records), ctypes.c_void_p), n, partner, kind,
                   marr, len(marks), farr, len(flows), cpu['seq_id'], cpu['rate_track'],
                   cpu['fill_track'], cpu['base'], cpu['cap'])
        cref = ctypes.byref(c)
        unmatched = lib.bt_pf_pair(ref, cref, *roles)
        if unmatched < 0:
            raise ValueError(f'CPU {cpu}: its events cannot be paired for the Perfetto export')
        most = max((len(d) for _, d in marks), default=0)
        cap = CSV_CHUNK + 2 * row_max + 11 * max(1, len(flows))
        buf = ctypes.create_string_buffer(cap + most)
        while True:
            size = lib.bt_pf_rows(ref, cref, buf, cap)
            out(ctypes.string_at(buf, size))
            if c.done:
                return unmatched, bytes(kind).count(PF_CROSSING) // 2
    return write
