"""The network path on a LAN with other hosts (issue 27, the machine's
side): the announcement, signed confirmations and keys, a key budget per
sender, the link waited for, DHCP offers no host may take.

The host here is this file's Peer, written from docs/network-protocol.md
alone (SipHash-2-4 included), so the document is tested
too. Every network stays on this machine: QEMU's user network (its host
side is 127.0.0.1; a datagram from any 127.0.0.1 socket to the port the
machine's datagrams come from reaches the machine as from 10.0.2.2), and
dgram netdevs on 127.0.0.1 for frames the test writes itself. The kernel
is always told net.to=10.0.2.2:PORT, so it never broadcasts."""
import os
import re
import select
import socket
import struct
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import LOG_DIR, scaled
from test_net import NetCase, CONFIRMED, HOST, LAB_KEY, frame, ip_udp
from test_netcapture import free_port

STATS = (rb"stats: net=\S+ ip=\S+: datagrams sent \d+, not sent \d+; frames received \d+, "
         rb"[^\n]*key datagrams refused (\d+); confirmations refused (\d+)")
MASK64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK64


def siphash24(key, msg):
    """SipHash-2-4 (the paper's reference algorithm) as a 64-bit number."""
    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & MASK64; v[1] = _rotl(v[1], 13) ^ v[0]; v[0] = _rotl(v[0], 32)  # noqa: E702,E501
            v[2] = (v[2] + v[3]) & MASK64; v[3] = _rotl(v[3], 16) ^ v[2]                          # noqa: E702,E501
            v[0] = (v[0] + v[3]) & MASK64; v[3] = _rotl(v[3], 21) ^ v[0]                          # noqa: E702,E501
            v[2] = (v[2] + v[1]) & MASK64; v[1] = _rotl(v[1], 17) ^ v[2]; v[2] = _rotl(v[2], 32)  # noqa: E702,E501

    whole = len(msg) - len(msg) % 8
    words = [int.from_bytes(msg[i:i + 8], "little") for i in range(0, whole, 8)]
    words.append(int.from_bytes(msg[whole:], "little") | (len(msg) & 0xFF) << 56)
    for m in words:
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def sign(key, mac, nonce, kind, tail):
    """The tag of a host datagram (docs/network-protocol.md, "Signed datagrams")."""
    msg = f"{mac} {nonce} BT1 {kind} ".encode() + tail
    return b"%016x" % siphash24(key, msg)


def sealed_ok(key, data):
    """A machine datagram's tag (its header's last word) checks out
    (docs/network-protocol.md, "Sealed datagrams")."""
    head, sep, _ = data.partition(b"\n")
    if not sep or len(head) < 17:
        return False
    msg = head[:-16] + b"0" * 16 + data[len(head):]
    return b"%016x" % siphash24(key, msg) == head[-16:]


def ranges(missing):
    out, i = [], 0
    while i < len(missing):
        j = i
        while j + 1 < len(missing) and missing[j + 1] == missing[j] + 1:
            j += 1
        out.append(str(missing[i]) if i == j else f"{missing[i]}-{missing[j]}")
        i = j + 1
    return ",".join(out[:64])


