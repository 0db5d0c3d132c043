"""capture --qemu: its QEMU options, and QEMU booted as capture's source.

The QEMU is a session.Session (shared with the boot tests and bench): COM1
is a unix socket QEMU serves with wait=on, so not one byte of firmware or
kernel output is missed, and the session reads like a serial port
(read(), write()). QEMU runs in its own session, so a Ctrl-C reaches
capture only, which then stops QEMU itself and keeps the log valid.
"""

import argparse
import os

from . import launch as qemu
from .session import Session

QemuError = qemu.QemuError
CONNECT_TIMEOUT_S = 15.0     # QEMU start-up, incl. the KVM probe
DEFAULT_SMP = 16
QEMU_OPTIONS = ('fw', 'media', 'smp', 'topology', 'machine', 'cmdline', 'iso', 'mem', 'accel',
                'netboot')
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))))             # scripts/btlib/qemu/ -> the tree
DEFAULT_ISO = os.path.join(REPO_ROOT, 'build', 'baretrace.iso')
DEFAULT_NETBOOT = os.path.join(REPO_ROOT, 'build', 'netboot')


def _smp(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f'{text!r} is not a CPU count (1 or more)')
    return value


def add_arguments(parser):
    g = parser.add_argument_group('QEMU (with --qemu)')
    g.add_argument('--fw', choices=qemu.FIRMWARES, help='firmware (default bios)')
    g.add_argument('--media', choices=qemu.MEDIA, help='boot medium (default cd)')
    g.add_argument('--smp', type=_smp, help=f'CPU count (default {DEFAULT_SMP})')
    g.add_argument('--topology', help='extra -smp settings, e.g. sockets=2,cores=6')
    g.add_argument('--machine', help='QEMU machine type, e.g. q35 (default: pc, or q35 where '
                                     'the CPUs need x2APIC: more than 255, or APIC ids past 254)')
    g.add_argument('--cmdline', help='kernel command line, e.g. "maxcpus=4"')
    g.add_argument('--iso', help='image to boot (default build/baretrace.iso)')
    g.add_argument('--mem', help='guest memory (default 512M)')
    g.add_argument('--accel', choices=qemu.ACCELS, help='accelerator (default auto)')
    g.add_argument('--netboot', nargs='?', const=DEFAULT_NETBOOT, metavar='DIR',
                   help='boot over the network from this TFTP root (default build/netboot, '
                        'make netboot) instead of the ISO')


def reject_qemu_options(parser, args):
    """QEMU options make no sense with --port: say so instead of ignoring them."""
    given = [f'--{name}' for name in QEMU_OPTIONS if getattr(args, name) is not None]
    if given:
        parser.error(f'{", ".join(given)} only apply with --qemu')


def _options(args, serial, nic=None, cmdline=None, mac=None):
    return qemu.Options(
        iso=args.iso or DEFAULT_ISO, fw=args.fw or 'bios', media=args.media or 'cd',
        smp=args.smp or DEFAULT_SMP, topology=args.topology or '', machine=args.machine,
        mem=args.mem or '512M', accel=args.accel or 'auto',
        cmdline=args.cmdline if cmdline is None else cmdline, serial=serial, nic=nic,
        mac=mac, netboot=args.netboot)


def start_net(args, nic, port, mac=None):
    """Launch QEMU with no serial port and `nic` (with MAC `mac`) on
    user-mode networking, the kernel told to send to the host's UDP `port`
    (QEMU's 10.0.2.2 is this host's 127.0.0.1); returns the Session."""
    cmdline = ' '.join(filter(None, [args.cmdline, f'net.to=10.0.2.2:{port}']))
    return _started(_options(args, 'none', nic, cmdline, mac))


def start(args):
    """Launch QEMU and connect to its serial socket; returns the Session,
    which capture reads as its port."""
    return _started(_options(args, 'serial'))


def _started(opts):
    source = Session(opts, name='capture', keep=False, connect_timeout=CONNECT_TIMEOUT_S,
                     own_session=True)
    source.start()
    return source
