"""Decode baretrace dumps from a serial log (format: docs/dump-format.md).

    from btlib.dumpfmt import parse_log
    for dump in parse_log(open('serial.log', 'rb').read()):
        print(dump.index, dump.complete, len(dump.events()), dump.warnings)

parse_log() never raises on bad input. It finds every dump among console
noise (GRUB output, ANSI escapes, NULs, other kernel lines, CR LF), checks
the CRC-32 of every line (in format v2 seeded with the dump's id, so a
line of another dump or boot fails), and decodes each intact line on its
own: a damaged or missing line costs only its own events, which are
counted (CpuInfo.damaged, Dump.damaged_lines / missing_lines) and
described in Dump.warnings, and is never turned into a wrong event.

This module decodes single lines; dumplog.py splits a log into dumps and
dumpbuild.py accounts for each dump's lines.
"""

from __future__ import annotations

import binascii
import gc
import re
import zlib

from . import fastdecode
from .model import RECORD, Dump, Event, U64_MASK, events_of

FORMAT_VERSION = 2           # the newest format this decoder reads
VERSIONS = (1, 2)            # the formats it reads
MAX_CPUS = 256               # the record's cpu field is one byte

_ANSI = re.compile(rb'\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])')
_NEWLINE = re.compile(rb'\r\n|\r|\n')       # a lone CR ends a line too, as on a terminal
_TEXT_LINE = re.compile(rb'(.*) \*([0-9A-F]{8})\Z', re.S)
_SEQ_MASK = 0xFFFFFFFF
_NONCE = re.compile(r'[0-9A-F]{16}')


def _one_damaged_byte(word: bytes) -> re.Pattern:
    """Matches `word` with any one byte changed or lost."""
    forms = [re.escape(word[:i]) + sep + re.escape(word[i + 1:])
             for i in range(len(word)) for sep in (b'.', b'')]
    return re.compile(b'|'.join(forms), re.S)


class _Marker:
    """Finds a DUMP BEGIN / DUMP END marker in a line: the exact word, or
    (a marker hit by line noise) the word with one byte changed or lost,
    followed by the rest of a marker line intact. The second form keeps
    console text such as the event name DUMP_BEGIN in a table from
    passing for a damaged marker."""

    def __init__(self, word: bytes, rest: bytes):
        self.word = word
        self.damaged = _one_damaged_byte(word)
        self.rest = re.compile(rest, re.S)

    def find(self, line: bytes) -> int:
        """Where the marker starts in line, or -1."""
        at = line.find(self.word)
        if at >= 0:
            return at
        m = self.damaged.search(line)
        return m.start() if m and self.rest.match(line, m.end()) else -1


_BEGIN_MARK = _Marker(b'DUMP BEGIN ', rb' ?v=\d+ dump=\d+ .* \*\S{8}\Z')
_END_MARK = _Marker(b'DUMP END ', rb' ?dump=\d+ .*events=\d+ .* \*\S{8}\Z')
_READY = re.compile(rb'(?:^|\s)READY cpus=')       # a (re)booted kernel's READY line

# event header byte (docs/dump-format.md, "Event lines")
_EV_TYPE, _EV_FLAGS, _EV_A0, _EV_A1, _EV_TSC_MORE = 0x01, 0x02, 0x04, 0x08, 0x80
_PRED_SLOTS = 16


class _Damaged(Exception):
    """A line that looked like part of a dump but cannot be trusted."""


def parse_log(data: bytes) -> list[Dump]:
    """Every dump found in a serial log, in log order (see module doc)."""
    from .dumplog import LogParser        # it builds on this module's line decoding
    log = LogParser()
    raws = _NEWLINE.split(data)
    del data                     # the caller's may be the only other copy: the lines are one
    # The parse builds a few objects per line and keeps them all: it makes
    # no reference cycles, and the collector's passes over them would cost
    # a quarter of its time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _prefetch(raws)
        for raw in raws:
            log.feed(raw)
        return log.finish()
    finally:
        _PREFETCHED.clear()
        if collecting:
            gc.enable()


