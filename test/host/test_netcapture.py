"""capture --net's receiver (scripts/btlib/netcapture.py) against datagrams
the test writes as the kernel would (docs/network-protocol.md), then
scripts/capture --net itself against fake machines on
127.0.0.1 that play the kernel's side (announce, take signed keys, dump,
answer requests, check signed confirmations): a machine booted before
capture, a capture restarted mid-dump, a hostile sender, a relay that
corrupts bytes. Every log is read with the real decoder."""

import os
import random
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from btlib.dump import dumplog
from btlib.capture import netcapture, netdump
from btlib.capture import netkeys, siphash
from test_capture import gen_dump

CAPTURE = os.path.join(REPO, 'scripts', 'capture')
MAC = '5254001234ab'
NONCE = '0123456789ABCDEF'
CODE = 'K7QX2MABCDEFGHJK'
KEY = CODE.encode()
ADDR = ('127.0.0.1', 40000)
_DUMPS = {}


def seal(data, key=KEY, counter=0, nonce=NONCE):
    """A datagram in the form before seals ('BT1 T <mac> <seq>\\n...'),
    sealed as the kernel does (docs/network-protocol.md, "Sealed
    datagrams"): T gains the nonce, every header ' <counter> <tag>'."""
    head, _, body = data.partition(b'\n')
    if head.startswith(b'BT1 T ') and head.count(b' ') == 3:
        head += b' ' + nonce.encode()
    head += b' %d ' % counter
    msg = head + b'0' * 16 + b'\n' + body
    return head + b'%016x' % siphash.siphash24(key, msg) + b'\n' + body


class SealingReceiver(netcapture.Receiver):
    """The receiver, fed datagrams written in the old form and sealed here
    with a counter of its own (raw=True: as given)."""

    seal_key, seal_counter, nonce = KEY, 0, NONCE

    def feed(self, data, addr, now=None, raw=False):
        if not raw:
            words = data.split(b'\n', 1)[0].split(b' ')
            if len(words) > 3 and words[1] in (b'I', b'D', b'W', b'X'):
                self.nonce = words[3][:16].decode()
            self.seal_counter += 1
            data = seal(data, self.seal_key, self.seal_counter, self.nonce)
        super().feed(data, addr, now)


def dump_lines(nonce=NONCE, events=600):
    """A real dump's lines (gen_dump's), DUMP BEGIN first, each with its \\n."""
    key = (nonce, events)
    if key not in _DUMPS:
        out = gen_dump('cpus=2', f'events={events}', 'cap=2048', 'noise=0',
                       f'nonce=0x{nonce}')
        lines = out.splitlines(keepends=True)
        begin = next(i for i, l in enumerate(lines) if l.startswith(b'DUMP BEGIN'))
        _DUMPS[key] = [x.replace(b'\r\n', b'\n') for x in lines[begin:]]
    return _DUMPS[key]


def d_datagram(first, lines, mac=MAC, nonce=NONCE, dump=1):
    return f'BT1 D {mac} {nonce}.{dump} {first}\n'.encode() + b''.join(lines)


def signed_ok(data, mac, nonce, code):
    """(kind, rest) of a signed A/K datagram whose tag checks out, else None."""
    head, _, rest = data.partition(b'\n') if data.startswith(b'BT1 A ') else (data, b'', b'')
    words = head.split(b' ', 3)
    if len(words) < 4 or words[1] not in (b'A', b'K'):
        return None
    msg = f'{mac} {nonce} BT1 {words[1].decode()} '.encode() + words[3]
    if words[2].decode() != siphash.tag(code, msg):
        return None
    return words[1], words[3]


def verified_mark(mac, key='test'):
    return f"capture: verified: {mac}'s datagrams from here on were proven by key {key}\n" \
        .encode()


def signed_r(words, mac=MAC, nonce=NONCE, key=KEY):
    """A signed R datagram asking for `words` ('<id> <ranges>')."""
    msg = f'{mac} {nonce} BT1 R {words}'.encode()
    return f'BT1 R {siphash.siphash24(key, msg):016x} {words}\n'.encode()


class SipHash(unittest.TestCase):

    def test_paper_vector_and_key(self):
        self.assertEqual(siphash.siphash24(bytes(range(16)), bytes(range(15))),
                         0xa129ca6149be45e5)
        self.assertEqual(siphash.session_key('K7QX2M'), b'K7QX2M' + bytes(10))
        self.assertEqual(siphash.session_key(CODE), KEY)
        self.assertRegex(siphash.tag('K7QX2M', b'x'), r'\A[0-9a-f]{16}\Z')
        for n in range(0, 64, 7):            # every tail length, and more blocks
            self.assertNotEqual(siphash.siphash24(bytes(16), bytes(n)),
                                siphash.siphash24(bytes(16), bytes(n + 1)))


