"""The size hypothesis of MSSBoost's speed claims (Yan, Tesic & Smith, KDD 2007, Secs. 4.4
and 6.2.2-6.2.3) under control: MSSBoost against the Baseline on nested TRECVID-style sets
of growing training size N (``mssboost/scaling``; no table or figure of the paper).

Sec. 4.4 prices MSSBoost at L + T base models learned on N rd examples and M rf features,
T evaluated at prediction, against the Baseline's L SVMs on N examples and M features. With
an SVM's learning time t_l(n, m) = O(m n^2) and prediction time O(m n) (support vectors in
proportion to the training examples), the learning speed-up is L / ((T + L) rd^2 rf) and
the prediction speed-up L / (T rd rf): neither depends on N. The size hypothesis says the
measured ratios grow with N; the target measures them at every N and fits their log-log
slope.
"""

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter, NullLocator
from scipy import stats as sps

from ....methods._sampling import n_subspace_features
from ....report import format_mean_ci, write_table
from ....report.style import (DOUBLE_COLUMN, figure_legend, method_colour, panel_grid,
                             paper_kw, save_styled, styled)
from ....report.summaries import mean_curves
from ....runner.result import rows_of, runs_of
from ....stats import run_values
from ....targets import Rendered, register_renderer
from .real import _mean_metric, _median, _models_to_reach, fit_cpu_seconds, split_ratios

#: the cost ratios the target reports (Baseline's / MSSBoost's), by name: a function of a run
RATIOS = {
    "train CPU": fit_cpu_seconds,
    "model size": lambda r: r["model"]["model_size"],
    "predict s": lambda r: r["timings"]["predict_s"],
}


def loglog_slope(n, values, confidence=0.95):
    """Least-squares fit of log(value) = a + b log(n): the slope b, the half-width of its
    ``confidence`` t-interval (NaN with fewer than 3 points) and a; non-finite or
    non-positive values are left out."""
    n, values = np.asarray(n, dtype=float), np.asarray(values, dtype=float)
    keep = np.isfinite(values) & (values > 0) & (n > 0)
    x, y = np.log(n[keep]), np.log(values[keep])
    if x.size < 2 or np.ptp(x) == 0:
        return float("nan"), float("nan"), float("nan")
    fit = sps.linregress(x, y)
    half = (float(sps.t.ppf(0.5 + confidence / 2, x.size - 2) * fit.stderr) if x.size > 2
            else float("nan"))
    return float(fit.slope), half, float(fit.intercept)


def cost_model(n_labels, n_models, rd, rf):
    """Sec. 4.4's speed-ups of MSSBoost over the Baseline with SVM base models:
    (learning L / ((T + L) rd^2 rf), prediction L / (T rd rf)), free of N."""
    return (n_labels / ((n_models + n_labels) * rd ** 2 * rf),
            n_labels / (n_models * rd * rf))


def support_fractions(base, mss, n_features, rf, rd):
    """(s_B, s_b): the Baseline's support vectors per label and training example, and
    MSSBoost's per base model and bootstrap draw (N rd). The model size ratio is then
    exactly (L / T) (M / (M rf)) (N / (N rd)) (s_B / s_b): Sec. 4.4's L / (T rd rf) times
    s_B / s_b."""
    n = base["n_train"]
    s_base = base["model"]["support_vectors"] / (len(base["label_ap"]) * n)
    k = n_subspace_features(n_features, rf)
    draws = max(2, int(round(n * rd)))
    sv_mss = np.sum(mss["model"]["model_sizes"]) / k
    return s_base, sv_mss / (len(mss["model"]["model_sizes"]) * draws)


def _size_at(run, t):
    """Model size of MSSBoost's first t base models (its prediction cost there), of a run's
    row of a runs frame."""
    return float(np.sum(run["model_sizes"][:t]))


