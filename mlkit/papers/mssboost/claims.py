"""MSSBoost's claims (Yan, Tesic & Smith, KDD 2007), checked by ``mlkit verify mssboost``.

Claims 1, 2 and 4-7 are measured on the saved runs of Table 2 (the real collections and the
TRECVID-style generator, :func:`_from_table2`), claim 3 on the summary of Fig. 4 (the
synthetic set). Their levels and the diagnosis of a FAIL are in ``claims.yaml`` beside this
module, their thresholds in the configs' ``thresholds:``; the pieces they share with the
renderers (paired tests, ratios, curves) are those of :mod:`.renderers.real`.
"""

import functools

import numpy as np

from ..._errors import MlkitError
from ...report.summaries import mean_curves
from ...runner.result import runs_frame, runs_of
from ...stats import sign_test
from ...targets import read_summary, resolve_target, saved_results, target_spec
from ...verify import ClaimResult, register_claim
from .renderers.real import (ENSEMBLES, INTERCEPT, _ensembles_ap, _first_run, _mean_metric,
                             _median, _models_to_reach, _paired, _sharing, fit_cpu_seconds,
                             prediction_speedups, split_ratios)

PAPER = "mssboost"


# -- claims 1, 2 and 4-7: Table 2's runs ------------------------------------------------------
def _from_table2(sep="; ", suffix=""):
    """Decorate ``fn(runs, out_dir) -> (passed, parts)``, a claim measured on Table 2's
    saved runs (a runs frame), into a claim: it loads the newest runs (full, else quick), says when there
    are none, and joins the parts with ``sep``, then ``suffix`` and where the runs came from.
    The verdict is the literal MSSBoost's; when the runs have the :data:`INTERCEPT` row, the
    claim is measured again with that row in MSSBoost's place and printed beside."""
    def decorate(fn):
        @functools.wraps(fn)
        def claim():
            records, out_dir, quick = saved_results(resolve_target(f"{PAPER}/table2"))
            if records is None:
                return ClaimResult(None, "no saved results: run `mlkit reproduce "
                                         "mssboost/table2` (or with --quick) first")
            th = target_spec(resolve_target(f"{PAPER}/table2"))[0].thresholds
            runs = runs_frame(records)
            ok, parts = fn(runs, out_dir, th)
            text = sep.join(parts) + suffix
            alt = _with_intercept_as_mssboost(runs)
            if alt is not None:
                ok_i, parts_i = fn(alt, out_dir, th)
                text += (f" || {INTERCEPT} in MSSBoost's place: "
                         f"{'PASS' if ok_i else 'FAIL'}: " + sep.join(parts_i))
            return ClaimResult(ok, text + f" [{'quick' if quick else 'full'} results in "
                                          f"{out_dir}]")
        return claim
    return decorate


def _with_intercept_as_mssboost(runs):
    """The runs frame ``runs`` with the :data:`INTERCEPT` runs relabelled "MSSBoost" (their
    ``method`` and their records' ``method``; the literal MSSBoost's runs left out), a new
    frame in the same order, or None when there are none."""
    if not (runs["method"] == INTERCEPT).any():
        return None
    alt = runs[runs["method"] != "MSSBoost"].reset_index(drop=True)
    intercept = alt["method"] == INTERCEPT
    alt["method"] = alt["method"].where(~intercept, "MSSBoost")
    alt["record"] = [{**r, "method": "MSSBoost"} if i else r
                     for r, i in zip(alt["record"], intercept)]
    return alt


def _datasets(runs):
    return sorted(set(runs["dataset"]))


@register_claim(PAPER, 1, "MSSBoost has the best Mean-AP of the six methods, significantly "
                "better than Baseline, Subspace, RSBag, NSBoost; RSBag > Subspace; "
                "NSBoost > RSBag")
