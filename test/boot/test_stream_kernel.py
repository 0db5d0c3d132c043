"""The kernel's side of a stream (issue 35, docs/streaming.md): with
trace.stream=net the machine sends every CPU's new events as numbered
parts while it runs, and `n` ends the stream with a final part.

4 CPUs with 256-event rings, about 10 s of timer ticks: captured by
scripts/capture --net on 127.0.0.1 (QEMU user network, as test_net), the
log read with the existing decoder, which sees each part as a dump. Per
CPU the parts tile the seq line (part k+1's base is part k's head), the
events decoded are many times the ring, and every seq of the stream is
decoded, overwritten or excluded: none is unaccounted for. A `d` dump
in the middle pauses the stream, which goes on after it; `c` is refused
while the stream runs."""
import os
import re
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "host"))

from test_net import NetCase, Capture, CONFIRMED
from test_netcapture import free_port
from btlib.dump import dumplog
from btlib.report.stresscheck import verify_stress

CPUS = 4
RING = 256
RUN_S = 10
STARTED = rb"stream: stream 1 started \(trace\.stream=net\)"
ENDED = rb"stream: stream 1 ended: (\d+) parts, (\d+) events, (\d+) overwritten"


COUNTERS = re.compile(rb"^%C \d+ cpu=(\d+) .*?base=(\d+) head=(\d+) ", re.M)
BEGIN = re.compile(rb"^DUMP BEGIN ([^\r\n]*)", re.M)
PART = re.compile(rb" stream=1 part=(\d+)")


def seq_spans(log):
    """{part: {cpu: (base, head)}} from the log's counters lines, each
    under the DUMP BEGIN of its part (capture writes a part whole); the
    counters of dumps that are not parts are skipped."""
    spans, part = {}, None
    for m in re.finditer(BEGIN.pattern + rb"|" + COUNTERS.pattern, log, re.M):
        if m.group(1) is not None:
            p = PART.search(m.group(1))
            part = int(p.group(1)) if p else None
            if part is not None:
                spans[part] = {}
        elif part is not None:
            spans[part][int(m.group(2))] = (int(m.group(3)), int(m.group(4)))
    return spans


