"""MSSBoost against the Baseline it replaces (spec-mssboost Table 2, claims 1, 2 and 5).

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
  approximations ``selection_subsample`` and ``shortlist`` (not the paper's algorithm).

Times are CPU seconds (time.process_time) with wall seconds beside them; ratios use CPU time.

    MLKIT_DATA_MIRROR=/work/shared/data python scripts/bench_mssboost.py \\
        [--datasets trecvid-style corel5k-top39] [--T 100] [--select] [--no-approx]

The last line holds the corel5k-top39 figures (else the first collection's) as key=value:
train_speedup (CPU, the T = 100 fit), predict_speedup_90 (CPU, at the fewest models reaching
90% of the Baseline's Mean-AP), and the four Mean-APs.
"""

import argparse
import copy
import json
import time

from pathlib import Path

import numpy as np

from mlkit.config import ProtocolSpec
from mlkit.datasets import load_dataset
from mlkit.experiment import make_splits
from mlkit.methods import BaselineSVM, MSSBoost, NSBoost, RSBag
from mlkit.metrics import mean_average_precision_score
from mlkit.selection import select_mssboost_settings

COLLECTIONS = {
    "trecvid-style": ("trecvid-style", {"random_state": 0}),
    "corel5k-top39": ("corel5k", {"max_labels": 39}),
    "scene": ("scene", {}),
}

#: Each collection's dataset label in configs/mssboost/{selection,table2}.yaml.
CONFIG_LABELS = {"trecvid-style": "TRECVID-style", "corel5k-top39": "corel5k-top39",
                 "scene": "scene"}

#: Where the settings come from: the run records of ``mlkit reproduce mssboost/selection``
#: (the mssboost-settings method, Sec. 6.2.1's 2-fold CV on the training part of the same
#: seed-0 split), the values table2.yaml uses.
SELECTION = Path(__file__).resolve().parent.parent / "results" / "mssboost" / "selection"
KEYS = ("baseline_gamma", "baseline_C", "gamma", "C", "rd", "rf")


def selected_settings(label, selection=SELECTION):
    """The settings mssboost/selection chose for ``label``: the record its manifest names
    (so a stale record of an older config, left beside it, is never read)."""
    from mlkit.experiment import manifest_records

    want = CONFIG_LABELS[label]
    try:
        records = manifest_records(selection)
    except (OSError, ValueError, KeyError):
        records = []
    found = [r for r in records if r["dataset"] == want]
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
        if hasattr(model, "fit_profile_") and key.startswith("MSSBoost"):
            prof = model.fit_profile_
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
            print("      fit-time shares: " + ", ".join(
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
    args = parser.parse_args()
    results = []
    for label in args.datasets:
        given = args.settings.get(label, {})
        if args.select or args.select_only:
            name, params = COLLECTIONS[label]
            data = load_dataset(name, params=params)
            tr, _ = _split(data, args.seed)
            start = _clocks()
            grids = {key: getattr(args, key) for key in GRIDS}
            sel = select_mssboost_settings(data.X[tr], data.Y[tr], random_state=args.seed,
                                           n_jobs=args.n_jobs, exhaustive=False, **grids)
            cpu, wall = _since(start)
            settings = {**{k: sel[k] for k in KEYS}, **given}
            print(f"== selection on {label} ({cpu:.0f}s CPU, {wall:.0f}s wall): {settings}; "
                  f"Baseline 2-fold Mean-AP {sel['baseline_map']:.3f}, SV fraction "
                  f"{sel['baseline_sv_fraction']:.2f}; Subspace {sel['subspace_map']:.3f} "
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
    if not results:
        return
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, default=float)
    last = next((r for r in results if r["collection"] == "corel5k-top39"), results[0])
    lv90 = last["levels"]["90%"]
    print(" ".join([
        f"train_speedup={last['baseline']['fit_cpu'] / last['MSSBoost']['fit_cpu']:.3g}",
        "predict_speedup_90=" + (f"{lv90['predict_ratio']:.3g}" if lv90 else "not_reached"),
        f"map_baseline={last['baseline']['map']:.4f}", f"map_mssboost={last['MSSBoost']['map']:.4f}",
        f"map_nsboost={last['NSBoost']['map']:.4f}", f"map_rsbag={last['RSBag']['map']:.4f}"]))


if __name__ == "__main__":
    main()