class Receiver(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='bt-netcap-test-')
        self.sent, self.said = [], []
        self.rx = self.receiver(CODE)

    def receiver(self, session, outdir=None, **kw):
        keys = [('test', session.encode())] if session else []
        return SealingReceiver(outdir or self.dir, lambda d, a: self.sent.append((d, a)),
                               self.said.append, keys, **kw)

    def readies(self):
        return [e for e in self.rx.events if e[0] == 'ready']

    def log(self, mac=MAC):
        self.rx.close()
        with open(os.path.join(self.dir, f'{mac}.log'), 'rb') as f:
            return f.read()

    def announce(self, rx=None, mac=MAC, nonce=NONCE, addr=ADDR):
        (rx or self.rx).feed(f'BT1 I {mac} {nonce} 0\nREADY cpus=2 ip=10.0.2.15\n'.encode(),
                             addr)

    def test_announcement_ready_signed_keys(self):
        self.rx.feed(f'BT1 T {MAC} 0\nhello\nREADY cpus=2\n'.encode(), ADDR)
        self.assertEqual(self.sent, [(b'BT1 H\n', ADDR)], 'a host listens')
        self.assertEqual(self.readies(), [], 'no keys before the boot nonce is known')
        self.announce()
        self.assertEqual(self.readies(), [('ready', MAC, NONCE)])
        self.assertEqual(self.sent, [(b'BT1 H\n', ADDR)] * 2, 'each announcement answered')
        self.announce()                    # again while idle: answered again
        self.assertEqual(self.sent, [(b'BT1 H\n', ADDR)] * 3)
        self.assertTrue(self.rx.send_keys(MAC, b'd' * 70))
        keys = [d for d, _ in self.sent[-2:]]
        counters = [int(k.split(b' ')[3]) for k in keys]
        self.assertLess(counters[0], counters[1])
        self.assertEqual([signed_ok(k, MAC, NONCE, CODE)[1].split(b' ', 1)[1] for k in keys],
                         [b'd' * 64, b'd' * 6])
        self.assertFalse(any(CODE.encode() in d for d, _ in self.sent), 'the code in clear')
        later = self.receiver(CODE, self.dir + '2')     # a capture started later counts higher
        self.announce(later)
        later.send_keys(MAC, b'd')
        self.assertGreater(int(self.sent[-1][0].split(b' ')[3]), counters[1])
        self.rx.ask(('127.0.0.1', 6666))
        self.assertEqual(self.sent[-1], (b'BT1 Q\n', ('127.0.0.1', 6666)))

    def test_keys_need_a_key_and_console_text_changes_nothing(self):
        rx = self.receiver(None)
        self.announce(rx)
        self.assertFalse(rx.send_keys(MAC, b'd'))
        rx.feed(f'BT1 T {MAC} 1\nnet: session code ABCD-EFGH-JKLM-NPQR (keys...)\n'
                .encode(), ADDR)
        self.assertFalse(rx.send_keys(MAC, b'd'), 'a console line is no key')
        self.assertFalse(rx.machines[MAC].verified)
        self.assertIn(b'capture: unverified: ', self.log())

    def test_missing_and_damaged_lines_asked_for_then_signed_confirmation(self):
        lines = dump_lines()
        n = len(lines)
        bad = bytearray(lines[4])
        bad[5] ^= 0x01
        self.rx.feed(d_datagram(0, lines[0:4] + [bytes(bad)] + lines[5:7]), ADDR)
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 {n} 5000\n'.encode(), ADDR, now=10.0)
        self.assertEqual(self.sent[-1], (signed_r(f'{NONCE}.1 4,7-{n - 1}'), ADDR))
        count = len(self.sent)
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 {n} 4800\n'.encode(), ADDR, now=10.2)
        self.assertEqual(len(self.sent), count, 'asked for already, within a round trip')
        self.rx.feed(d_datagram(4, lines[4:5]), ADDR, now=10.3)       # a round trip: 0.3 s
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 {n} 4600\n'.encode(), ADDR, now=10.4)
        self.assertEqual(len(self.sent), count)
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 {n} 4600\n'.encode(), ADDR, now=10.6)
        self.assertEqual(self.sent[-1], (signed_r(f'{NONCE}.1 7-{n - 1}'), ADDR))
        self.rx.feed(d_datagram(7, lines[7:]), ADDR)
        data, addr = self.sent[-1]
        self.assertEqual(signed_ok(data, MAC, NONCE, CODE), (b'A', f'{NONCE}.1'.encode()))
        self.assertEqual(addr, ADDR)
        self.assertRegex(self.said[-1], r'dump 1 complete: .*1 damaged copies refused')
        self.assertEqual(self.log(), verified_mark(MAC) + b''.join(lines))

    def test_no_confirmation_without_the_code(self):
        rx = self.receiver(None)
        lines = dump_lines()
        rx.feed(d_datagram(0, lines), ADDR)
        self.assertFalse([d for d, _ in self.sent if d.startswith(b'BT1 A')])
        self.assertRegex('\n'.join(self.said), r'cannot be confirmed: no key of this capture')

    def test_phantom_and_oversized_dumps(self):
        lines = dump_lines()
        self.rx.feed(d_datagram(0, lines[:6], dump=7), ADDR)          # a damaged dump id
        self.rx.feed(d_datagram(0, lines[:6]), ADDR)
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 50000000 60000\n'.encode(), ADDR)
        self.assertIn('refused its line count 50000000', '\n'.join(self.said))
        for dump in range(2, 40):                   # W for dumps never seen: no slot kept
            self.rx.feed(f'BT1 W {MAC} {NONCE}.{dump} 10 60000\n'.encode(), ADDR)
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 {len(lines)} 60000\n'.encode(), ADDR)
        self.rx.feed(d_datagram(6, lines[6:]), ADDR)
        dumps = dumplog.parse_log(self.log())
        self.assertEqual(len(dumps), 1, 'no phantom dump 7')
        self.assertTrue(dumps[0].complete, dumps[0].warnings)

    def test_addresses_bound_and_machines_bounded(self):
        rx = self.receiver(CODE, machines_max=3)
        self.announce(rx)
        rx.feed(f'BT1 T {MAC} 0\nreal\n'.encode(), ADDR)
        spoof = ('127.0.0.1', 40001)
        rx.feed(f'BT1 T {MAC} 1\nEVIL\n'.encode(), spoof)
        rx.feed(f'BT1 W {MAC} {NONCE}.1 10 5000\n'.encode(), spoof)
        self.assertFalse([a for _, a in self.sent if a == spoof], 'nothing to the spoofer')
        rx.feed(b'BT1 T 02000000000a 0\nother\n', ADDR)        # a second MAC here
        for i in range(1000):
            rx.feed(f'BT1 T 02{i:010x} 0\nx\n'.encode(), ('127.0.0.1', 50000 + i))
        self.assertEqual(len(rx.machines), 3)
        said = '\n'.join(self.said)
        self.assertIn(f'refused a datagram from 127.0.0.1:40001: this capture knows {MAC} '
                      f'at 127.0.0.1:40000', said)
        self.assertIn('which speaks for', said)
        self.assertIn('already keeps 3 machines', said)
        self.assertLess(len(self.said), 12, ('each refusal said once', self.said))
        rx.close()
        with open(os.path.join(self.dir, f'{MAC}.log'), 'rb') as f:
            self.assertNotIn(b'EVIL', f.read())

    def test_log_appended_with_marker_and_reboot_said(self):
        path = os.path.join(self.dir, f'{MAC}.log')
        with open(path, 'wb') as f:
            f.write(b'an earlier capture')
        self.rx.feed(f'BT1 T {MAC} 0\nboot one\n'.encode(), ADDR)
        self.announce()
        self.announce(nonce='1111111111111111')
        self.rx.feed(f'BT1 T {MAC} 0\nboot two\n'.encode(), ADDR)
        text = self.log()
        self.assertRegex(text, rb'\Aan earlier capture\ncapture: a new capture started at .*'
                               rb'\(18 bytes\)\ncapture: verified: 5254001234ab\'s datagrams '
                               rb'from here on were proven by key test\n'
                               rb'boot one\ncapture: 5254001234ab booted again '
                               rb'.*\(boot 1111111111111111, was 0123456789ABCDEF\)\nboot two\n\Z')
        self.assertIn(f'{MAC}: booted again', '\n'.join(self.said))
        # the first datagram, each of the two announcements, and the new
        # boot (its first proven datagram) each hear that a host listens
        self.assertEqual([d for d, _ in self.sent].count(b'BT1 H\n'), 4, 'the new boot hears it')

    def test_disk_full_loses_no_other_machine(self):
        os.symlink('/dev/full', os.path.join(self.dir, f'{MAC}.log'))
        other = '5254001234cd'
        lines = dump_lines()
        self.rx.feed(d_datagram(0, lines), ADDR)
        self.rx.feed(d_datagram(0, lines, mac=other), ('127.0.0.1', 40002))
        full = [s for s in self.said if 'No space left on device' in s]
        self.assertEqual(len(full), 1, self.said)
        self.assertNotIn(ADDR, [a for d, a in self.sent if d.startswith(b'BT1 A')],
                         'a dump not written is not confirmed')
        self.assertEqual(self.log(other), verified_mark(other) + b''.join(lines))

    def test_not_the_protocol(self):
        for junk in (b'', b'hello', b'BT1 T 5254 0\nx', f'BT1 D {MAC} nonce.1 0\nx\n'.encode(),
                     f'BT1 Q {MAC} 0\n'.encode(), f'BT1 W {MAC} {NONCE}.1 x 5\n'.encode(),
                     f'BT2 T {MAC} 0\nx'.encode(), f'BT1 T {MAC.upper()} 0\nx'.encode(),
                     b'BT1\n', b'BT1 T\n', b'\n'):
            self.rx.feed(junk, ADDR, raw=True)
        self.assertEqual(self.rx.bad, 11)
        self.assertEqual(self.readies(), [])

    def test_many_gaps_many_requests(self):
        missing = [(n, n) for n in range(0, 400, 2)]  # 200 single lines
        reqs = netdump.resend_requests((NONCE, 1), missing)
        self.assertEqual(len(reqs), 4)                # 64 ranges a datagram at most
        self.assertEqual(sum(n for _, n, _ in reqs), 200)
        for data, _, _ in reqs:
            self.assertLessEqual(len(data), netdump.REQUEST_MAX_BYTES)
            self.assertLessEqual(data.count(b',') + 1, netdump.RANGES_PER_REQUEST)
        self.assertEqual(netdump.ranges_text([(1, 3), (7, 7), (9, 10)]), ['1-3', '7', '9-10'])
        self.assertEqual(netdump.subtract([(0, 9), (20, 29)], [(3, 4), (8, 22)]),
                         [(0, 2), (5, 7), (23, 29)])