class Peer:
    """A host on 127.0.0.1 with the machine's key: learns the machine from
    its announcement, takes only datagrams its key proves (the rest are
    counted in `unproven`), collects dump lines, answers W with R for what
    it lacks, and with a signed A once allowed (until then an R for line 0
    keeps the wait going, the way a slow host would)."""

    def __init__(self, name, key=None):
        self.key = key or bytes.fromhex(LAB_KEY)
        self.sign_with = None                      # a key to sign with other than self.key
        self.sign_requests = False                 # R signed too
        self.requests = 0                          # R datagrams sent
        self.unproven = 0
        self.d_datagrams = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.log_path = os.path.join(LOG_DIR, f"{name}.peer.log")
        self.machine = self.mac = self.nonce = self.code = None
        self.announcements, self.lines, self.total = [], {}, {}
        self.w_count = 0
        self.answers_left = None                   # W datagrams still answered (None: all)
        self.confirm = threading.Event()
        self.first_d = threading.Event()
        self.cond = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def wait(self, what, timeout, why):
        deadline = time.monotonic() + scaled(timeout)
        with self.cond:
            while not what():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"peer: {why} (after {timeout} s)")
                self.cond.wait(left)

    def run(self):
        while not self.stopping:
            ready, _, _ = select.select([self.sock], [], [], 0.2)
            if not ready:
                continue
            data, addr = self.sock.recvfrom(65536)
            head, _, body = data.partition(b"\n")
            f = head.decode("ascii", "replace").split(" ")[:-2]     # less the seal
            with self.cond:
                if not sealed_ok(self.key, data):
                    self.unproven += 1
                    self.cond.notify_all()
                    continue
                self.machine = addr
                if f[:2] == ["BT1", "I"] and len(f) == 5:
                    self.mac, self.nonce = f[2], f[3]
                    self.announcements.append(body)
                elif f[:2] == ["BT1", "D"] and len(f) == 5:
                    self.d_datagrams += 1
                    got = self.lines.setdefault(f[3], {})
                    for i, line in enumerate(body.split(b"\n")[:-1]):
                        got[int(f[4]) + i] = line + b"\n"
                    self.first_d.set()
                elif f[:2] == ["BT1", "W"] and len(f) == 6:
                    self.total[f[3]] = int(f[4])
                    self.w_count += 1
                    if self.answers_left is None or self.answers_left > 0:
                        self.answers_left = self.answers_left and self.answers_left - 1
                        self.answer(f[3])
                self.cond.notify_all()

    def answer(self, dump_id):
        got = self.lines.get(dump_id, {})
        missing = [i for i in range(self.total[dump_id]) if i not in got]
        if missing:
            self.request(f"{dump_id} {ranges(missing)}")
        elif self.confirm.is_set():
            tail = dump_id.encode()
            self.send(b"BT1 A " + sign(self.sign_with or self.key, self.mac, self.nonce, "A",
                                       tail) + b" " + tail + b"\n")
        else:
            self.request(f"{dump_id} 0")

    def request(self, words):
        """BT1 R, signed when sign_requests says."""
        tail = words.encode()
        self.requests += 1
        tag = sign(self.sign_with or self.key, self.mac, self.nonce, "R", tail) + b" " \
            if self.sign_requests else b""
        self.send(b"BT1 R " + tag + tail + b"\n")

    def send(self, data):
        self.sock.sendto(data, self.machine)

    def keys(self, keys, counter, key=None):
        """A signed K datagram (returned, to replay it)."""
        tail = b"%d " % counter + keys
        d = b"BT1 K " + sign(key or self.key, self.mac, self.nonce, "K", tail) + b" " + tail
        self.send(d)
        return d

    def write_log(self, dump_id):
        with self.cond:
            got = self.lines[dump_id]
            with open(self.log_path, "wb") as f:
                f.write(b"".join(got[i] for i in sorted(got)))
        return self.log_path

    def stop(self):
        self.stopping = True
        self.thread.join(5)
        self.sock.close()


class TrustCase(NetCase):

    def start_peer(self):
        peer = Peer(self.id())
        self.addCleanup(peer.stop)
        return peer

    def meet(self, peer, m):
        """The machine's announcement: its MAC and nonce (the key is the lab
        key it booted with)."""
        peer.wait(lambda: peer.announcements, 60, "no BT1 I announcement")
        peer.send(b"BT1 H\n")


