"""SparseMI renderers: Fig. 1 (label-mean bag features of a toy problem), Fig. 2 (XVs moving
from poor starting points on the two synthetic problems), Fig. 3 (initialisation schemes
with and without optimisation, bars) and Fig. 4 (objective and test accuracy per iteration).

Renderers never train. Fig. 1 is a pure data/feature illustration: its only computation
beyond the bag features of Eq. (8) is a Fisher LDA direction used to *project* the features
to 2-D for display (as the paper does), which is not a classifier of the figure. Fig. 2
evaluates the models recorded in the runs (``record_path=True``: XVs, beta, rho) on a grid.
"""

from typing import Optional

import numpy as np
from matplotlib.ticker import EngFormatter
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from ...experiment import folds_per_repeat
from ...kernels import rbf_kernel
from ...report import write_table
from ...report.figures import integer_ticks
from ...report.style import (OKABE_ITO, figure_legend, legend_cell, method_colour,
                             panel_grid, paper_kw, save_styled, styled)
from ...report.generic import MetricTableOptions, metric_rows, over_runs, row_values
from ...runner.result import rows_of
from ...targets import Rendered, register_renderer


# -- Fig. 1 -------------------------------------------------------------------------------
class Fig1Options(BaseModel):
    """``report:`` of fig1: the kernels of the bag features."""

    model_config = ConfigDict(extra="forbid")
    gamma: float = Field(1.0, gt=0)           # Gaussian kernel exp(-gamma ||x - x'||^2)
    degree: int = Field(3, ge=1)              # polynomial kernel (x.x' + 1)^degree (r = 3)


def bag_features(X, offsets, Z, kernel):
    """Eq. (8): s(X_i) = 1/n_i sum_p [k(x_ip, z_1) .. k(x_ip, z_m)], shape (n_bags, m)."""
    K = kernel(X, Z)
    return np.add.reduceat(K, offsets[:-1], axis=0) / np.diff(offsets)[:, None]


def lda_projection(S, y):
    """A 2-D display of the features S: the Fisher LDA direction (ridge-regularised within
    scatter; with two classes LDA has one direction) and the first principal direction of
    what is orthogonal to it. A projection for drawing, not a classifier."""
    S = S - S.mean(axis=0)
    m1, m0 = S[y == 1].mean(axis=0), S[y == 0].mean(axis=0)
    Sw = np.cov(S[y == 1].T, bias=True) * (y == 1).sum() + np.cov(S[y == 0].T, bias=True) \
        * (y == 0).sum()
    Sw = np.atleast_2d(Sw)
    w = np.linalg.solve(Sw + 1e-6 * np.trace(Sw) / len(Sw) * np.eye(len(Sw)) + 1e-12 *
                        np.eye(len(Sw)), m1 - m0)
    w /= np.linalg.norm(w)
    R = S - np.outer(S @ w, w)
    v = np.linalg.svd(R, full_matrices=False)[2][0] if R.shape[1] > 1 else np.zeros_like(w)
    return np.column_stack([S @ w, R @ v])


def fisher_ratio(a, y):
    """(m1 - m0)^2 / (s1^2 + s0^2) of the 1-D values a, and whether a threshold separates."""
    p, n = a[y == 1], a[y == 0]
    if p.mean() < n.mean():
        p, n = -p, -n
    return float((p.mean() - n.mean()) ** 2 / (p.var() + n.var() + 1e-300)), bool(p.min() >
                                                                                   n.max())


def toy_xvs(X, labels):
    """(poor, good) pairs of XVs: the two negative instances farthest from the positive
    instances' mean, and the two positive instances nearest to it (Fig. 1 (e)-(f))."""
    centre = X[labels == 1].mean(axis=0)
    d = np.linalg.norm(X - centre, axis=1)
    neg, pos = np.flatnonzero(labels == 0), np.flatnonzero(labels == 1)
    return X[neg[np.argsort(-d[neg])[:2]]], X[pos[np.argsort(d[pos])[:2]]]