class Exact(unittest.TestCase):
    """Issue 33's bounds: strict wire numbers, a replay window, forged and
    unverified datagrams, memory bounded, W linear, refusals said
    rate-limited."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='bt-netcap-exact-')
        self.sent, self.said = [], []
        self.rx = SealingReceiver(self.dir, lambda d, a: self.sent.append((d, a)),
                                  self.said.append, [('test', KEY)])

    def test_wire_numbers_strict(self):
        for word in (b'0', b'7', b'18446744073709551615'):
            self.assertEqual(netcapture.decimal(word), int(word))
        for word in (b'-5', b'+5', b'1_000', b'007', b' 7', b'7 ', b'', b'1e3', b'\xd9\xa3',
                     b'4' * 40, b'18446744073709551616'):
            with self.assertRaises(ValueError, msg=word):
                netcapture.decimal(word)
        with self.assertRaises(ValueError):
            netcapture.decimal(b'4294967296', netcapture.LINE_NO_MAX)
        self.rx.feed(f'BT1 I {MAC} {NONCE} 0\nREADY cpus=2\n'.encode(), ADDR)
        for seq in ('-5', '1_000', '4' * 40, '+3'):
            self.rx.feed(f'BT1 T {MAC} {seq}\nx\n'.encode(), ADDR)
        for head in (f'BT1 W {MAC} {NONCE}.1 -5 5000', f'BT1 W {MAC} {NONCE}.01 5 5000',
                     f'BT1 D {MAC} {NONCE}.1 1_0'):
            self.rx.feed(head.encode() + b'\n', ADDR)
        self.assertEqual(self.rx.bad, 7)
        self.assertEqual(self.rx.machines[MAC].text_lost, 0)
        sealed = seal(f'BT1 T {MAC} 3\nx\n'.encode(), KEY, 1)
        self.rx.feed(sealed.replace(b' 1 ', b' -1 ', 1), ADDR, raw=True)   # its counter
        self.assertEqual(self.rx.bad, 8)

    def test_forged_replayed_and_unverified(self):
        self.rx.feed(f'BT1 I {MAC} {NONCE} 0\nREADY cpus=2\n'.encode(), ADDR)
        m = self.rx.machines[MAC]
        self.assertTrue(m.verified)
        good = seal(f'BT1 T {MAC} 1\nonce\n'.encode(), KEY, 50)
        self.rx.feed(good, ADDR, raw=True)
        self.rx.feed(good, ADDR, raw=True)                              # a replay
        self.rx.feed(seal(f'BT1 T {MAC} 2\nlate\n'.encode(), KEY, 49), ADDR, raw=True)
        self.rx.feed(seal(f'BT1 T {MAC} 3\nold\n'.encode(), KEY, 50 - 5000), ADDR, raw=True)
        forged = bytearray(seal(f'BT1 T {MAC} 4\nEVIL\n'.encode(), KEY, 60))
        forged[-2] ^= 1                                                 # the body changed
        self.rx.feed(bytes(forged), ADDR, raw=True)
        self.rx.feed(seal(f'BT1 I {MAC} 2222222222222222 0\nREADY\n'.encode(), bytes(16), 61),
                     ADDR, raw=True)                                    # another key's boot
        self.assertEqual((m.replayed, m.forged), (1, 2))
        self.assertEqual(m.nonce, NONCE, 'a new boot believed only when proven')
        self.rx.close()
        with open(m.path, 'rb') as f:
            log = f.read()
        self.assertIn(b'once\nlate\n', log)
        self.assertNotIn(b'old', log)
        self.assertNotIn(b'EVIL', log)
        # A machine no key proves: recorded, marked, never sent keys.
        other = '5254001234cd'
        self.rx.feed(seal(f'BT1 I {other} {NONCE} 0\nREADY\n'.encode(), bytes(16), 1),
                     ('127.0.0.1', 40001), raw=True)
        self.assertFalse(self.rx.machines[other].verified)
        self.assertFalse(self.rx.send_keys(other, b'd'))
        self.rx.feed(seal(f'BT1 T {other} 0\nhello\n'.encode(), bytes(16), 2),
                     ('127.0.0.1', 40001), raw=True)
        with open(self.rx.machines[other].path, 'rb') as f:
            self.assertTrue(f.read().startswith(b'capture: unverified: '))

    def test_refusals_said_rate_limited(self):
        self.rx.feed(f'BT1 I {MAC} {NONCE} 0\nREADY cpus=2\n'.encode(), ADDR)
        for i in range(2000):
            self.rx.feed(seal(f'BT1 X {MAC} {NONCE}.1 5 5\n'.encode(), bytes(16), i), ADDR,
                         raw=True, now=100.0 + i / 1000)
        lines = [s for s in self.said if 'does not prove' in s]
        self.assertLessEqual(len(lines), 3, lines)
        self.assertRegex(lines[-1], r'\(\d+ more like it not said\)')
        self.assertEqual(self.rx.machines[MAC].forged, 2000)

    def test_memory_bound_and_linear_w(self):
        self.rx.feed(f'BT1 I {MAC} {NONCE} 0\nREADY cpus=2\n'.encode(), ADDR)
        lines = dump_lines(events=4000)
        n = len(lines)
        old = netcapture.HELD_MAX
        netcapture.HELD_MAX = sum(len(x) + 1 + netcapture.LINE_COST for x in lines[0::2])
        try:
            for at in range(0, n, 2):                                  # every other line
                self.rx.feed(d_datagram(at, lines[at:at + 1]), ADDR)
            d = next(iter(self.rx.machines[MAC].dumps.values()))
            self.assertEqual(self.rx.held_refused, 0)
            self.rx.feed(f'BT1 W {MAC} {NONCE}.1 {n} 5000\n'.encode(), ADDR, now=1.0)
            asks = [x for x, _ in self.sent if x.startswith(b'BT1 R ')]
            self.assertTrue(0 < len(asks) <= netcapture.REQUESTS_PER_WAIT, asks)
            self.assertEqual(d.missing_ranges(limit=10)[:2], [(1, 1), (3, 3)])
            for at in range(1, n, 2):                                  # beyond the bound
                self.rx.feed(d_datagram(at, lines[at:at + 1]), ADDR)
            self.assertLessEqual(self.rx.held, netcapture.HELD_MAX)
            self.assertEqual(self.rx.held_refused, n // 2)
            self.assertEqual(len([s for s in self.said if 'MiB of lines are held' in s]), 1)
        finally:
            netcapture.HELD_MAX = old
        for at in range(1, n, 2):                                      # asked again: taken
            self.rx.feed(d_datagram(at, lines[at:at + 1]), ADDR)
        self.assertTrue(d.written)
        self.assertEqual(self.rx.held, 0, 'nothing held once written')
        with open(self.rx.machines[MAC].path, 'rb') as f:
            self.assertTrue(dumplog.parse_log(f.read())[-1].complete)


class FakeMachine:
    """The kernel's side of the protocol on 127.0.0.1: announces itself,
    takes keys only with a good tag and a rising counter, dumps on 'd',
    answers R, ends its wait on a good A; loses or damages a share of its
    dump datagrams when asked to."""

    def __init__(self, mac, nonce, code, dest, announce_s=0.5, drop=0.0, corrupt=0.0,
                 seed=1, text=b'', delay=0.0):
        self.mac, self.nonce, self.code, self.dest = mac, nonce, code, dest
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(('127.0.0.1', 0))
        self.lines = dump_lines(nonce)
        self.sock.settimeout(0)
        self.rng = random.Random(seed)
        self.drop, self.corrupt, self.announce_s = drop, corrupt, announce_s
        self.delay, self.later = delay, []      # resends answered `delay` s late
        self.resent = 0
        self.next_announce = 0.0
        self.seq = self.iseq = 0
        self.counter = 0
        self.dumping = False
        self.next_w = None
        self.confirmed = False
        self.refused = []                     # datagrams whose tag or counter failed
        self.got = []
        self.sent_dump = 0
        self.sealed = 0
        if text:
            self.text(text)

    def sendto(self, data, dest):
        """Every datagram sealed with the code's key, as the kernel does."""
        self.sealed += 1
        self.sock.sendto(seal(data, self.code.encode(), self.sealed, self.nonce), dest)

    def text(self, data):
        self.sendto(f'BT1 T {self.mac} {self.seq}\n'.encode() + data, self.dest)
        self.seq += 1

    def boot(self):
        self.text(b'READY cpus=2 net=e1000:00:03.0 ip=10.0.2.15\n')
        self.announce()

    def announce(self, to=None):
        self.sendto(f'BT1 I {self.mac} {self.nonce} {self.iseq}\nREADY cpus=2 '
                    f'net=e1000:00:03.0 ip=10.0.2.15\n'.encode(), to or self.dest)
        self.iseq += 1

    def dump(self, upto=None):
        self.dumping, self.confirmed = True, False
        self.send_lines(range(0, len(self.lines) if upto is None else upto))
        self.next_w = time.monotonic()

    def send_lines(self, numbers):
        runs = []
        for n in numbers:
            if runs and n == runs[-1][-1] + 1 and len(runs[-1]) < 6:
                runs[-1].append(n)
            else:
                runs.append([n])
        for chunk in runs:
            body = [self.lines[n] for n in chunk]
            if self.rng.random() < self.corrupt:
                k = self.rng.randrange(len(body))
                b = bytearray(body[k])
                b[self.rng.randrange(len(b) - 1)] ^= 0x04
                body[k] = bytes(b)
            self.sent_dump += 1
            if self.rng.random() >= self.drop:
                self.sendto(d_datagram(chunk[0], body, self.mac, self.nonce), self.dest)

    def step(self, now):
        while self.later and self.later[0][0] <= now:
            self.send_lines(self.later.pop(0)[1])
        while select.select([self.sock], [], [], 0)[0]:
            data, addr = self.sock.recvfrom(65536)
            self.got.append((data, addr))
            self.handle(data, addr)
        if not self.dumping and self.announce_s and now >= self.next_announce:
            self.next_announce = now + self.announce_s
            self.announce()
        if self.dumping and now >= self.next_w:
            self.next_w = now + 0.2
            self.sendto(f'BT1 W {self.mac} {self.nonce}.1 {len(self.lines)} 5000\n'
                        .encode(), self.dest)

    def handle(self, data, addr):
        if data == b'BT1 Q\n':
            self.announce(addr)
        elif data.startswith(b'BT1 R ') and self.dumping:
            want = []
            for part in data.split()[-1].decode().split(','):
                a, _, b = part.partition('-')
                want += range(int(a), int(b or a) + 1)
            self.resent += len(want)
            self.later.append((time.monotonic() + self.delay, want))
        elif data.startswith((b'BT1 A ', b'BT1 K ')):
            ok = signed_ok(data, self.mac, self.nonce, self.code)
            if ok is None:
                self.refused.append(data)
            elif ok[0] == b'A' and ok[1] == f'{self.nonce}.1'.encode() and self.dumping:
                self.dumping, self.confirmed = False, True
            elif ok[0] == b'K':
                counter, _, keys = ok[1].partition(b' ')
                if int(counter) <= self.counter:
                    self.refused.append(data)
                else:
                    self.counter = int(counter)
                    if b'd' in keys and not self.dumping:
                        self.dump()


