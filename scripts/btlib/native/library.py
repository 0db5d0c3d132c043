"""The one boundary with the compiled core, build/host/libbtdecode.so.

This module alone imports ctypes for the library and holds its only
handle. Every C function it calls and every struct it passes is declared
once, in FUNCTIONS and STRUCTS below; at load, each struct is checked
against the library's own table (decoder/abi.c: size, and each field's
offset and size) and so are the constants, so a stale build fails with
one error naming the struct and the field instead of corrupting memory:

    libbtdecode.so: struct bt_run field 'seq' at offset 8 in C, 16 in Python (rebuild with make)

Whether the compiled path is used is not decided here: available() says
whether the library loads, lib() is the handle, and choice.compiled()
is the one place that also honours BT_PURE_PYTHON=1. Nothing here falls
back to Python.
"""

import ctypes
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))))            # scripts/btlib/native/ -> the tree
LIB_PATH = os.path.join(REPO, 'build', 'host', 'libbtdecode.so')
LIB_NAME = os.path.basename(LIB_PATH)
HINT = '(rebuild with make)'

u8, u16, u32, u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
i32, size_t, cstr, vp = ctypes.c_int32, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p
u16p, u32p, size_tp = ctypes.POINTER(u16), ctypes.POINTER(u32), ctypes.POINTER(size_t)
u8p = ctypes.POINTER(u8)


class AbiError(RuntimeError):
    """The library does not match these declarations."""


class Ptr:
    """A pointer to the struct of that C name, in the tables below."""
    def __init__(self, name):
        self.name = name


# Array lengths the declarations below are built with: checked against the
# library's constants of the same names at load.
LAYOUT = {'BT_CSV_FIELDS': 2, 'BT_JSON_FIELDS': 4, 'BT_DIST_VALUES': 4, 'BT_PF_FIELDS': 4}
CSV_FIELDS, JSON_FIELDS, DIST_VALUES, PF_FIELDS = (LAYOUT[k] for k in LAYOUT)
TYPE_LIMIT = 1 << 16                 # a record's type is a u16

