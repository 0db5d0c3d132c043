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

from .model import CpuInfo, Dump, Event, EventType, KINDS, U64_MASK

FORMAT_VERSION = 2           # the newest format this decoder reads
VERSIONS = (1, 2)            # the formats it reads
MAX_CPUS = 256               # the record's cpu field is one byte

_ANSI = re.compile(rb'\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])')
_NEWLINE = re.compile(rb'\r\n|\r|\n')       # a lone CR ends a line too, as on a terminal
_TEXT_LINE = re.compile(rb'(.*) \*([0-9A-F]{8})\Z', re.S)
_SEQ_MASK = 0xFFFFFFFF
_NONCE = re.compile(r'[0-9A-F]{16}')


def _one_damaged_byte(word: bytes) -> re.Pattern:
    """Matches `word` with any one byte changed or lost: a marker hit by
    line noise."""
    forms = [re.escape(word[:i]) + sep + re.escape(word[i + 1:])
             for i in range(len(word)) for sep in (b'.', b'')]
    return re.compile(b'|'.join(forms), re.S)


_BEGIN_LIKE = _one_damaged_byte(b'DUMP BEGIN ')
_END_LIKE = _one_damaged_byte(b'DUMP END ')
_READY = re.compile(rb'(?:^|\s)READY cpus=')       # a (re)booted kernel's READY line

# event header byte (docs/dump-format.md, "Event lines")
_EV_TYPE, _EV_FLAGS, _EV_A0, _EV_A1, _EV_TSC_MORE = 0x01, 0x02, 0x04, 0x08, 0x80
_PRED_SLOTS = 16


class _Damaged(Exception):
    """A line that looked like part of a dump but cannot be trusted."""


def parse_log(data: bytes) -> list[Dump]:
    """Every dump found in a serial log, in log order (see module doc)."""
    log = _LogParser()
    for raw in _NEWLINE.split(data):
        log.feed(raw)
    return log.finish()


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
    """One event line: a contiguous run of one CPU's events."""
    __slots__ = ('line', 'cpu', 'start', 'gap_over', 'gap_excl', 'events')

    def __init__(self, line, cpu, start, gap_over, gap_excl, events):
        self.line, self.cpu, self.start = line, cpu, start
        self.gap_over, self.gap_excl, self.events = gap_over, gap_excl, events


def _decode_event_line(text: bytes, seed: int = 0) -> _Run:
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


# ---- one dump --------------------------------------------------------------

