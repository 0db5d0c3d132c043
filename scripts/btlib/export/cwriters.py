"""The exporters' rows and packets written in C (decoder/csvout.c, textout.c,
ctfout.c, jsonout.c, perfettoout.c): each writer takes what its exporter has
gathered (types, phases, markers) and yields the bytes a chunk at a time.

Used only when btlib.native.choice.compiled(): each exporter (csvout,
textout, ctfout, jsonout, perfettoout) keeps its pure-Python reference, which
writes the same bytes (test_oracle).
"""

from __future__ import annotations

import ctypes

from ..dump.model import RECORD_SIZE
from ..native import library as native
from ..timeline.merge import Merge
from ..util.outsink import byte_sink

_CsvType, _Phase, _Csv, _Marker, _Text = (native.S[t] for t in (
    'bt_csv_type', 'bt_phase', 'bt_csv', 'bt_marker', 'bt_text'))
_PfFmt, _PfMark, _PfFlow, _Pf, _PfCpu = (native.S[t] for t in (
    'bt_pf_fmt', 'bt_pf_mark', 'bt_pf_flow', 'bt_pf', 'bt_pf_cpu'))
_JsonFmt, _JsonPair, _JsonMark, _Json, _JsonCpu = (native.S[t] for t in (
    'bt_json_fmt', 'bt_json_pair', 'bt_json_mark', 'bt_json', 'bt_json_cpu'))

CSV_CHUNK = 1 << 20
U64_LIMIT = 1 << 64


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
    return [(native.addr_of(records), None, len(records) // RECORD_SIZE)]


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
    """The CTF stream bytes of records' events (ctfout.EVENT each)."""
    n, size = len(records) // RECORD_SIZE, native.const('BT_CTF_EVENT_SIZE')
    out = ctypes.create_string_buffer(max(1, n * size))
    native.lib().bt_ctf_events(records, n, out)
    return out.raw[:n * size]


_CtfSeg, _CtfStream = native.S['bt_ctf_seg'], native.S['bt_ctf_stream']


def ctf_stream(header: bytes, discarded: int, packets: int, segments,
               shared=False) -> tuple[bytes, int]:
    """(the packets, the running events_discarded after them) of
    `segments` (records, first, end, {i: lost} holes, lead, tail, cpu),
    records[first:end] of each in TSC order, as ctfout._stream_packets
    (shared: ctfout._shared_packets) writes them, for a stream file that
    already has `packets` packets and `discarded` losses."""
    segs = (_CtfSeg * len(segments))()
    keep = []
    for seg, (records, first, end, cuts, lead, tail, cpu) in zip(segs, segments):
        at = sorted(i - first for i in cuts if first < i < end)
        cut_at, cut_n = (ctypes.c_uint64 * max(1, len(at)))(*at), \
            (ctypes.c_uint64 * max(1, len(at)))(*(cuts[first + i] for i in at))
        keep += [records, cut_at, cut_n]
        seg.ev, seg.cut_at, seg.cut_n = native.addr_of(records) + first * RECORD_SIZE, \
            ctypes.addressof(cut_at), ctypes.addressof(cut_n)
        seg.n, seg.ncuts, seg.lead, seg.tail, seg.cpu = end - first, len(at), lead, tail, cpu
    st = _CtfStream(discarded=discarded, packets=packets, shared=shared)
    ctypes.memmove(st.header, header, len(header))
    lib = native.lib()
    out = ctypes.create_string_buffer(max(1, lib.bt_ctf_stream_bound(segs, len(segments))))
    heap = (ctypes.c_uint64 * max(1, len(segments)))()
    size = lib.bt_ctf_stream(ctypes.byref(st), segs, len(segments), heap, out)
    return ctypes.string_at(out, size), st.discarded


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
    (jsonout._cpu_records) to text stream out and returns its unmatched
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