# Every struct the library's functions take: {C tag: [(field, type)]},
# types as ctypes types, another struct's tag (embedded) or Ptr(tag).
STRUCTS = {
    'trace_event': [('tsc', u64), ('seq', u32), ('type', u16), ('cpu', u8), ('flags', u8),
                    ('a0', u64), ('a1', u64)],
    'bt_run': [('line', u64), ('cpu', u64), ('start', u64), ('gap_over', u64),
               ('gap_excl', u64), ('status', i32), ('first', u32)],
    'bt_csv_type': [('name', cstr), ('label', cstr * CSV_FIELDS), ('nfields', u32),
                    ('arg', u8 * CSV_FIELDS), ('phase', u8 * CSV_FIELDS),
                    ('sgn', u8 * CSV_FIELDS)],
    'bt_phase': [('value', u64), ('name', cstr)],
    'bt_csv': [('types', Ptr('bt_csv_type')), ('type_index', u16p), ('phases', Ptr('bt_phase')),
               ('nphases', size_t), ('t0', u64), ('hz', u64), ('row_max', size_t)],
    'bt_marker': [('cpu', u64), ('seq', u64), ('before', cstr), ('after', cstr)],
    'bt_text': [('table', Ptr('bt_csv')), ('markers', Ptr('bt_marker')), ('nmarkers', size_t),
                ('int_w', u32), ('cpu_w', u32), ('row_max', size_t)],
    'bt_ctf_seg': [('ev', vp), ('cut_at', vp), ('cut_n', vp), ('n', u64), ('ncuts', u64),
                   ('lead', u64), ('tail', u64), ('cpu', u64), ('at', u64), ('cut', u64)],
    'bt_ctf_stream': [('header', u8 * 24), ('discarded', u64), ('packets', u64),
                      ('shared', u64)],
    'bt_scan': [('min_tsc', u64), ('max_tsc', u64), ('events', u64), ('sorted', u32),
                ('consecutive', u32), ('types', u8 * TYPE_LIMIT)],
    'bt_kmerge_src': [('ev', vp), ('order', vp), ('n', u64), ('at', u64), ('base', u64),
                      ('lo', u64), ('hi', u64), ('cpu', u64)],
    'bt_kmerge_head': [('tsc', u64), ('key', u64), ('src', u64)],
    'bt_kmerge': [('src', Ptr('bt_kmerge_src')), ('heap', Ptr('bt_kmerge_head')),
                  ('nheap', u64), ('starved', u64)],
    'bt_json_fmt': [('head', cstr), ('label', cstr * JSON_FIELDS), ('nfields', u32),
                    ('arg', u8 * JSON_FIELDS), ('phase', u8 * JSON_FIELDS),
                    ('sgn', u8 * JSON_FIELDS)],
    'bt_json_pair': [('begin', u32), ('end', u32), ('fmt', u32)],
    'bt_json_mark': [('at', u64), ('text', cstr)],
    'bt_json': [('fmts', Ptr('bt_json_fmt')), ('type_index', u16p), ('pairs', Ptr('bt_json_pair')),
                ('npairs', size_t), ('phases', Ptr('bt_phase')), ('nphases', size_t),
                ('t0', u64), ('hz', u64), ('timer', u32), ('row_max', size_t)],
    'bt_json_cpu': [('ev', vp), ('n', size_t), ('role', u32p), ('marks', Ptr('bt_json_mark')),
                    ('nmarks', size_t), ('cpu', u64), ('at', size_t), ('mark_at', size_t),
                    ('prev_tick', u64), ('have_tick', u32)],
    'bt_pf_fmt': [('head', vp), ('nhead', u32), ('nfields', u32), ('label', u64 * PF_FIELDS),
                  ('arg', u8 * PF_FIELDS), ('phase', u8 * PF_FIELDS), ('sgn', u8 * PF_FIELDS)],
    'bt_pf_mark': [('at', u64), ('data', vp), ('len', u64)],
    'bt_pf_flow': [('at', u64), ('id', u64), ('terminating', u32), ('unused', u32)],
    'bt_pf': [('fmts', Ptr('bt_pf_fmt')), ('type_index', u16p), ('pairs', Ptr('bt_json_pair')),
              ('npairs', size_t), ('phases', Ptr('bt_phase')), ('nphases', size_t),
              ('t0', u64), ('hz', u64), ('timer', u32), ('unused', u32),
              ('unmatched_iid', u64), ('bucket_ns', u64), ('crossing_iid', u64)],
    'bt_pf_cpu': [('ev', vp), ('n', size_t), ('partner', u32p), ('kind', u8p),
                  ('marks', Ptr('bt_pf_mark')), ('nmarks', size_t),
                  ('flows', Ptr('bt_pf_flow')), ('nflows', size_t), ('seq_id', u64),
                  ('rate_track', u64), ('fill_track', u64), ('base', u64), ('cap', u64),
                  ('at', size_t), ('mark_at', size_t), ('flow_at', size_t), ('bucket', u64),
                  ('count', u64), ('last_rate', u64), ('last_fill', u64), ('held', u64),
                  ('have_bucket', u32), ('have_rate', u32), ('have_fill', u32), ('done', u32)],
    'pairing_role': [('key', u32), ('kind', u8)],
    'bt_stats_type': [('group', u16), ('timer', u8)],
    'bt_stats_in': [('roles', Ptr('pairing_role')), ('nroles', u32),
                    ('types', Ptr('bt_stats_type')), ('ntypes', u32), ('ngroups', u32)],
    'bt_dist': [('count', u64), ('value', u64 * DIST_VALUES), ('negative', u8 * DIST_VALUES)],
    'bt_cpu_stats': [('max_tsc', u64), ('first_tsc', u64), ('last_tsc', u64),
                     ('period', 'bt_dist')],
}

