"""The compiled event-line decoder (src/host/decode.c), through ctypes.

    from btlib import fastdecode
    if fastdecode.available():
        for res in fastdecode.decode_lines([b'%E...', ...], seed=0):
            ...   # DAMAGED, PUNT or (line, cpu, start, gap_over, gap_excl, records)

`make` builds build/host/libbtdecode.so; without it (or with the
environment variable BT_PURE_PYTHON=1) available() is False and btlib.dumpfmt
decodes in pure Python, with the same results. `records` is a bytes object
of 32-byte event records (btlib.model.RECORD); see events_of().

A line answered PUNT holds something only the reference decoder judges
exactly (a varint over 64 bits, '=' in its base64, an over-long line):
decode that one line with dumpfmt's Python code.
"""

from __future__ import annotations

import ctypes
import os

from .model import RECORD_SIZE, events_of     # noqa: F401 (events_of: for callers)

LIB_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))), 'build', 'host', 'libbtdecode.so')
DISABLE_ENV = 'BT_PURE_PYTHON'

DAMAGED, PUNT = -1, -2              # decode.h: BT_DAMAGED, BT_PUNT
BATCH_RUNS = 8192
BATCH_EVENTS = 1 << 19


class _Run(ctypes.Structure):
    _fields_ = [('line', ctypes.c_uint64), ('cpu', ctypes.c_uint64),
                ('start', ctypes.c_uint64), ('gap_over', ctypes.c_uint64),
                ('gap_excl', ctypes.c_uint64), ('status', ctypes.c_int32),
                ('first', ctypes.c_uint32)]


_lib = None
_tried = False


def _load():
    global _lib, _tried
    if not _tried:
        _tried = True
        if os.environ.get(DISABLE_ENV) != '1':
            try:
                lib = ctypes.CDLL(LIB_PATH)
            except OSError:
                lib = None
            if lib is not None:
                f = lib.bt_decode_lines
                f.restype = ctypes.c_size_t
                f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32,
                              ctypes.POINTER(_Run), ctypes.c_size_t, ctypes.c_void_p,
                              ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
                lib.bt_decode_line.restype = ctypes.c_int32
                lib.bt_decode_line.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
                                               ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
                lib.bt_merge_order.restype = None
                lib.bt_merge_order.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p,
                                               ctypes.c_void_p]
                lib.bt_gather.restype = None
                lib.bt_gather.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                          ctypes.c_void_p]
                lib.bt_csv_rows.restype = ctypes.c_size_t
                lib.bt_csv_rows.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                            ctypes.c_void_p, ctypes.c_size_t,
                                            ctypes.POINTER(ctypes.c_size_t)]
                _lib = lib
    return _lib


def available() -> bool:
    """True when the compiled core is loaded (and not disabled)."""
    return _load() is not None


_one_run = _Run()
_one_run_ref = ctypes.byref(_one_run)
_one_ev = None
LINE_EVENTS_MAX = 4096             # decode.c punts longer lines: fewer events than this


def decode_line(text: bytes, seed: int = 0):
    """decode_lines() for one line: DAMAGED, PUNT or the tuple."""
    global _one_ev
    lib = _load()
    if _one_ev is None:
        _one_ev = ctypes.create_string_buffer(LINE_EVENTS_MAX * RECORD_SIZE)
    r = _one_run
    n = lib.bt_decode_line(text, len(text), seed & 0xFFFFFFFF, _one_run_ref, _one_ev,
                           LINE_EVENTS_MAX)
    if n < 0:
        return n
    return (r.line, r.cpu, r.start, r.gap_over, r.gap_excl,
            ctypes.string_at(_one_ev, n * RECORD_SIZE))


def prefetch(texts: list[bytes], seed: int = 0) -> dict:
    """{text: decode_line(text, seed)} for many lines in one batch."""
    return dict(zip(texts, decode_lines(texts, seed)))


