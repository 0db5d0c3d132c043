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
message and never hangs the runner. QEMU is killed when the block exits.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from btlib.dump import dumplog
from btlib.qemu import launch as qemu

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
STOP_GRACE_S = 3.0
TAIL_CHARS = 2000
CHUNK = 65536
THROTTLED_CHUNK = 256       # a throttled line's reads: short, regular waits

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
# wait_for() re-scans only this much old output when new bytes arrive, so
# waiting through a multi-megabyte dump stays linear. A match must not be
# longer than this.
RESCAN_BYTES = 65536
# Terminal escape sequences the firmware and GRUB write, for readable tails.
ESCAPE_RE = re.compile(rb"\x1b(?:\[[0-9;?=]*[A-Za-z]|[()][A-Za-z0-9]|.)")


def scaled(seconds):
    return seconds * TIMEOUT_SCALE


def find_faults(data):
    """Excerpts of serial output (bytes) that look like a fault, a panic
    or a GRUB error; [] for a healthy boot."""
    text = ESCAPE_RE.sub(b"\n", data).replace(b"\r", b"")
    text = DUMP_LINE_RE.sub("", text.decode("ascii", "replace"))
    return [text[max(0, m.start() - 80):m.end() + 80]
            for m in FAULT_RE.finditer(text)]


def readable(data):
    """Bytes from the serial line as text a human can read in a report."""
    text = ESCAPE_RE.sub(b"", data).replace(b"\r", b"")
    return text.decode("ascii", "replace")


class BootError(AssertionError):
    """A boot test failed: the message carries the log tail."""


