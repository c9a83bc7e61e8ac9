"""Aggregations of runs shared by every target: learning curves."""

import re
from pathlib import Path

import numpy as np

from .._io import write_text
from ..registry import METRICS
from ..runner.result import as_runs_frame
from .figures import integer_ticks
from .style import (PAPER_LABEL, SINGLE_COLUMN, figure_legend, method_colour, panel_grid,
                    paper_kw, save_styled, styled)

__all__ = ["mean_curves", "plot_curves", "paper_models_line", "metric_name"]


def mean_curves(runs, metric):
    """{method: (stages 1..T, mean, std over runs)} from the staged curves (the ``curves``
    column) of a runs frame (:func:`~mlkit.runner.result.runs_frame`; run records are read
    through it), the methods in the frame's order, each curve cut to the shortest run's."""
    runs = as_runs_frame(runs)
    out = {}
    if runs.empty or "curves" not in runs.columns:
        return out
    for method, rows in runs.groupby("method", sort=False):
        curves = [c[metric] for c in rows["curves"] if isinstance(c, dict) and metric in c]
        if not curves:
            continue
        length = min(len(c) for c in curves)
        arr = np.array([c[:length] for c in curves])
        out[method] = (np.arange(1, length + 1), arr.mean(axis=0), arr.std(axis=0))
    return out


def metric_name(metric):
    """The name of ``metric`` on an axis (its ``axis_label``, else its table label):
    "Hamming error" where a table column says "error (ours)" of the Hamming error."""
    meta = METRICS.entry(metric).meta
    return meta.get("axis_label") or meta.get("label", metric)


def paper_models_line(ax, method, written, last):
    """Draw the paper's "``method`` reaches its best with ``written`` models" ("5", ">= 12",
    "> 20") as a dashed vertical line in the method's colour at that number (the paper's
    "paper" line style); a number beyond the curve's ``last`` stage ("> 20" of a 20-model
    curve) is a line at ``last`` topped by a hollow right arrow. Returns the line, or None
    when ``written`` holds no number."""
    match = re.match(r"\s*(>=|≥|>|~)?\s*(\d+(?:\.\d+)?)\s*$", str(written))
    if match is None:
        return None
    rel, n = match.group(1) or "", float(match.group(2))
    rel = {">=": "≥ ", "≥": "≥ ", ">": "> ", "~": "~"}.get(rel, "")
    colour = method_colour(method)
    beyond = rel == "> " and n >= last
    text = (f"{PAPER_LABEL}: {method} not best within {n:g}" if beyond else
            f"{PAPER_LABEL}: {method} best at {rel}{n:g}")
    line = ax.axvline(min(n, last), **paper_kw(colour, kind="line", label=text))
    if beyond:
        ax.plot([last + 0.25], [0.93], marker=">", ms=5, mfc="none", mec=colour, mew=1.2,
                ls="none", transform=ax.get_xaxis_transform(), label="_" + text, zorder=5)
        lo, hi = ax.get_xlim()
        ax.set_xlim(lo, max(hi, last + 0.7))
    return line


@styled
def plot_curves(runs, metric, out_dir, name, *, caption, title="", ylim=None,
                max_stages=None, hline=None, paper=None, paper_models=None, data=None):
    """Learning curves (metric vs number of base models), mean line with a ±1 sd band,
    in the figure style of :mod:`mlkit.report.style`, from the ``curves`` of a runs frame
    (or run records; :func:`mean_curves`).

    Each method is drawn in its :func:`~mlkit.report.style.method_colour`; the y-axis is
    scaled to the data unless ``ylim`` is given (it is then widened to hold every mean).
    ``hline``: optional (label, value) drawn dotted, e.g. a baseline's Mean-AP.
    ``paper``: {method: the paper's value of ``metric`` at the last stage}, drawn as the
    style's hollow "paper" marker there. ``paper_models``: {method: the paper's number of
    models at which the method reaches its best, as written ("5", ">= 12", "> 20")}, drawn
    as the style's dashed "paper" line at that number (:func:`paper_models_line`). ``data``:
    what the runs ran on, the legend's
    title (e.g. "ours (synthetic data)"). The image holds a one-line ``title`` (default
    "<metric> vs number of base models"); ``caption`` goes to ``<name>.md`` beside it.
    Returns the files written (the PNG, PDF and caption).
    """
    curves = mean_curves(runs, metric)
    if not curves:
        return []
    label = metric_name(metric)
    fig, (ax,) = panel_grid(1, width=1.4 * SINGLE_COLUMN,
                            panel_height=3.4 if paper_models else 2.8)
    last = {}
    for method, (x, mean, sd) in curves.items():
        if max_stages:
            x, mean, sd = x[:max_stages], mean[:max_stages], sd[:max_stages]
        colour = method_colour(method)
        ax.plot(x, mean, marker="o", ms=3, color=colour, label=method)
        ax.fill_between(x, mean - sd, mean + sd, color=colour, alpha=0.15, lw=0)
        last[method] = x[-1]
    if hline is not None:
        # dotted: a dashed line is the paper's in every figure (style.paper_kw)
        ax.axhline(hline[1], ls=":", color=method_colour(hline[0]), lw=1.2, label=hline[0])
    for method, value in (paper or {}).items():
        if method in last:
            ax.plot([last[method]], [value], **paper_kw(method_colour(method)))
    for method, written in (paper_models or {}).items():
        if method in last:
            paper_models_line(ax, method, written, last[method])
    ax.set_xlabel("number of base models")
    integer_ticks(ax.xaxis)
    ax.set_ylabel(label)
    if ylim:
        lo, hi = ax.get_ylim()          # autoscaled to the data: a fixed range never clips
        ax.set_ylim(min(ylim[0], lo), max(ylim[1], hi))
    ax.grid(alpha=0.3)
    figure_legend(fig, [ax], ncols=2 if paper_models else 3, title=data)
    title = title or f"{label} vs number of base models"
    files = save_styled(fig, out_dir, name, title=title)
    if caption:
        files.append(write_text(Path(out_dir) / f"{name}.md", f"{title}\n\n{caption}\n"))
    return files
