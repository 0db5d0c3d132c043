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

Every datagram a machine sends is sealed with its boot's key (a counter
and a tag, netkeys). With keys (a key file, the key store, --session), a
machine is verified by the first of its datagrams whose tag one of them
proves; from then on only datagrams its key proves, each counter once,
are taken, the rest refused, counted and said (at most once a second).
A machine no key proves is recorded all the same, behind a
"capture: unverified" line that decode --list reports on its dumps.
Console text never changes capture's own state.

Every dump line is checked (its CRC from the dump's seed, the line number
it states) before it is kept; a damaged one is asked for again like a
missing one ("BT1 R", signed when the machine is verified; only for lines
not already asked for within about a round trip). A whole dump is
confirmed ("BT1 A") with a tag under the machine's key; without a key
nothing is confirmed and the machine ends its wait after its bound.

Bounds: at most MACHINES_MAX machines, one MAC per address, DUMPS_OPEN_MAX
dumps in flight per machine; lines held for dumps not yet whole at most
HELD_MAX bytes in all (each line counted with LINE_COST of Python's
overhead: about 256 MiB of memory), more are refused and asked for again
later; a line count above what the dump's own DUMP BEGIN allows is
refused; a log is open only while it is written to; every wire number is
strict decimal.
"""

import errno
import os
import re
import time

from . import netstream, siphash
from .netstream import StreamParts
from .netdump import LINE_COST, LINE_NO_MAX, RANGES_PER_REQUEST, Dump, resend_requests, subtract

PROTO = b'BT1'
DEFAULT_PORT = 6666
REQUESTS_PER_WAIT = 16           # R datagrams answering one W (the rest: next W)
HELD_MAX = 256 << 20             # bytes of held dump lines, all machines together
KEYS_MAX = 64                    # src/net/netproto.h: NETPROTO_KEYS_MAX
MACHINES_MAX = 64                # machines one capture keeps (more: refused, said)
DUMPS_OPEN_MAX = 4               # dumps in flight per machine
DUMPS_DONE_KEPT = 16             # finished dumps remembered (to confirm again)
RTO_FIRST_S = 1.0                # a re-ask before the first round trip is measured
RTO_MIN_S = 0.05
REPLAY_WINDOW = 4096             # counters remembered below the highest (reordering)
SAY_EVERY_S = 1.0                # a repeated refusal is said at most this often
#                                  (the machine sends W every 0.2 s, gives up after 5 s)
MAC_RE = re.compile(rb'\A[0-9a-f]{12}\Z')
NONCE_RE = re.compile(rb'\A[0-9A-F]{16}\Z')
TAG_RE = re.compile(rb'\A[0-9a-f]{16}\Z')
DECIMAL_RE = re.compile(rb'\A(?:0|[1-9][0-9]{0,19})\Z')
DUMP_ID_RE = re.compile(rb'\A([0-9A-F]{16})\.(0|[1-9][0-9]{0,9})\Z')
UNVERIFIED_MARK = 'capture: unverified:'
VERIFIED_MARK = 'capture: verified:'
# Words in the header line of each kind a machine sends (its seal included).
WORDS = {b'T': 7, b'I': 7, b'D': 7, b'W': 8, b'X': 8}


def decimal(word, limit=(1 << 64) - 1):
    """A wire number: ASCII digits only, no sign, no '_', no leading zero,
    at most `limit`; else ValueError."""
    if not DECIMAL_RE.match(word):
        raise ValueError(word)
    value = int(word)
    if value > limit:
        raise ValueError(word)
    return value


def boot_of(kind, parts):
    """The boot nonce a machine datagram names (bytes), or None."""
    word = parts[4] if kind == b'T' else parts[3][:16]
    return word if NONCE_RE.match(word) else None


def seal_ok(key, data, head_len):
    """The datagram's tag (its header's last word) proves it under key."""
    at = head_len - 16
    msg = data[:at] + b'0' * 16 + data[head_len:]
    return siphash.siphash24(key, msg) == int(data[at:head_len], 16)


def utc_now():
    return time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())


class Machine:
    """One machine: its log, its address, its boot, its key, its dumps."""

    def __init__(self, mac, addr, outdir):
        self.mac = mac
        self.addr = addr
        self.path = os.path.join(outdir, f'{mac}.log')
        self.marked = False                # the capture's marker is in the log
        self.trust_said = None             # the last trust marker written to the log
        self.nonce = None                  # this boot's nonce (as proven, if verified)
        self.past = []                     # a verified machine's earlier boots (proven)
        self.boots = 0
        self.key = None                    # the key that proved it (verified), or None
        self.key_name = None
        self.top = None                    # the highest counter taken this boot
        self.window = 0                    # bit i: counter top - i taken
        self.ready = False
        self.ready_fields = ''
        self.next_seq = None
        self.text_lost = 0
        self.text_unwritten = 0
        self.dumps = {}                    # id -> Dump, in flight
        self.streams = {}                  # (nonce, stream) -> netstream.Stream, not ended
        self.ended = {}                    # (nonce, stream) of the latest streams ended
        self.done = {}                     # id -> Dump, written (lines released)
        self.refused_from = {}             # other address -> datagrams refused
        self.dumps_refused = 0
        self.forged = 0                    # datagrams its key did not prove
        self.replayed = 0                  # proven datagrams whose counter came before
        self.write_error = None
        self.srtt = None                   # round trip of a resend request, smoothed
        self.unsigned_said = False

    @property
    def verified(self):
        return self.key is not None

    def fresh(self, counter):
        """Take a proven datagram's counter once (a window below the
        highest, since UDP reorders); False for a replay."""
        if self.top is None or counter > self.top:
            shift = REPLAY_WINDOW if self.top is None else counter - self.top
            self.window = (self.window << shift | 1) & ((1 << REPLAY_WINDOW) - 1) \
                if shift < REPLAY_WINDOW else 1
            self.top = counter
            return True
        back = self.top - counter
        if back >= REPLAY_WINDOW or self.window >> back & 1:
            return False
        self.window |= 1 << back
        return True

    def rto(self):
        return RTO_FIRST_S if self.srtt is None else max(RTO_MIN_S, 1.5 * self.srtt)

    def rtt_sample(self, secs):
        self.srtt = secs if self.srtt is None else 0.875 * self.srtt + 0.125 * secs

    def sign(self, kind, words):
        """The tag of a host datagram of kind ('A', 'K', 'R') whose words
        after the tag are `words` (bytes), under this machine's key."""
        msg = f'{self.mac} {self.nonce} BT1 {kind} '.encode() + words
        return f'{siphash.siphash24(self.key, msg):016x}'

    def write(self, data):
        """Append to the log (opened only for this write); None or the OSError."""
        try:
            with open(self.path, 'ab') as f:
                if not self.marked:
                    f.write(self._marker(f))
                    self.marked = True
                f.write(self._trust() + data)
        except OSError as e:
            return e
        return None

    def _trust(self):
        """The trust marker due before what is written now, or b''."""
        now = 'verified' if self.verified else 'unverified'
        if now == self.trust_said:
            return b''
        self.trust_said = now
        if self.verified:
            return (f'{VERIFIED_MARK} {self.mac}\'s datagrams from here on were proven by '
                    f'key {self.key_name}\n').encode()
        return (f'{UNVERIFIED_MARK} the text and dumps from here on were not proven to '
                f'come from {self.mac} (no key of this capture proved its datagrams: give '
                f'--session CODE or --key-file)\n').encode()

    def _marker(self, f):
        size = f.seek(0, os.SEEK_END)
        if not size:
            return b''
        with open(self.path, 'rb') as r:
            r.seek(size - 1)
            nl = b'' if r.read(1) == b'\n' else b'\n'
        return nl + (f'capture: a new capture started at {utc_now()}; the text above '
                     f'is from an earlier one ({size} bytes)\n').encode()


