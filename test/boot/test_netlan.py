"""scripts/capture --net as a user runs it on a LAN (issue 27, the host's
side), against the real kernel under QEMU: the README's recipe with the
machine booted and idle first, a relay that damages bytes, a capture
restarted in the middle of a dump. Networks stay on this machine (QEMU's
user network, whose host side is 127.0.0.1); the kernel is told
net.to=10.0.2.2:PORT, so it never broadcasts, and capture never asks
anyone (no --ask)."""
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import LOG_DIR, scaled
from test_net import (CAPTURE, CODE, CONFIRMED, LAB_KEY, STORE, Capture,
                      NetCase, Relay, decode_list)
from test_netcapture import (free_port, hostile_datagrams, peak_rss_kib,
                             spoofer_got)
from btlib.dump import dumplog

CAPTURE_TIMEOUT_S = 240


class CorruptingRelay(Relay):
    """A Relay that also flips a bit in a share of the dump datagrams' lines."""

    def __init__(self, capture_port, corrupt=0.05, seed=27):
        super().__init__(capture_port, drop=0.0, hold=0.0, seed=seed)
        self.corrupt, self.crng = corrupt, random.Random(seed)
        self.counts["corrupted"] = 0

    def forward(self, data, sock, dest, way):
        head, sep, body = data.partition(b"\n")
        if way == "to_host" and head.startswith(b"BT1 D ") and len(body) > 2 and \
                self.crng.random() < self.corrupt:
            b = bytearray(body)
            b[self.crng.randrange(len(b) - 1)] ^= 0x02
            if b"\n" not in b[:-1] or b.count(b"\n") == body.count(b"\n"):
                data = head + sep + bytes(b)
                self.counts["corrupted"] += 1
        super().forward(data, sock, dest, way)


class PausingRelay(Relay):
    """A Relay that can stop passing anything, as a capture that went away."""

    def __init__(self, capture_port, pause_after=None):
        super().__init__(capture_port, drop=0.0, hold=0.0)
        self.paused = False
        self.dump_datagrams = 0
        # Pause here, in the relay's own thread, after this many dump
        # datagrams: a whole dump leaves in milliseconds, faster than a
        # test that polls the count can react.
        self.pause_after = pause_after

    def forward(self, data, sock, dest, way):
        if way == "to_host" and data.startswith(b"BT1 D "):
            self.dump_datagrams += 1
            if self.pause_after is not None and self.dump_datagrams > self.pause_after:
                self.paused = True
        if not self.paused:
            super().forward(data, sock, dest, way)


class LanCase(NetCase):

    def net_dump(self, path):
        """The last dump of a capture's log, checked whole."""
        d = self.check_net_dump(path)
        rows = decode_list(path)
        self.assertEqual(rows[-1]["STATE"], "complete", rows)
        return d

    def dump_on_serial(self, m, start):
        m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", 120, start=start)
        return dumplog.parse_log(m.output()[start:])[-1]


class Recipe(LanCase):

    def test_machine_booted_idle_then_capture_sends_the_key(self):
        """The README's order on a real PC: boot, read the code off the
        screen, then start capture with --key d --session CODE."""
        port = free_port()
        m, _ = self.net_boot(port, smp=2, keyed=False)
        code = re.search(CODE, m.output()).group(1).decode()
        time.sleep(2)                              # idle: nobody listened to its READY
        start = len(m.output())
        out = tempfile.mkdtemp(prefix="bt-netcap-")
        r = subprocess.run(
            [sys.executable, CAPTURE, "--net", "--listen", f"127.0.0.1:{port}", "-o", out,
             "--key", "d", "--session", code, "--until-dump",
             "--timeout", str(scaled(CAPTURE_TIMEOUT_S))],
            capture_output=True, text=True, timeout=scaled(CAPTURE_TIMEOUT_S) + 60,
            env=dict(os.environ, BARETRACE_KEYS=STORE))
        with open(os.path.join(LOG_DIR, f"{self.id()}.capture.txt"), "w") as f:
            f.write(r.stderr)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertRegex(r.stderr, r"525400123456 at 127\.0\.0\.1:\d+: READY cpus=2 ")
        self.assertIn("525400123456: verified", r.stderr)
        self.assertIn("525400123456: sent 'd'", r.stderr)
        m.wait_for(CONFIRMED, 60, start=start)
        serial = self.dump_on_serial(m, start)
        self.same_events(serial, self.net_dump(os.path.join(out, "525400123456.log")))


