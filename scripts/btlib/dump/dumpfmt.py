"""The dump format's vocabulary (docs/dump-format.md): its versions, line
marks and CRCs, the fields of its text lines, and the reference decoder of
one event line.

Nothing here splits a log or decodes in C: dumplog.parse_log() finds the
dumps in a serial log (dumpbuild.py accounts for each dump's lines) and
linedecode.py decodes event lines in C, with the same results as
decode_event_line_py() here, the reference. Every line's CRC-32 is checked
(in format v2 seeded with the dump's id, so a line of another dump or boot
fails); a line that cannot be trusted raises Damaged, and costs only its
own events, never a wrong one.
"""

from __future__ import annotations

import binascii
import re
import zlib

from .model import MAX_CPUS, RECORD, SEQ_MASK, Event, U64_MASK, events_of

FORMAT_VERSION = 2           # the newest format this decoder reads
VERSIONS = (1, 2)            # the formats it reads

ANSI = re.compile(rb'\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])')
NEWLINE = re.compile(rb'\r\n|\r|\n')       # a lone CR ends a line too, as on a terminal
TEXT_LINE = re.compile(rb'(.*) \*([0-9A-F]{8})\Z', re.S)
NONCE = re.compile(r'[0-9A-F]{16}')


def _one_damaged_byte(word: bytes) -> re.Pattern:
    """Matches `word` with any one byte changed or lost."""
    forms = [re.escape(word[:i]) + sep + re.escape(word[i + 1:])
             for i in range(len(word)) for sep in (b'.', b'')]
    return re.compile(b'|'.join(forms), re.S)


class Marker:
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
        # Every marker line ends in ' *' and 8 characters and holds 'dump=':
        # checked first, the costly search is spared the console's (and
        # random bytes') lines, nearly all of which fail them.
        if line[-10:-8] != b' *' or b'dump=' not in line:
            return -1
        m = self.damaged.search(line)
        return m.start() if m and self.rest.match(line, m.end()) else -1


BEGIN_MARK = Marker(b'DUMP BEGIN ', rb' ?v=\d+ dump=\d+ .* \*\S{8}\Z')
END_MARK = Marker(b'DUMP END ', rb' ?dump=\d+ .*events=\d+ .* \*\S{8}\Z')

# event header byte (docs/dump-format.md, "Event lines"; recorder/predict.h, the
# encoder's, and test_wire_constants keep them equal)
EV_TYPE, EV_FLAGS, EV_A0, EV_A1, EV_TSC_MORE = 0x01, 0x02, 0x04, 0x08, 0x80
EV_TSC_SHIFT, EV_TSC_LOW = 4, 7       # bits 4-6: the low 3 bits of the tsc residual
PRED_SLOTS = 16                      # per-type predictor state, by type % 16
_TSC_LOW_BITS = EV_TSC_LOW.bit_length()


class Damaged(Exception):
    """A line that looked like part of a dump but cannot be trusted."""


class Run:
    """One event line: a contiguous run of one CPU's events, as Event
    objects or, from the compiled decoder, its packed records or just its
    count and its text, to decode again when the events are wanted
    (linedecode.LineRun)."""
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
            self._events = events_of(self.records, self.cpu)
        return self._events


# ---- lines -------------------------------------------------------------

def clean(raw: bytes) -> bytes:
    if b'\x1b' in raw:
        raw = ANSI.sub(b'', raw)
    if b'\x00' in raw:
        raw = raw.replace(b'\x00', b'')
    return raw.strip(b' \t')


def dump_seed(nonce: int, dump_no: int) -> int:
    """The CRC seed of a v2 dump's lines: the CRC-32 of its 12-byte id."""
    return zlib.crc32(nonce.to_bytes(8, 'little') + dump_no.to_bytes(4, 'little'))


def empty_dump(nonce: int, dump_no: int = 1) -> bytes:
    """The smallest complete v2 dump, its DUMP BEGIN and DUMP END lines (0
    CPUs, 0 events): logs of many dumps made for tests and make bench."""
    begin = f'DUMP BEGIN v=2 dump={dump_no} nonce={nonce:016X} cpus=0 events=0'.encode()
    end = f'DUMP END dump={dump_no} nonce={nonce:016X} events=0 lines=1'.encode()
    crcs = zlib.crc32(begin), zlib.crc32(end, dump_seed(nonce, dump_no))
    return b'%s *%08X\n%s *%08X\n' % (begin, crcs[0], end, crcs[1])


