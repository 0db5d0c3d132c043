"""Snapshots without shadow memory (src/recorder/snapshot.c): the rings fit,
their shadows do not, so every reader pauses tracing on the live rings
until it is done, and gives tracing back afterwards.

128 MiB and 2 x 2^20-event rings (64 MiB): the kernel says it has no
memory for dump shadows; each dump then says snapshot=paused, is exact
(check_dump), and tracing runs again after it: the next dump holds the
first one's DUMP_END event, and `p` and `s` give tracing back too."""
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_trace import SETTLE_S, TraceCase

NO_SHADOWS = dict(smp=2, mem="128M", cmdline="trace.events=1048576")


class PausedSnapshot(TraceCase):

    def test_dumps_pause_and_resume_without_shadows(self):
        m, _ = self.boot(**NO_SHADOWS)
        self.assertIn("trace: no memory for dump shadows; dumps pause tracing until done",
                      m.text())
        time.sleep(SETTLE_S)
        first = self.dump(m)
        self.assertEqual(first.header.get("snapshot"), "paused")
        self.check_dump(first, online=2)
        time.sleep(SETTLE_S)
        second = self.dump(m)
        self.assertEqual(second.header.get("snapshot"), "paused")
        self.check_dump(second, online=2)
        # Tracing resumed after the first dump: its DUMP_END (recorded
        # after the resume) and newer ticks of both CPUs are in the second.
        ends = [e.a0 for e in second.cpus[0].events if self.name(second, e) == "DUMP_END"]
        self.assertIn(int(first.header.get("dump", "1")), ends)
        for cpu in (0, 1):
            self.assertGreater(max(e.seq for e in second.cpus[cpu].events),
                               max(e.seq for e in first.cpus[cpu].events), f"CPU {cpu}")
        self.assertEqual(m.faults(), [])

    def test_p_and_s_resume_tracing(self):
        m, _ = self.boot(**NO_SHADOWS)
        time.sleep(SETTLE_S)
        start = len(m.output())
        m.send(b"p")
        m.wait_for(rb"cpu +seq +since boot", 60, start=start)
        m.send(b"s")
        m.wait_for(rb"stats: uptime [^\r\n]*tracing on", 60, start=start)
        time.sleep(SETTLE_S)
        d = self.dump(m)
        self.check_dump(d, online=2)
        # The keys came after the table and the summary paused the rings:
        # tracing was back on to record them.
        keys = [e.a0 for e in d.cpus[0].events if self.name(d, e) == "HOTKEY"]
        self.assertEqual(keys[-3:], [ord("p"), ord("s"), ord("d")])
        self.assertEqual(m.faults(), [])

    @staticmethod
    def name(d, e):
        from test_trace import event_name
        return event_name(d, e)


if __name__ == "__main__":
    unittest.main()
