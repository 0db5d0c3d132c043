"""Decode baretrace dumps from a serial log (format: docs/dump-format.md).

    from btlib.dumpfmt import parse_log
    for dump in parse_log(open('serial.log', 'rb').read()):
        print(dump.index, dump.complete, len(dump.events()), dump.warnings)

parse_log() never raises on bad input. It finds every dump among console
noise (GRUB output, ANSI escapes, NULs, other kernel lines, CR LF), checks
the CRC-32 of every line, and decodes each intact line on its own: a
damaged or missing line costs only its own events, which are counted
(CpuInfo.damaged, Dump.damaged_lines / missing_lines) and described in
Dump.warnings, and is never turned into a wrong event.
"""

from __future__ import annotations

import binascii
import re
import zlib

from . import fastdecode
from .model import RECORD, CpuInfo, Dump, Event, EventType, KINDS, U64_MASK, events_of

FORMAT_VERSION = 1           # the newest format this decoder reads
MAX_CPUS = 256               # the record's cpu field is one byte

_ANSI = re.compile(rb'\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])')
_NEWLINE = re.compile(rb'\r\n|\r|\n')       # a lone CR ends a line too, as on a terminal
_TEXT_LINE = re.compile(rb'(.*) \*([0-9A-F]{8})\Z', re.S)
_SEQ_MASK = 0xFFFFFFFF

# event header byte (docs/dump-format.md, "Event lines")
_EV_TYPE, _EV_FLAGS, _EV_A0, _EV_A1, _EV_TSC_MORE = 0x01, 0x02, 0x04, 0x08, 0x80
_PRED_SLOTS = 16


class _Damaged(Exception):
    """A line that looked like part of a dump but cannot be trusted."""


def parse_log(data: bytes) -> list[Dump]:
    """Every dump found in a serial log, in log order (see module doc)."""
    log = _LogParser()
    raws = _NEWLINE.split(data)
    _prefetch(raws)
    try:
        for raw in raws:
            log.feed(raw)
    finally:
        _PREFETCHED.clear()
    return log.finish()


# Event lines decoded ahead, in one batch per seed (a ctypes call per line
# costs more than decoding it): {seed: {text: fastdecode result}}.
_PREFETCHED: dict[int, dict] = {}


def _prefetch(raws: list[bytes]):
    """Decode the event lines of a log in batches, before the lines are
    read one by one; a line the batch missed (one that needed cleaning)
    is decoded on its own when it comes."""
    if fastdecode.available():
        _PREFETCHED[0] = fastdecode.prefetch([r for r in raws if r.startswith(b'%E')])


# ---- lines -------------------------------------------------------------

def _clean(raw: bytes) -> bytes:
    if b'\x1b' in raw:
        raw = _ANSI.sub(b'', raw)
    if b'\x00' in raw:
        raw = raw.replace(b'\x00', b'')
    return raw.strip(b' \t')


def _check_text(text: bytes) -> bytes:
    """The body of a text line whose CRC matches, else _Damaged."""
    m = _TEXT_LINE.match(text)
    if not m or zlib.crc32(m.group(1)) != int(m.group(2), 16):
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


def _text_fields(text: bytes) -> tuple[bytes, int, dict[str, str]]:
    """(tag, line number, fields) of a '%X n k=v ... *CRC' line."""
    body = _check_text(text)
    words = body.split(b' ')
    if len(words) < 2 or not words[1].isdigit():
        raise _Damaged
    try:
        return words[0][1:], int(words[1]), _fields(words[2:])
    except UnicodeDecodeError:
        raise _Damaged from None


def _marker_fields(text: bytes) -> dict[str, str]:
    """Fields of a 'DUMP BEGIN ...' / 'DUMP END ...' line."""
    body = _check_text(text)
    try:
        return _fields(body.split(b' ')[2:])
    except UnicodeDecodeError:
        raise _Damaged from None


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


