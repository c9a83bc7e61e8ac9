"""LM3FE renderers: Tables I-II (``lm3fe/table``), the curves vs the percentage of selected
features of Figs. 2-4 (``lm3fe/percent``), the per-class F1 of Fig. 5 (``lm3fe/class-f1``)
and the objective per outer iteration (``lm3fe/objective``).

The runs are those of the runner's ``labelled`` protocol: each dataset entry of a config is
one (dataset, labelled count) cell, its count the ``n_labelled`` of its protocol. Every
record of a method with a grid holds what was chosen on the validation part (``chosen``) and,
per grid parameter, the curve over its values (``grid_curves``: at each value the setting
best on validation, its test metrics), which Figs. 2-4 draw. Renderers never train.
"""

from typing import Optional

from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from ...methods.multimodal.lm3fe import LM3FE
from ...registry import METRICS
from ...report import format_mean_ci, write_table
from ...report.style import (DOUBLE_COLUMN, figure_legend, method_colour, panel_grid,
                             save_styled, styled)
from ...runner.result import rows_of, runs_frame, runs_of
from ...targets import Rendered, register_renderer

__all__ = ["cells", "cell_values", "curve_of", "SELECTION", "TRANSFORMATION"]

#: the selection methods of Figs. 2-4 and their transformation forms (Tables I-II)
SELECTION = ("MTFS", "RFS", "SSMVFS", "TMFS", "LM3FS")
TRANSFORMATION = ("MTFT", "RFT", "SSMVFT", "LM3FT")
FLAT = ("BSF", "CAT")

_PAPER_DATA = {"NUS-WIDE": "nus-animal", "MIR Flickr": "mirflickr"}


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    caption: str = ""
    counts: list[int] = Field(default_factory=list)   # the paper's labelled counts, in order
    # a dataset's own counts, in the order of `counts` (scaled-down substitutes)
    scaled: dict[str, list[int]] = Field(default_factory=dict)


class TableOptions(_Options):
    """``report:`` of Tables I-II: the metrics shown and the methods the paper's table lacks."""

    metrics: list[str] = Field(default_factory=lambda: ["accuracy"])
    not_in_paper: list[str] = Field(default_factory=list)


class PercentOptions(_Options):
    """``report:`` of Figs. 2-4: the metric drawn against the percentage."""

    metric: str = "accuracy"
    param: str = "percent"


class ClassF1Options(BaseModel):
    """``report:`` of Fig. 5: the labelled count (per class) whose runs are drawn."""

    model_config = ConfigDict(extra="forbid")
    caption: str = ""
    count: Optional[int] = None          # default: the largest count of each dataset


# -- shared pieces ------------------------------------------------------------------------

def cells(run_spec, result=None):
    """[(dataset name, labelled count, dataset label, role)] of the config, in its order
    (only the datasets that ran when ``result`` is given)."""
    out = []
    for ds in run_spec.datasets:
        if result is not None and ds.display not in result.datasets:
            continue
        n = ds.protocol_over(run_spec.protocol).n_labelled
        out.append((ds.name or ds.display, n, ds.display, ds.role))
    return out


def paper_count(opts, name, n):
    """The paper's count in the column of dataset ``name``'s count ``n``."""
    own = opts.scaled.get(name, opts.counts)
    if n in own and len(opts.counts) == len(own):
        return opts.counts[own.index(n)]
    return n


def cell_values(runs, label, method, metric):
    """Test values of ``metric`` over the draws of one (dataset label, method) of a runs
    frame."""
    mine = rows_of(runs, label, method)
    return mine[metric].to_numpy(float) if len(mine) else np.array([], float)


def curve_of(runs, label, method, metric, param="percent"):
    """(values of ``param``, (draws, values) array of test ``metric``) from the runs'
    ``grid_curves`` (a runs frame), or (None, None) when the method has no curve over
    ``param``."""
    mine = rows_of(runs, label, method)
    curves = mine["grid_curves"] if "grid_curves" in mine else pd.Series([], dtype=object)
    recs = mine.loc[curves.map(lambda g: isinstance(g, dict) and param in g), "record"] \
        .tolist() if len(curves) else []
    if not recs:
        return None, None
    values = recs[0]["grid_curves"][param]["values"]
    return np.asarray(values, float), np.array(
        [r["grid_curves"][param]["metrics"][metric] for r in recs], float)


def _mean_sd(values):
    if len(values) == 0:
        return float("nan"), float("nan")
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else float("nan")


