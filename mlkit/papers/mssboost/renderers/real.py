"""MSSBoost on real multi-label collections: Tables 1-2, Figs. 5-8 and the settings chosen.

The paper's TREC and Consumer collections are private; the configs name the real public
substitutes (and the TRECVID-style generator) and every caption repeats the substitution.
Figs. 5-8 render the runs of Table 2 (``runs_of="table2"``): nothing is trained twice.
"""

from typing import Optional

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter
from pydantic import BaseModel, ConfigDict, Field

from ...._errors import MlkitError
from ....report import format_mean_ci, write_table
from ....report.figures import integer_ticks
from ....report.style import (DOUBLE_COLUMN, PAPER_LABEL, figure_legend, legend_cell,
                              method_colour, panel_grid, paper_kw, save_styled, styled)
from ....report.summaries import mean_curves
from ....runner.result import rows_of, runs_of
from ....stats import mean_confidence_interval, paired_ttest, run_values
from ....targets import Rendered, register_renderer
from ....verify import paper_alpha

PAPER = "mssboost"
ENSEMBLES = ("RSBag", "NSBoost", "MSSBoost")


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OneCollectionOptions(_Options):
    """``report:`` of figs 7 and 8: the collection shown (default: the first)."""

    dataset: Optional[str] = None
    models: int = Field(30, ge=1)             # fig8: the first models shown


# -- shared pieces ----------------------------------------------------------------------
def _roles(spec):
    return {d.display: d.role or "" for d in spec.datasets}


def _caption(result, extra="", paper_shown=True):
    """The collections and their roles; ``paper_shown``: whether the figure draws paper
    numbers beside them (else the caption says the paper gives none for it)."""
    roles = _roles(result.spec)
    parts = []
    for label, data in result.datasets.items():
        role = roles.get(label)
        kind = "synthetic" if data.synthetic else "real"
        parts.append(f"{label} ({kind}{'; in the paper’s ' + role + ' role' if role else ''})")
    text = ("Collections: " + ", ".join(parts) + result.caption_note + ". The paper's TREC and "
            "Consumer data are "
            "private; " + ("paper numbers are shown beside the collection in the same role."
                           if paper_shown else "the paper gives no numbers for this figure."))
    return f"{text} {extra}".strip()


def _mean_metric(runs, metric="mean_ap"):
    """Mean and 95% t-interval half-width of ``metric`` over runs: the rows of a runs frame
    or run records."""
    if isinstance(runs, pd.DataFrame):
        return mean_confidence_interval(runs[metric].to_numpy(dtype=float))
    return mean_confidence_interval([r["metrics"][metric] for r in runs])


def _paired(runs, dataset, a, b, value="mean_ap"):
    """Paired t-test of method ``a`` against ``b`` on ``dataset``, run by run: the runs are
    matched by (repeat, fold), those of one method only are left out and counted (Sec. 6.2:
    "statistically significant", test and level not stated; ours: a two-sided paired
    t-test over the 10 splits at the ``alpha`` of claims.yaml). ``value``: a metric name
    or a function of a run record; ``runs``: a runs frame (:func:`~mlkit.runner.runs_frame`).
    Returns a :class:`~mlkit.stats.PairedTest`."""
    return paired_ttest(_run_values(runs, dataset, a, value),
                        _run_values(runs, dataset, b, value),
                        alpha=paper_alpha(PAPER), missing="drop")


def _run_values(runs, dataset, method, value):
    """{(repeat, fold): value} of ``method``'s runs on ``dataset`` (a runs frame;
    :func:`~mlkit.stats.run_values`): ``value`` a column of the frame or a function of a run
    record."""
    get = value if isinstance(value, str) else (lambda run: value(run["record"]))
    return run_values(rows_of(runs, dataset, method), get)


def _ensembles_ap(runs, dataset):
    """{ensemble: its mean per-label AP (:func:`_label_ap`)} of the ensembles with runs on
    ``dataset``, in :data:`ENSEMBLES` order."""
    mine = {m: runs_of(runs, dataset, m) for m in ENSEMBLES}
    return {m: _label_ap(recs) for m, recs in mine.items() if recs}


def _label_ap(records):
    """Mean per-label AP over runs; a label without test positives in a run (None) is NaN."""
    ap = np.array([[np.nan if v is None else v for v in r["label_ap"]] for r in records],
                  dtype=float)
    return np.nanmean(ap, axis=0)


def _models_to_reach(curve, level):
    """Fewest base models whose mean Mean-AP reaches ``level`` (None if never)."""
    hit = np.flatnonzero(np.asarray(curve) >= level)
    return int(hit[0]) + 1 if hit.size else None


#: The labelled row of MSSBoost started from each label's training log-odds (``init:
#: prior``, not in the paper); claims are judged on the literal "MSSBoost" row and print
#: this row's verdicts beside.
INTERCEPT = "MSSBoost (intercept)"


def fit_cpu_seconds(record):
    """CPU seconds of one run's fit: the estimator's own count (``model.fit_cpu_s``); NaN
    for a record made before estimators counted it (not measured: never a wall time)."""
    own = record["model"].get("fit_cpu_s")
    return float("nan") if own is None else float(own)