# Every function called: {name: (restype, argtypes)}.
FUNCTIONS = {
    'bt_decode_line': (i32, [cstr, size_t, u32, Ptr('bt_run'), vp, size_t]),
    'bt_decode_lines': (size_t, [vp, size_t, u32, Ptr('bt_run'), size_t, vp, size_t, size_tp]),
    'bt_merge_order': (None, [cstr, size_t, vp, vp]),
    'bt_gather': (None, [cstr, vp, size_t, vp]),
    'bt_csv_rows': (size_t, [vp, vp, vp, size_t, vp, size_t, size_tp]),
    'bt_text_rows': (size_t, [vp, vp, vp, size_t, vp, size_t, size_tp]),
    'bt_ctf_events': (None, [cstr, size_t, vp]),
    'bt_ctf_stream_bound': (size_t, [Ptr('bt_ctf_seg'), size_t]),
    'bt_ctf_stream': (size_t, [Ptr('bt_ctf_stream'), Ptr('bt_ctf_seg'), size_t, vp, vp]),
    'bt_scan_init': (None, [Ptr('bt_scan')]),
    'bt_scan': (None, [vp, size_t, Ptr('bt_scan')]),
    'bt_kmerge_init': (None, [Ptr('bt_kmerge'), Ptr('bt_kmerge_src'), size_t,
                              Ptr('bt_kmerge_head')]),
    'bt_kmerge_next': (size_t, [Ptr('bt_kmerge'), vp, vp, vp, size_t]),
    'bt_kmerge_refill': (None, [Ptr('bt_kmerge'), u64]),
    'bt_json_pair': (ctypes.c_long, [Ptr('bt_json'), Ptr('bt_json_cpu'), vp, u32]),
    'bt_json_rows': (size_t, [Ptr('bt_json'), Ptr('bt_json_cpu'), vp, size_t]),
    'bt_pf_pair': (ctypes.c_long, [Ptr('bt_pf'), Ptr('bt_pf_cpu'), vp, u32]),
    'bt_pf_rows': (size_t, [Ptr('bt_pf'), Ptr('bt_pf_cpu'), vp, size_t]),
    'bt_pick_types': (size_t, [vp, size_t, vp, u32p]),
    'bt_pair_cpu': (size_t, [Ptr('pairing_role'), u32, cstr, size_t, u32p, u32p, u32p, size_tp]),
    'bt_stats_start': (vp, [Ptr('bt_stats_in'), vp, size_t, vp]),
    'bt_stats_cpu': (None, [vp, size_t, cstr, size_t, Ptr('bt_cpu_stats')]),
    'bt_stats_finish': (ctypes.c_int, [vp, Ptr('bt_dist')]),
}

# Constants the Python side reads from the library (const()), beyond LAYOUT's.
CONSTANTS = ('BT_DAMAGED', 'BT_PUNT', 'BT_LINE_MAX_CHARS', 'BT_CPU_LIMIT', 'BT_CSV_ARGS_MAX',
             'BT_CTF_EVENT_SIZE', 'BT_PAIR_MAX_EVENTS', 'BT_STATS_TYPES', 'BT_STATS_NO_GROUP',
             'PAIRING_DEPTH', 'TRACE_KIND_INSTANT', 'TRACE_KIND_BEGIN', 'TRACE_KIND_END',
             'BT_PF_ROW_MAX')


def build(table):
    """{tag: ctypes.Structure subclass} of a STRUCTS-like table (in order)."""
    out = {}

    def ctype(t):
        if isinstance(t, Ptr):
            return ctypes.POINTER(out[t.name])
        return out[t] if isinstance(t, str) else t
    for tag, fields in table.items():
        out[tag] = type(tag, (ctypes.Structure,), {'_fields_': [(f, ctype(t)) for f, t in fields]})
    return out


S = build(STRUCTS)


def ctype_of(t):
    """A FUNCTIONS entry's type as a ctypes type."""
    return ctypes.POINTER(S[t.name]) if isinstance(t, Ptr) else t


# ---- what the library says about itself (decoder/abi.h) ------------------------

class _AbiField(ctypes.Structure):
    _fields_ = [('name', cstr), ('offset', u64), ('size', u64)]


class _AbiStruct(ctypes.Structure):
    _fields_ = [('name', cstr), ('size', u64), ('nfields', u64),
                ('fields', ctypes.POINTER(_AbiField))]


class _AbiConst(ctypes.Structure):
    _fields_ = [('name', cstr), ('value', ctypes.c_int64)]