class StreamKernel(NetCase):

    def test_parts_tile_every_cpu(self):
        port = free_port()
        cap = Capture(self.id(), port)
        try:
            m, info = self.net_boot(port, smp=CPUS,
                                    cmdline=f"trace.stream=net trace.events={RING} timer_hz=200")
            m.wait_for(STARTED, 60, start=0)
            time.sleep(RUN_S / 2)
            start = len(m.output())
            m.send(b"d")                      # a dump meanwhile: the stream pauses, goes on
            m.wait_for(CONFIRMED, 120, start=start)
            m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", 120, start=start)
            time.sleep(RUN_S / 2)
            start = len(m.output())
            m.send(b"s")
            m.wait_for(rb"stream: on, stream 1 part \d+", 60, start=start)
            m.send(b"c")                      # refused while streaming
            m.wait_for(rb"trace: clear refused: a stream is running", 60, start=start)
            m.send(b"n")
            m.wait_for(ENDED, 120, start=start)
            time.sleep(1)
        finally:
            cap.stop()
        self.assertNotIn(b"rings and counters cleared", m.output())
        said = re.search(ENDED, m.output())
        nparts, events = int(said.group(1)), int(said.group(2))
        with open(cap.log(), "rb") as f:
            log = f.read()
        dumps = dumplog.parse_log(log)
        parts = [d for d in dumps if d.header.get("stream") == "1"]
        keyed = [d for d in dumps if d.header.get("trigger") == "key"]
        self.assertEqual(len(keyed), 1, "the d key's dump, not a part")
        self.assertTrue(keyed[0].complete and "stream" not in keyed[0].header, keyed[0].warnings)
        numbers = [int(d.header["dump"]) for d in dumps]
        self.assertEqual(len(numbers), len(set(numbers)), "one counter: every dump id unique")
        parts.sort(key=lambda d: int(d.header["part"]))
        self.assertEqual([int(d.header["part"]) for d in parts], list(range(nparts)),
                         "every part 0..N-1 in the log, once")
        self.assertEqual(parts[-1].header.get("final"), "1")
        self.assertTrue(all("final" not in d.header for d in parts[:-1]))
        decoded = {c: 0 for c in range(CPUS)}
        for d in parts:
            self.assertTrue(d.complete, d.warnings)
            self.assertEqual((d.damaged_lines, d.missing_lines), (0, 0), d.warnings)
            for c in d.cpus:
                decoded[c.cpu] += c.count
                self.assertEqual(c.recorded, c.count + c.overwritten + c.excluded,
                                 f"part {d.header['part']} CPU {c.cpu}: a seq unaccounted")
                self.assertEqual(d.missing_events()[c.cpu]["unexplained"], 0)
        spans = seq_spans(log)
        self.assertEqual(sorted(spans), list(range(nparts)))
        for k in range(1, nparts):
            for cpu in range(CPUS):
                self.assertEqual(spans[k][cpu][0], spans[k - 1][cpu][1],
                                 f"CPU {cpu}: part {k}'s base is part {k - 1}'s head")
        self.assertEqual(sum(decoded.values()), events, "the kernel's count of streamed events")
        for cpu, n in decoded.items():
            self.assertGreater(n, 4 * RING, f"CPU {cpu}: the stream holds far more than a ring")

    def test_a_faults_dump_ends_the_stream(self):
        """debug.fault_after: CPU 1 faults mid-stream; its dump arrives,
        then the stream's final part, taken after it."""
        port = free_port()
        cap = Capture(self.id(), port)
        try:
            m, info = self.net_boot(port, smp=2, cmdline="trace.stream=net trace.events=256 "
                                    "debug.fault=1 debug.fault_after=8")
            m.wait_for(STARTED, 60, start=0)
            m.wait_for(CONFIRMED, 120, start=0)
            m.wait_for(rb"stream: stream 1 ended by a fault's dump: (\d+) parts", 120, start=0)
            time.sleep(1)
        finally:
            cap.stop()
        with open(cap.log(), "rb") as f:
            dumps = dumplog.parse_log(f.read())
        fault = [d for d in dumps if d.header.get("trigger") == "fault"]
        parts = [d for d in dumps if d.header.get("stream") == "1"]
        self.assertEqual(len(fault), 1)
        self.assertEqual(parts[-1].header.get("final"), "1")
        self.assertGreater(int(parts[-1].header["dump"]), int(fault[0].header["dump"]),
                           "the final part comes after the fault's dump")
        self.assertTrue(all(d.complete for d in parts + fault))

    def test_parts_read_under_fire_are_never_torn(self):
        """The stress workload (every CPU flat out, nested in a 10 kHz
        interrupt) while the stream reads behind the writers: every
        stress event of every part passes stress's own checks (checksum,
        attempt counts, counters), though most are overwritten first."""
        port = free_port()
        cap = Capture(self.id(), port)
        try:
            m, info = self.net_boot(port, smp=CPUS, cmdline="trace.stream=net "
                                    "workload=stress:secs=4")
            m.wait_for(STARTED, 60, start=0)
            m.wait_for(rb"workload: stress run=1 done", 120, start=0)
            start = len(m.output())
            m.send(b"n")
            m.wait_for(ENDED, 120, start=start)
            time.sleep(1)
        finally:
            cap.stop()
        with open(cap.log(), "rb") as f:
            parts = [d for d in dumplog.parse_log(f.read()) if d.header.get("stream") == "1"]
        for d in parts:                       # later parts carry no tables: part 0's
            d.types = parts[0].types
        check = verify_stress(parts)
        self.assertTrue(check.ok(), check.as_dict())
        self.assertGreater(check.events, 10000, check.as_dict())
        self.assertGreater(sum(c.overwritten for d in parts for c in d.cpus), 0,
                           "the writers lapped the stream: counted")


if __name__ == "__main__":
    unittest.main()
