"""capture --net's receiver (scripts/btlib/netcapture.py) against datagrams
the test writes as the kernel would (docs/host-tools.md, "The network
protocol"), then scripts/capture --net itself against a fake machine on
127.0.0.1 that loses datagrams: the log decodes as the dump it sent."""

import os
import random
import re
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
from btlib import dumplog, netcapture        # noqa: E402
from test_capture import gen_dump            # noqa: E402

CAPTURE = os.path.join(REPO, 'scripts', 'capture')
MAC = '5254001234ab'
NONCE = '0123456789ABCDEF'
ADDR = ('127.0.0.1', 40000)


def lines_of(n):
    """A dump's worth of lines: the receiver needs their numbers, not their CRCs."""
    body = [f'DUMP BEGIN v=2 dump=1 nonce={NONCE} cpus=1 events=0 *00000000\n'.encode()]
    body += [f'%M {i} x={i} *00000000\n'.encode() for i in range(1, n - 1)]
    body.append(f'DUMP END dump=1 nonce={NONCE} events=0 lines={n} *00000000\n'.encode())
    return body


def d_datagram(first, lines):
    return f'BT1 D {MAC} {NONCE}.1 {first}\n'.encode() + b''.join(lines)


class Receiver(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='bt-netcap-test-')
        self.sent, self.said = [], []
        self.rx = netcapture.Receiver(self.dir, lambda d, a: self.sent.append((d, a)),
                                      self.said.append)

    def log(self):
        self.rx.close()
        with open(os.path.join(self.dir, f'{MAC}.log'), 'rb') as f:
            return f.read()

    def test_console_text_ready_and_session(self):
        self.rx.feed(f'BT1 T {MAC} 0\nnet: session code K7QX2M (keys...)\n'.encode(), ADDR)
        self.assertEqual(self.sent, [(b'BT1 H\n', ADDR)], 'a host listens')
        self.rx.feed(f'BT1 T {MAC} 2\nREADY cpus=1 net=e1000:00:03.0\n'.encode(), ADDR)
        self.assertEqual(self.rx.events, [('ready', MAC, None)])
        self.assertEqual(self.rx.machines[MAC].text_lost, 1, 'datagram 1 never came')
        self.assertTrue(self.rx.send_keys(MAC, b'd'))
        self.assertEqual(self.sent[-1], (b'BT1 K K7QX2M d', ADDR))
        self.assertEqual(self.log(), b'net: session code K7QX2M (keys...)\n'
                                     b'READY cpus=1 net=e1000:00:03.0\n')

    def test_keys_need_a_session_code(self):
        self.rx.feed(f'BT1 T {MAC} 0\nhello\n'.encode(), ADDR)
        self.assertFalse(self.rx.send_keys(MAC, b'd'))
        rx = netcapture.Receiver(self.dir + '2', lambda d, a: self.sent.append((d, a)),
                                 self.said.append, session='ABCDEF')
        rx.feed(f'BT1 T {MAC} 0\nhello\n'.encode(), ADDR)
        self.assertTrue(rx.send_keys(MAC, b'd' * 70))
        self.assertEqual([d for d, _ in self.sent[-2:]],
                         [b'BT1 K ABCDEF ' + b'd' * 64, b'BT1 K ABCDEF ' + b'd' * 6])
        rx.close()

    def test_missing_lines_asked_for_then_whole(self):
        lines = lines_of(10)
        self.rx.feed(d_datagram(0, lines[0:3]), ADDR)
        self.rx.feed(d_datagram(5, lines[5:7]), ADDR)       # 3, 4, 7, 8, 9 lost
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 10 5000\n'.encode(), ADDR)
        self.assertEqual(self.sent[-1], (f'BT1 R {NONCE}.1 3-4,7-9\n'.encode(), ADDR))
        self.rx.feed(d_datagram(3, lines[3:5]), ADDR)
        self.rx.feed(d_datagram(9, lines[9:10]), ADDR)
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 10 4800\n'.encode(), ADDR)
        self.assertEqual(self.sent[-1], (f'BT1 R {NONCE}.1 7-8\n'.encode(), ADDR))
        self.rx.feed(d_datagram(7, lines[7:9]), ADDR)      # whole now
        self.assertEqual(self.sent[-1], (f'BT1 A {NONCE}.1\n'.encode(), ADDR))
        self.assertEqual([e[0] for e in self.rx.events], ['dump_done'])
        d = self.rx.events[0][2]
        self.assertEqual((d.asked, d.requests), (7, 2))
        self.assertRegex(self.said[-1], r'dump 1 complete: 10 lines, .* asked again for 7 lines')
        self.rx.feed(d_datagram(4, lines[4:5]), ADDR)      # late duplicates change nothing
        self.rx.feed(f'BT1 W {MAC} {NONCE}.1 10 4000\n'.encode(), ADDR)
        self.assertEqual(self.sent[-1], (f'BT1 A {NONCE}.1\n'.encode(), ADDR), 'A was lost')
        self.assertEqual(self.log(), b''.join(lines))

    def test_machine_gave_up(self):
        lines = lines_of(6)
        self.rx.feed(d_datagram(0, lines[0:4]), ADDR)
        self.rx.feed(f'BT1 X {MAC} {NONCE}.1 6 6\n'.encode(), ADDR)
        self.assertEqual([e[0] for e in self.rx.events], ['dump_given_up'])
        self.assertRegex(self.said[-1], r'dump 1 incomplete: .* 2 of 6 lines never arrived')
        self.assertEqual(self.log(), b''.join(lines[:4]))

    def test_many_gaps_many_requests(self):
        missing = list(range(0, 400, 2))              # 200 single lines
        reqs = netcapture.resend_requests((NONCE, 1), missing)
        self.assertEqual(len(reqs), 4)                # 64 ranges a datagram at most
        self.assertEqual(sum(n for _, n in reqs), 200)
        for data, _ in reqs:
            self.assertLessEqual(len(data), netcapture.REQUEST_MAX_BYTES)
            self.assertLessEqual(data.count(b',') + 1, netcapture.RANGES_PER_REQUEST)
        self.assertEqual(netcapture.ranges([1, 2, 3, 7, 9, 10]), ['1-3', '7', '9-10'])

    def test_not_the_protocol(self):
        for junk in (b'', b'hello', b'BT1 T 5254 0\nx', f'BT1 D {MAC} nonce.1 0\nx\n'.encode(),
                     f'BT1 Q {MAC} 0\n'.encode(), f'BT1 W {MAC} {NONCE}.1 x 5\n'.encode(),
                     f'BT2 T {MAC} 0\nx'.encode(), f'BT1 T {MAC.upper()} 0\nx'.encode()):
            self.rx.feed(junk, ADDR)
        self.assertEqual(self.rx.bad, 8)
        self.assertEqual(self.rx.events, [])