def _label(metric):
    return METRICS.entry(metric).meta.get("label", metric)


def _data_caption(result, run_spec):
    """Names every dataset as the paper's data or a real substitute in its role."""
    parts, roles = [], {}
    for ds in run_spec.datasets:
        if ds.display not in result.datasets:
            continue
        data = result.datasets[ds.display]
        name = ds.name or ds.display
        if name in roles:
            continue
        paper_own = _PAPER_DATA.get(ds.role) == name
        kind = ("the paper's data" if paper_own else
                f"{'synthetic' if data.synthetic else 'real'} substitute in the role of "
                f"{ds.role}")
        roles[name] = kind
        parts.append(f"{name} ({kind}; {data.source})")
    text = "Data: " + "; ".join(parts) + result.caption_note + "."
    if result.absent:
        names = sorted({d.name for d in run_spec.datasets if d.display in result.absent})
        text += (f" Not run: {', '.join(names)} (the paper's own data: files not in the data "
                 "home; put them there and rerun).")
    return text


def _by_name(run_spec, result):
    """{dataset name: [(count, label, role)]} of the cells that ran, in config order."""
    out = {}
    for name, n, label, role in cells(run_spec, result):
        out.setdefault(name, []).append((n, label, role))
    return out


def _write(rows, out_dir, caption, files=()):
    """The table of a renderer (md, csv, tex) and the Rendered of it with ``files``."""
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return text, list(files) + [out_dir / f"table.{e}" for e in ("md", "csv", "tex")]


def _absent_rows(result, run_spec, columns):
    """One row per absent paper's dataset; the note goes in the first "(ours)" column, never
    in a "(paper)" one (which holds the paper's numbers)."""
    rows, seen = [], set()
    ours = next((c for c in columns[2:] if c.endswith("(ours)")), columns[-1])
    for ds in run_spec.datasets:
        if ds.display in result.absent and ds.name not in seen:
            seen.add(ds.name)
            rows.append({columns[0]: f"{ds.name} (the paper's data)",
                         columns[1]: "(all)", ours: "not run: files not in the data home"})
    return rows


# -- Tables I-II ---------------------------------------------------------------------------

@register_renderer("lm3fe/table", options=TableOptions,
                   summary="LM3FE Tables I-II: metric at each labelled count, paper vs ours")
def render_table(result, out_dir, spec):
    """Every method at every labelled count: paper vs ours (mean ± sd over the draws),
    selection methods at their validation-chosen percentage (mean chosen %)."""
    opts, run_spec, runs = spec.options, result.spec, result.frame
    by_name = _by_name(run_spec, result)
    rows, figures = [], {}
    for name, entries in by_name.items():
        for m in run_spec.methods:
            method = m.display
            row = {"dataset": name, "method": method}
            chosen, labelled = [], []          # per labelled count
            for n, label, role in entries:
                pn = paper_count(opts, name, n)
                head = f"{pn}" if pn == n else f"{pn} (ours {n})"
                mine = rows_of(runs, label, method)
                for metric in opts.metrics:
                    vals = cell_values(runs, label, method, metric)
                    mean, sd = _mean_sd(vals)
                    pv = spec.paper_value(label, method, f"{metric} {pn}", role=role)
                    row[f"{_label(metric)} {head} (paper)"] = (
                        "-" if pv is None else pv.value if isinstance(pv.value, str)
                        else format_mean_ci(pv.value, pv.spread, 3))
                    row[f"{_label(metric)} {head} (ours)"] = (
                        format_mean_ci(mean, sd, 3) if len(vals) else "-")
                    if len(vals):
                        figures[f"{metric}.{label}.{method}"] = mean
                        figures[f"{metric}_sd.{label}.{method}"] = sd
                pc = [c["percent"] for c in mine["chosen"] if c.get("percent") is not None]
                chosen.append(f"{np.mean(pc):.0f}" if pc else "-")
                labelled.append(f"{np.mean(mine['n_train'].to_numpy(float)):.0f}" if len(mine)
                                else "-")
            counts = "/".join(str(n) for n, _, _ in entries)
            # one value per labelled count (mean over the draws), in the order of the counts
            row["counts (ours)"] = counts
            row["best % per count (ours)"] = "/".join(chosen)
            row["labelled per count (ours)"] = "/".join(labelled)
            rows.append(row)
    if rows:
        rows += _absent_rows(result, run_spec, list(rows[0]))
    roles = sorted({d.role for d in run_spec.datasets if d.role})
    caption = (f"{spec.title or spec.target}. Paper ({', '.join(roles)}) vs ours (mean ± sd "
               f"over {run_spec.protocol.repeats} draws of the labelled samples; parameters "
               "and the percentage of selected features chosen on a validation part, 20% of "
               "the test part, the other 80% scored). " + _data_caption(result, run_spec))
    if opts.scaled:
        caption += (" Counts scaled down on " + ", ".join(
            f"{k} ({'/'.join(map(str, v))} for the paper's {'/'.join(map(str, opts.counts))})"
            for k, v in opts.scaled.items()) + ".")
    if opts.not_in_paper:
        caption += (f" {', '.join(opts.not_in_paper)}: not in the paper's table (its runs "
                    "draw the figures).")
    if opts.caption:
        caption += " " + opts.caption
    text, files = _write(rows, out_dir, caption)
    return Rendered(text, figures, files)


