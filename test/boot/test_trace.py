"""Tracing end to end: boot the ISO, press real keys over COM1 and the
PS/2 keyboard, capture what the kernel prints, decode every dump with the
host decoder and check it against the kernel's own counters.

What a dump must satisfy (check_dump):
  - complete, no damaged or missing lines, DUMP END's events= equals the
    events decoded;
  - one ring per online CPU, each holding that CPU's events only;
  - within a ring, seq increases, and every seq it skips is accounted for
    by the ring's overwritten + excluded counters (no unexplained gap);
  - recorded = decoded + overwritten + excluded for every CPU;
  - TSC non-decreasing in seq order within each CPU.
"""
import os
import random
import re
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

from harness import Machine
from btlib.dump import dumplog

DUMP_TIMEOUT_S = 120           # a dump takes ~1 s; allow for a loaded host
SETTLE_S = 1.5                 # let the timers tick before dumping


def hotkeys(text):
    """Every key the kernel says it acts on, from its `keys:` and
    `workloads:` help lines: each `|` segment starts with its key(s)."""
    keys = set()
    for line in re.findall(r"^(?:keys|workloads): (.*)$", text, re.M):
        for segment in line.split("|"):
            for word in segment.split():
                if len(word) != 1:
                    break
                keys.add(ord(word))
    return keys


def event_name(dump, ev):
    t = dump.types.get(ev.type)
    return t.name if t else f"#{ev.type}"


# The most events one interrupt records between an interrupted trace
# point's RDTSC and its reservation (a timer tick's BEGIN/END, an IPI, a
# key, a NIC's receive): generous, since a longer run means a real fault.
NESTED_RUN_MAX = 16


