"""Build and start the QEMU command line that boots a baretrace ISO.

Shared by scripts/run-qemu (`make run`), scripts/capture --qemu and the boot
test harness, so every way of booting the image in QEMU agrees on firmware,
media, CPU model and how the kernel command line gets in.

Typical use:

    opts = qemu.Options(iso="build/baretrace.iso", fw="uefi", media="usb",
                        smp=16, accel="tcg", serial="unix:/tmp/x/serial",
                        qmp="/tmp/x/qmp", cmdline="maxcpus=2")
    proc = qemu.launch(opts, stdin=subprocess.DEVNULL)

The kernel command line reaches GRUB as an SMBIOS OEM string (type 11)
"baretrace:ARGS"; iso/grub.cfg reads it and boots the default entry with
ARGS at once, so one ISO serves every test without being rebuilt.
"""
from __future__ import annotations  # "str | None" on Python < 3.10

import dataclasses
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

QEMU_BIN = "qemu-system-x86_64"
FIRMWARES = ("bios", "uefi")
MEDIA = ("cd", "usb", "usb-ehci")
ACCELS = ("auto", "kvm", "tcg")
UARTS = ("isa", "pci", "com2", "pci2x")
# NICs by the names make run NET= and capture --qemu --net take: QEMU's
# device for each (usb: a CDC Ethernet adapter on its own xHCI).
NICS = {"e1000": ["e1000"], "e1000e": ["e1000e"], "igb": ["igb"], "virtio": ["virtio-net-pci"],
        "usb": ["qemu-xhci,id=netxhci", "usb-net,bus=netxhci.0"]}
NETDEV_ID = "net0"
# The network boot (make netboot's TFTP root): GRUB's image for each
# firmware, relative to the root, as QEMU's user-mode DHCP hands it out.
NETBOOT_FILES = {"bios": "boot/grub/i386-pc/core.0", "uefi": "boot/grub/x86_64-efi/core.efi"}
NETBOOT_NIC = "e1000"        # SeaBIOS and OVMF boot it through iPXE's option ROM
# QEMU's own prefix: the MAC every NIC gets unless told (52:54:00:12:34:56).
QEMU_MAC_PREFIX = "52:54:00"

# Split OVMF (code read-only + a variable store) is preferred: it is what a
# real board has. The variable store is opened with snapshot=on, so each run
# starts from the pristine template and nothing is written back.
OVMF_SPLIT = (
    ("/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/OVMF/OVMF_VARS.fd"),
    ("/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"),
)
OVMF_UNIFIED = ("/usr/share/ovmf/OVMF.fd", "/usr/share/qemu/OVMF.fd")

# The guest leaves QEMU by writing to this port: status = (value << 1) | 1.
DEBUG_EXIT_PORT = 0xF4
# Under TCG: a model with TSC, APIC and everything else TCG can emulate.
TCG_CPU = "max"
# Which QEMU this is, and whether it can run the x2APIC tests (qemuversion.py).
from .version import X2APIC_TCG_QEMU, version, x2apic_missing   # noqa: F401
# The prefix grub.cfg requires before it trusts an OEM string.
OEM_PREFIX = "baretrace:"
# Placed when no command line is given: grub.cfg's probe then finds a type
# 11 structure (else GRUB prints "error: no structure matched") but no
# prefix, so the menu is shown with its normal timeout.
OEM_NO_CMDLINE = "baretrace-menu"

# KVM probe: a 512-byte boot sector that writes PROBE_CODE to the exit
# port. SeaBIOS reaches it in ~0.1 s under TCG and well under a second on
# working KVM; nested or broken KVM crashes, aborts or crawls (~4 s here,
# where SeaBIOS + GRUB then take ~100 s) and misses the deadline.
PROBE_CODE = 0x2A
PROBE_EXIT = (PROBE_CODE << 1) | 1
PROBE_TIMEOUT_S = 1.5
# OVMF has its own failure modes under KVM ("emulation failure"); it must
# reach its boot manager, which announces itself on serial with this.
PROBE_UEFI_MARK = b"BdsDxe"
PROBE_UEFI_TIMEOUT_S = 6.0