def split_ratios(runs, dataset, num, den, value):
    """``value(run of num) / value(run of den)`` split by split, the runs (a runs frame)
    matched by (repeat, fold) (:func:`~mlkit.stats.run_values`); splits one method lacks
    are left out."""
    a, b = _run_values(runs, dataset, num, value), _run_values(runs, dataset, den, value)
    return np.array([a[k] / b[k] for k in a if k in b and b[k] > 0
                     and np.isfinite(a[k] / b[k])])


def _median(values):
    """The median of the finite values; NaN when there is none."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else float("nan")


# -- table 1 ------------------------------------------------------------------------------
@register_renderer("mssboost/table1")
def render_table1(result, out_dir, spec):
    """Table 1: collection statistics (real substitutes and generators)."""
    roles = _roles(result.spec)
    rows, figures = [], {}

    def paper(label, key):
        pv = spec.paper_value(label, "collection", key, role=roles[label])
        return pv.value if pv else None

    for label, data in result.datasets.items():
        st = data.statistics()
        rows.append({"collection": label, "role": roles[label],
                     "kind": "synthetic" if data.synthetic else "real",
                     "#data (paper)": paper(label, "examples"), "#data (ours)": st["examples"],
                     "#feature (paper)": paper(label, "features"),
                     "#feature (ours)": st["features"],
                     "#label (paper)": paper(label, "labels"), "#label (ours)": st["labels"],
                     "label cardinality (ours)": st["cardinality"]})
        for k in ("examples", "features", "labels"):
            figures[f"{k}.{label}"] = st[k]
    text = write_table(pd.DataFrame(rows), out_dir, f"Table 1: collection statistics. "
                       f"{_caption(result)}")
    return Rendered(text, figures, [out_dir / "table.md"])


# -- table 2 ------------------------------------------------------------------------------
@register_renderer("mssboost/table2")
def render_table2(result, out_dir, spec):
    """Table 2: six methods (and the labelled intercept row), Mean-AP, training CPU time
    (median over the splits, and the median of the per-split Baseline / method ratios),
    number of models, model size."""
    roles, runs = _roles(result.spec), result.frame
    rows, figures = [], {}
    has_intercept = bool((runs["method"] == INTERCEPT).any())
    for ds in result.spec.datasets:
        label = ds.display

        def paper(method, key):
            pv = spec.paper_value(label, method, key, role=roles[label])
            return (pv.value, pv.spread) if pv else (None, None)

        for m in result.spec.methods:
            recs = runs_of(runs, label, m.display)
            if not recs:
                continue
            mean, half = _mean_metric(recs)
            model = recs[0]["model"]
            paper_name = "MSSBoost" if m.display == INTERCEPT else m.display
            cpu = [fit_cpu_seconds(r) for r in recs]
            speed = split_ratios(runs, label, "Baseline", m.display, fit_cpu_seconds)
            p_train = paper(paper_name, "train_s")[0]
            p_base = paper("Baseline", "train_s")[0]
            row = {
                "collection": label, "role": roles[label], "method": m.display,
                "Mean-AP (paper)": format_mean_ci(*paper(paper_name, "mean_ap")),
                "Mean-AP (ours)": format_mean_ci(mean, half),
                "MSSBoost − method (p)": _diff_cell(runs, label, "MSSBoost", m.display),
            }
            if has_intercept:
                row[f"{INTERCEPT} − method (p)"] = _diff_cell(runs, label, INTERCEPT, m.display)
            row.update({
                "train s (paper)": p_train,
                "train CPU s (ours, median)": _median(cpu),
                "Baseline / method (paper)": (p_base / p_train if p_train and p_base
                                              else None),
                "Baseline / method (ours, median of splits)": _median(speed),
                "#models (paper)": paper(paper_name, "models")[0],
                "#models (ours)": model.get("n_models"),
                "model size (paper)": _sci(paper(paper_name, "size")[0]),
                "model size (ours)": _sci(np.mean([r["model"].get("model_size", np.nan)
                                                   for r in recs])),
            })
            rows.append(row)
            figures[f"mean_ap.{label}.{m.display}"] = mean
            figures[f"n_models.{label}.{m.display}"] = model.get("n_models")
            figures[f"train_cpu_s.{label}.{m.display}"] = _median(cpu)
            figures[f"train_speedup.{label}.{m.display}"] = _median(speed)
    repeats = result.spec.protocol.repeats
    caption = (f"Table 2: Mean-AP (± 95% t-interval over {repeats} random 75/25 "
               f"splits), training CPU seconds (median over the splits; the paper's are wall "
               "seconds on a 2.16 GHz PC: compare the ratios), the median over the splits of "
               "the Baseline's / the method's training CPU seconds, number of models and "
               f"model size (#support vectors × #features). {_caption(result)} MSSBoost is "
               "Algorithm 2 as written (F = 0 at the start); "
               f"{INTERCEPT} starts from each label's training log-odds (not in the paper; "
               "the paper's numbers beside it are MSSBoost's). X − method: mean paired "
               "difference (paired t-test p). Settings (rho, C, rd, rf) of every method "
               "chosen by the paper's 2-fold CV rule, scoring MSSBoost against 80% of the "
               f"Baseline (mssboost/selection), {_settings_scope(result.spec)}.")
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, [out_dir / "table.md"])


def _settings_scope(spec):
    """Where each collection's settings were chosen, as the config gives them: on each
    split's own training part (``split_method_params`` for every later repetition), or on
    the first split's and kept for every split (whose later test parts overlap it)."""
    repeats = spec.protocol.repeats
    own = [d.display for d in spec.datasets
           if set(range(1, d.protocol_over(spec.protocol).repeats)) <= set(d.split_method_params)]
    first = [d.display for d in spec.datasets if d.display not in own]
    parts = []
    if own:
        parts.append(f"on each split's own training part ({', '.join(own)}: split r's runs "
                     "use the choice made on split r's training part, never on its test part)")
    if first and repeats > 1:
        parts.append(f"on the first split's training part and kept for every split "
                     f"({', '.join(first)}; the later splits' test parts overlap that "
                     "training part)")
    elif first:
        parts.append(f"on the split's training part ({', '.join(first)})")
    return "; ".join(parts)