def _kind(result, name):
    """'substitute data' or 'synthetic data' of dataset ``name`` (the paper's data never
    reach these figures: they are private)."""
    data = next((d for lab, d in result.datasets.items()
                 if lab == name or getattr(d, "name", None) == name
                 or lab.startswith(f"{name} ")), None)
    return "synthetic data" if data is not None and data.synthetic else "substitute data"


def _wrap_title(text, width=55):
    """``text`` broken into lines of at most ``width`` characters (a panel title)."""
    import textwrap

    return "\n".join(textwrap.wrap(str(text), width)) or str(text)


_DATASET_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
                    "#999999", "#000000")


# -- Figs. 2-4 -----------------------------------------------------------------------------

@register_renderer("lm3fe/percent", options=PercentOptions,
                   summary="LM3FE Figs. 2-4: metric vs % of selected features")
@styled
def render_percent(result, out_dir, spec):
    """One figure per dataset, one panel per labelled count: every selection method's test
    metric vs the percentage (validation-best other parameters at each), BSF/CAT flat."""
    opts, run_spec, runs = spec.options, result.spec, result.frame
    metric, files, rows, figures = opts.metric, [], [], {}
    by_name = _by_name(run_spec, result)
    table_spec = None
    try:
        from ...targets import resolve_target, target_spec

        table_spec = target_spec(resolve_target(f"{spec.paper}/{spec.runs_of}"))[0]
    except Exception:      # the table's config is only needed for the paper's numbers
        table_spec = None
    data_caption = _data_caption(result, run_spec)
    for name, entries in by_name.items():
        fig, axes = panel_grid(len(entries), ncols=min(len(entries), 3), sharey=True,
                               panel_height=2.3)
        for ax, (n, label, role) in zip(axes, entries):
            pn = paper_count(opts, name, n)
            for m in run_spec.methods:
                method = m.display
                values, curves = curve_of(runs, label, method, metric, opts.param)
                if values is not None and len(values) > 1:
                    mean = curves.mean(axis=0)
                    ax.plot(values, mean, marker="o", ms=3, label=method,
                            color=method_colour(method))
                    k = int(np.argmax(mean))
                    pv = (table_spec.paper_value(label, method, f"{metric} {pn}", role=role)
                          if table_spec else None)
                    rows.append({"dataset": name, "count": pn if pn == n else f"{pn} (ours {n})",
                                 "method": method, "peak (ours)": float(mean[k]),
                                 f"at % (ours)": f"{values[k]:g}",
                                 "at 100% (ours)": float(mean[values.tolist().index(100.0)])
                                 if 100.0 in values else "-",
                                 "table (paper)": "-" if pv is None or isinstance(pv.value, str)
                                 else pv.value})
                    figures[f"peak.{label}.{method}"] = float(mean[k])
                    figures[f"peak_percent.{label}.{method}"] = float(values[k])
                elif method in FLAT:
                    vals = cell_values(runs, label, method, metric)
                    if len(vals):
                        ax.axhline(vals.mean(), ls="--", lw=1, color=method_colour(method),
                                   label=method)
                        figures[f"flat.{label}.{method}"] = float(vals.mean())
            ax.set_xscale("log")
            ax.set_xlabel("% of each modality's features")
            ax.set_ylabel(_label(metric))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            multi = getattr(result.datasets.get(label), "multilabel", None)
            if multi is None:
                multi = np.asarray(getattr(result.datasets.get(label), "y", [0])).ndim == 2
            ax.set_title(f"{n} " + ("pos. + neg. per label" if multi else "labelled per class"))
        figure_legend(fig, axes, ncols=7, title=f"ours: {name} ({_kind(result, name)})")
        files += save_styled(fig, out_dir, f"{spec.artifact}_{name}",
                             title=f"{spec.title.split(' (')[0]}: {name}")
    caption = (f"{spec.title}: each selection method's peak over the percentages (ours) beside "
               "the paper's table value at its best percentage. Figures (one per dataset, one "
               f"panel per labelled count): mean over the draws of the test {_label(metric)} "
               "at each percentage, the other parameters best on the validation part there; "
               "BSF and CAT dashed (no percentage). The paper's curves were lost with its "
               "figures and its table values are on its own data (not these), so they are "
               "printed here, not drawn. " + data_caption)
    text, files = _write(rows, out_dir, caption, files)
    return Rendered(text, figures, files)


