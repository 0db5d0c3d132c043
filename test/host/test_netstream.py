"""capture --net receiving a stream (docs/streaming.md): its parts, each a
dump whose DUMP BEGIN says `stream=S part=K [final=1]`, written to the
machine's log as each becomes whole, the stream's account said while it
runs and when it ends, parts that never came or came incomplete counted,
--until-dump not ended by a part, --until-stream, and a capture's memory
that does not grow with the stream's length. The receiver is fed parts as
the kernel sends them; then scripts/capture --net itself against a fake
machine on 127.0.0.1 that streams with at most 2 parts unconfirmed, as the
kernel does. The end-to-end tests with the real kernel are
test/boot/test_stream.py."""

import os
import random
import re
import select
import socket
import subprocess
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
sys.path.insert(0, HERE)
from btlib.dump import dumpfmt, dumplog
from btlib.capture import netstream
import test_netcapture as nc

MAC, NONCE, CODE, ADDR = nc.MAC, nc.NONCE, nc.CODE, nc.ADDR
DECODE = os.path.join(REPO, 'scripts', 'decode')
CAP = 256


def text_line(body, seed):
    return b'%s *%08X\n' % (body, zlib.crc32(body, seed))


def part_lines(dump_no, stream, part, final=False, counts=((10, 0, 0), (12, 3, 1)),
               base=None, nonce=NONCE):
    """A stream's part as the kernel's lines would be, with no event
    lines (capture checks CRCs and numbers, not events): DUMP BEGIN with
    stream=/part=, a short %M, a %C per CPU with `counts` (sent,
    overwritten, excluded), DUMP END."""
    seed = dumpfmt.dump_seed(int(nonce, 16), dump_no)
    events = sum(c[0] for c in counts)
    flag = b' final=1' if final else b''
    out = [text_line(b'DUMP BEGIN v=2 dump=%d nonce=%s cpus=%d events=%d stream=%d part=%d%s'
                     % (dump_no, nonce.encode(), len(counts), events, stream, part, flag), 0),
           text_line(b'%%M 1 tsc_hz=2400000000 uptime_tsc=%d capacity=%d stream=%d part=%d'
                     % (1000 + part, CAP, stream, part), seed)]
    for cpu, (sent, over, excl) in enumerate(counts):
        lo = base if base is not None else part * 100
        hi = lo + sent + over + excl
        out.append(text_line(b'%%C %d cpu=%d apic=%d cap=%d base=%d head=%d recorded=%d '
                             b'overwritten=%d excluded=%d refused=0 sent=%d'
                             % (len(out), cpu, cpu, CAP, lo, hi, hi - lo, over, excl, sent),
                             seed))
    out.append(text_line(b'DUMP END dump=%d nonce=%s events=%d lines=%d'
                         % (dump_no, nonce.encode(), events, len(out) + 1), seed))
    return out


def hotkey_lines(dump_no):
    """A real dump (gen_dump's), numbered dump_no."""
    out = nc.gen_dump('cpus=2', 'events=300', 'cap=2048', 'noise=0', f'dump={dump_no}',
                      f'nonce=0x{NONCE}')
    lines = out.splitlines(keepends=True)
    begin = next(i for i, x in enumerate(lines) if x.startswith(b'DUMP BEGIN'))
    return [x.replace(b'\r\n', b'\n') for x in lines[begin:]]


