"""The dump at the speed of the wire (issue 18): console lines, keys and
dumps over UDP, with nothing lost.

Every network here stays on this machine: QEMU's user-mode network (the
guest's 10.0.2.x exist only inside QEMU; its host side is 127.0.0.1), and
for frames the test writes itself a QEMU dgram netdev on 127.0.0.1 joined
to the same hub. The kernel is always told net.to=10.0.2.2:PORT, so it
never broadcasts. scripts/capture --net receives, as a user would run it;
its logs are read with the real decoder."""
import glob
import os
import random
import re
import secrets
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "host"))

from harness import Machine, scaled, ISO, LOG_DIR
from test_trace import TraceCase
from test_screen import ScreenCase
from test_netcapture import free_port
from btlib.dump import dumplog
from btlib.dump import ready as readyline

REPO = os.path.dirname(os.path.dirname(HERE))
CAPTURE = os.path.join(REPO, "scripts", "capture")
DECODE = os.path.join(REPO, "scripts", "decode")
CAPTURE_TIMEOUT_S = 240
CONFIRMED = rb"dumpnet: dump (\d+): the host confirmed all (\d+) lines"
# The machine heard a host (capture's H): from then on a dump waits for
# its confirmation, not only 0.3 s (recorder/dumpnet.h).
HEARD = rb"net: a host answers from 10\.0\.2\.2:\d+: dumps wait for its confirmation"
CODE = rb"net: session code ([A-Z2-9]{4}(?:-[A-Z2-9]{4}){3})"
# The lab key these tests boot with (net.key=) and capture reads
# (--key-file); capture's own key store is an empty folder of the test's.
LAB_KEY = secrets.token_hex(16)
KEYS_DIR = tempfile.mkdtemp(prefix="bt-netkeys-")
KEY_FILE = os.path.join(KEYS_DIR, "lab.key")
with open(os.open(KEY_FILE, os.O_WRONLY | os.O_CREAT, 0o600), "w") as _f:
    _f.write(LAB_KEY + "\n")
STORE = tempfile.mkdtemp(prefix="bt-netstore-")
HOST = "10.0.2.2"            # QEMU user-mode network: this host's 127.0.0.1
ADDRESS = rb"net: address 10\.0\.2\.15 \(DHCP\), gateway 10\.0\.2\.2"


def decode_list(path):
    """scripts/decode --list rows of a log: [{column: value}]."""
    r = subprocess.run([sys.executable, DECODE, "--list", path], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"decode --list {path}: {r.stderr[-2000:]}")
    lines = r.stdout.strip().splitlines()
    head = lines[0].split()
    return [dict(zip(head, line.split())) for line in lines[1:]]


class Capture:
    """scripts/capture --net in the background, listening on 127.0.0.1."""

    def __init__(self, name, port, *args, out=None, keyed=True):
        """keyed: with --key-file LAB_KEY (the key net_boot gives)."""
        self.dir = out or tempfile.mkdtemp(prefix="bt-netcap-")
        self.err_path = os.path.join(LOG_DIR, f"{name}.capture.txt")
        os.makedirs(LOG_DIR, exist_ok=True)
        self.err = open(self.err_path, "w+")
        keys = ["--key-file", KEY_FILE] if keyed else []
        self.proc = subprocess.Popen(
            [sys.executable, CAPTURE, "--net", "--listen", f"127.0.0.1:{port}", "-o", self.dir,
             *keys, *args], stdin=subprocess.DEVNULL, stdout=self.err, stderr=subprocess.STDOUT,
            env=dict(os.environ, BARETRACE_KEYS=STORE))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.flush()

    def said(self):
        self.err.flush()
        with open(self.err_path) as f:
            return f.read()

    def log(self):
        logs = glob.glob(os.path.join(self.dir, "*.log"))
        if len(logs) != 1:
            raise AssertionError(f"capture wrote {logs}, not one log: {self.said()[-2000:]}")
        return logs[0]