class Announcement(TrustCase):

    def test_announced_idle_and_answers_who_is_there(self):
        peer = self.start_peer()
        m, info = self.net_boot(peer.port, smp=1)
        self.meet(peer, m)
        self.assertTrue(peer.announcements[0].startswith(b"READY cpus=1 "), peer.announcements)
        self.assertEqual(peer.mac, "525400123456")
        peer.wait(lambda: len(peer.announcements) >= 2, 60, "no second announcement while idle")
        asker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        asker.bind(("127.0.0.1", 0))
        self.addCleanup(asker.close)
        asker.settimeout(scaled(30))
        for _ in range(20):                       # a flood of Q: answered once a second
            asker.sendto(b"BT1 Q\n", peer.machine)
        data, _ = asker.recvfrom(65536)
        self.assertTrue(data.startswith(f"BT1 I {peer.mac} {peer.nonce} ".encode()), data)
        self.assertTrue(sealed_ok(peer.key, data), data)
        self.assertEqual(peer.unproven, 0, "every datagram sealed with the key")
        self.assertIn(b"\nREADY cpus=1 ", data)
        asker.settimeout(0.5)
        with self.assertRaises(socket.timeout):   # one answer, not twenty
            asker.recvfrom(65536)


class SignedDatagrams(TrustCase):

    def test_forged_confirmation_refused_and_the_wait_goes_on(self):
        peer = self.start_peer()
        m, _ = self.net_boot(peer.port, smp=1, cmdline="trace.dump_to=net")
        self.meet(peer, m)
        start = len(m.output())
        key_d = peer.keys(b"d", 1)                # a signed key starts the dump
        peer.wait(lambda: peer.total, 120, "no BT1 W: the signed key was not taken")
        dump_id = next(iter(peer.total))
        hostile = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        hostile.bind(("127.0.0.1", 0))
        self.addCleanup(hostile.close)
        wrong = bytes(16)
        forged = [b"BT1 A " + dump_id.encode() + b"\n",                     # the old form
                  b"BT1 A " + b"0" * 16 + b" " + dump_id.encode() + b"\n",  # a made-up tag
                  b"BT1 A " + sign(wrong, peer.mac, peer.nonce, "A", dump_id.encode()) +
                  b" " + dump_id.encode() + b"\n"]                           # another code
        for d in forged:
            hostile.sendto(d, peer.machine)
        with peer.cond:
            w_then = peer.w_count
        peer.wait(lambda: peer.w_count >= w_then + 5, 60, "the machine stopped waiting")
        self.assertNotRegex(m.output()[start:], CONFIRMED)
        peer.confirm.set()
        m.wait_for(CONFIRMED, 60, start=start)
        m.wait_for(rb"net: 3 confirmations or requests refused so far \(without this boot's "
                   rb"key; the last from 10\.0\.2\.2\)", 60, start=start)
        peer.send(key_d)                           # replayed: its counter is not above the last
        peer.keys(b"s", 2)
        stats = m.wait_for(STATS, 60, start=start)
        self.assertEqual((int(stats.group(1)), int(stats.group(2))), (1, 3))
        time.sleep(1)
        self.assertNotIn(b"dumpnet: dump 2", m.output())
        self.check_net_dump(peer.write_log(dump_id))


