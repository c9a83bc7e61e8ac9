"""MSSBoost against the Baseline it replaces (Yan et al., KDD 2007, Table 2; claims 1, 2 and 5
of ``mlkit verify mssboost``).

For each collection, on one 75/25 split (seed ``--seed``) and at the collection's own selected
settings (those ``mlkit reproduce mssboost/selection`` chose by the paper's 2-fold CV rule,
read from its run records; ``--select`` reruns the selection here), measured side by side:

* Baseline (one RBF SVM per label, its own rho and C): Mean-AP, support vectors per model,
  model size, training and prediction time;
* MSSBoost (exact Algorithm 2, chi-square filter): the same at T = 100 and at the fewest
  models whose test Mean-AP reaches 90% / 100% of the Baseline's ("not reached" if never),
  with the ratios Baseline / MSSBoost of training time (the fit up to that round) and of
  prediction time (the truncated model on the test set);
* NSBoost and RSBag Mean-AP at T = 100; MSSBoost's fit-time profile (shares of fit time);
* the options beside the exact algorithm: float32 kernels (same algorithm) and the
  approximations ``selection_subsample`` and ``shortlist`` (not the paper's algorithm);
* the joint-loss step's share of MSSBoost's fit (:func:`measure_loss_share`): TRECVID-style
  at Table 2's settings, against the loss as evaluated before ``JointLossSearch``
  (:func:`reference_joint_loss`), with the two fits checked to select the same models.

Times are CPU seconds (time.process_time) with wall seconds beside them; ratios use CPU time.

    MLKIT_DATA_MIRROR=/work/shared/data python scripts/bench_mssboost.py \\
        [--datasets trecvid-style corel5k-top39] [--T 100] [--select] [--no-approx]
    python scripts/bench_mssboost.py --loss-share-only [--quick]   # ~1 CPU-minute (quick: ~7 s)

The last line holds key=value pairs: the corel5k-top39 figures (else the first collection's),
train_speedup (CPU, the T = 100 fit), predict_speedup_90 (CPU, at the fewest models reaching
90% of the Baseline's Mean-AP) and the four Mean-APs (not with --loss-share-only); then
mssboost_loss_share (CPU of the loss step / CPU of the fit, median over seeds),
mssboost_loss_share_before (the same with the reference loss), mssboost_loss_speedup (CPU of
the reference loss step / CPU of the loss step, the same fits) and mssboost_loss_identical
(both fits select the same models with the same weights and losses).

Run time on this machine (2 cores, shared; CPU seconds, the wall time grows with the load):
``--loss-share-only --quick`` 7 CPU-s (10 s wall) and ``--datasets scene`` 68 CPU-s (of
which the joint-loss measurement on TRECVID-style takes about 50), both measured; the
default (TRECVID-style and corel5k-top39) about 7 CPU-minutes, estimated from the
committed ``mssboost/table2`` runs' fit times (per split: Baseline 54 / 69 CPU-s, MSSBoost 35
/ 13) and not measured. The peer, the per-label SVM Baseline, is mlkit's (scikit-learn's
SVC).
"""

import argparse
import copy
import json
import time

from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from mlkit.config import ProtocolSpec, load_spec
from mlkit.datasets import load_dataset
from mlkit.experiment import make_splits
from mlkit.methods import BaselineSVM, MSSBoost, NSBoost, RSBag
from mlkit.methods.mssboost import _softplus
from mlkit.metrics import mean_average_precision_score
from mlkit.papers.mssboost.selection import select_mssboost_settings

COLLECTIONS = {
    "trecvid-style": ("trecvid-style", {"random_state": 0}),
    "corel5k-top39": ("corel5k", {"max_labels": 39}),
    "scene": ("scene", {}),
    "corel5k-lear-top39": ("corel5k-lear", {"max_labels": 39, "features": "hellinger"}),
}

#: Each collection's dataset label in configs/mssboost/{selection,table2}.yaml.
CONFIG_LABELS = {"trecvid-style": "TRECVID-style", "corel5k-top39": "corel5k-top39",
                 "scene": "scene", "corel5k-lear-top39": "corel5k-lear-top39"}