class Receiver(StreamParts):
    """Feed it datagrams; it writes the logs and answers the machines.

    send(data, addr) sends a datagram; say(text) reports to the user;
    keys: [(name, 16-byte key)] that may prove a machine (a key file, the
    key store, a session code's): without any, everything is recorded
    unverified and no dump is confirmed."""

    def __init__(self, outdir, send, say, keys=(), machines_max=MACHINES_MAX):
        self.outdir, self.send, self._say = outdir, send, say
        self.keys = list(keys)
        self.machines_max = machines_max
        self.machines = {}
        self.owner = {}                    # address -> the MAC that spoke from it first
        self.bad = 0
        self.refused_machines = 0          # datagrams of MACs beyond machines_max
        self.refused_addr = 0              # datagrams of a second MAC from one address
        self.held = 0                      # bytes of dump lines held, as HELD_MAX counts
        self.held_refused = 0              # lines refused for HELD_MAX (asked again later)
        self.said_once = set()
        self.said_at = {}                  # key -> (when said, times since)
        # ('seen'|'ready'|'boot'|'dump_done'|'dump_given_up'|'part_done'|'part_given_up'|
        #  'stream_end', mac, x)
        self.events = []
        self.counter = time.time_ns() // 1000      # K's counter: above any earlier capture's
        os.makedirs(outdir, exist_ok=True)

    def say(self, text):
        self._say(text)

    def once(self, key, text):
        if key not in self.said_once:
            self.said_once.add(key)
            self.say(text)

    def often(self, key, text, now):
        """Say a repeated event at most once every SAY_EVERY_S, with a count."""
        when, count = self.said_at.get(key, (None, 0))
        if when is not None and now - when < SAY_EVERY_S:
            self.said_at[key] = (when, count + 1)
            return
        more = f' ({count} more like it not said)' if count else ''
        self.said_at[key] = (now, 0)
        if len(self.said_at) > 4 * MACHINES_MAX:
            self.said_at.pop(next(iter(self.said_at)))
        self.say(text + more)

    # -- input ------------------------------------------------------------
    def feed(self, data, addr, now=None):
        now = time.monotonic() if now is None else now
        head, sep, body = data.partition(b'\n')
        parts = head.split(b' ')
        if not sep or len(parts) < 3 or parts[0] != PROTO or \
                len(parts) != WORDS.get(parts[1]) or not MAC_RE.match(parts[2]) or \
                not TAG_RE.match(parts[-1]):
            self.bad += 1
            return
        kind, mac = parts[1], parts[2].decode()
        try:
            counter = decimal(parts[-2])
        except ValueError:
            self.bad += 1
            return
        nonce = boot_of(kind, parts)
        if nonce is None:
            self.bad += 1
            return
        m = self._machine(mac, addr)
        if m is None or not self._proven(m, data, len(head), nonce.decode(), counter, now):
            return
        try:
            self._take(m, kind, parts[:-2], body, now)
        except ValueError:
            self.bad += 1

    def _take(self, m, kind, parts, body, now):
        if kind == b'T':
            if self._boot(m, parts[4].decode()):
                self._text(m, decimal(parts[3]), body)
        elif kind == b'I':
            decimal(parts[4])
            self._announce(m, parts[3].decode(), body, now)
        elif kind == b'D':
            self._lines(m, self._dump(m, parts[3], now), decimal(parts[4], LINE_NO_MAX),
                        body, now)
        elif kind in (b'W', b'X') and not body:
            total = decimal(parts[4], LINE_NO_MAX + 1)
            decimal(parts[5])
            self._status(m, kind, self._dump(m, parts[3], now), total, now)
        else:
            self.bad += 1

    def _proven(self, m, data, head_len, nonce, counter, now):
        """Whether a datagram is taken: proven by its machine's key (each
        counter once), or, for a machine no key proved yet, by any key of
        this capture (which then verifies it), or unverified."""
        if m.verified:
            if not seal_ok(m.key, data, head_len):
                m.forged += 1
                self.often(('forged', m.mac), f'{m.mac}: refused a datagram its key does not '
                           f'prove ({m.forged} so far): another host forging it, or damage '
                           f'on the way', now)
                return False
            if nonce in m.past:
                m.replayed += 1            # its earlier boot's: that boot is over
                return False
            if nonce != m.nonce:
                self._new_boot(m, nonce)
            if not m.fresh(counter):
                m.replayed += 1
                self.often(('replay', m.mac), f'{m.mac}: refused a proven datagram seen '
                           f'before (counter {counter}; {m.replayed} so far): a replay', now)
                return False
            return True
        for name, key in self.keys:
            if seal_ok(key, data, head_len):
                self._verify(m, name, key, nonce)
                return m.fresh(counter)
        if self.keys:
            self.often(('unproven', m.mac), f'{m.mac}: no key of this capture proves its '
                       f'datagrams: recorded as unverified (a wrong --session or key file, '
                       f'or another host)', now)
        return True

    def _verify(self, m, name, key, nonce):
        """The first proven datagram: the machine is this key's from now on;
        what arrived unproven of its dumps is dropped (asked for again)."""
        m.key, m.key_name = key, name
        for d in list(m.dumps.values()):
            self._drop(m, d)
        m.done = {}
        if m.nonce is not None and nonce != m.nonce:
            m.ready, m.next_seq = False, None
        m.nonce = nonce
        m.top, m.window = None, 0
        self.say(f'{m.mac}: verified: its datagrams are proven by key {name}')

    def _drop(self, m, d):
        self.held -= d.cost
        m.dumps.pop(d.id, None)

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
        """Note the boot a datagram belongs to. A verified machine's new
        boot was proven before this (_new_boot); an unverified machine's
        follows what it says, and its earlier boot's dumps still land."""
        if nonce == m.nonce:
            return True
        if m.verified:
            return True                    # a datagram of its previous boot, proven
        if m.nonce is not None:
            self._said_new_boot(m, nonce)
        m.nonce = nonce
        m.boots += 1
        return True

    def _new_boot(self, m, nonce):
        """A verified machine's datagram of another boot, proven."""
        self._said_new_boot(m, nonce)
        m.past = (m.past + [m.nonce])[-4:]
        m.nonce = nonce
        m.boots += 1
        m.top, m.window = None, 0

    def _said_new_boot(self, m, nonce):
        self.send(b'BT1 H\n', m.addr)   # the new boot has not heard a host yet
        m.ready, m.next_seq = False, None
        self._log(m, f'capture: {m.mac} booted again at {utc_now()} (boot {nonce}, '
                     f'was {m.nonce})\n'.encode())
        self.say(f'{m.mac}: booted again (boot {nonce}, was {m.nonce}); same log')
        self.events.append(('boot', m.mac, nonce))
        for s in [s for s in m.streams.values() if s.nonce != nonce and not s.open]:
            self._end_stream(m, s, time.monotonic(), 'the machine booted again before '
                             'its final part came')

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
        """Console text: into the log, and nothing else (what it says never
        changes capture's state)."""
        if m.next_seq is not None and seq > m.next_seq:
            m.text_lost += seq - m.next_seq
        if m.next_seq is None or seq >= m.next_seq:
            m.next_seq = seq + 1
        if not self._log(m, body):
            m.text_unwritten += len(body)

    def _announce(self, m, nonce, body, now):
        self._boot(m, nonce)
        # Each announcement is answered: the machine waits for a dump's
        # confirmation only once it heard a host, and the H sent on its
        # first datagram may be lost while its NIC comes up.
        self.send(b'BT1 H\n', m.addr)
        fields = body.split(b'\n')[0].decode('ascii', 'replace')[:400]
        fields = fields[len('READY '):] if fields.startswith('READY ') else fields
        if not m.ready and nonce == m.nonce:
            m.ready_fields = fields
            trust = '' if m.verified else ', unverified'
            self.say(f'{m.mac} at {m.addr[0]}:{m.addr[1]}: READY {fields} (boot {nonce}'
                     f'{trust})')
            self._ready(m)

    def _ready(self, m):
        m.ready = True
        self.events.append(('ready', m.mac, m.nonce))

    def _dump(self, m, text, now):
        """The dump a datagram names, or None (too many)."""
        match = DUMP_ID_RE.match(text)
        if not match:
            raise ValueError(text)
        key = (match.group(1).decode(), int(match.group(2)))
        if key[1] >= 1 << 32:
            raise ValueError(text)
        d = m.dumps.get(key) or m.done.get(key)
        if d is not None:
            return d
        self._boot(m, key[0])
        empty = [k for k, x in m.dumps.items() if not x.lines]
        if len(m.dumps) >= DUMPS_OPEN_MAX and empty:
            m.dumps.pop(empty[0])          # a dump of which no line ever arrived intact
        if len(m.dumps) >= DUMPS_OPEN_MAX:
            m.dumps_refused += 1
            self.once(('dumps', m.mac), f'{m.mac}: refused {text.decode()}: '
                      f'{DUMPS_OPEN_MAX} of its dumps are already arriving')
            return None
        d = m.dumps[key] = Dump(key, now)
        d.verified = m.verified
        return d

    def _lines(self, m, d, first, body, now):
        if d is None or d.written or not body.endswith(b'\n'):
            return
        d.last = now
        for i, line in enumerate(body[:-1].split(b'\n')):
            no = first + i
            if self.held + len(line) + LINE_COST > HELD_MAX:
                self.held_refused += 1
                self.often('held', f'refused dump lines: {HELD_MAX >> 20} MiB of lines are '
                           f'held for dumps not yet whole ({self.held_refused} lines so '
                           f'far; asked for again once others are written)', now)
                break
            before = d.cost
            if d.keep(no, line + b'\n'):
                for a, b, when in d.inflight:
                    if a <= no <= b:
                        m.rtt_sample(now - when)
                        break
            self.held += d.cost - before
        if d.stream is not None and not d.heard:
            d.heard = True
            self._part_heard(m, d, now)
        if d.whole():
            self._finish(m, d, now)

    def _status(self, m, kind, d, total, now):
        if d is None:
            return
        d.last = now
        if d.written:
            self._confirm(m, d)
            return
        if d.total != total:
            before = d.cost
            ok = d.set_total(total)
            self.held += d.cost - before
            if not ok:
                self.once(('total', m.mac, d.id), f'{m.mac}: {d.name}: refused its line '
                          f'count {total}: more than its DUMP BEGIN allows ({d.bound}) or '
                          f'than lines already here')
                return
        if d.whole():
            self._finish(m, d, now)
            return
        if kind == b'X':                   # the machine stopped waiting: keep what came
            d.gave_up = True
            missing = d.missing_count()
            if not self._write(m, d, now):
                return
            self.say(f'{m.mac}: {d.name} incomplete: the machine stopped waiting; '
                     f'{missing} of {d.total} lines never arrived intact '
                     f'(asked again for {d.asked} lines)')
            self.events.append(('part_given_up' if d.stream is not None else 'dump_given_up',
                                m.mac, d))
            self._streams_over(m, now)
            return
        self._ask(m, d, now)

    def _ask(self, m, d, now):
        """R for the lines not here and not asked for within about a round
        trip; signed when the machine is verified (the machine resends
        only a few times for unsigned requests)."""
        rto = m.rto()
        d.inflight = [r for r in d.inflight if now - r[2] < rto]
        want = RANGES_PER_REQUEST * REQUESTS_PER_WAIT
        spans = subtract(d.missing_ranges(limit=want + len(d.inflight)),
                         [(a, b) for a, b, _ in d.inflight])
        sign = (lambda words: m.sign('R', words)) if m.verified and m.nonce == d.id[0] \
            else None
        for req, count, batch in resend_requests(d.id, spans[:want], sign)[:REQUESTS_PER_WAIT]:
            self.send(req, m.addr)
            d.requests += 1
            d.asked += count
            d.inflight += [(a, b, now) for a, b in batch]

    def _finish(self, m, d, now):
        if not self._write(m, d, now):
            return
        self._confirm(m, d)
        if d.stream is not None:           # a stream's parts are said per stream
            self.events.append(('part_done', m.mac, d))
            self._streams_over(m, now)
            return
        secs = max(d.finished - d.started, 1e-6)
        why = 'no key proves the machine' if not m.verified else 'not this boot\'s'
        self.say(f'{m.mac}: {d.name} complete: {d.total} lines, {d.bytes} bytes in '
                 f'{secs:.2f} s ({d.bytes / secs / 1e6:.2f} MB/s); asked again for '
                 f'{d.asked} lines ({d.requests} requests; {d.damaged} damaged copies refused)'
                 + ('' if d.confirmed else f'; NOT confirmed to the machine ({why})')
                 + ('' if d.verified else '; UNVERIFIED'))
        self.events.append(('dump_done', m.mac, d))
        self._streams_over(m, now)             # it may have held a stream's end

    def _write(self, m, d, now):
        """Write what arrived of the dump once; False while the log refuses it."""
        if d.written:
            return True
        if d.lines and not self._log(m, b''.join(d.lines[n] for n in d.order)):
            return False
        d.written, d.finished = True, now
        self.held -= d.cost
        m.dumps.pop(d.id, None)
        m.done[d.id] = d
        while len(m.done) > DUMPS_DONE_KEPT:
            m.done.pop(next(iter(m.done)))
        if d.stream is not None:
            d.counts = netstream.part_counts((d.lines[n] for n in d.order), d.seed)
        d.release()
        if d.stream is not None:
            self._part_written(m, d, now)
        return True

    def _confirm(self, m, d):
        """A for a dump written whole, signed with the machine's key; none
        for a machine no key proves."""
        if d.gave_up or d.kept != d.total:
            return
        if not m.verified or d.id[0] != m.nonce:
            if not m.unsigned_said:
                m.unsigned_said = True
                self.say(f'{m.mac}: {d.name} is whole in the log but cannot be confirmed: '
                         f'no key of this capture proves the machine (--session CODE or '
                         f'--key-file); the machine ends its wait after its bound and says '
                         f'it was not confirmed')
            return
        self.send(f'BT1 A {m.sign("A", d.text.encode())} {d.text}\n'.encode(), m.addr)
        d.confirmed = True

    # -- output -----------------------------------------------------------
    def send_keys(self, mac, keys):
        """Send keys (bytes) to a machine; False when no key of this
        capture proves it (nothing is sent)."""
        m = self.machines[mac]
        if not m.verified or m.nonce is None:
            return False
        for i in range(0, len(keys), KEYS_MAX):
            chunk = keys[i:i + KEYS_MAX]
            self.counter += 1
            words = f'{self.counter} '.encode() + chunk
            self.send(f'BT1 K {m.sign("K", words)} '.encode() + words, m.addr)
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
                if not d.lines or d.stream is not None:
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
                    self._streams_over(m, now)
                else:
                    self.say(f'{m.mac}: {d.name}: {count} lines arrived but could not be '
                             f'written to {m.path}')
            for s in list(m.streams.values()):
                self._end_stream(m, s, now, 'capture stopped before its final part arrived')
