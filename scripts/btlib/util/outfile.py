"""Where the host tools write their outputs: never onto an input, and never
a truncated file that looks whole.

    outfile.refuse_input(out, [log])          # raises Refused: it is the log
    with outfile.replacing(out) as tmp:       # writes go to tmp, in out's folder
        write(tmp)                            # renamed onto out when complete
    with outfile.opened(out, 'wb') as f:      # the same, for one open file
        f.write(...)

An output is the same file as an input when their device and inode match,
whatever names lead there (a symlink, a hard link, /dev/fd/N); an output
that is a symlink is written where it points. A regular file (or a new
name) is written to a temporary name in its own folder and renamed onto
its name only when it is complete: a full disk, Ctrl-C or any error
leaves the old file (or nothing) and removes the temporary one. A
device, a FIFO or a terminal is written in place (/dev/null, a pipe).
Every failure is an Error with a one-line message.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile

TEMP_PREFIX = '.bt-partial-'     # the temporary names, hidden, in the output's folder


class Error(Exception):
    """An output that cannot be written; str() is the one-line reason."""


def _identity(path: str):
    """(device, inode) of what path names (links followed), or None."""
    try:
        st = os.fstat(0) if path == '-' else os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def refuse_input(out: str, inputs) -> None:
    """Raise Error when out names the same file as one of inputs ('-':
    stdin), through any link (coreutils' cp: "are the same file"), or is
    a folder holding one of them (a folder output replaces the folder
    whole: ctf, raw)."""
    if out in (None, '-'):
        return
    mine = _identity(out)
    if mine is None:
        return
    ids = {_identity(src): src for src in inputs}
    ids.pop(None, None)
    src = ids.get(mine)
    if src is not None:
        raise Error(f'{out} is the input {"stdin" if src == "-" else src} itself (the same '
                    f'file): refusing to overwrite it; give another output name')
    for name in _entries(out):
        src = ids.get(_identity(os.path.join(out, name)))
        if src is not None:
            raise Error(f'{out} holds the input {"stdin" if src == "-" else src} (as {name}): '
                        f'writing the folder would delete it; give another output folder')


def _entries(path: str) -> list[str]:
    """The names in path when it is a folder (else none)."""
    if not os.path.isdir(path):
        return []
    try:
        return os.listdir(path)
    except OSError:
        return []


def refuse_same(outputs) -> None:
    """Raise Error when two of one run's outputs (None and '-' aside)
    name the same file, through any link, or the same new name."""
    seen = {}
    for out in outputs:
        if out in (None, '-'):
            continue
        key = _identity(out) or os.path.realpath(out)
        if key in seen:
            raise Error(f'{out} and {seen[key]} are the same file: one output would '
                        f'replace the other; give two names')
        seen[key] = out


def _in_place(path: str) -> bool:
    """True for an existing output that is no regular file or folder (a
    device, FIFO, socket, terminal): written directly, never renamed onto."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def why(e: OSError) -> str:
    """An OSError's reason in words (no errno number, no traceback)."""
    return e.strerror or str(e)


@contextlib.contextmanager
def replacing(path: str, directory: bool = False, suffix: str = ''):
    """Yields a temporary path in path's folder (a new empty folder when
    `directory`; ending in `suffix`, for writers that go by the extension)
    and, when the block ends without an exception, renames it onto path
    (what a link at path points to); else removes it. A device or FIFO
    path is yielded itself. OSError becomes Error."""
    if not directory and _in_place(path):
        try:
            yield path
        except OSError as e:
            raise Error(f'cannot write {path}: {why(e)}') from None
        return
    final = os.path.realpath(path)
    folder = os.path.dirname(final) or '.'
    try:
        if directory:
            tmp = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=folder)
            os.chmod(tmp, 0o777 & ~_umask())
        else:
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=suffix, dir=folder)
            os.close(fd)
    except OSError as e:
        raise Error(f'cannot write {path}: {why(e)}') from None
    try:
        yield tmp
        if directory and os.path.isdir(final):
            _swap_folder(tmp, final)
        else:
            if not directory:
                _keep_mode(tmp, final)
            os.replace(tmp, final)
    except OSError as e:
        _remove(tmp)
        raise Error(f'cannot write {path}: {why(e)}') from None
    except BaseException:
        _remove(tmp)
        raise


def _keep_mode(tmp: str, final: str) -> None:
    """The new file gets the old one's permissions, or a new file's usual ones."""
    try:
        mode = stat.S_IMODE(os.stat(final).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    os.chmod(tmp, mode)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _swap_folder(tmp: str, final: str) -> None:
    """final (an old export, already checked to hold only that) replaced
    by the complete tmp: the old one moved aside, the new one in, the old
    one removed."""
    old = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=os.path.dirname(final) or '.')
    os.rmdir(old)
    os.rename(final, old)
    try:
        os.rename(tmp, final)
    except OSError:
        os.rename(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _remove(tmp: str) -> None:
    if os.path.isdir(tmp) and not os.path.islink(tmp):
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


@contextlib.contextmanager
def opened(path: str, mode: str = 'wb', **kwargs):
    """replacing(path) with the temporary file open in `mode` (closed, so
    flushed, before the rename: a full disk at the last write is caught)."""
    with replacing(path) as tmp:
        try:
            f = open(tmp, mode, **kwargs)
        except OSError as e:
            raise Error(f'cannot write {path}: {why(e)}') from None
        try:
            yield f
        except BaseException:
            with contextlib.suppress(OSError):
                f.close()
            raise
        f.close()