# Event lines decoded ahead, in one batch per seed (a ctypes call per line
# costs more than decoding it): {seed: {text: _Run or fastdecode status}}.
# The batch keeps no events, only each line's header and count: a CPU's
# lines are decoded again, a CPU at a time, when its events are read
# (fastdecode.LineSource), so the parse holds the log, not the records.
_PREFETCHED: dict[int, dict] = {}
_NOTHING: dict = {}


def _prefetch(raws: list[bytes]):
    """Decode the event lines of a log in batches, each with the seed of
    the DUMP BEGIN before it, before the lines are read one by one; a line
    the batch missed (one that needed cleaning, or belongs to another
    dump's seed) is decoded on its own when it comes."""
    if not fastdecode.available():
        return
    groups: dict[int, list[bytes]] = {}
    seed = 0
    for raw in raws:
        if raw.startswith(b'%E'):
            groups.setdefault(seed, []).append(raw)
        elif b'DUMP BEGIN' in raw:
            seed = begin_seed(raw)
    for seed, texts in groups.items():
        _PREFETCHED[seed] = {text: _scanned_run(res, text, seed) for text, res in
                             zip(texts, fastdecode.scan_lines(texts, seed))}


# ---- lines -------------------------------------------------------------

def _clean(raw: bytes) -> bytes:
    if b'\x1b' in raw:
        raw = _ANSI.sub(b'', raw)
    if b'\x00' in raw:
        raw = raw.replace(b'\x00', b'')
    return raw.strip(b' \t')


def dump_seed(nonce: int, dump_no: int) -> int:
    """The CRC seed of a v2 dump's lines: the CRC-32 of its 12-byte id."""
    return zlib.crc32(nonce.to_bytes(8, 'little') + dump_no.to_bytes(4, 'little'))


def _id_seed(fields: dict[str, str]) -> int | None:
    """The seed of the id a line states (dump=, nonce=), or None."""
    nonce, dump_no = fields.get('nonce', ''), _int(fields.get('dump'))
    if not _NONCE.fullmatch(nonce) or dump_no is None or dump_no >= 1 << 32:
        return None
    return dump_seed(int(nonce, 16), dump_no)


def _check_text(text: bytes, seed: int = 0) -> bytes:
    """The body of a text line whose CRC (from `seed`) matches, else _Damaged."""
    m = _TEXT_LINE.match(text)
    if not m or zlib.crc32(m.group(1), seed) != int(m.group(2), 16):
        raise _Damaged
    return m.group(1)


def _fields(words: list[bytes]) -> dict[str, str]:
    """key=value words; 'desc' takes the rest of the line, spaces and all."""
    out = {}
    for i, w in enumerate(words):
        key, eq, val = w.partition(b'=')
        if not eq:
            raise _Damaged
        if key == b'desc':
            val = b' '.join([val] + words[i + 1:])
            out['desc'] = val.decode('ascii')
            break
        out[key.decode('ascii')] = val.decode('ascii')
    return out


def _text_fields(text: bytes, seed: int) -> tuple[bytes, int, dict[str, str]]:
    """(tag, line number, fields) of a '%X n k=v ... *CRC' line."""
    body = _check_text(text, seed)
    words = body.split(b' ')
    if len(words) < 2 or not words[1].isdigit():
        raise _Damaged
    try:
        return words[0][1:], int(words[1]), _fields(words[2:])
    except UnicodeDecodeError:
        raise _Damaged from None


def _marker_fields(text: bytes) -> dict[str, str]:
    """Fields of a 'DUMP BEGIN ...' / 'DUMP END ...' line, CRC unchecked."""
    m = _TEXT_LINE.match(text)
    if not m:
        raise _Damaged
    try:
        return _fields(m.group(1).split(b' ')[2:])
    except UnicodeDecodeError:
        raise _Damaged from None


