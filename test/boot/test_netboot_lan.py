"""scripts/netboot for real (issue 30): dnsmasq serving make netboot's tree
on a LAN that the test builds inside network namespaces, to a QEMU PC
plugged into it by a tap device. Nothing leaves this machine: the bridge,
the tap and the veth pair exist only in the test's namespaces.

* Full DHCP (--dhcp): netboot is the lab switch's only server.
* Proxy-DHCP (the default): a second dnsmasq in its own namespace plays the
  office's DHCP server (addresses only); netboot adds the boot information.
  This PC boots UEFI (OVMF), the other BIOS (SeaBIOS).
Either way the PC boots GRUB and the kernel over TFTP with netboot's
--cmdline (READY says boot=net and the option took effect), netboot shows
the machine as it asks, and Ctrl-C stops it cleanly.

Its refusals of bad input boot nothing: test/host/test_netboot_cli.py."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

from harness import LOG_DIR, scaled
from test_netboot import need_netboot, NETBOOT
from test_net import CAPTURE, decode_list
from btlib.dump import ready as readyline
from btlib.qemu import launch as qemu

REPO = os.path.dirname(os.path.dirname(HERE))
NETBOOT_CMD = os.path.join(REPO, "scripts", "netboot")
LAB_NET, HOST_IP = "10.77.0", "10.77.0.1"
CMDLINE = "timer_hz=250 trace.events=1024"
BOOT_TIMEOUT_S = 240


def sh(*argv, ns=None):
    full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    r = subprocess.run(full, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(full)}: {r.stderr.strip()}")
    return r.stdout


def can_make_namespaces():
    return os.geteuid() == 0 and subprocess.run(["ip", "netns", "list"],
                                                capture_output=True).returncode == 0


class Lan:
    """A namespace with a bridge (HOST_IP/24) and a tap for QEMU; with
    office=True a second namespace joined to the bridge by a veth pair."""

    def __init__(self, name, office=False, taps=1):
        self.ns = f"bt{name}{os.getpid()}"
        self.office = f"{self.ns}o" if office else None
        sh("ip", "netns", "add", self.ns)
        for cmd in (["ip", "link", "set", "lo", "up"],
                    ["ip", "link", "add", "br0", "type", "bridge"],
                    ["ip", "addr", "add", f"{HOST_IP}/24", "dev", "br0"],
                    ["ip", "link", "set", "br0", "up"]):
            sh(*cmd, ns=self.ns)
        for tap in (f"tap{i}" for i in range(taps)):
            for cmd in (["ip", "tuntap", "add", "dev", tap, "mode", "tap"],
                        ["ip", "link", "set", tap, "master", "br0"],
                        ["ip", "link", "set", tap, "up"]):
                sh(*cmd, ns=self.ns)
        if office:
            sh("ip", "netns", "add", self.office)
            sh("ip", "link", "add", "veth0", "type", "veth", "peer", "name", "veth1",
               "netns", self.office, ns=self.ns)
            sh("ip", "link", "set", "veth0", "master", "br0", ns=self.ns)
            sh("ip", "link", "set", "veth0", "up", ns=self.ns)
            sh("ip", "addr", "add", f"{LAB_NET}.2/24", "dev", "veth1", ns=self.office)
            sh("ip", "link", "set", "veth1", "up", ns=self.office)
        self.procs = []

    def start(self, argv, log, ns=None):
        f = open(log, "w")
        p = subprocess.Popen(["ip", "netns", "exec", ns or self.ns] + argv, stdout=f,
                             stderr=subprocess.STDOUT, text=True)
        self.procs.append((p, f))
        return p

    def close(self):
        for p, f in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)    # netboot stops its dnsmasq
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            f.close()
        for ns in filter(None, (self.ns, self.office)):
            for pid in sh("ip", "netns", "pids", ns).split():   # this test's own, by id
                os.kill(int(pid), signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:           # QEMU has not created its serial file yet
        return b""


def wait_for(path, pattern, timeout, proc=None):
    deadline = time.monotonic() + scaled(timeout)
    while time.monotonic() < deadline:
        m = re.search(pattern, read(path))
        if m:
            return m
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(1)
    tail = read(path)[-1500:].decode("ascii", "replace")
    raise AssertionError(f"no /{pattern.decode()}/ in {path} within {timeout} s: ...{tail}")


@unittest.skipUnless(can_make_namespaces(), "needs root and ip netns")
class ServedOnALan(unittest.TestCase):

    def boot_pc(self, lan, name, fw="bios", tap="tap0", mac=None, smp=2):
        """A QEMU PC on the lab's tap, netbooting; its serial log path."""
        serial = os.path.join(LOG_DIR, f"{name}.log")
        if os.path.exists(serial):
            os.unlink(serial)                 # a former run's READY is not this one's
        opts = qemu.Options(iso="", fw=fw, smp=smp, accel="tcg", serial=f"file:{serial}",
                            netboot=NETBOOT, nic="e1000", mac=mac,
                            netdev=f"tap,ifname={tap},script=no,downscript=no")
        lan.start(qemu.build_argv(opts), serial + ".qemu.txt")
        return serial

    def serve(self, name, office, fw="bios"):
        need_netboot()
        os.makedirs(LOG_DIR, exist_ok=True)
        lan = Lan(name, office)
        self.addCleanup(lan.close)
        if office:          # the office's DHCP server: addresses, no boot information
            lan.start(["dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=0",
                       "--interface=veth1", "--bind-interfaces", "--log-facility=-",
                       f"--dhcp-range={LAB_NET}.50,{LAB_NET}.60,255.255.255.0,1h",
                       f"--dhcp-leasefile={tempfile.mktemp(prefix='bt-office-')}"],
                      os.path.join(LOG_DIR, f"{name}.office.txt"), ns=lan.office)
        args = [sys.executable, NETBOOT_CMD, "--interface", "br0", "--cmdline", CMDLINE]
        if not office:
            args += ["--dhcp", f"{LAB_NET}.100,{LAB_NET}.150"]
        out = os.path.join(LOG_DIR, f"{name}.netboot.txt")
        server = lan.start(args, out)
        wait_for(out, rb"serving on br0", 30, server)
        serial = self.boot_pc(lan, name, fw)
        m = wait_for(serial, readyline.LINE, BOOT_TIMEOUT_S)
        ready = readyline.parse(m.group(1))
        self.assertEqual(ready["boot"], "net")
        self.assertEqual(ready["timer_hz"], "250")            # netboot's --cmdline took effect
        wait_for(serial, rf'cmdline "net\.key=\*{{32}} {CMDLINE}"'.encode(), 5)   # the lab key
        addr = wait_for(serial, rb"net: address (10\.77\.0\.\d+) \(DHCP\)", 60).group(1)
        wait_for(out, rb"52:54:00:12:34:56 asks \(" + fw.upper().encode() + rb" PXE\)", 10)
        wait_for(out, rb"fetched .*boot/baretrace\.elf", 10)
        server.send_signal(signal.SIGINT)                       # Ctrl-C
        self.assertEqual(server.wait(30), 0)
        wait_for(out, rb"stopped; 1 machine\(s\) asked", 5)
        left = sh("ip", "netns", "pids", lan.ns).split()
        self.assertEqual(len(left), 1, "dnsmasq outlived netboot")   # QEMU alone
        return out, addr.decode()

    def test_full_dhcp(self):
        out, addr = self.serve("nbfull", office=False)
        self.assertIn("as the DHCP server", open(out).read())
        self.assertTrue(100 <= int(addr.split(".")[-1]) <= 150, addr)

    def test_proxy_beside_office_dhcp(self):
        out, addr = self.serve("nbproxy", office=True, fw="uefi")
        self.assertIn("as a proxy-DHCP server", open(out).read())
        self.assertTrue(50 <= int(addr.split(".")[-1]) <= 60, addr)   # the office's lease


