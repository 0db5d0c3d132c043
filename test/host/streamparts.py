"""Stream parts (docs/streaming.md) made in Python for the host tests: each
part an ordinary v2 dump, its event lines encoded by a mirror of the
kernel's predictor (src/recorder/predict.c; dumpfmt.decode_event_line_py
reads them back), so a test can lose, damage or drop exactly the parts
and seqs it wants. The kernel's own parts (gen_dump's stream options and
a booted machine) are tested beside these.

    log = stream_log(cpus=2, parts=5, per_part=40)            # bytes
    log = stream_log(parts=5, drop_parts={2}, overwrite={3: 10})
"""

import base64
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts'))
from btlib.dump.dumpfmt import (EV_A0, EV_A1, EV_FLAGS, EV_TSC_MORE, EV_TSC_SHIFT, EV_TYPE,
                                PRED_SLOTS, dump_seed)

M = (1 << 64) - 1
NONCE = 0x00C0FFEE12345678
TSC_HZ = 1_000_000_000
TIMER_BEGIN, TIMER_END, IPI_SEND = 3, 4, 5
TABLE = [  # part 0's tables (the kernel's, cut to what these parts use)
    b'%K {n} 0=BOOT 1=SMP 2=IRQ 3=IPI',
    b'%P {n} 0=ENTRY 9=READY',
    b'%T {n} id=1 name=BOOT_PHASE cat=BOOT kind=instant pin=1 a0=phase a1=value desc=boot phase',
    b'%T {n} id=3 name=IRQ_TIMER_BEGIN cat=IRQ kind=begin pin=0 a0=tick a1=lateness_tsc '
    b'signed=a1 pair=4 desc=LAPIC timer interrupt entered',
    b'%T {n} id=4 name=IRQ_TIMER_END cat=IRQ kind=end pin=0 a0=tick a1=- pair=3 '
    b'desc=LAPIC timer interrupt left',
    b'%T {n} id=5 name=IPI_SEND cat=IPI kind=instant pin=0 a0=dest_cpu a1=vector '
    b'desc=inter-processor interrupt sent',
]


def _varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _zz(v):
    """A signed 64-bit residual, zigzag-coded."""
    v = v - (1 << 64) if v & (1 << 63) else v
    return (v << 1) ^ (v >> 63) if v < 0 else v << 1


def encode_line(line, cpu, events, seed, gap_over=0, gap_excl=0):
    """One %E line of events [(seq, tsc, type, flags, a0, a1)], consecutive seqs."""
    start, tsc0 = events[0][0], events[0][1]
    buf = bytearray(b''.join(map(_varint, (line, cpu, start, gap_over, gap_excl, tsc0))))
    slots, prev, prev_tsc, prev_a0 = [None] * PRED_SLOTS, -1, tsc0, 0
    for _, tsc, typ, flags, a0, a1 in events:
        s = slots[typ % PRED_SLOTS]
        if s is not None and s[0] != typ:
            s = None
        pd, pa0, pa1 = (s[1], (s[2] + s[3]) & M, (s[4] + s[5]) & M) if s else (0, prev_a0, 0)
        delta = (tsc - prev_tsc) & M
        zz = _zz((delta - pd) & M)
        hdr = EV_TYPE | (EV_FLAGS if flags else 0) | ((zz & 7) << EV_TSC_SHIFT)
        hdr |= (EV_TSC_MORE if zz >> 3 else 0) | (EV_A0 if a0 != pa0 else 0)
        hdr |= EV_A1 if a1 != pa1 else 0
        buf.append(hdr)
        buf += _varint(typ)
        if flags:
            buf.append(flags)
        if zz >> 3:
            buf += _varint(zz >> 3)
        if a0 != pa0:
            buf += _varint(_zz((a0 - pa0) & M))
        if a1 != pa1:
            buf += _varint(_zz((a1 - pa1) & M))
        if prev >= 0:
            ps = slots[prev % PRED_SLOTS]
            if ps is not None and ps[0] == prev:
                ps[6] = typ
        if s is not None:
            s[1], s[3], s[2], s[5], s[4] = delta, (a0 - s[2]) & M, a0, (a1 - s[4]) & M, a1
        else:
            slots[typ % PRED_SLOTS] = [typ, delta, a0, 0, a1, 0, -1]
        prev, prev_tsc, prev_a0 = typ, tsc, a0
    payload = bytes(buf)
    raw = payload + zlib.crc32(payload, seed).to_bytes(4, 'little')
    return b'%E' + base64.b64encode(raw).rstrip(b'=')