def id_seed(fields: dict[str, str]) -> int | None:
    """The seed of the id a line states (dump=, nonce=), or None."""
    nonce, dump_no = fields.get('nonce', ''), int_field(fields.get('dump'))
    if not NONCE.fullmatch(nonce) or dump_no is None or dump_no >= 1 << 32:
        return None
    return dump_seed(int(nonce, 16), dump_no)


def check_text(text: bytes, seed: int = 0) -> bytes:
    """The body of a text line whose CRC (from `seed`) matches, else Damaged."""
    m = TEXT_LINE.match(text)
    if not m or zlib.crc32(m.group(1), seed) != int(m.group(2), 16):
        raise Damaged
    return m.group(1)


def _fields(words: list[bytes]) -> dict[str, str]:
    """key=value words; 'desc' takes the rest of the line, spaces and all."""
    out = {}
    for i, w in enumerate(words):
        key, eq, val = w.partition(b'=')
        if not eq:
            raise Damaged
        if key == b'desc':
            val = b' '.join([val] + words[i + 1:])
            out['desc'] = val.decode('ascii')
            break
        out[key.decode('ascii')] = val.decode('ascii')
    return out


def text_fields(text: bytes, seed: int) -> tuple[bytes, int, dict[str, str]]:
    """(tag, line number, fields) of a '%X n k=v ... *CRC' line."""
    body = check_text(text, seed)
    words = body.split(b' ')
    if len(words) < 2 or not words[1].isdigit():
        raise Damaged
    try:
        return words[0][1:], int(words[1]), _fields(words[2:])
    except UnicodeDecodeError:
        raise Damaged from None


def marker_fields(text: bytes) -> dict[str, str]:
    """Fields of a 'DUMP BEGIN ...' / 'DUMP END ...' line, CRC unchecked."""
    m = TEXT_LINE.match(text)
    if not m:
        raise Damaged
    try:
        return _fields(m.group(1).split(b' ')[2:])
    except UnicodeDecodeError:
        raise Damaged from None


def begin_fields(text: bytes) -> dict[str, str]:
    """A DUMP BEGIN line's fields: its CRC is a plain one in every version."""
    check_text(text)
    return marker_fields(text)


def end_fields(text: bytes) -> tuple[dict[str, str], int]:
    """(fields, seed) of a DUMP END line, checked against the id it states
    (v2), or with a plain CRC (v1: no nonce)."""
    fields = marker_fields(text)
    seed = id_seed(fields) if 'nonce' in fields else 0
    if seed is None:
        raise Damaged
    check_text(text, seed)
    return fields, seed


def begin_seed(line: bytes) -> int:
    """The seed of the dump a DUMP BEGIN line opens: v2's id seed, 0 for v1
    (or an unreadable line, whose dump's lines then fail their checks)."""
    at = line.find(b'DUMP BEGIN')
    if at < 0:
        return 0
    try:
        seed = id_seed(begin_fields(line[at:]))
    except Damaged:
        return 0
    return seed or 0


def guess_seed(line: bytes) -> int | None:
    """The seed of the id a damaged DUMP BEGIN seems to state, if any: only
    a candidate, that the dump's own lines confirm or refute."""
    d, n = re.search(rb' dump=(\d+) ', line), re.search(rb' nonce=([0-9A-F]{16}) ', line)
    if not d or not n:
        return None
    return id_seed({'dump': d.group(1).decode(), 'nonce': n.group(1).decode()})


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
            raise Damaged