class CaptureNet(unittest.TestCase):
    """scripts/capture --net and a fake machine that loses a fifth of its
    datagrams both ways (127.0.0.1 only)."""

    def test_dump_whole_through_loss(self):
        dump = gen_dump('cpus=2', 'events=3000', 'cap=2048', 'noise=0')
        lines = dump.splitlines(keepends=True)
        begin = next(i for i, l in enumerate(lines) if l.startswith(b'DUMP BEGIN'))
        lines = lines[begin:]
        nonce = re.search(rb'nonce=([0-9A-F]{16})', lines[0]).group(1).decode()
        dump_no = int(re.search(rb' dump=(\d+)', lines[0]).group(1))
        port = free_port()
        out = tempfile.mkdtemp(prefix='bt-netcap-cli-')
        cap = subprocess.Popen([sys.executable, CAPTURE, '--net', '--listen', f'127.0.0.1:{port}',
                                '-o', out, '--until-dump', '--timeout', '60'],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            machine = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            machine.bind(('127.0.0.1', 0))
            rng = random.Random(5)
            dest = ('127.0.0.1', port)

            def send(data):
                if rng.random() >= 0.2:
                    machine.sendto(data, dest)

            time.sleep(0.5)                           # capture is listening
            machine.sendto(f'BT1 T {MAC} 0\nREADY cpus=2\n'.encode(), dest)
            for i in range(0, len(lines), 8):
                send(f'BT1 D {MAC} {nonce}.{dump_no} {i}\n'.encode() + b''.join(lines[i:i + 8]))
            deadline = time.monotonic() + 30
            done = False
            while not done and time.monotonic() < deadline:
                send(f'BT1 W {MAC} {nonce}.{dump_no} {len(lines)} 1000\n'.encode())
                end = time.monotonic() + 0.2
                while time.monotonic() < end:
                    r, _, _ = select.select([machine], [], [], 0.05)
                    if not r:
                        continue
                    data, _ = machine.recvfrom(65536)
                    if rng.random() < 0.2:
                        continue                      # lost on the way back
                    if data.startswith(b'BT1 A '):
                        done = True
                    elif data.startswith(b'BT1 R '):
                        for part in data.split()[3].decode().split(','):
                            a, _, b = part.partition('-')
                            for n in range(int(a), int(b or a) + 1):
                                send(f'BT1 D {MAC} {nonce}.{dump_no} {n}\n'.encode() + lines[n])
            if not done:
                cap.send_signal(signal.SIGINT)
            said, _ = cap.communicate(timeout=60)
            self.assertTrue(done, f'capture never confirmed the dump: {said[-2000:]}')
        finally:
            if cap.poll() is None:
                cap.send_signal(signal.SIGINT)
                cap.wait(10)
        self.assertEqual(cap.returncode, 0, said)
        self.assertRegex(said, r'dump \d+ complete: .*asked again for [1-9]\d* lines')
        with open(os.path.join(out, f'{MAC}.log'), 'rb') as f:
            dumps = dumplog.parse_log(f.read())
        self.assertEqual(len(dumps), 1)
        self.assertTrue(dumps[0].complete, dumps[0].warnings)
        self.assertEqual((dumps[0].damaged_lines, dumps[0].missing_lines), (0, 0))
        self.assertEqual(dumps[0].end_events, sum(len(c.events) for c in dumps[0].cpus))


def free_port():
    """A UDP port on 127.0.0.1 free a moment ago (also for test/boot/test_net.py)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


if __name__ == '__main__':
    unittest.main()
