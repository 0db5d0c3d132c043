"""x2APIC end to end under TCG (issue 28): more than 255 CPUs and APIC IDs
above 254, booted, traced, dumped and decoded. Needs QEMU 8.1 or later
(x2APIC under TCG); with an older QEMU each test says it was skipped and
the version it found (scripts/install-deps --test installs a newer one
where the distribution has it).

Two boots, each doing several checks (the first only in `make test-long`):
- 288 vCPUs (APIC IDs 0-287): every CPU online in x2APIC mode, the ipi
  workload between CPUs below and above 255, `s`/`p`/`S` at that size, a
  dump over the network and the serial line that decode complete with 288
  CPUs and the timer ticking on every one, then a warm reset and `l`
  giving back all 288 rings.
- 195 vCPUs as 3 sockets of 65 cores: sparse APIC IDs (socket 2's start
  at 256), with trace.memory=64K (under the 64-event floor, said): a fault
  dump on the last CPU (APIC 320) with the real IDs in
  `%C`, the decoder and the Perfetto tracks; c2c between CPUs below and
  above 255; a hung CPU above 255 named as silent and reached by an NMI.
"""
import csv
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_manycpus import ManyCpusCase, SCREEN_ROWS
from test_net import Capture, HOST, CONFIRMED, ADDRESS, LAB_KEY
from test_netcapture import free_port
from harness import run_alone
from btlib.dump import dumplog
from btlib.qemu import launch as qemu

PYTHON = sys.executable
DECODE = os.path.join(HERE, "..", "..", "scripts", "decode")
NO_X2APIC = qemu.x2apic_missing()
DUMP_END = rb"^DUMP END[^\r\n]*\r?\n"
DUMP_TIMEOUT_S = 600           # 288 rings over the serial line, loaded host
WORKLOAD_TIMEOUT_S = 600
RESET_TIMEOUT_S = 600

SCREEN_COLS = 128              # the framebuffer console: 1024 / 8
BIG = 288
# Small rings: 288 x 256 events is a dump of about 3 MB; the newest
# events (timer ticks) are what the checks read.
BIG_EVENTS = 256
# The ipi workload's CPUs: both sides of the 255 boundary (CPU = APIC ID
# on this machine).
IPI_CPUS = [0, 254, 255, 256, 287]

SOCKETS, CORES = 3, 65
SPARSE = SOCKETS * CORES
CORE_BITS = 128                # 65 cores take 7 bits of the APIC ID
SPARSE_APIC = [s * CORE_BITS + c for s in range(SOCKETS) for c in range(CORES)]
FAULT_CPU = SPARSE - 1         # APIC 320
HUNG_CPU = SPARSE - 2          # APIC 319
C2C_CPUS = [0, 64, 65, 130, 131]   # APIC 0, 64, 128, 256, 257