# -- Fig. 5 --------------------------------------------------------------------------------

@register_renderer("lm3fe/class-f1", options=ClassF1Options,
                   summary="LM3FE Fig. 5: per-class F1 of every method")
@styled
def render_class_f1(result, out_dir, spec):
    """Per-class F1 (test part, mean over the draws) of every method at one labelled count."""
    opts, run_spec, runs = spec.options, result.spec, result.frame
    by_name = _by_name(run_spec, result)
    rows, files, figures = [], [], {}
    data_caption = _data_caption(result, run_spec)
    for name, entries in by_name.items():
        pick = [e for e in entries if e[0] == opts.count] or [max(entries)]
        n, label, _ = pick[0]
        data = result.datasets[label]
        names = list(getattr(data, "class_names", None) or [])
        methods = [m.display for m in run_spec.methods]
        fig, (ax,) = panel_grid(1, width=DOUBLE_COLUMN, panel_height=2.6)
        shown = []
        for j, method in enumerate(methods):
            mine = rows_of(runs, label, method)
            recs = mine.loc[mine["class_f1"].notna(), "record"].tolist() \
                if "class_f1" in mine else []
            if not recs:
                continue
            f1 = np.mean([r["test_extras"]["class_f1"] for r in recs], axis=0)
            classes = recs[0]["test_extras"]["classes"]
            shown.append(method)
            tick = [names[int(c)] if names and c.lstrip("-").isdigit() and int(c) < len(names)
                    else c for c in classes]
            rows.append({"dataset": f"{name} n={n}", "method": method,
                         **{t: float(v) for t, v in zip(tick, f1)}})
            figures[f"mean_class_f1.{label}.{method}"] = float(f1.mean())
            x = np.arange(len(f1))
            width = 0.8 / len(methods)
            # a transformation (…FT) shares its selection form's colour, hatched
            ax.bar(x + j * width - 0.4, f1, width, label=method, align="edge",
                   color=method_colour(method), edgecolor="white", linewidth=0.3,
                   hatch="////" if method.endswith("FT") else None)
        if shown:
            ax.set_xticks(np.arange(len(tick)), tick, rotation=45 if len(tick) > 8 else 0,
                          ha="right" if len(tick) > 8 else "center", rotation_mode="anchor")
        ax.set_ylabel("F1 (test)")
        ax.set_xlim(-0.5, len(tick) - 0.5 if shown else 0.5)
        ax.set_ylim(0, 1.0)
        figure_legend(fig, [ax], ncols=6, title=f"ours: {name} ({_kind(result, name)})")
        files += save_styled(fig, out_dir, f"fig5_{name}",
                             title=f"Fig. 5: per-class F1, {name}, {n} labelled per class")
    caption = (f"{spec.title}: per-class F1 on the test part, mean over the draws (the paper's "
               "bars were lost with its figure; nothing of the paper's is drawn). Figures: one "
               "per dataset; transformation methods hatched in their selection form's "
               "colour. " + data_caption)
    text, files = _write(rows, out_dir, caption, files)
    return Rendered(text, figures, files)


# -- objective -----------------------------------------------------------------------------

def objective_rise(objective):
    """The largest rise of the objective over one outer iteration, relative to |O_0|."""
    o = np.asarray(objective, float)
    if len(o) < 2:
        return 0.0
    return float(max(0.0, np.max(np.diff(o))) / max(abs(o[0]), 1e-300))


def sub_solver_iterations(params):
    """(iteration cap, tolerance) of the sub-solvers with these parameters (the estimator's
    defaults, the authors' budget, where they are not given)."""
    default = LM3FE()
    return (params.get("sub_max_iter", default.sub_max_iter),
            params.get("sub_tol", default.sub_tol))


