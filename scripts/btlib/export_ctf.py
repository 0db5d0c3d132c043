"""CTF 1.8 export: a trace directory babeltrace2 and Trace Compass read.

The directory holds `metadata` (TSDL text) and one binary stream file per
CPU, `stream_NN`.  Everything is little-endian and byte-aligned:

  packet header   u32 magic 0xC1FC1FC1, u8 uuid[16], u32 stream_id (= 0)
  packet context  tsc timestamp_begin, tsc timestamp_end, u64 packet_size,
                  u64 content_size (both in bits, equal: no padding),
                  u64 events_discarded, u32 cpu_id
  event header    tsc timestamp, u16 id
  event context   u32 seq, u8 flags
  event fields    two 64-bit integers, named from the dump's event table
                  (a0/a1 where it leaves an argument unnamed): int64_t for
                  the arguments the table declares signed, else uint64_t

`tsc` is a u64 mapped onto `clock tsc { freq = <tsc_hz>; }`, so readers
print real times, and `babeltrace2 --clock-cycles` prints the raw TSC.

Losses: events_discarded is the running count of events the CPU lost, as
CTF defines it.  Losses with no place in the sequence (overwritten before
the oldest survivor, refused while paused) come first, after an empty
packet with count 0 so readers see the step; a hole in the sequence
numbers ends a packet so its loss shows up where it happened; a hole after
the last event gets an empty closing packet.  babeltrace2 warns about each.

A CPU whose TSC goes backwards (reset, broken hardware) is split into one
stream file per monotonic stretch (stream_NN, stream_NN_part1, ...), since
a CTF stream's clock may never go back.

More than STREAM_FILES_MAX CPUs: babeltrace2 keeps every stream file open,
and 1024 of them fail under the common `ulimit -n 1024`.  Then several CPUs
share a stream file (stream_cpus_A-B), as a channel's stream carries
packets of one CPU each in LTTng: each packet holds one CPU's events and
says which in its cpu_id; the group's events are merged by TSC and a packet
ends where the CPU changes, so the stream's clock never goes back.
events_discarded is then the stream's running count, and every step in it
comes on an (empty) packet of the CPU that lost the events, where it lost
them; a CPU's unplaced losses come so at the group's first timestamp.  A CPU whose TSC goes back keeps files of its
own.
"""

import hashlib
import heapq
import os
import struct
import uuid as uuidlib
from collections import namedtuple
from itertools import repeat, starmap
from operator import attrgetter, lt

from . import fastdecode
from .losses import holes, unplaced
from .model import RECORD, seqs_of, signed_args
from .timeline import PHASE_ARG, identifier

CTF_MAGIC = 0xC1FC1FC1
STREAM_ID = 0
EVENTS_PER_PACKET = 4096
STREAM_FILES_MAX = 256           # well under a default `ulimit -n` of 1024
HEADER = struct.Struct('<I16sI')
CONTEXT = struct.Struct('<QQQQQI')
EVENT = struct.Struct('<QHIBQQ')
PACKET_OVERHEAD = HEADER.size + CONTEXT.size
TSDL_KEYWORDS = {
    'align', 'callsite', 'const', 'char', 'clock', 'double', 'enum', 'env',
    'event', 'floating_point', 'float', 'integer', 'int', 'long', 'short',
    'signed', 'stream', 'string', 'struct', 'trace', 'typealias', 'typedef',
    'unsigned', 'variant', 'void', '_Bool', '_Complex', '_Imaginary',
}


def stream_name(cpu):
    return f'stream_{cpu:02d}'


def _field_names(t):
    """Two distinct TSDL identifiers for an event type's arguments."""
    args = tuple(t.args)[:2] if t is not None else ()
    names = []
    for i in range(2):
        raw = args[i] if i < len(args) else ''
        name = identifier(raw, f'a{i}') if raw else f'a{i}'
        if name in TSDL_KEYWORDS:
            name = '_' + name          # CTF's escape; readers strip it
        if name in names:
            name = f'{name}_{i}'
        names.append(name)
    return names