FIG1_MARKS = {  # (colour, marker, size) of the toy's points, shared by every panel
    "negative": (OKABE_ITO["blue"], "o", 14), "positive": (OKABE_ITO["vermillion"], "^", 22)}


@register_renderer("sparsemi/fig1", options=Fig1Options)
@styled
def render_fig1(result, out_dir, spec):
    """Fig. 1: a toy MI problem and its label-mean bag features under three kernels and
    with poor / good XVs (no learning; LDA only projects features for display)."""
    opts = spec.options
    data = result.dataset
    X, off, y, lab = data.instances, data.offsets, np.asarray(data.y), data.instance_labels
    poor, good = toy_xvs(X, lab)
    kernels = {
        "linear": lambda A, B: A @ B.T,
        f"polynomial (r={opts.degree})": lambda A, B: (A @ B.T + 1.0) ** opts.degree,
        f"Gaussian (gamma={opts.gamma:g})": lambda A, B: rbf_kernel(A, B, opts.gamma),
    }
    fig, axes = panel_grid(6, ncols=3, panel_height=2.3)
    ax = axes[0]
    for name, value in (("negative", 0), ("positive", 1)):
        colour, marker, size = FIG1_MARKS[name]
        ax.scatter(*X[lab == value].T, s=size, c=colour, marker=marker,
                   label=f"{name} instance / bag")
    ax.scatter(*poor.T, s=70, c="k", marker="x", label="poor XVs")
    ax.scatter(*good.T, s=90, c="k", marker="+", label="good XVs")
    ax.set_title("(a) instances")
    rows, figures = [], {}
    panels = [(f"({t}) {name}, {X.shape[0]}-D, LDA", k, X, True)
              for t, (name, k) in zip("bcd", kernels.items())]
    gauss = list(kernels.values())[2]
    panels += [("(e) Gaussian, poor XVs", gauss, poor, False),
               ("(f) Gaussian, good XVs", gauss, good, False)]
    for ax, (title, k, Z, project) in zip(axes[1:], panels):
        S = bag_features(X, off, Z, k)
        P = lda_projection(S, y) if project else S
        axis = lda_projection(S, y)[:, 0]
        J, separable = fisher_ratio(axis, y)
        for name, value in (("negative", 0), ("positive", 1)):
            colour, marker, size = FIG1_MARKS[name]
            ax.scatter(*P[y == value].T, s=size + 2, c=colour, marker=marker)
        ax.set_title(title)
        if project:
            ax.set_xlabel("LDA direction")
            ax.set_ylabel("orthogonal PC")
        else:
            ax.set_xlabel("mean k(x, z1)")
            ax.set_ylabel("mean k(x, z2)")
        key = title.split(" ", 1)[1]
        figures[f"fisher.{key}"] = J
        figures[f"separable.{key}"] = separable
        rows.append({"panel": title, "bag-feature dim": S.shape[1],
                     "Fisher ratio on the LDA axis (ours)": round(J, 2),
                     "bags separable on it (ours)": "yes" if separable else "no",
                     "paper": "drawing only"})
    figure_legend(fig, axes[:1], ncols=4, title="synthetic data (our toy generator)")
    caption = (f"Data: {data.provenance}{result.caption_note}. Bag features of Eq. (8) "
               f"against all {X.shape[0]} "
               "instances (b-d, projected to 2-D for display by the Fisher LDA direction and "
               "the first principal direction orthogonal to it) or against two XVs (e-f). No "
               "classifier is trained. The paper's Fig. 1 is a drawing with no coordinates "
               "or numbers, so no paper values are drawn beside ours.")
    files = save_styled(fig, out_dir, "fig1", title=f"{spec.title} (synthetic data)")
    text = write_table(pd.DataFrame(rows), out_dir, f"Fig. 1 (paper: drawings only). "
                       f"{caption}")
    return Rendered(text, figures, files + [out_dir / "table.md"])


