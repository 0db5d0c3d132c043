"""The stream's figures in `make bench` (issue 35, item 5): what a captured
stream (docs/streaming.md) says about the rate it carried, what it lost,
and its bytes on the wire; and the trace point's cost with a stream
running against without. Arithmetic and the table only: the boots are
btlib.qemu.streamrun's.

A stream is a series of parts, each an ordinary dump whose DUMP BEGIN
says `stream=S part=K [final=1]`. Per part and CPU, `%C` gives recorded
(head - base), sent, overwritten (the ring lapped the consumer) and
excluded; the parts tile each CPU's seqs. Part 0 reaches back to the
ring's base (events from before the stream started, counted as
overwritten), so the rates are read from part 1 on: the window is part
0's `uptime_tsc` to the last part's, and every event recorded in it was
either streamed or is counted as lost here. A part number the log lacks
is a part that never arrived: the step is then not lossless, whatever the
counters of the others say.

Bytes on the wire: the UDP payload of every `D`, `W` and `X` datagram of
the stream's parts (resends included: WireCount, fed by the receiver's
loop), over the events streamed, and the same with each datagram's
Ethernet, IPv4 and UDP framing (bench's NET_FRAME_BYTES accounting).
"""

from __future__ import annotations

import re

# Ethernet preamble 8, header 14, IPv4 20, UDP 8, FCS 4, inter-frame gap 12:
# what each datagram costs the link besides its payload (scripts/bench's
# network rows count a frame the same way).
FRAME_OVERHEAD = 8 + 14 + 20 + 8 + 4 + 12
# The trace point with a stream running may cost this much more than
# without (same boot, same loop, ratios to bare RDTSC): TCG's noise.
TARGET_COST_X = 1.1
MISSING = ('overwritten', 'excluded', 'damaged', 'unexplained')
ID_KINDS = (b'D', b'W', b'X')            # datagrams that name a dump (a part) by id
# `s`'s line (not the stream's other `stream:` lines), whole
STREAM_LINE = re.compile(rb'^stream: ([a-z]+), stream (\d+) part (\d+)([^\r\n]*)\r?\n', re.M)
COUNTER = re.compile(r'(\d+) ([a-z][a-z ]*[a-z])')


class WireCount:
    """Bytes and datagrams per dump id as they came off the socket
    (docs/network-protocol.md: `BT1 D <mac> <id> ...`, `BT1 W <mac> <id>
    ...`, `BT1 X <mac> <id> ...`), before any check: what the link carried."""

    def __init__(self):
        self.bytes, self.datagrams = {}, {}
        self.other_bytes = 0

    def feed(self, data: bytes) -> None:
        words = data.split(b'\n', 1)[0].split(b' ', 4)
        if len(words) >= 4 and words[0] == b'BT1' and words[1] in ID_KINDS:
            key = words[3].decode('ascii', 'replace')
            self.bytes[key] = self.bytes.get(key, 0) + len(data)
            self.datagrams[key] = self.datagrams.get(key, 0) + 1
        else:
            self.other_bytes += len(data)

    def of(self, ids) -> tuple[int, int]:
        """(payload bytes, datagrams) of these dump ids."""
        ids = list(ids)
        return (sum(self.bytes.get(i, 0) for i in ids),
                sum(self.datagrams.get(i, 0) for i in ids))


def _int(header: dict, key: str) -> int | None:
    try:
        return int(header[key])
    except (KeyError, ValueError):
        return None


def part_of(dump) -> dict | None:
    """What the figures need of one parsed dump (btlib.dump.model.Dump) if
    it is a stream's part, else None: small, so a long stream's parts can
    be kept while the dumps themselves are not."""
    h = dump.header
    stream, part = _int(h, 'stream'), _int(h, 'part')
    if stream is None or part is None:
        return None
    cpus = {}
    for c in dump.cpus:
        cpus[c.cpu] = {'recorded': c.recorded, 'sent': c.sent if c.sent is not None else c.count,
                       **{k: getattr(c, k) for k in MISSING}}
    return {'nonce': h.get('nonce', ''), 'stream': stream, 'part': part,
            'id': f'{h.get("nonce", "")}.{h.get("dump", "")}', 'final': h.get('final') == '1',
            'complete': dump.complete, 'uptime_tsc': _int(h, 'uptime_tsc'),
            'tsc_hz': dump.tsc_hz, 'cpus': cpus}


def streams(parts) -> dict:
    """{(nonce, stream): [part, ...] sorted by part number} of part_of()s
    (None entries skipped; a part that came twice counted once)."""
    out = {}
    for p in parts:
        if p is not None:
            out.setdefault((p['nonce'], p['stream']), {}).setdefault(p['part'], p)
    return {k: [v[n] for n in sorted(v)] for k, v in out.items()}


def _sum_cpus(parts) -> dict:
    """{cpu: {counter: sum over parts}}."""
    out = {}
    for p in parts:
        for cpu, counts in p['cpus'].items():
            acc = out.setdefault(cpu, dict.fromkeys(counts, 0))
            for k, v in counts.items():
                acc[k] = acc.get(k, 0) + (v or 0)
    return out


