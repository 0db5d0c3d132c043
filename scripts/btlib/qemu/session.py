"""One headless QEMU booting the ISO, and its COM1: the boot tests'
Machine, scripts/bench's boots and capture --qemu all are one of these.

    with Session(launch.Options(iso=ISO, smp=4, accel="tcg"), log=f) as s:
        info = s.ready(60)                       # the READY line's fields
        s.send(b"d")                             # bytes to COM1 (after READY)
        s.wait_for(rb"^DUMP END[^\\r\\n]*\\n", 120, what="the dump's end")
        s.sendkey("d")                           # a PS/2 key press via QMP

COM1 is a unix socket QEMU serves with wait=on: the guest does not start
until the session is connected, so not one byte is lost. A reader thread
moves every byte to the log (a binary file of the caller's, flushed as it
goes) and to the kept output: with keep=True all of it (a boot test's few
KiB, bench's dumps of some MiB: waits and decoding read it); with
keep=False only what read() has not handed out yet (capture, which logs
itself and may run for hours). Every wait has a deadline and its failure
names what it waited for, QEMU's state and the output's tail.

QEMU's own messages go to a file in the session's temporary directory;
QEMU dies with this process (launch.die_with_parent) and stop() ends it
(SIGTERM, then SIGKILL after a grace), joins the reader and removes the
sockets. own_session=True starts QEMU in a session of its own, so a
Ctrl-C reaches only this process, which then stops QEMU itself.
"""

import re
import shutil
import subprocess
import tempfile
import threading
import time

from . import launch as qemu
from ..capture.serialport import Port, PortClosed, PortError
from ..dump import ready as readyline

STOP_GRACE_S = 3.0
TAIL_CHARS = 2000
THROTTLED_CHUNK = 256        # a throttled line's reads: short, regular waits
POLL_S = 0.5                 # the reader's longest wait before it looks at stop()
# wait_for() re-scans only this much old output when new bytes arrive, so
# waiting through a multi-megabyte dump stays linear. A match must not be
# longer than this.
RESCAN_BYTES = 65536
# Terminal escape sequences the firmware and GRUB write, for readable tails.
ESCAPE_RE = re.compile(rb"\x1b(?:\[[0-9;?=]*[A-Za-z]|[()][A-Za-z0-9]|.)")
# QEMU's socket chardev says this on start; not worth showing in an error.
CHATTER = "waiting for connection"


def readable(data):
    """Bytes from the serial line as text a human can read in a report."""
    text = ESCAPE_RE.sub(b"", data).replace(b"\r", b"")
    return text.decode("ascii", "replace")


