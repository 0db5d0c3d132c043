"""Account for every event a dump does not hold, and say so on stderr.

The parser counts each missing event in exactly one of four places per
CPU (model.py): overwritten, excluded, damaged, unexplained; refused trace
points never had a seq and are counted beside them (the words are the
glossary's, docs/dump-format.md).  This module turns those counters into
the lines decode prints, into the exit status (events lost in transit are
worse than a ring that wrapped), and into the positions CTF needs for its
events_discarded counts (missing + refused).
"""

from ..dump.model import MISSING_KINDS, SEQ_MODULUS
from ..util.tables import format_table
from .timeline import seq_holes_in

LOSS_KINDS = MISSING_KINDS + ('refused',)      # the loss table's columns, in order
KIND_WORDS = {'overwritten': 'overwritten (ring wrapped)',
              'excluded': 'excluded (still being written when the dump read it)',
              'damaged': 'damaged or lost on the serial line',
              'unexplained': 'unexplained (the counters do not add up)',
              'refused': 'refused while tracing was paused (never recorded, not missing)'}
MAX_WARNINGS = 20            # parser warnings shown before "... and N more"


V1_NO_IDENTITY = ('warning: dump format v1 has no dump identity: a line of another v1 dump '
                  'or boot that carries a line number this dump lacks cannot be told from its '
                  'own (only the line-number and seq-range checks apply; '
                  'docs/dump-format.md section 9): capture with a v2 kernel for that guarantee')

UNATTRIBUTED_ROW = '?'      # the loss table's row for losses no CPU can be given


def per_cpu(dump):
    """{cpu: {kind: n}} for CPUs that lost anything, or whose counters line
    was lost (their figures are lower bounds: they are shown even at 0)."""
    blind = {c.cpu for c in dump.cpus if not c.summary_seen}
    return {cpu: m for cpu, m in dump.missing_events().items()
            if cpu in blind or any(m.get(k, 0) for k in LOSS_KINDS)}


def totals(dump):
    out = dict.fromkeys(LOSS_KINDS, 0)
    for m in dump.missing_events().values():
        for k in LOSS_KINDS:
            out[k] += m.get(k, 0)
    out['damaged'] += dump.unattributed
    return out


def transit_damage(dump):
    """True when something was lost between the kernel and this file."""
    t = totals(dump)
    return bool(t['damaged'] or t['unexplained'] or dump.damaged_lines or dump.missing_lines)


def _unattributed_lines(dump):
    """The loss table's '?' row and what it means, when DUMP END's total
    exceeds what the CPUs account for and no one CPU can take the rest."""
    n = dump.unattributed
    if not n:
        return [], []
    cpus = ', '.join(map(str, dump.unattributed_cpus)) or 'unknown'
    row = [UNATTRIBUTED_ROW] + [n if k == 'damaged' else 0 for k in LOSS_KINDS]
    return [row], [f'{UNATTRIBUTED_ROW}: {n} events lost with counters lines, not attributable '
                   f'to one CPU (CPUs without counters: {cpus})']


def _wrapped_hole(c, index, first, count):
    """True for a hole the ring's wrap left below its window: there only the
    boot log and the results log kept events (ring.h), so every seq between
    them was overwritten. Without the window (old dumps) the one such hole
    is the one right after the pinned boot events."""
    if not 0 < count <= c.overwritten:
        return False
    if c.window_seq is None:
        return bool(c.pinned) and index == c.pinned
    end = (first + count) % SEQ_MODULUS
    return end == c.window_seq or _ahead(end, c.window_seq) > 0


def hole_causes(c, seqs=None):
    """[(index, first_seq, count, cause)] for CPU c's holes (see holes()).

    Holes come from overwritten events (below the ring's window, between
    the events its boot and results logs kept), excluded slots, damaged
    lines or unexplained gaps; refused events never took a sequence
    number. A hole gets a cause when the counters leave only one
    explanation for it, else 'lost'."""
    if c.holes is not None:          # a stream's, placed by its join
        return list(c.holes)
    found = holes(c, seqs)
    wrapped = [_wrapped_hole(c, i, first, n) for i, first, n in found]
    others = [k for k, n in (('overwritten', 0 if any(wrapped) else c.overwritten),
                             ('excluded', c.excluded), ('damaged', c.damaged),
                             ('unexplained', c.unexplained)) if n]
    fallback = others[0] if len(others) == 1 else 'lost'
    return [(i, first, n, 'overwritten' if w else fallback)
            for (i, first, n), w in zip(found, wrapped)]


def _ahead(a, b):
    """How far seq b is after seq a (u32), or 0 if it is not after it."""
    step = (b - a) % SEQ_MODULUS
    return step if step < SEQ_MODULUS // 2 else 0