class _DumpBuilder:
    """Collects one dump's lines, then accounts for what is missing.

    Every line is checked against the dump's seed (v1: 0; v2: the CRC of
    the dump's id). Until the seed is known (DUMP BEGIN damaged or lost)
    lines wait in `pending`; lines that fail it are damaged or another
    dump's, kept in `foreign` in case a DUMP END claims them. Lines are
    kept by number; two different lines with one number are both dropped
    (damage), never one silently preferred."""

    def __init__(self, begin: dict[str, str] | None, begin_state: str,
                 guess: int | None = None, begin_text: bytes = b''):
        self.begin, self.begin_state, self.begin_text = begin, begin_state, begin_text
        self.guess = guess                # seed a damaged DUMP BEGIN seems to state
        self.warnings: list[str] = []
        self.lines: dict[int, tuple[bytes, object]] = {}   # number -> (text, content)
        self.conflicts: set[int] = set()
        self.pending: list[bytes] = []
        self.foreign: list[bytes] = []
        self.bad = 0                      # dump-looking lines that failed checks
        self.noise = 0
        self.end: dict[str, str] | None = None
        self.end_damaged = False
        self.seed: int | None = None
        self.version: int | None = None
        self.meta: dict[str, str] = {}
        self.categories: dict[int, str] = {}
        self.phases: dict[int, str] = {}
        self.type_fields: dict[int, dict[str, str]] = {}
        self.summaries: dict[int, dict[str, str]] = {}
        self.runs: list[_Run] = []
        self.rejected: set[int] = set()
        self.unknown_tags: set[str] = set()
        self.unattributed, self.unattributed_cpus = 0, []
        if begin is not None:
            self._header(begin)
        elif begin_state == 'damaged':
            self.bad += 1
            self.warnings.append('DUMP BEGIN line damaged: the dump header (v, dump, cpus) is unknown')
        else:
            self.warnings.append('dump lines without a DUMP BEGIN line (lost): the dump header is unknown')
        self.supported = self.version is None or self.version in VERSIONS
        if not self.supported:
            self.warnings.append(f'dump format version {begin.get("v")} is not one this '
                                 f'decoder reads ({", ".join(map(str, VERSIONS))}): nothing but '
                                 'its header is decoded; update btlib')

    def _header(self, begin: dict[str, str]):
        self.version = _int(begin.get('v'))
        if self.version == 1:
            self.seed = 0
        elif self.version == 2:
            self.seed = _id_seed(begin)
            if self.seed is None:
                self.warnings.append('DUMP BEGIN v=2 states no valid dump id (dump=, nonce=)')

    # -- lines ----------------------------------------------------------------

    def _parse(self, text: bytes, seed: int):
        """(line number, content) of a line checked against seed, or _Damaged."""
        try:
            if text.startswith(b'%E'):
                run = _decode_event_line(text, seed)
                return run.line, run
            tag, line, fields = _text_fields(text, seed)
            return line, (tag, fields)
        except _Damaged:
            raise
        except (UnicodeDecodeError, ValueError):
            raise _Damaged from None

    def add(self, text: bytes):
        """One '%...' line while this dump is open."""
        if not self.supported:
            return
        if self.seed is None:
            self.pending.append(text)
            return
        try:
            line, content = self._parse(text, self.seed)
        except _Damaged:
            self.bad += 1
            self.foreign.append(text)
            return
        self._keep(line, text, content)

    def _keep(self, line: int, text: bytes, content):
        old = self.lines.get(line)
        if line in self.conflicts:
            self.bad += 1
        elif old is None:
            self.lines[line] = (text, content)
        elif old[0] == text:
            self.warnings.append(f'line {line} arrived twice; the identical copy was ignored')
        else:
            del self.lines[line]
            self.conflicts.add(line)
            self.bad += 1
            self.warnings.append(f'line {line} arrived twice with different contents '
                                 '(one is damaged or from another dump): neither is used')

    def _verified(self, seed: int) -> list[bytes]:
        """The pending lines that check out against `seed`."""
        out = []
        for text in self.pending:
            try:
                self._parse(text, seed)
            except _Damaged:
                continue
            out.append(text)
        return out

    def set_seed(self, seed: int):
        """The dump's id is known at last: check the lines that waited."""
        self.seed = seed
        if self.version is None:
            self.version = 1 if seed == 0 else 2
        pending, self.pending = self.pending, []
        for text in pending:
            self.add(text)

    def take_foreign(self, seed: int) -> list[bytes]:
        """Remove and return the lines that failed this dump's seed but
        check out against `seed` (another dump's)."""
        mine, theirs = [], []
        for text in self.foreign:
            try:
                self._parse(text, seed)
            except _Damaged:
                mine.append(text)
                continue
            theirs.append(text)
        self.foreign = mine
        self.bad -= len(theirs)
        return theirs

    def same_begin(self, text: bytes) -> bool:
        """A DUMP BEGIN line that only repeats this dump's."""
        return text == self.begin_text and (self.version == 2 or not self.lines)

    def close(self, end: dict[str, str] | None, end_damaged: bool = False):
        self.end = end
        self.end_damaged = end_damaged
        if end_damaged:
            self.bad += 1
        if self.seed is None and self.supported:
            self._resolve_without_end()

    def _resolve_without_end(self):
        """No verified DUMP BEGIN or DUMP END: take the seed a damaged DUMP
        BEGIN seems to state, or v1's, if the dump's lines confirm it."""
        best, count = None, 0
        for seed in (self.guess, 0):
            if seed is not None and len(self._verified(seed)) > count:
                best, count = seed, len(self._verified(seed))
        if best is not None:
            self.set_seed(best)
        elif self.pending:
            self.bad += len(self.pending)
            self.warnings.append(f'{len(self.pending)} dump lines could not be checked: '
                                 'the dump id is unknown (DUMP BEGIN and DUMP END damaged '
                                 'or lost); counted as damaged')

    def worth_reporting(self) -> bool:
        """False for a phantom: console text that merely looked like a dump."""
        return bool(self.begin_state == 'ok' or self.end is not None or self.end_damaged
                    or self.lines or self.conflicts
                    or (self.begin_state == 'damaged' and (self.pending or self.foreign)))

    # -- building the Dump ---------------------------------------------------

    def build(self, index: int) -> Dump:
        header = dict(self.begin or {})
        for k in ('dump', 'nonce'):
            if self.end and k in self.end:
                header.setdefault(k, self.end[k])
        header.setdefault('v', str(self.version or FORMAT_VERSION))
        if not self.supported:
            return Dump(index=index, header=header, version=self.version or 0, tsc_hz=0,
                        cpus=[], types={}, phases={}, complete=False, end_events=None,
                        damaged_lines=0, missing_lines=0, warnings=self.warnings,
                        truncated=self.end is None)
        self._interpret()
        for k, v in self.meta.items():
            header.setdefault(k, v)
        types = self._types()
        damaged_lines, missing_lines = self._line_losses()
        self.lines_lost = damaged_lines + missing_lines
        cpus = self._cpus()
        if self.unknown_tags:
            self.warnings.append('lines of unknown kind ignored (newer format?): %'
                                 + ' %'.join(sorted(self.unknown_tags)))
        end_events = _int(self.end.get('events')) if self.end else None
        decoded = sum(len(c.events) for c in cpus)
        self._unattributed(cpus, end_events)
        truncated = self.end is None
        if truncated:
            what = 'its DUMP END line damaged' if self.end_damaged else 'DUMP END never arrived'
            self.warnings.append(f'dump truncated: {what} ({decoded} events decoded from what did)')
        if end_events is not None and end_events != decoded:
            self.warnings.append(f'DUMP END says {end_events} events were sent; '
                                 f'{decoded} arrived intact')
        complete = (not truncated and self.begin_state == 'ok' and end_events == decoded
                    and damaged_lines == 0 and missing_lines == 0
                    and all(c.summary_seen for c in cpus))
        return Dump(index=index, header=header, version=self.version or 0,
                    tsc_hz=_int(header.get('tsc_hz')) or 0, cpus=cpus, types=types,
                    phases=self.phases, complete=complete, end_events=end_events,
                    damaged_lines=damaged_lines, missing_lines=missing_lines,
                    warnings=self.warnings, categories=self.categories,
                    truncated=truncated, noise_lines=self.noise, lines=len(self._good()),
                    previous_boot=header.get('boot') == 'previous',
                    unattributed=self.unattributed, unattributed_cpus=self.unattributed_cpus)

    def _interpret(self):
        """What the intact lines say, in line order; event lines whose seqs
        contradict their CPU's counters line are rejected."""
        for line in sorted(self.lines):
            content = self.lines[line][1]
            if isinstance(content, _Run):
                self.runs.append(content)
            else:
                self._add_text(*content)
        kept = []
        for run in self.runs:
            why = _contradiction(run, self.summaries.get(run.cpu))
            if why:
                self.rejected.add(run.line)
                self.bad += 1
                self.warnings.append(f'line {run.line} (cpu {run.cpu}, {len(run.events)} events) '
                                     f'contradicts that CPU\'s counters line ({why}): rejected')
            else:
                kept.append(run)
        self.runs = kept

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

    def _types(self) -> dict[int, EventType]:
        types = {i: _event_type(i, f) for i, f in self.type_fields.items()}
        damaged = sorted(i for i, t in types.items() if t.damaged)
        if damaged:
            self.warnings.append('event types whose description (%T line) was damaged or lost: '
                                 + ', '.join(map(str, damaged)) + ': their events show as '
                                 'DAMAGED_TYPE_<id> with raw a0/a1')
        return types

    def _good(self) -> set[int]:
        good = set(self.lines) - self.rejected
        if self.begin_state == 'ok':
            good.add(0)
        if self.end is not None:
            lines = _int(self.end.get('lines'))
            if lines:
                good.add(lines - 1)
        return good

    def _line_losses(self) -> tuple[int, int]:
        """(damaged, missing) lines: every line number that never arrived
        intact is one or the other; damaged ones arrived unreadable."""
        good = self._good()
        expected = _int(self.end.get('lines')) if self.end else None
        if expected is None:
            expected = max(good | self.conflicts, default=-1) + 1
            if self.end_damaged:
                expected += 1        # the damaged DUMP END itself
        absent = expected - len([n for n in good if n < expected])
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
        events, last = [], None
        for run in runs:
            if last is not None and run.start < last:
                self.warnings.append(f'cpu {cpu}: line {run.line} overlaps earlier events; ignored')
                continue
            events.extend(run.events)
            last = run.start + len(run.events)
        s = self.summaries.get(cpu)
        info = CpuInfo(cpu=cpu, apic_id=-1, capacity=0, recorded=0, overwritten=0,
                       dropped=0, first_seq=None, last_seq=None, events=events)
        if s is not None and _int(s.get('sent')) is not None:
            self._account_with_summary(info, s)
        else:
            self._account_best_known(info, runs)
        if not events and info.sent is None:
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
        decoded = len(c.events)
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
            holes += max(0, b.start - b.gap_over - b.gap_excl - (a.start + len(a.events)))
        if self.lines_lost:
            c.damaged = holes
        else:
            c.seq_gaps = holes
        c.recorded = len(c.events) + c.overwritten + c.excluded + c.damaged + c.seq_gaps
        if c.events:
            c.first_seq, c.last_seq = c.events[0].seq, c.events[-1].seq

    def _unattributed(self, cpus: list[CpuInfo], end_events: int | None):
        """DUMP END's exact total against what the CPUs account for: the
        rest went with the lost counters lines. One such CPU takes it all;
        among several it cannot be split, and is reported as such."""
        blind = [c for c in cpus if not c.summary_seen]
        if end_events is None or (not blind and self.begin is not None):
            return
        known = sum(c.sent if c.summary_seen else len(c.events) + c.damaged for c in cpus)
        extra = end_events - known
        if extra <= 0:
            return
        if len(blind) == 1 and self.begin is not None:
            blind[0].damaged += extra
            self.warnings.append(f'cpu {blind[0].cpu}: DUMP END\'s total says {extra} more '
                                 'of its events were lost with its lines')
            return
        self.unattributed, self.unattributed_cpus = extra, [c.cpu for c in blind]
        names = ', '.join(map(str, self.unattributed_cpus)) or 'none listed'
        self.warnings.append(f'{extra} events (DUMP END\'s total) were lost with counters lines '
                             f'and cannot be attributed to one CPU (CPUs without counters: '
                             f'{names}{"" if self.begin is not None else ", maybe others"})')


