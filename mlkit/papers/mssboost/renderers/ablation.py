"""One change at a time from Table 2's settings of MSSBoost (Yan, Tesic & Smith, KDD 2007,
Algorithm 2 and Sec. 6.2.1): each row of ``mssboost/ablation`` beside Table 2's literal
MSSBoost on the same splits (``mssboost/ablation``; no table of the paper)."""

import pandas as pd

from ....report import format_mean_ci, write_table
from ....stats import run_values
from ....targets import Rendered, register_renderer, resolve_target, saved_results, target_spec
from ....runner.result import rows_of, runs_frame
from .real import INTERCEPT, _caption, _mean_metric, _paired

#: the reference row (Table 2's literal MSSBoost) and the table2 row that is an ablation too
REFERENCE = "MSSBoost"
FROM_TABLE2 = (INTERCEPT,)


def ablation_rows(runs, reference, datasets, changes):
    """Per (collection, row): the row's Mean-AP, the mean paired difference to the reference
    (Table 2's MSSBoost) on the splits both have and the paired t-test's p
    (:func:`~.real._paired`). ``runs``: the ablation's runs frame
    (:func:`~mlkit.runner.result.runs_frame`), ``reference``: Table 2's;
    ``changes``: [(row, {collection: what changed})]."""
    pooled = pd.concat([runs, reference], ignore_index=True)
    rows, figures = [], {}
    for label in datasets:
        base = rows_of(reference, label, REFERENCE)
        if base.empty:
            continue
        rows.append({"collection": label, "row": f"{REFERENCE} (table2)",
                     "change": "none: Table 2's run",
                     "Mean-AP": format_mean_ci(*_mean_metric(base)),
                     "vs table2": "-", "p": "-"})
        for method, change in changes:
            mine = rows_of(pooled, label, method)
            if mine.empty:
                continue
            a, b = run_values(mine, "mean_ap"), run_values(base, "mean_ap")
            diffs = [a[k] - b[k] for k in a if k in b]
            test = _paired(pooled, label, method, REFERENCE)
            mean = sum(diffs) / len(diffs)
            rows.append({"collection": label, "row": method, "change": change[label],
                         "Mean-AP": format_mean_ci(*_mean_metric(mine)),
                         "vs table2": f"{mean:+.4f}", "p": f"{test.p:.2g}"})
            figures[f"delta.{label}.{method}"] = mean
            figures[f"p.{label}.{method}"] = test.p
    return rows, figures


def _changes(spec, table2_spec):
    """[(row, {collection: what the row changes there})]: a parameter the row sets other than
    Table 2's MSSBoost, or the collection's own value for the row; where neither, the row is
    Table 2's settings on fresh base-model seeds (the seed-noise control)."""
    mss = next(m for m in table2_spec.methods if m.display == REFERENCE)
    ref = {ds.display: ds.params_for(mss) for ds in table2_spec.datasets}
    out = [(INTERCEPT, {d: "init: prior (label log-odds) instead of zero" for d in ref})]
    for m in spec.methods:
        what = {}
        for ds in spec.datasets:
            mine, theirs = ds.params_for(m), ref.get(ds.display, {})
            diff = {k: v for k, v in mine.items() if theirs.get(k) != v}
            what[ds.display] = (", ".join(f"{k} = {v} (table2: {theirs.get(k)})"
                                          for k, v in diff.items()) if diff else
                                "none: Table 2's settings, other base-model seeds")
        out.append((m.display, what))
    return out


@register_renderer("mssboost/ablation")
def render_ablation(result, out_dir, spec):
    """The table of every ablation row against Table 2's literal MSSBoost (its committed
    runs, read from ``mssboost/table2``); table2's intercept row is the init change."""
    table2 = resolve_target("mssboost/table2")
    reference = runs_frame(saved_results(table2)[0] or [])
    changes = _changes(result.spec, target_spec(table2)[0])
    rows, figures = ablation_rows(result.frame, reference, list(result.datasets), changes)
    repeats = result.spec.protocol.repeats
    caption = _caption(result, "Ablation (no table of the paper): Table 2's literal MSSBoost "
                       "(T = 100, zero start, clip, the chi-square filter, Table 2's settings) "
                       "with one change per row; 'vs table2': the mean paired Mean-AP "
                       f"difference to Table 2's MSSBoost over the {repeats} splits both have "
                       "(the same 75/25 splits), p: two-sided paired t-test. A row with Table 2's "
                       "settings differs from Table 2's run by its base models' seeds only "
                       "(the seed noise any change is read against). Mean-AP: mean ± 95% "
                       "t-interval.")
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, [out_dir / "table.md"])