class Parts(unittest.TestCase):
    """The receiver, fed a stream's datagrams as the kernel sends them."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='bt-netstream-test-')
        self.sent, self.said = [], []
        self.rx = nc.SealingReceiver(self.dir, lambda d, a: self.sent.append((d, a)),
                                     self.said.append, [('test', CODE.encode())])
        self.rx.feed(f'BT1 I {MAC} {NONCE} 0\nREADY cpus=2 ip=10.0.2.15\n'.encode(), ADDR)

    def path(self):
        return os.path.join(self.dir, f'{MAC}.log')

    def text(self):
        with open(self.path(), 'rb') as f:
            return f.read()

    def send(self, dump_no, lines, now=None, skip=(), w=True):
        for i in range(0, len(lines), 3):
            if i not in skip:
                self.rx.feed(nc.d_datagram(i, lines[i:i + 3], dump=dump_no), ADDR, now=now)
        if w:
            self.rx.feed(f'BT1 W {MAC} {NONCE}.{dump_no} {len(lines)} 5000\n'.encode(), ADDR,
                         now=now)

    def confirmed(self, dump_no):
        return any(nc.signed_ok(d, MAC, NONCE, CODE) == (b'A', f'{NONCE}.{dump_no}'.encode())
                   for d, _ in self.sent)

    def kinds(self, *which):
        return [(k, x.part if k.startswith('part') else getattr(x, 'number', None))
                for k, _, x in self.rx.events if k in which]

    def test_parts_written_as_each_is_whole_and_the_stream_said_once(self):
        parts = [part_lines(n, 1, k, final=(k == 3)) for k, n in enumerate((1, 2, 4, 5))]
        hotkey = hotkey_lines(3)
        for k, (n, lines) in enumerate(zip((1, 2, 4, 5), parts)):
            if n == 4:
                self.send(3, hotkey)              # a hotkey dump between two parts
                self.assertTrue(self.confirmed(3))
            self.send(n, lines)
            self.assertTrue(self.confirmed(n), f'part {k} confirmed')
            self.assertTrue(self.text().endswith(b''.join(lines)), f'part {k} in the log now')
        self.assertEqual(self.kinds('part_done', 'dump_done', 'stream_end'),
                         [('part_done', 0), ('part_done', 1), ('dump_done', None),
                          ('part_done', 2), ('part_done', 3), ('stream_end', 1)])
        ended = [s for s in self.said if 'ended' in s]
        self.assertEqual(len(ended), 1, self.said)
        self.assertRegex(ended[0], rf'{MAC}: stream 1 \(boot {NONCE}\) ended, complete: 88 '
                                   r'events from 2 CPUs \(fewest on one CPU: 40\) in 4 parts '
                                   r'.*; 12 overwritten before they were streamed, 4 '
                                   r'excluded; 0 parts never arrived, 0 incomplete')
        self.assertFalse([s for s in self.said if re.search(r'part \d+ .*complete', s)],
                         'no line per part')
        dumps = dumplog.parse_log(self.text())
        self.assertEqual([(d.header.get('stream'), d.header.get('part')) for d in dumps],
                         [('1', '0'), ('1', '1'), (None, None), ('1', '2'), ('1', '3')])
        self.assertTrue(dumps[2].complete, dumps[2].warnings)
        self.rx.close()
        self.assertEqual(len([s for s in self.said if 'ended' in s]), 1, 'said once')

    def test_the_encoders_parts_said_as_their_counters_say(self):
        # gen_dump writes parts with the kernel's encoder; the 40-event
        # chunk laps a 16-slot ring: overwritten before streamed.
        out = nc.gen_dump('cpus=4', 'events=400', 'cap=16', 'noise=0', 'stream=1', 'parts=5',
                          'chunks=10,30,10,5,40', f'nonce=0x{NONCE}')
        lines = [x.replace(b'\r\n', b'\n') for x in out.splitlines(keepends=True)]
        begins = [i for i, x in enumerate(lines) if x.startswith(b'DUMP BEGIN')] + [len(lines)]
        sent = overwritten = 0
        for n, (a, b) in enumerate(zip(begins, begins[1:]), 1):
            self.send(n, lines[a:b])
            self.assertTrue(self.confirmed(n))
            for x in lines[a:b]:
                if x.startswith(b'%C '):
                    sent += int(re.search(rb' sent=(\d+)', x).group(1))
                    overwritten += int(re.search(rb' overwritten=(\d+)', x).group(1))
        self.assertGreater(overwritten, 0)
        ended = [s for s in self.said if 'ended' in s]
        self.assertRegex(ended[0], rf'ended, complete: {sent} events from 4 CPUs .* in 5 parts '
                                   rf'.*; {overwritten} overwritten before they were streamed')
        self.assertIn(b''.join(lines[begins[0]:]), self.text())

    def test_missing_and_incomplete_parts_counted(self):
        self.send(1, part_lines(1, 2, 0))
        self.send(2, part_lines(2, 2, 1), skip=(3,))     # line 3 never comes ...
        self.send(3, part_lines(3, 2, 2))                # ... and part 2 is here:
        self.assertNotIn(3, self.rx.machines[MAC].dumps)  # (written at once)
        self.rx.feed(f'BT1 W {MAC} {NONCE}.4 5 5000\n'.encode(), ADDR)
        self.rx.feed(f'BT1 X {MAC} {NONCE}.4 5 5\n'.encode(), ADDR)   # part 3: no line came
        self.send(5, part_lines(5, 2, 4))                # so part 1 is over for the machine
        self.assertRegex(' '.join(self.said), r'stream 2 part 1 \(dump 2\) incomplete: the '
                                              r'machine went on to part 4 without it; 3 of '
                                              r'5 lines arrived intact')
        self.assertNotIn((NONCE, 2), self.rx.machines[MAC].dumps)
        self.send(6, part_lines(6, 2, 5, final=True))
        ended = [s for s in self.said if 'ended' in s]
        self.assertEqual(len(ended), 1, self.said)
        self.assertRegex(ended[0], r'stream 2 .* ended, NOT complete: parts are missing or '
                                   r'incomplete: .* in 5 parts .* 1 parts never arrived, 1 '
                                   r'incomplete')

    def test_stream_without_its_final_part_at_exit(self):
        self.send(1, part_lines(1, 1, 0))
        self.send(2, part_lines(2, 1, 1), skip=(3,), w=False)
        self.rx.close()
        ended = [s for s in self.said if 'ended' in s]
        self.assertEqual(len(ended), 1, self.said)
        self.assertRegex(ended[0], r'NOT complete: capture stopped before its final part '
                                   r'arrived: 32 events .* in 2 parts .* 1 incomplete')
        self.assertEqual(self.kinds('stream_end'), [('stream_end', 1)])

    def test_the_end_waits_for_a_part_whose_begin_is_late(self):
        self.send(1, part_lines(1, 1, 0))
        late = part_lines(2, 1, 1)
        self.send(2, late, skip=(0,))            # its DUMP BEGIN lost: a part? not known yet
        self.send(3, part_lines(3, 1, 2, final=True))
        self.assertFalse([s for s in self.said if 'ended' in s], 'dump 2 may be a part')
        self.rx.feed(nc.d_datagram(0, late[:3], dump=2), ADDR)    # the resend
        ended = [s for s in self.said if 'ended' in s]
        self.assertEqual(len(ended), 1, self.said)
        self.assertRegex(ended[0], r'ended, complete: 66 events .* in 3 parts')

    def test_a_new_boot_ends_the_old_boots_stream(self):
        self.send(1, part_lines(1, 1, 0))
        self.rx.feed(f'BT1 I {MAC} FEDCBA9876543210 0\nREADY cpus=2\n'.encode(), ADDR)
        ended = [s for s in self.said if 'ended' in s]
        self.assertEqual(len(ended), 1, self.said)
        self.assertRegex(ended[0], rf'stream 1 \(boot {NONCE}\) ended, NOT complete: the '
                                   r'machine booted again before its final part came: 22 '
                                   r'events')

    def test_progress_at_most_every_five_seconds(self):
        for k in range(41):                      # a part a quarter second, 10 s
            self.send(k + 1, part_lines(k + 1, 1, k), now=100.0 + k / 4)
            self.said += self.rx.stream_progress(now=100.0 + k / 4)
        going = [s for s in self.said if 'going on' in s]
        self.assertEqual(len(going), 2, going)
        self.assertRegex(going[-1], rf'{MAC}: stream 1 \(boot {NONCE}\) going on: \d+ events '
                                    r'from 2 CPUs')

    def test_a_long_stream_holds_nothing(self):
        rx, m = self.rx, self.rx.machines[MAC]
        counts = ((5, 0, 0), (5, 0, 0))
        size = 0
        for k in range(3000):
            lines = part_lines(k + 1, 1, k, final=(k == 2999), counts=counts, base=10 * k)
            self.send(k + 1, lines, now=float(k))
            size += len(b''.join(lines))
            self.assertEqual((rx.held, len(m.dumps)), (0, 0), f'part {k} forgotten')
            self.assertLessEqual(len(m.done), 16)
            s = m.streams.get((NONCE, 1))
            self.assertTrue(s is None or not s.above, 'no part numbers kept')
        self.assertEqual(os.path.getsize(self.path()) >= size, True)
        ended = [x for x in self.said if 'ended' in x]
        self.assertRegex(ended[0], r'ended, complete: 30000 events from 2 CPUs \(fewest on one '
                                   r'CPU: 15000\) in 3000 parts')
        self.assertEqual(m.streams, {})

    def test_account_bounds(self):
        s = netstream.Stream(NONCE, 1, 0.0)

        class Part:
            bytes, kept, total, gave_up, final, counts = 10, 5, 5, False, False, None

        for k in range(1, 200):                  # part 0 never comes
            p = Part()
            p.part = k
            s.wrote(p, 0.0)
        self.assertLessEqual(len(s.above), netstream.ABOVE_MAX)
        self.assertEqual((s.written, s.never_arrived()), (199, 1))
        self.assertFalse(s.wrote(p, 0.0), 'a part written twice is counted once')


class FakeStreamer:
    """The kernel's side of a stream on 127.0.0.1: its items (a part or a
    hotkey dump: (dump number, lines)) sent in order with at most 2
    unconfirmed, a W every 0.2 s for each until a good A, R answered; a
    share of the first copies of D datagrams lost."""

    def __init__(self, dest, items, drop=0.1, seed=35):
        self.dest, self.items = dest, items
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(('127.0.0.1', 0))
        self.rng = random.Random(seed)
        self.drop = drop
        self.sealed = 0
        self.next = 0
        self.waiting = {}                 # index -> when its next W goes
        self.ws = {}                      # index -> W sent for it
        self.ws_at_a = {}                 # index -> W sent for it when its A came
        self.refused = []

    def sendto(self, data):
        self.sealed += 1
        self.sock.sendto(nc.seal(data, CODE.encode(), self.sealed, NONCE), self.dest)

    def lines(self, i, numbers, lossy):
        n, lines = self.items[i]
        for a in range(0, len(numbers), 4):
            chunk = numbers[a:a + 4]
            if lossy and self.rng.random() < self.drop:
                continue
            self.sendto(nc.d_datagram(chunk[0], [lines[x] for x in chunk], dump=n))

    def announce(self):
        self.sendto(f'BT1 I {MAC} {NONCE} 0\nREADY cpus=2 ip=10.0.2.15\n'.encode())

    def step(self, now):
        while select.select([self.sock], [], [], 0)[0]:
            self.handle(self.sock.recvfrom(65536)[0])
        while len(self.waiting) < 2 and self.next < len(self.items):
            i, self.next = self.next, self.next + 1
            self.lines(i, list(range(len(self.items[i][1]))), True)
            self.waiting[i], self.ws[i] = now, 0
        for i, due in list(self.waiting.items()):
            if now >= due:
                n, lines = self.items[i]
                self.sendto(f'BT1 W {MAC} {NONCE}.{n} {len(lines)} 5000\n'.encode())
                self.waiting[i] = now + 0.2
                self.ws[i] += 1

    def handle(self, data):
        index = {f'{NONCE}.{n}': i for i, (n, _) in enumerate(self.items)}
        if data.startswith(b'BT1 R '):
            words = data.split()
            i = index.get(words[-2].decode())
            if i in self.waiting:
                want = []
                for r in words[-1].decode().split(','):
                    a, _, b = r.partition('-')
                    want += range(int(a), int(b or a) + 1)
                self.lines(i, want, False)
        elif data.startswith(b'BT1 A '):
            ok = nc.signed_ok(data, MAC, NONCE, CODE)
            i = index.get(ok[1].decode()) if ok else None
            if ok is None:
                self.refused.append(data)
            elif i in self.waiting:
                del self.waiting[i]
                self.ws_at_a[i] = self.ws[i]

    def done(self):
        return self.next == len(self.items) and not self.waiting


class CaptureStream(unittest.TestCase):
    """scripts/capture --net as a user runs it, against a streaming machine."""

    def items(self, parts, hotkey_at):
        out, n = [], 1
        for k in range(parts):
            if k == hotkey_at:
                out.append((n, hotkey_lines(n)))
                n += 1
            out.append((n, part_lines(n, 1, k, final=(k == parts - 1))))
            n += 1
        return out

    def run_capture(self, items, *args, limit=90):
        port, out = nc.free_port(), tempfile.mkdtemp(prefix='bt-netstream-cli-')
        m = FakeStreamer(('127.0.0.1', port), items)
        self.addCleanup(m.sock.close)
        cap = nc.CaptureNet.start(self, out, port, '--session', CODE, '--timeout', '80', *args)
        m.announce()
        nc.pump([m], lambda: cap.poll() is not None, limit)
        nc.stop(cap)
        with open(os.path.join(out, f'{MAC}.log'), 'rb') as f:
            return m, cap, cap.said(), f.read()

    def test_until_stream_writes_every_part_and_a_hotkey_dump(self):
        items = self.items(30, hotkey_at=12)
        m, cap, said, text = self.run_capture(items, '--until-stream')
        self.assertEqual(cap.returncode, 0, said[-3000:])
        self.assertNotIn('Traceback', said)
        self.assertEqual(m.refused, [])
        for n, lines in items:
            self.assertIn(b''.join(lines), text, f'dump {n} whole in the log')
        self.assertRegex(said, r'stream 1 \(boot [0-9A-F]{16}\) ended, complete: 660 events '
                               r'from 2 CPUs .* in 30 parts')
        self.assertIn('dump 13 complete', said)

    def test_until_dump_ends_on_the_hotkey_dump_not_a_part(self):
        items = self.items(10, hotkey_at=6)
        m, cap, said, text = self.run_capture(items, '--until-dump')
        self.assertEqual(cap.returncode, 0, said[-3000:])
        self.assertIn('dump 7 complete', said)
        dumps = dumplog.parse_log(text)
        self.assertIn('7', [d.header.get('dump') for d in dumps if d.complete])

    def test_answers_late_when_told(self):
        # The test-only --answer-delay-ms: every answer goes a second late,
        # so the machine sends at least 4 W (0.2 s apart) before each A.
        items = self.items(4, hotkey_at=None)
        m, cap, said, text = self.run_capture(items, '--until-stream', '--answer-delay-ms',
                                              '1000')
        self.assertEqual(cap.returncode, 0, said[-3000:])
        self.assertEqual(sorted(m.ws_at_a), [0, 1, 2, 3])
        self.assertTrue(all(w >= 4 for w in m.ws_at_a.values()), m.ws_at_a)
        self.assertRegex(said, r'ended, complete: ')

    def test_export_of_the_stream(self):
        help_text = subprocess.run([sys.executable, DECODE, '--help'], capture_output=True,
                                   text=True, timeout=60).stdout
        if '--stream' not in help_text:
            self.skipTest('decode has no --stream here (docs/streaming.md: decode\'s side)')
        out = nc.gen_dump('cpus=2', 'events=600', 'cap=64', 'noise=0', 'stream=1', 'parts=6',
                          'chunks=40,100,40,40,40,40', f'nonce=0x{NONCE}')
        lines = [x.replace(b'\r\n', b'\n') for x in out.splitlines(keepends=True)]
        begins = [i for i, x in enumerate(lines) if x.startswith(b'DUMP BEGIN')] + [len(lines)]
        items = [(n, lines[a:b]) for n, (a, b) in enumerate(zip(begins, begins[1:]), 1)]
        path = os.path.join(tempfile.mkdtemp(prefix='bt-netstream-export-'), 'stream.txt')
        m, cap, said, text = self.run_capture(items, '--until-stream', '--export', 'text', path)
        self.assertEqual(cap.returncode, 0, said[-3000:])
        self.assertRegex(said, rf'exported stream {NONCE}\.1 as text: {re.escape(path)}')
        with open(path) as f:
            exported = f.read()
        log = os.path.join(os.path.dirname(path), 'log')
        with open(log, 'wb') as f:
            f.write(text)
        r = subprocess.run([sys.executable, DECODE, log, '--stream', '1'], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(exported, r.stdout, 'the export is decode --stream\'s trace')
        self.assertIn('overwritten before it was streamed', exported)

    def test_until_stream_times_out_without_a_stream(self):
        m, cap, said, _ = self.run_capture([(1, hotkey_lines(1))], '--until-stream',
                                           '--timeout', '3')
        self.assertEqual(cap.returncode, 3, said)
        self.assertRegex(said, r'timeout \(3 s\): no stream ended')


if __name__ == '__main__':
    unittest.main()