def _contradiction(run: _Run, s: dict[str, str] | None) -> str | None:
    """Why an event line cannot be this CPU's, per its counters line."""
    if s is None:
        return None
    lo, hi = run.start, run.start + len(run.events) - 1
    base, head = _int(s.get('base')), _int(s.get('head'))
    first, last = _int(s.get('first')), _int(s.get('last'))
    if _int(s.get('sent')) == 0:
        return 'it sent no events'
    if base is not None and head is not None and not base <= lo <= hi < head:
        return f'seqs {lo}..{hi} outside [base={base}, head={head})'
    if first is not None and last is not None and not first <= lo <= hi <= last:
        return f'seqs {lo}..{hi} outside first={first}..last={last}'
    return None


def _event_type(i: int, f: dict[str, str]) -> EventType:
    """One event type; one whose %T line lost its name or arguments is
    marked damaged and shows its raw arguments."""
    kind = f.get('kind', 'instant')
    damaged = any(k not in f for k in ('name', 'kind', 'a0', 'a1'))
    if damaged:
        args = ('a0', 'a1')
    else:
        args = tuple('' if f[k] == '-' else f[k] for k in ('a0', 'a1'))
    signed = set(f.get('signed', '-').split(','))
    return EventType(id=i, name=f'DAMAGED_TYPE_{i}' if damaged else f['name'],
                     category=f.get('cat', ''), kind=kind if kind in KINDS else 'instant',
                     args=args, description=f.get('desc', ''), pinned=f.get('pin') == '1',
                     signed=(('a0' in signed) and not damaged, ('a1' in signed) and not damaged),
                     damaged=damaged)