def level_ratios(runs, dataset, fractions=(1.0, 0.9)):
    """{fraction: (models needed or None, median over the splits of the Baseline's model
    size / that of MSSBoost's first t models)}: t the fewest models whose mean Mean-AP
    curve reaches ``fraction`` of the Baseline's mean Mean-AP (claim 5's rule, in kernel
    cost per prediction, #support vectors x #features, rather than seconds)."""
    base, mss = rows_of(runs, dataset, "Baseline"), rows_of(runs, dataset, "MSSBoost")
    curve = mean_curves(mss, "mean_ap")["MSSBoost"][1]
    base_map = _mean_metric(base)[0]
    b = run_values(base, "model_size")
    out = {}
    for frac in fractions:
        t = _models_to_reach(curve, frac * base_map)
        if t is None:
            out[frac] = (None, float("nan"))
            continue
        m = run_values(mss, lambda r: _size_at(r, t))
        out[frac] = (t, _median([b[k] / m[k] for k in m if k in b]))
    return out


def _setting(record, name):
    return record["params"][name]


@register_renderer("mssboost/scaling")
@styled
def render_scaling(result, out_dir, spec):
    """Per training size N: both methods' Mean-AP and fit CPU seconds, the Baseline /
    MSSBoost ratios of :data:`RATIOS` (medians of the per-split ratios), the support-vector
    fractions that make the size ratio, the share of MSSBoost's fit spent scoring base
    models on the N training examples, and claim 5's models and kernel-cost ratio at 100%
    / 90% of the Baseline; a second table fits each quantity's log-log slope against N over
    the splits."""
    runs, th = result.frame, spec.thresholds
    rows, figures, points = [], {}, []
    model = None
    for ds in result.spec.datasets:
        label = ds.display
        base, mss = runs_of(runs, label, "Baseline"), runs_of(runs, label, "MSSBoost")
        if not base or not mss:
            continue
        n_train = int(base[0]["n_train"])
        n_labels, m_features = len(base[0]["label_ap"]), result.datasets[label].X.shape[1]
        rd, rf, T = (_setting(mss[0], k) for k in ("rd", "rf", "n_estimators"))
        model = cost_model(n_labels, T, rd, rf)
        ratios = {k: split_ratios(runs, label, "Baseline", "MSSBoost", f)
                  for k, f in RATIOS.items()}
        fractions = np.array([support_fractions(b, m, m_features, rf, rd)
                              for b in base for m in mss
                              if (b["repeat"], b["fold"]) == (m["repeat"], m["fold"])])
        scoring = [m["model"]["fit_profile_s"]["score_models"]
                   / m["model"]["fit_profile_s"]["total"] for m in mss]
        ap_b, ap_m = _mean_metric(base), _mean_metric(mss)
        ap_ratio = split_ratios(runs, label, "MSSBoost", "Baseline", "mean_ap")
        levels = level_ratios(runs, label)
        row = {"N (all)": len(result.datasets[label].Y), "N train": n_train, "splits": len(mss),
               "Baseline Mean-AP": format_mean_ci(*ap_b),
               "MSSBoost Mean-AP": format_mean_ci(*ap_m),
               "MSSBoost / Baseline Mean-AP": _median(ap_ratio),
               "Baseline fit CPU s": _median([fit_cpu_seconds(r) for r in base]),
               "MSSBoost fit CPU s": _median([fit_cpu_seconds(r) for r in mss])}
        for k, v in ratios.items():
            row[f"{k} ratio"] = _median(v)
        row.update({
            "s_B (Baseline SVs / (L N))": float(np.mean(fractions[:, 0])),
            "s_b (base SVs / (N rd))": float(np.mean(fractions[:, 1])),
            "L/(T rd rf) x s_B/s_b": model[1] * float(np.mean(fractions[:, 0] / fractions[:, 1])),
            "MSSBoost fit share scoring on N": _median(scoring),
        })
        for frac, (t, ratio) in levels.items():
            pct = int(frac * 100)
            row[f"models @{pct}%"] = t if t else "not reached"
            row[f"size ratio @{pct}%"] = ratio
        rows.append(row)
        for k, v in ratios.items():
            points.extend(("ratio", k, n_train, x) for x in v)
        points.extend(("cpu", "Baseline", n_train, fit_cpu_seconds(r)) for r in base)
        points.extend(("cpu", "MSSBoost", n_train, fit_cpu_seconds(r)) for r in mss)
        points.extend(("map", "Baseline", n_train, r["metrics"]["mean_ap"]) for r in base)
        points.extend(("map", "MSSBoost", n_train, r["metrics"]["mean_ap"]) for r in mss)
        points.extend(("map", "MSSBoost / Baseline", n_train, x) for x in ap_ratio)
        for k in RATIOS:
            figures[f"{k.replace(' ', '_')}_ratio.{label}"] = row[f"{k} ratio"]
        figures[f"mean_ap_fraction.{label}"] = row["MSSBoost / Baseline Mean-AP"]
    pts = pd.DataFrame(points, columns=["kind", "what", "n", "value"])
    slopes = []
    for (kind, what), g in pts.groupby(["kind", "what"], sort=False):
        b, half, a = loglog_slope(g["n"], g["value"])
        slopes.append({"quantity": f"{what} ratio" if kind == "ratio" else
                       f"{what} {'fit CPU s' if kind == 'cpu' else 'Mean-AP'}",
                       "log-log slope vs N": b, "95% half-width": half,
                       "points": int(len(g))})
        figures[f"slope.{kind}.{what}"] = b
    fig = _draw(pts, slopes, th, model)
    repeats = result.spec.protocol.repeats
    title_data = ", ".join(str(d.display) for d in result.spec.datasets)
    caption = (f"Collections: TRECVID-style (synthetic: the TRECVID-style generator), {title_data}"
               f": the first N rows of one {result.spec.datasets[0].params.get('population')}"
               f"-row population" + result.caption_note + ". Size hypothesis (no table of "
               "the paper): Baseline (one RBF SVM per label on all data) vs MSSBoost (T = "
               "100, rd = rf = 0.2, Table 2's TRECVID-style settings at every N) over "
               f"{repeats} random 75/25 splits per size. Ratios are the Baseline's / "
               "MSSBoost's, medians of the per-split ratios: fit CPU seconds, model size "
               "(#support vectors x #features, the kernel cost of one prediction) and "
               "prediction wall seconds on the test part (a shared machine: indicative). "
               "s_B, s_b: support vectors per label and training example (Baseline) and per "
               "base model and bootstrap draw (MSSBoost); the size ratio equals Sec. 4.4's "
               "L/(T rd rf) times s_B/s_b. Scoring share: wall-time share of MSSBoost's fit "
               "spent scoring each learned base model on the N training examples (Eqn 2's "
               "sums run over all N). @100%/@90%: fewest MSSBoost models whose mean Mean-AP "
               "curve reaches that share of the Baseline's, and the size ratio there "
               f"(claim 5's rule). The paper (TREC, N = {th['paper_n']:g}, 75% for "
               f"training): {th['train_speedup']:g}x training, {th['size_ratio']:g}x size, "
               f"{th['predict_speedup_100']:g}x / {th['predict_speedup_90']:g}x prediction at "
               "100% / 90%. Second table: least-squares slopes of log(value) on log(N train) "
               "over every split, with 95% t-intervals (slope 0: no trend with N).")
    files = save_styled(fig, out_dir, "scaling",
                        title="Cost ratios vs training size (synthetic TRECVID-style data)")
    text = write_table(pd.DataFrame(rows), out_dir, caption)
    text += "\n\n" + write_table(pd.DataFrame(slopes), out_dir,
                                 "Log-log slopes against N train (" + caption[:caption.index(":")]
                                 + ": TRECVID-style, synthetic).", name="slopes")
    return Rendered(text, figures, files + [out_dir / "table.md", out_dir / "slopes.md"])