@_from_table2(sep=" | ")
def claim_1(runs, out_dir, th):
    """On every collection, by paired t-tests over the splits (:func:`_paired`): MSSBoost
    significantly better than Baseline, Subspace, RSBag and NSBoost and no method (Bagging
    included) significantly better than MSSBoost (the best: a tie with it counts, as the
    papers' bold marks ties), RSBag significantly better than Subspace and NSBoost than
    RSBag."""
    ok, parts = True, []
    for ds in _datasets(runs):
        methods = set(runs.loc[runs["dataset"] == ds, "method"])
        means = {m: _mean_metric(runs_of(runs, ds, m))[0] for m in methods}
        vs = {m: _paired(runs, ds, "MSSBoost", m)
              for m in ("Baseline", "Bagging", "Subspace", "RSBag", "NSBoost") if m in methods}
        order = {f"{a} > {b}": _paired(runs, ds, a, b)
                 for a, b in (("RSBag", "Subspace"), ("NSBoost", "RSBag"))
                 if a in methods and b in methods}
        this = ("MSSBoost" in methods and not any(t.worse for t in vs.values())
                and all(vs[m].better for m in ("Baseline", "Subspace", "RSBag", "NSBoost"))
                and all(t.better for t in order.values()))
        ok &= this
        parts.append(f"{ds}: " + ", ".join(f"{m} {v:.3f}" for m, v in
                                           sorted(means.items(), key=lambda x: -x[1]))
                     + "; MSSBoost vs " + ", ".join(f"{m} {t.verdict()}" for m, t in vs.items())
                     + "".join(f"; {k}: {t.verdict()}" for k, t in order.items()))
    return ok, parts


@register_claim(PAPER, 2, "MSSBoost trains ~60x faster than Baseline and its model is ~40x "
                "smaller (TREC)")
@_from_table2()
def claim_2(runs, out_dir, th):
    """On every TREC-role collection: the median over the splits of the Baseline's / MSSBoost's
    training CPU seconds (:func:`fit_cpu_seconds`) and of the Baseline's / MSSBoost's model
    size reach the paper's ~60x and ~40x."""
    ok, parts = True, []
    for ds in _datasets(runs):
        if not runs_of(runs, ds, "Baseline") or not runs_of(runs, ds, "MSSBoost"):
            continue
        speed = _median(split_ratios(runs, ds, "Baseline", "MSSBoost", fit_cpu_seconds))
        size = _median(split_ratios(runs, ds, "Baseline", "MSSBoost",
                                    lambda r: r["model"]["model_size"]))
        role_trec = any(d.role == "TREC" and d.display == ds for d in _config_datasets(out_dir))
        if role_trec:
            ok &= speed >= th["train_speedup"] and size >= th["size_ratio"]
        parts.append(f"{ds}{' (TREC role)' if role_trec else ''}: train {speed:.2g}x faster "
                     f"(CPU), model {size:.2g}x smaller, medians of the splits' ratios "
                     f"(paper: ~{th['train_speedup']:g}x, ~{th['size_ratio']:g}x)")
    return ok, parts


def _config_datasets(out_dir):
    """The collections of a saved run, as DatasetSpecs (``display`` is the records' name)."""
    from ..._io import read_json
    from ...config import DatasetSpec

    return [DatasetSpec.model_validate(d)
            for d in read_json(out_dir / "manifest.json")["config"]["datasets"]]


def _trec_datasets(runs, out_dir):
    """The collections in the paper's TREC role (claims 4, 6 and 7 are about TREC only)."""
    trec = {d.display for d in _config_datasets(out_dir) if d.role == "TREC"}
    return [ds for ds in _datasets(runs) if ds in trec]


@register_claim(PAPER, 4, "TREC role: MSSBoost needs fewer models than NSBoost and RSBag to reach "
                "a Mean-AP level (paper: 36 / 54 / 60 models for 0.38, i.e. 85% of Baseline) "
                "and at 35 models is ~20% (relative) above NSBoost")