def _diff_cell(runs, dataset, a, b):
    """"+0.012 (0.03)": the mean paired difference of ``a`` over ``b`` and its p; "-" for a
    method against itself or without two pairs."""
    if a == b or not runs_of(runs, dataset, a):
        return "-"
    test = _paired(runs, dataset, a, b)
    return "-" if test.n < 2 else f"{test.diff:+.3f} ({test.p:.2g})"


def _sci(value):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    return f"{value:.1e}"


# -- fig 5 --------------------------------------------------------------------------------
@register_renderer("mssboost/fig5")
@styled
def render_fig5(result, out_dir, spec):
    """Fig. 5: Mean-AP vs number of base models."""
    roles = _roles(result.spec)
    labels = list(result.datasets)
    # one more cell than collections: the legend takes the first spare cell of the grid
    fig, axes = panel_grid(len(labels) + 1, panel_height=2.4)
    axes, spare = axes[:-1], axes[-1]
    figures, n_paper = {}, 0
    for ax, label in zip(axes, labels):
        curves = mean_curves(runs_of(result.frame, label), "mean_ap")
        last = 1
        for method in ENSEMBLES + (INTERCEPT,):
            if method in curves:
                x, mean, _ = curves[method]
                ax.plot(x, mean, label=method, lw=1.3, color=method_colour(method))
                figures[f"mean_ap_final.{label}.{method}"] = float(mean[-1])
                last = max(last, int(x[-1]))
        base = runs_of(result.frame, label, "Baseline")
        if base:                                   # dotted: dashed is the paper's
            ax.axhline(_mean_metric(base)[0], ls=":", color=method_colour("Baseline"), lw=1.2,
                       label="Baseline")
        n_paper += _draw_paper_map(ax, spec, result.spec, label, roles[label], last)
        ax.set_title(f"{label} ({roles[label]} role)")
        ax.set_xlabel("number of base models")
        integer_ticks(ax.xaxis)
        ax.set_ylabel("Mean-AP")
        ax.grid(alpha=0.3)
    handles, names = _legend_entries(axes)
    legend_cell(spare, handles, names, title=_data_title(result, roles))
    caption = _caption(result, "Fig. 5: Mean-AP of the first t base models (mean over runs; "
                       f"{INTERCEPT}: started from the labels' log-odds, not in the paper; "
                       "dotted: our Baseline)"
                       + ("; the paper's Table 2 Mean-AP of the collection in the same role: "
                          "its Baseline as a dashed line, its ensembles (100 models) as hollow "
                          "diamonds at our last t" + _level_text(spec) + "." if n_paper else
                          "; the paper gives no Mean-AP for these roles."))
    files = save_styled(fig, out_dir, "fig5", title=spec.title)
    rows = [{"collection": k.split(".")[1], "method": k.split(".", 2)[2],
             "final Mean-AP (mean over runs)": v} for k, v in figures.items()]
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, files + [out_dir / "table.md"])


#: Fig. 5's legend label of the paper's curve points (Sec. 6.2.3: models to reach a level)
LEVEL_LABEL = "paper: models to reach {:g} (Sec. 6.2.3)"


def _draw_paper_map(ax, spec, run_spec, label, role, last):
    """Draw the paper's Table 2 Mean-AP of the collection in ``label``'s ``role`` in its
    "paper" style: the Baseline as a dashed line, each ensemble (its T = 100 models) as a
    hollow diamond at t = ``last`` (our last model, 100 in Table 2's runs); and the points
    of its curves the text gives (``models_to_level`` models to reach Mean-AP ``level``,
    fig5.yaml) as hollow circles. Returns how many values were drawn."""
    drawn = 0
    pv = _paper_map(spec, run_spec, label, "Baseline", role)
    if pv is not None:
        ax.axhline(pv, **paper_kw(method_colour("Baseline"), kind="line",
                                  label="paper: Baseline (Table 2)"))
        drawn += 1
    for method in ENSEMBLES:
        pv = _paper_map(spec, run_spec, label, method, role)
        if pv is not None:
            ax.plot([last], [pv], **paper_kw(method_colour(method),
                                             label=f"paper: {method} (Table 2, T = 100)"))
            drawn += 1
        # a point of the paper's curve: the models needed to reach a Mean-AP level
        t = spec.paper_value(label, method, "models_to_level", role=role)
        level = spec.paper_value(label, method, "level", role=role)
        if t is not None and level is not None and t.value <= last:
            kw = paper_kw(method_colour(method), label=LEVEL_LABEL.format(level.value))
            ax.plot([t.value], [level.value], **{**kw, "marker": "o"})
            drawn += 1
    if drawn:
        lo, hi = ax.get_xlim()
        ax.set_xlim(lo, max(hi, last * 1.04))     # the diamonds at t = last inside the frame
    return drawn