def _draw(pts, slopes, th, model):
    """(a) the cost ratios against N train, with the paper's at its TREC training size and
    Sec. 4.4's model at our settings; (b) fit CPU seconds; (c) Mean-AP."""
    fig, (ax_r, ax_c, ax_m) = panel_grid(3, width=DOUBLE_COLUMN, panel_height=2.6)
    slope = {s["quantity"]: s["log-log slope vs N"] for s in slopes}
    styles = {"train CPU": ("o", "-", method_colour("MSSBoost")),
              "model size": ("s", "--", method_colour("Baseline")),
              "predict s": ("^", ":", method_colour("RSBag"))}
    paper_n_train = 0.75 * th["paper_n"]
    for what, (marker, ls, colour) in styles.items():
        g = pts[(pts.kind == "ratio") & (pts.what == what)]
        if g.empty:
            continue
        med = g.groupby("n")["value"].median()
        ax_r.plot(g["n"], g["value"], ls="none", marker=marker, ms=3, alpha=0.35,
                  color=colour)
        ax_r.plot(med.index, med.values, ls=ls, marker=marker, ms=4, color=colour,
                  label=f"{what} (slope {slope[f'{what} ratio']:+.2f})")
    ax_r.plot([paper_n_train], [th["train_speedup"]],
              **paper_kw(styles["train CPU"][2], label="paper (TREC): train"))
    ax_r.plot([paper_n_train], [th["size_ratio"]],
              **paper_kw(styles["model size"][2], label="paper (TREC): size"))
    if model is not None:
        ax_r.axhline(model[0], color=styles["train CPU"][2], lw=0.8, ls="-.",
                     label=f"Sec. 4.4 learning {model[0]:.0f}x")
        ax_r.axhline(model[1], color=styles["model size"][2], lw=0.8, ls="-.", alpha=0.6,
                     label=f"Sec. 4.4 prediction {model[1]:.1f}x")
    ax_r.axhline(1, color="grey", lw=0.6, ls=":")
    ax_r.set_ylabel("Baseline / MSSBoost (x)")
    ax_r.set_title("(a) cost ratios")
    for what in ("Baseline", "MSSBoost"):
        for ax, kind in ((ax_c, "cpu"), (ax_m, "map")):
            g = pts[(pts.kind == kind) & (pts.what == what)]
            if g.empty:
                continue
            mean = g.groupby("n")["value"].mean()
            ax.plot(g["n"], g["value"], ls="none", marker="o", ms=3, alpha=0.35,
                    color=method_colour(what))
            q = f"{what} {'fit CPU s' if kind == 'cpu' else 'Mean-AP'}"
            ax.plot(mean.index, mean.values, marker="o", ms=4, color=method_colour(what),
                    label=(f"{what} (slopes: fit CPU {slope[f'{what} fit CPU s']:+.2f}, "
                           f"Mean-AP {slope[f'{what} Mean-AP']:+.2f})") if kind == "cpu"
                    else None)
    ax_c.set_ylabel("fit CPU seconds")
    ax_c.set_title("(b) training cost")
    ax_m.set_ylabel("Mean-AP (test)")
    ax_m.set_title("(c) Mean-AP")
    sizes = sorted(set(pts["n"]))
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    labelled, last = [], None            # tick labels at least ~2x apart: none overlap
    for n in sizes:
        keep = last is None or n / last >= 1.9 or n == sizes[-1] and n / last >= 1.6
        labelled.append(f"{n:g}" if keep else "")
        last = n if keep else last
    for ax in (ax_r, ax_c, ax_m):
        ax.set_xscale("log")
        ax.set_xticks(sizes, labelled, rotation=30)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("training examples N")
        ax.grid(alpha=0.3)
    for ax in (ax_r, ax_c):
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(NullFormatter())
    figure_legend(fig, [ax_r, ax_c], ncols=3, title="(a) ours: synthetic TRECVID-style data; "
                  "points: splits, lines: medians (a) / means (b, c); slopes: log-log fits")
    return fig