class Machine:
    """One headless QEMU booting the ISO; use as a context manager.

    name: the test's name, used for the log files. The remaining keyword
    arguments are qemu.Options fields (fw, media, smp, topology, mem,
    cmdline, accel ...). accel defaults to tcg: tests must not depend on
    whether this host's KVM works. cmdline defaults to "" (boot at once,
    no GRUB menu). serial="none" boots with no UART at all: nothing
    arrives over serial then (read the screen through qmp())."""

    def __init__(self, name, **options):
        self.no_serial = options.get("serial") == "none"
        options.setdefault("accel", "tcg")
        options.setdefault("cmdline", "")
        options.setdefault("iso", ISO)
        self.name = name
        self.opts = qemu.Options(**options)
        self.log_path = os.path.join(LOG_DIR, f"{name}.log")
        self.info_path = os.path.join(LOG_DIR, f"{name}.qemu.txt")
        self.buf = bytearray()
        self.mark = 0               # wait_for() searches from here
        self.cond = threading.Condition()
        self.closed = False         # serial socket reached EOF
        self.proc = self.sock = self._qmp = self.tmp = None
        self.reader = None
        self.started = None
        self.rate = None            # throttle(): bytes/s read from COM1

    # -- lifecycle ---------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if not os.path.isfile(self.opts.iso):
            raise BootError(f"{self.opts.iso} not found: run make first")
        os.makedirs(LOG_DIR, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="bt-boot-")
        serial = os.path.join(self.tmp, "serial")
        self.opts.serial = "none" if self.no_serial else f"unix:{serial}"
        self.opts.qmp = os.path.join(self.tmp, "qmp")
        self.log = open(self.log_path, "wb")
        self.qemu_err = open(os.path.join(self.tmp, "qemu.err"), "w+b")
        self.started = time.monotonic()
        try:
            # QEMU stays in our process group: when test/run.py kills a
            # worker that overran its deadline, its QEMU dies with it.
            self.proc = qemu.launch(self.opts, stdin=subprocess.DEVNULL,
                                    stdout=self.qemu_err,
                                    stderr=self.qemu_err)
            if not self.no_serial:
                self.sock = qemu.connect_unix(serial, self.proc,
                                              scaled(CONNECT_TIMEOUT_S))
        except qemu.QemuError as e:
            said = self.qemu_messages().strip()
            self.stop()
            raise BootError(f"{self.name}: {e}" + (f": {said}" if said
                                                   else ""))
        if self.no_serial:
            return
        self.reader = threading.Thread(target=self._read_serial,
                                       name=f"serial-{self.name}",
                                       daemon=True)
        self.reader.start()

    def stop(self):
        """Kill QEMU, finish the log, remove the sockets. Idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        if self.reader is not None:
            self.reader.join(STOP_GRACE_S)
        for thing in (self._qmp, self.sock):
            if thing is not None:
                thing.close()
        self._qmp = self.sock = None
        if not getattr(self, "log", None) or self.log.closed:
            return
        self.log.close()
        self._write_info()
        self.qemu_err.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _write_info(self):
        argv = getattr(self.proc, "bt_argv", None) or []
        with open(self.info_path, "w") as f:
            f.write(shlex.join(argv) + "\n")
            if self.proc is not None:
                code = self.proc.returncode
                f.write(f"exit: {qemu.exit_status_meaning(code)} "
                        f"(status {code})\n")
            f.write(self.qemu_messages())

    def qemu_messages(self):
        """What QEMU printed itself (errors, warnings)."""
        if getattr(self, "qemu_err", None) is None or self.qemu_err.closed:
            return ""
        self.qemu_err.flush()
        self.qemu_err.seek(0)
        return self.qemu_err.read().decode("utf-8", "replace")

    def throttle(self, bytes_per_s):
        """Read the serial line at most this fast (None: as fast as it
        comes), as a slow line would carry it: QEMU's UART then waits for
        room, as a real one waits for its bits to leave. The socket's own
        buffer (some 200 KiB) fills first."""
        self.rate = bytes_per_s

    def _read_serial(self):
        """Reader thread: every byte goes to the log, then to the buffer."""
        while True:
            rate = self.rate
            try:
                data = self.sock.recv(THROTTLED_CHUNK if rate else CHUNK)
            except OSError:
                data = b""
            if rate and data:
                time.sleep(len(data) / rate)
            if data:
                self.log.write(data)
                self.log.flush()
            with self.cond:
                if data:
                    self.buf += data
                else:
                    self.closed = True
                self.cond.notify_all()
            if not data:
                return

    # -- reading -----------------------------------------------------------
    def output(self):
        """Everything COM1 printed so far (bytes)."""
        with self.cond:
            return bytes(self.buf)

    def text(self):
        """Everything so far, escape sequences and CRs removed (str)."""
        return readable(self.output())

    def tail(self, chars=TAIL_CHARS):
        return self.text()[-chars:]

    def fail(self, why):
        """Raise BootError with why, QEMU's state and the log tail."""
        state = "running"
        if self.proc is not None and self.proc.poll() is not None:
            state = qemu.exit_status_meaning(self.proc.returncode)
        extra = "\n".join(line for line in self.qemu_messages().splitlines()
                          if "waiting for connection" not in line).strip()
        msg = (f"{self.name}: {why} [QEMU: {state}; log {self.log_path}]\n"
               + (f"QEMU said: {extra[-500:]}\n" if extra else "")
               + f"--- last serial output ---\n{self.tail()}")
        raise BootError(msg)

    def wait_for(self, pattern, timeout, start=None):
        """Wait until regex pattern (bytes or str) matches the output at or
        after `start` (default: the end of the previous match) and return
        the match. Fails the test, with the log tail, on timeout or when
        QEMU/serial ends first."""
        if isinstance(pattern, str):
            pattern = pattern.encode()
        rx = re.compile(pattern, re.MULTILINE)
        pos = self.mark if start is None else start
        deadline = time.monotonic() + scaled(timeout)
        with self.cond:
            while True:
                m = rx.search(self.buf, pos)
                if m:
                    self.mark = m.end()
                    return m
                pos = max(pos, len(self.buf) - RESCAN_BYTES)
                if self.closed:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(min(left, 0.5))
        if self.closed:
            self.proc.wait(STOP_GRACE_S)
            self.fail(f"serial closed before /{pattern.decode()}/ appeared")
        self.fail(f"no /{pattern.decode()}/ within {scaled(timeout):.0f} s")

    def ready(self, timeout=None):
        """Wait for the kernel's READY line and return its fields (str
        values). Searches from the start of the output."""
        if timeout is None:
            timeout = READY_TIMEOUT_S[self.opts.fw]
        m = self.wait_for(qemu.READY_RE.pattern, timeout, start=0)
        self.ready_at = time.monotonic() - self.started
        return qemu.parse_ready(m.group(1))

    def faults(self):
        """Excerpts of the output that look like a fault/panic/error."""
        return find_faults(self.output())

    # -- writing -----------------------------------------------------------
    def send(self, data):
        """Bytes to COM1. GRUB eats input while it runs: call after
        ready()."""
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def qmp(self):
        """The QMP connection (opened on first use)."""
        if self._qmp is None:
            self._qmp = qemu.Qmp(self.opts.qmp, self.proc)
        return self._qmp

    def sendkey(self, *qcodes, hold_ms=None):
        """Press keys on the PS/2 keyboard, e.g. sendkey("d")."""
        return self.qmp().send_key(*qcodes, hold_ms=hold_ms)

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

    def wait_exit(self, timeout):
        """Wait for QEMU to exit by itself; return its status."""
        try:
            return self.proc.wait(scaled(timeout))
        except subprocess.TimeoutExpired:
            self.fail(f"QEMU still running after {scaled(timeout):.0f} s")
