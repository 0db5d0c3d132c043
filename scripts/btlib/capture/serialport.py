"""Serial ports through termios: USB-serial adapters, ttyS, ptys, QEMU sockets.

Only the standard library: the port is opened non-blocking, locked (flock,
the same lock pyserial and modern minicom/picocom take, plus a check of
UUCP-style /var/lock/LCK..name files), put in raw 8N1 mode at the chosen
baud rate with no flow control, and read with select().  A QEMU chardev
socket (unix domain) gives the same Port interface.

Every failure is a PortError with a one-line message meant for the user.
"""

import errno
import fcntl
import os
import select
import termios

READ_SIZE = 65536
LOCK_DIRS = ('/run/lock', '/var/lock')
BAUD_RATES = tuple(sorted(int(name[1:]) for name in dir(termios)
                          if name[0] == 'B' and name[1:].isdigit() and int(name[1:]) > 0))


class PortError(Exception):
    """A port could not be opened, configured, read or written."""


class PortClosed(Exception):
    """The other end went away (adapter unplugged, QEMU exited)."""


def _uucp_lock_owner(path):
    """PID of a live process holding a LCK..name file for `path`, or None."""
    base = os.path.basename(path)
    for d in LOCK_DIRS:
        try:
            with open(os.path.join(d, f'LCK..{base}'), encoding='ascii', errors='replace') as f:
                text = f.read(64)
        except OSError:
            continue
        try:
            pid = int(text.split()[0]) if text.strip() else 0
        except ValueError:
            continue
        if pid > 0 and pid != os.getpid():
            try:
                os.kill(pid, 0)
                return pid
            except ProcessLookupError:
                continue
            except PermissionError:
                return pid
    return None


def _open_error(path, e):
    if e.errno == errno.ENOENT:
        return PortError(f'{path}: no such serial port (is the adapter plugged in? see "ls /dev/ttyUSB* /dev/ttyACM*")')
    if e.errno == errno.EACCES:
        return PortError(f'{path}: permission denied (join the "dialout" group: '
                         f'sudo usermod -aG dialout $USER, then log in again)')
    if e.errno == errno.EBUSY:
        return PortError(f'{path}: port busy: another program has it open')
    return PortError(f'{path}: cannot open: {e.strerror}')


def _make_raw(fd, baud):
    """8N1, raw, no echo, no flow control, reads return at once (VMIN=VTIME=0)."""
    speed = getattr(termios, f'B{baud}')
    iflag, oflag, cflag, lflag, _, _, cc = termios.tcgetattr(fd)
    iflag &= ~(termios.IGNBRK | termios.BRKINT | termios.PARMRK | termios.ISTRIP
               | termios.INLCR | termios.IGNCR | termios.ICRNL | termios.IXON
               | termios.IXOFF | termios.IXANY)
    oflag &= ~termios.OPOST
    lflag &= ~(termios.ECHO | termios.ECHONL | termios.ICANON | termios.ISIG | termios.IEXTEN)
    cflag &= ~(termios.CSIZE | termios.PARENB | termios.CSTOPB | getattr(termios, 'CRTSCTS', 0))
    cflag |= termios.CS8 | termios.CREAD | termios.CLOCAL
    cc[termios.VMIN] = 0
    cc[termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, [iflag, oflag, cflag, lflag, speed, speed, cc])


class Port:
    """A byte stream to the traced machine's console."""

    def __init__(self, fd, name, sock=None):
        self.fd, self.name, self._sock = fd, name, sock

    @classmethod
    def open_tty(cls, path, baud):
        """Open a terminal device (ttyUSB0, ttyS0, a pty) in raw mode."""
        if baud not in BAUD_RATES:
            raise PortError(f'unsupported baud rate {baud} (try 115200)')
        owner = _uucp_lock_owner(path)
        if owner:
            raise PortError(f'{path}: port busy: locked by process {owner} (LCK..{os.path.basename(path)})')
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as e:
            raise _open_error(path, e) from None
        try:
            if not os.isatty(fd):
                raise PortError(f'{path}: not a serial port (not a terminal device)')
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise PortError(f'{path}: port busy: another program '
                                f'(minicom, screen, another capture) has it open') from None
            try:
                _make_raw(fd, baud)
            except termios.error as e:
                raise PortError(f'{path}: cannot configure the port: {e.args[-1]}') from None
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path)

    @classmethod
    def from_socket(cls, sock, name):
        """A connected stream socket (QEMU's `-chardev socket` COM1) as a Port."""
        sock.setblocking(False)
        return cls(sock.fileno(), name, sock)

    def read(self, timeout, size=None):
        """Bytes available within `timeout` seconds (b'' if none), at most
        `size` (default READ_SIZE).

        Raises PortClosed when the other end has gone away."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return b''
        try:
            data = os.read(self.fd, size or READ_SIZE)
        except BlockingIOError:
            return b''
        except OSError as e:
            if e.errno == errno.EIO:    # pty hang-up, USB adapter unplugged
                raise PortClosed(self.name) from None
            raise PortError(f'{self.name}: read failed: {e.strerror}') from None
        if not data:
            raise PortClosed(self.name)
        return data

    def write(self, data):
        """Write all of `data` (blocking politely on a full buffer)."""
        view = memoryview(data)
        while view:
            select.select([], [self.fd], [], 1.0)
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                continue
            except OSError as e:
                raise PortError(f'{self.name}: write failed: {e.strerror}') from None

    def close(self):
        if self._sock is not None:
            self._sock.close()
        elif self.fd is not None:
            os.close(self.fd)
        self.fd = None
