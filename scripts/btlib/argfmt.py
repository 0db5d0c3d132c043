"""Fast formatting of an event's named arguments, in text or JSON.

A dump can hold a million events, so formatting is compiled once per
event type: a str.format template plus an operator.itemgetter that picks
the argument values from a tuple ((a0, a1) for an event, (a0, a1, a0', a1')
for a BEGIN/END pair).  Boot phases are looked up by number and shown by
name; numbers the table does not name stay numbers.

JSON viewers read numbers as doubles, exact only below 2^53: larger
values (addresses, full 64-bit arguments) are written as hex strings
("0xffffffff80001234") rather than silently rounded.
"""

import json
from operator import itemgetter


def _escape(text):
    return text.replace('{', '{{').replace('}', '}}')


JS_EXACT = 1 << 53


def _json_safe(v):
    return v if v < JS_EXACT else f'"{v:#x}"'


def make_formatter(fields, phases, style):
    """make_formatter_raw(), plus, for JSON, big numbers as hex strings."""
    fmt = make_formatter_raw(fields, phases, style)
    if style != 'json' or not fields:
        return fmt

    def json_formatter(values):
        if max(values) < JS_EXACT:
            return fmt(values)
        return fmt(tuple(_json_safe(v) for v in values))
    return json_formatter


def make_formatter_raw(fields, phases, style):
    """A function values_tuple -> str.

    fields: [(name, index into the values tuple, is_phase)];
    style 'text' gives 'tick=12 lateness_tsc=40', 'json' gives
    '{"tick":12,"lateness_tsc":40}'."""
    if style == 'text':
        template = ' '.join(f'{_escape(n)}={{}}' for n, _, _ in fields)
    else:
        template = '{{' + ','.join(f'{_escape(json.dumps(n))}:{{}}' for n, _, _ in fields) + '}}'
    fmt = template.format
    if not fields:
        constant = fmt()
        return lambda values: constant
    get = itemgetter(*[i for _, i, _ in fields])
    phase_at = [k for k, (_, _, is_phase) in enumerate(fields) if is_phase]
    single = len(fields) == 1
    if not phase_at:
        if single:
            return lambda values: fmt(get(values))
        return lambda values: fmt(*get(values))
    quote = json.dumps if style == 'json' else str

    def with_phase(values):
        picked = [get(values)] if single else list(get(values))
        for k in phase_at:
            name = phases.get(picked[k])
            if name is not None:
                picked[k] = quote(name)
        return fmt(*picked)
    return with_phase
