"""A one-line progress display on a terminal.

Progress goes to stderr and only when stderr is a TTY: in a log file or a
pipe, a stream of carriage-return updates is noise.  Updates are rate
limited so drawing never slows the work being shown.
"""

import os
import sys
import threading
import time

UPDATE_INTERVAL_S = 0.2
CLEAR_LINE = '\r\033[K'


class ProgressLine:
    def __init__(self, stream=None, interval=UPDATE_INTERVAL_S):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty()
        self.interval = interval
        self._last = 0.0
        self._shown = False

    def show(self, text, force=False):
        """Redraw the line with `text` (at most every `interval` seconds)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self.stream.write(CLEAR_LINE + text)
        self.stream.flush()
        self._shown = True

    def clear(self):
        """Erase the line so the next message starts on a clean line."""
        if self._shown:
            self.stream.write(CLEAR_LINE)
            self.stream.flush()
            self._shown = False


def human_bytes(n):
    """1536 -> '1.5 KiB'."""
    for unit in ('B', 'KiB', 'MiB', 'GiB', 'TiB'):
        if abs(n) < 1024 or unit == 'TiB':
            return f'{n:.0f} {unit}' if unit == 'B' else f'{n:.1f} {unit}'
        n /= 1024
    return f'{n:.1f} TiB'


def eta_text(seconds):
    if seconds is None or seconds < 0:
        return '?'
    seconds = int(seconds + 0.5)
    if seconds >= 3600:
        return f'{seconds // 3600}h{seconds % 3600 // 60:02d}m'
    if seconds >= 60:
        return f'{seconds // 60}m{seconds % 60:02d}s'
    return f'{seconds}s'


def output_size(path):
    """Bytes written so far to a file, or to every file under a directory."""
    try:
        if os.path.isdir(path):
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        return os.path.getsize(path)
    except OSError:
        return 0


class WriteProgress:
    """While a long export runs, a progress line (on a terminal only) with
    what it has written and for how long, from a thread that looks at the
    output's size: the exporters themselves are not slowed or changed.

        with WriteProgress('decode: writing csv to out.csv', lambda: output_size('out.csv')):
            export()
    """

    def __init__(self, label, size, stream=None, interval=UPDATE_INTERVAL_S):
        self.line = ProgressLine(stream, interval)
        self.label, self.size, self.interval = label, size, interval
        self._stop = threading.Event()
        self._thread = None

    def _run(self, started):
        while True:                      # at once, then every interval until done
            spent = time.monotonic() - started
            done = self.size()           # nothing yet: the export is still being prepared
            self.line.show(f'{self.label}: {human_bytes(done) if done else "preparing"} in '
                           f'{spent:.0f} s', force=True)
            if self._stop.wait(self.interval):
                return

    def __enter__(self):
        if self.line.enabled:
            self._thread = threading.Thread(target=self._run, args=(time.monotonic(),),
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread:
            self._stop.set()
            self._thread.join()
            self.line.clear()
        return False
