"""PNG pictures of workload results (btlib.workloads) with matplotlib.

    from btlib import wlplot
    wlplot.render(run, tsc_hz, 'out/ipi-run2.png')   # the picture for one run

Matrices (ipi, c2c, tsc) become heat maps with the value in every cell,
timer a wake-up latency histogram per CPU (log-scaled, like cyclictest's),
hwlat the time lost per CPU next to the distribution of gap lengths.
matplotlib is imported on first use: MissingMatplotlib says how to get it.
"""

from __future__ import annotations

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
    all_us = [v * scale for vs in per_cpu.values() for v in vs]
    positive = [v for v in all_us if v > 0]
    early = len(all_us) - len(positive)
    if positive:
        lo = math.log10(max(min(positive), 0.1))
        hi = max(math.log10(max(positive)), lo + 1)
        edges = [10 ** (lo + (hi - lo) * i / 50) for i in range(51)]
        ax.hist(positive, bins=edges, histtype='stepfilled', color='0.85', label='all CPUs')
        for cpu, vs in per_cpu.items():
            ax.hist([v * scale for v in vs if v > 0], bins=edges, histtype='step',
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
    gaps = [g['gap_ticks'] * scale for gs in run.result.get('gaps', {}).values() for g in gs]
    if gaps:
        lo, hi = math.log10(max(min(gaps), 1e-3)), math.log10(max(gaps))
        edges = [10 ** (lo + (hi - lo) * i / 40) for i in range(41)] if hi > lo else 10
        a2.hist(gaps, bins=edges)
        a2.set_xscale('log')
        a2.set_yscale('log')
    a2.set_xlabel('gap length (us)' if tsc_hz else 'gap length (TSC ticks)')
    a2.set_ylabel('gaps')
    a2.set_title('gap lengths, all CPUs', fontsize=10)
    return fig


_RENDER = {'ipi': _ipi, 'c2c': _c2c, 'tsc': _tsc, 'timer': _timer, 'hwlat': _hwlat}