def sub_solver_budget(params):
    """The sub-solvers' stopping rule of these parameters, in words."""
    it, tol = sub_solver_iterations(params)
    authors = " (the authors' code)" if (it, tol) == sub_solver_iterations({}) else ""
    return f"sub-solvers {it} iterations / tol {tol:g}{authors}"


def scheme(params):
    """Which optimisation scheme LM3FE ran with these parameters (claim 4's text)."""
    if params.get("scheme") == "exact":
        it = sub_solver_iterations(params)[0]
        return ("exact block steps (W by Newton per task to a gradient norm of 1e-10; U and "
                f"theta by monotone FISTA with exact proximal maps, <= {it} iterations)")
    restart = "W restarted from 0" if params.get("w_restart") else "W warm-started"
    if params.get("keep_best", True):
        return f"safeguarded steps (best iterate kept), {restart}: monotone by construction"
    return (f"the paper's unsafeguarded steps (last iterate), {restart}, "
            f"{sub_solver_budget(params)}")


@register_renderer("lm3fe/objective", summary="LM3FE objective per outer iteration")
@styled
def render_objective(result, out_dir, spec):
    """The objective after every outer iteration on every dataset, and its largest rise."""
    run_spec, runs = result.spec, result.frame
    datasets = sorted(set(runs["dataset"]))
    rows, figures, files = [], {}, []
    methods = [m.display for m in run_spec.methods]
    fig, axes = panel_grid(len(methods), ncols=min(len(methods), 2), panel_height=2.6,
                           sharey=True)
    for ax, method in zip(axes, methods):
        for r in runs_of(runs, method=method):
            obj = r.get("model", {}).get("objective")
            if not obj:
                continue
            rise = objective_rise(obj)
            ax.plot(np.arange(len(obj)), np.asarray(obj) / obj[0], label=r["dataset"],
                    color=_DATASET_COLOURS[datasets.index(r["dataset"])
                                           % len(_DATASET_COLOURS)])
            blocks = r.get("model", {}).get("block_rises", {})
            row = {"method": method, "dataset": r["dataset"], "draw": r["repeat"],
                   "O_0": obj[0], "O_final": obj[-1], "outer iterations": len(obj) - 1,
                   "largest rise / |O_0|": rise,
                   "non-increasing": "yes" if rise == 0 else f"no ({rise:.2g})"}
            for kind in ("W", "U", "theta"):
                b = blocks.get(kind)
                row[f"{kind}-steps rising (largest / |O_0|)"] = (
                    "-" if b is None else f"{b['rises']} of {b['steps']} ({b['max_rise']:.2g})")
            rows.append(row)
            prefix = "max_rise" if method == methods[0] else f"max_rise[{method}]"
            figures[f"{prefix}.{r['dataset']}.r{r['repeat']}"] = rise
        ax.set_title(_wrap_title(method))
        ax.set_xlabel("outer iteration k (0: after the first W-step)")
        ax.set_ylabel("objective O_k / O_0")
        ax.set_yscale("log")
        # plain numbers on the log axis (0.5, 0.2, ...), no "9x10^-1" minor labels
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    schemes = "; ".join(f"{m.display}: {scheme(m.params)}" for m in run_spec.methods)
    caption = (f"{spec.title}. The paper shows no figure (Sec. IV-C: the objective decreases). "
               f"Schemes: {schemes}. " + _data_caption(result, run_spec))
    figure_legend(fig, axes, ncols=4, title="ours: datasets (substitute data)")
    files += save_styled(fig, out_dir, "objective", title=spec.title)
    text, files = _write(rows, out_dir, caption, files)
    return Rendered(text, figures, files)


# -- ablation ------------------------------------------------------------------------------

class AblationOptions(BaseModel):
    """``report:`` of the ablation: the table whose LM3FS/LM3FT runs are the baseline row
    (the Tables' setting, same draws) and the metrics shown."""

    model_config = ConfigDict(extra="forbid")
    caption: str = ""
    baseline: str = "table1"
    metrics: list[str] = Field(default_factory=lambda: ["accuracy"])


