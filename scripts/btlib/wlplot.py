"""PNG pictures of workload results (btlib.workloads) with matplotlib.

    from btlib import wlplot
    wlplot.render(run, tsc_hz, 'out/ipi-run2.png')   # the picture for one run

Matrices (ipi, c2c, tsc) become heat maps with the value in every cell,
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


class MissingMatplotlib(RuntimeError):
    """matplotlib is not installed."""


def _plt():
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingMatplotlib('PNG output needs matplotlib: apt-get install python3-matplotlib '
                                '(or scripts/install-deps --test)') from None
    return plt


def can_render(name: str) -> bool:
    return name in _RENDER


def render(run, tsc_hz: int, path: str) -> None:
    """Write the picture of `run` (a btlib.workloads.Run) to path."""
    plt = _plt()
    fig = _RENDER[run.name](plt, run, tsc_hz)
    fig.savefig(path, dpi=110, bbox_inches='tight')
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


def _title(run, what):
    number = f' run {run.number}' if run.number is not None else ''
    return f'{run.name}{number}: {what}'


def _heatmap(plt, run, tsc_hz, values, what, unit, signed=False):
    n = len(values)
    size = max(4.0, 0.42 * n + 2)
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    data = [[math.nan if v is None else v for v in row] for row in values]
    finite = [abs(v) for row in data for v in row if not math.isnan(v)]
    top = max(finite, default=1.0) or 1.0
    if signed:
        im = ax.imshow(data, cmap='coolwarm', vmin=-top, vmax=top)
    else:
        im = ax.imshow(data, cmap='viridis', vmin=0, vmax=top)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel('to CPU' if not signed else 'reader CPU')
    ax.set_ylabel('from CPU' if not signed else 'writer CPU')
    ax.set_title(_title(run, what), fontsize=10)
    if n <= 24:
        for r in range(n):
            for c in range(n):
                v = data[r][c]
                if not math.isnan(v):
                    ax.text(c, r, f'{v:.0f}', ha='center', va='center', fontsize=6,
                            color='white' if not signed and v < top * 0.6 else 'black')
    fig.colorbar(im, ax=ax, label=unit, shrink=0.8)
    return fig


def _ns_matrix(run):
    return run.result['ns'] if run.result.get('ns') and any(
        v is not None for row in run.result['ns'] for v in row) else run.result['ticks']


def _unit(run):
    return 'ns' if run.result.get('ns') and any(
        v is not None for row in run.result['ns'] for v in row) else 'TSC ticks'


def _ipi(plt, run, tsc_hz):
    return _heatmap(plt, run, tsc_hz, _ns_matrix(run), 'IPI round trip (median)', _unit(run))


def _c2c(plt, run, tsc_hz):
    return _heatmap(plt, run, tsc_hz, _ns_matrix(run), 'cache-line one-way latency (median)',
                    _unit(run))


def _tsc(plt, run, tsc_hz):
    return _heatmap(plt, run, tsc_hz, _ns_matrix(run),
                    'TSC offset of reader against writer', _unit(run), signed=True)


def _timer(plt, run, tsc_hz):
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
        for cpu, vs in per_cpu.items():
            _draw_hist(ax, [v for v in vs if v > 0], edges, scale, histtype='step',
                       label=f'CPU {cpu}')
        ax.set_xscale('log')
        ax.set_yscale('log')
        if len(per_cpu) <= 16:
            ax.legend(fontsize=6, ncol=2)
    ax.set_xlabel('wake-up latency (us)' if tsc_hz else 'wake-up latency (TSC ticks)')
    ax.set_ylabel('samples')
    note = f'; {early} early (< 0) not shown' if early else ''
    ax.set_title(_title(run, f'LAPIC timer wake-up latency{note}'), fontsize=10)
    return fig


def _hwlat(plt, run, tsc_hz):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    cpus = run.result.get('cpus', [])
    a1.bar([str(r['cpu']) for r in cpus], [r['lost_ppm'] or 0 for r in cpus])
    a1.set_xlabel('CPU')
    a1.set_ylabel('time lost to gaps (ppm of time spun)')
    a1.set_title(_title(run, 'time lost per CPU'), fontsize=10)
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
