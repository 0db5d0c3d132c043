"""capture --net: receive baretrace machines' console lines and dumps over UDP.

The protocol is docs/host-tools.md's "The network protocol" (the kernel's
side: src/net/netproto.h, src/recorder/dumpnet.c). Each machine is known
by the MAC in its datagrams and gets its own log, named after it
(525400123456.log), holding the same text a serial capture would: console
text as it arrives, and each dump's lines in order, written once the dump
is whole (or once the machine stopped waiting for it), so scripts/decode
and scripts/report read it unchanged.

Missing dump lines are asked for again ("BT1 R") each time the machine
says it is waiting ("BT1 W"); a whole dump is confirmed ("BT1 A").
Replies go to the address the machine's datagrams came from.
"""

import os
import re
import time

PROTO = b'BT1'
DEFAULT_PORT = 6666
RANGES_PER_REQUEST = 64          # src/net/netproto.h: NETPROTO_RANGES_MAX
REQUESTS_PER_WAIT = 16           # R datagrams answering one W (the rest: next W)
REQUEST_MAX_BYTES = 1400
MAC_RE = re.compile(rb'\A[0-9a-f]{12}\Z')
DUMP_ID_RE = re.compile(rb'\A([0-9A-F]{16})\.(\d{1,10})\Z')
SESSION_RE = re.compile(rb'net: session code ([A-Z2-9]{6})\b')
READY_RE = re.compile(rb'(?:^|\n)READY ')
KEYS_MAX = 64                    # src/net/netproto.h: NETPROTO_KEYS_MAX


class Dump:
    """One dump of one machine, as its lines arrive."""

    def __init__(self, dump_id, now):
        self.id = dump_id                  # (nonce text, dump number)
        self.lines = {}                    # line number -> bytes (with its \n)
        self.total = None                  # from the machine's W/X datagrams
        self.started = now
        self.finished = None
        self.bytes = 0
        self.asked = 0                     # line numbers asked for again (all requests)
        self.asked_distinct = set()
        self.requests = 0
        self.written = False
        self.gave_up = False               # the machine stopped waiting (X) before it was whole

    @property
    def name(self):
        return f'dump {self.id[1]}'

    def missing(self):
        if self.total is None:
            return []
        return [n for n in range(self.total) if n not in self.lines]

    def whole(self):
        return self.total is not None and len(self.lines) >= self.total and \
            not self.missing()


def ranges(numbers):
    """[1,2,3,7] -> ['1-3', '7']"""
    out, start, prev = [], None, None
    for n in numbers:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f'{start}-{prev}' if prev != start else f'{start}')
            start = prev = n
    if start is not None:
        out.append(f'{start}-{prev}' if prev != start else f'{start}')
    return out


def _span(r):
    a, _, b = r.partition('-')
    return int(b or a) - int(a) + 1


def resend_requests(dump_id, missing):
    """[(R datagram, lines it asks for)] asking for `missing` (sorted line numbers)."""
    head = f'BT1 R {dump_id[0]}.{dump_id[1]} '.encode()
    out, batch = [], []

    def close():
        out.append((head + ','.join(batch).encode() + b'\n', sum(map(_span, batch))))

    for r in ranges(missing):
        if batch and (len(batch) == RANGES_PER_REQUEST or
                      len(head) + len(','.join(batch + [r])) + 1 > REQUEST_MAX_BYTES):
            close()
            batch = []
        batch.append(r)
    if batch:
        close()
    return out


class Machine:
    """One machine: its log, its address, its dumps."""

    def __init__(self, mac, addr, outdir):
        self.mac = mac
        self.addr = addr
        self.path = os.path.join(outdir, f'{mac}.log')
        self.log = open(self.path, 'ab')
        self.log.truncate(0)
        self.session = None
        self.ready = False
        self.next_seq = None
        self.text_lost = 0
        self.dumps = {}
        self.text_bytes = 0

    def write(self, data):
        self.log.write(data)
        self.log.flush()

    def close(self):
        self.log.close()


