"""Boot the real ISO in Bochs, the second emulator, and talk to it over COM1.

    with BochsMachine("bochs_haswell", model="corei7_haswell_4770",
                      cpus=2) as m:
        info = m.ready()                 # dict of the READY line's fields
        dump = m.dump()                  # the `d` dump, decoded

Bochs models what QEMU hides: CPUID leaves of real CPUs (15h/16h
included), MSRs that fault (ignore_bad_msrs=0), its own BIOS (rombios,
SMBIOS 2.4 with empty strings), a UART that takes time per byte.

How it runs: a bochsrc written per
boot into a temporary folder; Debian's Bochs has no headless display, so
its X display goes to a private Xvfb (`-nolisten tcp`, display number
chosen free); COM1 is a TCP socket-server on 127.0.0.1, keys go in on the
same socket. With `clock: sync=none` the emulated TSC counts at `ips`
instructions per second (DEFAULT_IPS here), so every kernel-side time is
emulated time, not wall time. Reading the serial line, waiting, READY,
fault scanning and dump decoding are harness.Machine's own.

Logs: build/test-logs/NAME.log (every COM1 byte) and NAME.bochs.txt (the
bochsrc and what Bochs said).
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time

from harness import ISO, LOG_DIR, BootError, Machine, scaled

BIOS = "/usr/share/bochs/BIOS-bochs-latest"
VGABIOS = "/usr/share/vgabios/vgabios.bin"
# Bochs under emulation is slow: 8-60 s to READY alone, more on a loaded
# host; a dump of a few thousand events over its UART a minute or two.
READY_TIMEOUT_S = 300.0
DUMP_TIMEOUT_S = 300.0
HOST_MEGS_MAX = 2048
# Bochs sets up its devices (and gigabytes of guest memory) before COM1's
# socket listens: slower than QEMU, more so on a loaded host.
CONNECT_TIMEOUT_S = 120.0
XVFB_START_S = 10.0
# The emulated TSC's rate. Bochs's own default, 50 MHz, sits on the
# kernel's 50 MHz floor for a plausible TSC (time/tscmath.h): windows then
# measure 49.9995 MHz or 50.001 MHz by chance. 64 MHz is clear of it;
# test_bochs boots under the floor on purpose.
DEFAULT_IPS = 64_000_000
# The CPU models the sweep boots (`bochs -help cpu` lists them all): Intel
# from Penryn to Tiger Lake, AMD from Athlon64 to Ryzen. Tiger Lake, Ice
# Lake and Skylake-X claim a TSC rate in CPUID 15h/16h that is not the one
# the TSC runs at.
MODELS = ("corei7_haswell_4770", "corei7_skylake_x", "tigerlake",
          "corei7_icelake_u", "ryzen", "core2_penryn_t9600", "zambezi",
          "athlon64_venice")


def available():
    """None when Bochs can run here, else why not (a skip reason)."""
    missing = [what for what, ok in (
        ("bochs", shutil.which("bochs")), ("Xvfb", shutil.which("Xvfb")),
        (BIOS, os.path.exists(BIOS)), (VGABIOS, os.path.exists(VGABIOS)))
        if not ok]
    if missing:
        return ("Bochs not installed (scripts/install-deps --bochs): "
                "missing " + ", ".join(missing))
    return None


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bochsrc(iso, port, *, model, cpus, megs, ips, ignore_bad_msrs):
    """The configuration of one boot: a PC with Bochs's BIOS and a CD."""
    return "\n".join([
        # Bochs holds at most 2 GiB of host memory for the guest's; more
        # guest memory (3 GB) is paged through that much.
        f"memory: guest={megs}, host={min(megs, HOST_MEGS_MAX)}",
        f"romimage: file={BIOS}",
        f"vgaromimage: file={VGABIOS}",
        "pci: enabled=1, chipset=i440fx",
        "vga: extension=vbe",
        f"ata0-master: type=cdrom, path={iso}, status=inserted",
        "boot: cdrom",
        f"cpu: model={model}, count={cpus}, ips={ips}, "
        f"ignore_bad_msrs={int(ignore_bad_msrs)}",
        "clock: sync=none, time0=local",
        "display_library: x",
        f"com1: enabled=1, mode=socket-server, dev=127.0.0.1:{port}",
        "panic: action=report",
        "error: action=report",
        "log: -",
        ""])


def start_xvfb(tmp):
    """A private X server; returns (process, display). Xvfb picks a free
    display number itself and writes it to the fd given by -displayfd."""
    rd, wr = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(wr), "-nolisten", "tcp", "-screen", "0",
         "1024x768x24"], pass_fds=(wr,), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "xvfb.err"),
                                               "wb"))
    os.close(wr)
    deadline = time.monotonic() + scaled(XVFB_START_S)
    got = b""
    os.set_blocking(rd, False)
    while not got.endswith(b"\n") and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            got += os.read(rd, 16)
        except BlockingIOError:
            time.sleep(0.05)
    os.close(rd)
    if not got.strip().isdigit():
        proc.kill()
        proc.wait()
        raise BootError(f"Xvfb did not start within {XVFB_START_S:.0f} s")
    return proc, ":" + got.strip().decode()