class TraceCase(unittest.TestCase):

    def boot(self, **options):
        m = Machine(self.id(), **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()

    def dump(self, m, key=b"d", ps2=False):
        """Press d (serial or PS/2), wait for the dump, return it decoded."""
        start = len(m.output())
        if ps2:
            m.sendkey("d")
        else:
            m.send(key)
        m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", DUMP_TIMEOUT_S, start=start)
        dumps = dumplog.parse_log(m.output()[start:])
        self.assertTrue(dumps, "no dump found after the key")
        return dumps[-1]

    def check_dump(self, d, online):
        self.assertTrue(d.complete, d.warnings)
        self.assertEqual(d.damaged_lines, 0, d.warnings)
        self.assertEqual(d.missing_lines, 0, d.warnings)
        decoded = sum(len(c.events) for c in d.cpus)
        self.assertEqual(d.end_events, decoded, "DUMP END events= vs decoded")
        self.assertEqual(len([c for c in d.cpus if c.events]), online,
                         "one non-empty ring per online CPU")
        for c in d.cpus:
            self.check_ring(d, c)

    def check_ring(self, d, c):
        skipped = 0
        for prev, ev in zip(c.events, c.events[1:]):
            step = (ev.seq - prev.seq) & 0xFFFFFFFF
            self.assertGreaterEqual(step, 1, f"CPU {c.cpu}: seq not increasing")
            skipped += step - 1
        self.check_tsc_order(c)
        for ev in c.events:
            self.assertEqual(ev.cpu, c.cpu, "event in another CPU's ring")
        lost = c.overwritten + c.excluded
        self.assertLessEqual(skipped, lost, f"CPU {c.cpu}: unexplained seq gap")
        self.assertEqual(c.recorded, len(c.events) + lost,
                         f"CPU {c.cpu}: recorded != decoded + overwritten + excluded")
        self.assertEqual(d.missing_events()[c.cpu]["unexplained"], 0)

    def check_tsc_order(self, c):
        """Per CPU the TSC rises in seq order, with one exception the ring's
        write protocol makes (src/trace/ring.h): an interrupt that lands
        between a trace point's RDTSC and its reservation records its own
        events first, so the interrupted event follows them with an earlier
        TSC. Such a step back lands between the events around the nested
        run, which is a handful of events long; any other step back fails."""
        for i in range(1, len(c.events)):
            ev = c.events[i]
            if ev.tsc >= c.events[i - 1].tsc:
                continue
            run = 0
            while i - run - 1 >= 0 and c.events[i - run - 1].tsc > ev.tsc:
                run += 1
            self.assertLessEqual(run, NESTED_RUN_MAX,
                                 f"CPU {c.cpu}: TSC went back at seq {ev.seq} past "
                                 f"{run} events, more than one interrupt's")

    def names(self, d, cpu):
        return [event_name(d, e) for e in d.cpus[cpu].events]


class Dump(TraceCase):

    def test_serial_dump_16_cpus(self):
        m, info = self.boot(smp=16, cmdline="timer_hz=1000")
        time.sleep(SETTLE_S)
        d = self.dump(m)
        self.check_dump(d, online=16)
        self.assertEqual(int(d.header.get("tsc_hz", 0)), int(info["tsc_hz"]))
        self.assertEqual(len(d.cpus), 16)
        # Boot phases from kernel entry to READY, in order, on CPU 0.
        phases = [d.phases.get(e.a0) for e in d.cpus[0].events
                  if event_name(d, e) == "BOOT_PHASE"]
        self.assertEqual(phases[0], "ENTRY")
        self.assertEqual(phases[-1], "READY")
        self.assertEqual(len(phases), len(set(phases)), "a phase recorded twice")
        for cpu in range(1, 16):
            names = self.names(d, cpu)
            self.assertIn("AP_ONLINE", names, f"CPU {cpu}")
            self.assertIn("IRQ_TIMER_BEGIN", names, f"CPU {cpu} never ticked")
        self.assertEqual(m.faults(), [])

    def test_ps2_dump_uefi_usb(self):
        m, _ = self.boot(fw="uefi", media="usb", smp=4)
        time.sleep(SETTLE_S)
        d = self.dump(m, ps2=True)
        self.check_dump(d, online=4)
        kbd = [e for e in d.cpus[0].events if event_name(d, e) == "KBD_RX"]
        self.assertTrue(kbd and kbd[-1].a0 == 0x20, "PS/2 scancode 0x20 ('d') traced")

    def test_wrapped_rings_keep_boot_events(self):
        # 64-slot rings wrap within a second at 1 kHz: the pinned boot
        # events must still be in the dump, the rest accounted as overwritten.
        m, _ = self.boot(smp=4, cmdline="timer_hz=1000 trace.events=64")
        time.sleep(SETTLE_S)
        d = self.dump(m)
        self.check_dump(d, online=4)
        self.assertGreater(d.cpus[1].overwritten, 0, "rings should have wrapped")
        self.assertIn("AP_ONLINE", self.names(d, 1))
        phases = [d.phases.get(e.a0) for e in d.cpus[0].events
                  if event_name(d, e) == "BOOT_PHASE"]
        self.assertEqual(phases[0], "ENTRY")


class Hotkeys(TraceCase):

    def test_help_stats_table(self):
        m, _ = self.boot(smp=4)
        time.sleep(0.5)
        for key, pattern in ((b"h", rb"keys: d dump"), (b"?", rb"keys: d dump"),
                             (b"s", rb"events held per type:[^\r\n]*\r?\n"),
                             (b"p", rb"cpu +seq +since boot")):
            start = len(m.output())
            m.send(key)
            m.wait_for(pattern, 20, start=start)
        m.send(b"s")
        m.wait_for(rb"pair IRQ_TIMER: n=[1-9]\d* min/avg/max \d+/\d+/\d+ TSC ticks", 20)
        stats = m.text()[m.text().rindex("stats:"):]
        rows = re.findall(r"^\s+(\d+)\s+\d+\s+\d+", stats, re.M)
        self.assertEqual([int(r) for r in rows[:4]], [0, 1, 2, 3])

    def test_toggle_and_clear(self):
        m, _ = self.boot(smp=2, cmdline="timer_hz=1000")
        time.sleep(0.5)
        m.send(b"t")
        m.wait_for(rb"trace: tracing off", 20)
        time.sleep(0.5)
        off = self.dump(m)
        self.check_dump(off, online=2)
        last = off.cpus[0].events[-1]
        names = self.names(off, 0)
        self.assertIn("TRACE_ENABLE", names)
        toggle = max(i for i, n in enumerate(names) if n == "TRACE_ENABLE")
        self.assertEqual(off.cpus[0].events[toggle].a0, 0)
        self.assertNotIn("IRQ_TIMER_BEGIN", names[toggle:], "ticks traced while off")
        self.assertEqual(event_name(off, last), "TRACE_ENABLE")
        m.send(b"t")
        m.wait_for(rb"trace: tracing on", 20)
        m.send(b"c")
        m.wait_for(rb"trace: rings and counters cleared", 20)
        time.sleep(0.5)
        after = self.dump(m)
        self.check_dump(after, online=2)
        self.assertNotIn("BOOT_PHASE", self.names(after, 0), "clear kept boot events")
        self.assertGreater(after.cpus[1].events[0].seq, 0, "seq restarted after clear")
        self.assertEqual(after.cpus[1].overwritten, 0)

    def test_mask_prompt_changes_categories(self):
        m, _ = self.boot(smp=2, cmdline="timer_hz=1000")
        m.send(b"m")
        m.wait_for(rb"trace: categories now BOOT,SMP,IRQ,IPI,EXC,INPUT,TRACE,WORK", 20)
        m.send(b"bogus\r")
        m.wait_for(rb"unknown category 'bogus'[^\r\n]*categories unchanged", 20)
        m.send(b"m")
        m.send(b"irq,boox\x7ft\r")                # DEL edits the line
        m.wait_for(rb"trace: categories now BOOT,IRQ\r?\n", 20)
        time.sleep(0.5)
        d = self.dump(m)                            # d itself is INPUT: not traced
        self.check_dump(d, online=2)
        names = self.names(d, 0)
        last_mask = max(i for i, n in enumerate(names) if n == "TRACE_ENABLE")
        after = set(names[last_mask + 1:])
        self.assertIn("IRQ_TIMER_BEGIN", after)
        self.assertFalse(after & {"SERIAL_RX", "HOTKEY", "DUMP_BEGIN"}, after)
        m.send(b"m\x1b")
        m.wait_for(rb"mask prompt cancelled", 20)

    def test_garbage_only_counts_ignored(self):
        m, _ = self.boot(smp=4)
        m.wait_for(rb"^keys: [^\r\n]*\r?\n", 10, start=0)    # the whole line
        keys = hotkeys(m.text())
        self.assertTrue({ord("d"), ord("s"), ord("h")} <= keys, keys)
        rng = random.Random(1234)
        junk = bytes(b for b in (rng.randrange(256) for _ in range(3000)) if b not in keys)
        for i in range(0, len(junk), 100):
            m.send(junk[i:i + 100])
        time.sleep(1.0)
        start = len(m.output())
        m.send(b"s")
        st = m.wait_for(rb"ignored keys (\d+), serial overruns (\d+)", 60, start=start)
        self.assertEqual(int(st.group(1)), len(junk), "every junk byte counted")
        d = self.dump(m)
        self.check_dump(d, online=4)
        rx = [e for e in d.cpus[0].events if event_name(d, e) == "SERIAL_RX"]
        self.assertEqual(rx[-1].a1, len(junk) + 2, "SERIAL_RX count = bytes received")
        self.assertEqual(m.faults(), [])

    def test_keys_during_dump(self):
        m, _ = self.boot(smp=8, cmdline="timer_hz=1000")
        time.sleep(SETTLE_S)
        start = len(m.output())
        m.send(b"d")
        m.send(b"dsp\x1b[A\xff" * 5)       # while the first dump streams
        deadline = time.time() + 3 * DUMP_TIMEOUT_S
        while m.output()[start:].count(b"DUMP END") < 6 and time.time() < deadline:
            time.sleep(0.5)
        dumps = dumplog.parse_log(m.output()[start:])
        self.assertEqual(len(dumps), 6, "one dump per d, none lost or merged")
        for d in dumps:
            self.check_dump(d, online=8)
        self.assertEqual([int(d.header["dump"]) for d in dumps], list(range(1, 7)))


class Faults(TraceCase):

    def test_exception_reported_and_others_go_on(self):
        m, info = self.boot(smp=4, cmdline="debug.fault=2")
        m.wait_for(rb"EXCEPTION cpu=2 vector=6 \(#UD invalid opcode\)", 30, start=0)
        m.wait_for(rb"rip=[0-9a-f]{16}", 5)
        m.wait_for(rb"EXCEPTION cpu=2 halted; other CPUs continue", 5)
        self.assertEqual(info["cpus"], "4")
        time.sleep(SETTLE_S)
        d = self.dump(m)
        self.check_dump(d, online=4)
        exc = [e for e in d.cpus[2].events if event_name(d, e) == "EXCEPTION"]
        self.assertEqual([e.a0 for e in exc], [6])
        self.assertIn("IRQ_TIMER_BEGIN", self.names(d, 3), "CPU 3 kept ticking")


if __name__ == "__main__":
    unittest.main()