def _numbered(fields: dict[str, str]) -> dict[int, str]:
    return {int(k): v for k, v in fields.items() if k.isdigit()}


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and v.isdigit() else None


# ---- the log ------------------------------------------------------------------

class _LogParser:
    """Splits a log into dumps: a line holding 'DUMP BEGIN' (even damaged)
    opens one and closes any open one, as a READY line (a new boot) does;
    'DUMP END' closes it; '%' lines belong to the open dump; anything else
    is console noise. A line of another dump fails this dump's CRCs."""

    def __init__(self):
        self.dumps: list[Dump] = []
        self.cur: _DumpBuilder | None = None

    def _close(self, end=None, damaged=False):
        cur, self.cur = self.cur, None
        if cur is not None:
            cur.close(end, damaged)
            self._report(cur)

    def _report(self, builder):
        if builder.worth_reporting():
            self.dumps.append(builder.build(len(self.dumps)))

    def feed(self, raw: bytes):
        line = _clean(raw)
        if line.startswith(b'%'):
            if self.cur is None:
                self.cur = _DumpBuilder(None, 'lost')
            self.cur.add(line)
            return
        m = _BEGIN_LIKE.search(line)
        if m:
            self._begin(line[m.start():])
            return
        m = _END_LIKE.search(line)
        if m:
            self._end(line[m.start():])
            return
        if _READY.search(line):
            self._close()
        elif self.cur is not None and line:
            self.cur.noise += 1

    def _begin(self, text: bytes):
        try:
            fields = _begin_fields(text)
        except _Damaged:
            guess = _guess_seed(text)
            if self.cur is not None and guess is not None and guess == self.cur.seed \
                    and not self.cur.lines:
                self.cur.bad += 1          # a damaged copy of the open dump's BEGIN
                return
            self._close()
            self.cur = _DumpBuilder(None, 'damaged', guess)
            return
        if self.cur is not None and self.cur.same_begin(text):
            self.cur.warnings.append('line 0 (DUMP BEGIN) arrived twice; the copy was ignored')
            return
        self._close()
        self.cur = _DumpBuilder(fields, 'ok', begin_text=text)

    def _end(self, text: bytes):
        try:
            fields, seed = _end_fields(text)
        except _Damaged:
            if self.cur is None:
                if _TEXT_LINE.match(text):      # shaped like one: say it was seen
                    self.dumps.append(_orphan_end(len(self.dumps), None, True))
            else:
                self._close(None, True)
            return
        cur = self.cur
        if cur is None:
            self.dumps.append(_orphan_end(len(self.dumps), fields, False))
            return
        if cur.seed is None and cur.supported:
            cur.set_seed(seed)
        elif cur.seed != seed and cur.supported:
            # Another dump's END: its lines, if any arrived, were foreign here.
            theirs = cur.take_foreign(seed)
            self._close()
            cur = self.cur = _DumpBuilder(None, 'lost')
            cur.set_seed(seed)
            for text in theirs:
                cur.add(text)
        self._close(fields)

    def finish(self) -> list[Dump]:
        self._close()
        return self.dumps


def _orphan_end(index: int, fields, damaged: bool) -> Dump:
    """A DUMP END whose dump never showed: report it rather than hide it."""
    events = _int(fields.get('events')) if fields else None
    return Dump(index=index, header=dict(fields or {}), version=FORMAT_VERSION, tsc_hz=0, cpus=[],
                types={}, phases={}, complete=False, end_events=events,
                damaged_lines=1 if damaged else 0, missing_lines=0,
                warnings=[f'a DUMP END line without its dump (events={events}): '
                          'everything before it was lost'], truncated=False)