@unittest.skipIf(NO_X2APIC, NO_X2APIC)
class X2apicCase(ManyCpusCase):

    def check_ready(self, info, cpus):
        self.check_all_online(self.m, info, cpus, x2apic=1)

    def decode(self, data, *args):
        """scripts/decode on a log (bytes): its stdout."""
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "serial.log")
            with open(log, "wb") as f:
                f.write(data)
            r = subprocess.run([PYTHON, DECODE, log, *args], capture_output=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        return r.stdout.decode(errors="replace")

    def matrix_labels(self, text, title):
        """The CPU numbers labelling the columns of a workload's matrix."""
        matrix = text[text.index(title):]
        header = re.search(r"^ticks((?: +\d+)+)\s*$", matrix, re.M)
        self.assertIsNotNone(header, matrix[:2000])
        return [int(c) for c in header.group(1).split()]

    def csv_rows(self, data):
        """The last dump of a log as scripts/decode -f csv rows (dicts)."""
        return list(csv.DictReader(io.StringIO(self.decode(data, "-f", "csv"))))


@unittest.skipUnless(os.environ.get("BT_LONG") == "1", "make test-long runs it (BT_LONG=1)")
class TwoEightyEight(X2apicCase):
    """make test-long: a minute of both cores on an idle CI machine, the
    longest boot of all. What it checks stays in every make test in
    another form: x2APIC mode, IDs above 255 and an NMI to one
    (SparseIds), CPU numbers past 255 in records (test_ring.c,
    test_many_cpus), rings kept across a warm reset (test_fault.Reset,
    test_persist.c), a network dump equal to the serial one (test_net)."""

    def test_288_cpus_ipi_keys_dumps_and_warm_reset(self):
        port = free_port()
        cap = Capture(self.id(), port)
        self.addCleanup(cap.stop)
        cpus = ",".join(map(str, IPI_CPUS))
        self.m, info = self.boot(smp=BIG, mem="1G", machine="q35", nic="e1000", no_reboot=False,
                                 cmdline=f"net.key={LAB_KEY} net.to={HOST}:{port} "
                                         f"trace.events={BIG_EVENTS} timer_hz=10 "
                                         f"workload=ipi:cpus={cpus},samples=4")
        m = self.m
        self.check_ready(info, BIG)
        m.wait_for(ADDRESS, 120, start=0)

        # IPIs both ways across the boundary, every pair measured.
        m.wait_for(rb"^workload: ipi run=\d+ done", WORKLOAD_TIMEOUT_S, start=0)
        text = m.text()
        self.assertIn(f"workload: ipi run=1 started on {len(IPI_CPUS)} CPUs:", text)
        self.assertEqual(self.matrix_labels(text, "ipi: median IPI round trip"), IPI_CPUS)
        self.assertNotIn("pairs not measured", text)

        # s, p and S at 288 CPUs: the summaries fit the screen, S has them all.
        out = self.key_output(m, b"s", rb"^late max [^\r\n]*\r?\n")
        out = out[out.index("stats: uptime"):]
        self.assertIn(f"stats: {BIG} CPUs, more than a screen's table (S prints it)", out)
        self.assertLess(len(out.splitlines()), SCREEN_ROWS, "s fits the screen")
        rows = re.findall(r"^(?:recorded|overwritten|excluded|refused|rate/s|tick-handler avg"
                          r"|late max) .*$", out, re.M)
        self.assertEqual(len(rows), 7, out)
        self.assertTrue(all(len(line) <= SCREEN_COLS for line in rows), out)
        out = self.key_output(m, b"p", rb"^cpu +seq +since boot[^\r\n]*\r?\n")
        self.assertIn(f"newest: the 24 newest events of all {BIG} CPUs", out)
        start = len(m.output())
        m.send(b"S")
        m.wait_for(rb"^cpu +seq +since boot", 300, start=start)
        full = m.output()[start:].decode(errors="replace")
        rows = re.findall(r"^ *(\d+) +\d+ +\d+ +\d+ +\d+ +\d+ +\d+/s", full, re.M)
        self.assertEqual(sorted(int(c) for c in rows), list(range(BIG)), "S: a row per CPU")

        # A dump: serial and network, the same events, 288 CPUs, complete.
        start = len(m.output())
        m.send(b"d")
        m.wait_for(DUMP_END, DUMP_TIMEOUT_S, start=start)
        m.wait_for(CONFIRMED, DUMP_TIMEOUT_S, start=start)
        serial_bytes = m.output()[start:]
        d = dumplog.parse_log(serial_bytes)[-1]
        self.assertTrue(d.complete, d.warnings)
        self.assertEqual(sorted(c.apic_id for c in d.cpus), list(range(BIG)))
        listed = self.decode_list(serial_bytes)
        self.assertEqual((listed[-1]["STATE"], listed[-1]["CPUS"]), ("complete", str(BIG)))
        cap.stop()
        with open(cap.log(), "rb") as f:
            net_bytes = f.read()
        net = [x for x in dumplog.parse_log(net_bytes) if x.header.get("nonce") ==
               d.header.get("nonce") and x.header.get("dump") == d.header.get("dump")]
        self.assertTrue(net and net[-1].complete, "the network dump decodes complete")

        def key(x):
            return [(e.cpu, e.seq, e.tsc, e.type, e.a0, e.a1) for e in x.events()]
        self.assertEqual(key(net[-1]), key(d), "network dump = serial dump")
        # The timer ticks on every CPU in x2APIC mode.
        rows = self.csv_rows(serial_bytes)
        ticked = {int(r["cpu"]) for r in rows if r["name"] == "IRQ_TIMER_BEGIN"}
        self.assertEqual(ticked, set(range(BIG)), "a timer tick on every CPU")

        # A warm reset keeps all 288 rings; l dumps them with their IDs.
        start = len(m.output())
        m.qmp().command("system_reset")
        again = m.wait_for(rb"READY [^\r\n]*prev_events=(\d+)[^\r\n]*\r?\n", RESET_TIMEOUT_S,
                           start=start)
        self.assertGreater(int(again.group(1)), 0)
        self.assertRegex(m.text(), rf"previous boot 1's trace kept at 0x[0-9a-f]+: {BIG} CPUs")
        prev = m.dump("l", timeout=DUMP_TIMEOUT_S)     # the previous boot's rings
        self.assertTrue(prev.complete, prev.warnings)
        self.assertEqual(prev.header.get("boot"), "previous")
        self.assertEqual(sorted(c.apic_id for c in prev.cpus), list(range(BIG)))
        self.assertEqual(m.faults(), [])


class SparseIds(X2apicCase):

    @run_alone("195 vCPUs, and c2c pairs across APIC ID 255")
    def test_sparse_ids_fault_c2c_and_hung_cpu_above_255(self):
        cpus = ",".join(map(str, C2C_CPUS))
        self.m, info = self.boot(
            smp=SPARSE, topology=f"{SPARSE},sockets={SOCKETS},cores={CORES}", mem="1G", machine="q35",
            cmdline=f"debug.fault={FAULT_CPU} debug.hang={HUNG_CPU} trace.memory=64K timer_hz=10 "
                    f"workload=c2c:cpus={cpus},samples=4,trips=20")
        m = self.m
        self.check_ready(info, SPARSE)
        # 64 KiB for 195 CPUs would be 10-event rings: the floor of 64, said.
        self.assertIn(f"trace: trace.memory=64 KiB is 10 events per CPU for {SPARSE} CPUs, "
                      f"under the minimum of 64; using 64 ({SPARSE * 64 * 32 // 1024} KiB)",
                      m.text())
        self.assertRegex(m.text(), rf"trace: {SPARSE} rings of 64 events")

        # The fault dump on CPU 194 (APIC 320), by itself: the real IDs in
        # %C, the decoder's list and stats, and the Perfetto track names.
        m.wait_for(DUMP_END, DUMP_TIMEOUT_S, start=0)
        first = m.output()
        d = dumplog.parse_log(first)[0]
        self.assertTrue(d.complete, d.warnings)
        self.assertEqual((d.header.get("trigger"), d.header.get("fault_cpu")),
                         ("fault", str(FAULT_CPU)))
        self.assertEqual([c.apic_id for c in sorted(d.cpus, key=lambda c: c.cpu)], SPARSE_APIC)
        self.assertRegex(m.text(), rf"EXCEPTION cpu={FAULT_CPU} ")
        perfetto = self.decode(first, "--dump", "0", "-f", "json")
        names = set(re.findall(r'"CPU (\d+) \(APIC (\d+)\)"', perfetto))
        self.assertEqual(sorted((int(c), int(a)) for c, a in names),
                         list(enumerate(SPARSE_APIC)))

        # c2c between CPUs below and above 255, every pair measured.
        m.wait_for(rb"^workload: c2c run=\d+ done", WORKLOAD_TIMEOUT_S, start=0)
        text = m.text()
        self.assertIn(f"workload: c2c run=1 started on {len(C2C_CPUS)} CPUs:", text)
        self.assertEqual(self.matrix_labels(text, "c2c: one-way cache-line latency"), C2C_CPUS)
        self.assertNotIn("pairs not measured", text)

        # The hung CPU (APIC 319): a dump names it silent and goes on...
        start = len(m.output())
        m.send(b"d")
        m.wait_for(DUMP_END, DUMP_TIMEOUT_S, start=start)
        d = dumplog.parse_log(m.output()[start:])[-1]
        self.assertIn(str(HUNG_CPU), d.header.get("silent_cpus", "").split(","), d.header)
        self.assertRegex(m.text(), rf"CPU {HUNG_CPU} does not answer")
        # ...and an NMI reaches it though its interrupts are off: it
        # records where the NMI found it.
        time.sleep(3)
        start = len(m.output())
        m.qmp().command("inject-nmi")
        m.wait_for(DUMP_END, DUMP_TIMEOUT_S, start=start)
        nmi = dumplog.parse_log(m.output()[start:])[-1]
        self.assertEqual(nmi.header.get("trigger"), "nmi")
        hit = {int(r["cpu"]) for r in self.csv_rows(m.output()[start:])
               if r["name"] == "EXCEPTION" and int(r["a0"], 0) == 2}
        self.assertIn(HUNG_CPU, hit, "the NMI reached the hung CPU above 255")
        self.assertIn(0, hit)


if __name__ == "__main__":
    unittest.main()