@_from_table2()
def claim_4(runs, out_dir, th):
    """On every TREC-role collection: MSSBoost's mean curve reaches the level with fewer
    models than NSBoost's, NSBoost's with no more than RSBag's, and at ``models_at`` models
    MSSBoost is significantly above NSBoost (paired t-test of the runs' Mean-AP there)."""
    ok, parts = True, []
    for ds in _trec_datasets(runs, out_dir):
        base = runs_of(runs, ds, "Baseline")
        curves = mean_curves(runs_of(runs, ds), "mean_ap")
        if not base or not all(m in curves for m in ENSEMBLES):
            continue
        level = th["level_map"] / th["level_baseline_map"] * _mean_metric(base)[0]
        need = {m: _models_to_reach(curves[m][1], level) for m in ENSEMBLES}
        big = 10**9
        n = {m: need[m] or big for m in need}
        t35 = min(int(th["models_at"]), len(curves["MSSBoost"][1])) - 1
        rel = curves["MSSBoost"][1][t35] / curves["NSBoost"][1][t35] - 1
        above = _paired(runs, ds, "MSSBoost", "NSBoost",
                        lambda r: r["curves"]["mean_ap"][t35])
        ok &= n["MSSBoost"] < n["NSBoost"] <= n["RSBag"] and above.better
        parts.append(f"{ds}: models to {level:.3f}: " + ", ".join(
            f"{m} {need[m] or 'not reached'}" for m in ENSEMBLES)
            + f"; at {t35 + 1} models MSSBoost {100 * rel:+.0f}% vs NSBoost, "
            f"{above.verdict()} (paired t over the splits)")
    return ok, parts


@register_claim(PAPER, 5, "Prediction at 100% of Baseline Mean-AP is 20x (TREC) / 30x "
                "(Consumer) cheaper; at 90%, 35x / 60x")
@_from_table2()
def claim_5(runs, out_dir, th):
    roles = {d.display: d.role for d in _config_datasets(out_dir)}
    fig6 = target_spec(resolve_target(f"{PAPER}/fig6"))[0]
    ok, parts = True, []
    for ds in _datasets(runs):
        sp = prediction_speedups(runs, ds)
        paper = {frac: fig6.paper_value(ds, "MSSBoost", f"predict_speedup_{int(frac * 100)}",
                                        role=roles.get(ds)) for frac in (1.0, 0.9)}
        if not sp or any(v is None for v in paper.values()):
            continue
        paper = {frac: pv.value for frac, pv in paper.items()}
        for frac in (1.0, 0.9):
            t, secs, base_s, ratio = sp[frac]
            ours = ratio if t else 0.0
            ok &= bool(t) and ours >= paper[frac]
            parts.append(f"{ds} @{int(frac * 100)}%: " + (
                f"{t} models, {ours:.2g}x, median of splits (paper {paper[frac]:g}x)" if t else
                f"not reached (paper {paper[frac]:g}x)"))
    return ok, parts


@register_claim(PAPER, 6, "TREC role, per label: MSSBoost beats NSBoost on 30/39 and RSBag on 34/39 "
                "labels (sign test p < 0.01)")
@_from_table2()
def claim_6(runs, out_dir, th):
    ok, parts = True, []
    for ds in _trec_datasets(runs, out_dir):
        ap = _ensembles_ap(runs, ds)
        if len(ap) < 3:
            continue
        for other in ("NSBoost", "RSBag"):
            diff = ap["MSSBoost"] - ap[other]
            alpha = th["sign_test_p"]
            if 0.5 ** (len(diff) - 1) > alpha:   # a sign test cannot reach p < alpha
                parts.append(f"{ds}: only {len(diff)} labels, too few for a sign test at "
                             f"{alpha:g}")
                ok = False
                continue
            # labels matched by their index; a label without an AP (NaN) counts as a tie
            test = sign_test(dict(enumerate(ap["MSSBoost"])), dict(enumerate(ap[other])))
            ok &= test.p < alpha
            parts.append(f"{ds}: beats {other} on {test.wins}/{len(diff)} labels (sign test "
                         f"p={test.p:.2g})")
        data = _load(out_dir, ds)
        mss0 = _first_run(runs, ds, "MSSBoost")
        best, n_top = best_on_frequent_sharing_labels(ap, _sharing(mss0, data.n_labels),
                                                      data.Y.mean(axis=0),
                                                      int(th["top_sharing_labels"]))
        ok &= n_top > 0 and best >= th["best_of_top_fraction"] * n_top
        parts.append(f"{ds}: best of the three on {best}/{n_top} of the most frequent "
                     "labels that share models (paper: 8/9)" if n_top else
                     f"{ds}: no label uses other labels' models (paper: 8 of the 9 most "
                     "frequent sharing labels)")
    return ok, parts