def holes(c, seqs=None):
    """[(index, first_seq, count)] of CPU c: its missing events that have a
    place in the sequence.  index is the position in c.events the hole
    comes before (len(c.events) for a hole after the last event); holes at
    the ends come from the summary's first/last sequence numbers.  `seqs`:
    c.seqs(), when the caller has it."""
    if c.holes is not None:          # a stream's, placed by its join
        return [(i, first, n) for i, first, n, _ in c.holes]
    seqs = c.seqs() if seqs is None else seqs
    if not seqs:
        return []
    out = []
    if c.first_seq is not None and _ahead(c.first_seq, seqs[0]):
        out.append((0, c.first_seq, _ahead(c.first_seq, seqs[0])))
    out += list(seq_holes_in(seqs))
    if c.last_seq is not None and _ahead(seqs[-1], c.last_seq):
        out.append((len(seqs), (seqs[-1] + 1) % SEQ_MODULUS, _ahead(seqs[-1], c.last_seq)))
    return out


def discarded(c):
    """CPU c's missing events plus its refused ones: every trace point the
    dump lacks (CTF's events_discarded)."""
    return sum(getattr(c, k) for k in LOSS_KINDS)


def unplaced(c, seqs=None):
    """CPU c's discarded events with no place in the sequence: overwritten
    before the oldest survivor, refused while tracing was paused, and any
    the counters report beyond the holes seen (`seqs` as for holes())."""
    return max(0, discarded(c) - sum(n for _, _, n in holes(c, seqs)))


def report(dump, ticks_ns):
    """Lines describing what the dump lacks (without the program prefix).

    ticks_ns(ticks) converts a TSC tick count to nanoseconds."""
    lines = [V1_NO_IDENTITY] if dump.version == 1 else []
    lines += [f'warning: {w}' for w in dump.warnings[:MAX_WARNINGS]]
    if len(dump.warnings) > MAX_WARNINGS:
        lines.append(f'warning: ... and {len(dump.warnings) - MAX_WARNINGS} more warnings')
    if dump.damaged_lines or dump.missing_lines:
        lines.append(f'{dump.damaged_lines} damaged lines skipped, '
                     f'{dump.missing_lines} lines missing')
    lossy = per_cpu(dump)
    extra_rows, notes = _unattributed_lines(dump)
    if lossy or extra_rows:
        lines.append('events missing per CPU:')
        rows = fold_rows([[cpu] + [m.get(k, 0) for k in LOSS_KINDS]
                          for cpu, m in sorted(lossy.items())])
        lines += format_table(['CPU'] + [k.upper() for k in LOSS_KINDS], rows + extra_rows)
        lines += notes
        lines.append(_in_all(totals(dump)))
    warp = warp_ticks(dump)
    if warp:
        lines.append(f'worst cross-CPU TSC warp {warp} ticks ({ticks_ns(warp):.1f} ns): '
                     f'events of different CPUs closer than that may be out of order')
    return lines


FOLD_FROM = 3                # consecutive CPUs with the same figures shown as one row


def fold_rows(rows):
    """Loss rows [cpu, n, ...] with runs of FOLD_FROM or more consecutive
    CPUs of identical figures (a 64-CPU dump's ordinary overwrite loss)
    folded into one row whose CPU is 'first-last'."""
    out, i = [], 0
    while i < len(rows):
        j = i
        while j + 1 < len(rows) and rows[j + 1][0] == rows[j][0] + 1 and \
                rows[j + 1][1:] == rows[i][1:]:
            j += 1
        if j - i + 1 >= FOLD_FROM:
            out.append([f'{rows[i][0]}-{rows[j][0]}'] + rows[i][1:])
        else:
            out += rows[i:j + 1]
        i = j + 1
    return out


def _in_all(t):
    """'in all N events missing: ...', then the refused ones, which are not."""
    text = (f'in all {sum(t[k] for k in MISSING_KINDS)} events missing: '
            + ', '.join(f'{t[k]} {KIND_WORDS[k]}' for k in MISSING_KINDS if t[k]))
    return text + (f'; and {t["refused"]} {KIND_WORDS["refused"]}' if t['refused'] else '')


def warp_ticks(dump):
    """The worst TSC warp the kernel measured between CPUs, if it said."""
    text = dump.header.get('tsc_warp', '')
    try:
        return int(text, 0)
    except ValueError:
        return None


def markers(dump):
    """Where to show each hole in a timeline.

    Returns (before, after): {(cpu, seq): [(name, value), ...]} keyed by
    the event a hole comes just before, or (for a hole after a CPU's last
    event) just after; the pairs are the marker's arguments:
    events=N first_seq=S cause=overwritten|excluded|damaged|unexplained|lost."""
    before, after = {}, {}
    for c in dump.cpus:
        seqs = c.seqs()
        for index, first, count, cause in hole_causes(c, seqs):
            args = [('events', count), ('first_seq', first), ('cause', cause)]
            if index < len(seqs):
                before[(c.cpu, seqs[index])] = args
            else:
                after[(c.cpu, seqs[-1])] = args
    return before, after
