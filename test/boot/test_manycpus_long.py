"""The most CPUs QEMU 7.2 can give (255, xAPIC) from the default image:
READY with every one, a dump that decodes with all of them, and the
bring-up time (printed). About 30 s alone, minutes on a loaded host: run
by `make test-long` (BT_LONG=1), not by every `make test`."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_manycpus import ManyCpusCase, bringup_us       # noqa: E402
from btlib import dumplog                                # noqa: E402

CPUS = 255


@unittest.skipUnless(os.environ.get("BT_LONG") == "1", "make test-long runs it (BT_LONG=1)")
class TwoFiftyFive(ManyCpusCase):

    def test_255_cpus_ready_dump_decodes(self):
        m, info = self.boot(smp=CPUS)
        for key, want in (("cpus", CPUS), ("found", CPUS), ("parked", 0), ("failed", 0)):
            self.assertEqual(info[key], str(want), f"READY {info}")
        online, took = bringup_us(m.text())
        self.assertEqual(online, CPUS)
        print(f"\n  {CPUS} CPUs: bring-up {took} us (kernel), READY {m.ready_at:.1f} s after "
              f"QEMU started", file=sys.stderr)
        data = self.dump(m)
        dumps = dumplog.parse_log(data)
        self.assertTrue(dumps and dumps[-1].complete)
        self.assertEqual(len(dumps[-1].cpus), CPUS)
        self.assertEqual(sorted(c.apic_id for c in dumps[-1].cpus), list(range(CPUS)))
        listed = self.decode_list(data)
        self.assertEqual((listed[-1]["STATE"], listed[-1]["CPUS"]), ("complete", str(CPUS)))
        self.assertEqual(m.faults(), [])


if __name__ == "__main__":
    unittest.main()
