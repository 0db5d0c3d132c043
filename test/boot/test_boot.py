"""Boot matrix: firmware x media x CPU topology x kernel command line.

Each test boots build/baretrace.iso under TCG and checks the kernel's READY
line: how many CPUs came up, how many the MADT listed, how many were parked
or failed, that the TSC looks sane and that the firmware is the one booted.
No test may show an exception, panic or GRUB error in its serial log
(build/test-logs/<test>.log).
"""
import unittest

from harness import Machine

TSC_SOURCES = {"cpuid15", "hypervisor", "hpet", "pmtimer", "pit"}
MIN_TSC_HZ = 100_000_000        # nothing that boots this is slower
MAX_TSC_HZ = 10_000_000_000
# The kernel echoes its command line: baretrace: booted by ..., cmdline "..."
CMDLINE_ECHO_RE = rb'booted by [^\r\n]*, cmdline "([^"\r\n]*)"'


class BootCase(unittest.TestCase):
    """Shared boot-and-check steps."""

    def boot(self, **options):
        """Boot with options (harness.Machine/qemu.Options fields); return
        (machine, READY fields). The machine is stopped at test end."""
        name = self.id()
        m = Machine(name, **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()

    def check_ready(self, m, info, *, cpus, found, parked=0, failed=0):
        """The READY fields every boot must get right."""
        fw = m.opts.fw
        got = {k: info.get(k) for k in ("cpus", "found", "parked", "failed")}
        want = {"cpus": str(cpus), "found": str(found),
                "parked": str(parked), "failed": str(failed)}
        self.assertEqual(got, want, f"READY {info}")
        self.assertEqual(info.get("fw"), fw, "fw= must name the firmware")
        tsc_hz = int(info["tsc_hz"])
        self.assertTrue(MIN_TSC_HZ < tsc_hz < MAX_TSC_HZ, f"tsc_hz={tsc_hz}")
        self.assertIn(info.get("tsc_src"), TSC_SOURCES)
        self.assertRegex(info.get("tsc_warp", ""), r"^\d+$")
        self.assertIn(info.get("invariant_tsc"), ("0", "1"))
        self.assertIn(info.get("x2apic"), ("0", "1"))
        self.assertRegex(info.get("max", ""), r"^\d+$")
        self.assertRegex(info.get("timer_hz", ""), r"^[1-9]\d*$")
        self.assertEqual(m.faults(), [], "fault text in the serial log")

    def kernel_cmdline(self, m):
        """The command line as the kernel received it."""
        return m.wait_for(CMDLINE_ECHO_RE, 5, start=0).group(1).decode()

    def max_cpus(self, info):
        return int(info["max"])


class Firmware(BootCase):
    """Every firmware/media pairing boots and reports its firmware."""

    def test_bios_cd_smp1(self):
        m, info = self.boot(fw="bios", media="cd", smp=1)
        self.check_ready(m, info, cpus=1, found=1)

    def test_bios_cd_smp4(self):
        m, info = self.boot(fw="bios", media="cd", smp=4)
        self.check_ready(m, info, cpus=4, found=4)

    def test_bios_cd_smp16(self):
        m, info = self.boot(fw="bios", media="cd", smp=16)
        self.check_ready(m, info, cpus=16, found=16)

    def test_bios_usb_smp2(self):
        m, info = self.boot(fw="bios", media="usb", smp=2)
        self.check_ready(m, info, cpus=2, found=2)

    def test_uefi_usb_smp16_cmdline(self):
        # Also proves the OEM-string command line survives OVMF + GRUB EFI,
        # commas included, with nothing added.
        line = "timer_hz=1000 console=ttyS0,115200"
        m, info = self.boot(fw="uefi", media="usb", smp=16, cmdline=line)
        self.check_ready(m, info, cpus=16, found=16)
        self.assertEqual(info["timer_hz"], "1000")
        self.assertEqual(self.kernel_cmdline(m), line)

    def test_uefi_cd_smp4(self):
        m, info = self.boot(fw="uefi", media="cd", smp=4)
        self.check_ready(m, info, cpus=4, found=4)
        # OVMF's HPET calibrates the TSC (test_timesrc's reference is SeaBIOS's).
        self.assertEqual(info["tsc_src"], "hpet")

    def test_grub_menu_default_entry(self):
        # No command line from the launcher: GRUB shows its menu, counts
        # down and boots the default entry with an empty command line.
        m, info = self.boot(fw="bios", media="cd", smp=2, cmdline=None)
        self.check_ready(m, info, cpus=2, found=2)
        self.assertEqual(self.kernel_cmdline(m), "")
        self.assertIn("baretrace nosmp", m.text(), "GRUB menu not shown")


class Topology(BootCase):
    """MADT shapes: APIC-ID gaps, more CPUs than the limit, disabled
    entries."""

    def test_apic_id_gaps(self):
        # 2 sockets x 6 cores: APIC IDs 0-5 and 8-13.
        m, info = self.boot(smp=12, topology="sockets=2,cores=6")
        self.check_ready(m, info, cpus=12, found=12)

    def test_more_cpus_than_limit(self):
        # The image's ceiling (max=, MAX_CPUS 1024) is beyond QEMU's 255
        # vCPUs: maxcpus= sets the same limit (smp.c's one path for both).
        limit = 12
        m, info = self.boot(smp=20, cmdline=f"maxcpus={limit}")
        self.assertGreaterEqual(self.max_cpus(info), 1024, "the default image's ceiling")
        self.check_ready(m, info, cpus=limit, found=20, parked=20 - limit)
        self.assertEqual(self.kernel_cmdline(m), f"maxcpus={limit}")
        # The console names every parked CPU by APIC ID.
        line = m.wait_for(rb"smp: (\d+) CPUs left parked[^\r\n]*APIC ids"
                          rb"((?: \d+)+)", 5, start=0)
        self.assertEqual(int(line.group(1)), 20 - limit)
        self.assertEqual(len(line.group(2).split()), 20 - limit)

    def test_disabled_madt_entries(self):
        # maxcpus=8: 4 more MADT entries with the ENABLED flag clear.
        m, info = self.boot(smp=4, topology="maxcpus=8")
        self.check_ready(m, info, cpus=4, found=4)


class CommandLine(BootCase):
    """Kernel options arrive intact and do what they say."""

    def test_nosmp(self):
        m, info = self.boot(smp=4, cmdline="nosmp")
        self.check_ready(m, info, cpus=1, found=4, parked=3)


if __name__ == "__main__":
    unittest.main()