def best_on_frequent_sharing_labels(ap, shares, freq, n_top=9):
    """(labels where MSSBoost has the best AP of the three ensembles, labels looked at):
    among the labels whose MSSBoost function uses other labels' models, the ``n_top`` most
    frequent (claim 6, second part)."""
    sharing = np.flatnonzero(shares)
    top = sharing[np.argsort(-freq[sharing], kind="stable")[:n_top]]
    others = np.max([ap[m][top] for m in ap if m != "MSSBoost"], axis=0)
    return int(np.sum(ap["MSSBoost"][top] > others)), int(top.size)


def first_models_are_general(mss_record, freq, n_first=3):
    """Frequency rank (0 = most frequent) of the labels the first ``n_first`` selected
    models were learned for, and whether all lie in the more frequent half of the labels
    (claim 7: "the earliest models come from general labels"; general read as frequent)."""
    own = np.asarray(mss_record["model"]["estimator_labels"], dtype=int)[:n_first]
    rank = np.argsort(np.argsort(-freq, kind="stable"), kind="stable")
    return rank[own], bool(own.size) and bool(np.all(rank[own] < len(freq) / 2))


def borrowing_follows_cooccurrence(mss_record, Y, n_models=30):
    """Claim 7's examples ("urban" uses models of "car", "road", "airplane"; "police" of
    "military"), read as: a label borrows, with a positive weight, the models of labels it
    co-occurs with. Returns (mean phi correlation of the labels of the (label, model) pairs
    with a positive weight on another label's model among the first ``n_models``, mean phi
    over all label pairs, the three labels that borrow most as (label, [lenders])).
    Labels constant on ``Y`` (no correlation defined) are left out of both means."""
    Y = np.asarray(Y, dtype=float)
    n_labels = Y.shape[1]
    alphas = np.asarray(mss_record["model"]["alphas"], dtype=float).reshape(-1, n_labels)
    alphas = alphas[:n_models]                                             # models x labels
    own = np.asarray(mss_record["model"]["estimator_labels"], dtype=int)[:n_models]
    varies = Y.std(axis=0) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.atleast_2d(np.corrcoef(Y.T))
    pairs = ~np.eye(n_labels, dtype=bool) & varies[:, None] & varies[None, :]
    borrow = (alphas > 0) & (own[:, None] != np.arange(n_labels)[None, :])
    t, l = np.nonzero(borrow)
    keep = pairs[l, own[t]]
    t, l = t[keep], l[keep]
    used = float(phi[l, own[t]].mean()) if t.size else float("nan")
    overall = float(phi[pairs].mean()) if pairs.any() else float("nan")
    lenders = [(int(j), sorted({int(own[i]) for i in t[l == j]}))
               for j in np.argsort(-np.bincount(l, minlength=n_labels), kind="stable")[:3]
               if np.any(l == j)]
    return used, overall, lenders


@register_claim(PAPER, 7, "Fig. 8, TREC role: the earliest models come from general labels; "
                "labels borrow the models of related labels (paper: 'urban' uses 'car', "
                "'road', 'airplane'; 'police' uses 'military')")