def _quote(text):
    return '"' + str(text).replace('\\', '\\\\').replace('"', '\\"') + '"'


def trace_uuid(tl):
    """Stable per dump, so exporting twice gives identical files."""
    h = hashlib.sha1(repr((sorted(tl.dump.header.items()), tl.dump.tsc_hz,
                           tl.count, tl.t0)).encode())
    return uuidlib.UUID(bytes=h.digest()[:16], version=5)


_PREAMBLE = """/* CTF 1.8 */

typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = true; } := int64_t;
typealias integer { size = 64; align = 8; signed = false; map = clock.tsc.value; } := tsc_t;

trace {
	major = 1;
	minor = 8;
	uuid = "%(uuid)s";
	byte_order = le;
	packet.header := struct {
		uint32_t magic;
		uint8_t uuid[16];
		uint32_t stream_id;
	};
};
"""

_CLOCK_AND_STREAM = """
clock {
	name = tsc;
	uuid = "%(uuid)s";
	description = "time-stamp counter (RDTSC) of the traced machine";
	freq = %(freq)d;
	precision = 1;
	offset_s = 0;
	offset = 0;
	absolute = false;
};

stream {
	id = %(stream)d;
	packet.context := struct {
		tsc_t timestamp_begin;
		tsc_t timestamp_end;
		uint64_t packet_size;
		uint64_t content_size;
		uint64_t events_discarded;
		uint32_t cpu_id;
	};
	event.header := struct {
		tsc_t timestamp;
		uint16_t id;
	};
	event.context := struct {
		uint32_t seq;
		uint8_t flags;
	};
};
"""

PHASE_TYPE = 'phase_t'


def _env(dump):
    lines = ['', 'env {',
             '\ttracer_name = "baretrace";',
             f'\ttrace_name = "baretrace-dump{dump.index}";',
             f'\tdump_index = {dump.index};',
             f'\ttsc_hz = {dump.tsc_hz};',
             f'\tcpus = {len(dump.cpus)};']
    lines += [f'\thdr_{identifier(k, "key")} = {_quote(v)};'
              for k, v in sorted(dump.header.items())]
    return lines + ['};']


def _phase_enum(dump):
    """Boot phases as an enum, so readers print the phase by name."""
    if not dump.phases:
        return []
    lines = ['', 'typealias enum : uint64_t {']
    lines += [f'\t{_quote(name)} = {num},' for num, name in sorted(dump.phases.items())]
    return lines + [f'}} := {PHASE_TYPE};']


def _event_decl(tl, type_id):
    t = tl.dump.types.get(type_id)
    args = (tuple(t.args)[:2] if t is not None else ()) + ('', '')
    lines = ['', 'event {',
             f'\tname = {_quote(tl.name(type_id))};',
             f'\tid = {type_id};',
             f'\tstream_id = {STREAM_ID};',
             '\tfields := struct {']
    signed = signed_args(t)
    for i, (arg, field) in enumerate(zip(args, _field_names(t))):
        ftype = PHASE_TYPE if arg == PHASE_ARG and tl.dump.phases else \
            'int64_t' if i in signed else 'uint64_t'
        lines.append(f'\t\t{ftype} {field};')
    return lines + ['\t};', '};']


def metadata_text(tl, uid):
    """The TSDL metadata for timeline `tl`, trace and clock UUID `uid`."""
    dump = tl.dump
    lines = [_PREAMBLE % {'uuid': uid}]
    lines += _env(dump)
    lines.append(_CLOCK_AND_STREAM % {'uuid': uid, 'freq': tl.hz, 'stream': STREAM_ID})
    lines += _phase_enum(dump)
    for type_id in sorted(set(dump.types) | set(tl.unknown_types)):
        lines += _event_decl(tl, type_id)
    return '\n'.join(lines) + '\n'


# A record as a tuple (built in C, unlike Event objects), for the streams.
_Record = namedtuple('_Record', 'tsc seq type cpu flags a0 a1')
_EVENT_FIELDS = attrgetter('tsc', 'type', 'seq', 'flags', 'a0', 'a1')
_TSC = attrgetter('tsc')
RECORD_QWORDS = RECORD.size // 8      # a record's tsc is its first u64