# -- Fig. 2 -------------------------------------------------------------------------------
class Fig2Options(BaseModel):
    """``report:`` of fig2: the drawing window."""

    model_config = ConfigDict(extra="forbid")
    extent: float = Field(3.5, gt=0)          # the axes span [-extent, extent]^2
    grid: int = Field(161, ge=11, le=801)     # grid points per axis for the regions
    caption: Optional[str] = None              # said after the generic caption


def recorded_scores(model, points):
    """Scores of single-instance bags ``points`` under a recorded SparseMI model (XVs,
    beta, rho, gamma, standardiser of its run record), shape (n, n_problems)."""
    mean, scale = np.asarray(model["mean"]), np.asarray(model["scale"])
    Z = (np.asarray(model["expansion_vectors"]) - mean) / scale
    K = rbf_kernel((points - mean) / scale, Z, model["gamma"])
    return K @ np.asarray(model["dual_coef"]).T + np.asarray(model["intercept"])


def recorded_predict(model, points):
    """The class (index into ``model["classes"]``) of every point under the recorded model."""
    F = recorded_scores(model, points)
    return (F[:, 0] > 0).astype(int) if F.shape[1] == 1 else F.argmax(axis=1)


def _first_record(result, dataset):
    recs = result.records_of(dataset=dataset)
    return min(recs, key=lambda r: (r["repeat"], r["fold"])) if recs else None


