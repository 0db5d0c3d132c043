"""The event table built into this checkout (src/trace/events.def): what a
stream's parts are decoded with when its part 0, the only one that
carries the tables, never arrived (docs/streaming.md). A dump's own %T
lines always win: a kernel of another version may number events
otherwise, which is why tools say when they use this one.

    table = builtin.table()        # None when events.def is not beside the tools
    table.types, table.phases, table.categories, table.source
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .model import EventType

DEF = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'src', 'trace',
                   'events.def')
_STR = r'"((?:[^"\\]|\\.)*)"'
_EVENT = re.compile(rf'^\s*TRACE_EVENT\(\s*(\d+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,'
                    rf'\s*(\w+)\s*,\s*{_STR}\s*,\s*{_STR}\s*,\s*{_STR}\s*\)', re.M)
_PAIR = re.compile(r'^\s*TRACE_PAIR\(\s*(\w+)\s*,\s*(\w+)\s*\)', re.M)
_FLOW = re.compile(r'^\s*TRACE_FLOW\(\s*(\w+)\s*,\s*(\w+)\s*\)', re.M)
_NUMBERED = re.compile(rf'^\s*TRACE_(CATEGORY|PHASE)\(\s*(\d+)\s*,\s*(\w+)\s*,\s*{_STR}\s*\)',
                       re.M)
SIGNED = 's:'


@dataclass
class Table:
    """The tables a dump's %T, %P and %K lines would give."""
    source: str
    types: dict[int, EventType] = field(default_factory=dict)
    phases: dict[int, str] = field(default_factory=dict)
    categories: dict[int, str] = field(default_factory=dict)


def table(path: str = DEF) -> Table | None:
    """The table of events.def at path, or None when it cannot be read."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError:
        return None
    out = Table(source=os.path.normpath(path))
    ids = {}
    for m in _EVENT.finditer(text):
        i, name, cat, kind, retention, a0, a1, desc = m.groups()
        args = tuple(a[len(SIGNED):] if a.startswith(SIGNED) else a for a in (a0, a1))
        out.types[int(i)] = EventType(
            id=int(i), name=name, category=cat, kind=kind.lower(), args=args, description=desc,
            pinned=retention == 'PINNED', result=retention == 'RESULT',
            signed=tuple(a.startswith(SIGNED) for a in (a0, a1)))
        ids[name] = int(i)
    for begin, end in _PAIR.findall(text):
        if begin in ids and end in ids:
            out.types[ids[begin]].pair, out.types[ids[end]].pair = ids[end], ids[begin]
    for cause, effect in _FLOW.findall(text):
        if cause in ids and effect in ids:
            out.types[ids[cause]].flow = ids[effect]
    for kind, number, name, _ in _NUMBERED.findall(text):
        (out.categories if kind == 'CATEGORY' else out.phases)[int(number)] = name
    return out