def _begin_fields(text: bytes) -> dict[str, str]:
    """A DUMP BEGIN line's fields: its CRC is a plain one in every version."""
    _check_text(text)
    return _marker_fields(text)


def _end_fields(text: bytes) -> tuple[dict[str, str], int]:
    """(fields, seed) of a DUMP END line, checked against the id it states
    (v2), or with a plain CRC (v1: no nonce)."""
    fields = _marker_fields(text)
    seed = _id_seed(fields) if 'nonce' in fields else 0
    if seed is None:
        raise _Damaged
    _check_text(text, seed)
    return fields, seed


def begin_seed(line: bytes) -> int:
    """The seed of the dump a DUMP BEGIN line opens: v2's id seed, 0 for v1
    (or an unreadable line, whose dump's lines then fail their checks)."""
    at = line.find(b'DUMP BEGIN')
    if at < 0:
        return 0
    try:
        seed = _id_seed(_begin_fields(line[at:]))
    except _Damaged:
        return 0
    return seed or 0


def _guess_seed(line: bytes) -> int | None:
    """The seed of the id a damaged DUMP BEGIN seems to state, if any: only
    a candidate, that the dump's own lines confirm or refute."""
    d, n = re.search(rb' dump=(\d+) ', line), re.search(rb' nonce=([0-9A-F]{16}) ', line)
    if not d or not n:
        return None
    return _id_seed({'dump': d.group(1).decode(), 'nonce': n.group(1).decode()})


# ---- event lines ---------------------------------------------------------

def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, pos
        shift += 7
        if shift > 63:
            raise _Damaged


