"""capture --qemu: boot the ISO in a headless QEMU and hand back its serial port.

The QEMU command line comes from qemu.py (shared with make run and the
boot tests).  COM1 is a unix socket server that QEMU opens with wait=on:
the guest does not start until capture is connected, so not one byte of
firmware or kernel output is missed.  QEMU runs in its own session, so a
Ctrl-C reaches capture only, which then stops QEMU itself and keeps the
log valid.
"""

import argparse
import os
import shutil
import subprocess
import tempfile

from . import launch as qemu
from ..capture.serialport import Port

QemuError = qemu.QemuError
CONNECT_TIMEOUT_S = 15.0     # QEMU start-up, incl. the KVM probe
STOP_GRACE_S = 3.0
DEFAULT_SMP = 16
QEMU_OPTIONS = ('fw', 'media', 'smp', 'topology', 'cmdline', 'iso', 'mem', 'accel', 'netboot')
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


class QemuSource:
    """A running QEMU whose COM1 is `port`."""

    def __init__(self, proc, port, tmpdir):
        self.proc, self.port, self.tmpdir = proc, port, tmpdir

    def exit_reason(self):
        """(why QEMU went away in words, whether it failed); waits for it.

        Status 1 is both QEMU's own error and a guest writing 0 to the
        exit port: QEMU says something on stderr only in the first case."""
        try:
            code = self.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            return 'QEMU closed its serial port', False
        tail = _last_line(os.path.join(self.tmpdir, 'qemu.out'))
        if code < 0 or (code > 0 and not code & 1) or (code == 1 and tail):
            return f'QEMU failed: {tail or qemu.exit_status_meaning(code)}', True
        return f'QEMU exited ({qemu.exit_status_meaning(code)})', False

    def stop(self):
        if self.port is not None:
            self.port.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def _last_line(path):
    try:
        with open(path, 'rb') as f:
            lines = f.read().decode('utf-8', 'replace').strip().splitlines()
    except OSError:
        return ''
    return lines[-1].strip() if lines else ''


def _options(args, serial, nic=None, cmdline=None, mac=None):
    return qemu.Options(
        iso=args.iso or DEFAULT_ISO, fw=args.fw or 'bios', media=args.media or 'cd',
        smp=args.smp or DEFAULT_SMP, topology=args.topology or '',
        mem=args.mem or '512M', accel=args.accel or 'auto',
        cmdline=args.cmdline if cmdline is None else cmdline, serial=serial, nic=nic,
        mac=mac, netboot=args.netboot)


def start_net(args, nic, port, mac=None):
    """Launch QEMU with no serial port and `nic` (with MAC `mac`) on
    user-mode networking, the kernel told to send to the host's UDP `port`
    (QEMU's 10.0.2.2 is this host's 127.0.0.1); returns a QemuSource
    without a port."""
    tmpdir = tempfile.mkdtemp(prefix='bt-capture-')
    out_path = os.path.join(tmpdir, 'qemu.out')
    cmdline = ' '.join(filter(None, [args.cmdline, f'net.to=10.0.2.2:{port}']))
    try:
        with open(out_path, 'wb') as out:
            proc = qemu.launch(_options(args, 'none', nic, cmdline, mac),
                               stdin=subprocess.DEVNULL,
                               stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    except (QemuError, OSError) as e:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise QemuError(str(e)) from None
    return QemuSource(proc, None, tmpdir)


def start(args):
    """Launch QEMU and connect to its serial socket; returns a QemuSource."""
    tmpdir = tempfile.mkdtemp(prefix='bt-capture-')
    sock_path = os.path.join(tmpdir, 'serial')
    out_path = os.path.join(tmpdir, 'qemu.out')
    try:
        with open(out_path, 'wb') as out:
            proc = qemu.launch(_options(args, f'unix:{sock_path}'), stdin=subprocess.DEVNULL,
                               stdout=out, stderr=subprocess.STDOUT,
                               start_new_session=True)
    except (QemuError, OSError) as e:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise QemuError(str(e)) from None
    try:
        sock = qemu.connect_unix(sock_path, proc, CONNECT_TIMEOUT_S)
    except QemuError as e:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        tail = _last_line(out_path)
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise QemuError(f'QEMU did not start: {tail or e}') from None
    return QemuSource(proc, Port.from_socket(sock, sock_path), tmpdir)
