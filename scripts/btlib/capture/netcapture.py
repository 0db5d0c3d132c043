"""capture --net: receive baretrace machines' console lines and dumps over UDP.

The protocol is docs/network-protocol.md (the kernel's
side: src/net/netproto.h, src/recorder/dumpnet.c). Each machine is known
by the MAC in its datagrams and the address its first datagram came from
(a later datagram naming that MAC from another address is refused and
said: replies never follow a MAC's say-so). Each gets its own log, named
after it (525400123456.log), holding the same text a serial capture would:
console text as it arrives, and each dump's lines in order, written once
the dump is whole (or once the machine stopped waiting for it), so
scripts/decode and scripts/report read it unchanged. A log is never
emptied: a capture that finds one appends to it behind a marker line, and
a machine that boots again is said there too.

Every dump line is checked (its CRC from the dump's seed, the line number
it states) before it is kept; a damaged one is asked for again like a
missing one ("BT1 R", only for lines not already asked for within about a
round trip). A whole dump is confirmed ("BT1 A") with a tag that proves
the session code (siphash.tag); without the code nothing is confirmed and
the machine ends its wait after its bound.

Bounds: at most MACHINES_MAX machines, one MAC per address, DUMPS_OPEN_MAX
dumps in flight per machine; a dump's memory is the lines that arrived;
a line count above what the dump's own DUMP BEGIN allows is refused; a log
is open only while it is written to.
"""

import errno
import os
import re
import time

from ..dump import dumpfmt
from ..dump import ready
from . import siphash

PROTO = b'BT1'
DEFAULT_PORT = 6666
RANGES_PER_REQUEST = 64          # src/net/netproto.h: NETPROTO_RANGES_MAX
REQUESTS_PER_WAIT = 16           # R datagrams answering one W (the rest: next W)
REQUEST_MAX_BYTES = 1400
KEYS_MAX = 64                    # src/net/netproto.h: NETPROTO_KEYS_MAX
LINE_NO_MAX = 0xFFFFFFFE         # src/net/netproto.h: NETPROTO_LINE_MAX
MACHINES_MAX = 64                # machines one capture keeps (more: refused, said)
DUMPS_OPEN_MAX = 4               # dumps in flight per machine
DUMPS_DONE_KEPT = 16             # finished dumps remembered (to confirm again)
# A dump's lines: its events (DUMP BEGIN's estimate, doubled: tracing goes
# on while a copy is taken) plus each CPU's counter lines and the schema.
LINES_PER_CPU = 64
SCHEMA_LINES = 8192
RTO_FIRST_S = 1.0                # a re-ask before the first round trip is measured
RTO_MIN_S = 0.05
MAC_RE = re.compile(rb'\A[0-9a-f]{12}\Z')
NONCE_RE = re.compile(rb'\A[0-9A-F]{16}\Z')
DUMP_ID_RE = re.compile(rb'\A([0-9A-F]{16})\.(\d{1,10})\Z')
SESSION_RE = re.compile(rb'net: session code ([A-Z2-9]{6})\b')
# Words in the header line of each kind a machine sends.
WORDS = {b'T': 4, b'I': 5, b'D': 5, b'W': 6, b'X': 6}


def utc_now():
    return time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())