#: Where the settings come from: the run records of ``mlkit reproduce mssboost/selection``
#: (the mssboost-settings method, Sec. 6.2.1's 2-fold CV on the training part of the same
#: seed-0 split), the values table2.yaml uses.
SELECTION = Path(__file__).resolve().parent.parent / "results" / "mssboost" / "selection"
TABLE2 = Path(__file__).resolve().parent.parent / "configs" / "mssboost" / "table2.yaml"
KEYS = ("baseline_gamma", "baseline_C", "gamma", "C", "rd", "rf")


def selected_settings(label, selection=SELECTION):
    """The settings mssboost/selection's "Settings" search chose for ``label`` on the first
    split's training part (the split this benchmark runs on): the record its manifest names
    (so a stale record of an older config, left beside it, is never read)."""
    from mlkit.experiment import manifest_records

    want = CONFIG_LABELS[label]
    try:
        records = manifest_records(selection)
    except (OSError, ValueError, KeyError):
        records = []
    found = [r for r in records if r["dataset"] == want and r["method"] == "Settings"
             and r["repeat"] == 0]
    if not found:
        raise SystemExit(f"no selection record for {want} under {selection}: run "
                         "`mlkit reproduce mssboost/selection`, or pass --select / --settings")
    return {k: found[0]["model"][k] for k in KEYS}


GRIDS = {
    "gamma_grid": [0.005, 0.02, 0.05, 0.2, 0.5, 2.0, 5.0, 20.0],
    "C_grid": [1.0, 10.0],
    "base_gamma_grid": [0.05, 0.2, 0.5, 2.0, 5.0, 20.0, 50.0, 200.0],
    "base_C_grid": [1.0, 10.0],
    "rd_grid": [0.05, 0.1, 0.2, 0.3, 0.5],
    "rf_grid": [0.05, 0.1, 0.2, 0.3, 0.5],
}


def _clocks():
    return time.process_time(), time.perf_counter()


def _since(start):
    cpu, wall = _clocks()
    return cpu - start[0], wall - start[1]


def _split(data, seed):
    """The runner's first 75/25 split of table2's protocol (the selection's training part)."""
    split = make_splits(data, ProtocolSpec(split="holdout", test_size=0.25, repeats=1,
                                           seed=seed))[0]
    return split.train, split.test


def _truncated(model, t):
    """The boosting model with its first t base models (what a T = t run would predict)."""
    m = copy.copy(model)
    m.estimators_, m.alphas_ = model.estimators_[:t], model.alphas_[:t]
    return m


def _timed_predict(model, X, repeats=3):
    """Best of ``repeats`` (CPU, wall) seconds of decision_function on X."""
    best = (np.inf, np.inf)
    for _ in range(repeats):
        start = _clocks()
        F = model.decision_function(X)
        best = min(best, _since(start))
    return best, F


def _mean_ap(Y, F):
    return mean_average_precision_score(Y, F)


def _first_reaching(curve, level):
    hits = np.flatnonzero(np.asarray(curve) >= level)
    return int(hits[0]) + 1 if hits.size else None


