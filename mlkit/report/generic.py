"""The generic renderer ``metric-table``: one row per dataset x method, each metric as mean
± spread over runs (k-fold CV: over its repetitions, each the mean of its folds, as papers
report "mean ± std over ten runs" of a 10 x 10-fold CV; over the folds while fewer than two
repetitions are complete) with the paper's number beside it, the number of runs and the fit
time.

A paper uses it by YAML alone (``render: metric-table``, the default), and ``mlkit train``
draws every config with it unless the config names another renderer. Its options
(``report:`` of the config) are :class:`MetricTableOptions`.
"""

from typing import Literal, Optional

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from ..runner import folds_per_repeat
from ..runner.result import runs_frame
from ..stats import complete_repeats, mean_spread, repetition_values
from ..registry import METRICS
from ..targets import Rendered, register_renderer
from .summaries import plot_curves
from .tables import format_mean_ci, write_table

__all__ = ["MetricTableOptions", "render_metric_table", "metric_rows", "row_values",
           "counted_records", "counted_runs", "over_runs"]


class MetricTableOptions(BaseModel):
    """Options of the ``metric-table`` renderer (a config's ``report:`` block)."""

    model_config = ConfigDict(extra="forbid")

    spread: Literal["ci", "std"] = "ci"     # 95% Student-t half-width, or the sample sd
    scale: float = Field(1.0, gt=0)          # multiplies every metric (100: percentages)
    digits: Optional[int] = Field(None, ge=0, le=6)   # decimals (default 2 scaled, else 3)
    extras: list[str] = Field(default_factory=list)   # run-record model facts to average
    chosen: list[str] = Field(default_factory=list)   # grid-chosen parameters to summarise
    caption: str = ""                        # said after the standard caption


def counted_records(records, n_folds=1):
    """The records a table row counts: with a k-fold CV (``n_folds`` > 1) and two or more
    complete repetitions, the folds of the complete repetitions only, so that a repetition
    still in progress moves neither the metric nor the runs, fit-time and extras cells
    beside it; otherwise all of them (a single CV, or fewer than two repetitions complete).

    Examples
    --------
    >>> recs = [{"repeat": r, "fold": f} for r, f in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]]
    >>> [(r["repeat"], r["fold"]) for r in counted_records(recs, n_folds=2)]
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    return counted_runs(runs_frame(records), n_folds)["record"].tolist()


def counted_runs(runs, n_folds=1):
    """:func:`counted_records` of a runs frame (:func:`~mlkit.runner.runs_frame`): its rows a
    table row counts."""
    complete = set(complete_repeats(runs, n_folds))
    if n_folds <= 1 or len(complete) < 2:
        return runs
    return runs[runs["repeat"].isin(complete)]


def row_values(runs, metric, scale=1.0, n_folds=1):
    """The values a table row's mean ± spread is over, from the runs frame ``runs``
    (:func:`~mlkit.runner.result.runs_frame`) of one dataset and method: one per complete
    repetition (:func:`~mlkit.stats.repetition_values`: a k-fold CV repetition counts as the
    mean of its ``n_folds`` folds); while fewer than two repetitions of a k-fold CV are
    complete (a single CV, or a long run in progress), its recorded folds."""
    values = list(repetition_values(runs, metric, scale, n_folds).values())
    if n_folds > 1 and len(values) < 2:
        values = [scale * v for v in runs[metric]] if len(runs) else []
    return np.array(values, dtype=float)


def over_runs(result):
    """What a row's spread is over: runs, or the repetitions of a k-fold CV protocol."""
    cv = [label for label in result.datasets
          if folds_per_repeat(result.spec, label) > 1]
    if not cv:
        return "runs"
    return (f"runs; on {', '.join(cv)} (k-fold CV) over its complete repetitions, each the "
            "mean of its k folds, or over its folds while fewer than two repetitions are "
            "complete; the runs, fit s and other columns count the same folds")


def _paper_cell(pv, digits):
    if pv is None:
        return "-"
    return format_mean_ci(pv.value, pv.spread, digits)


def _chosen_cell(values):
    values = [v for v in values if isinstance(v, (int, float))]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{np.mean(values):.3g} [{lo:g}, {hi:g}]"