def ablation_rows(runs, base_runs, labels, metrics, alpha):
    """Per (change, method) of the ablation's runs: the mean over the cells of each metric,
    its difference from the same method's baseline runs, and the paired t-tests per cell
    against them (better / tie / worse). A change is named by the method's label after
    "LM3FS " or "LM3FT "; the baseline's method is the bare name. ``runs``, ``base_runs``:
    runs frames (:func:`~mlkit.runner.runs_frame`)."""
    from ...stats import paired_ttest, run_values

    methods = list(dict.fromkeys(runs["method"]))
    out = []
    for base in ("LM3FS", "LM3FT"):
        for change in [None] + [m for m in methods if m.startswith(base + " ")]:
            row = {"method": base, "change": "none (Tables' setting)" if change is None
                   else change[len(base) + 1:]}
            for metric in metrics:
                mine, diffs = [], []
                tally = {"better": 0, "tie": 0, "worse": 0, "untested": 0}
                for label in labels:
                    b = run_values(rows_of(base_runs, label, base), metric)
                    if change is None:
                        a = b
                    else:
                        a = run_values(rows_of(runs, label, change), metric)
                    if not a:
                        continue
                    mine.append(np.mean(list(a.values())))
                    if b and change is not None:
                        test = paired_ttest(a, b, alpha=alpha, missing="drop")
                        diffs.append(test.diff)
                        tally[test.outcome] += 1
                name = _label(metric)
                row[f"{name} (mean over {len(mine)} cells)"] = (
                    float(np.mean(mine)) if mine else float("nan"))
                row[f"{name}: change - Tables'"] = (
                    float(np.mean(diffs)) if diffs else "-")
                row[f"{name}: cells better/tied/worse"] = (
                    "-" if change is None else
                    f"{tally['better']}/{tally['tie']}/{tally['worse']}"
                    + (f" ({tally['untested']} untested)" if tally["untested"] else ""))
            out.append(row)
    return out


@register_renderer("lm3fe/ablation", options=AblationOptions,
                   summary="LM3FE ablation: one change at a time from the Tables' setting")
def render_ablation(result, out_dir, spec):
    """Per change (and LM3FS, LM3FT): the mean over the cells of the test metrics, the mean
    difference from the Tables' runs (same draws) and the cells where the change is
    significantly better, tied, worse (paired t-tests over the draws); per cell the means."""
    from ...targets import resolve_target, saved_results
    from ...verify import paper_alpha

    opts, run_spec, runs = spec.options, result.spec, result.frame
    base_target = resolve_target(f"{spec.paper}/{opts.baseline}")
    base_records, base_dir, base_quick = saved_results(base_target)
    base_runs = runs_frame(base_records or [])
    base_runs = base_runs[base_runs["method"].isin(("LM3FS", "LM3FT"))]
    labels = [label for _, _, label, _ in cells(run_spec, result)]
    alpha = paper_alpha(spec.paper)
    rows = ablation_rows(runs, base_runs, labels, opts.metrics, alpha)
    figures = {}
    for row in rows:
        for k, v in row.items():
            if k.endswith("cells)") and isinstance(v, float):
                figures[f"{k.split(' (')[0]}.{row['method']}.{row['change']}"] = v
    per_cell = []
    for label in labels:
        for method in ["LM3FS", "LM3FT"] + list(dict.fromkeys(runs["method"])):
            recs = base_runs if method in ("LM3FS", "LM3FT") else runs
            row = {"dataset": label, "method": method if method in ("LM3FS", "LM3FT")
                   else method, "runs": "Tables'" if method in ("LM3FS", "LM3FT") else "ablation"}
            for metric in opts.metrics:
                mean, sd = _mean_sd(cell_values(recs, label, method, metric))
                row[_label(metric)] = format_mean_ci(mean, sd, 3) if mean == mean else "-"
            per_cell.append(row)
    write_table(pd.DataFrame(per_cell), out_dir, f"{spec.title}: per cell, mean ± sd over "
                "the draws. " + _data_caption(result, run_spec), name="cells")
    caption = (f"{spec.title}. One change at a time from the Tables' setting (lm3fe/"
               f"{opts.baseline}: authors' released sub-solvers, U uniform on [0, 1], weight "
               f"grids from 1e-3); the Tables' row is lm3fe/{opts.baseline}'s own runs "
               f"({'quick' if base_quick else 'full'} results), the changes are paired with "
               f"them draw by draw (t-tests at alpha {alpha:g}; cells: dataset x labelled "
               f"count). Mean over the {run_spec.protocol.repeats} draws and the cells. "
               + _data_caption(result, run_spec))
    if opts.caption:
        caption += " " + opts.caption
    text, files = _write(rows, out_dir, caption,
                         [out_dir / f"cells.{e}" for e in ("md", "csv", "tex")])
    return Rendered(text, figures, files)