def decode_lines(texts: list[bytes], seed: int = 0) -> list:
    """One result per '%E' line of texts (each without its newline):
    DAMAGED, PUNT, or (line, cpu, start, gap_over, gap_excl, records)."""
    lib = _load()
    buf = b'\n'.join(texts) + b'\n'
    base = ctypes.cast(ctypes.c_char_p(buf), ctypes.c_void_p).value   # buf stays alive
    runs = (_Run * BATCH_RUNS)()
    ev = ctypes.create_string_buffer(BATCH_EVENTS * RECORD_SIZE)
    used = ctypes.c_size_t()
    out = []
    pos, total = 0, len(buf)
    while pos < total:
        n = lib.bt_decode_lines(base + pos, total - pos, seed & 0xFFFFFFFF, runs, BATCH_RUNS,
                                ev, BATCH_EVENTS, ctypes.byref(used))
        batch = runs[:n]
        nev = max((r.first + max(r.status, 0) for r in batch), default=0)
        raw = ctypes.string_at(ev, nev * RECORD_SIZE)
        for r in batch:
            if r.status < 0:
                out.append(r.status)
            else:
                at = r.first * RECORD_SIZE
                out.append((r.line, r.cpu, r.start, r.gap_over, r.gap_excl,
                            raw[at:at + r.status * RECORD_SIZE]))
        pos += used.value
    return out


# ---- timeline order and CSV rows, from records ---------------------------------

class _CsvType(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char_p), ('label', ctypes.c_char_p * 2),
                ('nfields', ctypes.c_uint32), ('arg', ctypes.c_uint8 * 2),
                ('phase', ctypes.c_uint8 * 2), ('sgn', ctypes.c_uint8 * 2)]


class _Phase(ctypes.Structure):
    _fields_ = [('value', ctypes.c_uint64), ('name', ctypes.c_char_p)]


class _Csv(ctypes.Structure):
    _fields_ = [('types', ctypes.POINTER(_CsvType)), ('type_index', ctypes.POINTER(ctypes.c_uint16)),
                ('phases', ctypes.POINTER(_Phase)), ('nphases', ctypes.c_size_t),
                ('t0', ctypes.c_uint64), ('hz', ctypes.c_uint64), ('row_max', ctypes.c_size_t)]


CSV_ARGS_MAX = 2048          # csvout.c ARGS_MAX
CSV_CHUNK = 1 << 20
U64_LIMIT = 1 << 64


def merge_order(records: bytes) -> memoryview:
    """Indices of records (CPU by CPU) in timeline order: (tsc, cpu, seq),
    stable, as a memoryview of u32."""
    lib = _load()
    n = len(records) // RECORD_SIZE
    order = (ctypes.c_uint32 * max(1, n))()
    tmp = (ctypes.c_uint32 * max(1, n))()
    lib.bt_merge_order(records, n, order, tmp)
    return memoryview(order).cast('B').cast('I')[:n]


def gather(records: bytes, order: memoryview) -> bytes:
    """records reordered: the k-th is records' order[k]-th."""
    out = ctypes.create_string_buffer(max(1, len(records)))
    _load().bt_gather(records, order.obj, len(order), out)
    return out.raw[:len(records)]


def sort_records(records: bytes) -> bytes:
    """Records (CPU by CPU) in timeline order."""
    return gather(records, merge_order(records))


def csv_writer(views: dict, phases: dict, t0: int, hz: int):
    """A function (records, out) that writes the CSV rows of records to
    text stream out, or None when some name is too long for csvout.c."""
    lib = _load()
    from .export_csv import csv_field          # one definition of the quoting (a cycle)
    order = sorted(views)
    ctypes_types = (_CsvType * max(1, len(order)))()
    index = (ctypes.c_uint16 * 65536)()
    longest = 0
    for k, tid in enumerate(order):
        v, t = views[tid], ctypes_types[k]
        if not 0 <= tid < 65536:
            return None
        index[tid] = k
        name = csv_field(v.name).encode()
        t.name = name
        labels = [(' ' if j else '') + f'{n}=' for j, (n, _, _) in enumerate(v.fields)]
        if len(v.fields) > 2:
            return None
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
    if args_max > CSV_ARGS_MAX or not 0 <= t0 < U64_LIMIT or not 0 < hz < U64_LIMIT:
        return None
    ctx = _Csv(ctypes_types, index, ph, len(table), t0, hz, 300 + 2 * args_max + longest)
    keep = (ctypes_types, index, ph, table)

    def write(records: bytes, out):
        n = len(records) // RECORD_SIZE
        buf = ctypes.create_string_buffer(CSV_CHUNK + ctx.row_max)
        done = ctypes.c_size_t()
        base = ctypes.cast(ctypes.c_char_p(records), ctypes.c_void_p).value
        at = 0
        while at < n:
            size = lib.bt_csv_rows(ctypes.byref(ctx), base + at * RECORD_SIZE, n - at, buf,
                                   len(buf), ctypes.byref(done))
            out.write(ctypes.string_at(buf, size).decode())
            at += done.value
        return keep
    return write