class Receiver:
    """Feed it datagrams; it writes the logs and answers the machines.

    send(data, addr) sends a datagram; say(text) reports to the user;
    session: the code given on the command line (else learnt from a
    machine's console line, which it sends only to a host its net.to
    names)."""

    def __init__(self, outdir, send, say, session=None):
        self.outdir, self.send, self.say = outdir, send, say
        self.session = session
        self.machines = {}
        self.bad = 0
        self.events = []                   # ('ready'|'dump_done'|'dump_given_up', mac, dump)
        os.makedirs(outdir, exist_ok=True)

    # -- input ------------------------------------------------------------
    def feed(self, data, addr, now=None):
        now = time.monotonic() if now is None else now
        head, sep, body = data.partition(b'\n')
        parts = head.split(b' ')
        if not sep or len(parts) < 3 or parts[0] != PROTO or len(parts[1]) != 1 or \
                not MAC_RE.match(parts[2]):
            self.bad += 1
            return
        kind, mac = parts[1], parts[2].decode()
        m = self.machines.get(mac)
        if m is None:
            m = self.machines[mac] = Machine(mac, addr, self.outdir)
            self.send(b'BT1 H\n', addr)    # a host listens: the machine waits for confirmations
            self.say(f'{mac}: first datagram from {addr[0]}:{addr[1]}; log {m.path}')
        m.addr = addr
        try:
            if kind == b'T' and len(parts) == 4:
                self._text(m, int(parts[3]), body)
            elif kind == b'D' and len(parts) == 5:
                self._lines(m, self._dump(m, parts[3], now), int(parts[4]), body)
            elif kind in (b'W', b'X') and len(parts) == 6 and not body:
                self._status(m, kind, self._dump(m, parts[3], now), int(parts[4]), now)
            else:
                self.bad += 1
        except ValueError:
            self.bad += 1

    def _dump(self, m, text, now):
        match = DUMP_ID_RE.match(text)
        if not match:
            raise ValueError(text)
        key = (match.group(1).decode(), int(match.group(2)))
        d = m.dumps.get(key)
        if d is None:
            d = m.dumps[key] = Dump(key, now)
        return d

    def _text(self, m, seq, body):
        if m.next_seq is not None and seq > m.next_seq:
            m.text_lost += seq - m.next_seq
        if m.next_seq is None or seq >= m.next_seq:
            m.next_seq = seq + 1
        m.write(body)
        m.text_bytes += len(body)
        found = SESSION_RE.search(body)
        if found and not m.session:
            m.session = found.group(1).decode()
        if READY_RE.search(body) and not m.ready:
            m.ready = True
            self.events.append(('ready', m.mac, None))

    def _lines(self, m, d, first, body):
        if d.written or not body.endswith(b'\n'):
            return
        for i, line in enumerate(body[:-1].split(b'\n')):
            no = first + i
            if no not in d.lines:
                d.lines[no] = line + b'\n'
                d.bytes += len(line) + 1
            if line.startswith(b'DUMP END ') and d.total is None:
                found = re.search(rb' lines=(\d+)', line)
                d.total = int(found.group(1)) if found else None
        if d.whole():
            self._finish(m, d, time.monotonic())

    def _status(self, m, kind, d, total, now):
        if d.total is None or d.total != total:
            d.total = total
        if d.whole() or d.written:
            if not d.written:
                self._finish(m, d, now)
            self.send(f'BT1 A {d.id[0]}.{d.id[1]}\n'.encode(), m.addr)
            return
        if kind == b'X':                   # the machine stopped waiting: keep what came
            d.gave_up = True
            self._write(m, d, now)
            missing = d.missing()
            self.say(f'{m.mac}: {d.name} incomplete: the machine stopped waiting; '
                     f'{len(missing)} of {d.total} lines never arrived '
                     f'(asked again for {d.asked} lines)')
            self.events.append(('dump_given_up', m.mac, d))
            return
        missing = d.missing()
        for req, count in resend_requests(d.id, missing)[:REQUESTS_PER_WAIT]:
            self.send(req, m.addr)
            d.requests += 1
            d.asked += count
        d.asked_distinct.update(missing)

    def _finish(self, m, d, now):
        self._write(m, d, now)
        self.send(f'BT1 A {d.id[0]}.{d.id[1]}\n'.encode(), m.addr)
        secs = max(d.finished - d.started, 1e-6)
        self.say(f'{m.mac}: {d.name} complete: {d.total} lines, {d.bytes} bytes in '
                 f'{secs:.2f} s ({d.bytes / secs / 1e6:.2f} MB/s); asked again for '
                 f'{d.asked} lines ({len(d.asked_distinct)} distinct, {d.requests} requests)')
        self.events.append(('dump_done', m.mac, d))

    def _write(self, m, d, now):
        if d.written:
            return
        d.written, d.finished = True, now
        m.write(b''.join(d.lines[n] for n in sorted(d.lines)))

    # -- output -----------------------------------------------------------
    def send_keys(self, mac, keys):
        """Send keys (bytes) to a machine; False when its session code is unknown."""
        m = self.machines[mac]
        code = self.session or m.session
        if not code:
            return False
        for i in range(0, len(keys), KEYS_MAX):
            self.send(f'BT1 K {code} '.encode() + keys[i:i + KEYS_MAX], m.addr)
        return True

    def progress(self, now=None):
        """One line on the dumps still arriving, or ''."""
        now = time.monotonic() if now is None else now
        out = []
        for m in self.machines.values():
            for d in m.dumps.values():
                if d.written:
                    continue
                secs = max(now - d.started, 1e-3)
                total = d.total if d.total is not None else '?'
                out.append(f'{m.mac} {d.name}: {len(d.lines)}/{total} lines '
                           f'{d.bytes / secs / 1e6:.2f} MB/s')
        return '  '.join(out)

    def close(self):
        """Write what arrived of unfinished dumps; close the logs."""
        now = time.monotonic()
        for m in self.machines.values():
            for d in m.dumps.values():
                if not d.written:
                    self._write(m, d, now)
                    self.say(f'{m.mac}: {d.name} incomplete at exit: {len(d.lines)} lines '
                             f'arrived' + (f' of {d.total}' if d.total is not None else ''))
            m.close()
