"""Why MSSBoost's error curve on the synthetic set keeps falling past ~5 models (Yan, Tesic &
Smith, KDD 2007, Sec. 6.1 and Fig. 4: "MSSBoost converges to its optimal performance with
only 5 base models"): fig4's literal MSSBoost with one change per row
(``mssboost/convergence``; no table or figure of the paper).

Each row is read against the reference row (fig4's settings) on the same splits: the number
of models to come within ``converge_tol`` of the minimum (fig4's measure, on the mean curve
and run by run), the error at the paper's 5 models, and how many of the generator's true
boundaries the selected stumps have found, from the stumps every run records (no model is
refitted).
"""

import inspect

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from ...._errors import MlkitError
from ....registry import METHODS
from ....report import format_mean_ci, write_table
from ....report.style import DOUBLE_COLUMN, figure_legend, panel_grid, save_styled, styled
from ....runner.result import as_runs_frame, runs_of
from ....stats import mean_confidence_interval, paired_ttest, run_values
from ....targets import Rendered, register_renderer
from ....verify import paper_alpha
from ..data import MSSBOOST_SYNTHETIC_BOXES
from .synthetic import models_to_best

PAPER = "mssboost"
METRIC = "hamming_error"
#: one colour per row, in the config's order (every row is an MSSBoost)
ROW_COLOURS = ("black", "tab:purple", "tab:orange", "tab:red", "tab:cyan", "tab:blue",
               "tab:green", "tab:brown")


class ConvergenceOptions(BaseModel):
    """``report:`` of mssboost/convergence."""

    model_config = ConfigDict(extra="forbid")
    reference: str = "MSSBoost"                 # the row every other row is paired with
    converge_tol: float = Field(0.01, gt=0)     # fig4's "within 0.01 of the minimum"
    early: int = Field(5, ge=1)                 # the paper's "only 5 base models"
    edge_tol: float = Field(0.15, gt=0)         # a stump within this of a true boundary


def true_boundaries(boxes=MSSBOOST_SYNTHETIC_BOXES):
    """The distinct sides of the label boxes (x0, x1, y0, y1) as (feature, value) pairs:
    the axis-parallel stumps that together are the Bayes classifier of every label."""
    xs = sorted({v for b in boxes for v in b[:2]})
    ys = sorted({v for b in boxes for v in b[2:]})
    return [(0, v) for v in xs] + [(1, v) for v in ys]


def boundaries_found(base_models, boundaries, tol):
    """After each of the T selected stumps (``SubspaceModel.describe`` records), how many
    of ``boundaries`` some stump so far lies within ``tol`` of: an int array of shape (T,)."""
    found, out = set(), []
    for b in base_models:
        for j, (feature, value) in enumerate(boundaries):
            if b["feature"] == feature and abs(b["threshold"] - value) <= tol:
                found.add(j)
        out.append(len(found))
    return np.array(out, dtype=int)


def _curve(record):
    return np.asarray(record["curves"][METRIC], dtype=float)


def run_facts(record, *, tol, early, boundaries, edge_tol):
    """One run's measures: models to within ``tol`` of its own curve's minimum, its error
    at ``early`` models and at the last, the true boundaries found by ``early`` models and
    whether all were by the last, and which were not (``missed``, one bool per side); and
    the error's change from ``early`` models to the last,
    in all (``fall``) and summed over the steps whose model found a new true boundary
    (``fall_new``)."""
    curve = _curve(record)
    stumps = record["model"]["base_models"]
    found = boundaries_found(stumps, boundaries, edge_tol)
    step = np.diff(curve)[early - 1:]                  # the change made by models early+1..T
    new = np.diff(found)[early - 1:] > 0
    return {"reach": models_to_best(curve, tol), "early": float(curve[early - 1]),
            "last": float(curve[-1]), "found_early": int(found[early - 1]),
            "all_found": bool(found[-1] == len(boundaries)),
            "fall": float(curve[early - 1] - curve[-1]), "fall_new": float(-step[new].sum()),
            "n_new": int(new.sum()), "n_steps": int(new.size),
            "missed": [boundaries_found(stumps, [side], edge_tol)[-1] == 0
                       for side in boundaries]}


