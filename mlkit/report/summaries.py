"""Aggregations of run records shared by every target: learning curves."""

import numpy as np

from ..registry import METRICS
from .figures import integer_ticks, method_colour, new_figure, save_figure

__all__ = ["mean_curves", "plot_curves"]


def _records_by_method(records):
    out = {}
    for r in records:
        out.setdefault(r["method"], []).append(r)
    return out


def mean_curves(records, metric):
    """{method: (stages 1..T, mean, std over runs)} from the records' staged curves."""
    out = {}
    for method, recs in _records_by_method(records).items():
        curves = [r["curves"][metric] for r in recs if metric in r.get("curves", {})]
        if not curves:
            continue
        length = min(len(c) for c in curves)
        arr = np.array([c[:length] for c in curves])
        out[method] = (np.arange(1, length + 1), arr.mean(axis=0), arr.std(axis=0))
    return out


def plot_curves(records, metric, out_dir, name, *, caption, title="", ylim=None,
                max_stages=None, hline=None):
    """Learning curves (metric vs number of base models), mean line with a ±1 sd band.

    Each method is drawn in its :func:`~mlkit.report.figures.method_colour`; the y-axis is
    scaled to the data unless ``ylim`` is given (it is then widened to hold every mean).
    ``hline``: optional (label, value) drawn dashed, e.g. a baseline's Mean-AP.
    """
    curves = mean_curves(records, metric)
    if not curves:
        return []
    label = METRICS.entry(metric).meta.get("label", metric)
    fig, (ax,) = new_figure(width=5.0, height=3.6)
    for method, (x, mean, sd) in curves.items():
        if max_stages:
            x, mean, sd = x[:max_stages], mean[:max_stages], sd[:max_stages]
        colour = method_colour(method)
        ax.plot(x, mean, marker="o", ms=3, color=colour, label=method)
        ax.fill_between(x, mean - sd, mean + sd, color=colour, alpha=0.15, lw=0)
    if hline is not None:
        ax.axhline(hline[1], ls="--", color=method_colour(hline[0]), lw=1, label=hline[0])
    ax.set_xlabel("number of base models")
    integer_ticks(ax.xaxis)
    ax.set_ylabel(label)
    if ylim:
        lo, hi = ax.get_ylim()          # autoscaled to the data: a fixed range never clips
        ax.set_ylim(min(ylim[0], lo), max(ylim[1], hi))
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, out_dir, name, caption=caption)