class NetCase(TraceCase):

    def net_boot(self, port, nic="e1000", cmdline="", keyed=True, **options):
        """Boot with a NIC on the user network and wait for its address
        (READY may come first: QEMU's e1000 takes no frame for a second
        after its receive control register is written); keyed: with
        net.key=LAB_KEY, else the session code on its console."""
        key = f"net.key={LAB_KEY} " if keyed else ""
        m, info = self.boot(nic=nic, cmdline=f"{key}net.to={HOST}:{port} {cmdline}".strip(),
                            **options)
        self.assertIn(info["ip"], ("10.0.2.15", "pending"), info)
        m.wait_for(ADDRESS, 60, start=0)
        return m, info

    def heard(self, m, timeout=60):
        """Wait until the machine heard capture (its H to an announcement):
        a dump the test starts itself (a serial key, an NMI) is then
        confirmed however slowly this loaded host answers."""
        m.wait_for(HEARD, timeout, start=0)

    def check_net_dump(self, path, index=-1):
        rows = decode_list(path)
        self.assertTrue(rows, f"no dump in {path}")
        self.assertEqual(rows[index]["STATE"], "complete", rows)
        with open(path, "rb") as f:
            dumps = dumplog.parse_log(f.read())
        d = dumps[index]
        self.assertEqual((d.damaged_lines, d.missing_lines), (0, 0), d.warnings)
        return d

    def link_down_then_plugged(self, nic):
        """READY says the NIC without an address; a dump waits for no host;
        the cable plugged in later brings the link and DHCP."""
        # -S: the link is down before the guest's first instruction.
        port = free_port()
        m = Machine(self.id(), smp=1, nic=nic, extra=["-S"],
                    cmdline=f"net.to={HOST}:{port}")
        with m:
            m.qmp().command("set_link", name="net0", up=False)
            m.qmp().command("cont")
            info = m.ready()
            self.assertEqual((info["net"], info["ip"]), (f"{nic}:00:03.0", "nolink"))
            self.assertIn(f"net: no link yet on {nic} 00:03.0".encode(), m.output())
            start = len(m.output())
            self.assertTrue(m.dump().complete)     # no host waited for: serial only
            m.qmp().command("set_link", name="net0", up=True)
            m.wait_for(rf"net: {nic} 00:03\.0: link up".encode(), 60, start=start)
            m.wait_for(ADDRESS, 60, start=start)

    def same_events(self, a, b):
        key = [(e.cpu, e.seq, e.tsc, e.type, e.a0, e.a1) for e in a.events()]
        self.assertEqual(key, [(e.cpu, e.seq, e.tsc, e.type, e.a0, e.a1) for e in b.events()])
        self.assertEqual(a.header.get("nonce"), b.header.get("nonce"))


class NetOverCapture(NetCase):
    """capture --qemu --net MODEL: no serial port at all."""

    def capture_qemu(self, model, mac=None, link_later=False):
        """link_later: the NIC may have no link yet at READY (ip=nolink),
        the link and the address following on the console."""
        out = tempfile.mkdtemp(prefix="bt-netcap-")
        r = subprocess.run(
            [sys.executable, CAPTURE, "--qemu", "--net", model, "--smp", "2", "--accel", "tcg",
             "--iso", ISO, "-o", out, "--key", "d", "--delay", "1", "--until-dump",
             "--timeout", str(scaled(CAPTURE_TIMEOUT_S))] + (["--mac", mac] if mac else []),
            capture_output=True, text=True, timeout=scaled(CAPTURE_TIMEOUT_S) + 60)
        with open(os.path.join(LOG_DIR, f"{self.id()}.capture.txt"), "w") as f:
            f.write(r.stderr)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        logs = glob.glob(os.path.join(out, "*.log"))
        self.assertEqual(len(logs), 1, r.stderr)
        # A MAC of its own, unless told one (QEMU's usb-net shows the guest
        # its MAC with the first byte 0x40).
        given = re.search(r"QEMU's NIC is ((?:[0-9a-f]{2}:){5}[0-9a-f]{2})", r.stderr).group(1)
        self.assertEqual(given, mac or given)
        self.assertNotEqual(given, "52:54:00:12:34:56", "QEMU's default, shared by all")
        self.assertEqual(os.path.basename(logs[0])[2:], given.replace(":", "")[2:] + ".log")
        with open(logs[0], "rb") as f:
            text = f.read()
        ready = readyline.find(text)
        self.assertEqual(ready["console"], "none")
        # The whole boot, from its first line (kept and replayed to the
        # network once it is up), before the READY line.
        ready_at = text.index(b"READY ")
        for early in (rb"baretrace: booted by GRUB", rb"\ntrace: \d+ rings of", rb"\nsmp: \d+ CPUs"):
            m = re.search(early, text)
            self.assertTrue(m and m.start() < ready_at, f"{early} before READY over the network")
        self.assertNotIn(b"were not kept", text)
        self.assertIn(ready["ip"], ("10.0.2.15", "pending") + (("nolink",) if link_later else ()))
        if ready["ip"] != "10.0.2.15":
            self.assertTrue(re.search(ADDRESS, text), "the address line arrived too")
        self.assertIn("dump 1 complete", r.stderr)
        self.check_net_dump(logs[0])
        return ready

    def test_e1000_ready_and_dump_without_serial(self):
        self.assertEqual(self.capture_qemu("e1000")["net"], "e1000:00:03.0")

    def test_e1000e_ready_and_dump_without_serial(self):
        self.assertEqual(self.capture_qemu("e1000e", mac="52:54:00:27:27:27")["net"],
                         "e1000e:00:03.0")


