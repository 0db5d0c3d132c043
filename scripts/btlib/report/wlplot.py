"""PNG pictures of workload results (btlib.report.workloads) with matplotlib.

    from btlib.report import wlplot
    wlplot.render(run, tsc_hz, 'out/ipi-run2.png')   # the picture for one run

Matrices (ipi, c2c, tsc) become heat maps over the CPUs they measured
(heat_scale: a log colour scale when one slow cell would flatten the rest,
a symmetric log one for signed offsets; past CLIP_MIN_CELLS cells the
colours span the 1st to 99th percentile, the rest drawn in the end
colours; the colour bar says which) with the value in every cell while it
fits (cell_labels_fit), at most MAX_TICKS CPU numbers an axis (tick_cpus),
titled with the machine (workloads.machine),
timer a wake-up latency histogram per CPU (log-scaled, like cyclictest's),
hwlat the time lost per CPU next to the distribution of gap lengths.
matplotlib is imported on first use: MissingMatplotlib says how to get it.

Histograms are counted here, on integer TSC-tick bin edges (log_bins), and
only drawn by matplotlib: every sample, the smallest and the largest
included, lands in exactly one bin.  (Floating-point edges computed from
the extremes could end a hair below the largest sample and drop it: the
worst wake-up or the longest gap, the very number one looks for.)
"""

from __future__ import annotations

import bisect
import math

from ..util import interp
from .workloads import measured_cpus


class MissingMatplotlib(RuntimeError):
    """matplotlib is not installed."""


def _plt():
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingMatplotlib(interp.missing_text('matplotlib', 'python3-matplotlib',
                                                    'PNG output')) from None
    return plt


def can_render(name: str) -> bool:
    return name in _RENDER


def render(run, tsc_hz: int, path: str, machine: str | None = None) -> None:
    """Write the picture of `run` (a btlib.report.workloads.Run) to path; `machine`
    (workloads.machine(dump)) goes under its title."""
    plt = _plt()
    fig = _RENDER[run.name](plt, run, tsc_hz, machine)
    fig.savefig(path, dpi=getattr(fig, 'bt_dpi', DPI), bbox_inches='tight')
    plt.close(fig)


def log_bins(ticks: list[int], count: int) -> list[int]:
    """About `count` log-spaced integer bin edges covering positive `ticks`:
    the first edge is the smallest sample, the last one more than the largest,
    so bin i is [edges[i], edges[i+1]) and no sample falls outside."""
    lo, hi = min(ticks), max(ticks) + 1
    ratio = hi / lo
    inner = {round(lo * ratio ** (i / count)) for i in range(1, count)}
    return [lo] + sorted(e for e in inner if lo < e < hi) + [hi]


def bin_counts(ticks: list[int], edges: list[int]) -> list[int]:
    """Samples per bin [edges[i], edges[i+1]); every sample is inside the edges."""
    counts = [0] * (len(edges) - 1)
    for t in ticks:
        counts[bisect.bisect_right(edges, t) - 1] += 1
    return counts


def _draw_hist(ax, ticks, edges, scale, **style):
    """A histogram counted on integer edges, drawn with the edges scaled."""
    counts = bin_counts(ticks, edges)
    xs = [e * scale for e in edges]
    ax.hist(xs[:-1], bins=xs, weights=counts, **style)


MAX_FIGURE_IN = 14.0          # a heat map's side, in inches, however many CPUs
CELL_FONT_PT = 6              # the per-cell numbers' size
LOG_SPREAD = 20               # max/min above this: a log colour scale
DPI = 110                     # pixels an inch, raised so that a cell keeps CELL_MIN_PX
CELL_MIN_PX = 3
MAX_TICKS = 32                # CPU numbers an axis at most
CLIP_MIN_CELLS = 1024         # from this many cells (a 33-CPU matrix), colours by percentile
CLIP_PERCENT = 1              # ... from the CLIP_PERCENT-th to the (100 - it)-th


def _title(run, what, machine=None):
    number = f' run {run.number}' if run.number is not None else ''
    return f'{run.name}{number}: {what}' + (f'\n{machine}' if machine else '')