def _level_text(spec):
    """The caption's words for the paper's curve points of fig5.yaml (empty if none)."""
    parts = []
    for role in spec.reported:
        pts = [(m, spec.paper_value(role, m, "models_to_level"), spec.paper_value(role, m, "level"))
               for m in ENSEMBLES]
        pts = [(m, t.value, lev.value) for m, t, lev in pts if t is not None and lev is not None]
        if pts:
            parts.append(f"{role}: " + ", ".join(f"{m} {t:g} models to reach {lev:g}"
                                                 for m, t, lev in pts))
    return ("; hollow circles: the paper's ensembles' models to reach a Mean-AP level "
            f"(Sec. 6.2.3; {'; '.join(parts)})") if parts else ""


def _legend_entries(axes):
    """(handles, labels): every distinct label of ``axes``, ours first, then the paper's."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab and not lab.startswith("_") and lab not in seen:
                seen[lab] = h
    level = LEVEL_LABEL.split("{")[0]
    order = sorted(seen, key=lambda lab: (lab.startswith(PAPER_LABEL), lab.startswith(level)))
    handles = [seen[lab] for lab in order]
    for i, lab in enumerate(order):          # one entry for points in every method's colour
        if lab.startswith(level):
            handles[i] = Line2D([], [], ls="none", marker="o", ms=5, mfc="none", mec="black",
                                mew=1.3)
    return handles, order


def _data_title(result, roles, sep="\n"):
    """A legend's title: which data each side ran on, ours then the paper's on their own
    line (our line broken in two, joined by ``sep``)."""
    synthetic = [lab for lab, d in result.datasets.items() if d.synthetic]
    lines = ["ours: real substitutes"] if len(synthetic) < len(result.datasets) else []
    if synthetic:
        lines.append(("and " if lines else "ours: ") + f"{', '.join(synthetic)} (synthetic)")
    paper = " / ".join(dict.fromkeys(r for r in roles.values() if r))
    return sep.join(lines) + f"\npaper: its {paper} data (private)"


def _paper_map(spec, run_spec, label, method, role):
    """The paper's Mean-AP of ``method`` on ``label`` (or its role): the figure's config,
    else the config of the runs it draws (Table 2), else None."""
    for source in (spec, run_spec):
        pv = source.paper_value(label, method, "mean_ap", role=role)
        if pv is not None and isinstance(pv.value, (int, float)):
            return float(pv.value)
    return None


# -- fig 6 --------------------------------------------------------------------------------
def prediction_speedups(runs, dataset, fractions=(1.0, 0.9), method="MSSBoost"):
    """{fraction: (models needed or None, MSSBoost seconds, Baseline seconds, speed-up)} for
    Fig. 6 and claim 5, from Table 2's runs. The models needed: the fewest whose mean Mean-AP
    curve reaches ``fraction`` of the Baseline's mean Mean-AP. Then, split by split, the
    Baseline's prediction seconds on the test part over those of the first t models of
    ``method`` (``stage_predict_s``, the same run's test part); seconds and speed-up are
    medians over the splits (NaN when not reached). ``runs``: a runs frame."""
    base, mss = rows_of(runs, dataset, "Baseline"), rows_of(runs, dataset, method)
    mss = mss[mss["stage_predict_s"].notna()] if "stage_predict_s" in mss else mss.iloc[:0]
    if base.empty or mss.empty:
        return {}
    base_map = _mean_metric(base)[0]
    curve = mean_curves(mss, "mean_ap")[method][1]
    base_s = run_values(base, "predict_s")
    out = {}
    for frac in fractions:
        t = _models_to_reach(curve, frac * base_map)
        if not t:
            out[frac] = (None, float("nan"), _median(list(base_s.values())), float("nan"))
            continue
        stage = run_values(mss, lambda run: run["stage_predict_s"][t - 1])
        keys = [k for k in stage if k in base_s]
        out[frac] = (t, _median([stage[k] for k in keys]), _median([base_s[k] for k in keys]),
                     _median([base_s[k] / stage[k] for k in keys]))
    return out


@register_renderer("mssboost/fig6")
@styled
def render_fig6(result, out_dir, spec):
    """Fig. 6: prediction time, Baseline vs MSSBoost truncated at 100% / 90% of its Mean-AP;
    below, the speed-ups with the paper's (Sec. 6.2.3) beside ours."""
    roles = _roles(result.spec)
    rows, figures = [], {}
    fig, (ax, ax_r) = panel_grid(2, ncols=1, width=DOUBLE_COLUMN, panel_height=2.5)
    xs, width = np.arange(len(result.datasets)), 0.25
    bars = (("Baseline", method_colour("Baseline"), 0.35),
            ("MSSBoost @100%", method_colour("MSSBoost"), 1.0),
            ("MSSBoost @90%", method_colour("MSSBoost"), 0.5))
    drawn, missing = set(), []
    for j, label in enumerate(result.datasets):
        sp = prediction_speedups(result.frame, label)
        if not sp:
            continue
        _bar(ax, xs[j] - width, sp[1.0][2], width, bars[0], drawn)
        for k, frac in enumerate((1.0, 0.9), start=1):
            t, secs, base_s, ratio = sp[frac]
            pv = spec.paper_value(label, "MSSBoost", f"predict_speedup_{int(frac * 100)}",
                                  role=roles[label])
            paper = pv.value if pv else None
            rows.append({"collection": label, "role": roles[label],
                         "level": f"{int(frac * 100)}% of Baseline Mean-AP",
                         "MSSBoost models": t if t else "not reached",
                         "predict s Baseline": base_s, "predict s MSSBoost": secs,
                         "speedup (paper)": paper,
                         "speedup (ours, median of splits)": ratio})
            x = xs[j] + (k - 1) * width
            if t:
                figures[f"models_needed.{label}.{int(frac * 100)}"] = t
                _bar(ax, x, secs, width, bars[k], drawn)
                ax_r.plot([x], [ratio], ls="none", marker="s", ms=5,
                          color=method_colour("MSSBoost"), alpha=bars[k][2])
                ax_r.annotate(f"{ratio:.2g}×", (x, ratio), xytext=(6, 0), fontsize=6,
                              textcoords="offset points", ha="left", va="center")
            else:
                missing.append((x, f"n/r\n@{int(frac * 100)}%"))
            if isinstance(paper, (int, float)):
                ax_r.plot([x], [paper], **paper_kw(method_colour("MSSBoost"),
                                                   label=f"{PAPER_LABEL} (Sec. 6.2.3)"))
                ax_r.annotate(f"{paper:g}×", (x, paper), xytext=(6, 0), fontsize=6,
                              textcoords="offset points", ha="left", va="center")
    for a in (ax, ax_r):                     # inside the axes, above the bars' foot
        for x, text in missing:
            a.text(x, 0.02, text, ha="center", va="bottom", fontsize=6,
                   transform=a.get_xaxis_transform())
        a.set_xlim(-0.5, len(xs) - 0.5)
        a.set_xticks(xs, [f"{lab}\n({roles[lab]})" for lab in result.datasets])
    ax.set_ylim(bottom=0)
    ax.set_ylabel("prediction time on\nthe test set (s)")
    ax.set_title("(a) prediction time (ours)")
    ax_r.set_yscale("log")
    ax_r.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax_r.axhline(1, color="grey", lw=0.8, ls=":")
    lo, hi = ax_r.get_ylim()
    ax_r.set_ylim(min(lo, 0.3), max(hi, 100) * 1.6)
    ax_r.set_ylabel("speed-up over Baseline\n(×, Baseline s / MSSBoost s)")
    ax_r.set_title("(b) speed-up: paper beside ours")
    from matplotlib.patches import Patch

    handles = [Patch(color=c, alpha=a) for _, c, a in bars]
    labels = [name for name, _, _ in bars]
    for h, lab in zip(*ax_r.get_legend_handles_labels()):
        if lab not in labels:
            handles.append(h)
            labels.append(lab)
    figure_legend(fig, handles=handles, labels=labels, ncols=4,
                  title=_data_title(result, roles, sep=" ")
                  + "; n/r: not reached within T models")
    caption = _caption(result, "Fig. 6: (a) prediction time of Baseline vs MSSBoost truncated "
                               "at the fewest models whose mean curve reaches 100% / 90% of "
                               "Baseline's Mean-AP (n/r: not reached within T); seconds and "
                               "speed-ups are medians over the splits, the speed-up taken "
                               "split by split. (b) the speed-ups on a log scale, ours (filled) "
                               "beside the paper's (hollow diamonds, Sec. 6.2.3, for the "
                               "collection in the same role); dotted: no speed-up.")
    files = save_styled(fig, out_dir, "fig6", title=spec.title)
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, files + [out_dir / "table.md"])


