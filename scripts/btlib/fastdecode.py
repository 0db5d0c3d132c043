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

from .model import RECORD, RECORD_SIZE, Event

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
                _lib = lib
    return _lib


def available() -> bool:
    """True when the compiled core is loaded (and not disabled)."""
    return _load() is not None


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


def events_of(records: bytes) -> list[Event]:
    """Event objects from packed 32-byte records."""
    return [Event(cpu, seq, tsc, typ, flags, a0, a1)
            for tsc, seq, typ, cpu, flags, a0, a1 in RECORD.iter_unpack(records)]
