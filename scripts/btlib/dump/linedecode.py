"""Event lines into records: the compiled decoder (decoder/decode.c, through
ctypes) and the pure-Python reference, one of them picked per parse.

    from btlib.dump import linedecode
    decoder = linedecode.line_decoder()      # CLineDecoder or PyLineDecoder
    run = decoder.decode(b'%E...', seed)     # raises dumpfmt.Damaged

`make` builds build/host/libbtdecode.so (btlib.native.library: the handle,
the declarations and their check); btlib.native.choice.compiled() is the one
place that decides whether it is used (not with BT_PURE_PYTHON=1): the
reference path in pure Python gives the same results. `records` holds
32-byte event records (btlib.dump.model.RECORD): a memoryview into the batch
the line was decoded in, not a copy (decode_line: bytes).

A line answered PUNT holds something only the reference decoder judges
exactly (a varint over 64 bits, '=' in its base64, an over-long line):
CLineDecoder.decode() decodes that one line with dumpfmt's Python code.
LineSource keeps a CPU's lines and decodes them again a window at a time.
"""

from __future__ import annotations

import contextlib
import ctypes
import struct

from ..native import choice
from ..native import library as native
from . import dumpfmt
from .dumpfmt import Damaged, Run
from .model import RECORD_SIZE, SEQ_MASK, events_of

DAMAGED, PUNT = -1, -2           # decode_line()'s verdicts (the library's are translated)
BATCH_RUNS = 8192
BATCH_EVENTS = 1 << 16           # 2 MiB of scratch records per bt_decode_lines call

_CRun = native.S['bt_run']
_RUN_LAYOUT = struct.Struct('<5QiI')          # struct bt_run, read in one C loop
assert _RUN_LAYOUT.size == ctypes.sizeof(_CRun)


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
    base = native.addr_of(buf)                        # buf stays alive
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
    if not choice.compiled():
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
        (test_compiled_paths); raises dumpfmt.Damaged."""
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
    when choice.compiled(), else the reference one. Asked once per parse."""
    return CLineDecoder() if choice.compiled() else PyLineDecoder()


def _scanned_run(res, text: bytes, seed: int) -> LineRun | int:
    """A scan_lines result as a LineRun (its text kept to decode again),
    or its status."""
    return res if isinstance(res, int) else LineRun(*res[:5], None, None, res[5], text, seed)


def decode_event_line(text: bytes, seed: int = 0) -> Run:
    """One event line on its own, by the decoder line_decoder() picks;
    raises dumpfmt.Damaged. A parse of many lines picks once instead."""
    return line_decoder().decode(text, seed)


WINDOW_EVENTS = 1 << 12      # events per window of LineSource: 128 KiB of records


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
