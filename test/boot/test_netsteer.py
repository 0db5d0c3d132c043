"""A capture no other host can steer (issue 33), against the real kernel
under QEMU: the README's recipe (--key d --until-dump --session CODE,
no --mac) beside a host that forges announcements, console lines and
whole dumps with valid CRCs, from the machine's own address and port (raw
datagrams on 127.0.0.1, this machine only); two machines into one
capture with --export; a capture with the wrong key; a flood of
unsigned resend requests; a confirmation with a wrong code named in the
machine's wait message. Networks stay on this machine: QEMU's user
network, whose host side is 127.0.0.1."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "host"))

from harness import ISO, LOG_DIR, Machine, scaled                           # noqa: E402
from test_net import (CAPTURE, CODE, CONFIRMED, HOST, LAB_KEY, STORE,   # noqa: E402
                      Capture, decode_list, ip_udp)
from test_netlan import LanCase                                         # noqa: E402
from test_nettrust import TrustCase                                     # noqa: E402
from test_netcapture import dump_lines, free_port                       # noqa: E402

CAPTURE_TIMEOUT_S = 240


def spoof(src_port, dst_port, payload):
    """A UDP datagram from 127.0.0.1:src_port, whatever socket holds that
    port (a raw socket: on loopback only)."""
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as s:
        s.sendto(ip_udp("127.0.0.1", "127.0.0.1", src_port, dst_port, payload),
                 ("127.0.0.1", 0))


def forged(kind, mac, words, body=b"", counter=7):
    """A machine datagram in the sealed form with a made-up tag."""
    return f"BT1 {kind} {mac} {words} {counter} {'0' * 16}\n".encode() + body


class Steering(LanCase):

    def test_recipe_beside_a_forger_of_announcements_code_lines_and_dumps(self):
        """The README's recipe on a LAN with a hostile host: it forges, from
        the machine's own address and port, an announcement of a new boot,
        a console line with another session code, and a whole dump 1 of the
        machine's boot with valid CRCs; and as itself it announces and dumps.
        capture still takes the real machine's dump, confirms it, exports
        it, and the log holds nothing forged."""
        port, mac = free_port(), "525400123456"
        m, _ = self.net_boot(port, smp=2, keyed=False)
        code = re.search(CODE, m.output()).group(1).decode()
        out = tempfile.mkdtemp(prefix="bt-netcap-")
        export = os.path.join(tempfile.mkdtemp(prefix="bt-export-"), "dump.json")
        err_path = os.path.join(LOG_DIR, f"{self.id()}.capture.txt")
        err = open(err_path, "w+")
        self.addCleanup(err.close)
        cap = subprocess.Popen(
            [sys.executable, CAPTURE, "--net", "--listen", f"127.0.0.1:{port}", "-o", out,
             "--key", "d", "--delay", "4", "--until-dump", "--session", code,
             "--export", "json", export, "--timeout", str(scaled(CAPTURE_TIMEOUT_S))],
            stdout=err, stderr=subprocess.STDOUT, env=dict(os.environ, BARETRACE_KEYS=STORE))
        self.addCleanup(lambda: cap.poll() is None and cap.kill())

        def said():
            err.flush()
            with open(err_path) as f:
                return f.read()

        deadline = time.monotonic() + scaled(120)
        found = None
        while time.monotonic() < deadline and not found:
            found = re.search(rf"{mac} at 127\.0\.0\.1:(\d+): READY .*\(boot ([0-9A-F]{{16}})\)",
                              said())
            time.sleep(0.2)
        self.assertTrue(found, said())
        src, nonce = int(found.group(1)), found.group(2)
        lines = dump_lines(nonce)                  # valid CRCs, the machine's own dump id
        evil = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        evil.bind(("127.0.0.1", 0))
        self.addCleanup(evil.close)
        other = "0200deadbeef"
        for i in range(3):                         # within the 4 s before the keys
            spoof(src, port, forged("I", mac, f"2222222222222222 {i}",
                                    b"READY cpus=1 ip=10.0.2.15\n"))
            spoof(src, port, forged("T", mac, f"{900 + i} {nonce}",
                                    b"net: session code ZZZZ-ZZZZ-ZZZZ-ZZZZ (forged)\n"))
            for at in range(0, len(lines), 8):
                spoof(src, port, forged("D", mac, f"{nonce}.1 {at}", b"".join(lines[at:at + 8])))
            spoof(src, port, forged("W", mac, f"{nonce}.1 {len(lines)} 5000"))
            # As itself: announced READY, and a whole dump of its own.
            evil.sendto(forged("I", other, f"{nonce} {i}", b"READY cpus=1\n"), ("127.0.0.1", port))
            for at in range(0, len(lines), 8):
                evil.sendto(forged("D", other, f"{nonce}.1 {at}", b"".join(lines[at:at + 8])),
                            ("127.0.0.1", port))
            evil.sendto(forged("W", other, f"{nonce}.1 {len(lines)} 5000"), ("127.0.0.1", port))
            time.sleep(0.5)
        m.wait_for(CONFIRMED, 120, start=0)
        serial = self.dump_on_serial(m, 0)
        cap.wait(scaled(60))
        text = said()
        self.assertEqual(cap.returncode, 0, text[-3000:])
        self.assertNotIn("booted again", text)
        self.assertIn(f"{mac}: refused a datagram its key does not prove", text)
        self.assertRegex(text, rf"{mac}: dump 1 complete: [^\n]*\n")
        self.assertNotRegex(text, rf"{mac}: dump 1 complete: [^\n]*UNVERIFIED")
        self.assertIn(f"{other}: no key of this capture proves its datagrams", text)
        self.assertNotIn(f"{other}: sent", text)
        while True:                                # nothing for the forger: no K, A or R
            evil.settimeout(0.2)
            try:
                data = evil.recv(65536)
            except socket.timeout:
                break
            self.assertFalse(data.startswith((b"BT1 K", b"BT1 A")), data)
        log = os.path.join(out, f"{mac}.log")
        with open(log, "rb") as f:
            logged = f.read()
        self.assertNotIn(b"ZZZZ-ZZZZ", logged)
        self.assertNotIn(b"READY cpus=1 ip", logged)
        rows = decode_list(log)
        self.assertEqual([r["NETWORK"] for r in rows], ["verified"], rows)
        self.same_events(serial, self.net_dump(log))
        with open(export) as f:
            exported = f.read()
        json.loads(exported)
        self.assertIn(nonce, exported, "the export is the machine's dump")
        self.assertEqual(decode_list(os.path.join(out, f"{other}.log"))[0]["NETWORK"],
                         "unverified")


class TwoMachines(LanCase):

    def test_two_machines_one_capture_exports_the_one_it_waited_for(self):
        """Machine A gets the keys (--mac); machine B, dumping too and still
        printing after A's dump is whole, has the newest log: --export
        writes A's dump all the same."""
        port = free_port()
        out = tempfile.mkdtemp(prefix="bt-netcap-")
        export = os.path.join(tempfile.mkdtemp(prefix="bt-export-"), "a.json")
        mac_a, mac_b = "52:54:00:aa:00:01", "52:54:00:bb:00:02"
        cap = Capture(self.id(), port, "--mac", mac_a, "--key", "d", "--delay", "6",
                      "--until-dump", "--export", "json", export,
                      "--timeout", str(scaled(CAPTURE_TIMEOUT_S)), out=out)
        self.addCleanup(cap.stop)
        b = Machine(self.id() + ".b", smp=1, nic="e1000", mac=mac_b,
                    cmdline=f"net.key={LAB_KEY} net.to={HOST}:{port}")
        b.start()
        self.addCleanup(b.stop)
        b.ready()
        self.dump(b)                               # B's dump, whole in its log
        a, _ = self.net_boot(port, smp=1, mac=mac_a)
        stop = threading.Event()

        def chatter():                             # B keeps its log the newest
            while not stop.is_set():
                b.send(b"s")
                time.sleep(0.3)
        t = threading.Thread(target=chatter, daemon=True)
        t.start()
        try:
            a.wait_for(CONFIRMED, 120, start=0)
            cap.proc.wait(scaled(60))
        finally:
            stop.set()
            t.join(5)
        said = cap.said()
        self.assertEqual(cap.proc.returncode, 0, said[-3000:])
        a_log = os.path.join(out, "525400aa0001.log")
        b_log = os.path.join(out, "525400bb0002.log")
        self.assertGreater(os.path.getmtime(b_log), os.path.getmtime(a_log) - 1)
        a_nonce = decode_list(a_log)[-1]["NONCE"]
        b_nonce = decode_list(b_log)[-1]["NONCE"]
        self.assertNotEqual(a_nonce, b_nonce)
        with open(export) as f:
            exported = f.read()
        self.assertIn("exported dump", said)
        self.assertIn(a_nonce, exported, "the export is A's dump")
        self.assertNotIn(b_nonce, exported)


