"""CTF 1.8 export: a trace directory babeltrace2 and Trace Compass read.

The directory holds `metadata` (TSDL text) and one binary stream file per
CPU, `stream_NN`, up to MAX_STREAMS CPUs; above, runs of consecutive CPUs
share a file, `stream_NN-MM`, SHARED_FILES files in all: babeltrace2 keeps
every stream file open (1024 of them fail under the common `ulimit -n
1024`) and reads many streams slowly.  A file of one CPU is of stream class 0: each packet
holds that CPU's events (cpu_id in its context, as LTTng's per-CPU
packets). A file that CPUs share is of stream class 1 (SHARED_ID): its
events, in time order as a stream's must be, carry their cpu_id in the
event context, so its packets are as big as one CPU's (per-CPU packets
there would end wherever another CPU of the file has an earlier event:
2.7 events a packet at 1024 CPUs).  Everything is little-endian and
byte-aligned:

  packet header   u32 magic 0xC1FC1FC1, u8 uuid[16], u32 stream_id (= 0)
  packet context  tsc timestamp_begin, tsc timestamp_end, u64 packet_size,
                  u64 content_size (both in bits, equal: no padding),
                  u64 events_discarded, u32 cpu_id
  event header    tsc timestamp, u16 id
  event context   u32 seq, u8 flags
  (class 1: packet context without cpu_id; event context u32 cpu_id,
  u32 seq, u8 flags)
  event fields    two 64-bit integers, named from the dump's event table
                  (a0/a1 where it leaves an argument unnamed): int64_t for
                  the arguments the table declares signed, else uint64_t

`tsc` is a u64 mapped onto `clock tsc { freq = <tsc_hz>; }`, so readers
print real times, and `babeltrace2 --clock-cycles` prints the raw TSC.

Losses: events_discarded is the running count of events the stream file's
CPUs lost, as CTF defines it, raised in a packet of the CPU that lost
them.  Losses with no place in the sequence (overwritten before the
oldest survivor, refused while paused) come with the CPU's first packet
(after an empty packet with count 0 when that is the file's first, so
readers see the step); a hole in the sequence numbers ends a packet so
its loss shows up where it happened; a hole after the last event gets an
empty closing packet.  babeltrace2 warns about each.

A CPU whose TSC goes backwards (reset, broken hardware) is cut into its
monotonic stretches, merged in time order into its stream file, since a
CTF stream's clock may never go back.
"""

import bisect
import hashlib
import heapq
import os
import struct
import uuid as uuidlib
from collections import namedtuple
from itertools import repeat, starmap
from operator import attrgetter, lt

from . import cwriters
from ..native import choice
from ..timeline import merge
from ..timeline.losses import holes, unplaced
from ..dump.model import RECORD, seqs_of, signed_args
from ..timeline.timeline import PHASE_ARG, identifier

CTF_MAGIC = 0xC1FC1FC1
STREAM_ID = 0
SHARED_ID = 1            # the stream class of files several CPUs share
EVENTS_PER_PACKET = 4096
MAX_STREAMS = 256        # stream files: babeltrace2 keeps each open (ulimit -n 1024)
# Above MAX_STREAMS CPUs, the files they share (babeltrace2 reads many
# streams slowly: 256 took it 5x the time of 16 on the same events).
SHARED_FILES = 16
HEADER = struct.Struct('<I16sI')
CONTEXT = struct.Struct('<QQQQQI')
EVENT = struct.Struct('<QHIBQQ')
PACKET_OVERHEAD = HEADER.size + CONTEXT.size
SHARED_CONTEXT = struct.Struct('<QQQQQ')
SHARED_EVENT_SIZE = EVENT.size + 4          # u32 cpu_id after the event header
SHARED_OVERHEAD = HEADER.size + SHARED_CONTEXT.size
TSDL_KEYWORDS = {
    'align', 'callsite', 'const', 'char', 'clock', 'double', 'enum', 'env',
    'event', 'floating_point', 'float', 'integer', 'int', 'long', 'short',
    'signed', 'stream', 'string', 'struct', 'trace', 'typealias', 'typedef',
    'unsigned', 'variant', 'void', '_Bool', '_Complex', '_Imaginary',
}


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

_CLOCK = """
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
"""