def bench(label, T, seed, settings, approx, n_jobs):
    name, params = COLLECTIONS[label]
    data = load_dataset(name, params=params)
    tr, te = _split(data, seed)
    X, Y = data.X, data.Y
    Xtr, Ytr, Xte, Yte = X[tr], Y[tr], X[te], Y[te]
    s = settings
    out = {"collection": label, "synthetic": bool(data.synthetic), "settings": s,
           "n_train": len(tr), "n_labels": Y.shape[1]}

    base = BaselineSVM(gamma=s["baseline_gamma"], C=s["baseline_C"], n_jobs=1)
    start = _clocks()
    base.fit(Xtr, Ytr)
    b_fit = _since(start)
    b_pred, b_F = _timed_predict(base, Xte)
    b_map = _mean_ap(Yte, b_F)
    n_sv = int(base.n_support_vectors_.sum())
    out["baseline"] = {"map": b_map, "fit_cpu": b_fit[0], "fit_wall": b_fit[1],
                       "pred_cpu": b_pred[0], "pred_wall": b_pred[1], "sv_total": n_sv,
                       "sv_per_model": n_sv / Y.shape[1], "sv_fraction": base.support_fraction_,
                       "size": base.model_size_}

    kw = dict(base_learner="svm", rd=s["rd"], rf=s["rf"], gamma=s["gamma"], C=s["C"],
              chi2_filter=True, random_state=seed, n_jobs=n_jobs)
    runs = {"MSSBoost": MSSBoost(T, **kw), "NSBoost": NSBoost(T, **kw),
            "RSBag": RSBag(T, **{k: v for k, v in kw.items() if k != "chi2_filter"})}
    if approx:
        runs["MSSBoost float32"] = MSSBoost(T, kernel_dtype="float32", **kw)
        runs["MSSBoost subsample=0.25"] = MSSBoost(T, selection_subsample=0.25, **kw)
        runs["MSSBoost shortlist=5"] = MSSBoost(T, shortlist=5, **kw)
    for key, model in runs.items():
        start = _clocks()
        model.fit(Xtr, Ytr)
        fit = _since(start)
        pred, F = _timed_predict(model, Xte)
        out[key] = {"map": _mean_ap(Yte, F), "fit_cpu": fit[0], "fit_wall": fit[1],
                    "pred_cpu": pred[0], "pred_wall": pred[1], "size": model.model_size_}
        if hasattr(model, "fit_profile_cpu_") and key.startswith("MSSBoost"):
            prof = model.fit_profile_cpu_
            out[key]["profile"] = {k: v / prof["total"] for k, v in prof.items() if k != "total"}

    # MSSBoost at T = 100 and at the fewest models reaching 90% / 100% of Baseline's Mean-AP
    mss = runs["MSSBoost"]
    curve = [_mean_ap(Yte, F) for F in mss.staged_decision_function(Xte)]
    levels = {}
    for name_, frac in (("T", None), ("90%", 0.9), ("100%", 1.0)):
        t = T if frac is None else _first_reaching(curve, frac * b_map)
        if t is None:
            levels[name_] = None
            continue
        trunc = _truncated(mss, t)
        pred, _ = _timed_predict(trunc, Xte)
        fit_wall, fit_cpu = mss.fit_time_curve_[t]
        levels[name_] = {"t": t, "map": curve[t - 1], "fit_cpu": fit_cpu, "fit_wall": fit_wall,
                         "pred_cpu": pred[0], "pred_wall": pred[1],
                         "train_ratio": b_fit[0] / fit_cpu, "predict_ratio": b_pred[0] / pred[0],
                         "size": trunc.model_size_,
                         "sv_per_model": float(np.mean([h.estimator.support_vectors_.shape[0]
                                                        for h in trunc.estimators_]))}
    out["levels"] = levels
    return out