def _event_payload(text: bytes) -> bytes:
    """The CRC-checked binary payload of an '%E<base64>' line."""
    body = text[2:]
    if len(body) % 4 == 1:
        raise _Damaged
    try:
        raw = binascii.a2b_base64(body + b'=' * (-len(body) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        raise _Damaged from None
    if len(raw) < 5 or zlib.crc32(raw[:-4]) != int.from_bytes(raw[-4:], 'little'):
        raise _Damaged
    return raw[:-4]


class _Run:
    """One event line: a contiguous run of one CPU's events, as Event
    objects or (from the compiled decoder) packed records."""
    __slots__ = ('line', 'cpu', 'start', 'gap_over', 'gap_excl', '_events', 'records', 'count')

    def __init__(self, line, cpu, start, gap_over, gap_excl, events, records=None):
        self.line, self.cpu, self.start = line, cpu, start
        self.gap_over, self.gap_excl, self._events = gap_over, gap_excl, events
        self.records = records
        self.count = len(events) if events is not None else len(records) // RECORD.size

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = events_of(self.records)
        return self._events


def _decode_event_line(text: bytes) -> _Run:
    """One event line, by the compiled core when it is there (the same
    result: test_fastdecode), else by _decode_event_line_py."""
    if not fastdecode.available():
        return _decode_event_line_py(text)
    res = _PREFETCHED.get(0, {}).get(text)
    if res is None:
        res = fastdecode.decode_line(text)
    if res == fastdecode.DAMAGED:
        raise _Damaged
    if res == fastdecode.PUNT:
        run = _decode_event_line_py(text)
        run.records = b''.join(e.raw() for e in run.events)
        return run
    return _Run(*res[:5], None, res[5])


def _decode_event_line_py(text: bytes) -> _Run:
    """The reference decoder of one event line."""
    buf = _event_payload(text)
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


# ---- one dump --------------------------------------------------------------

class _DumpBuilder:
    """Collects one dump's lines, then accounts for what is missing."""

    def __init__(self, index: int, begin: dict[str, str] | None, begin_damaged: bool):
        self.index = index
        self.begin = begin
        self.warnings: list[str] = []
        self.good: set[int] = set()       # line numbers that arrived intact
        self.bad = 0                      # dump-looking lines that failed checks
        self.noise = 0
        self.meta: dict[str, str] = {}
        self.categories: dict[int, str] = {}
        self.phases: dict[int, str] = {}
        self.type_fields: dict[int, dict[str, str]] = {}
        self.summaries: dict[int, dict[str, str]] = {}
        self.runs: list[_Run] = []
        self.end: dict[str, str] | None = None
        self.end_damaged = False
        self.unknown_tags: set[str] = set()
        if begin is not None:
            self.good.add(0)
        elif begin_damaged:
            self.bad += 1
            self.warnings.append('DUMP BEGIN line damaged: the dump header (v, dump, cpus) is unknown')
        else:
            self.warnings.append('dump lines without a DUMP BEGIN line (lost): the dump header is unknown')
        self.version = _int(begin.get('v')) if begin else FORMAT_VERSION
        self.supported = self.version == FORMAT_VERSION
        if not self.supported:
            self.warnings.append(f'dump format version {begin.get("v")} is not the one this '
                                 f'decoder reads ({FORMAT_VERSION}): nothing but its header '
                                 'is decoded; update btlib')

    def _mark(self, line: int) -> bool:
        if line in self.good:
            self.warnings.append(f'line {line} arrived twice; the copy was ignored')
            return False
        self.good.add(line)
        return True

    def add(self, text: bytes):
        """One '%...' line of this dump."""
        try:
            if not self.supported:
                return
            if text.startswith(b'%E'):
                run = _decode_event_line(text)
                if self._mark(run.line):
                    self.runs.append(run)
                return
            tag, line, fields = _text_fields(text)
        except _Damaged:
            self.bad += 1
            return
        if self._mark(line):
            self._add_text(tag, fields)

    def _add_text(self, tag: bytes, fields: dict[str, str]):
        type_id, cpu = _int(fields.get('id')), _int(fields.get('cpu'))
        if tag == b'M':
            self.meta.update(fields)
        elif tag == b'K':
            self.categories.update(_numbered(fields))
        elif tag == b'P':
            self.phases.update(_numbered(fields))
        elif tag == b'T' and type_id is not None:
            self.type_fields.setdefault(type_id, {}).update(fields)
        elif tag == b'C' and cpu is not None and cpu < MAX_CPUS:
            self.summaries.setdefault(cpu, {}).update(fields)
        else:
            self.unknown_tags.add(tag.decode('ascii', 'replace'))

    def close(self, end: dict[str, str] | None, end_damaged: bool = False):
        self.end = end
        self.end_damaged = end_damaged
        if end_damaged:
            self.bad += 1

    # -- building the Dump ---------------------------------------------------

    def build(self) -> Dump:
        header = dict(self.begin or {})
        for k, v in self.meta.items():
            header.setdefault(k, v)
        if not self.supported:
            return Dump(index=self.index, header=header, version=self.version or 0, tsc_hz=0,
                        cpus=[], types={}, phases={}, complete=False, end_events=None,
                        damaged_lines=0, missing_lines=0, warnings=self.warnings,
                        truncated=self.end is None)
        types = {i: _event_type(i, f) for i, f in self.type_fields.items()}
        damaged_lines, missing_lines = self._line_losses()
        self.lines_lost = damaged_lines + missing_lines
        cpus = self._cpus()
        if self.unknown_tags:
            self.warnings.append('lines of unknown kind ignored (newer format?): %'
                                 + ' %'.join(sorted(self.unknown_tags)))
        end_events = _int(self.end.get('events')) if self.end else None
        decoded = sum(c.count for c in cpus)
        truncated = self.end is None
        if truncated and not self.end_damaged:
            self.warnings.append(f'dump truncated: DUMP END never arrived '
                                 f'({decoded} events decoded from what did)')
        if end_events is not None and end_events != decoded:
            self.warnings.append(f'DUMP END says {end_events} events were sent; '
                                 f'{decoded} arrived intact')
        complete = (not truncated and end_events == decoded and damaged_lines == 0
                    and missing_lines == 0 and all(c.summary_seen for c in cpus))
        return Dump(index=self.index, header=header, version=self.version or 0,
                    tsc_hz=_int(header.get('tsc_hz')) or 0, cpus=cpus, types=types,
                    phases=self.phases, complete=complete, end_events=end_events,
                    damaged_lines=damaged_lines, missing_lines=missing_lines,
                    warnings=self.warnings, categories=self.categories,
                    truncated=truncated, noise_lines=self.noise, lines=len(self.good))

    def _line_losses(self) -> tuple[int, int]:
        """(damaged, missing) lines: every line number that never arrived
        intact is one or the other; damaged ones arrived unreadable."""
        expected = _int(self.end.get('lines')) if self.end else None
        if expected is None:
            expected = max(self.good, default=-1) + 1
            if self.end_damaged:
                expected += 1        # the damaged DUMP END itself
        absent = expected - len([n for n in self.good if n < expected])
        damaged = min(self.bad, absent)
        missing = absent - damaged
        if damaged or missing:
            self.warnings.append(f'{damaged} damaged and {missing} missing lines '
                                 f'(of {expected}): their events are counted as damaged')
        return damaged, missing

    def _cpus(self) -> list[CpuInfo]:
        by_cpu: dict[int, list[_Run]] = {}
        for run in self.runs:
            by_cpu.setdefault(run.cpu, []).append(run)
        count = _int((self.begin or {}).get('cpus'))
        if count is not None and count > MAX_CPUS:
            self.warnings.append(f'DUMP BEGIN says cpus={count}, more than a dump can hold '
                                 f'({MAX_CPUS}); only CPUs with data are listed')
            count = None
        known = set(by_cpu) | set(self.summaries) | set(range(count or 0))
        if count is not None and any(c >= count for c in known):
            self.warnings.append(f'events or counters for CPUs beyond cpus={count}')
        return [self._cpu(c, by_cpu.get(c, [])) for c in sorted(known)]

    def _cpu(self, cpu: int, runs: list[_Run]) -> CpuInfo:
        runs.sort(key=lambda r: r.start)
        kept, last = [], None
        for run in runs:
            if last is not None and run.start < last:
                self.warnings.append(f'cpu {cpu}: line {run.line} overlaps earlier events; ignored')
                continue
            kept.append(run)
            last = run.start + run.count
        s = self.summaries.get(cpu)
        info = CpuInfo(cpu=cpu, apic_id=-1, capacity=0, recorded=0, overwritten=0,
                       dropped=0, first_seq=None, last_seq=None, events=None)
        if kept and all(r.records is not None for r in kept):
            info.records = b''.join(r.records for r in kept)
        else:
            info.events = [e for r in kept for e in r.events]
        if s is not None and _int(s.get('sent')) is not None:
            self._account_with_summary(info, s)
        else:
            self._account_best_known(info, runs)
        if not info.count and info.sent is None:
            self.warnings.append(f'cpu {cpu}: nothing arrived for this CPU')
        return info

    def _account_with_summary(self, c: CpuInfo, s: dict[str, str]):
        """Exact figures: the kernel's counters against what arrived."""
        get = lambda k: _int(s.get(k)) or 0          # noqa: E731
        c.summary_seen = True
        apic = _int(s.get('apic'))
        c.apic_id = apic if apic is not None else -1
        c.capacity, c.recorded = get('cap'), get('recorded')
        c.overwritten, c.excluded, c.refused = get('overwritten'), get('excluded'), get('refused')
        c.dropped = c.excluded + c.refused
        c.sent, c.pinned = get('sent'), get('pinned')
        first, last = _int(s.get('first')), _int(s.get('last'))
        c.first_seq = first & _SEQ_MASK if first is not None else None
        c.last_seq = last & _SEQ_MASK if last is not None else None
        decoded = c.count
        if decoded > c.sent:
            self.warnings.append(f'cpu {c.cpu}: {decoded} events arrived but the kernel sent {c.sent}')
        c.damaged = max(0, c.sent - decoded)
        gaps = c.recorded - decoded - c.damaged - c.overwritten - c.excluded
        if c.damaged:
            self.warnings.append(f'cpu {c.cpu}: {c.damaged} events lost to damaged or missing lines')
        if gaps:
            self.warnings.append(f'cpu {c.cpu}: counters do not add up: recorded {c.recorded} = '
                                 f'{decoded} decoded + {c.damaged} damaged + {c.overwritten} '
                                 f'overwritten + {c.excluded} excluded is off by {gaps}')
        c.seq_gaps = max(0, gaps)

    def _account_best_known(self, c: CpuInfo, runs: list[_Run]):
        """No counters line: what the event lines' own gap fields tell."""
        if self.summaries.get(c.cpu) is not None or runs:
            self.warnings.append(f'cpu {c.cpu}: counters line lost: its loss figures are lower bounds')
        c.overwritten = sum(r.gap_over for r in runs)
        c.excluded = sum(r.gap_excl for r in runs)
        c.dropped = c.excluded
        holes = 0
        for a, b in zip(runs, runs[1:]):
            holes += max(0, b.start - b.gap_over - b.gap_excl - (a.start + a.count))
        if self.lines_lost:
            c.damaged = holes
        else:
            c.seq_gaps = holes
        c.recorded = c.count + c.overwritten + c.excluded + c.damaged + c.seq_gaps
        if c.records:
            c.first_seq = RECORD.unpack_from(c.records, 0)[1]
            c.last_seq = RECORD.unpack_from(c.records, len(c.records) - RECORD.size)[1]
        elif c.count:
            c.first_seq, c.last_seq = c.events[0].seq, c.events[-1].seq


def _event_type(i: int, f: dict[str, str]) -> EventType:
    kind = f.get('kind', 'instant')
    args = tuple('' if f.get(k, '-') == '-' else f[k] for k in ('a0', 'a1'))
    return EventType(id=i, name=f.get('name', f'UNKNOWN_{i}'), category=f.get('cat', ''),
                     kind=kind if kind in KINDS else 'instant', args=args,
                     description=f.get('desc', ''), pinned=f.get('pin') == '1')


def _numbered(fields: dict[str, str]) -> dict[int, str]:
    return {int(k): v for k, v in fields.items() if k.isdigit()}


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and v.isdigit() else None


# ---- the log ------------------------------------------------------------------

class _LogParser:
    """Splits a log into dumps: a line holding 'DUMP BEGIN' with a CRC
    opens one, 'DUMP END' closes it, '%' lines belong to the open dump,
    anything else is console noise."""

    def __init__(self):
        self.dumps: list[Dump] = []
        self.cur: _DumpBuilder | None = None

    def _open(self, begin, damaged=False):
        self._close(None)
        self.cur = _DumpBuilder(len(self.dumps), begin, damaged)

    def _close(self, end, damaged=False):
        if self.cur is not None:
            self.cur.close(end, damaged)
            self.dumps.append(self.cur.build())
            self.cur = None

    def feed(self, raw: bytes):
        line = _clean(raw)
        if line.startswith(b'%'):
            if self.cur is None:
                self._open(None)
            self.cur.add(line)
            return
        for marker, handler in ((b'DUMP BEGIN', self._open), (b'DUMP END', self._end)):
            at = line.find(marker)
            if at >= 0 and _TEXT_LINE.match(line, at):
                try:
                    fields = _marker_fields(line[at:])
                except _Damaged:
                    handler(None, True)
                else:
                    handler(fields)
                return
        if self.cur is not None and line:
            self.cur.noise += 1

    def _end(self, fields, damaged=False):
        if self.cur is None:
            self.dumps.append(_orphan_end(len(self.dumps), fields, damaged))
            return
        if fields is not None:
            lines = _int(fields.get('lines'))
            if lines:
                self.cur._mark(lines - 1)
        self._close(fields, damaged)

    def finish(self) -> list[Dump]:
        self._close(None)
        return self.dumps


def _orphan_end(index: int, fields, damaged: bool) -> Dump:
    """A DUMP END whose dump never showed: report it rather than hide it."""
    events = _int(fields.get('events')) if fields else None
    return Dump(index=index, header={}, version=FORMAT_VERSION, tsc_hz=0, cpus=[],
                types={}, phases={}, complete=False, end_events=events,
                damaged_lines=1 if damaged else 0, missing_lines=0,
                warnings=[f'a DUMP END line without its dump (events={events}): '
                          'everything before it was lost'], truncated=False)