class StickKey(LanCase):

    def test_a_stick_from_mkusb_is_proven_with_no_code_typed(self):
        """mkusb writes a fresh key into the stick's grub.cfg and keeps it in
        the key store; capture --net reads the store: the machine booted
        from the stick is verified and takes the keys."""
        tmp = tempfile.mkdtemp(prefix="bt-stick-")
        store, img = os.path.join(tmp, "store"), os.path.join(tmp, "stick.img")
        env = dict(os.environ, BARETRACE_KEYS=store)
        r = subprocess.run([sys.executable, os.path.join(os.path.dirname(CAPTURE), "mkusb"),
                            ISO, img, "--allow-file", "--yes"], capture_output=True, text=True,
                           timeout=300, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the stick's network key is kept in", r.stderr)
        port = free_port()
        out = tempfile.mkdtemp(prefix="bt-netcap-")
        err_path = os.path.join(LOG_DIR, f"{self.id()}.capture.txt")
        with open(err_path, "w") as err:
            cap = subprocess.Popen([sys.executable, CAPTURE, "--net", "--listen",
                                    f"127.0.0.1:{port}", "-o", out, "--key", "d",
                                    "--until-dump", "--timeout", str(scaled(CAPTURE_TIMEOUT_S))],
                                   stdout=err, stderr=subprocess.STDOUT, env=env)
            self.addCleanup(lambda: cap.poll() is None and cap.kill())
            m, _ = self.boot(fw="bios", media="usb", smp=1, iso=img, nic="e1000",
                             cmdline=f"net.to={HOST}:{port}")
            self.assertIn(b"net: keyed by net.key", m.output())
            m.wait_for(CONFIRMED, 120, start=0)
            cap.wait(scaled(60))
        with open(err_path) as f:
            said = f.read()
        self.assertEqual(cap.returncode, 0, said[-3000:])
        self.assertRegex(said, r"525400123456: verified: its datagrams are proven by key "
                               r"stick-\d{8}-\d{6}")
        rows = decode_list(os.path.join(out, "525400123456.log"))
        self.assertEqual([r["NETWORK"] for r in rows], ["verified"], rows)


class WrongKey(LanCase):

    def test_capture_with_the_wrong_key_verifies_nothing_and_says_so(self):
        port = free_port()
        wrong = os.path.join(tempfile.mkdtemp(prefix="bt-netkeys-"), "wrong.key")
        with open(wrong, "w") as f:
            f.write("0" * 32 + "\n")
        cap = Capture(self.id(), port, "--key-file", wrong, "--key", "d", keyed=False)
        self.addCleanup(cap.stop)
        m, _ = self.net_boot(port, smp=1)
        start = len(m.output())
        m.send(b"d")
        m.wait_for(rb"dumpnet: dump 1: [^\n]*(?:not confirm|no host)", 120, start=start)
        cap.stop()
        said = cap.said()
        self.assertIn("525400123456: no key of this capture proves its datagrams", said)
        self.assertIn("525400123456: READY; no keys for it: no key of this capture proves it",
                      said)
        self.assertRegex(said, r"UNVERIFIED \(no key proved them\): 525400123456")
        self.assertNotIn(b"DUMP BEGIN v=2 dump=2", m.output(), "no key was taken")
        log = cap.log()
        rows = decode_list(log)
        self.assertEqual([r["NETWORK"] for r in rows], ["unverified"], rows)
        with open(log, "rb") as f:
            self.assertIn(b"capture: unverified: ", f.read())


class Amplifier(TrustCase):

    def test_unsigned_resend_flood_is_bounded(self):
        """500 unsigned R asking for every line, while the host with the key
        holds the wait open with signed requests: each line is sent again
        a few times at most, not 500."""
        peer = self.start_peer()
        peer.sign_requests = True
        m, _ = self.net_boot(peer.port, smp=1, cmdline="trace.dump_to=net")
        self.meet(peer, m)
        start = len(m.output())
        peer.keys(b"d", 1)
        peer.wait(lambda: peer.total, 120, "no BT1 W")
        dump_id = next(iter(peer.total))
        lines = peer.total[dump_id]
        hostile = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        hostile.bind(("127.0.0.1", 0))
        self.addCleanup(hostile.close)
        for i in range(500):
            hostile.sendto(f"BT1 R {dump_id} 0-{lines - 1}\n".encode(), peer.machine)
            if i % 20 == 19:
                time.sleep(0.05)
        time.sleep(3)
        peer.confirm.set()
        done = m.wait_for(rb"dumpnet: dump 1: the host confirmed all (\d+) lines \((\d+) sent "
                          rb"again", 120, start=start)
        # Each of the host's own (signed) requests asks for one line or the
        # lines it lacks: those are its due; the flood's share is bounded.
        flood_share = int(done.group(2)) - peer.requests
        self.assertLessEqual(flood_share, 4 * int(done.group(1)), (done.group(0), peer.requests))


class WrongCode(TrustCase):

    def test_confirmations_with_a_wrong_code_are_named(self):
        peer = self.start_peer()
        m, _ = self.net_boot(peer.port, smp=1, cmdline="trace.dump_to=net")
        self.meet(peer, m)
        start = len(m.output())
        peer.keys(b"d", 1)
        peer.wait(lambda: peer.total, 120, "no BT1 W")
        peer.sign_with = bytes(16)                  # from now on it signs with a wrong key
        peer.confirm.set()
        m.wait_for(rb"dumpnet: dump 1: [^\n]*a host answered with a wrong code: \d+ "
                   rb"confirmations or requests refused", 120, start=start)