def convergence_rows(runs, methods, changes, *, reference, tol, early, edge_tol,
                     boundaries=None):
    """The table rows and headline figures: per method (``methods`` in order, ``reference``
    first), the models to within ``tol`` of the mean curve's minimum and that minimum;
    run by run the mean models to within ``tol`` of the run's own minimum and the mean
    error at ``early`` models, each paired with ``reference`` on the splits both have
    (two-sided paired t-test, :func:`mlkit.stats.paired_ttest` at the paper's alpha); the
    error after the last model; the mean number of true boundaries found by ``early``
    models and the runs that found all by the last. ``runs``: the runs frame (or records);
    ``changes``: {method: what changed}."""
    boundaries = boundaries or true_boundaries()
    frame = as_runs_frame(runs)
    base = runs_of(frame, method=reference)
    if not base:
        raise MlkitError(f"mssboost/convergence: no runs of the reference row {reference!r}")
    kw = dict(tol=tol, early=early, boundaries=boundaries, edge_tol=edge_tol)

    def facts(recs):
        """{(repeat, fold): run_facts} (a duplicate split is an error, as in run_values)."""
        keys = list(run_values(recs, lambda r: 0))
        return dict(zip(keys, (run_facts(r, **kw) for r in sorted(recs, key=_key))))

    base_facts = facts(base)

    alpha = paper_alpha(PAPER)
    rows, figures = [], {}
    for method in [reference] + [m for m in methods if m != reference]:
        mine = runs_of(frame, method=method)
        if not mine:
            continue
        curves = np.array([_curve(r) for r in mine])
        mean = curves.mean(axis=0)
        reach_mean = models_to_best(mean, tol)
        per_run = facts(mine)
        row = {"row": method, "change": changes.get(method, "-"),
               f"models to {tol:g} (mean curve)": reach_mean,
               "min error (mean curve)": f"{mean.min():.3f}"}
        figures[f"models_to_best.{method}"] = reach_mean
        figures[f"best_error.{method}"] = float(mean.min())
        for what, label, better_low in (("reach", f"models to {tol:g} (per run)", True),
                                        ("early", f"error @{early}", True)):
            values = [f[what] for f in per_run.values()]
            m, h = mean_confidence_interval(values)
            text = f"{m:.1f} ± {h:.1f}" if what == "reach" else format_mean_ci(m, h)
            figures[f"{what}.{method}"] = m
            if method == reference:
                row[label], row[f"p ({what})"] = text, "-"
                continue
            test = paired_ttest({k: f[what] for k, f in per_run.items()},
                                {k: f[what] for k, f in base_facts.items()}, alpha=alpha,
                                missing="drop", greater_is_better=not better_low)
            row[label], row[f"p ({what})"] = f"{text} ({test.diff:+.3g})", f"{test.p:.2g}"
            figures[f"diff.{what}.{method}"] = test.diff
            figures[f"p.{what}.{method}"] = test.p
        row[f"error @{curves.shape[1]}"] = format_mean_ci(
            *mean_confidence_interval(curves[:, -1]))
        found = [f["found_early"] for f in per_run.values()]
        every = sum(f["all_found"] for f in per_run.values())
        row[f"boundaries by {early} (of {len(boundaries)})"] = f"{np.mean(found):.2f}"
        row[f"runs with all by {curves.shape[1]}"] = f"{every}/{len(per_run)}"
        missed = np.sum([f["missed"] for f in per_run.values()], axis=0)
        row[f"runs missing it by {curves.shape[1]}"] = ", ".join(
            f"{'xy'[feature]} = {value:g}: {n}" for (feature, value), n in zip(boundaries, missed)
            if n)
        for (feature, value), n in zip(boundaries, missed):
            figures[f"missed.{method}.{'xy'[feature]}={value:g}"] = int(n)
        figures[f"found_early.{method}"] = float(np.mean(found))
        figures[f"all_found.{method}"] = every / len(per_run)
        # where the fall after `early` models happens: at the steps that found a new true
        # boundary (their mean change) or at the others (pooled over the runs)
        tot = {k: sum(f[k] for f in per_run.values()) for k in ("fall", "fall_new", "n_new",
                                                                "n_steps")}
        new_step = -tot["fall_new"] / tot["n_new"] if tot["n_new"] else float("nan")
        other = (-(tot["fall"] - tot["fall_new"]) / (tot["n_steps"] - tot["n_new"])
                 if tot["n_steps"] > tot["n_new"] else float("nan"))
        share = tot["fall_new"] / tot["fall"] if tot["fall"] > 0 else float("nan")
        row[f"change per step after {early}: new boundary / other"] = \
            f"{new_step:+.4f} (n={tot['n_new']}) / {other:+.4f}"
        row[f"share of the fall {early}->{curves.shape[1]} at new boundaries"] = f"{share:.2f}"
        figures[f"step_new.{method}"] = new_step
        figures[f"step_other.{method}"] = other
        figures[f"share_new.{method}"] = share
        rows.append(row)
    return rows, figures


def _key(record):
    return (int(record["repeat"]), int(record.get("fold", 0)))


