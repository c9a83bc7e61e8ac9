"""HFSS renderers: the baseline and bestK summaries, Table 2, Fig. 4 (goodness per subspace)
drawn from the runs of ``baseline`` (every one-vs-one problem of every dataset), and Figs. 3,
5, 6, 7 drawn from the runs of ``fig3`` (one binary problem per dataset: the full, bestK and
bestK + PCA ensembles with the runner's test curves). Renderers never train: OOB numbers come
from the records' ``model`` (``HFSS.run_record_extras``), test numbers from the runner.

The paper reports OOB accuracies averaged over one-vs-one problems (mean ± sd), and Table 3
test accuracies averaged over problems. The runner records every problem's test accuracy
(``problem_test``, the estimators' ``test_record_extras``) beside the multi-class (one-vs-one
vote) test accuracy, a different quantity; the tables give both, said so in the captions.
Table 3 (``hfss/table3``) averages each problem over the repetitions first, as the paper.
"""

import re
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from matplotlib.ticker import MaxNLocator

from ...report import format_mean_ci, write_table
from ...report.style import (DOUBLE_COLUMN, legend_cell, method_colour,
                             paper_kw, save_styled, shared_ylim, styled)
from ...report.style import panel_grid as style_grid
from ...runner.result import runs_by
from ...targets import Rendered, register_renderer

PAPER_DATA = "paper"            # the role under which the configs give the paper's numbers
FULL, BESTK, PCA = "HFSS (all)", "HFSS (bestK)", "HFSS (bestK+PCA)"
#: the same bestK under the other tie rule of Algorithm 2's argmax (``bestk_ties: longest``)
BESTK_LONGEST, ONE_SHOT = "HFSS (bestK, longest ties)", "One-shot SVM"


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    caption: str = ""


class CurveOptions(_Options):
    """``report:`` of Figs. 3, 5, 6, 7: the ensemble drawn (a method label of fig3's runs;
    Fig. 5: the HFSS (forward) run, HFSS staged by its prefixes: ``stages: forward``)."""

    method: str = FULL


class GoodnessOptions(_Options):
    """``report:`` of Fig. 4: how goodness is normalised per problem before averaging (the
    paper does not say): "max" G_j / max_j G_j, "minmax" (G_j - min) / (max - min),
    "none" the raw OOB accuracy."""

    normalise: Literal["max", "minmax", "none"] = "max"


class SummaryOptions(_Options):
    """``report:`` of the baseline/bestK/Table 2 summaries: the methods they read."""

    full: str = FULL
    bestk: str = BESTK
    pca: str = PCA
    #: bestK with the longest tied prefix (a row beside bestK's, when the runs have it)
    bestk_longest: str = BESTK_LONGEST


# -- shared pieces ------------------------------------------------------------------------

def _problem_test(record):
    """Each one-vs-one problem's test accuracy, as the estimator's test_record_extras
    recorded it (empty for records made without it)."""
    return record.get("test_extras", {}).get("problem_test", [])

def provenance_caption(result):
    """Every dataset with its kind (real substitute / synthetic) and source."""
    parts = []
    for label, data in result.datasets.items():
        kind = "synthetic, the paper's layout" if data.synthetic else "real substitute"
        parts.append(f"{label} ({kind}: {data.source})")
    return ("Data: " + "; ".join(parts) + result.caption_note + ". The paper's 19-class "
            "image-blob data are private; its numbers are shown beside every dataset.")


def panel_grid(n, ncols=3):
    """A grid of ``n`` panels plus one free cell for the shared legend (it covers no data),
    in the project's style (:func:`mlkit.report.style.panel_grid`): ``(fig, axes,
    legend_ax)``."""
    ncols = min(ncols, n + 1)
    fig, axes = style_grid(n + 1, ncols=ncols, width=DOUBLE_COLUMN, panel_height=2.1)
    return fig, axes[:n], axes[n]