class KeyFlood(TrustCase):

    def test_wrong_key_flood_from_the_owners_address_leaves_the_owner_every_key(self):
        """K datagrams with a wrong tag, forged from the owner's own
        address (10.0.2.2) at ~400 a second: every tag is checked before
        anything is charged, so every key of the owner's is taken."""
        peer, hub = self.start_peer(), free_port()
        inject = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        inject.bind(("127.0.0.1", 0))
        self.addCleanup(inject.close)
        extra = ["-netdev", "user,id=u0", "-netdev", "hubport,id=hu,hubid=0,netdev=u0",
                 "-netdev", f"dgram,id=d0,local.type=inet,local.host=127.0.0.1,"
                 f"local.port={hub},remote.type=inet,remote.host=127.0.0.1,"
                 f"remote.port={inject.getsockname()[1]}",
                 "-netdev", "hubport,id=hd,hubid=0,netdev=d0"]
        m, _ = self.net_boot(peer.port, smp=1, netdev="hubport,hubid=0", extra=extra)
        self.meet(peer, m)
        wrong = bytes(16)
        mac, evil = bytes.fromhex(peer.mac), bytes.fromhex("02badbadbad0")
        stop = threading.Event()
        sent = [0]

        def flood():     # ~400 a second, forged from the owner's 10.0.2.2
            n = 0
            while not stop.is_set():
                for _ in range(40):
                    n += 1
                    tail = b"%d s" % n
                    k = b"BT1 K " + sign(wrong, peer.mac, peer.nonce, "K", tail) + b" " + tail
                    inject.sendto(frame(mac, evil, 0x0800,
                                        ip_udp(HOST, "10.0.2.15", 40000, 6666, k)),
                                  ("127.0.0.1", hub))
                sent[0] = n
                time.sleep(0.1)

        t = threading.Thread(target=flood, daemon=True)
        start = len(m.output())
        t.start()
        try:
            m.wait_for(rb"net: \d+ key datagrams refused so far \(without this boot's key; "
                       rb"the last from 10\.0\.2\.2\)", 60, start=start)
            for i in range(6):                     # the owner types, from 10.0.2.2
                peer.keys(b"s", i + 1)
                time.sleep(0.5)
            deadline = time.monotonic() + scaled(60)
            while m.output()[start:].count(b"stats: net=") < 6 and time.monotonic() < deadline:
                time.sleep(0.5)
        finally:
            stop.set()
            t.join(5)
        out = m.output()[start:]
        self.assertEqual(out.count(b"stats: net="), 6, f"{sent[0]} flood datagrams sent")
        refused = [int(x) for x in re.findall(STATS, out)[-1]]
        self.assertGreater(refused[0], 20, "the flood reached the machine")


class LinkDown(TrustCase):

    def test_link_down_ten_seconds_mid_dump_then_confirmed(self):
        peer = self.start_peer()
        m, _ = self.net_boot(peer.port, smp=2, cmdline="trace.dump_to=net timer_hz=2000 "
                             "trace.events=8192")
        self.meet(peer, m)
        time.sleep(2)                              # events to fill some hundred datagrams
        start = len(m.output())
        peer.keys(b"d", 1)
        self.assertTrue(peer.first_d.wait(scaled(120)), "no dump datagram")
        m.qmp().command("set_link", name="net0", up=False)
        down_at = time.monotonic()
        m.wait_for(rb"dumpnet: dump 1: link down; the snapshot is kept, waiting for the link",
                   60, start=start)
        time.sleep(max(0, 10 - (time.monotonic() - down_at)))
        m.qmp().command("set_link", name="net0", up=True)
        peer.confirm.set()
        done = m.wait_for(rb"dumpnet: dump 1: the host confirmed all (\d+) lines \(\d+ sent "
                          rb"again; the link was down (\d+) ms meanwhile\)", 120, start=start)
        self.assertGreaterEqual(int(done.group(2)), 9000)
        dump_id = next(iter(peer.total))
        d = self.check_net_dump(peer.write_log(dump_id))
        self.check_dump(d, online=2)


class WhyTheWaitEnded(TrustCase):

    def stopped_answering(self):
        peer = self.start_peer()
        m, _ = self.net_boot(peer.port, smp=1, cmdline="trace.dump_to=net")
        self.meet(peer, m)
        peer.answers_left = 2                      # two requests, then silence
        start = len(m.output())
        peer.keys(b"d", 1)
        m.wait_for(rb"dumpnet: dump 1: the host did not confirm its \d+ lines before the wait "
                   rb"ended \(the host stopped answering; ", 60, start=start)
        return peer, m

    def test_host_stopped_answering(self):
        self.stopped_answering()

    @unittest.skipUnless(os.environ.get("BT_LONG") == "1",
                         "make test-long runs it (BT_LONG=1): it waits out the 60 s bound")
    def test_host_stopped_answering_then_link_down_until_the_bound(self):
        peer, m = self.stopped_answering()
        peer.answers_left = 0
        peer.first_d.clear()
        start = len(m.output())
        peer.keys(b"d", 2)
        self.assertTrue(peer.first_d.wait(scaled(60)), "no dump datagram")
        m.qmp().command("set_link", name="net0", up=False)
        m.wait_for(rb"dumpnet: dump 2: link down; the snapshot is kept", 60, start=start)
        ended = m.wait_for(rb"dumpnet: dump 2: not confirmed: the link is down \(for (\d+) ms, "
                           rb"until the wait's 60 s bound\); none of its \d+ lines is confirmed",
                           120, start=start)
        self.assertGreater(int(ended.group(1)), 50000)
        m.qmp().command("set_link", name="net0", up=True)


