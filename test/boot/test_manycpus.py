"""Many CPUs from the default image (issue 19): every MADT CPU started up
to the 1024 ceiling, a dump of all of them, `s` and `p` in their summary
form, a pair workload on a cpus= subset, and the ring memory options on a
small machine.

QEMU 7.2 under TCG stops at 255 vCPUs and has no x2APIC, so the x2APIC
path (IDs above 254, MADT type 9) is covered by test_madt.c only. 64 vCPUs
reach READY in about 5 s here; the 255-vCPU boot is in `make test-long`
(test_manycpus_long.py).
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))

from harness import Machine, run_alone
from btlib.dump import dumplog

PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
DECODE = os.path.join(REPO, "scripts", "decode")
DUMP_END = rb"^DUMP END[^\r\n]*\r?\n"
READY_TIMEOUT_S = 300          # 64 emulated CPUs on two busy host cores
DUMP_TIMEOUT_S = 300
WORKLOAD_TIMEOUT_S = 600
# The framebuffer console: 768 / 16 rows, less the two status rows.
SCREEN_ROWS = 46
SUMMARY_TABLE_MAX = 24         # src/perf/summary.h, src/recorder/table.h


def bringup_us(text):
    m = re.search(r"^smp: (\d+) CPUs online in (\d+) us", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


class ManyCpusCase(unittest.TestCase):

    def boot(self, **options):
        m = Machine(self.id(), **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready(timeout=READY_TIMEOUT_S)

    def check_all_online(self, m, info, cpus, **more):
        """READY names every CPU online (and the `more` fields, e.g.
        x2apic=1), and so does the bring-up line, whose time is printed."""
        want = dict(cpus=cpus, found=cpus, parked=0, failed=0, **more)
        for key, value in want.items():
            self.assertEqual(info[key], str(value), f"READY {info}")
        online, took = bringup_us(m.text())
        self.assertEqual(online, cpus)
        print(f"\n  {cpus} CPUs: bring-up {took} us (kernel), READY {m.ready_at:.1f} s after "
              "QEMU started", file=sys.stderr)

    def key_output(self, m, key, done_pattern, timeout=120):
        """Send a key; once done_pattern appeared, the console text since."""
        start = len(m.output())
        m.send(key)
        m.wait_for(done_pattern, timeout, start=start)
        return m.output()[start:].decode(errors="replace")

    def dump(self, m):
        start = len(m.output())
        m.send(b"d")
        m.wait_for(DUMP_END, DUMP_TIMEOUT_S, start=start)
        return m.output()[start:]

    def decode_list(self, log_bytes):
        """scripts/decode LOG --list: the rows as dicts."""
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "serial.log")
            with open(log, "wb") as f:
                f.write(log_bytes)
            res = subprocess.run([PYTHON, DECODE, log, "--list"], capture_output=True,
                                 text=True, timeout=300)
        self.assertEqual(res.returncode, 0, res.stderr + res.stdout)
        lines = res.stdout.strip().splitlines()
        head = lines[0].split()
        return [dict(zip(head, line.split())) for line in lines[1:]]


class SixtyFour(ManyCpusCase):

    @run_alone("64 vCPUs, and c2c pairs that need both vCPUs running")
    def test_64_cpus_dump_summaries_and_c2c_subset(self):
        m, info = self.boot(smp=64, cmdline="workload=c2c:cpus=0-7,samples=4,trips=20")
        for key, want in (("cpus", "64"), ("found", "64"), ("parked", "0"), ("failed", "0")):
            self.assertEqual(info[key], want, f"READY {info}")
        self.assertGreaterEqual(int(info["max"]), 1024, "the default image's ceiling")
        online, took = bringup_us(m.text())
        self.assertEqual(online, 64, "the bring-up line names the CPUs online")
        self.assertGreater(took, 0)
        print(f"\n  64 CPUs: bring-up {took} us, READY {m.ready_at:.1f} s after QEMU started",
              file=sys.stderr)

        # c2c on the 8 CPUs of cpus=0-7: 28 pairs, an estimate, an 8 x 8 matrix.
        m.wait_for(rb"^c2c: 28 pairs to measure", 60, start=0)
        m.wait_for(rb"^workload: c2c run=\d+ done", WORKLOAD_TIMEOUT_S, start=0)
        text = m.text()
        self.assertRegex(text, r"c2c: the first pair took \d+ ms: about \d+ s for all 28")
        matrix = text[text.index("c2c: one-way cache-line latency"):]
        header = re.search(r"^ticks((?: +\d+)+)\s*$", matrix, re.M)
        self.assertEqual([int(c) for c in header.group(1).split()], list(range(8)))
        self.assertNotIn("pairs not measured", matrix)

        # The c2c key: by default 16 CPUs spread over the 64, in blocks of
        # 10 columns that fit an 80-column screen.
        start = len(m.output())
        m.send(b"3")
        m.wait_for(rb"^workload: c2c run=2 done", WORKLOAD_TIMEOUT_S, start=start)
        text = m.output()[start:].decode(errors="replace")
        spread = ",".join(str(c) for c in range(0, 64, 4))
        self.assertIn(f"c2c: 16 of 64 CPUs by default, spread over the machine ({spread})", text)
        self.assertIn("c2c: 120 pairs to measure", text)
        self.assertIn("  block 1 of 2: columns of CPUs 0 to 36", text)
        self.assertIn("  block 2 of 2: columns of CPUs 40 to 60", text)
        widths = {len(line.rstrip()) for line in text.splitlines()
                  if re.match(r"^ *(ticks|ns|\d+)( +(-|\d+))+ *$", line)}
        self.assertTrue(widths and max(widths) <= 80, f"matrix lines of {widths} characters")
        self.assertNotIn("pairs not measured", text)

        # s: the summary form, which fits the screen; S: the full table.
        out = self.key_output(m, b"s", rb"^late max [^\r\n]*\r?\n")
        out = out[out.index("stats: uptime"):]
        self.assertIn("stats: 64 CPUs, more than a screen's table (S prints it)", out)
        rows = re.findall(r"^(recorded|overwritten|excluded|refused|rate/s|tick-handler avg"
                          r"|late max) +(\S+) +(\d+) +(\d+) +(\d+) ", out, re.M)
        self.assertEqual(len(rows), 7, out)
        recorded = rows[0]
        self.assertLessEqual(int(recorded[2]), int(recorded[3]))     # min <= median
        self.assertLessEqual(int(recorded[3]), int(recorded[4]))     # median <= max
        self.assertGreaterEqual(int(recorded[1]), 64 * int(recorded[2]))
        self.assertEqual(re.findall(r"^ +\d+ +\d+ +\d+ +\d+ +\d+ +\d+ +\d+/s", out, re.M), [],
                         "no per-CPU rows in the summary form")
        self.assertLess(len(out.splitlines()), SCREEN_ROWS, "s fits the screen")

        out = self.key_output(m, b"p", rb"^cpu +seq +since boot[^\r\n]*\r?\n")
        self.assertIn("newest: the 24 newest events of all 64 CPUs", out)

        start = len(m.output())
        m.send(b"S")
        m.wait_for(rb"^cpu +seq +since boot", 120, start=start)
        time.sleep(2)
        full = m.output()[start:].decode(errors="replace")
        cpu_rows = re.findall(r"^ *(\d+) +\d+ +\d+ +\d+ +\d+ +\d+ +\d+/s", full, re.M)
        self.assertEqual(sorted(int(c) for c in cpu_rows), list(range(64)), "S: a row per CPU")

        # The timer workload's per-CPU results in their summary form.
        start = len(m.output())
        m.send(b"5")
        m.wait_for(rb"^workload: timer run=3 done", WORKLOAD_TIMEOUT_S, start=start)
        text = m.output()[start:].decode(errors="replace")
        self.assertIn("timer: 64 CPUs, over the CPUs (latency in us):", text)
        rows = re.findall(r"^(samples|missed|min|avg|max) +(\S+) +(-?\d+) +(-?\d+) +(-?\d+) ",
                          text, re.M)
        self.assertEqual([r[0] for r in rows], ["samples", "missed", "min", "avg", "max"], text)
        self.assertEqual(int(rows[0][1]), 64 * 200, "every CPU's 200 samples counted")
        self.assertEqual(re.findall(r"^ *\d+ +\d+ +\d+ +-?\d+ +-?\d+ +-?\d+\s*$", text, re.M),
                         [], "no per-CPU rows")

        # The mask prompt sets every CPU's categories at once.
        start = len(m.output())
        m.send(b"m")
        m.wait_for(rb"trace: categories now BOOT,SMP,IRQ,IPI,EXC,INPUT,TRACE,WORK", 60, start=start)
        m.send(b"irq,boot\r")
        m.wait_for(rb"trace: categories now BOOT,IRQ\r?\n", 60, start=start)
        m.send(b"m")
        m.send(b"all\r")
        m.wait_for(rb"trace: categories now BOOT,SMP,IRQ,IPI,EXC,INPUT,TRACE,WORK\r?\n", 60,
                   start=start)

        # A dump of all 64 CPUs decodes complete.
        data = self.dump(m)
        dumps = dumplog.parse_log(data)
        self.assertTrue(dumps and dumps[-1].complete)
        self.assertEqual(len(dumps[-1].cpus), 64)
        listed = self.decode_list(data)
        self.assertEqual(listed[-1]["STATE"], "complete", listed)
        self.assertEqual(listed[-1]["CPUS"], "64", listed)
        self.assertEqual(m.faults(), [])


class RingMemory(ManyCpusCase):
    """trace.memory= and a too-large trace.events= on a 128 MiB machine:
    it boots, says what it took, and the dump's %M says the same."""

    def check_took(self, m, cpus):
        took = re.search(r"^trace: (\d+) rings of (\d+) events, (\d+) KiB in all", m.text(), re.M)
        self.assertIsNotNone(took, m.text()[-2000:])
        self.assertEqual(int(took.group(1)), cpus)
        events, kib = int(took.group(2)), int(took.group(3))
        self.assertEqual(kib * 1024, cpus * events * 32)
        data = self.dump(m)
        d = dumplog.parse_log(data)[-1]
        self.assertTrue(d.complete)
        self.assertEqual(int(d.header["capacity"]), events)
        self.assertEqual(int(d.header["ring_bytes"]), kib * 1024)
        return events, int(d.header["events_asked"])

    def test_memory_split_among_cpus(self):
        m, info = self.boot(smp=8, mem="128M", cmdline="trace.memory=4M")
        self.assertEqual(info["cpus"], "8")
        events, asked = self.check_took(m, 8)
        self.assertEqual(events, 4 * 1024 * 1024 // 32 // 8)        # 16384 each
        self.assertEqual(asked, events)
        self.assertIn("(trace.memory=4096 KiB (16384 events per CPU for 8 CPUs))", m.text())

    def test_too_many_events_take_less_and_boot(self):
        m, info = self.boot(smp=8, mem="128M", cmdline="trace.events=1048576")
        self.assertEqual(info["cpus"], "8", "every CPU still starts")
        self.assertRegex(m.text(), r"trace: trace.events=1048576 does not fit in memory "
                                   r"\(\d+ KiB free\); using \d+")
        events, asked = self.check_took(m, 8)
        self.assertLess(events, 1048576)
        self.assertEqual(asked, 1048576)

    def test_too_much_memory_takes_less_and_boots(self):
        m, info = self.boot(smp=8, mem="128M", cmdline="trace.memory=1G")
        self.assertEqual(info["cpus"], "8")
        self.assertRegex(m.text(), r"trace: trace.memory=1048576 KiB \(\d+ events per CPU for "
                                   r"8 CPUs\) does not fit in memory \(\d+ KiB free\); using \d+")
        events, asked = self.check_took(m, 8)
        self.assertLess(events * 8 * 32, 128 << 20)


if __name__ == "__main__":
    unittest.main()