class NetAndSerial(NetCase):

    def test_net_dump_equals_serial_dump(self):
        port = free_port()
        cap = Capture(self.id(), port)
        try:
            m, info = self.net_boot(port, smp=2)
            self.assertEqual(info["net"], "e1000:00:03.0")
            self.heard(m)
            start = len(m.output())
            serial = m.dump()
            m.wait_for(CONFIRMED, 60, start=start)
        finally:
            cap.stop()
        self.check_dump(serial, online=2)
        net = self.check_net_dump(cap.log())
        self.same_events(serial, net)
        with open(cap.log(), "rb") as f:
            self.assertIn(b"READY ", f.read())

    def test_fault_dump_arrives_over_the_network(self):
        # CPU 1 faults as it starts, before any host spoke, and capture
        # answers everything a second late: a fault's dump waits 2 s for a
        # host never heard (a key's 0.3 s), so the H to its first
        # datagram, then the A, are still heard.
        port = free_port()
        cap = Capture(self.id(), port, "--answer-delay-ms", "1000")
        try:
            m, _ = self.net_boot(port, smp=2, cmdline="debug.fault=1")
            m.wait_for(CONFIRMED, 120, start=0)
        finally:
            cap.stop()
        d = self.check_net_dump(cap.log(), 0)
        self.assertEqual((d.header.get("trigger"), d.header.get("fault_cpu")), ("fault", "1"))

    def test_nmi_dump_arrives_over_the_network(self):
        port = free_port()
        cap = Capture(self.id(), port)
        try:
            m, _ = self.net_boot(port, smp=2)
            self.heard(m)
            start = len(m.output())
            m.qmp().command("inject-nmi")
            m.wait_for(CONFIRMED, 120, start=start)
        finally:
            cap.stop()
        d = self.check_net_dump(cap.log(), -1)
        self.assertEqual(d.header.get("trigger"), "nmi")


class NetKeys(NetCase):

    def test_keys_from_the_host_refused_with_keys_off(self):
        port = free_port()
        cap = Capture(self.id(), port, "--key", "d")
        try:
            m, _ = self.net_boot(port, smp=1, cmdline="net.keys=off")
            m.wait_for(rb"net: \d+ key datagrams refused so far \(net\.keys=off; the last from "
                       rb"10\.0\.2\.2\)", 60, start=0)
            time.sleep(1)
        finally:
            cap.stop()
        self.assertIn("sent 'd'", cap.said())
        self.assertNotIn(b"DUMP BEGIN", m.output())