def _bar(ax, x, height, width, style, drawn):
    """One bar of Fig. 6 (name, colour, alpha); each name enters the legend once."""
    name, colour, alpha = style
    ax.bar(x, height, width, color=colour, alpha=alpha,
           label=name if name not in drawn else None)
    drawn.add(name)


# -- fig 7 / fig 8 ----------------------------------------------------------------------
def _sharing(mss_record, n_labels):
    """Per label: does MSSBoost's label-l function use models learned for other labels?"""
    alphas = np.asarray(mss_record["model"]["alphas"])
    own = np.asarray(mss_record["model"]["estimator_labels"])
    other = own[:, None] != np.arange(n_labels)[None, :]
    return ((alphas != 0) & other).any(axis=0)


@register_renderer("mssboost/fig7", options=OneCollectionOptions)
@styled
def render_fig7(result, out_dir, spec):
    """Fig. 7: per-label AP of the three ensembles."""
    label = _shown(result, spec)
    data = result.datasets[label]
    ap = _ensembles_ap(result.frame, label)
    mss0 = _first_run(result.frame, label, "MSSBoost")
    shares = _sharing(mss0, data.n_labels)
    freq = data.Y.mean(axis=0)
    left = np.flatnonzero(shares)[np.argsort(-freq[shares])]
    right = np.flatnonzero(~shares)[np.argsort(-freq[~shares])]
    order = np.concatenate([left, right])
    fig, (ax, ax_w) = panel_grid(2, ncols=2, width=max(DOUBLE_COLUMN, 0.2 * len(order)) + 1.4,
                                 panel_height=3.4, gridspec_kw={"width_ratios": [7, 1]})
    for m, marker in zip(ap, ("s", "^", "o")):
        ax.plot(np.arange(len(order)), ap[m][order], marker=marker, ms=4, lw=0.8, label=m,
                color=method_colour(m))
    if len(left) and len(right):                 # solid grey: dashed is the paper's
        ax.axvline(len(left) - 0.5, color="grey", lw=1,
                   label="left | right: labels that use | use no other labels' models")
    ax.set_xticks(np.arange(len(order)), [data.label_names[i] for i in order], rotation=90,
                  fontsize=6)
    ax.set_xlim(-0.7, len(order) - 0.3)
    ax.set_xlabel(_fig7_order_text(len(left), len(right)))
    ax.set_ylabel("average precision")
    ax.set_title(f"(a) per-label AP on {label}")
    _draw_label_wins(ax_w, ap, spec, label, _roles(result.spec).get(label))
    figure_legend(fig, [ax, ax_w], ncols=4, title=_one_data_title(label, data,
                                                                 _roles(result.spec)))
    caption = _caption(result, f"Fig. 7 on {label}: (a) per-label AP; "
                               + ("left of the grey line the labels whose MSSBoost function "
                                  "uses models of other labels, right those using none; "
                                  if len(left) and len(right) else
                                  "every label's MSSBoost function uses models of other "
                                  "labels (the paper's right region is empty here); "
                                  if len(left) else "no label uses other labels' models; ")
                               + "each side by decreasing frequency. (b) labels where "
                               "MSSBoost's AP is higher than NSBoost's / RSBag's, ours (bars) "
                               "beside the paper's TREC counts (hollow diamonds).")
    files = save_styled(fig, out_dir, "fig7", title=f"{spec.title} ({label})")
    wins = {m: int(np.sum(ap["MSSBoost"] > ap[m])) for m in ("NSBoost", "RSBag") if m in ap}
    figures = {f"labels_mssboost_beats.{m}": w for m, w in wins.items()}
    figures["labels_sharing"] = int(shares.sum())
    summary = ("MSSBoost has the higher AP on " + ", ".join(
        f"{w}/{len(order)} labels vs {m}" for m, w in wins.items())
        + " (paper, TREC: 30/39 vs NSBoost, 34/39 vs RSBag); "
        f"{int(shares.sum())} labels use other labels' models.")
    table = pd.DataFrame({"label": [data.label_names[i] for i in order],
                          "frequency": freq[order],
                          "uses other labels' models": shares[order],
                          **{f"AP {m}": ap[m][order] for m in ap}})
    text = write_table(table, out_dir, f"{caption} {summary}")
    return Rendered(text, figures, files + [out_dir / "table.md"])


