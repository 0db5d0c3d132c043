"""The ISO in Bochs, the second emulator (issue 36; test/boot/bochs.py).

Bochs models what QEMU hides: CPUID leaves of real CPUs (Tiger Lake's 15h
claims 2.4 GHz while the TSC runs at `ips`), MSRs that fault
(ignore_bad_msrs=0: MSR 0x8B raises #GP), its own BIOS (SMBIOS type 1
with no manufacturer string) and a UART that takes time per byte.

`make test` boots one machine (Tiger Lake, 2 CPUs; about a minute): READY
with the rate measured rather than CPUID's, the faulting MSR skipped and
named, no GRUB error, and a complete `d` dump. `make test-long` (BT_LONG=1)
boots the CPU-model sweep and a TSC just under the kernel's 50 MHz floor.
Skipped, saying why, where Bochs is not installed (install-deps --bochs).
"""
import os
import unittest

from bochs import DEFAULT_IPS, MODELS, BochsMachine, available

# CPUID 15h of Bochs's Tiger Lake model: 2419200000 Hz.
TIGERLAKE_CPUID_HZ = 2_419_200_000
# A measured rate within 2 % of the emulated TSC's (`ips`) is that rate.
RATE_TOLERANCE = 0.02
MEASURED = {"hpet", "pmtimer", "pit"}
# Under the kernel's 50 MHz floor (time/tscmath.h TSC_MIN_PLAUSIBLE).
SLOW_IPS = 49_000_000


class BochsCase(unittest.TestCase):

    def boot(self, **conf):
        m = BochsMachine(self.id(), **conf)
        self.addCleanup(m.stop)
        m.start()
        return m, m.ready()

    def check_measured_rate(self, info, ips):
        """The TSC rate READY reports is the one the TSC runs at, from a
        clock, and confirmed by another."""
        self.assertIn(info["tsc_src"], MEASURED, f"READY {info}")
        self.assertLess(abs(int(info["tsc_hz"]) - ips), ips * RATE_TOLERANCE, f"READY {info}")
        self.assertIn(info.get("tsc_check"), MEASURED, f"READY {info}")

    def check_dump(self, m, cpus):
        d = m.dump()
        self.assertTrue(d.complete, d.warnings)
        self.assertEqual(len(d.cpus), cpus)
        self.assertIn("tsc_check", d.header)
        return d


@unittest.skipIf(available(), available())
class Bochs(BochsCase):

    def test_tigerlake_faulting_msrs_ready_dump(self):
        m, info = self.boot(model="tigerlake", cpus=2, ignore_bad_msrs=False)
        self.assertEqual((info["cpus"], info["found"]), ("2", "2"), f"READY {info}")
        # Finding 1: CPUID's 2.4 GHz is refuted by a clock, and said so.
        self.check_measured_rate(info, DEFAULT_IPS)
        text = m.text()
        self.assertRegex(text, rf"tsc: cpuid15 says {TIGERLAKE_CPUID_HZ} Hz but \w+ measures "
                               r"\d+ Hz \(\d+ ppm apart\); cpuid15 is wrong")
        # Finding 2: MSR 0x8B faulted, was skipped and named.
        self.assertIn("cpu: MSR 0x8B (microcode revision) raised #GP; skipped", text)
        # Finding 5: no GRUB error (Bochs's SMBIOS type 1 has no
        # manufacturer), no exception, no panic.
        self.assertEqual(m.faults(), [])
        d = self.check_dump(m, 2)
        self.assertEqual(d.identity.get("cpu.microcode"), "unknown")
        self.assertGreaterEqual(int(d.header.get("msr_faults", "0")), 1)
        self.assertEqual(d.header.get("tsc_src"), info["tsc_src"])


@unittest.skipUnless(os.environ.get("BT_LONG") == "1", "make test-long runs it (BT_LONG=1)")
@unittest.skipIf(available(), available())
class BochsLong(BochsCase):

    def test_models(self):
        """Every CPU model of the sweep: READY with 2 CPUs, the rate the
        TSC runs at, MSRs that fault survived, a complete dump."""
        for model in MODELS:
            with self.subTest(model=model):
                m = BochsMachine(f"{self.id()}.{model}", model=model, cpus=2)
                with m:
                    info = m.ready()
                    self.assertEqual(info["cpus"], "2", f"READY {info}")
                    self.check_measured_rate(info, DEFAULT_IPS)
                    self.assertEqual(m.faults(), [])
                    self.check_dump(m, 2)

    def test_hwlat_smi_counter_faults(self):
        """hwlat reads Intel's SMI count (MSR 0x34) on Haswell; Bochs
        raises #GP there: the workload runs without it and says why."""
        m, info = self.boot(model="corei7_haswell_4770", cpus=1)
        m.send(b"1")                    # the hwlat workload's key
        m.wait_for(rb"SMI counter: no, MSR 0x34 raised #GP", 300)
        m.wait_for(rb"hwlat: \d+ gaps, longest \d+ us", 300)
        self.assertEqual(m.faults(), [])

    def test_tsc_under_the_floor_3gb(self):
        """A TSC at 49 MHz: every window is under the kernel's 50 MHz
        floor, and the console says that, not that the clocks failed;
        Tiger Lake's CPUID rate then goes in unverified, said loudly, and
        READY and the dump say tsc_check=none. With 3 GB of RAM, the
        console says what the kernel does while it scans it."""
        m, info = self.boot(model="tigerlake", cpus=1, ips=SLOW_IPS, megs=3072)
        text = m.text()
        # Finding 6: with 3 GB the scan for the previous boot's rings
        # takes seconds in Bochs; it is announced before it starts.
        scan = text.find("trace: looking for the previous boot's trace (every 2 MiB of ")
        self.assertGreaterEqual(scan, 0, "the scan is not announced")
        self.assertLess(scan, text.find("trace: no previous boot's trace in memory"))
        self.assertRegex(text, r"tsc: \w+ counts, but \d+ of \d+ calibration windows failed: "
                               r"each measured the TSC under 50 MHz")
        self.assertEqual((info["tsc_src"], info.get("tsc_check")), ("cpuid15", "none"))
        self.assertRegex(text, r"tsc: WARNING: cpuid15 says \d+ Hz and no clock confirmed it")
        d = self.check_dump(m, 1)
        self.assertEqual(d.header.get("tsc_check"), "none")


if __name__ == "__main__":
    unittest.main()