@unittest.skipUnless(can_make_namespaces(), "needs root and ip netns")
class KeyedLab(unittest.TestCase):
    """Three PCs netbooted with the lab's key, and capture --net on the
    same host: no code typed, keys sent, every datagram proven, every log
    verified; the machines' default broadcast net.to turns to the host
    once it proved itself."""

    MACS = ("52:54:00:0c:a7:01", "52:54:00:0c:a7:02", "52:54:00:0c:a7:03")

    def test_three_machines_no_code_typed_every_log_verified(self):
        need_netboot()
        os.makedirs(LOG_DIR, exist_ok=True)
        lan = Lan("nbkey", taps=len(self.MACS))
        self.addCleanup(lan.close)
        store = tempfile.mkdtemp(prefix="bt-netkeys-")
        env = ["env", f"BARETRACE_KEYS={store}"]
        out = os.path.join(LOG_DIR, "nbkey.netboot.txt")
        server = lan.start(env + [sys.executable, NETBOOT_CMD, "--interface", "br0", "--dhcp",
                                  f"{LAB_NET}.100,{LAB_NET}.150", "--cmdline",
                                  "trace.dump_to=net"], out)
        wait_for(out, rb"serving on br0", 30, server)
        self.assertTrue(os.path.exists(os.path.join(store, "netboot.key")), "in the key store")
        logs = tempfile.mkdtemp(prefix="bt-netcap-")
        said = os.path.join(LOG_DIR, "nbkey.capture.txt")
        cap = lan.start(env + [sys.executable, CAPTURE, "--net", "--listen", "0.0.0.0:6666",
                               "-o", logs, "--key", "d"], said)
        wait_for(said, rb"listening on", 30, cap)
        for i, mac in enumerate(self.MACS):
            ServedOnALan.boot_pc(self, lan, f"nbkey{i}", tap=f"tap{i}", mac=mac, smp=1)
        for mac in self.MACS:
            flat = mac.replace(":", "").encode()
            wait_for(said, flat + rb": dump 1 complete: ", BOOT_TIMEOUT_S, cap)
        text = read(said).decode()
        self.assertNotIn("UNVERIFIED", text)
        self.assertNotIn("does not prove", text)
        for mac in self.MACS:
            flat = mac.replace(":", "")
            self.assertIn(f"{flat}: verified: its datagrams are proven by key netboot", text)
            self.assertIn(f"{flat}: sent 'd'", text)
            rows = decode_list(os.path.join(logs, f"{flat}.log"))
            self.assertEqual([(r["STATE"], r["NETWORK"]) for r in rows],
                             [("complete", "verified")], rows)
        for i in range(len(self.MACS)):
            wait_for(os.path.join(LOG_DIR, f"nbkey{i}.log"),
                     rb"dumpnet: dump 1: the host confirmed all \d+ lines", 60)


if __name__ == "__main__":
    unittest.main()