def _one_data_title(label, data, roles, paper="paper: its {role} data (private)", sep="; "):
    """The legend title of a one-collection figure: the data each side ran on (``paper``
    says the paper's side, ``{role}`` filled in, after ``sep``)."""
    role = roles.get(label)
    kind = "synthetic" if data.synthetic else "real substitute"
    return (f"ours: {label} ({kind}" + (f", in the paper's {role} role" if role else "") + ")"
            + (f"{sep}{paper.format(role=role)}" if role else ""))


def _fig7_order_text(n_left, n_right):
    """Fig. 7's x label: how the labels are ordered (and when a side is empty, that it is)."""
    if n_left and n_right:
        return (f"label: {n_left} that use other labels' models, then {n_right} that use "
                "none; each by decreasing frequency")
    who = "all" if n_left else "none"
    return (f"label, by decreasing frequency ({who} of the {n_left + n_right} use other "
            "labels' models)")


def _draw_label_wins(ax, ap, spec, label, role):
    """Fig. 7 (b): the share of labels where MSSBoost's AP is higher than each other
    ensemble's, ours as bars, the paper's (``labels_beats_<method>`` of ``labels``, Sec.
    6.2.3) as hollow "paper" diamonds, each with its count."""
    n = len(ap["MSSBoost"])
    others = [m for m in ("NSBoost", "RSBag") if m in ap]
    total = spec.paper_value(label, "MSSBoost", "labels", role=role)
    for i, m in enumerate(others):
        wins = int(np.sum(ap["MSSBoost"] > ap[m]))
        ax.bar(i, 100 * wins / n, 0.6, color=method_colour("MSSBoost"), alpha=0.6,
               label="ours: labels where MSSBoost's AP is higher")
        ax.annotate(f"{wins}/{n}", (i, 100 * wins / n), xytext=(0, -3), fontsize=6,
                    textcoords="offset points", ha="center", va="top")
        pv = spec.paper_value(label, "MSSBoost", f"labels_beats_{m}", role=role)
        if pv is not None and total is not None and isinstance(pv.value, (int, float)):
            share = 100 * pv.value / total.value
            ax.plot([i], [share], **paper_kw(method_colour("MSSBoost"),
                                             label=f"{PAPER_LABEL} (TREC, Sec. 6.2.3)"))
            ax.annotate(f"{pv.value:g}/{total.value:g}", (i, share), xytext=(0, 5),
                        fontsize=6, textcoords="offset points", ha="center", va="bottom")
    ax.set_xticks(range(len(others)), [f"vs\n{m}" for m in others])
    ax.set_xlim(-0.6, len(others) - 0.4)
    ax.set_ylim(0, 112)
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.set_ylabel("labels where MSSBoost's\nAP is higher (%)")
    ax.set_title("(b) labels won")