def _event_payload(text: bytes, seed: int) -> bytes:
    """The CRC-checked (from `seed`) binary payload of an '%E<base64>' line."""
    body = text[2:]
    if len(body) % 4 == 1:
        raise _Damaged
    try:
        raw = binascii.a2b_base64(body + b'=' * (-len(body) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        raise _Damaged from None
    if len(raw) < 5 or zlib.crc32(raw[:-4], seed) != int.from_bytes(raw[-4:], 'little'):
        raise _Damaged
    return raw[:-4]


class _Run:
    """One event line: a contiguous run of one CPU's events, as Event
    objects or, from the compiled decoder, its packed records or just its
    count and its text, to decode again when the events are wanted."""
    __slots__ = ('line', 'cpu', 'start', 'gap_over', 'gap_excl', '_events', 'records', 'count',
                 'text', 'seed')

    def __init__(self, line, cpu, start, gap_over, gap_excl, events, records=None, count=0,
                 text=None, seed=0):
        self.line, self.cpu, self.start = line, cpu, start
        self.gap_over, self.gap_excl, self._events = gap_over, gap_excl, events
        self.records, self.text, self.seed = records, text, seed
        if events is not None:
            count = len(events)
        elif records is not None:
            count = len(records) // RECORD.size
        self.count = count

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = events_of(self.records if self.records is not None else
                                     fastdecode.decode_records([self.text], self.seed))
        return self._events


def _fast_run(res) -> _Run | int:
    """A fastdecode.decode_line result as a _Run, or its status (DAMAGED, PUNT)."""
    return res if isinstance(res, int) else _Run(*res[:5], None, res[5])


def _scanned_run(res, text: bytes, seed: int) -> _Run | int:
    """A fastdecode.scan_lines result as a _Run (its text kept to decode
    again), or its status."""
    return res if isinstance(res, int) else _Run(*res[:5], None, None, res[5], text, seed)


def _decode_event_line(text: bytes, seed: int = 0) -> _Run:
    """One event line, by the compiled core when it is there (the same
    result: test_fastdecode), else by _decode_event_line_py."""
    run = _PREFETCHED.get(seed, _NOTHING).get(text)
    if run is None:
        if not fastdecode.available():
            return _decode_event_line_py(text, seed)
        run = _fast_run(fastdecode.decode_line(text, seed))
    if run.__class__ is _Run:
        return run
    if run == fastdecode.DAMAGED:
        raise _Damaged
    run = _decode_event_line_py(text, seed)          # PUNT
    run.records = b''.join(e.raw() for e in run.events)
    return run


def _decode_event_line_py(text: bytes, seed: int = 0) -> _Run:
    """The reference decoder of one event line."""
    buf = _event_payload(text, seed)
    try:
        pos = 0
        head = []
        for _ in range(6):
            v, pos = _varint(buf, pos)
            head.append(v)
        line, cpu, start, gap_over, gap_excl, tsc = head
        if cpu > 255 or pos >= len(buf):
            raise _Damaged
        return _Run(line, cpu, start, gap_over, gap_excl,
                    _decode_events(buf, pos, cpu, start, tsc))
    except IndexError:
        raise _Damaged from None


def _decode_events(buf: bytes, pos: int, cpu: int, seq: int, tsc: int) -> list[Event]:
    """The events of one line; mirrors pred_encode/pred_update in encode.c.

    Per-type state (slot = type % 16): [type, gap, a0, a0d, a1, a1d, next]
    with next = -1 until some type has followed this one. Varints of one
    byte are read inline: this loop is where decoding time goes."""
    M = U64_MASK
    slots = [None] * _PRED_SLOTS
    out = []
    append = out.append
    n = len(buf)
    prev = -1                 # previous type in this line, -1 at the start
    prev_tsc, prev_a0 = tsc, 0
    while pos < n:
        hdr = buf[pos]
        pos += 1
        if hdr & _EV_TYPE:
            typ, pos = _varint(buf, pos)
            if typ > 0xFFFF:
                raise _Damaged
        elif prev < 0:
            raise _Damaged
        else:
            ps = slots[prev % _PRED_SLOTS]
            typ = ps[6] if ps is not None and ps[0] == prev and ps[6] >= 0 else prev
        if hdr & _EV_FLAGS:
            flags = buf[pos]
            pos += 1
        else:
            flags = 0
        zz = (hdr >> 4) & 7
        if hdr & _EV_TSC_MORE:
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                b, pos = _varint(buf, pos)
            zz |= b << 3
        s = slots[typ % _PRED_SLOTS]
        if s is not None and s[0] != typ:
            s = None
        if s is not None:
            delta = (((zz >> 1) ^ -(zz & 1)) + s[1]) & M
            a0 = (s[2] + s[3]) & M
            a1 = (s[4] + s[5]) & M
        else:
            delta = ((zz >> 1) ^ -(zz & 1)) & M
            a0 = prev_a0
            a1 = 0
        if hdr & _EV_A0:
            zz = buf[pos]
            if zz < 0x80:
                pos += 1
            else:
                zz, pos = _varint(buf, pos)
            a0 = (a0 + ((zz >> 1) ^ -(zz & 1))) & M
        if hdr & _EV_A1:
            zz = buf[pos]
            if zz < 0x80:
                pos += 1
            else:
                zz, pos = _varint(buf, pos)
            a1 = (a1 + ((zz >> 1) ^ -(zz & 1))) & M
        # the same updates as pred_update(), in the same order
        if prev >= 0:
            ps = slots[prev % _PRED_SLOTS]
            if ps is not None and ps[0] == prev:
                ps[6] = typ
        if s is not None:
            s[1] = delta
            s[3] = (a0 - s[2]) & M
            s[2] = a0
            s[5] = (a1 - s[4]) & M
            s[4] = a1
        else:
            slots[typ % _PRED_SLOTS] = [typ, delta, a0, 0, a1, 0, -1]
        prev = typ
        prev_tsc = (prev_tsc + delta) & M
        prev_a0 = a0
        append(Event(cpu, seq & _SEQ_MASK, prev_tsc, typ, flags, a0, a1))
        seq += 1
    return out


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and v.isdigit() else None
