"""Which QEMU is installed, and whether it emulates x2APIC under TCG.

Small and with no other btlib import, so that scripts/install-deps (run by
every make) can import it at once; btlib.qemu.launch re-exports it for the tests.

    version()          (major, minor, "X.Y.Z") of qemu-system-x86_64, or None
    x2apic_missing()   None when x2APIC runs under TCG, else why not (words a
                       skipped test prints)
"""
import functools
import re
import subprocess

QEMU_BIN = "qemu-system-x86_64"
# The first QEMU that emulates x2APIC under TCG, and so APIC IDs above 254
# and more than 255 vCPUs.
X2APIC_TCG_QEMU = (8, 1)


@functools.lru_cache(maxsize=None)      # one `qemu --version` per program run
def version(qemu=QEMU_BIN):
    """(major, minor, "X.Y.Z") of the QEMU on PATH, or None when there is
    none or it does not say."""
    try:
        out = subprocess.run([qemu, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"version (\d+)\.(\d+)(?:\.\d+)?", out)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), m.group(0).split()[1]


def x2apic_missing(qemu=QEMU_BIN):
    """None when this QEMU emulates x2APIC under TCG (8.1 and later, and so
    APIC IDs above 254 and more than 255 vCPUs), else why not, in words a
    skipped test can print."""
    found = version(qemu)
    if found is None:
        return f"{qemu} gives no version"
    if found[:2] < X2APIC_TCG_QEMU:
        want = ".".join(map(str, X2APIC_TCG_QEMU))
        return (f"QEMU {found[2]} has no x2APIC under TCG (needs {want} or "
                "later: scripts/install-deps --test installs it where the "
                "distribution offers it)")
    return None
