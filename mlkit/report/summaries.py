"""Aggregations of run records shared by every target: mean +- CI tables and learning curves."""

import numpy as np
import pandas as pd

from ..metrics import mean_confidence_interval
from ..registry import METRICS
from .figures import new_figure, save_figure
from .tables import format_mean_ci

__all__ = ["metric_table", "mean_curves", "plot_curves"]


def _records_by_method(records):
    out = {}
    for r in records:
        out.setdefault(r["method"], []).append(r)
    return out


def _paper_value(reported, dataset, method, metric):
    """``reported[dataset][method][metric]``, else ``reported[method][metric]``, else None."""
    for scope in (reported.get(dataset), reported):
        entry = (scope or {}).get(method)
        if isinstance(entry, dict) and metric in entry:
            return entry[metric]
    return None


def metric_table(records, metrics, reported=None, *, spread="ci", scale=1.0):
    """One row per (dataset, method): each metric as mean ± 95% CI over runs, with the paper's
    value beside it when ``reported[dataset][method][metric]`` (or ``reported[method][metric]``)
    is given, plus the number of runs and the mean fit time. ``spread``: "ci" (95% Student-t
    half-width) or "std" (sample standard deviation, as the SparseMI tables); ``scale``
    multiplies the metric (100 for percentages)."""
    reported = reported or {}
    rows = []
    groups = {}
    for r in records:
        groups.setdefault((r["dataset"], r["method"]), []).append(r)
    for (dataset, method), recs in groups.items():
        row = {"dataset": dataset, "method": method}
        for m in metrics:
            label = METRICS.entry(m).meta.get("label", m)
            values = scale * np.array([r["metrics"][m] for r in recs], dtype=float)
            if spread == "std":
                mean, half = float(values.mean()), float(values.std(ddof=1)) \
                    if len(values) > 1 else float("nan")
            else:
                mean, half = mean_confidence_interval(values)
            paper = _paper_value(reported, dataset, method, m)
            digits = 2 if scale != 1 else 3
            if paper is not None:
                row[f"{label} (paper)"] = format_mean_ci(paper, None, digits)
            row[f"{label} (ours)"] = format_mean_ci(mean, half, digits)
        n_xv = [r["model"]["n_xv"] for r in recs if "n_xv" in r.get("model", {})]
        if n_xv:    # expansion vectors of kernel models (SparseMI's second table row)
            paper = _paper_value(reported, dataset, method, "n_xv")
            if paper is not None:
                row["#XV (paper)"] = paper if isinstance(paper, str) else f"{paper:.1f}"
            row["#XV (ours)"] = f"{np.mean(n_xv):.1f}"
        row["runs"] = len(recs)
        row["fit time (s)"] = float(np.mean([r["timings"]["fit_s"] for r in recs]))
        rows.append(row)
    return pd.DataFrame(rows)


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
        (line,) = ax.plot(x, mean, marker="o", ms=3, label=method)
        ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15, lw=0)
    if hline is not None:
        ax.axhline(hline[1], ls="--", color="k", lw=1, label=hline[0])
    ax.set_xlabel("number of base models")
    ax.set_ylabel(label)
    if ylim:
        ax.set_ylim(*ylim)
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, out_dir, name, caption=caption)