def _positive_median(values):
    vs = sorted(v for v in values if v > 0)
    return vs[(len(vs) - 1) // 2] if vs else None


def clip_range(values, signed=False):
    """(lo, hi, cells beyond) of the colours: every value below
    CLIP_MIN_CELLS values, else the CLIP_PERCENT-th to (100 - CLIP_PERCENT)-th
    percentile (nearest rank; signed: +-that of the magnitudes), so that a
    few outliers (one slow row of 256) take an end colour instead of
    squeezing every other cell into one."""
    if not values:
        return None, None, 0
    if len(values) < CLIP_MIN_CELLS:
        return min(values), max(values), 0
    if signed:
        mags = sorted(abs(v) for v in values)
        top = mags[min(len(mags) - 1, (len(mags) * (100 - CLIP_PERCENT)) // 100)]
        lo, hi = -top, top
    else:
        vs = sorted(values)
        lo = vs[(len(vs) * CLIP_PERCENT) // 100]
        hi = vs[min(len(vs) - 1, (len(vs) * (100 - CLIP_PERCENT)) // 100)]
    return lo, hi, sum(1 for v in values if v < lo or v > hi)


def tick_cpus(cpus, most=MAX_TICKS):
    """(positions, labels) of the CPU numbers an axis shows: every step-th
    of `cpus` (the matrix's CPUs, in order), at most `most`, the step a
    power of two (288 CPUs: 0, 16, 32, ..., not 0, 9, 18, ...: cores and
    sockets come in such blocks), and the last CPU too where it has room."""
    step = 1
    while step * most < len(cpus):
        step *= 2
    at = list(range(0, len(cpus), step))
    if len(at) < most and len(cpus) - 1 - at[-1] >= max(1, step // 2):
        at.append(len(cpus) - 1)
    return at, [str(cpus[i]) for i in at]


def heat_scale(values, signed=False):
    """How a heat map colours `values` (finite numbers): ('linear', lo, hi),
    ('log', lo, hi) when the positive values spread over more than LOG_SPREAD
    times (one slow row would otherwise paint every other cell alike), or
    for signed values ('symlog', linthresh, top): linear within +-linthresh
    (the typical magnitude), logarithmic beyond, so both the blocks and the
    outliers show."""
    if not values:
        return ('linear', 0.0, 1.0)
    top = max(abs(v) for v in values) or 1.0
    if signed:
        typical = _positive_median([abs(v) for v in values])
        if typical and top / typical > LOG_SPREAD:
            return ('symlog', typical, top)
        return ('linear', -top, top)
    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) / min(positive) > LOG_SPREAD:
        return ('log', min(positive), max(positive))
    return ('linear', 0.0, top)


def cell_labels_fit(n, side_in, values):
    """Whether per-cell numbers fit: the widest label within a cell of a
    figure side_in inches wide holding n cells."""
    if n == 0:
        return False
    widest = max((len(f'{v:.0f}') for v in values), default=1)
    cell_pt = side_in * 72 / (n + 2)            # axes take most of the figure
    return widest * CELL_FONT_PT * 0.62 + 2 <= cell_pt and CELL_FONT_PT + 2 <= cell_pt


def _heatmap(plt, run, tsc_hz, values, what, unit, signed=False, machine=None):
    from matplotlib import colors
    cpus = measured_cpus(values) or list(range(len(values)))
    n = len(cpus)
    size = min(MAX_FIGURE_IN, max(4.0, 0.42 * n + 2))
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    fig.bt_dpi = max(DPI, math.ceil(CELL_MIN_PX * (n + 2) / size))
    data = [[math.nan if values[r][c] is None else values[r][c] for c in cpus] for r in cpus]
    finite = [v for row in data for v in row if not math.isnan(v)]
    lo_clip, hi_clip, beyond = clip_range(finite, signed)
    kind, lo, hi = heat_scale([min(max(v, lo_clip), hi_clip) for v in finite], signed)
    if kind == 'log':
        norm, legend = colors.LogNorm(vmin=lo, vmax=hi), f'{unit} (log scale)'
    elif kind == 'symlog':
        norm = colors.SymLogNorm(linthresh=lo, vmin=-hi, vmax=hi, base=10)
        legend = f'{unit} (linear within +-{lo:.0f}, log beyond)'
    else:
        if beyond and not signed:
            lo = lo_clip             # percentiles: the colours span what most cells hold
        norm, legend = colors.Normalize(vmin=lo, vmax=hi), f'{unit} (linear scale)'
    extend = 'neither'
    if beyond:
        legend += (f'; colours span percentiles {CLIP_PERCENT}-{100 - CLIP_PERCENT}, '
                   f'{beyond} cells beyond in the end colours')
        extend = 'both'
    # viridis: perceptually uniform and readable in grey; nearest: one
    # cell is one block of pixels, never blurred into its neighbours
    im = ax.imshow(data, cmap='coolwarm' if signed else 'viridis', norm=norm,
                   interpolation='nearest')
    at, labels = tick_cpus(cpus)
    ax.set_xticks(at)
    ax.set_xticklabels(labels, rotation=90 if max(map(len, labels), default=0) > 2 else 0)
    ax.set_yticks(at)
    ax.set_yticklabels(labels)
    ax.set_xlabel('to CPU' if not signed else 'reader CPU')
    ax.set_ylabel('from CPU' if not signed else 'writer CPU')
    ax.set_title(_title(run, what, machine), fontsize=10)
    if cell_labels_fit(n, size, finite):
        for r in range(n):
            for c in range(n):
                v = data[r][c]
                if not math.isnan(v):
                    dark = not signed and norm(v) < 0.6
                    ax.text(c, r, f'{v:.0f}', ha='center', va='center', fontsize=CELL_FONT_PT,
                            color='white' if dark else 'black')
    fig.colorbar(im, ax=ax, label=legend, shrink=0.8, extend=extend)
    return fig


def _ns_matrix(run):
    return run.result['ns'] if run.result.get('ns') and any(
        v is not None for row in run.result['ns'] for v in row) else run.result['ticks']


def _unit(run):
    return 'ns' if run.result.get('ns') and any(
        v is not None for row in run.result['ns'] for v in row) else 'TSC ticks'


def _ipi(plt, run, tsc_hz, machine=None):
    return _heatmap(plt, run, tsc_hz, _ns_matrix(run), 'IPI round trip (median)', _unit(run),
                    machine=machine)


def _c2c(plt, run, tsc_hz, machine=None):
    return _heatmap(plt, run, tsc_hz, _ns_matrix(run), 'cache-line one-way latency (median)',
                    _unit(run), machine=machine)


def _tsc(plt, run, tsc_hz, machine=None):
    return _heatmap(plt, run, tsc_hz, _ns_matrix(run),
                    'TSC offset of reader against writer', _unit(run), signed=True,
                    machine=machine)


LINES_MAX = 16                 # per-CPU histogram lines drawn; past it, the WORST_LINES
WORST_LINES = 3               # CPUs with the latest wake-up


def lines_drawn(per_cpu):
    """The CPUs whose own histogram line is drawn: every one up to
    LINES_MAX CPUs, else the WORST_LINES with the largest sample (256
    lines over one another show nothing; the worst CPUs are the news)."""
    if len(per_cpu) <= LINES_MAX:
        return list(per_cpu)
    worst = sorted(per_cpu, key=lambda c: max(per_cpu[c], default=0), reverse=True)
    return sorted(worst[:WORST_LINES], key=lambda c: list(per_cpu).index(c))


def _timer(plt, run, tsc_hz, machine=None):
    """Log-spaced bins on a log axis: the body and the rare long tail both
    show. Early wake-ups (negative latency) cannot sit on a log axis: they
    are counted in the title."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    per_cpu = run.result.get('latency_ticks', {})
    scale = 1e6 / tsc_hz if tsc_hz else 1.0
    all_ticks = [v for vs in per_cpu.values() for v in vs]
    positive = [v for v in all_ticks if v > 0]
    early = len(all_ticks) - len(positive)
    if positive:
        edges = log_bins(positive, 50)
        _draw_hist(ax, positive, edges, scale, histtype='stepfilled', color='0.85',
                   label='all CPUs')
        for cpu in lines_drawn(per_cpu):
            _draw_hist(ax, [v for v in per_cpu[cpu] if v > 0], edges, scale, histtype='step',
                       label=f'CPU {cpu}' + ('' if len(per_cpu) <= LINES_MAX else ' (worst)'))
        ax.set_xscale('log')
        ax.set_yscale('log')
        ax.legend(fontsize=6, ncol=2)
    ax.set_xlabel('wake-up latency (us)' if tsc_hz else 'wake-up latency (TSC ticks)')
    ax.set_ylabel('samples')
    note = f'; {early} early (< 0) not shown' if early else ''
    ax.set_title(_title(run, f'LAPIC timer wake-up latency{note}', machine), fontsize=10)
    return fig


def _hwlat(plt, run, tsc_hz, machine=None):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    cpus = run.result.get('cpus', [])
    a1.bar(range(len(cpus)), [r['lost_ppm'] or 0 for r in cpus])
    at, labels = tick_cpus([r['cpu'] for r in cpus])
    a1.set_xticks(at)
    a1.set_xticklabels(labels, rotation=90 if max(map(len, labels), default=0) > 2 else 0)
    a1.set_xlabel('CPU')
    a1.set_ylabel('time lost to gaps (ppm of time spun)')
    a1.set_title(_title(run, 'time lost per CPU', machine), fontsize=10)
    scale = 1e6 / tsc_hz if tsc_hz else 1.0
    gaps = [g['gap_ticks'] for gs in run.result.get('gaps', {}).values() for g in gs]
    gaps = [g for g in gaps if g > 0]
    if gaps:
        _draw_hist(a2, gaps, log_bins(gaps, 40), scale)
        a2.set_xscale('log')
        a2.set_yscale('log')
    a2.set_xlabel('gap length (us)' if tsc_hz else 'gap length (TSC ticks)')
    a2.set_ylabel('gaps')
    a2.set_title('gap lengths, all CPUs', fontsize=10)
    return fig


_RENDER = {'ipi': _ipi, 'c2c': _c2c, 'tsc': _tsc, 'timer': _timer, 'hwlat': _hwlat}
