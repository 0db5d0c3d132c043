"""What the machine is (issue 30): the CPU's identity, the SMBIOS strings
and how it was booted, on the MACHINE line beside READY, in READY's
boot=, and in every dump's %I lines, shown by decode --list, the Perfetto
root track and report.

QEMU stands in for a PC whose firmware names it: -smbios type=0/1/2 set
the BIOS, system and board strings (and a serial number, which must never
appear anywhere). The system's manufacturer stays "QEMU": the ISO's
grub.cfg reads the launcher's command line only from a machine that says
so. The BIOS boot uses SeaBIOS's 64-bit SMBIOS 3 entry
point in the 0xF0000 segment; the UEFI boot finds SMBIOS through the EFI
system table's configuration tables. Both dump unattended after a
workload (workload=...,dump=1), as a lab machine would."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

from harness import Machine, DUMP_TIMEOUT_S
from btlib.dump import dumplog

REPO = os.path.dirname(os.path.dirname(HERE))
DECODE = os.path.join(REPO, "scripts", "decode")
REPORT = os.path.join(REPO, "scripts", "report")
SERIAL = "SECRET-SN-4711"
SMBIOS = ["-smbios", "type=0,vendor=Lab BIOS Inc,version=9.9.1,date=01/02/2025",
          "-smbios", f"type=1,manufacturer=QEMU,product=Rack Server 9,version=r2,"
                     f"serial={SERIAL}",
          "-smbios", f"type=2,manufacturer=Acme Boards,product=X99-Pro,serial={SERIAL}"]
MACHINE_RE = rb"(?m)^MACHINE ([^\r\n]*)\r?\n"
WORKLOAD = "workload=tsc:rounds=4,dump=1"


def machine_fields(line):
    return dict(re.findall(r'([\w.]+)="([^"]*)"', line))


class Identity(unittest.TestCase):

    def boot_and_dump(self, name, **options):
        with Machine(name, smp=2, cmdline=WORKLOAD, extra=SMBIOS, **options) as m:
            info = m.ready()
            fields = machine_fields(m.wait_for(MACHINE_RE, 10, start=0).group(1).decode())
            m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", DUMP_TIMEOUT_S, start=0)
            out = m.output()
        self.assertNotIn(SERIAL.encode(), out, "a serial number reached the log")
        log = os.path.join(tempfile.mkdtemp(prefix="bt-machine-"), "serial.log")
        with open(log, "wb") as f:
            f.write(out)
        return info, fields, log

    def check_identity(self, fields, smbios_where):
        self.assertEqual(fields["system.vendor"], "QEMU")
        self.assertEqual(fields["system.product"], "Rack Server 9")
        self.assertEqual(fields["system.version"], "r2")
        self.assertEqual(fields["board.vendor"], "Acme Boards")
        self.assertEqual(fields["board.product"], "X99-Pro")
        self.assertRegex(fields["smbios"], rf"^\d+\.\d+ {smbios_where}$")
        self.assertTrue(fields["cpu.brand"] and fields["cpu.vendor"], fields)
        self.assertRegex(fields["cpu.family"], r"^\d+$")
        self.assertRegex(fields["cpu.microcode"], r"^(0x[0-9a-f]+|unknown)$")
        self.assertEqual(fields["memory_mb"], "512")

    def check_tools(self, log, fields):
        dumps = dumplog.parse_log(open(log, "rb").read())
        self.assertTrue(dumps and dumps[-1].complete, "no complete dump")
        self.assertEqual(dumps[-1].warnings, [], "the %I lines are read, not skipped")
        d = dumps[-1]
        for k, v in fields.items():
            self.assertEqual(d.identity.get(k), v, k)
        name = d.machine_name()
        self.assertIn("QEMU Rack Server 9", name)
        self.assertIn(fields["cpu.brand"], name)
        r = subprocess.run([sys.executable, DECODE, log, "--list"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"machine of dump 0: {name}", r.stderr)
        r = subprocess.run([sys.executable, DECODE, log, "-f", "perfetto", "-o", log + ".pftrace"],
                           capture_output=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = open(log + ".pftrace", "rb").read()
        self.assertIn(f"baretrace dump {d.index}: {name}".encode(), trace)   # the root track
        self.assertIn(b"machine.system.product", trace)
        r = subprocess.run([sys.executable, REPORT, log, "--json", "-"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["machine"]["board.product"], "X99-Pro")
        self.assertIn(f"machine: {name}", r.stderr)          # the text goes to stderr with -

    def test_bios_cd_smbios3(self):
        info, fields, log = self.boot_and_dump("machine-bios-cd", fw="bios", media="cd",
                                               machine="pc,smbios-entry-point-type=64")
        self.assertEqual(info["boot"], "cd")
        self.assertEqual(fields["boot"], "cd")
        self.check_identity(fields, "bios-area")
        self.assertTrue(fields["smbios"].startswith("3."), fields["smbios"])
        self.assertEqual(fields["bios.vendor"], "Lab BIOS Inc")
        self.assertEqual(fields["bios.version"], "9.9.1")
        self.assertEqual(fields["bios.date"], "01/02/2025")
        self.check_tools(log, fields)

    def test_uefi_usb(self):
        info, fields, log = self.boot_and_dump("machine-uefi-usb", fw="uefi", media="usb")
        self.assertEqual(info["boot"], "usb")
        self.check_identity(fields, "efi")
        self.check_tools(log, fields)

    def test_intel_cpu_microcode_msr(self):
        """An Intel CPU model: family/model/stepping from CPUID and the
        microcode revision read through MSR 0x8B (QEMU reports 1)."""
        with Machine("machine-intel", smp=1, extra=["-cpu", "Skylake-Server"]) as m:
            m.ready()
            fields = machine_fields(m.wait_for(MACHINE_RE, 10, start=0).group(1).decode())
        self.assertEqual(fields["cpu.vendor"], "GenuineIntel")
        self.assertEqual((fields["cpu.family"], fields["cpu.model"], fields["cpu.stepping"]),
                         ("6", "85", "4"))
        self.assertEqual(fields["cpu.microcode"], "0x1")
        self.assertIn("Skylake", fields["cpu.brand"])


if __name__ == "__main__":
    unittest.main()