def row_changes(spec, reference):
    """{row: the parameters it sets other than the reference row, "k = v (fig4: w)"}."""
    ref = next((m for m in spec.methods if m.display == reference), None)
    if ref is None:
        raise MlkitError(f"mssboost/convergence: report.reference {reference!r} names no "
                         f"method of the config ({', '.join(m.display for m in spec.methods)})")
    defaults = inspect.signature(METHODS.get(ref.name)).parameters
    out = {}
    for m in spec.methods:
        if m.name != ref.name:
            raise MlkitError(f"mssboost/convergence: row {m.display!r} is {m.name}, not the "
                             f"reference's {ref.name}: a row changes one setting")
        keys = sorted(set(m.params) | set(ref.params))
        diff = [(k, m.params.get(k, defaults[k].default), ref.params.get(k, defaults[k].default))
                for k in keys]
        out[m.display] = (", ".join(f"{k} = {a} (fig4: {b})" for k, a, b in diff if a != b)
                          or "none: fig4's settings")
    return out


def _plot(runs, methods, boundaries, edge_tol, tol):
    """(a) the mean error curves with each one's models-to-``tol`` marked; (b) the mean
    number of true boundaries found among the first t models."""
    fig, (ax_err, ax_found) = panel_grid(2, ncols=2, width=DOUBLE_COLUMN, panel_height=2.8)
    frame = as_runs_frame(runs)
    for method, colour in zip(methods, ROW_COLOURS):
        mine = runs_of(frame, method=method)
        if not mine:
            continue
        curves = np.array([_curve(r) for r in mine])
        t = np.arange(1, curves.shape[1] + 1)
        mean = curves.mean(axis=0)
        reach = models_to_best(mean, tol)
        ax_err.plot(t, mean, color=colour, lw=1.3, label=method)
        ax_err.plot([reach], [mean[reach - 1]], "o", color=colour, ms=5, mfc="none")
        found = np.array([boundaries_found(r["model"]["base_models"], boundaries, edge_tol)
                          for r in mine])
        ax_found.plot(t, found.mean(axis=0), color=colour, lw=1.3, label=method)
    ax_err.set_xlabel("number of base models")
    ax_err.set_ylabel("test Hamming error (mean)")
    ax_err.set_title(f"(a) error; circle: first T within {tol:g} of the minimum")
    ax_found.axhline(len(boundaries), color="grey", lw=0.8, ls=":")
    ax_found.set_xlabel("number of base models")
    ax_found.set_ylabel(f"true boundaries found (of {len(boundaries)})")
    ax_found.set_title(f"(b) stumps within {edge_tol:g} of a true boundary")
    for ax in (ax_err, ax_found):
        ax.set_xticks([1, 5, 10, 15, 20])
        ax.grid(alpha=0.3)
    figure_legend(fig, [ax_err], ncols=3, title="ours: synthetic data (reconstructed generator)")
    return fig


@register_renderer("mssboost/convergence", options=ConvergenceOptions)
@styled
def render_convergence(result, out_dir, spec):
    """The table of every row against fig4's MSSBoost and the figure of their error curves
    and boundaries found."""
    opts = spec.options
    methods = [m.display for m in result.spec.methods]
    changes = row_changes(result.spec, opts.reference)
    boundaries = true_boundaries()
    rows, figures = convergence_rows(result.frame, methods, changes,
                                     reference=opts.reference, tol=opts.converge_tol,
                                     early=opts.early, edge_tol=opts.edge_tol,
                                     boundaries=boundaries)
    fig = _plot(result.frame, methods, boundaries, opts.edge_tol, opts.converge_tol)
    files = save_styled(fig, out_dir, "convergence", title=spec.title)
    sides = ", ".join(f"{'xy'[f]} = {v:g}" for f, v in boundaries)
    caption = (f"Data: {result.dataset.provenance}{result.caption_note}. No table or figure "
               f"of the paper: fig4's literal MSSBoost (T = 20 stumps, rd = 0.1, rf = 1/2, zero "
               f"start) with one change per row, on the same {result.spec.protocol.repeats} "
               f"random 75/25 splits. 'models to {opts.converge_tol:g}': first T whose error is "
               f"within {opts.converge_tol:g} of the minimum over T = 1..20, of the mean curve "
               "(fig4's measure) and of each run's own curve (mean ± 95% t-interval); "
               f"error: test Hamming error, mean ± 95% t-interval; in brackets the mean paired "
               f"difference to the '{opts.reference}' row, p: two-sided paired t-test over the "
               f"splits. Boundaries: the generator's true label-box sides ({sides}); a "
               f"selected stump finds one when its threshold is within {opts.edge_tol:g} of it; 'runs "
               "missing it': the runs none of whose stumps found that side. After "
               f"{opts.early} models, the mean error change at a step whose model found a new "
               "side (n such steps over all runs) and at the other steps, and the share of "
               f"the error's fall from {opts.early} models to the last made at the new-side "
               "steps.")
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, files + [out_dir / "table.md"])