@_from_table2()
def claim_7(runs, out_dir, th):
    ok, parts = True, []
    for ds in _trec_datasets(runs, out_dir):
        if not runs_of(runs, ds, "MSSBoost"):
            continue
        data = _load(out_dir, ds)
        mss0 = _first_run(runs, ds, "MSSBoost")
        names = data.label_names
        freq = data.Y.mean(axis=0)
        ranks, general = first_models_are_general(mss0, freq)
        used, overall, lenders = borrowing_follows_cooccurrence(mss0, data.Y)
        ok &= general and used > overall
        own = mss0["model"]["estimator_labels"][:3]
        parts.append(
            f"{ds}: first models learned for " + ", ".join(
                f"{names[i]} (frequency rank {r + 1}/{len(freq)})" for i, r in zip(own, ranks))
            + f"; labels borrow models of labels they co-occur with: mean phi {used:.3f} vs "
            f"{overall:.3f} over all label pairs; e.g. " + "; ".join(
                f"{names[j]} uses {', '.join(names[i] for i in lend[:4])}"
                for j, lend in lenders)
            + (" (synthetic labels: the paper's named pairs do not apply)" if data.synthetic
               else " (the paper's TREC label names are not in this collection)"))
    return ok, parts


def _load(out_dir, label):
    """The collection a saved run used, as its manifest's config names it."""
    from ...datasets import load_dataset

    for d in _config_datasets(out_dir):
        if d.display == label:
            return load_dataset(d.name, path=d.path, format=d.format, params=d.params)
    raise MlkitError(f"{out_dir / 'manifest.json'} names no collection {label!r}")


# -- claim 3: the synthetic set (Fig. 4) ------------------------------------------------------
def _claim_3_verdict(figs, th, mss):
    """(passed, text) of claim 3 from fig4's summary figures, with ``mss`` (the literal
    MSSBoost row or the intercept row) as MSSBoost."""
    reach = {m: figs[f"models_to_best.{k}"] for m, k in (("MSSBoost", mss),
                                                        ("NSBoost", "NSBoost"),
                                                        ("RSBag", "RSBag"))}
    at5 = {m: figs[f"error@5.{k}"] for m, k in (("MSSBoost", mss), ("NSBoost", "NSBoost"),
                                               ("RSBag", "RSBag"))}
    passed = (reach["MSSBoost"] <= th["mssboost_max_models"]
              and reach["NSBoost"] >= th["nsboost_min_models"]
              and (reach["RSBag"] >= th["rsbag_min_models"] or reach["RSBag"] > reach["NSBoost"])
              and at5["MSSBoost"] < min(at5["NSBoost"], at5["RSBag"]))
    text = (f"models to best error: MSSBoost {reach['MSSBoost']} (paper ~5), NSBoost "
            f"{reach['NSBoost']} (paper >= 12), RSBag {reach['RSBag']} (paper > 20); "
            f"error at 5 models: MSSBoost {at5['MSSBoost']:.3f}, NSBoost "
            f"{at5['NSBoost']:.3f}, RSBag {at5['RSBag']:.3f}")
    return bool(passed), text


@register_claim(PAPER, 3, "Synthetic: MSSBoost reaches its best error with ~5 models, NSBoost "
                "needs >= 12, RSBag not within 20")
def claim_3():
    """Pass when MSSBoost reaches its best within ``mssboost_max_models`` models, NSBoost
    needs at least ``nsboost_min_models``, RSBag does not within ``rsbag_min_models`` or
    needs more than NSBoost, and MSSBoost's error at 5 models beats both others' (the
    thresholds are fig4.yaml's ``thresholds:``)."""
    target = resolve_target(f"{PAPER}/fig4")
    records, out_dir, quick = saved_results(target)
    if records is None:
        return ClaimResult(None, "no saved results: run `mlkit reproduce mssboost/fig4` "
                                 "(or with --quick) first")
    th = target_spec(target)[0].thresholds
    figs = read_summary(out_dir)["figures"]
    passed, measured = _claim_3_verdict(figs, th, "MSSBoost")
    intercept = "MSSBoost (intercept)"
    if f"models_to_best.{intercept}" in figs:
        ok_i, text_i = _claim_3_verdict(figs, th, intercept)
        measured += f" || {intercept} in MSSBoost's place: {'PASS' if ok_i else 'FAIL'}: {text_i}"
    measured += f" [{'quick' if quick else 'full'} results in {out_dir}]"
    return ClaimResult(bool(passed), measured)
