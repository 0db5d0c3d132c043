"""The READY line: the kernel's one "all CPUs online" line, found and read.

    READY cpus=16 found=16 max=1024 parked=0 failed=0 tsc_hz=... fw=bios ...

A contract (docs/console.md, "The READY line"): a line of its own, READY,
a space, then key=value fields separated by spaces, cpus= always first.
Every tool and test that looks for it looks here. Where they look differs,
for reasons kept below rule by rule (a line ends at \\n, \\r\\n or a lone
\\r: docs/dump-format.md):

LINE     a whole READY line in a byte stream (serial output as it arrives):
         at the stream's start or just after a line end, up to its own line
         end; group 1 is the fields. Anchored because the stream is not
         split into lines: under UEFI the firmware's escape sequences share
         it, and only a line's start is the kernel's. Needs the line end so
         the fields are all there. QEMU sessions (the boot tests, bench,
         capture --qemu), run-qemu's keys held until READY.
STARTS   where a READY line starts, its end not needed: a network console
         datagram (capture --net) carries text cut anywhere, so a READY
         line may end in the next datagram; its start is enough to know the
         machine is up.
IN_LINE  "READY " inside one line already split off and cleaned of escape
         sequences, not inside a word: capture's console watch sends the
         keys on it, and a real serial line can carry noise before a
         line's first word (a cut escape, a break, a firmware's byte); a
         missed READY would never send the keys.
BOOT     in one line of a saved log, at its start or after white space, and
         with the cpus= field: the decoder closes an open dump on it (a new
         boot), so a word alone in some console text must not cut a dump.
"""

import re

WORD = b'READY '
_LINE_START = rb'(?:^|(?<=[\r\n]))'

LINE = re.compile(_LINE_START + WORD + rb'([^\r\n]*)\r?\n')
STARTS = re.compile(_LINE_START + WORD)
IN_LINE = re.compile(rb'(?<![A-Za-z0-9_])' + WORD)
BOOT = re.compile(rb'(?:^|\s)' + WORD + rb'cpus=')
BOOT_WORD = WORD + b'cpus='          # in every line BOOT matches: a quick test first


def parse(fields):
    """dict of a READY line's key=value fields (bytes or str; the word
    READY itself, and items without '=', are skipped)."""
    if isinstance(fields, bytes):
        fields = fields.decode('ascii', 'replace')
    out = {}
    for item in fields.split():
        key, sep, value = item.partition('=')
        if sep:
            out[key] = value
    return out


def find(data, pos=0):
    """The fields (dict) of the first whole READY line in data at or after
    pos, or None."""
    m = LINE.search(data, pos)
    return parse(m.group(1)) if m else None