class Relay:
    """Between the machine (QEMU's user network, which delivers its
    datagrams for 10.0.2.2:PORT to 127.0.0.1:PORT) and capture: drops a
    share of the datagrams both ways and holds some back to reorder them."""

    def __init__(self, capture_port, drop=0.1, hold=0.1, seed=18):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # towards capture
        self.up.bind(("127.0.0.1", 0))
        self.capture = ("127.0.0.1", capture_port)
        self.machine = None
        self.drop, self.hold, self.rng = drop, hold, random.Random(seed)
        self.counts = {"to_host": 0, "to_host_dropped": 0, "to_machine": 0,
                       "to_machine_dropped": 0, "reordered": 0}
        self.held = {}
        self.stopping = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def forward(self, data, sock, dest, way):
        self.counts[way] += 1
        if self.rng.random() < self.drop:
            self.counts[way + "_dropped"] += 1
            return
        if way in self.held:                  # the held one goes after this one
            sock.sendto(data, dest)
            sock.sendto(self.held.pop(way), dest)
            self.counts["reordered"] += 1
        elif self.rng.random() < self.hold:
            self.held[way] = data
        else:
            sock.sendto(data, dest)

    def run(self):
        import select
        while not self.stopping:
            ready, _, _ = select.select([self.sock, self.up], [], [], 0.2)
            if self.sock in ready:
                data, addr = self.sock.recvfrom(65536)
                self.machine = addr
                self.forward(data, self.up, self.capture, "to_host")
            if self.up in ready:
                data, _ = self.up.recvfrom(65536)
                if self.machine:
                    self.forward(data, self.sock, self.machine, "to_machine")

    def stop(self):
        self.stopping = True
        self.thread.join(5)


class NetLoss(NetCase):

    def test_dump_whole_through_loss_and_reordering(self):
        cap_port = free_port()
        relay = Relay(cap_port)
        cap = Capture(self.id(), cap_port)
        try:
            m, _ = self.net_boot(relay.port, smp=2, cmdline="trace.dump_to=net timer_hz=2000 "
                                 "trace.events=8192")
            self.heard(m)
            time.sleep(4)                         # events to fill some hundred datagrams
            start = len(m.output())
            m.send(b"d")
            m.wait_for(CONFIRMED, 180, start=start)
        finally:
            relay.stop()
            cap.stop()
        c = relay.counts
        self.assertGreaterEqual(c["to_host_dropped"], 0.05 * c["to_host"] - 1, c)
        self.assertGreater(c["to_host_dropped"], 0, c)
        self.assertGreater(c["reordered"], 0, c)
        self.assertNotIn(b"DUMP BEGIN", m.output(), "trace.dump_to=net: nothing on serial")
        d = self.check_net_dump(cap.log())
        self.check_dump(d, online=2)
        said = cap.said()
        asked = re.search(r"dump 1 complete: .*asked again for (\d+) lines", said)
        self.assertTrue(asked, said[-2000:])
        self.assertGreater(int(asked.group(1)), 0, said[-2000:])


def frame(dst, src, etype, payload):
    return dst + src + struct.pack("!H", etype) + payload


