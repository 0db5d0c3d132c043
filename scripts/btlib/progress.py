"""A one-line progress display on a terminal.

Progress goes to stderr and only when stderr is a TTY: in a log file or a
pipe, a stream of carriage-return updates is noise.  Updates are rate
limited so drawing never slows the work being shown.
"""

import sys
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