class Dump:
    """One dump of one machine, as its lines arrive (only lines whose checks pass)."""

    def __init__(self, dump_id, now):
        self.id = dump_id                  # (nonce text, dump number)
        self.seed = dumpfmt.dump_seed(int(dump_id[0], 16), dump_id[1])
        self.lines = {}                    # line number -> bytes (with its \n)
        self.total = None                  # from W/X or DUMP END's lines=
        self.bound = LINE_NO_MAX + 1       # lines it can have (DUMP BEGIN narrows it)
        self.started = now
        self.finished = None
        self.bytes = 0
        self.damaged = 0                   # lines that failed their checks
        self.asked = 0                     # line numbers asked for again (all requests)
        self.asked_distinct = 0
        self.requests = 0
        self.inflight = []                 # (first, last, when asked)
        self.written = False
        self.write_error = None
        self.gave_up = False               # the machine stopped waiting (X) before it was whole
        self.confirmed = False
        self.kept = 0                      # lines written

    @property
    def name(self):
        return f'dump {self.id[1]}'

    @property
    def text(self):
        return f'{self.id[0]}.{self.id[1]}'

    def missing_ranges(self, limit=None):
        """[(first, last)] of the lines not here, in order, at most `limit`."""
        if self.total is None:
            return []
        out, expect = [], 0
        for n in sorted(self.lines):
            if n > expect:
                out.append((expect, n - 1))
                if limit is not None and len(out) >= limit:
                    return out
            expect = n + 1
        if expect < self.total:
            out.append((expect, self.total - 1))
        return out

    def missing_count(self):
        return 0 if self.total is None else self.total - len(self.lines)

    def whole(self):
        return self.total is not None and len(self.lines) == self.total

    def set_total(self, total):
        """False when `total` is more than this dump can have, or fewer
        lines than it already has."""
        if not 0 < total <= self.bound or (self.lines and max(self.lines) >= total):
            return False
        self.total = total
        return True

    def keep(self, no, line):
        """Keep line `no` (bytes ending in \\n) if its checks pass; True if new."""
        if no in self.lines or no >= self.bound or \
                (self.total is not None and no >= self.total):
            return False
        text = line[:-1].rstrip(b'\r')
        try:
            stated = dumpfmt.stated_line_number(text, self.seed)
            if no == 0:
                fields = dumpfmt.begin_fields(text)
                if (fields.get('nonce'), dumpfmt.int_field(fields.get('dump'))) != \
                        (self.id[0], self.id[1]):
                    raise dumpfmt.Damaged
                self._bound_by(fields)
        except (dumpfmt.Damaged, ValueError):
            stated = None
        if stated != no:
            self.damaged += 1
            return False
        if text.startswith(b'DUMP END') and not self.set_total(no + 1):
            self.damaged += 1
            return False
        self.lines[no] = line
        self.bytes += len(line)
        return True

    def _bound_by(self, begin):
        events = dumpfmt.int_field(begin.get('events')) or 0
        cpus = dumpfmt.int_field(begin.get('cpus')) or 0
        self.bound = min(self.bound, 2 * events + LINES_PER_CPU * cpus + SCHEMA_LINES)
        for n in [n for n in self.lines if n >= self.bound]:
            self.bytes -= len(self.lines.pop(n))
        if self.total is not None and self.total > self.bound:
            self.total = None

    def release(self):
        """The lines are written: keep only what the summary needs."""
        self.kept = len(self.lines)
        self.lines = {}
        self.inflight = []


def ranges_text(spans):
    return [f'{a}-{b}' if b != a else f'{a}' for a, b in spans]


def subtract(spans, taken):
    """The parts of sorted spans [(a, b)] not covered by any span of `taken`."""
    out = []
    for a, b in spans:
        pieces = [(a, b)]
        for x, y in taken:
            pieces = [p for q in pieces for p in _cut(q, x, y)]
        out += pieces
    return out


def _cut(span, x, y):
    a, b = span
    if y < a or x > b:
        return [span]
    return [p for p in ((a, x - 1), (y + 1, b)) if p[0] <= p[1]]


def resend_requests(dump_id, spans):
    """[(R datagram, lines it asks for, its spans)] asking for `spans`
    (sorted (first, last) line numbers)."""
    head = f'BT1 R {dump_id[0]}.{dump_id[1]} '.encode()
    out, batch = [], []

    def close():
        text = ','.join(ranges_text(batch)).encode()
        out.append((head + text + b'\n', sum(b - a + 1 for a, b in batch), batch))

    for span in spans:
        trial = ','.join(ranges_text(batch + [span]))
        if batch and (len(batch) == RANGES_PER_REQUEST or
                      len(head) + len(trial) + 1 > REQUEST_MAX_BYTES):
            close()
            batch = []
        batch.append(span)
    if batch:
        close()
    return out


class Machine:
    """One machine: its log, its address, its boot, its dumps."""

    def __init__(self, mac, addr, outdir):
        self.mac = mac
        self.addr = addr
        self.path = os.path.join(outdir, f'{mac}.log')
        self.marked = False                # the capture's marker is in the log
        self.nonce = None                  # this boot's nonce (I, D, W, X datagrams)
        self.old_nonces = []
        self.boots = 0
        self.session = None                # learnt from its console text
        self.ready = False
        self.ready_fields = ''
        self.next_seq = None
        self.text_lost = 0
        self.text_unwritten = 0
        self.dumps = {}                    # id -> Dump, in flight
        self.done = {}                     # id -> Dump, written (lines released)
        self.refused_from = {}             # other address -> datagrams refused
        self.dumps_refused = 0
        self.write_error = None
        self.srtt = None                   # round trip of a resend request, smoothed
        self.unsigned_said = False

    def rto(self):
        return RTO_FIRST_S if self.srtt is None else max(RTO_MIN_S, 1.5 * self.srtt)

    def rtt_sample(self, secs):
        self.srtt = secs if self.srtt is None else 0.875 * self.srtt + 0.125 * secs

    def write(self, data):
        """Append to the log (opened only for this write); None or the OSError."""
        try:
            with open(self.path, 'ab') as f:
                if not self.marked:
                    f.write(self._marker(f))
                    self.marked = True
                f.write(data)
        except OSError as e:
            return e
        return None

    def _marker(self, f):
        size = f.seek(0, os.SEEK_END)
        if not size:
            return b''
        with open(self.path, 'rb') as r:
            r.seek(size - 1)
            nl = b'' if r.read(1) == b'\n' else b'\n'
        return nl + (f'capture: a new capture started at {utc_now()}; the text above '
                     f'is from an earlier one ({size} bytes)\n').encode()


