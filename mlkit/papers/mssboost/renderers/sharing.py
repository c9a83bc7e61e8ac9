"""The sharing hypothesis of MSSBoost (Yan, Tesic & Smith, KDD 2007, Sec. 1) under control:
MSSBoost against RSBag, NSBoost and the Baseline on the shared-concepts generator as the
labels' co-occurrence strength grows (``mssboost/sharing``; no table or figure of the paper).
"""

import inspect

import numpy as np
import pandas as pd

from ....report import format_mean_ci, write_table
from ....report.style import (SINGLE_COLUMN, figure_legend, method_colour, panel_grid,
                              save_styled, styled)
from ....stats import mean_confidence_interval, run_values
from ....targets import Rendered, register_renderer
from ....runner.result import rows_of, runs_of
from ..data import make_shared_concepts, within_group_phi
from .real import INTERCEPT, _mean_metric, _paired

#: (ensemble, against): the gaps the target reports, in the figure's order
GAPS = (("MSSBoost", "RSBag"), (INTERCEPT, "RSBag"), ("MSSBoost", "NSBoost"))


def paired_gap(runs, dataset, a, b):
    """Mean and 95% t-interval half-width of Mean-AP(a) - Mean-AP(b) over the splits both
    have (matched by repeat and fold), and the paired t-test's p; ``runs``: a runs frame."""
    ra, rb = run_values(rows_of(runs, dataset, a), "mean_ap"), \
        run_values(rows_of(runs, dataset, b), "mean_ap")
    diffs = [ra[k] - rb[k] for k in ra if k in rb]
    mean, half = mean_confidence_interval(diffs)
    return mean, half, _paired(runs, dataset, a, b).p


def _n_concepts(ds):
    default = inspect.signature(make_shared_concepts).parameters["n_concepts"].default
    return int(ds.params.get("n_concepts", default))


@register_renderer("mssboost/sharing")
@styled
def render_sharing(result, out_dir, spec):
    """Per co-occurrence strength: the labels' measured within-group correlation, every
    method's Mean-AP and the paired gaps of :data:`GAPS`; the figure draws the gaps against
    the within-group correlation."""
    rows, figures, points = [], {}, {g: [] for g in GAPS}
    runs = result.frame
    methods = [m.display for m in result.spec.methods]
    for ds in result.spec.datasets:
        label, data = ds.display, result.datasets[ds.display]
        phi_in, phi_out = within_group_phi(data, _n_concepts(ds))
        row = {"strength": label, "phi within groups": phi_in, "phi across groups": phi_out}
        for m in methods:
            if runs_of(runs, label, m):
                row[f"{m} Mean-AP"] = format_mean_ci(*_mean_metric(runs_of(runs, label, m)))
        for a, b in GAPS:
            if not (runs_of(runs, label, a) and runs_of(runs, label, b)):
                continue
            mean, half, p = paired_gap(runs, label, a, b)
            row[f"{a} − {b} (p)"] = f"{mean:+.3f} ± {half:.3f} ({p:.2g})"
            points[(a, b)].append((phi_in, mean, half))
            figures[f"gap.{label}.{a}-{b}"] = mean
        figures[f"phi_within.{label}"] = phi_in
        rows.append(row)
    fig, (ax,) = panel_grid(1, width=SINGLE_COLUMN + 0.6, panel_height=2.6)
    for (a, b), pts in points.items():
        if not pts:
            continue
        x, y, e = map(np.asarray, zip(*pts))
        ax.errorbar(x, y, yerr=e, marker="o", ms=4, capsize=3, lw=1.2,
                    ls=":" if a == INTERCEPT else "-" if b == "RSBag" else "--",
                    color=method_colour("MSSBoost" if a == INTERCEPT else a if b == "RSBag"
                                        else b),
                    label=f"{a} − {b}")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("label correlation (phi) within a concept group")
    ax.set_ylabel("paired Mean-AP gap")
    ax.grid(alpha=0.3)
    figure_legend(fig, [ax], ncols=1, title="ours (synthetic data)")
    repeats = result.spec.protocol.repeats
    caption = ("Collections: " + ", ".join(f"{d.display} (synthetic: shared-concepts "
                                           f"generator, co-occurrence strength s)"
                                           for d in result.spec.datasets[:1])
               + ", ... (the same data at every s)" + result.caption_note + ". "
               "Sharing hypothesis (no figure of the paper): Mean-AP gaps of "
               f"MSSBoost over RSBag and NSBoost, mean ± 95% t-interval of "
               f"the paired differences over {repeats} random 75/25 splits, "
               "against the labels' within-group correlation; one strength "
               "s per point (s = 0: independent labels).")
    files = save_styled(fig, out_dir, "sharing",
                        title="Sharing gap vs label co-occurrence (synthetic data)")
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, files + [out_dir / "table.md"])