@register_renderer("mssboost/fig8", options=OneCollectionOptions)
@styled
def render_fig8(result, out_dir, spec):
    """Fig. 8: MSSBoost's weight signs, labels x models."""
    label = _shown(result, spec)
    n_cols = spec.options.models
    data = result.datasets[label]
    mss0 = _first_run(result.frame, label, "MSSBoost")
    alphas = np.asarray(mss0["model"]["alphas"])[:n_cols].T          # labels x models
    own = np.asarray(mss0["model"]["estimator_labels"])[:n_cols]
    sign = np.sign(alphas)
    fig, (ax,) = panel_grid(1, width=max(5.0, 0.16 * n_cols + 2),
                            panel_height=max(4.0, 0.13 * len(sign) + 1.4))
    colours = (FIG8_COLOURS["negative"], "white", FIG8_COLOURS["positive"])
    ax.imshow(sign, cmap=ListedColormap(colours), vmin=-1, vmax=1, aspect="auto",
              interpolation="nearest")
    ax.set_yticks(np.arange(len(sign)), data.label_names, fontsize=6)
    # "t label": a label may head several columns (its models chosen more than once)
    ax.set_xticks(np.arange(len(own)), [f"{t} {data.label_names[i]}"
                                        for t, i in enumerate(own, start=1)],
                  rotation=90, fontsize=6)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("base model t, by the label it was learned for")
    ax.set_ylabel(r"label $l$ (its weights $\alpha_{t,l}$ along the row)")
    _fig8_legend(fig, label, data, _roles(result.spec).get(label))
    caption = _caption(result, f"Fig. 8 on {label}: sign of MSSBoost's weights, labels × the "
                               f"first {len(own)} selected models (column: t and the label the "
                               "model was learned for); blue positive, grey negative, white "
                               "zero (first repetition). The paper's Fig. 8 (its TREC labels) "
                               "gives no numbers; its reading is claim 7.", paper_shown=False)
    files = save_styled(fig, out_dir, "fig8", title=f"{spec.title} ({label})")
    used = (alphas != 0).sum(axis=0)
    figures = {"labels_per_model.mean": float(used.mean())}
    summary = (f"Each model is used by {used.mean():.1f} labels on average.")
    table = pd.DataFrame({"model": np.arange(1, len(own) + 1),
                          "learned for": [data.label_names[i] for i in own],
                          "labels with a positive weight": (alphas > 0).sum(axis=0),
                          "labels with a negative weight": (alphas < 0).sum(axis=0)})
    text = write_table(table, out_dir, f"{caption} {summary}")
    return Rendered(text, figures, files + [out_dir / "table.md"])


#: Fig. 8's colours: the paper's "blue means positive and grey means negative"
FIG8_COLOURS = {"positive": "#0072B2", "negative": "#999999"}