def _cpu_records(c):
    """CPU c's events as _Records when it has packed records (see
    CpuInfo.packed), else its Event objects: both read alike here."""
    packed = c.packed()
    if packed is None:
        return c.events
    return list(map(tuple.__new__, repeat(_Record), RECORD.iter_unpack(packed)))


def _packet(uid_bytes, cpu, body, discarded, ts_begin, ts_end):
    bits = (PACKET_OVERHEAD + len(body)) * 8
    return (HEADER.pack(CTF_MAGIC, uid_bytes, STREAM_ID)
            + CONTEXT.pack(ts_begin, ts_end, bits, bits, discarded, cpu)
            + body)


def _segments(tscs):
    """Split a CPU's ring (its events' TSCs) where its TSC goes backwards.

    A CTF stream's clock must never go back (babeltrace2 stops with an
    error); a CPU whose TSC was reset or is broken gets one stream per
    monotonic stretch, so every event is still read with its own time."""
    if tscs == sorted(tscs):                      # in C, and the usual case
        return [(0, len(tscs))]
    back = list(map(lt, tscs[1:], tscs))
    starts = [0] + [i for i, b in enumerate(back, 1) if b]
    return list(zip(starts, starts[1:] + [len(tscs)]))


def _stream_packets(uid_bytes, cpu, tscs, body, lead, cuts, tail):
    """The packets of one stream: events with TSCs `tscs` (body(i, j):
    the packed events i..j-1) with `lead` losses before them, `cuts`
    {index: n} holes inside, `tail` after them."""
    out = []
    if lead:
        out.append(_packet(uid_bytes, cpu, b'', 0, tscs[0], tscs[0]))
    discarded, start, n = lead, 0, len(tscs)
    for end in sorted({i for i in cuts if 0 < i < n} | {n}):    # each hole ends a packet
        while start < end:                        # and so does every EVENTS_PER_PACKET-th event
            stop = min(start + EVENTS_PER_PACKET, end)
            out.append(_packet(uid_bytes, cpu, body(start, stop), discarded,
                               tscs[start], tscs[stop - 1]))
            discarded += cuts.get(stop, 0)
            start = stop
    if tail:
        out.append(_packet(uid_bytes, cpu, b'', discarded + tail, tscs[-1], tscs[-1]))
    return out


def _cpu_events(c):
    """(TSCs, body(i, j), seqs for the hole search) of CPU c: from its
    packed records in C when it has them (seqs () when
    fastdecode.may_have_holes says it has none), else from its events."""
    packed = c.packed()
    if packed is None or not fastdecode.available():
        events = _cpu_records(c)
        return (list(map(_TSC, events)), lambda i, j: b''.join(
            starmap(EVENT.pack, map(_EVENT_FIELDS, events[i:j]))), [e.seq for e in events])
    data = fastdecode.ctf_events(packed)
    return (memoryview(packed).cast('Q')[::RECORD_QWORDS].tolist(),
            lambda i, j: data[i * EVENT.size:j * EVENT.size],
            seqs_of(packed) if fastdecode.may_have_holes(c) else ())


def _cpu_streams(uid_bytes, c):
    """{file name: [packets]} for CPU c (one name unless its TSC went back)."""
    tscs, body, seqs = _cpu_events(c)
    lost_before = unplaced(c, seqs)
    if not tscs:
        return {stream_name(c.cpu): [_packet(uid_bytes, c.cpu, b'', 0, 0, 0),
                                     _packet(uid_bytes, c.cpu, b'', lost_before, 0, 0)]
                if lost_before else []}
    cuts = {}
    for index, _, count in holes(c, seqs):
        cuts[index] = cuts.get(index, 0) + count
    streams = {}
    for k, (a, b) in enumerate(_segments(tscs)):
        lead = cuts.get(a, 0) + (lost_before if k == 0 else 0)
        inner = {i - a: n for i, n in cuts.items() if a < i < b}
        tail = cuts.get(len(tscs), 0) if b == len(tscs) else 0
        name = stream_name(c.cpu) + (f'_part{k}' if k else '')
        streams[name] = _stream_packets(uid_bytes, c.cpu, tscs[a:b],
                                        lambda i, j, a=a: body(a + i, a + j),
                                        lead, inner, tail)
    return streams