def figures(parts, wire: WireCount | None = None) -> dict:
    """One stream's figures (its parts sorted, as streams() gives them):
    the window from part 0 to the last part, per CPU and in total the
    events recorded (offered), streamed and lost in it, parts missing,
    and bytes per event on the wire over the whole stream."""
    if not parts:
        return {'error': 'no part of the stream arrived'}
    numbers = [p['part'] for p in parts]
    last = parts[-1]
    missing_parts = last['part'] + 1 - len(numbers)
    out = {'parts': len(parts), 'parts_missing': missing_parts,
           'final': last['final'], 'incomplete_parts': sum(not p['complete'] for p in parts),
           'cpus': len(parts[0]['cpus'])}
    whole = _sum_cpus(parts)
    out['events_streamed_all_parts'] = sum(c['sent'] for c in whole.values())
    if wire is not None:
        nbytes, grams = wire.of(p['id'] for p in parts)
        sent = out['events_streamed_all_parts']
        out.update(wire_bytes=nbytes, wire_datagrams=grams,
                   bytes_per_event=nbytes / sent if sent else None,
                   frame_bytes_per_event=(nbytes + grams * FRAME_OVERHEAD) / sent
                   if sent else None)
    first, tail = parts[0], [p for p in parts if p['part'] > 0]
    hz = last['tsc_hz'] or first['tsc_hz']
    clock = hz and None not in (first['uptime_tsc'], last['uptime_tsc'])
    why = ('part 0 missing' if first['part'] != 0 else 'only part 0 arrived' if not tail else
           None if clock else 'no tsc_hz or uptime_tsc')
    if why:
        out['error'] = f'no window to measure: {why}'
        return out
    secs = (last['uptime_tsc'] - first['uptime_tsc']) / hz
    if secs <= 0:
        out['error'] = 'the parts\' uptime_tsc does not grow'
        return out
    per_cpu = _sum_cpus(tail)
    rows = {}
    for cpu, c in sorted(per_cpu.items()):
        lost = sum(c[k] for k in MISSING)
        rows[cpu] = {'offered_per_s': c['recorded'] / secs, 'streamed_per_s': c['sent'] / secs,
                     'recorded': c['recorded'], 'streamed': c['sent'],
                     'overwritten': c['overwritten'], 'lost': lost}
    tot = {k: sum(r[k] for r in rows.values())
           for k in ('recorded', 'streamed', 'overwritten', 'lost')}
    out.update(window_s=secs, per_cpu=rows, **tot,
               offered_per_s=tot['recorded'] / secs, streamed_per_s=tot['streamed'] / secs,
               lossless=tot['lost'] == 0 and missing_parts == 0 and not out['incomplete_parts'])
    return out


def sustained(steps) -> dict:
    """Over a NIC's steps (each a dict with `figures`): the highest
    streamed rate of a lossless step, and the highest streamed at all
    (the ceiling, normally the flat-out step's)."""
    ok = [s for s in steps if 'streamed_per_s' in s.get('figures', {})]
    clean = [s for s in ok if s['figures']['lossless']]
    best = max(clean, key=lambda s: s['figures']['streamed_per_s'], default=None)
    top = max(ok, key=lambda s: s['figures']['streamed_per_s'], default=None)
    out = {}
    if best:
        f = best['figures']
        out['lossless'] = {'step': best['step'], 'events_per_s': f['streamed_per_s'],
                           'per_cpu': f['streamed_per_s'] / max(f['cpus'], 1)}
    if top:
        f = top['figures']
        out['ceiling'] = {'step': top['step'], 'events_per_s': f['streamed_per_s'],
                          'per_cpu': f['streamed_per_s'] / max(f['cpus'], 1),
                          'lost': f['lost']}
    return out


def stream_counters(text: bytes) -> dict:
    """The last `stream:` counters line of the console (key `s`: `stream:
    off, stream 1 part 9, 1234 events streamed, 0 overwritten before they
    were streamed, ...`): the line, its state, stream and part, and each
    `<number> <words>` as {words: number}; {} without one."""
    m = None
    for m in STREAM_LINE.finditer(text):
        pass
    if m is None:
        return {}
    out = {'line': m.group(0).decode('ascii', 'replace').strip(),
           'state': m.group(1).decode(), 'stream': int(m.group(2)), 'part': int(m.group(3))}
    out.update((words, int(n)) for n, words in COUNTER.findall(m.group(4).decode('ascii',
                                                                                 'replace')))
    return out