def shared_legend(axes, legend_ax, title=None):
    """One legend in the free cell, with every series drawn in any panel; ``title`` says
    which data the lines ran on."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab and not lab.startswith("_"):
                seen.setdefault(lab, h)
    legend_cell(legend_ax, list(seen.values()), list(seen), title=title)


def panel_title(result, label):
    """``label (kind)`` and, for a one-problem dataset, its two classes."""
    data = result.datasets[label]
    title = f"{label} ({'synthetic' if data.synthetic else 'real'})"
    names = list(getattr(data, "class_names", None) or [])
    if len(names) == 2:
        title += f"\n{names[0]} vs {names[1]}"
    return title


def _data_title(result):
    """Which data the panels ran on, for the one-line figure title."""
    kinds = {bool(d.synthetic) for d in result.datasets.values()}
    if kinds == {True}:
        return "synthetic data"
    if kinds == {False}:
        return "substitute data"
    return "substitute and synthetic data"


_OOB_COLOUR = method_colour("HFSS (all)")
_TEST_COLOUR = method_colour("HFSS (bestK)")


def _short(name, width=12):
    """A subspace name short enough for a tick label: a qualifier in parentheses goes
    first ("LBP-59 (infrared)" -> "LBP-59"), then the name is abbreviated with a full stop
    ("Gabor channel" -> "Gabor chann."), never after a space ("image SIFT ...")."""
    name = str(name)
    if len(name) > width:
        name = re.sub(r"\s*\([^)]*\)?\s*$", "", name) or name
    if len(name) <= width:
        return name
    return name[: width - 1].rstrip(" ./,-") + "."


def _accuracy_range(axes, floor=70.0):
    """One y range (%) for every panel: the union of their data, reaching at least down to
    ``floor`` (a panel near the ceiling is not magnified into one sample's flicker), never
    above 100.5."""
    lo, hi = shared_ylim(axes, hi=100.5)
    for ax in axes:
        ax.set_ylim(min(lo, floor), max(hi, 100.5))


def problem_values(records, key):
    """Per-problem values of ``key`` over every record (all problems of all repeats)."""
    return np.array([p[key] for r in records for p in r["model"]["problems"]], dtype=float)


def _ms(values, scale=100.0):
    values = scale * np.asarray(values, float)
    sd = float(values.std(ddof=1)) if values.size > 1 else float("nan")
    return float(values.mean()), sd


def _paper(spec, run_spec, label, method, key, role=None):
    for source in (spec, run_spec):
        pv = source.paper_value(label, method, key, role=role or PAPER_DATA)
        if pv is not None:
            return pv
    return None


def _pcell(pv, digits=2):
    if pv is None:
        return "-"
    if isinstance(pv.value, str):
        return pv.value
    return format_mean_ci(pv.value, pv.spread, digits)


def _test_acc(recs):
    vals = [r["metrics"]["accuracy"] for r in recs if "accuracy" in r["metrics"]]
    return _ms(vals) if vals else (float("nan"), float("nan"))


def dims_of(record, selected_only=True, after_pca=True):
    """Per problem: the total dimensionality of its chosen (or all) subspaces."""
    names = record["model"]["subspaces"]
    before = dict(zip(names, record["model"]["dims_before_pca"]))
    out = []
    for p in record["model"]["problems"]:
        after = dict(zip(names, p["dims_after_pca"])) if after_pca else before
        keep = p["selected"] if selected_only else names
        out.append(sum(after[s] for s in keep))
    return out


def ensemble_summary(recs):
    """OOB mean/sd/min/max over problems (%), test accuracy (%), mean bestK, mean dims."""
    key = "oob_accuracy"
    oob = 100 * problem_values(recs, key)
    oob_all = 100 * problem_values(recs, "oob_accuracy_all")
    dims = [d for r in recs for d in dims_of(r)]
    per_problem = [v for r in recs for v in _problem_test(r) if v is not None]
    return {"test_problems": _ms(per_problem) if per_problem else None,
            "oob": _ms(oob, 1), "oob_min": float(oob.min()), "oob_max": float(oob.max()),
            "oob_all": _ms(oob_all, 1), "test": _test_acc(recs),
            "bestk": float(problem_values(recs, "bestk").mean()),
            "dims": float(np.mean(dims)), "total": float(sum(recs[0]["model"]["dims_before_pca"])),
            "problems": len(oob)}


def _problems_cell(summary):
    """Per-problem test accuracy (mean ± sd), when the runner recorded ``problem_test``
    (``HFSS.problem_scores`` on the test part); "-" otherwise."""
    t = summary["test_problems"]
    return format_mean_ci(*t, 2) if t else "-"


def oob_test_pairs(records):
    """(OOB, test) accuracy per problem of records that hold the runner's ``problem_test``
    (the chosen ensemble's per-problem test accuracy, aligned with ``problems``)."""
    pairs = [(p["oob_accuracy"], t) for r in records
             for p, t in zip(r["model"]["problems"], _problem_test(r))
             if t is not None and p["oob_accuracy"] is not None]
    return np.array(pairs, float).reshape(-1, 2)


# -- baseline -----------------------------------------------------------------------------
@register_renderer("hfss/baseline", options=SummaryOptions)
def render_baseline(result, out_dir, spec):
    """Full ensemble (Alg. 1, all subspaces): OOB accuracy over one-vs-one problems."""
    runs = runs_by(result.frame)
    opts = spec.options
    rows, figures = [], {}
    for label in result.datasets:
        recs = runs.get((label, opts.full), [])
        if not recs:
            continue
        s = ensemble_summary(recs)
        pv = _paper(spec, result.spec, label, "full ensemble", "oob_accuracy")
        rng = _paper(spec, result.spec, label, "full ensemble", "range")
        rows.append({"dataset": label, "problems": s["problems"],
                     "OOB acc. % (paper)": _pcell(pv),
                     "OOB acc. % (ours)": format_mean_ci(*s["oob_all"], 2),
                     "range (paper)": rng.value if rng else "-",
                     "range (ours)": f"[{s['oob_min']:.2f}, {s['oob_max']:.2f}]",
                     "test acc. % multi-class (ours)": format_mean_ci(*s["test"], 2),
                     "test acc. % per problem (ours)": _problems_cell(s),
                     "subspaces": len(recs[0]["model"]["subspaces"]),
                     "dims": int(s["total"])})
        figures[f"oob_accuracy.{label}"] = s["oob_all"][0]
        figures[f"test_accuracy.{label}"] = s["test"][0]
    caption = (f"{spec.title}. Full bagging ensemble over all subspaces ({opts.full}): OOB "
               "accuracy, mean ± sd over every one-vs-one problem (all repeats) and its range; "
               "test: the one-vs-one vote's multi-class accuracy on the held-out 20% (not "
               f"reported by the paper). {provenance_caption(result)} {spec.options.caption}")
    text = write_table(pd.DataFrame(rows), out_dir, caption.strip())
    return Rendered(text, figures, [out_dir / f"table.{e}" for e in ("md", "csv", "tex")])


# -- bestK --------------------------------------------------------------------------------
@register_renderer("hfss/bestk", options=SummaryOptions)
def render_bestk(result, out_dir, spec):
    """Inter-subspace selection (Alg. 2): accuracy, mean bestK, dimensionality and its cut."""
    runs = runs_by(result.frame)
    opts = spec.options
    rows, figures = [], {}
    for label, (rule, method) in ((lab, rm) for lab in result.datasets
                                  for rm in (("shortest", opts.bestk),
                                             ("longest", opts.bestk_longest))):
        full, best = runs.get((label, opts.full), []), runs.get((label, method), [])
        if not full or not best:
            continue
        f, b = ensemble_summary(full), ensemble_summary(best)
        p = {k: _paper(spec, result.spec, label, "bestK", k)
             for k in ("oob_accuracy", "bestk", "dims", "reduction")}
        key = label if rule == "shortest" else f"{label}.longest"
        rows.append({
            "dataset": label, "tie rule": rule, "problems": b["problems"],
            "full OOB % (ours)": format_mean_ci(*f["oob_all"], 2),
            "bestK OOB % (paper)": _pcell(p["oob_accuracy"]),
            "bestK OOB % (ours)": format_mean_ci(*b["oob"], 2),
            "gain, points (ours)": b["oob"][0] - f["oob_all"][0],
            "test % full / bestK (ours)": f"{f['test'][0]:.2f} / {b['test'][0]:.2f}",
            "bestK test % per problem (ours)": _problems_cell(b),
            "mean bestK (paper)": _pcell(p["bestk"]), "mean bestK (ours)": b["bestk"],
            "of": len(best[0]["model"]["subspaces"]),
            "dims (paper)": _pcell(p["dims"]), "dims (ours)": b["dims"], "of dims": b["total"],
            "reduction % (paper)": _pcell(p["reduction"]),
            "reduction % (ours)": 100 * (1 - b["dims"] / b["total"])})
        figures.update({f"oob_bestk.{key}": b["oob"][0], f"oob_full.{label}": f["oob_all"][0],
                        f"bestk.{key}": b["bestk"], f"dims.{key}": b["dims"],
                        f"test_bestk.{key}": b["test"][0]})
        if b["test_problems"]:
            figures[f"test_bestk_problems.{key}"] = b["test_problems"][0]
    caption = (f"{spec.title}. OOB accuracy (mean ± sd over one-vs-one problems) of the full "
               "ensemble and of the bestK prefix (the OOB maximum over prefixes, hence "
               "optimistic: the multi-class test accuracy of both is given beside it); mean "
               "bestK and the mean dimensionality of the chosen subspaces. Tie rule: which of "
               "several prefixes tied at the highest OOB goodness is bestK, the paper does "
               f"not say: shortest ({opts.bestk}, the default) or longest "
               f"({opts.bestk_longest}), the same weak SVMs. "
               f"{provenance_caption(result)} {opts.caption}")
    text = write_table(pd.DataFrame(rows), out_dir, caption.strip())
    return Rendered(text, figures, [out_dir / f"table.{e}" for e in ("md", "csv", "tex")])


# -- table 2 ------------------------------------------------------------------------------
@register_renderer("hfss/table2", options=SummaryOptions)
def render_table2(result, out_dir, spec):
    """Table 2: subspace dimensions before/after PCA (95%), accuracy with PCA + bestK."""
    runs = runs_by(result.frame)
    opts = spec.options
    rows, acc_rows, figures = [], [], {}
    for label in result.datasets:
        pca, best = runs.get((label, opts.pca), []), runs.get((label, opts.bestk), [])
        if not pca:
            continue
        names = pca[0]["model"]["subspaces"]
        before = pca[0]["model"]["dims_before_pca"]
        after = np.array([p["dims_after_pca"] for r in pca for p in r["model"]["problems"]],
                         float).mean(axis=0)
        for j, (name, d0, d1) in enumerate(zip(names, before, after)):
            pv = _paper(spec, result.spec, label, f"#{j + 1}", "dims_after") \
                if result.datasets[label].synthetic else None
            rows.append({"dataset": label, "subspace": f"#{j + 1} {name}", "dims before": d0,
                         "after PCA (paper)": _pcell(pv), "after PCA (ours)": float(d1)})
            figures[f"dims_after.{label}.{j + 1}"] = float(d1)
        s = ensemble_summary(pca)
        b = ensemble_summary(best) if best else None
        p = {k: _paper(spec, result.spec, label, "PCA + bestK", k)
             for k in ("oob_accuracy", "dims")}
        acc_rows.append({"dataset": label,
                         "PCA+bestK OOB % (paper)": _pcell(p["oob_accuracy"]),
                         "PCA+bestK OOB % (ours)": format_mean_ci(*s["oob"], 2),
                         "bestK OOB % (ours)": format_mean_ci(*b["oob"], 2) if b else "-",
                         "test % PCA+bestK (ours)": s["test"][0],
                         "dims (paper)": _pcell(p["dims"]), "dims (ours)": s["dims"],
                         "bestK dims, no PCA (ours)": b["dims"] if b else "-"})
        figures[f"oob_pca_bestk.{label}"] = s["oob"][0]
        figures[f"dims_pca_bestk.{label}"] = s["dims"]
    caption = (f"{spec.title}. Mean dimension of every subspace after PCA keeping 95% of its "
               "variance (fitted on each problem's training part), over all one-vs-one "
               "problems; the paper's per-subspace numbers belong to its 83-D layout, shown "
               f"beside hfss-synthetic. {provenance_caption(result)} {opts.caption}")
    text = write_table(pd.DataFrame(rows), out_dir, caption.strip())
    acc_caption = ("PCA + bestK: OOB accuracy (mean ± sd over problems) and mean "
                   "dimensionality of the chosen subspaces after PCA, beside bestK without PCA.")
    text += "\n" + write_table(pd.DataFrame(acc_rows), out_dir, acc_caption, name="accuracy")
    files = [out_dir / f"{n}.{e}" for n in ("table", "accuracy") for e in ("md", "csv", "tex")]
    return Rendered(text, figures, files)


# -- fig 4 --------------------------------------------------------------------------------
def normalised_goodness(goodness, how):
    """(n_problems, n_subspaces) goodness normalised per problem (see GoodnessOptions)."""
    G = np.asarray(goodness, float)
    if how == "max":
        return G / G.max(axis=1, keepdims=True)
    if how == "minmax":
        lo, hi = G.min(axis=1, keepdims=True), G.max(axis=1, keepdims=True)
        return np.where(hi > lo, (G - lo) / np.where(hi > lo, hi - lo, 1), 1.0)
    return G


@register_renderer("hfss/fig4", options=GoodnessOptions)
@styled
def render_fig4(result, out_dir, spec):
    """Fig. 4: normalised goodness of every subspace, averaged over problems."""
    runs = runs_by(result.frame)
    opts = spec.options
    labels = [lab for lab in result.datasets if (lab, FULL) in runs]
    fig, axes, legend_ax = panel_grid(len(labels))
    rows, figures = [], {}
    for ax, label in zip(axes, labels):
        recs = runs[(label, FULL)]
        names = recs[0]["model"]["subspaces"]
        G = normalised_goodness([p["goodness"] for r in recs for p in r["model"]["problems"]],
                                opts.normalise)
        mean = G.mean(axis=0)
        x = np.arange(1, len(names) + 1)
        ax.plot(x, mean, "o-", color=method_colour("HFSS (all)"), label="goodness (ours)")
        ax.axhline(mean.mean(), color=method_colour("One-shot SVM"), ls=":",
                   label="mean over subspaces")
        ax.set_xticks(x, [f"{j} {_short(n)}" for j, n in zip(x, names)], rotation=90)
        ax.set_ylabel(f"goodness / {opts.normalise}" if opts.normalise != "none"
                      else "goodness")
        ax.set_title(panel_title(result, label))
        for j, (name, g) in enumerate(zip(names, mean)):
            rows.append({"dataset": label, "subspace": f"#{j + 1} {name}",
                         "normalised goodness": float(g),
                         "raw goodness %": 100 * float(np.mean(
                             [p["goodness"][j] for r in recs for p in r["model"]["problems"]])),
                         "rank": int((mean > g).sum()) + 1})
            figures[f"goodness.{label}.{j + 1}"] = float(g)
        figures[f"best_subspace.{label}"] = int(np.argmax(mean)) + 1
        figures[f"worst_subspace.{label}"] = int(np.argmin(mean)) + 1
    how = {"max": "G_j / max_j G_j per problem", "none": "none (raw OOB goodness)",
           "minmax": "(G_j - min) / (max - min) per problem"}[opts.normalise]
    caption = (f"{spec.title}. Goodness G(S_j) (OOB accuracy of subspace j's own bagged "
               f"ensemble), normalised by {how} (the paper does not state its normalisation), "
               "averaged over every one-vs-one problem; dotted: mean over subspaces; one y range for "
               "every panel; x: the subspaces by number and name. Paper: #1 "
               f"RGB mean and #3 LUV mean highest, #5 Gabor lowest. {provenance_caption(result)}"
               f" {opts.caption}").strip()
    shared_ylim(axes, hi=1.0 if opts.normalise != "none" else None, pad=0.08)
    shared_legend(axes, legend_ax, title=f"ours: {_data_title(result)}")
    files = save_styled(fig, out_dir, "fig4", title=spec.title)
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures,
                    files + [out_dir / f"table.{e}" for e in ("md", "csv", "tex")])


# -- figs 3, 6, 7 -------------------------------------------------------------------------
def curves_of(record):
    """(OOB curve, test curve) of a binary run along the bagging process (weak SVMs)."""
    oob = np.asarray(record["model"]["oob_curve"], float)
    test = np.asarray(record.get("curves", {}).get("accuracy", []), float)
    return oob, test


def roughness(curve, start=0):
    """Mean absolute change between consecutive points from ``start`` on (smoothness)."""
    c = np.asarray(curve, float)[start:]
    c = c[~np.isnan(c)]
    return float(np.mean(np.abs(np.diff(c)))) if c.size > 1 else float("nan")


def _problem_name(result, label):
    return result.datasets[label].name.split("[", 1)[-1].rstrip("]")


@register_renderer("hfss/curves", options=CurveOptions)
@styled
def render_curves(result, out_dir, spec):
    """Figs. 3, 6, 7: OOB and test accuracy along the bagging process for one problem."""
    runs = runs_by(result.frame)
    opts = spec.options
    labels = [lab for lab in result.datasets if (lab, opts.method) in runs]
    fig, axes, legend_ax = panel_grid(len(labels))
    rows, points, figures = [], [], {}
    for ax, label in zip(axes, labels):
        rec = runs[(label, opts.method)][0]
        oob, test = curves_of(rec)
        x = np.arange(1, len(oob) + 1)
        # test first, wide and pale; OOB on top, thin and dark: where both are equal (at
        # 100%) the OOB line stays visible inside the test band
        if test.size:
            ax.plot(np.arange(1, len(test) + 1), 100 * test, color=_TEST_COLOUR, lw=3.2,
                    alpha=0.45, solid_capstyle="butt", label="test (ours)")
        ax.plot(x, 100 * oob, color=_OOB_COLOUR, lw=1.0, label="OOB (ours)")
        pv = _paper(spec, result.spec, label, opts.method, "oob_accuracy")
        if pv is not None and result.datasets[label].synthetic:
            ax.plot([len(oob)], [pv.value], **paper_kw(
                "black", label="paper: final OOB (its private data)"))
        ax.set_xlabel("weak SVMs added")
        ax.set_ylabel("accuracy %")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
        ax.set_title(panel_title(result, label))
        p = rec["model"]["problems"][0]
        names = rec["model"]["subspaces"]
        dims = dict(zip(names, p["dims_after_pca"]))
        pv = _paper(spec, result.spec, label, opts.method, "oob_accuracy")
        rows.append({"dataset": label, "problem": _problem_name(result, label),
                     "weak SVMs": len(oob), "subspaces": ", ".join(p["selected"]),
                     "dims": sum(dims[s] for s in p["selected"]),
                     "final OOB % (paper)": _pcell(pv),
                     "final OOB % (ours)": 100 * float(oob[-1]),
                     "final test % (ours)": 100 * float(test[-1]) if test.size else "-",
                     "roughness OOB (ours)": 100 * roughness(oob, len(oob) // 3)})
        figures[f"oob_final.{label}"] = 100 * float(oob[-1])
        if test.size:
            figures[f"test_final.{label}"] = 100 * float(test[-1])
        for i in range(len(oob)):
            points.append({"dataset": label, "weak SVMs": i + 1, "OOB %": 100 * float(oob[i]),
                           "test %": 100 * float(test[i]) if i < test.size else None})
    caption = (f"{spec.title}. {opts.method}: OOB (thin dark line) and test (wide pale line) "
               "accuracy after each weak SVM (rounds i, subspaces j inside) for one binary problem per dataset: "
               "the paper's pair (sea water vs remnant) on hfss-synthetic; on the real "
               "datasets the pair the config's pair: auto rule chose, named with its reason "
               "in the problem column (the paper's description, a large pair of size ratio "
               "about 1:2; classes of equal size leave the ratio 1:1), the problem trained and "
               "tested on its share of one stratified split of the whole dataset, so no test "
               "row enters the choice; roughness: "
               "mean |change| of the OOB curve over its last two thirds. One y range for "
               "every panel, at least 70-100%, so that one test sample's flicker near the "
               "ceiling is not magnified. Hollow diamond: the paper's final OOB accuracy "
               "(its private data) on the panel of its layout, hfss-synthetic. "
               f"{provenance_caption(result)} {opts.caption}").strip()
    name = spec.artifact
    _accuracy_range(axes)
    shared_legend(axes, legend_ax, title=f"ours: {_data_title(result)}")
    files = save_styled(fig, out_dir, name, title=spec.title)
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    write_table(pd.DataFrame(points), out_dir, caption, name="curve")
    files += [out_dir / f"{n}.{e}" for n in ("table", "curve") for e in ("md", "csv", "tex")]
    return Rendered(text, figures, files)


# -- fig 5 --------------------------------------------------------------------------------
@register_renderer("hfss/fig5", options=CurveOptions)
@styled
def render_fig5(result, out_dir, spec):
    """Fig. 5: forward selection (goodness-sorted prefixes), OOB and test, maxima marked."""
    runs = runs_by(result.frame)
    opts = spec.options
    labels = [lab for lab in result.datasets if (lab, opts.method) in runs]
    fig, axes, legend_ax = panel_grid(len(labels))
    rows, points, figures = [], [], {}
    for ax, label in zip(axes, labels):
        rec = runs[(label, opts.method)][0]
        p = rec["model"]["problems"][0]
        oob = 100 * np.asarray(p["forward_curve"], float)
        # the test accuracy of each prefix: the runner's curve of HFSS (forward)'s stages
        test = 100 * np.asarray(rec.get("curves", {}).get("accuracy", []), float)
        x = np.arange(1, len(oob) + 1)
        k_test = None
        if test.size:
            ax.plot(x, test, "s-", color=_TEST_COLOUR, lw=3.2, ms=6, alpha=0.45,
                    label="test (ours)")
            k_test = int(np.nanargmax(test)) + 1
            ax.plot([k_test], [test[k_test - 1]], "v", color=_TEST_COLOUR, ms=7,
                    label="test max (ours)", zorder=6)
        ax.plot(x, oob, "o-", color=_OOB_COLOUR, lw=1.0, ms=3, label="OOB (ours)")
        k_oob = int(np.nanargmax(oob)) + 1
        ax.plot([k_oob], [oob[k_oob - 1]], "o", mfc="none", mec=_OOB_COLOUR, ms=9, mew=1.3,
                label="OOB max = bestK (ours)", zorder=6)
        if result.datasets[label].synthetic:
            ax.axvline(3, **{k: v for k, v in paper_kw("black", kind="line",
                                                       label="paper: OOB max at k = 3").items()
                             if k != "zorder"}, zorder=1)
        ax.set_xticks(x)
        ax.set_xlabel("subspaces in the prefix")
        ax.set_ylabel("accuracy %")
        ax.set_title(panel_title(result, label))
        rows.append({"dataset": label, "problem": _problem_name(result, label),
                     "order by goodness": ", ".join(p["order"]),
                     "OOB max at k (paper)": 3, "OOB max at k (ours)": k_oob,
                     "OOB max %": float(oob[k_oob - 1]),
                     "test max at k (ours)": k_test if k_test else "not in the records",
                     "test % at OOB max": float(test[k_oob - 1]) if test.size else "-",
                     "test max %": float(test[k_test - 1]) if k_test else "-"})
        figures[f"k_oob.{label}"] = k_oob
        if k_test:
            figures[f"k_test.{label}"] = k_test
        for k in range(len(oob)):
            points.append({"dataset": label, "k": k + 1, "subspace added": p["order"][k],
                           "OOB %": float(oob[k]),
                           "test %": float(test[k]) if k < test.size else None})
    caption = (f"{spec.title}. Forward selection (Alg. 2) on Fig. 3's binary problem per dataset (named per row): "
               "OOB accuracy of the ensemble of the k best subspaces by goodness (thin dark "
               "line); hollow circle: its maximum (bestK); wide pale line: test accuracy of the "
               "same prefixes (HFSS's forward stages), triangle: its maximum (the first, on "
               "ties); dashed: the paper's OOB maximum at k = 3 (its private data), on the "
               "panel of its layout, hfss-synthetic. One y range for every panel. "
               f"{provenance_caption(result)} {opts.caption}").strip()
    _accuracy_range(axes)
    shared_legend(axes, legend_ax, title=f"ours: {_data_title(result)}")
    files = save_styled(fig, out_dir, "fig5", title=spec.title)
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    write_table(pd.DataFrame(points), out_dir, caption, name="curve")
    files += [out_dir / f"{n}.{e}" for n in ("table", "curve") for e in ("md", "csv", "tex")]
    return Rendered(text, figures, files)


# -- table 3 ------------------------------------------------------------------------------
def problem_average_accuracy(recs):
    """Table 3's entry as the paper computes it: each one-vs-one problem's test accuracy
    averaged over the repetitions, then mean ± sd over problems (%). None when the records
    hold no per-problem test accuracy (``problem_test``)."""
    tests = [_problem_test(r) for r in recs]
    if not tests or any(not t for t in tests) or len({len(t) for t in tests}) != 1:
        return None
    T = np.array([[np.nan if v is None else v for v in t] for t in tests], float)
    seen = ~np.isnan(T)
    per_problem = np.where(seen, T, 0).sum(axis=0)[seen.any(axis=0)] / \
        seen.sum(axis=0)[seen.any(axis=0)]
    return _ms(per_problem) if per_problem.size else None


def _fixed_sizes(protocol):
    """Whether the protocol draws fixed numbers per class (``labelled`` with ``n_test``)."""
    return protocol.split == "labelled" and protocol.n_test is not None


def per_class_sizes(protocol, data):
    """(training, test) samples per class of one repetition: ``n_labelled`` and ``n_test``
    of the labelled protocol, else the smallest class's shares of a stratified split."""
    if _fixed_sizes(protocol):
        return protocol.n_labelled, protocol.n_test
    smallest = np.bincount(np.asarray(data.y)).min()
    k = int(round(smallest * (1 - protocol.test_size)))
    return k, int(smallest - k)


@register_renderer("hfss/table3", options=_Options)
def render_table3(result, out_dir, spec):
    """Table 3: small training sets; one-shot SVM vs full ensemble vs bestK (test accuracy)."""
    groups = dict(iter(result.frame.groupby(["dataset", "method"], sort=False)))
    run_spec = result.spec
    rows, figures = [], {}
    for ds in run_spec.datasets:
        for m in run_spec.methods:
            runs = groups.get((ds.display, m.display))
            if runs is None:
                continue
            recs = runs["record"].tolist()
            pp = problem_average_accuracy(recs)
            multi = _ms(runs["accuracy"])
            pv = _paper(spec, run_spec, ds.display, m.display, "accuracy", role=ds.role)
            k, t = per_class_sizes(ds.protocol_over(run_spec.protocol),
                                   result.datasets[ds.display])
            rows.append({"dataset": ds.display, "paper's size": ds.role or "-",
                         "train per problem (ours)": f"{k}+{k}",
                         "test per problem (ours)": f"{t}+{t}",
                         "method": m.display, "paper %": _pcell(pv),
                         "ours % (per problem)": format_mean_ci(*pp, 2) if pp else "-",
                         "ours % (multi-class)": format_mean_ci(*multi, 2),
                         "repetitions": len(recs),
                         "problems": len(_problem_test(recs[0])) or "-"})
            if pp:
                figures[f"accuracy.{ds.display}.{m.display}"] = pp[0]
            figures[f"multiclass.{ds.display}.{m.display}"] = multi[0]
    fixed = all(_fixed_sizes(ds.protocol_over(run_spec.protocol)) for ds in run_spec.datasets)
    how = ("Each repetition draws, seeded and independently of the others, the training "
           "samples of every class from the whole dataset and the test samples of every class "
           "from the rest (the paper's protocol; the columns train/test per problem give "
           "them per class of a problem)" if fixed else
           "Each repetition splits the dataset's rows stratified into a training and a test "
           "part (a dataset restricted to per_class samples of every class keeps them for "
           "every repetition; the columns give the smallest class's share)")
    caption = (f"{spec.title}. Ours per problem: every one-vs-one problem's test accuracy "
               f"averaged over the {run_spec.protocol.repeats} repetitions, then mean ± sd over "
               "the problems (the paper's statistic); multi-class: the one-vs-one vote's test "
               f"accuracy over all classes, mean ± sd over the repetitions. {how}; the "
               "paper's numbers (its private data) stand beside the rows of the same size. "
               f"{provenance_caption(result)} {spec.options.caption}").strip()
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, [out_dir / f"table.{e}" for e in ("md", "csv", "tex")])