def _stream_decl(stream):
    """A stream class: the per-CPU one (cpu_id in the packet context) or
    the shared one (SHARED_ID: cpu_id in the event context)."""
    cpu = '\t\tuint32_t cpu_id;\n'
    return f"""
stream {{
	id = {stream};
	packet.context := struct {{
		tsc_t timestamp_begin;
		tsc_t timestamp_end;
		uint64_t packet_size;
		uint64_t content_size;
		uint64_t events_discarded;
{'' if stream == SHARED_ID else cpu}\t}};
	event.header := struct {{
		tsc_t timestamp;
		uint16_t id;
	}};
	event.context := struct {{
{cpu if stream == SHARED_ID else ''}\t\tuint32_t seq;
		uint8_t flags;
	}};
}};
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


def _event_decl(tl, type_id, stream=STREAM_ID):
    t = tl.dump.types.get(type_id)
    args = (tuple(t.args)[:2] if t is not None else ()) + ('', '')
    lines = ['', 'event {',
             f'\tname = {_quote(tl.name(type_id))};',
             f'\tid = {type_id};',
             f'\tstream_id = {stream};',
             '\tfields := struct {']
    signed = signed_args(t)
    for i, (arg, field) in enumerate(zip(args, _field_names(t))):
        ftype = PHASE_TYPE if arg == PHASE_ARG and tl.dump.phases else \
            'int64_t' if i in signed else 'uint64_t'
        lines.append(f'\t\t{ftype} {field};')
    return lines + ['\t};', '};']


def metadata_text(tl, uid, shared=False):
    """The TSDL metadata for timeline `tl`, trace and clock UUID `uid`;
    with stream class 1 when some file is shared."""
    dump = tl.dump
    lines = [_PREAMBLE % {'uuid': uid}]
    lines += _env(dump)
    lines.append(_CLOCK % {'uuid': uid, 'freq': tl.hz} + _stream_decl(STREAM_ID))
    if shared:
        lines.append(_stream_decl(SHARED_ID))
    lines += _phase_enum(dump)
    for stream in (STREAM_ID, SHARED_ID) if shared else (STREAM_ID,):
        for type_id in sorted(set(dump.types) | set(tl.unknown_types)):
            lines += _event_decl(tl, type_id, stream)
    return '\n'.join(lines) + '\n'


# A record as a tuple (built in C, unlike Event objects), for the streams.
_Record = namedtuple('_Record', 'tsc seq type cpu flags a0 a1')
_EVENT_FIELDS = attrgetter('tsc', 'type', 'seq', 'flags', 'a0', 'a1')
_TSC = attrgetter('tsc')
# A monotonic stretch of one CPU's events, first..end-1 of its TSCs and
# its packed records (records) or packed events (data: without records),
# with its losses: before its first event (lead), {i: n} before event i
# of the CPU (cuts; marks: its keys sorted), after its last event (tail).
_Segment = namedtuple('_Segment', 'cpu tscs records data first end lead cuts marks tail')
RECORD_QWORDS = RECORD.size // 8      # a record's tsc is its first u64


def _cpu_records(c):
    """CPU c's events as _Records when it has packed records (see
    CpuInfo.packed), else its Event objects: both read alike here."""
    packed = c.packed()
    if packed is None:
        return c.events
    return list(map(tuple.__new__, repeat(_Record), RECORD.iter_unpack(packed)))


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


def _cpu_events(c):
    """(TSCs, packed records or None, packed events (EVENT each) or None,
    seqs for the hole search) of CPU c: its records when it has them and
    the compiled core is there (its events are packed in C when needed;
    seqs () when merge.may_have_holes says it has none), else its
    events packed here."""
    packed = c.packed()
    if packed is None or not choice.compiled():
        events = _cpu_records(c)
        return (list(map(_TSC, events)), None,
                memoryview(b''.join(starmap(EVENT.pack, map(_EVENT_FIELDS, events)))),
                [e.seq for e in events])
    return (memoryview(packed).cast('Q')[::RECORD_QWORDS].tolist(), packed, None,
            seqs_of(packed) if merge.may_have_holes(c) else ())


def _cpu_segments(c):
    """CPU c's monotonic stretches as _Segments, and the count of its losses
    when it has no event to hang them on (else 0)."""
    tscs, records, data, seqs = _cpu_events(c)
    lost_before = unplaced(c, seqs)
    if not tscs:
        return [], lost_before
    cuts = {}
    for index, _, count in holes(c, seqs):
        cuts[index] = cuts.get(index, 0) + count
    marks = sorted(cuts)
    return [_Segment(c.cpu, tscs, records, data, a, b,
                     cuts.get(a, 0) + (lost_before if k == 0 else 0), cuts, marks,
                     cuts.get(b, 0) if b == len(tscs) else 0)
            for k, (a, b) in enumerate(_segments(tscs))], 0


def _packed_events(segments):
    """Each segment's packed events (a CPU's segments share them)."""
    made = {}
    for s in segments:
        if s.data is None and id(s.records) not in made:
            made[id(s.records)] = memoryview(cwriters.ctf_events(s.records))
    return [s.data if s.data is not None else made[id(s.records)] for s in segments]


def _stream_packets(uid_bytes, empties, segments, carry=None):
    """The packets of one stream file, as a list of byte strings: `empties`
    [(cpu, lost)] of CPUs with losses and no events first, then the
    segments' events in TSC order, in runs of one segment's consecutive
    events (each run takes every event up to the next head of another
    segment). A packet holds one CPU's events (its cpu_id) and ends at a
    run's end, a hole, or EVENTS_PER_PACKET events; events_discarded is
    the stream's running count, raised in the packet of the CPU that lost
    them, where it lost them (a first packet with a loss follows an empty
    one with 0, so readers see the step). carry: a stream's window goes on
    from the file's packets so far ({'discarded': n, 'started': bool},
    updated)."""
    head, context, size = HEADER.pack(CTF_MAGIC, uid_bytes, STREAM_ID), CONTEXT.pack, EVENT.size
    carry = carry if carry is not None else {'discarded': 0, 'started': False}
    out, discarded, started = [], carry['discarded'], carry['started']
    out = _Carried(out, carry, started)

    def empty(cpu, count, tsc):
        bits = PACKET_OVERHEAD * 8
        out.extend((head, context(tsc, tsc, bits, bits, count, cpu)))

    for cpu, lost in empties:
        if not out:
            empty(cpu, 0, 0)
        discarded += lost
        empty(cpu, discarded, 0)
    if len(segments) > 1 and all(s.records is not None for s in segments):
        data, carry['discarded'] = cwriters.ctf_stream(   # the same bytes, in C: many short runs
            head, discarded, len(out) // 2 + started,
            [(s.records, s.first, s.end, s.cuts, s.lead, s.tail, s.cpu) for s in segments])
        out.append(data)
        return out.done(None)
    datas = _packed_events(segments)
    heap = [(s.tscs[s.first], k, s.first) for k, s in enumerate(segments)]
    heapq.heapify(heap)
    while heap:
        _, k, i = heapq.heappop(heap)
        cpu, tscs, _, _, first, end, lead, cuts, marks, tail = segments[k]
        data = datas[k]
        j = bisect.bisect_right(tscs, heap[0][0], i + 1, end) if heap else end
        if j < end:
            heapq.heappush(heap, (tscs[j], k, j))
        lost = lead if i == first else cuts.get(i, 0)
        stops = marks[bisect.bisect_right(marks, i):bisect.bisect_left(marks, j)] if marks else []
        for stop_at in stops + [j]:               # each hole ends a packet
            while i < stop_at:                    # and so does every EVENTS_PER_PACKET-th event
                if lost:
                    if not out:
                        empty(cpu, 0, tscs[i])
                    discarded += lost
                stop = min(i + EVENTS_PER_PACKET, stop_at)
                bits = (PACKET_OVERHEAD + (stop - i) * size) * 8
                out.extend((head, context(tscs[i], tscs[stop - 1], bits, bits, discarded, cpu),
                            data[i * size:stop * size]))
                i = stop
                lost = cuts.get(i, 0)
        if j == end and tail:
            discarded += tail
            empty(cpu, discarded, tscs[end - 1])
    return out.done(discarded)


class _Carried(list):
    """A stream file's packets, made in one window of a stream: empty
    (`not out`) only while the file has no packet at all."""

    def __init__(self, items, carry, started):
        super().__init__(items)
        self.carry, self.started = carry, started

    def __bool__(self):
        return self.started or len(self) > 0

    def done(self, discarded):
        if discarded is not None:
            self.carry['discarded'] = discarded
        self.carry['started'] = bool(self)
        return list(self)


def _runs(segments):
    """(segment index, i, j): the segments' events in TSC order, as runs of
    one segment's events i..j-1 (each up to the next head of another;
    ties: the segment given first), as _stream_packets takes them."""
    heap = [(s.tscs[s.first], k, s.first) for k, s in enumerate(segments)]
    heapq.heapify(heap)
    while heap:
        _, k, i = heapq.heappop(heap)
        tscs, end = segments[k].tscs, segments[k].end
        j = bisect.bisect_right(tscs, heap[0][0], i + 1, end) if heap else end
        if j < end:
            heapq.heappush(heap, (tscs[j], k, j))
        yield k, i, j


def _shared_packets(uid_bytes, empties, segments, carry=None):
    """The packets of a file several CPUs share (stream class 1), as a list
    of byte strings: every segment's events in TSC order (_runs), their
    cpu_id in the event context, in packets of EVENTS_PER_PACKET events.
    events_discarded is the file's running count at each packet's end: a
    CPU's losses before one of its events count in the packet of that
    event (those of CPUs without events in the first), the ones after its
    last event in an empty packet closing the file; a file with losses
    starts with an empty packet with 0, so readers see every step."""
    head, size = HEADER.pack(CTF_MAGIC, uid_bytes, SHARED_ID), EVENT.size
    carry = carry if carry is not None else {'discarded': 0, 'started': False}
    out, cur, state = [], [], {'discarded': carry['discarded'], 't0': 0, 't1': 0}
    out = _Carried(out, carry, carry['started'])

    def put(count, t0, t1, events):
        bits = (SHARED_OVERHEAD + len(events) * SHARED_EVENT_SIZE) * 8
        out.extend((head, SHARED_CONTEXT.pack(t0, t1, bits, bits, count), *events))

    def close():
        if cur:
            put(state['discarded'], state['t0'], state['t1'], cur)
            cur.clear()

    if not out and (empties or any(s.lead or s.cuts or s.tail for s in segments)):
        put(0, 0, 0, ())
    state['discarded'] += sum(lost for _, lost in empties)
    if len(segments) > 1 and all(s.records is not None for s in segments):
        data, carry['discarded'] = cwriters.ctf_stream(   # the same bytes, in C
            head, state['discarded'], len(out) // 2,
            [(s.records, s.first, s.end, s.cuts, s.lead, s.tail, s.cpu) for s in segments],
            shared=True)
        out.append(data)
        return out.done(None)
    datas, pending = _packed_events(segments), 0
    for k, i, j in _runs(segments):
        s, data = segments[k], datas[k]
        cpu = struct.pack('<I', s.cpu)
        for x in range(i, j):
            if len(cur) == EVENTS_PER_PACKET:
                close()
            state['discarded'] += s.lead if x == s.first else s.cuts.get(x, 0)
            if not cur:
                state['t0'] = s.tscs[x]
            state['t1'] = s.tscs[x]
            cur.append(data[x * size:x * size + 10].tobytes() + cpu
                       + data[x * size + 10:(x + 1) * size].tobytes())
        if j == s.end:
            pending += s.tail
    close()
    if pending or (state['discarded'] and not segments):
        state['discarded'] += pending
        put(state['discarded'], state['t1'], state['t1'], ())
    return out.done(state['discarded'])


def _blocks(cpus):
    """The CPUs in runs of consecutive CPUs, one stream file each: one CPU
    per file up to MAX_STREAMS CPUs; above, SHARED_FILES runs whose sizes
    differ by one at most."""
    count = len(cpus) if len(cpus) <= MAX_STREAMS else SHARED_FILES
    size, bigger = divmod(len(cpus), count) if count else (0, 0)
    blocks, start = [], 0
    for k in range(count):
        stop = start + size + (k < bigger)
        blocks.append(cpus[start:stop])
        start = stop
    return blocks


def stream_name(block):
    """stream_NN for one CPU, stream_NN-MM for CPUs NN to MM."""
    first, last = block[0].cpu, block[-1].cpu
    return f'stream_{first:02d}' if len(block) == 1 else f'stream_{first:02d}-{last:02d}'


def write_ctf(tl, outdir, carry=None):
    """Write the trace into existing directory `outdir`; returns the stream
    files written. carry: a stream's windows, written one after another
    into the same files ({} before the first: it keeps the trace's uuid,
    the first window's files and where each stopped)."""
    first = carry is None or 'uid' not in carry
    if first:
        uid, blocks = trace_uuid(tl), _blocks(list(tl.dump.cpus))
        files = [(stream_name(b), [c.cpu for c in b]) for b in blocks]
        shared = any(len(b) > 1 for b in blocks)
        with open(os.path.join(outdir, 'metadata'), 'w', encoding='utf-8') as f:
            f.write(metadata_text(tl, uid, shared))
        if carry is not None:
            carry.update(uid=uid, files=files, state={})
    else:
        uid, files = carry['uid'], carry['files']
    mine = {c.cpu: c for c in tl.dump.cpus}
    stray = set(mine) - {n for _, numbers in files for n in numbers}
    if stray:
        raise ValueError(f'CPUs {sorted(stray)} first appear after the stream\'s first window: '
                         f'not in its CTF files')
    written = []
    for name, numbers in files:
        segments, empties = [], []
        for c in (mine[n] for n in numbers if n in mine):
            found, lost = _cpu_segments(c)
            segments += found
            if lost:
                empties.append((c.cpu, lost))
        path = os.path.join(outdir, name)
        packets = _shared_packets if len(numbers) > 1 else _stream_packets
        state = None if carry is None else carry['state'].setdefault(
            name, {'discarded': 0, 'started': False})
        with open(path, 'ab' if state is not None and state['started'] else 'wb') as f:
            f.write(b''.join(packets(uid.bytes, empties, segments, state)))
        written.append(path)
    return written