def _text(body, seed):
    return b'%s *%08X' % (body, zlib.crc32(body, seed))


def cpu_events(cpu, seqs, period=1_000_000):
    """The events of seqs: a timer tick (IRQ_TIMER_BEGIN/END) every
    `period` ticks, an IPI_SEND after each; tsc a function of the seq."""
    out = []
    for q in seqs:
        tick, k = divmod(q, 3)
        tsc = 10_000 + tick * period + k * 2_000 + cpu * 333
        if k == 0:
            out.append((q, tsc, TIMER_BEGIN, 0, tick, (q * 7 + cpu) % 900))
        elif k == 1:
            out.append((q, tsc, TIMER_END, 0, tick, 0))
        else:
            out.append((q, tsc, IPI_SEND, 0, (cpu + 1) % 4, 0xF0))
    return out


def part_text(stream, part, cpus, ranges, dump_no, final=False, overwritten=None,
              nonce=NONCE, per_line=16):
    """One part: ranges {cpu: (base, head)}; overwritten {cpu: n}: the first
    n seqs of the range were overwritten before they were streamed."""
    overwritten = overwritten or {}
    seed = dump_seed(nonce, dump_no)
    events = sum(h - b - overwritten.get(c, 0) for c, (b, h) in ranges.items())
    begin = (f'DUMP BEGIN v=2 dump={dump_no} nonce={nonce:016X} cpus={cpus} events={events} '
             f'stream={stream} part={part}' + (' final=1' if final else '')).encode()
    lines = [b'%s *%08X' % (begin, zlib.crc32(begin))]
    if part == 0:
        meta = [f'%M {{n}} tsc_hz={TSC_HZ} uptime_tsc=99 capacity=256 stream={stream} '
                f'part=0 timer_hz=500'.encode()] + TABLE
    else:
        meta = [f'%M {{n}} tsc_hz={TSC_HZ} uptime_tsc=99 capacity=256 stream={stream} '
                f'part={part}'.encode()]
    for m in meta:
        lines.append(_text(m.replace(b'{n}', str(len(lines)).encode()), seed))
    for cpu in range(cpus):
        base, head = ranges[cpu]
        over = overwritten.get(cpu, 0)
        evs = cpu_events(cpu, range(base + over, head))
        first_line = True
        for k in range(0, len(evs), per_line):
            lines.append(encode_line(len(lines), cpu, evs[k:k + per_line], seed,
                                     gap_over=over if first_line else 0))
            first_line = False
        first = f' first={base + over} last={head - 1}' if evs else ''
        lines.append(_text(f'%C {len(lines)} cpu={cpu} apic={cpu * 2} cap=256 base={base} '
                           f'head={head} recorded={head - base} overwritten={over} excluded=0 '
                           f'refused=0 sent={len(evs)}{first} pinned=0'.encode(), seed))
    end = f'DUMP END dump={dump_no} nonce={nonce:016X} events={events} ' \
          f'lines={len(lines) + 1}'.encode()
    lines.append(_text(end, seed))
    return b'\n'.join(lines) + b'\n'


def stream_log(cpus=2, parts=4, per_part=30, stream=1, drop_parts=(), overwrite=None,
               final=True, first_dump=1, nonce=NONCE, order=None, noise=1):
    """A log of one stream's parts: per part and CPU per_part seqs; parts
    in drop_parts never arrive; overwrite {part: n}: every CPU's first n
    seqs of that part overwritten; order: the parts' order in the log;
    noise: console lines before each part."""
    overwrite = overwrite or {}
    texts = {}
    for k in range(parts):
        ranges = {c: (k * per_part, (k + 1) * per_part) for c in range(cpus)}
        n = overwrite.get(k, 0)
        texts[k] = part_text(stream, k, cpus, ranges, first_dump + k,
                             final=final and k == parts - 1,
                             overwritten={c: n for c in range(cpus)} if n else None,
                             nonce=nonce)
    keep = [k for k in (order or range(parts)) if k not in drop_parts]
    chatter = b''.join(b'console noise: a kernel line of %d between two parts\n' % i
                       for i in range(noise))
    return b'READY boot\n' + b''.join(chatter + texts[k] for k in keep)
