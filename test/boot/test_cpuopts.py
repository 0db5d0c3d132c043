"""Options that name a CPU, and lists cut to fit a line (issue #10,
smaller findings).

debug.fault=N says so on the console (`cmdline: debug.fault=N: ...`) when
CPU N will never run the fault: the boot CPU, a CPU that does not exist,
a parked CPU; and does fault, with no such line, when the CPU is online.
The line naming parked CPUs by APIC id ends in `... (N more)` when the
ids do not all fit.
"""
import unittest

from harness import Machine

FAULT_TIMEOUT_S = 30


class CpuOptions(unittest.TestCase):

    def boot(self, cmdline, smp=2, **options):
        m = Machine(self.id(), smp=smp, cmdline=cmdline, **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()

    def said_never_runs(self, cpu, smp, why, extra=""):
        m, info = self.boot(f"debug.fault={cpu}{extra}", smp=smp)
        m.wait_for(rf"cmdline: debug\.fault={cpu}: [^\r\n]*{why}[^\r\n]*no fault", 5, start=0)
        self.assertEqual(m.faults(), [], "a fault happened anyway")
        return info

    def test_boot_cpu(self):
        self.said_never_runs(0, 2, "boot CPU")

    def test_no_such_cpu(self):
        self.said_never_runs(7, 2, "no such CPU")

    def test_parked_cpu(self):
        info = self.said_never_runs(3, 4, "parked", " maxcpus=2")
        self.assertEqual(info["parked"], "2")

    def test_online_cpu_faults(self):
        m, info = self.boot("debug.fault=1", smp=2)
        m.wait_for(rb"EXCEPTION cpu=1 vector=6", FAULT_TIMEOUT_S, start=0)
        self.assertNotRegex(m.text(), r"cmdline: debug\.fault", "a message for a CPU that runs")


class CutLists(unittest.TestCase):

    def test_parked_list_says_how_many_more(self):
        # 128 CPUs, 16 started (maxcpus=): 112 parked ids need more room
        # than the line gives (the parked ones never leave their reset state).
        smp = 128
        with Machine(self.id(), smp=smp, machine="q35", cmdline="maxcpus=16") as m:
            info = m.ready()
            line = m.wait_for(rb"smp: (\d+) CPUs left parked[^\r\n]*APIC ids((?: \d+)+)"
                              rb"( \.\.\. \((\d+) more\))?\r?\n", 5, start=0)
        parked = int(line.group(1))
        named = [int(x) for x in line.group(2).split()]
        self.assertEqual(parked, smp - int(info["cpus"]))
        self.assertIsNotNone(line.group(3), "the cut list does not say it was cut")
        self.assertEqual(len(named) + int(line.group(4)), parked)
        self.assertEqual(len(set(named)), len(named))


if __name__ == "__main__":
    unittest.main()