def dhcp_reply(kind, xid, chaddr, yiaddr, server):
    """A server's OFFER (2) or ACK (5), broadcast, as a frame."""
    body = struct.pack("!BBBBIHH4s4s4s4s16s", 2, 1, 6, 0, xid, 0, 0x8000, bytes(4),
                       socket.inet_aton(yiaddr), socket.inet_aton(server), bytes(4),
                       chaddr + bytes(10))
    body += bytes(192) + b"\x63\x82\x53\x63"
    body += bytes([53, 1, kind, 54, 4]) + socket.inet_aton(server)
    body += bytes([1, 4, 255, 255, 255, 0, 51, 4, 0, 0, 14, 16, 255])
    return frame(b"\xff" * 6, bytes.fromhex("02dcdcdcdc01"), 0x0800,
                 ip_udp(server, "255.255.255.255", 67, 68, body))


class HostileDhcp(TrustCase):

    def test_dhcp_offers_of_the_broadcast_and_network_addresses_refused(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        self.addCleanup(sock.close)
        qport = free_port()
        netdev = (f"dgram,local.type=inet,local.host=127.0.0.1,local.port={qport},"
                  f"remote.type=inet,remote.host=127.0.0.1,remote.port={sock.getsockname()[1]}")
        served = {"bad": 0, "good": 0}
        stop, honest = threading.Event(), threading.Event()

        def server():                              # the hostile server, later an honest one
            while not stop.is_set():
                if not select.select([sock], [], [], 0.2)[0]:
                    continue
                f = sock.recv(65536)
                if len(f) < 42 + 243 or f[12:14] != b"\x08\x00" or f[36:38] != b"\x00\x43":
                    continue
                dhcp = f[42:]
                xid, chaddr, kind = struct.unpack("!I", dhcp[4:8])[0], dhcp[28:34], dhcp[242]
                bad = not honest.is_set()          # the first frames may be lost: until said
                # The broadcast address and the subnet's network address, in turn.
                yi = ("255.255.255.255", "10.0.9.0")[served["bad"] % 2] if bad else "10.0.9.15"
                served["bad" if bad else "good"] += 1
                reply = dhcp_reply(2 if kind == 1 else 5, xid, chaddr, yi, "10.0.9.1")
                sock.sendto(reply, ("127.0.0.1", qport))

        t = threading.Thread(target=server, daemon=True)
        t.start()
        try:
            m, _ = self.boot(smp=1, nic="e1000", netdev=netdev,
                             cmdline=f"net.to={HOST}:{free_port()}")
            m.wait_for(rb"net: DHCP server 10\.0\.9\.1 offered 255\.255\.255\.255: refused \(the "
                       rb"broadcast address; as net\.ip= would\); still asking", 60, start=0)
            m.wait_for(rb"net: DHCP server 10\.0\.9\.1 offered 10\.0\.9\.0: refused \(its "
                       rb"subnet's network address; as net\.ip= would\); still asking", 60,
                       start=0)
            honest.set()
            m.wait_for(rb"net: address 10\.0\.9\.15 \(DHCP\)", 60, start=0)
        finally:
            stop.set()
            t.join(5)
        self.assertNotIn(b"net: address 255.255.255.255", m.output())
        self.assertNotIn(b"net: address 10.0.9.0 ", m.output())
        self.assertGreater(served["bad"], 0)
        self.assertEqual(m.faults(), [])