def ip_udp(src, dst, sport, dport, payload, udp_len=None, frag=0):
    udp_len = len(payload) + 8 if udp_len is None else udp_len
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, frag, 64, 17, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    s = sum(struct.unpack("!10H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    hdr = hdr[:10] + struct.pack("!H", ~s & 0xFFFF) + hdr[12:]
    return hdr + udp


class NetHostile(NetCase):
    """Frames written by the test onto the machine's wire: a dgram netdev
    on 127.0.0.1 on the same QEMU hub as the NIC and the user network."""

    def test_hostile_frames_change_nothing(self):
        port, hub = free_port(), free_port()
        inject = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        inject.bind(("127.0.0.1", 0))
        extra = ["-netdev", "user,id=u0", "-netdev", "hubport,id=hu,hubid=0,netdev=u0",
                 "-netdev", f"dgram,id=d0,local.type=inet,local.host=127.0.0.1,"
                 f"local.port={hub},remote.type=inet,remote.host=127.0.0.1,"
                 f"remote.port={inject.getsockname()[1]}",
                 "-netdev", "hubport,id=hd,hubid=0,netdev=d0"]
        cap = Capture(self.id(), port)
        try:
            m, info = self.net_boot(port, smp=2, netdev="hubport,hubid=0", extra=extra)
            mac = bytes.fromhex("525400123456")
            bcast, evil = b"\xff" * 6, bytes.fromhex("02badbadbad0")
            rng = random.Random(7)
            frames = []
            for _ in range(300):                      # garbage to us and to everyone
                frames.append(frame(rng.choice([mac, bcast]), evil, rng.randrange(0x10000),
                                    bytes(rng.randrange(256) for _ in range(rng.randrange(60)))))
            for i in range(1000):                     # ARP storm: asks, and answers unasked
                op = 1 + i % 2
                arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, evil,
                                  bytes([10, 0, 2, 100 + i % 100]), b"\0" * 6,
                                  socket.inet_aton("10.0.2.15" if op == 1 else "10.0.2.2"))
                frames.append(frame(bcast, evil, 0x0806, arp))
            ip = lambda p: frame(mac, evil, 0x0800, p)     # noqa: E731
            kernel = m.output()[m.output().index(b"baretrace: booted by"):]  # after GRUB's
            self.assertNotIn(LAB_KEY.encode(), kernel, "the kernel printed the key")
            for i in range(200):
                frames += [
                    ip(ip_udp("10.0.2.2", "10.0.2.15", 40000, 6666, b"BT1 K ABCDEF d")),
                    ip(ip_udp("10.0.2.2", "10.0.2.15", 40000, 6666,
                              b"BT1 K %016x %d d" % (rng.getrandbits(64), i + 1))),
                    ip(ip_udp("10.0.2.2", "10.0.2.15", 40000, 6666, b"BT1 K d")),
                    ip(ip_udp("10.0.2.2", "10.0.2.15", 40000, 6666, b"x" * 40, udp_len=9000)),
                    ip(ip_udp("10.0.2.2", "10.0.2.15", 40000, 6666, b"BT1 K ABCDEF d",
                              frag=0x2000)),                           # a fragment: dropped
                    ip(ip_udp("10.0.2.2", "10.0.2.15", 40000, 6666, b"BT1 R " + b"9" * 1400))[:60],
                    ip(ip_udp("10.0.2.2", "10.0.2.15", 40000, 6666,
                              b"BT1 R 0123456789ABCDEF.1 " + b"0-4294967294," * 60 + b"1\n")),
                ]
            rng.shuffle(frames)                       # each kind all along the flood
            start = len(m.output())
            for i, f in enumerate(frames):
                inject.sendto(f, ("127.0.0.1", hub))
                if i % 50 == 49:
                    time.sleep(0.02)                   # QEMU's hub queue stays small
            m.wait_for(rb"net: \d+ key datagrams refused so far \(without this boot's key; "
                       rb"the last from 10\.0\.2\.2\)", 60, start=start)
            time.sleep(2)
            self.assertNotIn(b"DUMP BEGIN", m.output()[start:], "a key was taken")
            m.send(b"s")                              # still answering
            stats = m.wait_for(rb"stats: net=e1000:00:03\.0 ip=10\.0\.2\.15: datagrams sent "
                               rb"\d+, not sent \d+; frames received (\d+), .*key datagrams "
                               rb"refused (\d+)", 60, start=start)
            # Under load the guest polls less often than frames come, and QEMU
            # drops what its receive ring cannot take: most, not all, arrive.
            self.assertGreater(int(stats.group(1)), 100, "the frames reached it")
            self.assertGreaterEqual(int(stats.group(2)), 1)
            self.heard(m)
            start = len(m.output())
            serial = m.dump()
            m.wait_for(CONFIRMED, 60, start=start)
        finally:
            cap.stop()
            inject.close()
        self.assertEqual(m.faults(), [])
        self.check_dump(serial, online=2)
        self.same_events(serial, self.check_net_dump(cap.log()))


class NetAbsent(NetCase):

    def test_no_nic(self):
        m, info = self.boot(smp=1)
        self.assertEqual((info["net"], info["ip"]), ("none", "none"))
        self.assertIn(b"net: no network controller", m.output())
        self.assertTrue(m.dump().complete)

    def test_net_off(self):
        m, info = self.boot(smp=1, nic="e1000", cmdline="net=off net.to=10.0.2.2:9")
        self.assertEqual((info["net"], info["ip"]), ("off", "none"))
        self.assertNotIn(b"82540EM", m.output())

    def test_no_link_then_cable_plugged(self):
        self.link_down_then_plugged("e1000")


class NetOnScreen(ScreenCase):
    """The session code stays on the screen's status row."""

    def test_session_code_on_the_status_row(self):
        m, _ = self.boot(smp=1, nic="e1000", cmdline=f"net.to={HOST}:{free_port()}")
        code = re.search(CODE, m.output()).group(1).decode()
        _, rows = self.wait_screen(m.qmp(), rf"net session {code}")
        self.assertIn(f"net session {code}", rows[0])