class QemuError(Exception):
    """A user-facing problem (missing firmware, bad option): one line."""


@dataclasses.dataclass
class Options:
    """Everything that decides the QEMU command line.

    serial: "stdio" (this terminal, multiplexed with the monitor: Ctrl-A X
    quits), "unix:PATH" (socket server; QEMU waits for the client before it
    starts the guest, so no byte is lost), "pty", "file:PATH" or "none".
    serial_log: also copy everything the guest prints on COM1 to this file.
    qmp: unix socket path for a QMP server (QEMU does not wait for it).
    topology: extra -smp settings ("sockets=2,cores=6", "maxcpus=8"); if it
    starts with a CPU count ("12,sockets=2,cores=6") that count wins over
    smp. cmdline: kernel command line, None for grub.cfg's menu.
    uart: where that serial backend plugs in: "isa" (COM1 at 0x3F8),
    "pci" (a pci-serial card and no legacy COM port at all, as on PCs
    whose only UART is a PCI device), "com2" (COM2 at 0x2F8, with COM1
    absent: a board with only a COM2 header) or "pci2x" (the second port
    of a pci-serial-2x card at 00:1c.0, no legacy COM port: console=
    pci:00:1c.0/1 names it).
    no_reboot: a reset (guest or QMP system_reset) ends QEMU; False lets
    the machine warm-reset with its RAM kept. stick_writable: with media
    "usb", the stick accepts writes (give it a copy of the ISO).
    machine: -machine value (e.g. "q35,i8042=off,hpet=off"); extra: raw
    arguments appended last (more -device lines, say).
    nic: a network adapter (a key of NICS) on the netdev `netdev` (QEMU
    -netdev options after its id; default user-mode networking, whose
    host side is 127.0.0.1 and whose 10.0.2.x addresses exist only inside
    QEMU). mac: the NIC's MAC ("52:54:00:ab:cd:ef"; None: QEMU's default
    52:54:00:12:34:56, the same for every QEMU; distinct_mac() gives one
    of its own).
    netboot: a TFTP root (make netboot's build/netboot): the machine
    boots GRUB from it over the NIC (NETBOOT_NIC unless nic says) on
    user-mode networking (QEMU's own DHCP and TFTP), with no CD or stick.
    """
    iso: str
    fw: str = "bios"
    media: str = "cd"
    smp: int = 1
    topology: str = ""
    mem: str = "512M"
    accel: str = "tcg"
    cmdline: str | None = None
    serial: str = "stdio"
    serial_log: str | None = None
    qmp: str | None = None
    display: bool = False
    machine: str | None = None
    uart: str = "isa"
    no_reboot: bool = True
    stick_writable: bool = False
    qemu: str = QEMU_BIN
    nic: str | None = None
    netdev: str = "user"
    mac: str | None = None
    netboot: str | None = None
    extra: list = dataclasses.field(default_factory=list)


def qarg(value):
    """Quote a value (a path) for QEMU's key=value syntax: commas double."""
    return str(value).replace(",", ",,")


def find_ovmf():
    """Return ("split", code, vars) or ("unified", image, None)."""
    for code, vars_ in OVMF_SPLIT:
        if os.path.exists(code) and os.path.exists(vars_):
            return ("split", code, vars_)
    for image in OVMF_UNIFIED:
        if os.path.exists(image):
            return ("unified", image, None)
    raise QemuError("no UEFI firmware (OVMF) found; install the Debian "
                    "package 'ovmf' (scripts/install-deps --run)")