def metric_rows(result, spec, opts):
    """(rows as dicts, headline figures, footnotes) of the table."""
    run_spec = result.spec
    digits = opts.digits if opts.digits is not None else (2 if opts.scale != 1 else 3)
    rows, figures, edges = [], {}, {}
    seen = set()
    groups = dict(iter(result.frame.groupby(["dataset", "method"], sort=False)))
    for ds in run_spec.datasets:
        for m in run_spec.methods:
            runs = groups.get((ds.display, m.display))
            if runs is None:
                continue
            seen.add(ds.display)
            row = {"dataset": ds.display}
            if ds.role:
                row["role"] = ds.role
            row["method"] = m.display
            n_folds = folds_per_repeat(run_spec, ds.display)
            runs = counted_runs(runs.sort_values(["repeat", "fold"], kind="stable"), n_folds)
            for metric in run_spec.metrics:
                label = METRICS.entry(metric).meta.get("label", metric)
                mean, half = mean_spread(row_values(runs, metric, opts.scale, n_folds),
                                         opts.spread)
                pv = spec.paper_value(ds.display, m.display, metric, role=ds.role)
                row[f"{label} (paper)"] = _paper_cell(pv, digits)
                row[f"{label} (ours)"] = format_mean_ci(mean, half, digits)
                figures[f"{metric}.{ds.display}.{m.display}"] = mean
            for key in opts.extras:
                vals = runs[key].dropna().tolist() if key in runs else []
                pv = spec.paper_value(ds.display, m.display, key, role=ds.role)
                row[f"{key} (paper)"] = _paper_cell(pv, 1)
                row[f"{key} (ours)"] = f"{np.mean(vals):.1f}" if vals else "-"
            grid = ds.grid_for(m)
            for key in opts.chosen:
                vals = [c.get(key) for c in runs["chosen"]]
                row[f"chosen {key}"] = _chosen_cell(vals)
            for key, values in grid.items():
                picked = [c.get(key) for c in runs["chosen"]]
                numeric = [v for v in values if isinstance(v, (int, float))]
                if len(numeric) < 3:        # with two values every choice is an edge
                    continue
                lo, hi = min(numeric), max(numeric)
                hits = [sum(v == edge for v in picked if v is not None) for edge in (lo, hi)]
                if any(hits):
                    edges.setdefault((m.display, key, lo, hi), []).append(
                        (ds.display, *hits, len(runs)))
            row["runs"] = len(runs)
            row["fit s"] = float(np.mean(runs["fit_s"].to_numpy(float)))
            rows.append(row)
    # what the paper reports on data we could not run (e.g. "not public") keeps its row
    for scope, entry in spec.reported.items():
        if scope in seen or scope in {d.role for d in run_spec.datasets}:
            continue
        if isinstance(entry, str):
            rows.append({"dataset": scope, "method": "(all)",
                         **{f"{METRICS.entry(x).meta.get('label', x)} (paper)": entry
                            for x in run_spec.metrics}})
    return rows, figures, [edge_note(*k, v) for k, v in edges.items()]


def edge_note(method, key, lo, hi, hits):
    """The footnote on a grid parameter chosen at an edge of its grid [lo, hi] by
    ``method``'s runs: ``hits`` = [(dataset, runs at lo, runs at hi, runs)] over the sets
    where it was; one note per method and parameter (on one set: "in n of N runs"; on
    several: "in set n/N, ...")."""
    if len(hits) == 1:
        ds, *_, runs = hits[0]
        at = [f"the {side} edge {edge:g} in {h}" for side, edge, h in
              (("lower", lo, hits[0][1]), ("upper", hi, hits[0][2])) if h]
        return (f"{method} on {ds}: {key} chosen at {' and '.join(at)} of {runs} runs "
                f"(grid [{lo:g}, {hi:g}])")
    at = [f"the {side} edge {edge:g} in "
          + ", ".join(f"{h[0]} {h[i]}/{h[3]}" for h in hits if h[i])
          for i, (side, edge) in enumerate((("lower", lo), ("upper", hi)), start=1)
          if any(h[i] for h in hits)]
    return f"{method}: {key} chosen at {' and '.join(at)} runs (grid [{lo:g}, {hi:g}])"


@register_renderer("metric-table", options=MetricTableOptions,
                   summary="metric per dataset x method, paper beside ours, mean ± spread")
def render_metric_table(result, out_dir, spec):
    """Metric per dataset x method, paper beside ours, mean ± spread, #runs (and learning
    curves when the runs recorded them)."""
    opts = spec.options
    rows, figures, notes = metric_rows(result, spec, opts)
    spread = "± sample sd" if opts.spread == "std" else "± 95% t-interval"
    caption = (f"{spec.title or spec.target}. Paper vs ours (ours: mean {spread} over "
               f"{over_runs(result)}). Data: {result.provenance}.")
    if opts.caption:
        caption += f" {opts.caption}"
    if notes:
        caption += " Notes: " + "; ".join(notes) + "."
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    files = [out_dir / "table.md", out_dir / "table.csv", out_dir / "table.tex"]
    if result.spec.curves:
        for metric in result.spec.metrics:
            for label, data in result.datasets.items():
                files += plot_curves(
                    result.records_of(dataset=label), metric, out_dir,
                    f"curves_{metric}" + (f"_{label}" if len(result.datasets) > 1 else ""),
                    caption=f"{spec.title or spec.target}. Data: {data.provenance}"
                            f"{result.caption_note}.")
    return Rendered(text, figures, files)