class Damage(LanCase):

    def test_relay_that_damages_bytes(self):
        cap_port = free_port()
        relay = CorruptingRelay(cap_port)
        cap = Capture(self.id(), cap_port)
        try:
            m, _ = self.net_boot(relay.port, smp=2, cmdline="timer_hz=1000")
            self.heard(m)
            time.sleep(2)
            start = len(m.output())
            serial = m.dump()
            m.wait_for(CONFIRMED, 120, start=start)
        finally:
            relay.stop()
            cap.stop()
        self.assertGreater(relay.counts["corrupted"], 0, relay.counts)
        said = cap.said()
        # A damaged datagram fails its tag before its lines' CRCs: refused
        # whole, and its lines asked for again.
        self.assertRegex(said, r"dump 1 complete: .*asked again for [1-9]\d* lines")
        self.assertIn("refused a datagram its key does not prove", said)
        self.check_dump(serial, online=2)
        self.same_events(serial, self.net_dump(cap.log()))


class Restart(LanCase):

    def test_capture_restarted_mid_dump(self):
        cap_port = free_port()
        relay = PausingRelay(cap_port, pause_after=20)
        first = Capture(self.id() + ".first", cap_port)
        second = None
        try:
            m, _ = self.net_boot(relay.port, smp=2, cmdline="trace.dump_to=net timer_hz=2000 "
                                 "trace.events=8192")
            self.heard(m)                         # the paused wait is then 5 s, not 0.3
            time.sleep(3)
            start = len(m.output())
            m.send(b"d")
            deadline = time.monotonic() + scaled(120)
            while not relay.paused and time.monotonic() < deadline:
                time.sleep(0.01)                  # the first capture hears no more
            self.assertTrue(relay.paused, "the dump began")
            relay.pause_after = None              # what comes next is for the second
            first.stop()
            second = Capture(self.id() + ".second", cap_port, "--until-dump", out=first.dir)
            time.sleep(1)
            relay.paused = False
            m.wait_for(CONFIRMED, 120, start=start)
            second.proc.wait(scaled(60))
        finally:
            relay.stop()
            first.stop()
            if second is not None:
                second.stop()
        self.assertIn("incomplete at exit", first.said())
        self.assertEqual(second.proc.returncode, 0, second.said()[-2000:])
        with open(first.log(), "rb") as f:
            text = f.read()
        ready_at = text.index(b"READY ")
        marker = text.index(b"\ncapture: a new capture started at ")
        self.assertLess(ready_at, marker, "the first capture's text is kept, before the marker")
        self.net_dump(first.log())


class Hostile(LanCase):

    def test_hostile_sender_beside_a_real_machine(self):
        """Huge line counts, thousands of MACs and datagrams in the real
        machine's MAC, from 127.0.0.1, while it dumps: capture stays small,
        the real dump completes, the spoofer gets no key, code or A."""
        port, mac = free_port(), "525400123456"
        cap = Capture(self.id(), port, "--key", "d", "--mac", mac, "--until-dump",
                      "--timeout", str(scaled(CAPTURE_TIMEOUT_S)))
        evil = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
        for s in evil:
            s.bind(("127.0.0.1", 0))
            self.addCleanup(s.close)
        stop, rounds, peak = threading.Event(), [0], [0]

        def flood():
            while not stop.is_set() and cap.proc.poll() is None:
                hostile_datagrams(evil, ("127.0.0.1", port), rounds[0], mac, "0123456789ABCDEF")
                rounds[0] += 1
                if rounds[0] % 50 == 0:
                    try:
                        peak[0] = max(peak[0], peak_rss_kib(cap.proc.pid))
                    except (OSError, AttributeError):
                        pass                      # capture has just exited
                    time.sleep(0.01)
        flooder = threading.Thread(target=flood, daemon=True)
        try:
            m, _ = self.net_boot(port, smp=2)      # capture hears it first, then the flood
            flooder.start()
            m.wait_for(CONFIRMED, 120, start=0)
            serial = self.dump_on_serial(m, 0)
            cap.proc.wait(scaled(60))
        finally:
            stop.set()
            cap.stop()
        said = cap.said()
        self.assertGreater(rounds[0], 500, "the flood ran")
        self.assertEqual(cap.proc.returncode, 0, said[-2000:])
        self.assertNotIn("Traceback", said)
        self.assertIn("refused", said)
        self.assertLess(peak[0], 100 * 1024, "capture's memory grew with the flood")
        spoofer_got(self, evil, [LAB_KEY])
        log = os.path.join(cap.dir, f"{mac}.log")
        with open(log, "rb") as f:
            self.assertNotIn(b"EVIL", f.read())
        self.same_events(serial, self.net_dump(log))