def group_name(cpus):
    return f'stream_cpus_{cpus[0]}-{cpus[-1]}' if len(cpus) > 1 else stream_name(cpus[0])


def _group_streams(uid_bytes, group):
    """{file name: [packets]} for CPUs `group` sharing one stream (module
    docstring); a CPU whose TSC goes back gets its own files instead."""
    streams, members = {}, []
    for c in group:
        tscs, body, seqs = _cpu_events(c)
        if len(_segments(tscs)) > 1:
            streams.update(_cpu_streams(uid_bytes, c))
            continue
        cuts = {}
        for index, _, count in holes(c, seqs):
            cuts[index] = cuts.get(index, 0) + count
        members.append((c.cpu, tscs, body, unplaced(c, seqs), cuts))
    if not members:
        return streams
    first = min((m[1][0] for m in members if m[1]), default=0)
    out, discarded = [], 0
    for cpu, tscs, _, lead, cuts in members:        # losses with no place: first
        lead += cuts.get(0, 0)
        if lead:
            out.append(_packet(uid_bytes, cpu, b'', discarded, first, first))
            discarded += lead
            out.append(_packet(uid_bytes, cpu, b'', discarded, first, first))
    runs = heapq.merge(*[zip(m[1], repeat(k), range(len(m[1]))) for k, m in enumerate(members)])
    run, last = None, first
    for t, k, i in runs:
        if run and (run[0] != k or i - run[1] == EVENTS_PER_PACKET or i in members[k][4]):
            discarded = _group_packet(out, uid_bytes, members, run, discarded)
            run = None
        run = run or [k, i, i]
        run[2], last = i + 1, t
    if run:
        discarded = _group_packet(out, uid_bytes, members, run, discarded)
    for cpu, tscs, _, _, cuts in members:          # holes after the last event
        tail = cuts.get(len(tscs), 0) if tscs else 0
        if tail:
            out.append(_packet(uid_bytes, cpu, b'', discarded + tail, last, last))
            discarded += tail
    streams[group_name([m[0] for m in members])] = out
    return streams


def _group_packet(out, uid_bytes, members, run, discarded):
    """One packet of CPU members[k]'s events i..j-1; returns the running
    discarded count after the hole (if any) that ends it."""
    k, i, j = run
    cpu, tscs, body, _, cuts = members[k]
    out.append(_packet(uid_bytes, cpu, body(i, j), discarded, tscs[i], tscs[j - 1]))
    hole = cuts.get(j, 0) if j < len(tscs) else 0
    if hole:                     # the step on a packet of this CPU, where it happened
        discarded += hole
        out.append(_packet(uid_bytes, cpu, b'', discarded, tscs[j - 1], tscs[j - 1]))
    return discarded


def _groups(cpus):
    """The CPUs in runs that share a stream file: one each up to
    STREAM_FILES_MAX CPUs, else as few files as that allows."""
    per = -(-len(cpus) // STREAM_FILES_MAX)
    return [cpus[i:i + per] for i in range(0, len(cpus), per)]


def write_ctf(tl, outdir):
    """Write the trace into existing directory `outdir`; returns the stream
    files written."""
    uid = trace_uuid(tl)
    with open(os.path.join(outdir, 'metadata'), 'w', encoding='utf-8') as f:
        f.write(metadata_text(tl, uid))
    written = []
    for group in _groups(list(tl.dump.cpus)):
        streams = (_cpu_streams(uid.bytes, group[0]) if len(group) == 1
                   else _group_streams(uid.bytes, group))
        for name, packets in streams.items():
            path = os.path.join(outdir, name)
            with open(path, 'wb') as f:
                f.write(b''.join(packets))
            written.append(path)
    return written
