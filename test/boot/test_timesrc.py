"""The TSC rate from every time source (issue #10, "Wrong time without an
HPET").

Each machine without an HPET (q35/pc with hpet=off: the ACPI PM timer) or
without ACPI at all (pc,acpi=off: the PIT) must find the same TSC rate as
an HPET-calibrated SeaBIOS boot of the same machine type (within 0.5 %;
under TCG the guest's TSC is the host's whatever the firmware) and print no
disagreement between its source and the source that checks it.

OVMF boots q35,acpi=off (no ACPI tables: the PIT) but not pc,acpi=off
(no serial output at all in 8 minutes), so UEFI's ACPI-off case is q35. With the
PIT gone too (pc,acpi=off,pit=off) nothing is left: tsc_src=none, said on
the console, and the boot goes on.

How long calibration may take is the kernel's bound, not the emulator's
speed: test/unit/test_tsc.c checks it (a dead or absent clock costs no
more windows than the bound allows); READY's time with each source is
make bench's to measure, never a test's to assert.
"""
import unittest

from harness import Machine
from btlib.dump import dumplog

DUMP_TIMEOUT_S = 120
AGREE = 0.005                  # 0.5 %
NO_SOURCE_RE = r"(?m)^tsc: no usable frequency source"
DISAGREE_RE = r"(?m)^tsc: .* says .* but .* measures"
# READY's tsc_check: the next clock after the source confirms it; none
# when there is no next clock (acpi=off leaves only the PIT; q35 with
# hpet=off,pit=off only the PM timer).
TSC_CHECK = {"pc": "pmtimer", "q35": "pmtimer", "pc,hpet=off": "pit", "q35,hpet=off": "pit",
             "pc,acpi=off": "none", "q35,acpi=off": "none", "pc,acpi=off,pit=off": "none",
             "q35,hpet=off,pit=off": "none"}


class Boot:
    """What one boot told us: READY fields and console text."""

    def __init__(self, info, text):
        self.info = info
        self.text = text
        self.tsc_hz = int(info["tsc_hz"])


class TimeSources(unittest.TestCase):

    def run_boot(self, name, fw, machine, dump=False):
        """One boot's READY and text; with dump, also d's dump, whose
        header must carry READY's tsc_check (one dump per test is enough
        for that: the rest is READY's)."""
        with Machine(name, fw=fw, smp=2, machine=machine) as m:
            info = m.ready()
            self.assertEqual(info.get("tsc_check"), TSC_CHECK[machine], info)
            if dump:
                start = len(m.output())
                m.send(b"d")
                m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", DUMP_TIMEOUT_S, start=start)
                dumps = dumplog.parse_log(m.output()[start:])
                self.assertTrue(dumps and dumps[-1].complete, f"{name}: no complete dump")
                self.assertEqual(dumps[-1].header.get("tsc_check"), TSC_CHECK[machine])
            self.assertEqual(m.faults(), [], f"{name}: fault text in the log")
            return Boot(info, m.text())

    def compare(self, ref_machine, subjects):
        """Boot ref_machine (with its HPET) under SeaBIOS, then each (fw,
        machine, expected tsc_src) of subjects, and compare them with it.
        The guest's TSC is the host's whatever the firmware, so one HPET
        boot is the reference for both firmwares' subjects (OVMF's own
        HPET boot: test_boot's UEFI boots)."""
        ref = self.run_boot(f"{self.id()}.{ref_machine}", "bios", ref_machine)
        self.assertEqual(ref.info["tsc_src"], "hpet", "the reference boot has an HPET")
        self.assertNotRegex(ref.text, DISAGREE_RE, "the cross-check disagreed")
        for i, (fw, machine, want_src) in enumerate(subjects):
            with self.subTest(fw=fw, machine=machine):
                got = self.run_boot(f"{self.id()}.{fw}.{machine}", fw, machine,
                                    dump=i == len(subjects) - 1)
                self.check(got, ref, want_src)

    def check(self, got, ref, want_src):
        self.assertEqual(got.info["tsc_src"], want_src, got.info)
        self.assertNotRegex(got.text, DISAGREE_RE, "the cross-check disagreed")
        if want_src == "none":
            self.assertRegex(got.text, NO_SOURCE_RE, "tsc_src=none without a tsc: line")
        else:
            off = abs(got.tsc_hz - ref.tsc_hz) / ref.tsc_hz
            self.assertLessEqual(off, AGREE, f"tsc_hz {got.tsc_hz} vs HPET {ref.tsc_hz}: "
                                             f"{off * 100:.3f} % apart")

    def test_pc(self):
        self.compare("pc", [("bios", "pc,hpet=off", "pmtimer"), ("bios", "pc,acpi=off", "pit"),
                            ("bios", "pc,acpi=off,pit=off", "none"),
                            ("uefi", "pc,hpet=off", "pmtimer")])

    def test_q35(self):
        # pit=off: the PM timer with nothing to check it against.
        self.compare("q35", [("bios", "q35,hpet=off", "pmtimer"),
                             ("bios", "q35,hpet=off,pit=off", "pmtimer"),
                             ("uefi", "q35,hpet=off", "pmtimer"), ("uefi", "q35,acpi=off", "pit")])


if __name__ == "__main__":
    unittest.main()