def _event_payload(text: bytes, seed: int) -> bytes:
    """The CRC-checked (from `seed`) binary payload of an '%E<base64>' line."""
    body = text[2:]
    if len(body) % 4 == 1:
        raise Damaged
    try:
        raw = binascii.a2b_base64(body + b'=' * (-len(body) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        raise Damaged from None
    if len(raw) < 5 or zlib.crc32(raw[:-4], seed) != int.from_bytes(raw[-4:], 'little'):
        raise Damaged
    return raw[:-4]


def stated_line_number(text: bytes, seed: int) -> int:
    """The line number a dump line states, its CRC checked from `seed` (the
    dump's; DUMP BEGIN's plain CRC is checked as such): 0 for DUMP BEGIN,
    `lines - 1` for DUMP END. Damaged when a check fails."""
    if text.startswith(b'DUMP BEGIN'):
        begin_fields(text)
        return 0
    if text.startswith(b'DUMP END'):
        fields, end_seed = end_fields(text)
        lines = int_field(fields.get('lines'))
        if end_seed != seed or not lines:
            raise Damaged
        return lines - 1
    if text.startswith(b'%E'):
        buf = _event_payload(text, seed)
        try:
            return _varint(buf, 0)[0]
        except IndexError:
            raise Damaged from None
    return text_fields(text, seed)[1]


def decode_event_line_py(text: bytes, seed: int = 0) -> Run:
    """The reference decoder of one event line."""
    buf = _event_payload(text, seed)
    try:
        pos = 0
        head = []
        for _ in range(6):
            v, pos = _varint(buf, pos)
            head.append(v)
        line, cpu, start, gap_over, gap_excl, tsc = head
        if cpu >= MAX_CPUS or pos >= len(buf):
            raise Damaged
        return Run(line, cpu, start, gap_over, gap_excl,
                   _decode_events(buf, pos, cpu, start, tsc))
    except IndexError:
        raise Damaged from None


def _decode_events(buf: bytes, pos: int, cpu: int, seq: int, tsc: int) -> list[Event]:
    """The events of one line; mirrors pred_encode/pred_update in
    src/recorder/predict.c (the encoder's predictor).

    Per-type state (slot = type % 16): [type, gap, a0, a0d, a1, a1d, next]
    with next = -1 until some type has followed this one. Varints of one
    byte are read inline: this loop is where decoding time goes."""
    M = U64_MASK
    slots = [None] * PRED_SLOTS
    out = []
    append = out.append
    n = len(buf)
    prev = -1                 # previous type in this line, -1 at the start
    prev_tsc, prev_a0 = tsc, 0
    while pos < n:
        hdr = buf[pos]
        pos += 1
        if hdr & EV_TYPE:
            typ, pos = _varint(buf, pos)
            if typ > 0xFFFF:
                raise Damaged
        elif prev < 0:
            raise Damaged
        else:
            ps = slots[prev % PRED_SLOTS]
            typ = ps[6] if ps is not None and ps[0] == prev and ps[6] >= 0 else prev
        if hdr & EV_FLAGS:
            flags = buf[pos]
            pos += 1
        else:
            flags = 0
        zz = (hdr >> EV_TSC_SHIFT) & EV_TSC_LOW
        if hdr & EV_TSC_MORE:
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                b, pos = _varint(buf, pos)
            zz |= b << _TSC_LOW_BITS
        s = slots[typ % PRED_SLOTS]
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
        if hdr & EV_A0:
            zz = buf[pos]
            if zz < 0x80:
                pos += 1
            else:
                zz, pos = _varint(buf, pos)
            a0 = (a0 + ((zz >> 1) ^ -(zz & 1))) & M
        if hdr & EV_A1:
            zz = buf[pos]
            if zz < 0x80:
                pos += 1
            else:
                zz, pos = _varint(buf, pos)
            a1 = (a1 + ((zz >> 1) ^ -(zz & 1))) & M
        # the same updates as pred_update(), in the same order
        if prev >= 0:
            ps = slots[prev % PRED_SLOTS]
            if ps is not None and ps[0] == prev:
                ps[6] = typ
        if s is not None:
            s[1] = delta
            s[3] = (a0 - s[2]) & M
            s[2] = a0
            s[5] = (a1 - s[4]) & M
            s[4] = a1
        else:
            slots[typ % PRED_SLOTS] = [typ, delta, a0, 0, a1, 0, -1]
        prev = typ
        prev_tsc = (prev_tsc + delta) & M
        prev_a0 = a0
        append(Event(cpu, seq & SEQ_MASK, prev_tsc, typ, flags, a0, a1))
        seq += 1
    return out


def int_field(v: str | None) -> int | None:
    return int(v) if v is not None and v.isdigit() else None
