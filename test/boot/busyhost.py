"""Boots that lost a race with a busy host, booted again.

The kernel bounds every wait on a device, as Linux does, and some bounds
are on the emulator's own timers: QEMU's EHCI starts its schedules on its
frame timer, and the kernel gives it 100 ms (EHCI_SCHEDULE, Linux's
bound) before it leaves the controller alone, saying so. On a loaded host
that timer can be late, and the boot then says how busy the host was,
not whether the driver works. Such a boot is tried again, BOOT_TRIES
boots in all; a driver that never makes the bound fails every try. The
bound itself is never loosened for a test.
"""
import re

from harness import Machine

# What the kernel says when an emulator timer missed a bound it waits on.
EMULATOR_LATE = re.compile(r"ehci: schedules do not start")
BOOT_TRIES = 3


def boot(test, name, **options):
    """Machine(name, **options) started (stopped at the test's end) and at
    READY; booted again, as NAME.tryN, while its console says the
    emulator was late (EMULATOR_LATE), up to BOOT_TRIES boots."""
    for attempt in range(1, BOOT_TRIES + 1):
        m = Machine(name + (f".try{attempt}" if attempt > 1 else ""), **options)
        m.start()
        test.addCleanup(m.stop)
        m.ready()
        if attempt == BOOT_TRIES or not EMULATOR_LATE.search(m.text()):
            return m
        m.stop()
    raise AssertionError("unreachable")