class BochsMachine(Machine):
    """One Bochs booting the ISO; use as a context manager. model: a
    Bochs CPU model (`bochs -help cpu`); cpus, megs (RAM in MiB), ips
    (also the TSC's rate), ignore_bad_msrs (0: an unimplemented MSR
    faults, as on real CPUs)."""

    def __init__(self, name, *, model="corei7_haswell_4770", cpus=1,
                 megs=512, ips=DEFAULT_IPS, ignore_bad_msrs=False, iso=ISO):
        super().__init__(name, iso=iso)
        self.conf = dict(model=model, cpus=cpus, megs=megs, ips=ips,
                         ignore_bad_msrs=ignore_bad_msrs)
        self.info_path = os.path.join(LOG_DIR, f"{name}.bochs.txt")
        self.xvfb = None
        self.rc_text = ""

    def start(self):
        why = available()
        if why:
            raise BootError(why)
        if not os.path.isfile(self.opts.iso):
            raise BootError(f"{self.opts.iso} not found: run make first")
        os.makedirs(LOG_DIR, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="bt-bochs-")
        port = free_tcp_port()
        self.rc_text = bochsrc(self.opts.iso, port, **self.conf)
        rc = os.path.join(self.tmp, "bochsrc")
        cont = os.path.join(self.tmp, "continue")
        with open(rc, "w") as f:
            f.write(self.rc_text)
        with open(cont, "w") as f:
            f.write("c\n")              # past the debugger prompt at t=0
        self.log = open(self.log_path, "wb")
        self.messages = open(os.path.join(self.tmp, "bochs.err"), "w+b")   # Session's qemu_messages()
        self.started = time.monotonic()
        try:
            self.xvfb, display = start_xvfb(self.tmp)
            # Bochs stays in our process group: test/run.py's kill of an
            # overrunning worker takes it along.
            self.proc = subprocess.Popen(
                ["bochs", "-q", "-f", rc, "-rc", cont],
                env=dict(os.environ, DISPLAY=display), cwd=self.tmp,
                stdin=subprocess.DEVNULL, stdout=self.messages,
                stderr=self.messages)
            self.follow(self._connect(port))      # Session's reader: COM1 into the buffer
        except BaseException:
            self.stop()                 # no Bochs or Xvfb left behind
            raise

    def _connect(self, port):
        """Bochs listens on COM1's port once its devices are set up."""
        deadline = time.monotonic() + scaled(CONNECT_TIMEOUT_S)
        while True:
            if self.proc.poll() is not None:
                self.fail(f"Bochs exited (status {self.proc.returncode}) "
                          "before it served COM1")
            try:
                return socket.create_connection(("127.0.0.1", port), 1)
            except OSError:
                if time.monotonic() > deadline:
                    self.fail(f"Bochs served no COM1 on port {port} within "
                              f"{scaled(CONNECT_TIMEOUT_S):.0f} s")
                time.sleep(0.2)

    def stop(self):
        super().stop()
        if self.rc_text:
            self._write_info()          # the bochsrc in place of QEMU's argv
        if self.xvfb is not None:
            if self.xvfb.poll() is None:
                self.xvfb.kill()
            self.xvfb.wait()
            self.xvfb = None

    def _write_info(self):
        with open(self.info_path, "w") as f:
            f.write(self.rc_text)
            if self.proc is not None:
                f.write(f"exit: status {self.proc.returncode}\n")
            f.write(self.qemu_messages())

    def fail(self, why):
        state = "running"
        if self.proc is not None and self.proc.poll() is not None:
            state = f"exited with status {self.proc.returncode}"
        said = "\n".join(line for line in self.qemu_messages().splitlines()
                         if "[" in line and ("PANIC" in line or "ERROR" in
                                             line or " e[" in line))
        raise BootError(
            f"{self.name}: {why} [Bochs: {state}; log {self.log_path}]\n"
            + (f"Bochs said: {said[-800:]}\n" if said else "")
            + f"--- last serial output ---\n{self.tail()}")

    def ready(self, timeout=READY_TIMEOUT_S):
        """READY's fields; fails at once (not after the whole timeout) when
        the kernel reports an exception first."""
        # GRUB's menu waits 2 emulated seconds: Enter boots its default
        # entry at once (GRUB reads COM1 too).
        self.wait_for(rb"will be executed automatically", timeout, start=0)
        self.send(b"\r")
        m = self.wait_for(rb"(?:^|[\r\n])(?:READY |EXCEPTION cpu=)", timeout,
                          start=0)
        if m.group(0).lstrip(b"\r\n").startswith(b"EXCEPTION"):
            self.fail("an exception before READY")
        return super().ready(timeout)

    def dump(self, key="d", timeout=DUMP_TIMEOUT_S):
        return super().dump(key, timeout=timeout)

    def sendkey(self, *qcodes, hold_ms=None):
        raise NotImplementedError("Bochs: keys go in over COM1 (send())")

    def qmp(self):
        raise NotImplementedError("Bochs has no QMP")