def pump(machines, until, timeout, extra=None):
    deadline = time.monotonic() + timeout
    while not until() and time.monotonic() < deadline:
        now = time.monotonic()
        for m in machines:
            m.step(now)
        if extra:
            extra()
        time.sleep(0.01)
    return until()


class CaptureNet(unittest.TestCase):
    """scripts/capture --net as a user runs it, against fake machines."""

    def start(self, out, port, *args, limit_files=None):
        def limits():
            if limit_files:
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit_files, limit_files))
        err = tempfile.NamedTemporaryFile('w+', prefix='bt-netcap-said-', delete=False)
        store = tempfile.mkdtemp(prefix='bt-netcap-keys-')     # no key store of this host
        proc = subprocess.Popen([sys.executable, CAPTURE, '--net', '--listen',
                                 f'127.0.0.1:{port}', '-o', out, *args],
                                stdout=err, stderr=subprocess.STDOUT, preexec_fn=limits,
                                env=dict(os.environ, BARETRACE_KEYS=store))
        proc.said = lambda: read_text(err.name)
        self.addCleanup(stop, proc)
        deadline = time.monotonic() + 60
        while 'listening on' not in proc.said() and proc.poll() is None and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        return proc

    def log_dumps(self, out, mac):
        with open(os.path.join(out, f'{mac}.log'), 'rb') as f:
            text = f.read()
        return text, dumplog.parse_log(text)

    def check_whole(self, dump, lines):
        self.assertTrue(dump.complete, dump.warnings)
        self.assertEqual((dump.damaged_lines, dump.missing_lines), (0, 0))
        self.assertEqual(dump.end_events, sum(len(c.events) for c in dump.cpus))
        self.assertEqual(dump.header.get('nonce'), re.search(
            rb'nonce=([0-9A-F]{16})', lines[0]).group(1).decode())

    def test_machine_booted_first_then_key_with_session(self):
        port, out = free_port(), tempfile.mkdtemp(prefix='bt-netcap-cli-')
        m = FakeMachine(MAC, NONCE, CODE, ('127.0.0.1', port), drop=0.2)
        m.boot()                                  # nobody listens yet: lost
        cap = self.start(out, port, '--key', 'd', '--session', CODE, '--until-dump',
                         '--timeout', '60')
        self.assertTrue(pump([m], lambda: cap.poll() is not None, 70), cap.said())
        said = cap.said()
        self.assertEqual(cap.returncode, 0, said)
        self.assertTrue(m.confirmed, said)
        self.assertEqual(m.refused, [])
        self.assertIn(f'{MAC} at 127.0.0.1:', said)
        self.assertIn(f"{MAC}: sent 'd'", said)
        self.check_whole(self.log_dumps(out, MAC)[1][-1], m.lines)

    def test_ask_who_is_there(self):
        port, out = free_port(), tempfile.mkdtemp(prefix='bt-netcap-cli-')
        m = FakeMachine(MAC, NONCE, CODE, ('127.0.0.1', port), announce_s=0)   # silent
        cap = self.start(out, port, '--ask', f'127.0.0.1:{m.sock.getsockname()[1]}',
                         '--key', 'd', '--session', CODE, '--until-dump', '--timeout', '60')
        self.assertTrue(pump([m], lambda: cap.poll() is not None, 70), cap.said())
        self.assertEqual(cap.returncode, 0, cap.said())
        self.assertIn((b'BT1 Q\n', ('127.0.0.1', port)), m.got)
        self.assertTrue(m.confirmed)

    def test_capture_restarted_mid_dump_keeps_the_log(self):
        port, out = free_port(), tempfile.mkdtemp(prefix='bt-netcap-cli-')
        m = FakeMachine(MAC, NONCE, CODE, ('127.0.0.1', port), announce_s=0)
        first = self.start(out, port, '--session', CODE)
        m.text(b'text the first capture got\n')
        m.boot()
        m.dump(upto=len(m.lines) // 2)          # and no W yet: the first capture ends
        time.sleep(1.0)
        stop(first)
        self.assertIn('incomplete at exit', first.said())
        second = self.start(out, port, '--session', CODE, '--until-dump', '--timeout', '60')
        self.assertTrue(pump([m], lambda: second.poll() is not None, 70), second.said())
        self.assertEqual(second.returncode, 0, second.said())
        self.assertTrue(m.confirmed)
        text, dumps = self.log_dumps(out, MAC)
        self.assertTrue(text.startswith(verified_mark(MAC, 'of session code K7QX-2MAB-CDEF-GHJK')
                                        + b'text the first capture got\n'), text[:200])
        self.assertIn(b'\ncapture: a new capture started at ', text)
        self.check_whole(dumps[-1], m.lines)

    def test_hostile_sender_changes_nothing(self):
        port, out = free_port(), tempfile.mkdtemp(prefix='bt-netcap-cli-')
        dest = ('127.0.0.1', port)
        other_mac, other_nonce, other_code = '5254001234cd', 'FEDCBA9876543210', \
            'ZZ23QPZZ23QPZZ23'
        a = FakeMachine(MAC, NONCE, CODE, dest)
        key_file = os.path.join(out, 'other.key')
        with open(key_file, 'w') as f:
            f.write(other_code.encode().hex() + '\n')
        cap = self.start(out, port, '--session', CODE, '--key-file', key_file, '--key', 'd',
                         '--mac', MAC, '--mac', other_mac, '--timeout', '120', limit_files=32)
        b = FakeMachine(other_mac, other_nonce, other_code, dest, seed=2,
                        text=f'net: session code {CODE} (a forged console line)\n'.encode())
        a.boot()
        b.boot()
        evil = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
        for s in evil:
            s.bind(('127.0.0.1', 0))
        flood = iter(range(1 << 30))

        def hostile():
            for _ in range(40):
                hostile_datagrams(evil, dest, next(flood), MAC, NONCE)

        done = pump([a, b], lambda: a.confirmed and b.confirmed and next(flood) > 3000, 100,
                    hostile)
        peak_kib = peak_rss_kib(cap.pid)
        stop(cap)
        said = cap.said()
        self.assertTrue(done, said[-3000:])
        self.assertNotIn('Traceback', said)
        self.assertLess(peak_kib, 100 * 1024, 'capture grew with what was announced')
        spoofer_got(self, evil, (CODE, other_code))
        self.assertEqual((a.refused, b.refused), ([], []))
        for m in (a, b):
            text, dumps = self.log_dumps(out, m.mac)
            self.assertNotIn(b'EVIL', text)
            self.check_whole(dumps[-1], m.lines)
        self.assertIn('refused', said)

    def test_slow_link_asks_once_a_round_trip(self):
        port, out = free_port(), tempfile.mkdtemp(prefix='bt-netcap-cli-')
        m = FakeMachine(MAC, NONCE, CODE, ('127.0.0.1', port), drop=0.3, delay=0.5, seed=3)
        cap = self.start(out, port, '--session', CODE, '--key', 'd', '--until-dump',
                         '--timeout', '60')
        m.boot()
        self.assertTrue(pump([m], lambda: cap.poll() is not None, 70), cap.said())
        self.assertEqual(cap.returncode, 0, cap.said())
        lost = m.sent_dump - len(m.lines) // 6    # about: datagrams of the first pass lost
        # Lines asked once a round trip: 42 here; asked again on every W
        # (each 0.2 s, answers 0.5 s late): 102.
        self.assertLess(m.resent, 70, (m.resent, lost, cap.said()))
        self.check_whole(self.log_dumps(out, MAC)[1][-1], m.lines)

    def test_corrupting_relay_asks_again(self):
        port, out = free_port(), tempfile.mkdtemp(prefix='bt-netcap-cli-')
        m = FakeMachine(MAC, NONCE, CODE, ('127.0.0.1', port), corrupt=0.3, drop=0.1)
        cap = self.start(out, port, '--session', CODE, '--key', 'd', '--until-dump',
                         '--timeout', '60')
        m.boot()
        self.assertTrue(pump([m], lambda: cap.poll() is not None, 70), cap.said())
        said = cap.said()
        self.assertEqual(cap.returncode, 0, said)
        self.assertTrue(m.confirmed)
        self.assertRegex(said, r'dump 1 complete: .*asked again for [1-9]\d* lines .*'
                               r' [1-9]\d* damaged copies refused')
        text, dumps = self.log_dumps(out, MAC)
        self.check_whole(dumps[-1], m.lines)
        self.assertIn(b''.join(m.lines), text, 'equal to what the machine sent')


class Keys(unittest.TestCase):
    """netkeys: the session code typed any way, key files, the key store."""

    def test_codes_files_and_store(self):
        self.assertEqual(netkeys.parse_code('k7qx-2mab cdef-GHJK'), CODE)
        for bad in ('K7QX2M', 'K7QX-2MAB-CDEF-GHJ0', 'K7QX-2MAB-CDEF-GHJKL', ''):
            self.assertIsNone(netkeys.parse_code(bad), bad)
        self.assertEqual(netkeys.grouped(CODE), 'K7QX-2MAB-CDEF-GHJK')
        self.assertEqual(netkeys.code_key(CODE), KEY)
        store = tempfile.mkdtemp(prefix='bt-netcap-keys-')
        os.environ['BARETRACE_KEYS'] = store
        try:
            path = os.path.join(store, 'lab.key')
            key = netkeys.made_once(path)
            self.assertEqual(netkeys.made_once(path), key, 'made once')
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
            netkeys.remember('stick-1', '00' * 16)
            with open(os.path.join(store, 'junk.key'), 'w') as f:
                f.write('not a key\n')
            keys, notes = netkeys.load_store()
            self.assertEqual(sorted(k.hex() for _, k in keys), sorted([key, '00' * 16]))
            self.assertEqual(len(notes), 1)
            self.assertIn('not a key file', notes[0])
        finally:
            del os.environ['BARETRACE_KEYS']


class QemuMacs(unittest.TestCase):
    """make run NET= (scripts/run-qemu --net) gives each QEMU a MAC of its own."""

    def argv(self, *args):
        iso = tempfile.NamedTemporaryFile(suffix='.iso')
        self.addCleanup(iso.close)
        store = tempfile.mkdtemp(prefix='bt-netcap-keys-')
        r = subprocess.run([sys.executable, os.path.join(REPO, 'scripts', 'run-qemu'), '--iso',
                            iso.name, '--accel', 'tcg', '--net', 'e1000', *args,
                            '--print-argv'], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, BARETRACE_KEYS=store))
        self.assertEqual(r.returncode, 0, r.stderr)
        key = netkeys.read_file(os.path.join(store, 'run-qemu.key')).hex()
        self.assertEqual(os.stat(os.path.join(store, 'run-qemu.key')).st_mode & 0o777, 0o600)
        self.assertIn(f'net.key={key}', r.stdout, 'make run hands its key to the kernel')
        return re.findall(r'e1000,netdev=net0,mac=([0-9a-f:]{17})', r.stdout)

    def test_distinct_unless_told(self):
        first, second = self.argv(), self.argv()
        self.assertEqual((len(first), len(second)), (1, 1))
        self.assertNotEqual(first, second)
        for mac in first + second:
            self.assertTrue(mac.startswith('52:54:00:') and mac != '52:54:00:12:34:56', mac)
        self.assertEqual(self.argv('--mac', '52-54-00-AB-CD-EF'), ['52:54:00:ab:cd:ef'])