class Receiver:
    """Feed it datagrams; it writes the logs and answers the machines.

    send(data, addr) sends a datagram; say(text) reports to the user;
    session: the code given on the command line (else learnt from a
    machine's console line, which it sends only to a host its net.to
    names): without one, dumps are received but never confirmed."""

    def __init__(self, outdir, send, say, session=None, machines_max=MACHINES_MAX):
        self.outdir, self.send, self.say = outdir, send, say
        self.session = session
        self.machines_max = machines_max
        self.machines = {}
        self.owner = {}                    # address -> the MAC that spoke from it first
        self.bad = 0
        self.refused_machines = 0          # datagrams of MACs beyond machines_max
        self.refused_addr = 0              # datagrams of a second MAC from one address
        self.said_once = set()
        self.events = []                   # ('ready'|'dump_done'|'dump_given_up'|'boot', mac, x)
        self.counter = time.time_ns() // 1000      # K's counter: above any earlier capture's
        os.makedirs(outdir, exist_ok=True)

    def once(self, key, text):
        if key not in self.said_once:
            self.said_once.add(key)
            self.say(text)

    # -- input ------------------------------------------------------------
    def feed(self, data, addr, now=None):
        now = time.monotonic() if now is None else now
        head, sep, body = data.partition(b'\n')
        parts = head.split(b' ')
        if not sep or len(parts) < 3 or parts[0] != PROTO or \
                len(parts) != WORDS.get(parts[1]) or not MAC_RE.match(parts[2]):
            self.bad += 1
            return
        kind, mac = parts[1], parts[2].decode()
        m = self._machine(mac, addr)
        if m is None:
            return
        try:
            if kind == b'T':
                self._text(m, int(parts[3]), body)
            elif kind == b'I' and NONCE_RE.match(parts[3]):
                self._announce(m, parts[3].decode(), body, now)
            elif kind == b'D':
                self._lines(m, self._dump(m, parts[3], now), int(parts[4]), body, now)
            elif kind in (b'W', b'X') and not body:
                self._status(m, kind, self._dump(m, parts[3], now), int(parts[4]), now)
            else:
                self.bad += 1
        except ValueError:
            self.bad += 1

    def _machine(self, mac, addr):
        """The machine a datagram speaks for, or None when it is refused."""
        m = self.machines.get(mac)
        if m is not None:
            if m.addr == addr:
                return m
            n = m.refused_from.get(addr)
            if n is None and len(m.refused_from) >= self.machines_max:
                addr_key = ('other', 'many')
            else:
                m.refused_from[addr] = (n or 0) + 1
                addr_key = addr
            self.once(('moved', mac, addr_key),
                      f'{mac}: refused a datagram from {addr[0]}:{addr[1]}: this capture '
                      f'knows {mac} at {m.addr[0]}:{m.addr[1]} (another host using its MAC, '
                      f'or the machine moved: restart capture to accept it)')
            return None
        owner = self.owner.get(addr)
        if owner is not None:
            self.refused_addr += 1
            self.once(('addr', addr), f'refused datagrams naming other MACs from '
                      f'{addr[0]}:{addr[1]}, which speaks for {owner}')
            return None
        if len(self.machines) >= self.machines_max:
            self.refused_machines += 1
            self.once('full', f'refused a machine {mac} at {addr[0]}:{addr[1]}: this '
                      f'capture already keeps {self.machines_max} machines')
            return None
        m = self.machines[mac] = Machine(mac, addr, self.outdir)
        self.owner[addr] = mac
        self.send(b'BT1 H\n', addr)        # a host listens: the machine waits for confirmations
        self.say(f'{mac}: first datagram from {addr[0]}:{addr[1]}; log {m.path}')
        self.events.append(('seen', mac, addr))
        return m

    def _boot(self, m, nonce):
        """Note the boot a datagram belongs to; False for an earlier boot's."""
        if nonce == m.nonce:
            return True
        if nonce in m.old_nonces:
            return False
        if m.nonce is not None:
            self.send(b'BT1 H\n', m.addr)   # the new boot has not heard a host yet
            m.old_nonces = (m.old_nonces + [m.nonce])[-4:]
            m.ready, m.next_seq, m.session = False, None, None
            self._log(m, f'capture: {m.mac} booted again at {utc_now()} (boot {nonce}, '
                         f'was {m.nonce})\n'.encode())
            self.say(f'{m.mac}: booted again (boot {nonce}, was {m.nonce}); same log')
            self.events.append(('boot', m.mac, nonce))
        m.nonce = nonce
        m.boots += 1
        return True

    def _log(self, m, data):
        """Write to the machine's log; say once why not, and return False."""
        err = m.write(data)
        if err is None:
            m.write_error = None
            return True
        if m.write_error != err.errno:
            m.write_error = err.errno
            why = ('too many open files in this process' if err.errno == errno.EMFILE
                   else err.strerror)
            self.say(f'{m.mac}: cannot write {m.path}: {why}; its text is dropped and its '
                     f'dumps are held unconfirmed until a write succeeds (other machines '
                     f'go on)')
        return False

    def _text(self, m, seq, body):
        if m.next_seq is not None and seq > m.next_seq:
            m.text_lost += seq - m.next_seq
        if m.next_seq is None or seq >= m.next_seq:
            m.next_seq = seq + 1
        if not self._log(m, body):
            m.text_unwritten += len(body)
        found = SESSION_RE.search(body)
        if found and not m.session:
            m.session = found.group(1).decode()
        if ready.STARTS.search(body) and m.nonce is not None and not m.ready:
            self._ready(m)

    def _announce(self, m, nonce, body, now):
        if not self._boot(m, nonce):
            return
        fields = body.split(b'\n')[0].decode('ascii', 'replace')[:400]
        fields = fields[len('READY '):] if fields.startswith('READY ') else fields
        if not m.ready:
            m.ready_fields = fields
            self.say(f'{m.mac} at {m.addr[0]}:{m.addr[1]}: READY {fields} (boot {nonce})')
            self._ready(m)

    def _ready(self, m):
        m.ready = True
        self.events.append(('ready', m.mac, m.nonce))

    def _dump(self, m, text, now):
        """The dump a datagram names, or None (another boot's, or too many)."""
        match = DUMP_ID_RE.match(text)
        if not match:
            raise ValueError(text)
        key = (match.group(1).decode(), int(match.group(2)))
        if key[1] >= 1 << 32:
            raise ValueError(text)
        d = m.dumps.get(key) or m.done.get(key)
        if d is not None:
            return d
        if not self._boot(m, key[0]):
            return None                    # an earlier boot's dump, already given up
        empty = [k for k, x in m.dumps.items() if not x.lines]
        if len(m.dumps) >= DUMPS_OPEN_MAX and empty:
            m.dumps.pop(empty[0])          # a dump of which no line ever arrived intact
        if len(m.dumps) >= DUMPS_OPEN_MAX:
            m.dumps_refused += 1
            self.once(('dumps', m.mac), f'{m.mac}: refused {text.decode()}: '
                      f'{DUMPS_OPEN_MAX} of its dumps are already arriving')
            return None
        d = m.dumps[key] = Dump(key, now)
        return d

    def _lines(self, m, d, first, body, now):
        if d is None or d.written or not body.endswith(b'\n') or first > LINE_NO_MAX:
            return
        for i, line in enumerate(body[:-1].split(b'\n')):
            no = first + i
            if d.keep(no, line + b'\n'):
                for a, b, when in d.inflight:
                    if a <= no <= b:
                        m.rtt_sample(now - when)
                        break
        if d.whole():
            self._finish(m, d, now)

    def _status(self, m, kind, d, total, now):
        if d is None:
            return
        if d.written:
            self._confirm(m, d)
            return
        if d.total != total and not d.set_total(total):
            self.once(('total', m.mac, d.id), f'{m.mac}: {d.name}: refused its line count '
                      f'{total}: more than its DUMP BEGIN allows ({d.bound}) or than lines '
                      f'already here')
            return
        if d.whole():
            self._finish(m, d, now)
            return
        if kind == b'X':                   # the machine stopped waiting: keep what came
            d.gave_up = True
            if not self._write(m, d, now):
                return
            self.say(f'{m.mac}: {d.name} incomplete: the machine stopped waiting; '
                     f'{d.missing_count()} of {d.total} lines never arrived intact '
                     f'(asked again for {d.asked} lines)')
            self.events.append(('dump_given_up', m.mac, d))
            return
        self._ask(m, d, now)

    def _ask(self, m, d, now):
        """R for the lines not here and not asked for within about a round trip."""
        rto = m.rto()
        d.inflight = [r for r in d.inflight if now - r[2] < rto]
        want = RANGES_PER_REQUEST * REQUESTS_PER_WAIT
        spans = subtract(d.missing_ranges(limit=want + len(d.inflight)),
                         [(a, b) for a, b, _ in d.inflight])
        for req, count, batch in resend_requests(d.id, spans[:want])[:REQUESTS_PER_WAIT]:
            self.send(req, m.addr)
            d.requests += 1
            d.asked += count
            d.inflight += [(a, b, now) for a, b in batch]

    def _finish(self, m, d, now):
        if not self._write(m, d, now):
            return
        self._confirm(m, d)
        secs = max(d.finished - d.started, 1e-6)
        self.say(f'{m.mac}: {d.name} complete: {d.total} lines, {d.bytes} bytes in '
                 f'{secs:.2f} s ({d.bytes / secs / 1e6:.2f} MB/s); asked again for '
                 f'{d.asked} lines ({d.requests} requests; {d.damaged} damaged copies refused)'
                 + ('' if d.confirmed else '; NOT confirmed to the machine (no session code)'))
        self.events.append(('dump_done', m.mac, d))

    def _write(self, m, d, now):
        """Write what arrived of the dump once; False while the log refuses it."""
        if d.written:
            return True
        if d.lines and not self._log(m, b''.join(d.lines[n] for n in sorted(d.lines))):
            return False
        d.written, d.finished = True, now
        m.dumps.pop(d.id, None)
        m.done[d.id] = d
        while len(m.done) > DUMPS_DONE_KEPT:
            m.done.pop(next(iter(m.done)))
        d.release()
        return True

    def _confirm(self, m, d):
        """A for a dump written whole, signed with the session code; none without it."""
        if d.gave_up or d.kept != d.total:
            return
        code = m.session or self.session
        if not code:
            if not m.unsigned_said:
                m.unsigned_said = True
                self.say(f'{m.mac}: {d.name} is whole in the log but cannot be confirmed: '
                         f'without --session CODE capture cannot sign the confirmation; the '
                         f'machine ends its wait after its bound and says it was not confirmed')
            return
        msg = f'{m.mac} {d.id[0]} BT1 A {d.text}'.encode()
        self.send(f'BT1 A {siphash.tag(code, msg)} {d.text}\n'.encode(), m.addr)
        d.confirmed = True

    # -- output -----------------------------------------------------------
    def send_keys(self, mac, keys):
        """Send keys (bytes) to a machine; False when its session code or
        boot nonce is unknown (nothing is sent)."""
        m = self.machines[mac]
        code = m.session or self.session
        if not code or m.nonce is None:
            return False
        for i in range(0, len(keys), KEYS_MAX):
            chunk = keys[i:i + KEYS_MAX]
            self.counter += 1
            msg = f'{m.mac} {m.nonce} BT1 K {self.counter} '.encode() + chunk
            self.send(f'BT1 K {siphash.tag(code, msg)} {self.counter} '.encode() + chunk,
                      m.addr)
        return True

    def ask(self, addr):
        """BT1 Q to addr: who is there (the machine answers with its I datagram)."""
        self.send(b'BT1 Q\n', addr)

    def progress(self, now=None):
        """One line on the dumps still arriving, or ''."""
        now = time.monotonic() if now is None else now
        out = []
        for m in self.machines.values():
            for d in m.dumps.values():
                if not d.lines:
                    continue
                secs = max(now - d.started, 1e-3)
                total = d.total if d.total is not None else '?'
                out.append(f'{m.mac} {d.name}: {len(d.lines)}/{total} lines '
                           f'{d.bytes / secs / 1e6:.2f} MB/s')
        return '  '.join(out[:4])

    def close(self):
        """Write what arrived of unfinished dumps (those with any intact line)."""
        now = time.monotonic()
        for m in self.machines.values():
            for d in list(m.dumps.values()):
                if not d.lines:
                    continue
                total = d.total
                count = len(d.lines)
                if self._write(m, d, now):
                    self.say(f'{m.mac}: {d.name} incomplete at exit: {count} lines '
                             f'arrived' + (f' of {total}' if total is not None else ''))
                else:
                    self.say(f'{m.mac}: {d.name}: {count} lines arrived but could not be '
                             f'written to {m.path}')