def abi_tables(handle):
    """({tag: (size, [(field, offset, size)])}, {name: value}) from the library."""
    n = size_t()
    f = handle.bt_abi_structs
    f.restype, f.argtypes = ctypes.POINTER(_AbiStruct), [size_tp]
    arr = f(ctypes.byref(n))
    structs = {}
    for s in arr[:n.value]:
        structs[s.name.decode()] = (s.size, [(x.name.decode(), x.offset, x.size)
                                             for x in s.fields[:s.nfields]])
    f = handle.bt_abi_constants
    f.restype, f.argtypes = ctypes.POINTER(_AbiConst), [size_tp]
    arr = f(ctypes.byref(n))
    return structs, {c.name.decode(): c.value for c in arr[:n.value]}


def mismatches(c_structs, c_consts, classes=None, layout=None, wanted=None):
    """What differs between the library's tables and these declarations
    (classes: {tag: ctypes struct}, layout: LAYOUT), one line each."""
    classes, layout = S if classes is None else classes, LAYOUT if layout is None else layout
    wanted = CONSTANTS if wanted is None else wanted
    out = []
    for tag in sorted(set(c_structs) - set(classes)):
        out.append(f'struct {tag} is in C but not declared in Python')
    for tag in sorted(set(classes) - set(c_structs)):
        out.append(f'struct {tag} is declared in Python but not in C')
    for tag in [t for t in classes if t in c_structs]:
        size, fields = c_structs[tag]
        py = {f: getattr(classes[tag], f) for f, _ in classes[tag]._fields_}
        if size != ctypes.sizeof(classes[tag]):
            out.append(f'struct {tag} is {size} bytes in C, {ctypes.sizeof(classes[tag])} '
                       'in Python')
        names = [f for f, _, _ in fields]
        if names != list(py):
            out.append(f'struct {tag} has fields {names} in C, {list(py)} in Python')
        for name, offset, fsize in fields:
            d = py.get(name)
            if d is None:
                continue
            if d.offset != offset:
                out.append(f"struct {tag} field '{name}' at offset {offset} in C, "
                           f'{d.offset} in Python')
            elif d.size != fsize:
                out.append(f"struct {tag} field '{name}' is {fsize} bytes in C, "
                           f'{d.size} in Python')
    for name, value in layout.items():
        if c_consts.get(name) != value:
            out.append(f'constant {name} is {c_consts.get(name)} in C, {value} in Python')
    for name in wanted:
        if name not in c_consts:
            out.append(f'constant {name} is not in C')
    return out


def check(handle):
    """Raises AbiError (one, naming every mismatch) unless the library
    matches STRUCTS, LAYOUT and CONSTANTS."""
    try:
        structs, consts = abi_tables(handle)
    except AttributeError:
        raise AbiError(f'{LIB_NAME}: it has no bt_abi_structs() table {HINT}') from None
    problems = mismatches(structs, consts)
    if problems:
        raise AbiError(f'{LIB_NAME}: ' + '; '.join(problems) + f' {HINT}')
    return consts


# ---- the handle ------------------------------------------------------------------

_lib = None
_consts: dict = {}
_missing = None            # the OSError of a library that is not there


def lib():
    """The library, checked and its functions declared, loaded on first
    use. Raises OSError when it is missing, AbiError when it is stale."""
    global _lib, _missing
    if _lib is None:
        if _missing is not None:
            raise _missing
        try:
            handle = ctypes.CDLL(LIB_PATH)
        except OSError as e:
            _missing = e
            raise
        _consts.update(check(handle))
        for name, (restype, args) in FUNCTIONS.items():
            f = getattr(handle, name)
            f.restype, f.argtypes = ctype_of(restype), [ctype_of(a) for a in args]
        _lib = handle
    return _lib


def available() -> bool:
    """True when the library loads (and matches: a stale one raises
    AbiError rather than being passed over); False when it is missing."""
    try:
        lib()
    except OSError:
        return False
    return True


def addr_of(data) -> int:
    """The address of a bytes object's contents (valid while it lives)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value


def const(name: str) -> int:
    """A constant of the library (CONSTANTS, LAYOUT)."""
    lib()
    return _consts[name]