CLASS_COLOURS = (OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish green"])

#: Where the paper says the XVs of Fig. 2 end (Sec. V-A): "a single XV in the center" of the
#: binary problem; on mu1 = (-2, 2) and mu3 = (2, -2) for the 3-class one. Its panel letter.
PAPER_FINAL_XVS = {"sparsemi-binary": ("a", [[0.0, 0.0]]),
                   "sparsemi-3class": ("b", [[-2.0, 2.0], [2.0, -2.0]])}


def _unique(items):
    return list(dict.fromkeys(items))


@register_renderer("sparsemi/fig2", options=Fig2Options)
@styled
def render_fig2(result, out_dir, spec):
    """Fig. 2: the synthetic problems from poor XVs: data + initial XVs, final XVs with
    their trajectories over the recorded model's regions, objective vs iteration."""
    opts = spec.options
    run_spec = result.spec
    n = len(run_spec.datasets)
    fig, grid = panel_grid(3 * n, ncols=3, panel_height=2.35)
    axes = [grid[3 * i: 3 * i + 3] for i in range(n)]
    e = opts.extent
    gx, gy = np.meshgrid(np.linspace(-e, e, opts.grid), np.linspace(-e, e, opts.grid))
    grid_pts = np.column_stack([gx.ravel(), gy.ravel()])
    rows, figures, extra_rows = [], {}, 0
    for i, ds in enumerate(run_spec.datasets):
        data = result.datasets[ds.display]
        rec = _first_record(result, ds.display)
        if rec is None or "xv_path" not in rec["model"]:
            raise ValueError(f"fig2: no run of {ds.display} recorded its XV path; the config's "
                             "SparseMI needs record_path: true")
        model = rec["model"]
        path = np.asarray(model["xv_path"])                    # (T+1, m, 2)
        X, off, y = data.instances, data.offsets, np.asarray(data.y)
        bag_y = np.repeat(y, np.diff(off))
        classes = list(np.unique(y))
        letter, paper_xvs = PAPER_FINAL_XVS.get(ds.name, ("?", None))
        name = ds.display
        if ds.display != ds.name:          # a row the paper does not have (another start)
            extra_rows += 1
            letter = f"{letter}'"
            name = ds.display.removeprefix(ds.name).strip() or ds.display
        ax0, ax1, ax2 = axes[i]
        for c in classes:
            ax0.scatter(*X[bag_y == c].T, s=4, c=CLASS_COLOURS[c % 3], alpha=0.6, lw=0,
                        label=f"instances of {data.class_names[c]} bags")
        ax0.scatter(*path[0].T, s=120, c="k", marker="+", linewidths=1.8, label="initial XVs")
        ax0.set_title(f"({letter}1) {name}")
        pred = recorded_predict(model, grid_pts).reshape(gx.shape)
        ax1.contourf(gx, gy, pred, levels=np.arange(len(classes) + 1) - 0.5,
                     colors=[CLASS_COLOURS[c % 3] for c in classes], alpha=0.15)
        for c in classes:
            ax1.scatter(*X[bag_y == c].T, s=3, c=CLASS_COLOURS[c % 3], alpha=0.4, lw=0)
        for j in range(path.shape[1]):
            ax1.plot(path[:, j, 0], path[:, j, 1], "k-", lw=0.8)
            ax1.annotate("", xy=path[-1, j], xytext=path[0, j],
                         arrowprops=dict(arrowstyle="->", color="k", lw=1.0))
        ax1.scatter(*path[0].T, s=70, c="0.45", marker="+", linewidths=1.3)
        ax1.scatter(*path[-1].T, s=120, c="k", marker="+", linewidths=1.8,
                    label="final XVs (ours)")
        if paper_xvs is not None:
            ax1.plot(*np.asarray(paper_xvs).T, **dict(paper_kw("black"), ms=8,
                                                      label="final XVs (paper, Sec. V-A)"))
        acc = rec["metrics"]["accuracy"]
        ax1.set_title(f"({letter}2) final XVs, regions: test acc. {100 * acc:.1f}%")
        for ax in (ax0, ax1):
            ax.set_xlim(-e, e)
            ax.set_ylim(-e, e)
            ax.set_aspect("equal")
        obj = np.asarray(model["objective"])
        ax2.plot(np.arange(len(obj)), obj, ".-", color=method_colour("SparseMI"))
        integer_ticks(ax2.xaxis)
        ax2.set_xlabel("outer iteration")
        ax2.set_ylabel("objective g(Z)")
        ax2.set_title(f"({letter}3) objective ({model['stop_reason']}, {model['n_iter']} it.)")
        final = path[-1]
        key = ds.display
        figures[f"accuracy.{key}"] = acc
        figures[f"objective_drop.{key}"] = float(1 - obj[-1] / obj[0])
        figures[f"monotone.{key}"] = bool(np.all(np.diff(obj) <= 0))
        figures[f"final_xvs.{key}"] = final.tolist()
        rows.append({"dataset": key, "initial XVs": str(np.round(path[0], 2).tolist()),
                     "final XVs (ours)": str(np.round(final, 2).tolist()),
                     "final XVs (paper)": "centre (0, 0)" if final.shape[0] == 1 else
                     "mu1 (-2, 2) and mu3 (2, -2)",
                     "iterations": model["n_iter"], "g initial": round(obj[0], 2),
                     "g final": round(obj[-1], 2), "test accuracy %": round(100 * acc, 1)})
    figure_legend(fig, [a for row in axes for a in row[:2]], ncols=3,
                  title="synthetic data (our generators of Sec. V-A)")
    provenance = "; ".join(_unique(d.provenance for d in result.datasets.values()))
    caption = (f"Data: {provenance}{result.caption_note}. One run per row (first split); "
               "regions are the recorded final model evaluated on a grid (no refit). The "
               "paper's Fig. 2 is a drawing: its only values are where the XVs end (the "
               "centre of the binary problem, mu1 and mu3 of the 3-class one, Sec. V-A), "
               "drawn as hollow diamonds; it gives no objective or accuracy numbers.")
    if extra_rows:
        caption += (" Rows marked with a prime (') are not in the paper: the same problem "
                    "from another start.")
    if spec.options.caption:
        caption += f" {spec.options.caption}"
    files = save_styled(fig, out_dir, "fig2", title=f"{spec.title} (synthetic data)")
    text = write_table(pd.DataFrame(rows), out_dir, f"Fig. 2: XVs from poor starting points "
                       f"(paper: drawings only, no numbers). {caption}")
    return Rendered(text, figures, files + [out_dir / "table.md"])


# -- Fig. 3 -------------------------------------------------------------------------------
class PaperBars(BaseModel):
    """Where Fig. 3's paper values come from: the paper draws bars without numbers, but its
    tables give the accuracy of one of the bars' settings (random XVs with SparseMI: Table
    I at N_XV = 100 on the dense sets, Table II's 10 XVs over 100 BVs on TST)."""

    model_config = ConfigDict(extra="forbid")
    method: str                                # the bar the tables' numbers belong to
    tables: dict[str, str]                     # artifact of the paper -> its method label


class Fig3Options(MetricTableOptions):
    """``report:`` of fig3: the metric-table options plus which datasets form panel (b)."""

    sparse: list[str] = Field(default_factory=list)   # dataset labels drawn in panel (b)
    paper_bars: Optional[PaperBars] = None


def paper_accuracies(paper, bars):
    """{dataset: (accuracy, sd)} of ``bars.tables``' ``reported:`` numbers (the configs of
    the paper's tables, read once: no number is copied into the figure's config)."""
    from ...config import load_spec
    from ...targets import resolve_target

    out = {}
    for artifact, label in (bars.tables.items() if bars else ()):
        table = load_spec(resolve_target(f"{paper}/{artifact}").config_path)
        for ds in table.reported:
            pv = table.paper_value(ds, label, "accuracy")
            if pv is not None and isinstance(pv.value, (int, float)):
                out.setdefault(ds, (float(pv.value), pv.spread))
    return out


#: Fig. 3's bars: one colour per initialisation; without optimisation (t=0) hatched on
#: white, with SparseMI filled (the paper: the same order, "increasing brightness").
def _bar_style(method):
    colour = method_colour(method)
    if method.endswith("t=0"):
        return dict(color="white", edgecolor=colour, hatch="/////", linewidth=0.9)
    return dict(color=colour, edgecolor=colour, linewidth=0.9)


@register_renderer("sparsemi/fig3", options=Fig3Options)
@styled
def render_fig3(result, out_dir, spec):
    """Fig. 3: accuracy of the initialisation schemes without (t=0) and with SparseMI, as
    the generic metric table plus bars (a) dense sets, (b) sparse TST sets, with the
    paper's table numbers of the one setting they give beside the bars."""
    opts = spec.options
    rows, figures, notes = metric_rows(result, spec, opts)
    run_spec = result.spec
    methods = [m.display for m in run_spec.methods]
    sets = [ds.display for ds in run_spec.datasets if result.records_of(dataset=ds.display)]
    panels = [(t, [s for s in sets if (s in opts.sparse) == sparse])
              for t, sparse in (("(a) dense sets", False), ("(b) sparse TST sets", True))]
    panels = [(t, s) for t, s in panels if s]
    paper = paper_accuracies(run_spec.paper, opts.paper_bars)
    fig, axes = panel_grid(len(panels), ncols=1, panel_height=2.1, sharey=True)
    width = 0.8 / len(methods)
    tops, bottoms = [], []
    for ax, (title, names) in zip(axes, panels):
        for k, m in enumerate(methods):
            mean, sd = [], []
            for s in names:
                cell = rows_of(result.frame, s, m).sort_values(["repeat", "fold"],
                                                               kind="stable")
                v = row_values(cell, "accuracy", opts.scale, folds_per_repeat(run_spec, s))
                mean.append(v.mean() if len(v) else np.nan)
                sd.append(v.std(ddof=1) if len(v) > 1 else 0.0)
            x = np.arange(len(names)) + (k - (len(methods) - 1) / 2) * width
            ax.bar(x, mean, width, yerr=sd, capsize=1.2, label=m,
                   error_kw=dict(lw=0.7, ecolor="0.25"), **_bar_style(m))
            tops.append(np.nanmax(np.add(mean, sd)))
            bottoms.append(np.nanmin(np.subtract(mean, sd)))
            if opts.paper_bars and m == opts.paper_bars.method:
                pts = [(xi, paper[s][0]) for xi, s in zip(x, names) if s in paper]
                if pts:
                    ax.plot(*np.transpose(pts), **paper_kw(
                        "black", label="paper (Table I N_XV=100, Table II)"))
                    tops.append(max(p for _, p in pts))
        ax.set_xticks(np.arange(len(names)))
        ax.set_xticklabels(names)
        ax.set_ylabel("accuracy" + (" %" if opts.scale == 100 else ""))
        ax.set_title(title, loc="left")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    # one y range for both panels (they are compared); bars start at a round value below
    # the lowest bar minus its sd, so that the differences the paper discusses are visible
    lo = 10 * np.floor((min(bottoms) - 2) / 10)
    hi = min(opts.scale, 5 * np.ceil((max(tops) + 1) / 5)) if opts.scale == 100 else max(tops)
    axes[0].set_ylim(max(0.0, lo), max(hi, max(tops) + 0.5))
    paper_label = ""
    if opts.paper_bars:
        paper_label = (f" The hollow diamonds (paper) on the {opts.paper_bars.method} bars "
                       "are the paper's own numbers for that setting, from "
                       + " and ".join(f"its {a} ({lab})" for a, lab in
                                      opts.paper_bars.tables.items())
                       + "; the paper's Fig. 3 gives no numbers for the other bars.")
    figure_legend(fig, axes, ncols=4, title="ours: the paper's data (real data)")
    caption = (f"{spec.title or spec.target}. Paper: bars only, no numbers.{paper_label} "
               f"Ours: mean ± sample sd over {over_runs(result)}. Bars start at "
               f"{max(0.0, lo):g}%. Data: {result.provenance}.")
    if notes:
        caption += " Notes: " + "; ".join(notes) + "."
    files = save_styled(fig, out_dir, "fig3", title=f"{spec.title} (the paper's data)")
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    return Rendered(text, figures, files + [out_dir / "table.md", out_dir / "table.csv",
                                            out_dir / "table.tex"])


# -- Fig. 4 -------------------------------------------------------------------------------
class Fig4Options(BaseModel):
    """``report:`` of fig4."""

    model_config = ConfigDict(extra="forbid")
    iterations: int = Field(50, ge=1)          # the x-axis: iterations 0..iterations
    # accuracy "stabilises" at the first iteration from which the mean test accuracy stays
    # within stable_tol points of its final value (our operationalisation of claim 4)
    stable_tol: float = Field(1.0, gt=0)
    curve_metric: str = "accuracy"             # the runner's curve of each stage's accuracy
    caption: Optional[str] = None              # said after the generic caption


def carried(values, length):
    """``values`` padded to ``length`` with its last value (a stopped line search keeps its
    model), or cut to it."""
    v = list(values)[:length]
    return np.asarray(v + [v[-1]] * (length - len(v)), float)


def stable_from(curve, tol):
    """First index from which every value is within ``tol`` of the last one."""
    bad = np.flatnonzero(np.abs(curve - curve[-1]) > tol)
    return int(bad[-1] + 1) if len(bad) else 0


#: The paper's words on Fig. 4 (Sec. V-E): test accuracy "stabilises after ~10-20
#: iterations" -- the only number it gives of the curves, drawn as a band.
PAPER_STABLE = (10, 20)


@register_renderer("sparsemi/fig4", options=Fig4Options)
@styled
def render_fig4(result, out_dir, spec):
    """Fig. 4: mean objective (solid, left axis) and mean test accuracy (dotted with
    markers, right axis) vs outer iteration, from the runs' objective histories and staged
    test curves; one line pair per method of the config (the first is the one the claims
    judge; its summary keys carry no method)."""
    opts = spec.options
    L = opts.iterations + 1
    methods = [m.display for m in result.spec.methods]
    sets = [ds.display for ds in result.spec.datasets if result.records_of(dataset=ds.display)]
    fig, axes = panel_grid(len(sets) + 1, ncols=2, panel_height=2.0)
    fig.get_layout_engine().set(wspace=0.12)     # room for the right (twin) axis labels
    axes, spare = axes[:-1], axes[-1]
    rows, figures = [], {}
    for ax, ds in zip(axes, sets):
        ax2 = ax.twinx()
        ax2.spines["right"].set_visible(True)
        counts = []
        lo, hi = PAPER_STABLE
        if lo < L:
            ax.axvspan(lo, min(hi, L - 1), color="0.88", lw=0, zorder=0,
                       label=f"paper: accuracy stable after ~{lo}-{hi} iterations")
        for i, method in enumerate(methods):
            recs = result.records_of(dataset=ds, method=method)
            if not recs:
                continue
            if any(opts.curve_metric not in r.get("curves", {}) for r in recs):
                raise ValueError(f"fig4: the runs of {ds} have no {opts.curve_metric} curve; "
                                 "the config needs curves: true and SparseMI keep_stages: true")
            obj = np.array([carried(r["model"]["objective"], L) for r in recs])
            acc = 100 * np.array([carried(r["curves"][opts.curve_metric], L) for r in recs])
            t = np.arange(L)
            colour = method_colour(method)
            ax.plot(t, obj.mean(axis=0), "-", color=colour, label=f"{method}: objective")
            ax2.plot(t, acc.mean(axis=0), ":", color=colour, marker="o", ms=2.5,
                     markevery=max(1, L // 10), label=f"{method}: test accuracy")
            counts.append(len(recs))
            mean_acc = acc.mean(axis=0)
            monotone = bool(np.all(np.diff(obj, axis=1) <= 1e-9 * np.abs(obj[:, :-1]) + 1e-12))
            stab = stable_from(mean_acc, opts.stable_tol)
            iters = float(np.mean([r["model"]["n_iter"] for r in recs]))
            key = ds if i == 0 else f"{ds}.{method}"
            figures.update({f"monotone.{key}": monotone, f"stable_from.{key}": stab,
                            f"accuracy@0.{key}": float(mean_acc[0]),
                            f"accuracy@final.{key}": float(mean_acc[-1]),
                            f"mean_iterations.{key}": iters})
            row = {"dataset": ds, "method": method, "runs": len(recs),
                   "objective non-increasing": "yes" if monotone else "no",
                   "mean iterations run": iters,
                   "objective @0": round(float(obj.mean(axis=0)[0]), 4),
                   "objective @final": round(float(obj.mean(axis=0)[-1]), 4)}
            for k in sorted({0, 1, 5, 10, 20, opts.iterations}):
                if k < L:
                    row[f"acc @{k}"] = round(float(mean_acc[k]), 2)
            row["stable from (ours)"] = stab
            row["stable from (paper)"] = "~10-20"
            rows.append(row)
        ax.set_xlim(0, L - 1)
        ax.set_xlabel("iteration")
        ax.set_ylabel("objective g(Z)")
        ax2.set_ylabel("test accuracy %")
        n = max(counts)
        ax.set_title(f"{ds} ({n} split{'s' if n > 1 else ''})")
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
    handles = {}
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    # the paper's band first, then objective / accuracy of each method
    order = sorted(handles, key=lambda lab: (not lab.startswith("paper"), lab))
    legend_cell(spare, [handles[k] for k in order], order,
                title="ours: the paper's data (real data)")
    caption = (f"Data: {result.provenance}. Mean over class-stratified 50/50 splits; a run "
               "stopped early carries its last values forward. Objective: solid lines, left "
               "axis; test accuracy of every iteration's recorded model on the split's test "
               "bags: dotted lines, right axis. The paper's Fig. 4 prints no values; its text "
               f"says the accuracy stabilises after ~{PAPER_STABLE[0]}-{PAPER_STABLE[1]} "
               "iterations (the grey band)."
               + (f" {opts.caption}" if opts.caption else ""))
    files = save_styled(fig, out_dir, "fig4", title=f"{spec.title} (the paper's data)")
    text = write_table(pd.DataFrame(rows), out_dir, f"Fig. 4 (paper: curves only; accuracy "
                       f"'stabilises after ~10-20 iterations'). 'stable from' = first "
                       f"iteration within {opts.stable_tol:g} points of the final accuracy. "
                       f"{caption}")
    return Rendered(text, figures, files + [out_dir / "table.md"])
