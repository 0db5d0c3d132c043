"""The boot tests' harness (test/boot/harness.py) where it needs no QEMU:
which serial output counts as a fault, and a missing ISO. Its waits,
QMP and keys are checked on a real boot in test/boot/test_tools.py.
"""
import os
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "boot"))
import harness
from harness import BootError, Machine


class Harness(unittest.TestCase):

    def test_fault_patterns(self):
        bad = [b"\r\nEXCEPTION cpu=3 vector=14 (#PF) error=0x2\r\n",
               b"\x1b[Herror: file `/boot/baretrace.elf' not found.\r\n",
               b"baretrace: not started by multiboot2 (magic 0x0); halting",
               b"KERNEL PANIC: ring corrupt"]
        good = (b"cmdline: timer_hz=0: want a number from 1 to 10000; "
                b"using 100\r\nsmp: 4 CPUs left parked (limit 16): APIC "
                b"ids 16 17 18 19\r\nREADY cpus=16 failed=0 fw=bios\r\n"
                b"keys: d dump rings | t tracing on/off\r\n")
        for text in bad:
            with self.subTest(text=text):
                self.assertEqual(len(harness.find_faults(text)), 1)
        self.assertEqual(harness.find_faults(good), [])

    def test_missing_iso(self):
        with self.assertRaises(BootError) as cm:
            Machine(self.id(), iso="/no/such.iso").start()
        self.assertIn("run make first", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