def smp_arg(smp, topology=""):
    """The -smp value: count plus topology; a leading count in topology
    (e.g. "12,sockets=2,cores=6") replaces smp."""
    topology = (topology or "").strip().strip(",")
    if not topology:
        return str(smp)
    if re.match(r"^\d+(,|$)", topology):
        return topology
    return f"{smp},{topology}"


# The CPU count and APIC ids a machine type takes: QEMU's i440fx "pc" (its
# default) stops at 255 CPUs; APIC ids past 254 (more CPUs, or a topology
# whose ids leave gaps) need x2APIC, which under TCG needs a q35 and QEMU
# X2APIC_TCG_QEMU or later.
PC_MAX_CPUS = 255
DEFAULT_MACHINE = "pc"              # what QEMU gives without -machine
XAPIC_MAX_ID = 254
PC_TYPES = ("pc", "isapc")          # and every versioned pc-i440fx-X.Y
X2APIC_MACHINE = "q35"
_ASK = object()                     # choose_machine: ask the QEMU on PATH


def _bits(n):
    """Bits of an APIC id that QEMU gives a topology level of n members."""
    return max(0, (int(n) - 1).bit_length())


def smp_shape(smp, topology=""):
    """(CPUs, highest APIC id) that -smp smp_arg(smp, topology) asks for.

    QEMU's rules, where a level is left out: threads, dies 1; cores, or
    else sockets, take the rest (cores first, as QEMU 6.2 and later); the
    CPU count is maxcpus= when given. APIC ids give each level a power of
    two (sockets=3,cores=65: ids reach 320 with 195 CPUs)."""
    parts = smp_arg(smp, topology).split(",")
    cpus = int(parts[0]) if parts[0].isdigit() else 0
    levels = {}
    for part in parts[1 if parts[0].isdigit() else 0:]:
        key, _, value = part.partition("=")
        if not value.isdigit() or int(value) < 1:
            raise QemuError(f"-smp {smp_arg(smp, topology)}: '{part}' is not key=count")
        levels[key.strip()] = int(value)
    cpus = levels.get("cpus", cpus)
    fixed = 1
    for key in ("sockets", "dies", "clusters", "modules", "cores", "threads"):
        fixed *= levels.get(key, 1)
    total = max(levels.get("maxcpus", 0), cpus, fixed)
    threads, dies = levels.get("threads", 1), levels.get("dies", 1)
    if "cores" in levels:
        sockets = levels.get("sockets", -(-total // (levels["cores"] * threads * dies)))
        cores = levels["cores"]
    else:
        sockets = levels.get("sockets", 1)
        cores = -(-total // (sockets * threads * dies))
    top = ((sockets - 1) << (_bits(dies) + _bits(cores) + _bits(threads))) | \
        ((dies - 1) << (_bits(cores) + _bits(threads))) | ((cores - 1) << _bits(threads)) | \
        (threads - 1)
    return total, top


def choose_machine(smp, topology="", machine=None, qemu_version=_ASK, accel="tcg",
                   qemu=QEMU_BIN):
    """(the -machine value, why in one line) for smp CPUs in topology.

    machine: what the user asked for (None: choose). Past 255 CPUs or APIC
    id 254 the machine must do x2APIC: q35 is chosen, and under TCG the
    QEMU (qemu_version, (major, minor, "X.Y.Z") or None; asked of `qemu`
    when not given) must be X2APIC_TCG_QEMU or later. A request that cannot
    take the CPUs (pc past 255) or a QEMU without x2APIC raises QemuError
    saying what would work."""
    cpus, top = smp_shape(smp, topology)
    x2 = top > XAPIC_MAX_ID
    asked = (machine or "").strip()
    kind = asked.split(",")[0]
    what = f"{cpus} CPUs" + (f" (APIC ids up to {top})" if x2 and cpus <= XAPIC_MAX_ID + 1 else "")
    if kind in PC_TYPES or kind.startswith("pc-i440fx"):
        if cpus > PC_MAX_CPUS:
            raise QemuError(f"machine {kind} (i440fx) takes at most {PC_MAX_CPUS} CPUs, not "
                            f"{cpus}: give machine {X2APIC_MACHINE}, or none and one is chosen")
    if not x2:
        if asked:
            return asked, f"machine {asked} (asked); {what} in xAPIC mode"
        return DEFAULT_MACHINE, f"machine pc (QEMU's default i440fx): {what} fit xAPIC"
    found = ""
    if accel != "kvm":
        if qemu_version is _ASK:
            qemu_version = version(qemu)
        want = ".".join(map(str, X2APIC_TCG_QEMU))
        if qemu_version is not None and tuple(qemu_version[:2]) < X2APIC_TCG_QEMU:
            raise QemuError(f"{what} need x2APIC, which QEMU {qemu_version[2]} does not emulate "
                            f"under TCG: QEMU {want} or later does (scripts/install-deps --test "
                            "installs it where the distribution offers it)")
        found = f", which QEMU {qemu_version[2]} emulates under TCG" if qemu_version \
            else f" (QEMU's version unknown: {want} or later emulates it under TCG)"
    if asked:
        return asked, f"machine {asked} (asked); {what} need x2APIC{found}"
    return X2APIC_MACHINE, (f"machine {X2APIC_MACHINE}: {what} need x2APIC (i440fx pc takes "
                            f"{PC_MAX_CPUS} CPUs, APIC ids to {XAPIC_MAX_ID}){found}")


def oem_string(cmdline):
    """The -smbios value carrying the kernel command line to grub.cfg."""
    if cmdline is None:
        return f"type=11,value={OEM_NO_CMDLINE}"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in cmdline):
        raise QemuError("kernel command line must not contain control "
                        "characters")
    # QEMU option syntax: a literal comma is written twice.
    return "type=11,value=" + (OEM_PREFIX + cmdline).replace(",", ",,")


def serial_args(serial, log=None, uart="isa"):
    """-chardev/-serial (and, for stdio, -mon) arguments for the console
    UART: COM1; with uart="pci" a pci-serial card (and no COM port); with
    "com2" COM2 alone; with "pci2x" port 1 of a two-port card."""
    if uart not in UARTS:
        raise QemuError(f"unknown uart '{uart}' (want {', '.join(UARTS)})")
    argv = _serial_backend(serial, log)
    if uart == "isa" or "-serial" not in argv:
        return argv
    at = argv.index("-serial")
    chardev = argv[at + 1].split(":", 1)[1] if ":" in argv[at + 1] else None
    if uart == "com2":                   # COM1 present but unconnected would answer
        argv[at:at + 2] = ["-serial", "none", "-serial", argv[at + 1]]
        return argv
    argv[at + 1] = "none"
    if chardev and uart == "pci":
        argv += ["-device", f"pci-serial,chardev={chardev}"]
    elif chardev:                        # pci2x: port 0 goes nowhere; at 00:1c.0
        argv += ["-chardev", "null,id=port0", "-device",
                 f"pci-serial-2x,chardev1=port0,chardev2={chardev},addr=1c"]
    return argv


def _serial_backend(serial, log=None):
    logopt = f",logfile={qarg(log)},logappend=off" if log else ""
    if serial == "stdio":
        # mux: monitor and serial share the terminal (Ctrl-A c switches,
        # Ctrl-A X quits); signal=off hands Ctrl-C to the guest.
        return ["-chardev", f"stdio,id=s0,mux=on,signal=off{logopt}",
                "-serial", "chardev:s0", "-mon", "chardev=s0"]
    if serial.startswith("unix:"):
        path = qarg(serial[len("unix:"):])
        return ["-chardev",
                f"socket,id=s0,path={path},server=on,wait=on{logopt}",
                "-serial", "chardev:s0"]
    if serial == "pty":
        return ["-chardev", f"pty,id=s0{logopt}", "-serial", "chardev:s0"]
    if serial.startswith("file:"):
        return ["-chardev", f"file,id=s0,path={qarg(serial[5:])}",
                "-serial", "chardev:s0"]
    if serial == "none":
        return ["-serial", "none"]
    raise QemuError(f"unknown serial backend '{serial}' (want stdio, "
                    "unix:PATH, pty, file:PATH or none)")


def firmware_args(fw):
    """-bios / -drive if=pflash arguments for the chosen firmware."""
    if fw == "bios":
        return []  # QEMU's default firmware is SeaBIOS
    kind, code, vars_ = find_ovmf()
    if kind == "unified":
        return ["-bios", code]
    return ["-drive", f"if=pflash,format=raw,readonly=on,file={qarg(code)}",
            "-drive", f"if=pflash,format=raw,snapshot=on,file={qarg(vars_)}"]


# An Intel ICH9's EHCI at 00:1d.7 with its three UHCI companions (two
# ports each), as on a 2008-2012 PC without xHCI.
ICH9_EHCI = ["-device", "ich9-usb-ehci1,id=ehci,addr=1d.7,multifunction=on",
             "-device", "ich9-usb-uhci1,masterbus=ehci.0,firstport=0,addr=1d.0,multifunction=on",
             "-device", "ich9-usb-uhci2,masterbus=ehci.0,firstport=2,addr=1d.1,multifunction=on",
             "-device", "ich9-usb-uhci3,masterbus=ehci.0,firstport=4,addr=1d.2,multifunction=on"]


def media_args(iso, media, writable=False):
    """The ISO as a CD-ROM, or as a USB stick on an xHCI controller
    ("usb") or on an ICH9 EHCI with its UHCI companions ("usb-ehci")."""
    iso = qarg(iso)
    ro = "off" if writable else "on"
    if media == "cd":
        return ["-drive", f"media=cdrom,format=raw,readonly=on,file={iso}",
                "-boot", "order=d"]
    # bootindex makes both SeaBIOS and OVMF try the stick first.
    hc = ICH9_EHCI if media == "usb-ehci" else ["-device", "qemu-xhci,id=xhci"]
    bus = "ehci.0" if media == "usb-ehci" else "xhci.0"
    return ["-drive", f"if=none,id=stick,format=raw,readonly={ro},file={iso}",
            *hc, "-device", f"usb-storage,bus={bus},drive=stick,bootindex=0"]


def accel_args(accel):
    """-accel/-cpu for a resolved accelerator ("kvm" or "tcg")."""
    if accel == "kvm":
        return ["-accel", "kvm", "-cpu", "host"]
    if accel == "tcg":
        # thread=multi: each vCPU on its own host thread (MTTCG), so APs
        # really run concurrently and races show up as on hardware.
        return ["-accel", "tcg,thread=multi", "-cpu", TCG_CPU]
    raise QemuError(f"accelerator '{accel}' is not resolved (kvm or tcg)")


def validate(opts):
    """Raise QemuError for options QEMU would reject less clearly."""
    if opts.fw not in FIRMWARES:
        raise QemuError(f"unknown firmware '{opts.fw}' (want bios or uefi)")
    if opts.media not in MEDIA:
        raise QemuError(f"unknown media '{opts.media}' (want cd, usb or usb-ehci)")
    if opts.accel not in ACCELS:
        raise QemuError(f"unknown accelerator '{opts.accel}' "
                        "(want auto, kvm or tcg)")
    if int(opts.smp) < 1:
        raise QemuError(f"--smp must be at least 1, not {opts.smp}")
    if opts.nic is not None and opts.nic not in NICS:
        raise QemuError(f"unknown NIC '{opts.nic}' (want {', '.join(NICS)})")
    if opts.mac is not None and parse_mac(opts.mac) != opts.mac:
        raise QemuError(f"'{opts.mac}' is not a unicast MAC written 52:54:00:ab:cd:ef")
    if opts.netboot is not None:
        validate_netboot(opts.netboot, opts.fw)
        if opts.nic == "usb":
            raise QemuError("a network boot needs a PCI NIC the firmware boots from "
                            "(e1000, e1000e or virtio), not usb")
    elif not os.path.isfile(opts.iso):
        raise QemuError(f"ISO '{opts.iso}' not found (run make first)")


def validate_netboot(root, fw):
    """Raise QemuError unless `root` is a TFTP root holding fw's GRUB image."""
    if not os.path.isdir(root):
        raise QemuError(f"TFTP root '{root}' not found (run make netboot)")
    boot_file = os.path.join(root, NETBOOT_FILES[fw])
    if not os.path.isfile(boot_file):
        raise QemuError(f"TFTP root '{root}' has no {NETBOOT_FILES[fw]} for {fw} "
                        "(run make netboot)")


def build_argv(opts):
    """The full QEMU argv for opts (accel must be "kvm" or "tcg")."""
    validate(opts)
    argv = [opts.qemu, "-name", "baretrace", "-nodefaults", "-no-user-config"]
    if opts.machine:
        argv += ["-machine", opts.machine]
    argv += accel_args(opts.accel)
    argv += ["-smp", smp_arg(opts.smp, opts.topology), "-m", str(opts.mem)]
    argv += firmware_args(opts.fw)
    if opts.netboot is None:
        argv += media_args(opts.iso, opts.media, opts.stick_writable)
    argv += ["-smbios", oem_string(opts.cmdline)]
    argv += serial_args(opts.serial, opts.serial_log, opts.uart)
    if opts.qmp:
        argv += ["-qmp", f"unix:{qarg(opts.qmp)},server=on,wait=off"]
    # -nodefaults dropped the VGA card (and the NIC, so no PXE detours);
    # keep a VGA like every PC has, with or without a window on it.
    argv += ["-vga", "std"] + ([] if opts.display else ["-display", "none"])
    argv += ["-no-reboot"] if opts.no_reboot else []
    argv += ["-device", f"isa-debug-exit,iobase={DEBUG_EXIT_PORT:#x},iosize=0x04"]
    if opts.netboot is not None:
        argv += netboot_args(opts)
    else:
        argv += nic_args(opts.nic, opts.netdev, opts.mac)
    return argv + list(opts.extra)


def nic_args(nic, netdev="user", mac=None, netdev_opts="", boot=False):
    """-netdev/-device arguments for a NIC of NICS (nothing for None);
    netdev_opts: more -netdev options, already quoted; boot: the firmware
    boots from it first."""
    if nic is None:
        return []
    devices = NICS[nic]
    argv = ["-netdev", f"{netdev.split(',')[0]},id={NETDEV_ID}" +
            "".join("," + o for o in netdev.split(",")[1:]) + netdev_opts]
    for d in devices[:-1]:
        argv += ["-device", d]
    nic_opts = (f",mac={mac}" if mac else "") + (",bootindex=0" if boot else "")
    return argv + ["-device", f"{devices[-1]},netdev={NETDEV_ID}{nic_opts}"]


def netboot_args(opts):
    """The NIC the machine boots from: user-mode networking whose DHCP
    names the firmware's GRUB image and whose TFTP server serves the root
    (another netdev, a tap: the LAN's server, scripts/netboot, answers)."""
    root = os.path.abspath(opts.netboot)
    extra = f",tftp={qarg(root)},bootfile={qarg(NETBOOT_FILES[opts.fw])}"
    if not opts.netdev.startswith("user"):
        extra = ""                      # a tap on a LAN: its DHCP and TFTP server answer
    return nic_args(opts.nic or NETBOOT_NIC, opts.netdev, opts.mac, extra, boot=True)


def parse_mac(text):
    """'52:54:00:AB:CD:EF', '52-54-00-ab-cd-ef' or '525400abcdef' ->
    '52:54:00:ab:cd:ef'; None when it is not a unicast MAC."""
    digits = re.sub(r"[:-]", "", text.strip().lower())
    if not re.fullmatch(r"[0-9a-f]{12}", digits) or int(digits[:2], 16) & 1:
        return None
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


def distinct_mac():
    """A MAC of QEMU's prefix that another QEMU started now is unlikely to
    have (random low three bytes, never QEMU's default 12:34:56)."""
    while True:
        tail = os.urandom(3)
        if tail != b"\x12\x34\x56":
            return QEMU_MAC_PREFIX + "".join(f":{b:02x}" for b in tail)


def probe_disk(path):
    """Write the KVM probe boot sector (mov dx,0xf4; mov al,CODE; out dx,al;
    cli; hlt) to path."""
    code = bytes([0xBA, DEBUG_EXIT_PORT, 0x00, 0xB0, PROBE_CODE, 0xEE,
                  0xFA, 0xF4])
    sector = code + bytes(510 - len(code)) + b"\x55\xaa"
    with open(path, "wb") as f:
        f.write(sector)


def _probe_run(argv, timeout, mark=None, log=None):
    """Run a probe QEMU; True when it exits with PROBE_EXIT (or, with mark,
    when log shows mark) before timeout. Always leaves no process behind."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return mark is None and proc.returncode == PROBE_EXIT
            if mark is not None and os.path.exists(log):
                with open(log, "rb") as f:
                    if mark in f.read():
                        return True
            time.sleep(0.05)
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def kvm_usable(fw="bios", smp=1, qemu=QEMU_BIN):
    """(ok, reason): whether `-accel kvm -cpu host` really boots here.

    /dev/kvm existing is not enough: under nested virtualisation -cpu host
    can abort at start, OVMF can die with "emulation failure" and SeaBIOS
    can take minutes. So boot a probe sector (and, for UEFI, OVMF up to its
    boot manager) and insist on it finishing quickly."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm missing or not accessible"
    base = [qemu, "-nodefaults", "-no-user-config", "-display", "none",
            "-accel", "kvm", "-cpu", "host", "-smp", str(smp), "-m", "64M",
            "-no-reboot", "-device",
            f"isa-debug-exit,iobase={DEBUG_EXIT_PORT:#x},iosize=0x04"]
    with tempfile.TemporaryDirectory(prefix="bt-kvm-") as tmp:
        disk = os.path.join(tmp, "probe.img")
        probe_disk(disk)
        argv = base + ["-drive", f"format=raw,file={qarg(disk)},snapshot=on"]
        if not _probe_run(argv, PROBE_TIMEOUT_S):
            return False, "KVM probe (SeaBIOS boot sector) failed or too slow"
        if fw == "uefi":
            log = os.path.join(tmp, "ovmf.log")
            argv = base + firmware_args("uefi") + serial_args(f"file:{log}")
            if not _probe_run(argv, PROBE_UEFI_TIMEOUT_S, PROBE_UEFI_MARK,
                              log):
                return False, "KVM probe (OVMF) failed or too slow"
    return True, "KVM probe booted"


def resolve_accel(accel, fw="bios", smp=1, qemu=QEMU_BIN):
    """(accel, reason) with "auto" turned into "kvm" or "tcg"."""
    if accel != "auto":
        return accel, "requested"
    ok, reason = kvm_usable(fw, smp, qemu)
    return ("kvm" if ok else "tcg"), reason


def check_qemu(qemu=QEMU_BIN):
    """Raise QemuError naming the package when QEMU is not installed."""
    if shutil.which(qemu) is None:
        raise QemuError(f"{qemu} not found; install the Debian package "
                        "'qemu-system-x86' (scripts/install-deps --run)")


def die_with_parent(argv):
    """argv wrapped so QEMU is killed when the process (thread) that starts
    it dies, however it dies: a killed test worker or launcher must never
    leave a guest running. setpriv (util-linux, always on Debian) sets
    PR_SET_PDEATHSIG and execs QEMU, so the Popen pid is QEMU's own."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return argv
    return [setpriv, "--pdeathsig", "KILL", "--"] + argv


def launch(opts, **popen_kwargs):
    """Resolve opts.accel, then start QEMU; returns the Popen.

    popen_kwargs go to subprocess.Popen (stdin/stdout/stderr...). The
    resolved options are on the returned object as .bt_opts and the argv
    as .bt_argv, for logs and error messages; the machine chosen for the
    CPUs (choose_machine), and why, as .bt_machine_why."""
    check_qemu(opts.qemu)
    validate(opts)
    accel, _ = resolve_accel(opts.accel, opts.fw, opts.smp, opts.qemu)
    machine, why = choose_machine(opts.smp, opts.topology, opts.machine, accel=accel,
                                  qemu=opts.qemu)
    resolved = dataclasses.replace(opts, accel=accel, machine=machine)
    argv = build_argv(resolved)
    proc = subprocess.Popen(die_with_parent(argv), **popen_kwargs)
    proc.bt_opts = resolved
    proc.bt_argv = argv
    proc.bt_machine_why = why
    return proc


def exit_status_meaning(code):
    """Describe a QEMU exit status in words (for run-qemu and tests)."""
    if code == 0:
        return "QEMU quit"
    if code == 1:
        # QEMU's own errors also exit 1, the same as a guest writing 0.
        return "QEMU error, or guest exited via port " \
               f"{DEBUG_EXIT_PORT:#x} with value 0"
    if code > 0 and code & 1:
        return f"guest exited via port {DEBUG_EXIT_PORT:#x} with value " \
               f"{code >> 1}"
    if code < 0:
        return f"QEMU killed by signal {-code}"
    return f"QEMU failed (status {code})"


def connect_unix(path, proc, timeout=30.0):
    """Connect to a unix socket QEMU serves, waiting for QEMU to create it.

    Fails with QemuError if QEMU exits first or the socket never appears:
    the caller then shows QEMU's own error rather than hanging."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise QemuError(f"QEMU exited (status {proc.returncode}) before "
                            f"serving {path}")
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
        if time.monotonic() > deadline:
            raise QemuError(f"QEMU did not serve {path} within "
                            f"{timeout:.0f} s")
        time.sleep(0.02)


class Qmp:
    """Minimal QMP client: enough to send keys, query and quit."""

    def __init__(self, path, proc, timeout=10.0):
        self.sock = connect_unix(path, proc, timeout)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rwb")
        self._read_reply(greeting=True)
        self.command("qmp_capabilities")

    def _read_reply(self, greeting=False):
        """Next greeting/return/error, skipping asynchronous events."""
        while True:
            line = self.file.readline()
            if not line:
                raise QemuError("QMP connection closed")
            msg = json.loads(line)
            if greeting and "QMP" in msg:
                return msg
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                err = msg["error"]
                raise QemuError(f"QMP: {err.get('class')}: {err.get('desc')}")

    def command(self, execute, /, **arguments):
        """Run one QMP command and return its "return" value (arguments
        may be called name=, as set_link's is)."""
        msg = {"execute": execute}
        if arguments:
            msg["arguments"] = arguments
        self.file.write(json.dumps(msg).encode() + b"\n")
        self.file.flush()
        return self._read_reply()

    def send_key(self, *qcodes, hold_ms=None):
        """Press (and release) the keys named by QEMU qcodes together,
        e.g. send_key("d") or send_key("ctrl", "c")."""
        args = {"keys": [{"type": "qcode", "data": q} for q in qcodes]}
        if hold_ms is not None:
            args["hold-time"] = hold_ms
        return self.command("send-key", **args)

    def close(self):
        for thing in (self.file, self.sock):
            try:
                thing.close()
            except OSError:
                pass