def reference_joint_loss(F, Y, H, alpha, sample_weight=None, block=1 << 22):
    """Eqn 1 of Yan et al. for every candidate, as MSSBoost evaluated it before
    ``JointLossSearch`` (mlkit 9f13a89): every (k, l) pair with a non-zero alpha, every
    round, in blocks of ``block`` elements. The reference the loss step is timed against."""
    v = None if sample_weight is None else np.asarray(sample_weight, dtype=float)

    def row_sums(A):
        return A.sum(axis=1) if v is None else A @ v

    neg_margin = np.ascontiguousarray((-Y * F).T)          # (L, N): -y_il F_l(x_i)
    base = row_sums(_softplus(neg_margin))                 # (L,) current loss per label
    loss = np.full(H.shape[1], base.sum())
    kk, ll = np.nonzero(alpha)
    if kk.size == 0:
        return loss
    YT = np.ascontiguousarray(Y.T, dtype=float)
    HT = np.ascontiguousarray(H.T)
    step = max(1, block // max(1, F.shape[0]))
    for start in range(0, kk.size, step):
        k, l = kk[start:start + step], ll[start:start + step]
        arg = YT[l]
        arg *= HT[k]
        arg *= -alpha[k, l][:, None]
        arg += neg_margin[l]
        np.add.at(loss, k, row_sums(_softplus(arg, out=arg)) - base[l])
    return loss


class ReferenceSearch:
    """Step 2(a) as MSSBoost evaluated it before ``JointLossSearch`` (same interface):
    :func:`reference_joint_loss` of every candidate, then its argmin."""

    def __init__(self, Y, sample_weight=None):
        self._Y, self._v = Y, sample_weight

    def argmin(self, F, H, alpha, grad, curvature, candidates=None):
        if candidates is None:
            candidates = np.arange(H.shape[1])
        loss = reference_joint_loss(F, self._Y, H[:, candidates], alpha[candidates], self._v)
        j = int(np.argmin(loss))
        return int(candidates[j]), loss[j]


class ReferenceMSSBoost(MSSBoost):
    """MSSBoost selecting with :class:`ReferenceSearch` (the loss step before
    ``JointLossSearch``); everything else is MSSBoost's."""

    _loss_search = ReferenceSearch


def measure_loss_share(quick=False, seeds=(0, 1, 2)):
    """CPU share of the joint-loss step (Step 2(a) of Algorithm 2) in MSSBoost's fit.

    TRECVID-style at Table 2's settings (configs/mssboost/table2.yaml, its ``quick:`` block
    with ``quick``), one BLAS thread, one fit per seed (split and model seed) with
    :class:`MSSBoost` and one with :class:`ReferenceMSSBoost`. CPU seconds of the loss step
    come from ``fit_profile_cpu_["loss"]``, those of the fit from ``time.process_time``
    around ``fit``.

    Returns
    -------
    dict
        ``mssboost_loss_share`` and ``mssboost_loss_share_before`` (medians over the seeds of
        loss step / fit), ``mssboost_loss_speedup`` (median of the reference's loss-step CPU
        over MSSBoost's), ``mssboost_loss_identical`` (every seed: the same models, weights
        and training losses), the median CPU seconds and the per-seed figures.
    """
    spec = load_spec(TABLE2, quick=quick)
    ds = next(d for d in spec.datasets if d.display == "TRECVID-style")
    params = ds.params_for(next(m for m in spec.methods if m.display == "MSSBoost"))
    data = load_dataset(ds.name, params=ds.params)
    runs = []
    with threadpool_limits(limits=1):
        for seed in seeds:
            tr, _ = _split(data, seed)
            X, Y = data.X[tr], data.Y[tr]
            run = {"seed": seed}
            fitted = {}
            for key, cls in (("after", MSSBoost), ("before", ReferenceMSSBoost)):
                model = cls(**params, random_state=seed, n_jobs=1)
                start = time.process_time()
                model.fit(X, Y)
                run[f"fit_cpu_{key}"] = time.process_time() - start
                run[f"loss_cpu_{key}"] = model.fit_profile_cpu_["loss"]
                fitted[key] = model
            a, b = fitted["after"], fitted["before"]
            run["identical"] = bool(
                np.array_equal(a.estimator_labels_, b.estimator_labels_)
                and all(np.array_equal(h.samples, g.samples)
                        for h, g in zip(a.estimators_, b.estimators_))
                and np.array_equal(a.alphas_, b.alphas_)
                and np.array_equal(a.train_loss_, b.train_loss_))
            runs.append(run)

    def median(key):
        return float(np.median([r[key] for r in runs]))

    for r in runs:
        r["share_after"] = r["loss_cpu_after"] / r["fit_cpu_after"]
        r["share_before"] = r["loss_cpu_before"] / r["fit_cpu_before"]
        r["speedup"] = r["loss_cpu_before"] / r["loss_cpu_after"]
    return {"dataset": ds.display, "quick": quick, "n_train": int(len(tr)),
            "n_labels": int(data.Y.shape[1]), "T": params["n_estimators"],
            "seeds": list(seeds), "mssboost_loss_share": median("share_after"),
            "mssboost_loss_share_before": median("share_before"),
            "mssboost_loss_speedup": median("speedup"),
            "mssboost_loss_identical": all(r["identical"] for r in runs),
            "loss_cpu": median("loss_cpu_after"), "loss_cpu_before": median("loss_cpu_before"),
            "fit_cpu": median("fit_cpu_after"), "fit_cpu_before": median("fit_cpu_before"),
            "runs": runs}


def _report_loss_share(r):
    print(f"== joint-loss step of MSSBoost on {r['dataset']}{' (quick)' if r['quick'] else ''} "
          f"({r['n_train']} training examples, {r['n_labels']} labels, T = {r['T']}; "
          f"CPU seconds, one BLAS thread, medians over seeds {r['seeds']})")
    print(f"   loss step {r['loss_cpu']:.2f}s of a {r['fit_cpu']:.1f}s fit "
          f"({100 * r['mssboost_loss_share']:.1f}%); before JointLossSearch "
          f"{r['loss_cpu_before']:.2f}s of {r['fit_cpu_before']:.1f}s "
          f"({100 * r['mssboost_loss_share_before']:.1f}%); loss step "
          f"{r['mssboost_loss_speedup']:.1f}x faster; same models, weights and losses: "
          f"{r['mssboost_loss_identical']}")


def _report(r):
    b = r["baseline"]
    s = r["settings"]
    kind = "synthetic" if r["synthetic"] else "real"
    print(f"== {r['collection']} ({kind}; {r['n_train']} training examples, {r['n_labels']} labels)")
    print(f"   settings: Baseline rho={s['baseline_gamma']} C={s['baseline_C']}; base models "
          f"rho={s['gamma']} C={s['C']} rd={s['rd']} rf={s['rf']}")
    print(f"   Baseline: Mean-AP {b['map']:.3f}; fit {b['fit_cpu']:.1f}s CPU ({b['fit_wall']:.1f}s "
          f"wall); predict {b['pred_cpu']:.2f}s CPU ({b['pred_wall']:.2f}s wall); "
          f"{b['sv_total']} support vectors ({b['sv_per_model']:.0f} per model, "
          f"{100 * b['sv_fraction']:.0f}% of the training set); model size {b['size']:.3g}")
    for key in ("MSSBoost", "NSBoost", "RSBag", "MSSBoost float32", "MSSBoost subsample=0.25",
                "MSSBoost shortlist=5"):
        if key not in r:
            continue
        m = r[key]
        note = " (approximation)" if ("subsample" in key or "shortlist" in key) else ""
        print(f"   {key}{note}: Mean-AP {m['map']:.3f}; fit {m['fit_cpu']:.1f}s CPU "
              f"({m['fit_wall']:.1f}s wall); predict {m['pred_cpu']:.2f}s CPU; model size "
              f"{m['size']:.3g}")
        if "profile" in m:
            print("      fit-time shares (CPU): " + ", ".join(
                f"{k} {100 * v:.0f}%" for k, v in sorted(m["profile"].items(),
                                                          key=lambda kv: -kv[1])))
    for name, lv in r["levels"].items():
        what = "T = 100" if name == "T" else f"fewest models reaching {name} of Baseline's Mean-AP"
        if lv is None:
            print(f"   MSSBoost at {what}: not reached")
            continue
        print(f"   MSSBoost at {what}: t={lv['t']}, Mean-AP {lv['map']:.3f}; training "
              f"{lv['train_ratio']:.1f}x faster ({lv['fit_cpu']:.1f}s CPU, {lv['fit_wall']:.1f}s "
              f"wall), prediction {lv['predict_ratio']:.1f}x faster ({lv['pred_cpu']:.3f}s CPU, "
              f"{lv['pred_wall']:.3f}s wall); {lv['sv_per_model']:.0f} support vectors per base "
              f"model, model size {lv['size']:.3g}, against Baseline's {b['sv_total']} support "
              f"vectors ({b['sv_per_model']:.0f} per model), size {b['size']:.3g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["trecvid-style", "corel5k-top39"],
                        choices=sorted(COLLECTIONS))
    parser.add_argument("--T", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--select", action="store_true",
                        help="run the 2-fold CV selection on the training part first")
    parser.add_argument("--select-only", action="store_true",
                        help="print the selected settings and stop")
    parser.add_argument("--settings", type=json.loads, default={},
                        help='JSON {collection: {baseline_gamma, baseline_C, gamma, C, rd, rf}} '
                             "replacing (some of) the selected settings")
    for key, values in GRIDS.items():
        parser.add_argument("--" + key.replace("_", "-"), type=float, nargs="+", default=values)
    parser.add_argument("--no-approx", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--loss-share-only", action="store_true",
                        help="only measure the joint-loss step's share of MSSBoost's fit")
    parser.add_argument("--quick", action="store_true",
                        help="the loss share on table2's quick TRECVID-style (10 labels, T = 40)")
    args = parser.parse_args()
    results = []
    for label in ([] if args.loss_share_only else args.datasets):
        given = args.settings.get(label, {})
        if args.select or args.select_only:
            name, params = COLLECTIONS[label]
            data = load_dataset(name, params=params)
            tr, _ = _split(data, args.seed)
            start = _clocks()
            grids = {key: getattr(args, key) for key in GRIDS}
            sel = select_mssboost_settings(data.X[tr], data.Y[tr], random_state=args.seed,
                                           exhaustive=False, **grids)
            cpu, wall = _since(start)
            settings = {**{k: sel[k] for k in KEYS}, **given}
            print(f"== selection on {label} ({cpu:.0f}s CPU, {wall:.0f}s wall): {settings}; "
                  f"Baseline 2-fold Mean-AP {sel['baseline_map']:.3f}, SV fraction "
                  f"{sel['baseline_sv_fraction']:.2f}; Subspace {sel['subspace_map']:.3f}, "
                  f"{sel.get('scored', 'Subspace')} {sel.get('scored_map', sel['subspace_map']):.3f} "
                  f"(80% reached: {sel['reached']})", flush=True)
            for g in sel["baseline_grid"]:
                print(f"   baseline rho={g['gamma']} C={g['C']}: Mean-AP {g['mean_ap']:.3f}, "
                      f"SV fraction {g['sv_fraction']:.2f}")
            for g in sel["grid"]:
                print(f"   rd={g['rd']} rf={g['rf']}: base rho={g['gamma']} C={g['C']} "
                      f"Subspace Mean-AP {g['mean_ap']:.3f}", flush=True)
            if args.select_only:
                continue
        else:
            settings = given if set(KEYS) <= set(given) else {**selected_settings(label),
                                                                **given}
        r = bench(label, args.T, args.seed, settings, not args.no_approx, args.n_jobs)
        _report(r)
        results.append(r)
    if args.select_only:
        return
    share = measure_loss_share(quick=args.quick)
    _report_loss_share(share)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"collections": results, "loss_share": share}, fh, indent=1,
                      default=float)
    pairs = []
    if results:
        last = next((r for r in results if r["collection"] == "corel5k-top39"), results[0])
        lv90 = last["levels"]["90%"]
        pairs = [
            f"train_speedup={last['baseline']['fit_cpu'] / last['MSSBoost']['fit_cpu']:.3g}",
            "predict_speedup_90=" + (f"{lv90['predict_ratio']:.3g}" if lv90 else "not_reached"),
            f"map_baseline={last['baseline']['map']:.4f}",
            f"map_mssboost={last['MSSBoost']['map']:.4f}",
            f"map_nsboost={last['NSBoost']['map']:.4f}", f"map_rsbag={last['RSBag']['map']:.4f}"]
    print(" ".join(pairs + [
        f"mssboost_loss_share={share['mssboost_loss_share']:.4f}",
        f"mssboost_loss_share_before={share['mssboost_loss_share_before']:.4f}",
        f"mssboost_loss_speedup={share['mssboost_loss_speedup']:.3g}",
        f"mssboost_loss_identical={str(share['mssboost_loss_identical']).lower()}"]))


if __name__ == "__main__":
    main()
