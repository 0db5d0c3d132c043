"""Fast formatting of an event's named arguments, in text or JSON.

A dump can hold a million events, so formatting is compiled once per
event type: a str.format template plus an operator.itemgetter that picks
the argument values from a tuple ((a0, a1) for an event, (a0, a1, a0', a1')
for a BEGIN/END pair).  Boot phases are looked up by number and shown by
name; numbers the table does not name stay numbers.

Arguments the event table declares signed are shown as the int64_t they
hold (-5, not 18446744073709551611), through model.as_signed.

JSON viewers read numbers as doubles, exact only below 2^53: larger
values (addresses, full 64-bit arguments) are written as hex strings
("0xffffffff80001234", "-0x20000000000000") rather than silently rounded.
"""

import json
from operator import itemgetter

from ..dump.model import as_signed


def _escape(text):
    return text.replace('{', '{{').replace('}', '}}')


JS_EXACT = 1 << 53


def _json_safe(v):
    return v if -JS_EXACT < v < JS_EXACT else f'"{v:#x}"'


def make_formatter(fields, phases, style, signed=()):
    """make_formatter_raw(), plus the values at indices `signed` read as
    int64_t, and, for JSON, big numbers as hex strings."""
    fmt = make_formatter_raw(fields, phases, style)
    if not fields:
        return fmt
    if style == 'json':
        fmt = _json_guard(fmt)
    if signed:
        fmt = _signed_view(fmt, tuple(signed))
    return fmt


def _json_guard(fmt):
    def json_formatter(values):
        if max(values) < JS_EXACT and min(values) > -JS_EXACT:
            return fmt(values)
        return fmt(tuple(_json_safe(v) for v in values))
    return json_formatter


def _signed_view(fmt, indices):
    def signed_formatter(values):
        values = list(values)
        for i in indices:
            values[i] = as_signed(values[i])
        return fmt(tuple(values))
    return signed_formatter


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