def _fig8_legend(fig, label, data, role):
    """Fig. 8's colour key, below the matrix, titled with the data it ran on."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=FIG8_COLOURS["positive"]),
               Patch(facecolor=FIG8_COLOURS["negative"]),
               Patch(facecolor="white", edgecolor="black", lw=0.5)]
    names = ["positive weight", "negative weight", "zero (model not used by the label)"]
    return figure_legend(fig, handles=handles, labels=names, ncols=3,
                         title=_one_data_title(label, data, {label: role},
                                               paper="the paper's Fig. 8: its {role} data, "
                                                     "no numbers", sep="\n"))


# -- Sec. 6.2.1: settings by 2-fold CV -----------------------------------------------------
def _grid_edges(record):
    """(name, value, grid, "low"/"high") for every chosen rho or C of a mssboost-settings
    record that sits at an end of the grid it was chosen from (grids of 3+ values)."""
    s, params = record["model"], record["params"]
    out = []
    for what, value, key in (("Baseline rho", s["baseline_gamma"], "gamma_grid"),
                             ("Baseline C", s["baseline_C"], "C_grid"),
                             ("base rho", s["gamma"], "base_gamma_grid"),
                             ("base C", s["C"], "base_C_grid")):
        grid = params.get(key)
        if not grid or len(grid) < 3:        # as the metric table: a 2-value grid has no inside
            continue
        if value == min(grid):
            out.append((what, value, grid, "low"))
        elif value == max(grid):
            out.append((what, value, grid, "high"))
    return out


@register_renderer("mssboost/selection")
def render_selection(result, out_dir, spec):
    """Sec. 6.2.1: every setting chosen by 2-fold CV on the training part, read from the run
    records of :class:`~mlkit.papers.mssboost.settings.MSSBoostSettings` (no training here).
    Writes ``table`` (the chosen values, paper beside ours) and ``grid`` (every CV row)."""
    roles = _roles(result.spec)
    rows, grid_rows, figures, edges = [], [], {}, []
    for label in result.datasets:
        for rec in runs_of(result.frame, label):
            s, split = rec["model"], f"r{rec['repeat']:02d}"
            edges += [f"{label} ({rec['method']}, split {rec['repeat']}): {what} = {value:g} "
                      f"is the {side} end of its grid {sorted(grid)}"
                      for what, value, grid, side in _grid_edges(rec)]

            def paper(key):
                pv = spec.paper_value(label, "Subspace", key, role=roles.get(label))
                return pv.value if pv else None

            rows.append({
                "collection": label, "role": roles.get(label) or "",
                "search": rec["method"], "split": rec["repeat"],
                "rho (paper)": paper("gamma"),
                "Baseline rho": s["baseline_gamma"], "Baseline C": s["baseline_C"],
                "Baseline SV fraction": s["baseline_sv_fraction"],
                "base rho": s["gamma"], "base C": s["C"],
                "rd (paper)": paper("rd"), "rd (ours)": s["rd"],
                "rf (paper)": paper("rf"), "rf (ours)": s["rf"],
                "Baseline 2-fold Mean-AP": s["baseline_map"],
                "Subspace 2-fold Mean-AP": s["subspace_map"],
                "rule scores": s.get("scored", "Subspace"),
                "scored 2-fold Mean-AP": s.get("scored_map", s["subspace_map"]),
                "80% reached": "yes" if s["reached"] else "no (best pair)",
                "Baseline test Mean-AP": rec["metrics"]["mean_ap"]})
            for key in ("baseline_gamma", "baseline_C", "gamma", "C", "rd", "rf"):
                figures[f"{key}.{label}.{rec['method']}.{split}"] = s[key]
            where = {"collection": label, "search": rec["method"], "split": rec["repeat"]}
            grid_rows += [{**where, "model": "Baseline", **g} for g in s["baseline_grid"]]
            grid_rows += [{**where, "model": s.get("scored", "Subspace"), **g}
                          for g in s["grid"]]
    if not rows:
        raise MlkitError("mssboost/selection: no run of mssboost-settings in the results; "
                         "the config's methods must include it")
    splits = {m: sorted({r["repeat"] for r in runs_of(result.frame, None, m)})
              for m in dict.fromkeys(result.frame["method"])}
    where = "; ".join(f"{m}: " + (f"on each of splits {v[0]}-{v[-1]}, on that split's own "
                                  "training part" if len(v) > 1 else
                                  f"on split {v[0]}'s training part")
                      for m, v in splits.items())
    caption = _caption(result, f"Sec. 6.2.1, by 2-fold CV on a training part of Table 2's "
                               f"splits ({where}; never on a part of that split's test part): "
                               "the Baseline's rho and C by CV of the Baseline (with its "
                               "support-vector fraction there); for each (rd, rf) the base "
                               "models' rho and C by CV of the Subspace model; then the "
                               "smallest rd*rf (then rd) whose scored model (column 'rule "
                               "scores') reaches 80% of the Baseline's 2-fold Mean-AP, else "
                               "the best pair. Baseline test "
                               "Mean-AP: refitted at its chosen rho and C.")
    if edges:
        caption += (" At a grid's edge (a wider grid might choose otherwise): "
                    + "; ".join(edges) + ".")
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    write_table(pd.DataFrame(grid_rows), out_dir, "Every setting scored by 2-fold CV (mean "
                "Mean-AP over the folds; sv_fraction: the Baseline's support-vector fraction).",
                name="grid")
    return Rendered(text, figures, [out_dir / "table.md", out_dir / "grid.md"])


def _shown(result, spec):
    """The collection a one-collection figure shows: its ``dataset`` option or the first."""
    label = spec.options.dataset or next(iter(result.datasets))
    if label not in result.datasets:
        raise MlkitError(f"{spec.source}: report.dataset {label!r} is not a collection of "
                         f"{result.spec.target} ({', '.join(result.datasets)})")
    return label


def _first_run(runs, dataset, method):
    """The record of the run Figs. 3, 7 and 8 show: the first split's (lowest repeat, then
    fold) of ``method`` on ``dataset`` (None: any) in a runs frame."""
    mine = rows_of(runs, dataset, method)
    if mine.empty:
        raise MlkitError(f"no run of {method} on {dataset or 'any dataset'} to show")
    return mine.sort_values(["repeat", "fold"], kind="stable")["record"].iloc[0]