def trace_cost(without: dict, with_stream: dict) -> dict:
    """The kernel bench's trace_on against bare RDTSC without a stream and
    with one (btlib.report.benchlines tables of one boot), per scope: each
    x_rdtsc and their ratio, against TARGET_COST_X."""
    def x(table):
        rows = {(r['variant'], int(r['scope'])): float(r['ticks']) for r in table['rows']}
        return {s: rows[('trace_on', s)] / rows[('rdtsc', s)]
                for (v, s) in rows if v == 'trace_on' and rows.get(('rdtsc', s))}
    a, b = x(without), x(with_stream)
    out = {}
    for scope in sorted(set(a) & set(b)):
        r = b[scope] / a[scope]
        out[scope] = {'without_x_rdtsc': a[scope], 'with_x_rdtsc': b[scope], 'ratio': r,
                      'target': f'<= {TARGET_COST_X}', 'met': r <= TARGET_COST_X}
    return out


def host_cost(table: dict | None) -> dict:
    """hostbench's trace point on one thread alone and with a stream's
    consumer reading its ring on another CPU (variants trace_on_alone and
    trace_streamed, rounds alternating): their ratio against TARGET_COST_X;
    {} when the table has no such rows (one CPU)."""
    rows = {r['variant']: r for r in (table or {}).get('rows', []) if r.get('scope') == '1'}
    alone, streamed = rows.get('trace_on_alone'), rows.get('trace_streamed')
    if not alone or not streamed or not float(alone['ticks']):
        return {}
    r = float(streamed['ticks']) / float(alone['ticks'])
    return {'alone_ticks': float(alone['ticks']), 'streamed_ticks': float(streamed['ticks']),
            'read': int(streamed.get('read', 0)), 'ratio': r, 'target': f'<= {TARGET_COST_X}',
            'met': r <= TARGET_COST_X}


def _rate(v) -> str:
    return f'{v / 1e3:,.1f} k/s'


def print_stream(doc: dict, out=print) -> None:
    """The stream's rows under bench's table (doc: streamrun.run()'s)."""
    if not doc:
        return
    out(f'stream (trace.stream=net, QEMU TCG, {doc.get("cpus")} CPUs, '
        f'{doc.get("events")} events per ring, {doc.get("seconds")} s per step; '
        f'rates from part 1 on):')
    for nic, run in doc.get('nics', {}).items():
        for s in run.get('steps', []):
            f = s.get('figures', {})
            if 'streamed_per_s' not in f:
                out(f'  {nic:<7}{s["step"]:<18}{s.get("error") or f.get("error", "?")}')
                continue
            per = f['streamed_per_s'] / max(f['cpus'], 1)
            loss = 'lossless' if f['lossless'] else (
                f'LOST {f["lost"]} ({f["overwritten"]} overwritten before streamed'
                + (f', {f["parts_missing"]} parts missing' if f['parts_missing'] else '') + ')')
            wire = (f'; {f["bytes_per_event"]:.2f} B/event payload, '
                    f'{f["frame_bytes_per_event"]:.2f} framed'
                    if f.get('bytes_per_event') else '')
            out(f'  {nic:<7}{s["step"]:<18}offered {_rate(f["offered_per_s"]):>11}, streamed '
                f'{_rate(f["streamed_per_s"]):>11} ({_rate(per)} per CPU) over '
                f'{f["window_s"]:.1f} s, {f["parts"]} parts: {loss}{wire}')
        best = run.get('sustained', {})
        if 'lossless' in best or 'ceiling' in best:
            lo, top = best.get('lossless'), best.get('ceiling')
            out(f'  {nic:<7}sustained lossless: '
                + (f'{_rate(lo["events_per_s"])} ({_rate(lo["per_cpu"])} per CPU, {lo["step"]})'
                   if lo else 'no lossless step')
                + (f'; ceiling {_rate(top["events_per_s"])} ({_rate(top["per_cpu"])} per CPU, '
                   f'{top["step"]})' if top else ''))
        if run.get('error'):
            out(f'  {nic:<7}{run["error"]}')
    cost = doc.get('trace_cost') or {}
    if cost.get('error'):
        out(f'  trace point with a stream on (kernel): {cost["error"]}')
    n = cost.get('parts_during', 0)
    idle = (f'; the consumer took {n} part{"" if n == 1 else "s"} during the run: the loops hold '
            f'every CPU with interrupts off')
    for scope, c in sorted((cost.get('scopes') or {}).items()):
        out(f'  trace point, kernel, {scope} CPU{"s" if int(scope) > 1 else ""}: '
            f'{c["without_x_rdtsc"]:.2f}x RDTSC without a stream, {c["with_x_rdtsc"]:.2f}x with '
            f'one on: {c["ratio"]:.2f}x (must stay within today\'s figure, {c["target"]}: '
            f'{"met" if c["met"] else "NOT met"}{idle})')
    h = doc.get('host_cost')
    if h:
        out(f'  trace point, host, 1 thread: {h["alone_ticks"]:.2f} ticks alone, '
            f'{h["streamed_ticks"]:.2f} with a consumer taking parts on another CPU '
            f'({h["read"]} events read): {h["ratio"]:.2f}x (must stay within today\'s figure, '
            f'{h["target"]}: {"met" if h["met"] else "NOT met"})')
