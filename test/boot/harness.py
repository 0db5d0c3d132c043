"""Boot the real ISO headless in QEMU and talk to it over COM1 and QMP.

    with Machine("bios_cd_smp4", smp=4) as m:
        info = m.ready()                 # dict of the READY line's fields
        m.send(b"d")                     # bytes to COM1 (only after READY)
        m.wait_for(rb"dump end", 30)     # regex over everything received
        m.sendkey("d")                   # PS/2 key press via QMP send-key

Every byte COM1 produced is kept in build/test-logs/NAME.log (the
evidence a failure is judged by) and the QEMU command line plus QEMU's own
messages in build/test-logs/NAME.qemu.txt. Every wait has a deadline: a
hung or crashed kernel fails the test with the tail of its log in the
message and never hangs the runner. QEMU is stopped when the block exits
(the plumbing: btlib/qemu/session.py; this adds the tests' files and checks).
"""
import os
import re
import shlex
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from btlib.dump import dumplog
from btlib.qemu import launch as qemu
from btlib.qemu import session

ISO = os.environ.get("BT_ISO", os.path.join(REPO, "build", "baretrace.iso"))
LOG_DIR = os.path.join(REPO, "build", "test-logs")

# Deadlines for the READY line under TCG. Measured alone: SeaBIOS ~1-3 s,
# OVMF ~5-7 s; parallel tests on two host cores and 16 emulated CPUs can be
# several times slower, so the margins are wide. BT_TIMEOUT_SCALE stretches
# every deadline on slow machines.
READY_TIMEOUT_S = {"bios": 60.0, "uefi": 120.0}
TIMEOUT_SCALE = float(os.environ.get("BT_TIMEOUT_SCALE", "1"))
CONNECT_TIMEOUT_S = 30.0
DUMP_TIMEOUT_S = 120.0      # a dump takes ~1 s under TCG; a loaded host more

# Text that must never appear in a healthy boot: the kernel's EXCEPTION
# report, panics, triple faults, "halting" (not started by multiboot2) and
# GRUB's "error: ..." lines.
# Searched in text whose escape sequences became line breaks (GRUB puts a
# cursor move, not a newline, before its messages).
# Dump lines (%... and DUMP ...) are skipped: the event table they carry
# describes an EXCEPTION event, which is not one happening.
FAULT_RE = re.compile(
    r"^EXCEPTION cpu=|\bpanic|\btriple fault|\bhalting\b|^error: ",
    re.IGNORECASE | re.MULTILINE)
DUMP_LINE_RE = re.compile(r"^(?:%|DUMP ).*$", re.MULTILINE)


def scaled(seconds):
    return seconds * TIMEOUT_SCALE


def run_alone(why):
    """Marks a boot test that test/run.py starts with no other test
    running (its ALONE): many vCPUs that wait on each other, which a
    second boot on a 2-core host slows several times over. `why` says
    so in the test's own words."""
    def mark(test):
        test.run_alone = why
        return test
    return mark


def find_faults(data):
    """Excerpts of serial output (bytes) that look like a fault, a panic
    or a GRUB error; [] for a healthy boot."""
    text = session.ESCAPE_RE.sub(b"\n", data).replace(b"\r", b"")
    text = DUMP_LINE_RE.sub("", text.decode("ascii", "replace"))
    return [text[max(0, m.start() - 80):m.end() + 80]
            for m in FAULT_RE.finditer(text)]


class BootError(AssertionError):
    """A boot test failed: the message carries the log tail."""


class Machine(session.Session):
    """One headless QEMU booting the ISO (btlib.qemu.session.Session) with
    the tests' log files, deadlines and failures; use as a context manager.

    name: the test's name, used for the log files. The remaining keyword
    arguments are qemu.Options fields (fw, media, smp, topology, mem,
    cmdline, accel ...). accel defaults to tcg: tests must not depend on
    whether this host's KVM works. cmdline defaults to "" (boot at once,
    no GRUB menu). serial="none" boots with no UART at all: nothing
    arrives over serial then (read the screen through qmp())."""

    Error = BootError

    def __init__(self, name, **options):
        options.setdefault("accel", "tcg")
        options.setdefault("cmdline", "")
        options.setdefault("iso", ISO)
        super().__init__(qemu.Options(**options), name=name,
                         connect_timeout=scaled(CONNECT_TIMEOUT_S),
                         timeout_scale=TIMEOUT_SCALE)
        self.log_path = os.path.join(LOG_DIR, f"{name}.log")
        self.info_path = os.path.join(LOG_DIR, f"{name}.qemu.txt")

    def start(self):
        if not os.path.isfile(self.opts.iso):
            raise BootError(f"{self.opts.iso} not found: run make first")
        os.makedirs(LOG_DIR, exist_ok=True)
        # QEMU stays in our process group: when test/run.py kills a
        # worker that overran its deadline, its QEMU dies with it.
        self.log = open(self.log_path, "wb")
        try:
            super().start()
        except qemu.QemuError as e:       # start() has stopped it all
            said = self.qemu_messages().strip()
            raise BootError(f"{self.name}: {e}"
                            + (f"\nQEMU said: {said}" if said else "")) from None

    def stop(self):
        """Stop QEMU, finish the log, write the .qemu.txt. Idempotent."""
        super().stop()
        if self.log is None or self.log.closed:
            return
        self.log.close()
        argv = getattr(self.proc, "bt_argv", None) or []
        with open(self.info_path, "w") as f:
            f.write(shlex.join(argv) + "\n")
            if self.proc is not None:
                code = self.proc.returncode
                f.write(f"exit: {qemu.exit_status_meaning(code)} "
                        f"(status {code})\n")
            f.write(self.qemu_messages())

    def ready(self, timeout=None):
        """Wait for the kernel's READY line and return its fields (str
        values). Searches from the start of the output."""
        return super().ready(READY_TIMEOUT_S[self.opts.fw] if timeout is None
                             else timeout)

    def faults(self):
        """Excerpts of the output that look like a fault/panic/error."""
        return find_faults(self.output())

    def dump(self, key="d", keyboard=False, timeout=DUMP_TIMEOUT_S):
        """Press `key` (a byte on the serial line, or with keyboard=True a
        key press through QMP send-key), wait for the whole DUMP END line
        and return the last dump decoded from what arrived since."""
        start = len(self.output())
        if keyboard:
            self.sendkey(key)
        else:
            self.send(key.encode())
        self.wait_for(rb"^DUMP END[^\r\n]*\r?\n", timeout, start=start)
        dumps = dumplog.parse_log(self.output()[start:])
        if not dumps:
            self.fail(f"no dump after the key {key!r}")
        return dumps[-1]