class Session:
    """One QEMU and its COM1; use as a context manager (start, stop).

    opts: a launch.Options; its serial ("none", or anything else: a unix
    socket made here) and qmp (made here) are set by start(). name: said
    in errors. log: a binary file every COM1 byte is copied to (the
    caller's to close), or None. timeout_scale stretches every deadline."""

    Error = qemu.QemuError          # what fail() raises (a test's subclass: its failure)

    def __init__(self, opts, name="qemu", log=None, keep=True, connect_timeout=30.0,
                 own_session=False, timeout_scale=1.0):
        self.opts, self.name, self.log, self.keep = opts, name, log, keep
        self.no_serial = opts.serial == "none"
        self.connect_timeout, self.own_session = connect_timeout, own_session
        self.timeout_scale = timeout_scale
        self.buf = bytearray()
        self.taken = 0              # read() has handed out buf[:taken]
        self.mark = 0               # wait_for() searches from here by default
        self.cond = threading.Condition()
        self.closed = False         # the serial line reached its end
        self.stopping = False
        self.proc = self.port = self.reader = self.tmp = self.messages = None
        self._qmp = None
        self._said = None           # QEMU's messages, kept once tmp is gone
        self.started = self.ready_at = None
        self.rate = None            # throttle(): bytes/s read from COM1

    # -- lifecycle ---------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Launch QEMU and connect COM1; QemuError (one line) if it cannot."""
        self.tmp = tempfile.mkdtemp(prefix="bt-qemu-")
        sock_path = f"{self.tmp}/serial"
        if not self.no_serial:
            self.opts.serial = f"unix:{sock_path}"
        self.opts.qmp = f"{self.tmp}/qmp"
        self.messages = open(f"{self.tmp}/qemu.out", "w+b")
        self.started = time.monotonic()
        try:
            self.proc = qemu.launch(self.opts, stdin=subprocess.DEVNULL, stdout=self.messages,
                                    stderr=subprocess.STDOUT,
                                    start_new_session=self.own_session)
        except (qemu.QemuError, OSError) as e:
            self.stop()
            raise qemu.QemuError(str(e)) from None
        if self.no_serial:
            return
        try:
            sock = qemu.connect_unix(sock_path, self.proc, self.connect_timeout)
        except qemu.QemuError as e:
            self.stop()
            raise qemu.QemuError(f"QEMU did not start: {self.last_message() or e}") from None
        self.follow(sock)

    def follow(self, sock):
        """Read this connected stream socket as COM1 from now on."""
        if self.started is None:
            self.started = time.monotonic()
        self.port = Port.from_socket(sock, f"{self.name} COM1")
        self.reader = threading.Thread(target=self._read_serial, name=f"serial-{self.name}",
                                       daemon=True)
        self.reader.start()

    def stop(self):
        """End QEMU, join the reader, remove the sockets. Idempotent."""
        self.stopping = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        if self.reader is not None:
            self.reader.join(STOP_GRACE_S + POLL_S)
        for thing in (self._qmp, self.port):
            if thing is not None:
                thing.close()
        self._qmp = self.port = None
        if self.messages is not None and not self.messages.closed:
            self._said = self.qemu_messages()
            self.messages.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def qemu_messages(self):
        """What QEMU printed itself (errors, warnings)."""
        if self.messages is None or self.messages.closed:
            return self._said or ""
        self.messages.flush()
        self.messages.seek(0)
        return self.messages.read().decode("utf-8", "replace")

    def last_message(self):
        """QEMU's last line worth showing, or ''."""
        lines = [line.strip() for line in self.qemu_messages().splitlines()
                 if line.strip() and CHATTER not in line]
        return lines[-1] if lines else ""

    def exit_reason(self):
        """(why QEMU went away in words, whether it failed); waits for it.

        Status 1 is both QEMU's own error and a guest writing 0 to the
        exit port: QEMU says something on stderr only in the first case."""
        try:
            code = self.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            return "QEMU closed its serial port", False
        tail = self.last_message()
        if code < 0 or (code > 0 and not code & 1) or (code == 1 and tail):
            return f"QEMU failed: {tail or qemu.exit_status_meaning(code)}", True
        return f"QEMU exited ({qemu.exit_status_meaning(code)})", False

    # -- the reader --------------------------------------------------------
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
                data = self.port.read(POLL_S, THROTTLED_CHUNK if rate else None)
            except (PortClosed, PortError, OSError, ValueError, TypeError):
                data = None
            if data is not None and not data and not self.stopping:
                continue
            if rate and data:
                time.sleep(len(data) / rate)
            if data and self.log is not None:
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
    def scaled(self, seconds):
        return seconds * self.timeout_scale

    def output(self, start=0, end=None):
        """What COM1 printed (bytes), buf[start:end]; with keep=False only
        what read() has not returned yet."""
        with self.cond:
            return bytes(self.buf[start:end])

    def size(self):
        """How many bytes output() holds."""
        with self.cond:
            return len(self.buf)

    def text(self):
        """Everything so far, escape sequences and CRs removed (str)."""
        return readable(self.output())

    def tail(self, chars=TAIL_CHARS):
        return self.text()[-chars:]

    def read(self, timeout):
        """The bytes that arrived since the last read(), waiting up to
        timeout seconds for some (b'' if none): a serialport.Port's
        read(), for capture. PortClosed once the line has ended and all
        was read."""
        with self.cond:
            if self.taken >= len(self.buf) and not self.closed:
                self.cond.wait(timeout)
            data = bytes(self.buf[self.taken:])
            self.taken += len(data)
            if not self.keep:
                del self.buf[:]
                self.taken = 0
            if not data and self.closed:
                raise PortClosed(self.name)
            return data

    def search(self, pattern, start=0):
        """The first match of regex pattern (bytes, or compiled) in the
        output at or after start, or None; never waits."""
        with self.cond:
            return _compiled(pattern).search(self.buf, start)

    def fail(self, why):
        """Raise self.Error with why, QEMU's state and the output's tail."""
        state = "running"
        if self.proc is not None and self.proc.poll() is not None:
            state = qemu.exit_status_meaning(self.proc.returncode)
        log = getattr(self.log, "name", None)
        extra = "\n".join(line for line in self.qemu_messages().splitlines()
                          if CHATTER not in line).strip()
        raise self.Error(f"{self.name}: {why} [QEMU: {state}"
                         + (f"; log {log}" if isinstance(log, str) else "") + "]\n"
                         + (f"QEMU said: {extra[-500:]}\n" if extra else "")
                         + f"--- last serial output ---\n{self.tail()}")

    def wait_for(self, pattern, timeout, start=None, what=None):
        """Wait until regex pattern (bytes, str or compiled; ^ and $ match
        at line ends) matches the output at or after start (default: the
        end of the previous match) and return the match. fail()s, naming
        `what` (default: the pattern), on timeout or when the line ends
        first."""
        rx = _compiled(pattern)
        what = what or f"/{rx.pattern.decode('ascii', 'replace')}/"
        pos = self.mark if start is None else start
        deadline = time.monotonic() + self.scaled(timeout)
        with self.cond:
            while True:
                m = rx.search(self.buf, pos)
                if m:
                    self.mark = m.end()
                    return m
                pos = max(pos, len(self.buf) - RESCAN_BYTES)
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    break
                self.cond.wait(min(left, POLL_S))
        if self.closed:
            if self.proc is not None:
                self.proc.wait(STOP_GRACE_S)
            self.fail(f"serial closed before {what} appeared")
        self.fail(f"no {what} within {self.scaled(timeout):.0f} s")

    def ready(self, timeout):
        """Wait for the kernel's READY line (from the output's start) and
        return its fields (str values); ready_at: seconds since start()."""
        m = self.wait_for(readyline.LINE, timeout, start=0, what="READY line")
        self.ready_at = time.monotonic() - self.started
        return readyline.parse(m.group(1))

    # -- writing -----------------------------------------------------------
    def send(self, data):
        """Bytes to COM1. GRUB eats input while it runs: send after ready()."""
        if isinstance(data, str):
            data = data.encode()
        self.port.write(data)

    write = send                    # a serialport.Port's name, for capture

    def qmp(self):
        """The QMP connection (opened on first use)."""
        if self._qmp is None:
            self._qmp = qemu.Qmp(self.opts.qmp, self.proc)
        return self._qmp

    def sendkey(self, *qcodes, hold_ms=None):
        """Press keys on the PS/2 keyboard, e.g. sendkey("d")."""
        return self.qmp().send_key(*qcodes, hold_ms=hold_ms)


def _compiled(pattern):
    if isinstance(pattern, re.Pattern):
        return pattern
    if isinstance(pattern, str):
        pattern = pattern.encode()
    return re.compile(pattern, re.MULTILINE)