def hostile_datagrams(socks, dest, i, victim, nonce):
    """The i-th round of a hostile sender: huge line counts, a new MAC
    each round (announced READY too), and datagrams in the victim's MAC."""
    s = socks[i % len(socks)]
    fake = f'02{i:010x}'
    for data in (f'BT1 W {fake} {nonce}.1 50000000 60000\n',
                 f'BT1 I {fake} {nonce} 0\nREADY cpus=1\n',
                 f'BT1 T {fake} 0\nREADY cpus=1\n',
                 f'BT1 T {victim} {i}\nEVIL TEXT\n',
                 f'BT1 W {victim} {nonce}.1 50000000 60000\n',
                 f'BT1 I {victim} 2222222222222222 0\nREADY cpus=1\n'):
        s.sendto(data.encode(), dest)
    s.sendto(d_datagram(0, dump_lines()[:3], fake, nonce), dest)
    s.sendto(d_datagram(0, dump_lines()[:3], victim, nonce), dest)


def spoofer_got(testcase, socks, codes):
    """Fail if any datagram a hostile socket received is a key, a
    confirmation, or holds a session code."""
    for s in socks:
        while select.select([s], [], [], 0)[0]:
            data = s.recv(65536)
            testcase.assertFalse(data.startswith((b'BT1 K', b'BT1 A')), data)
            for code in codes:
                testcase.assertNotIn(code.encode(), data)


def peak_rss_kib(pid):
    with open(f'/proc/{pid}/status') as f:
        return int(re.search(r'VmHWM:\s+(\d+) kB', f.read()).group(1))


def read_text(path):
    with open(path) as f:
        return f.read()


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def free_port():
    """A UDP port on 127.0.0.1 free a moment ago (also for test/boot/test_net.py)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


if __name__ == '__main__':
    unittest.main()
