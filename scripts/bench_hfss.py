"""Benchmark: HFSS Algorithms 1 + 2 vs scikit-learn's BaggingClassifier, per binary problem.

On every one-vs-one problem of Scene-15 (105 problems, 3 subspaces), both build 50 bagged
linear SVMs (C = 1) per subspace with out-of-bag (OOB) estimates:

* ours: ``HFSS(n_rounds=50)`` on the problem: the 150 weak SVMs (fresh bootstraps, distinct
  rows weighted by their draws), the OOB goodness of every subspace, the forward selection
  (bestK) and the OOB curves, all from the stored votes;
* scikit-learn: per subspace, ``StandardScaler`` then ``BaggingClassifier(LinearSVC(C=1),
  n_estimators=50, oob_score=True)`` (the goodness of that subspace is its ``oob_score_``;
  it has no bestK and no curves).

The two are timed alternately on each problem (same process, one core each, n_jobs=1), with
CPU time (``time.process_time``) beside wall time. Equal accuracy means the mean OOB accuracy
of the per-subspace bagged ensembles agrees within 0.5 points. ``speedup`` on the last line is
the CPU-time ratio (the machine is shared, so wall time carries other users' load);
``speedup_wall`` is the wall-time ratio.

Usage: ``MLKIT_DATA_MIRROR=../shared/data python scripts/bench_hfss.py [--pairs N]``
"""

import argparse
import time
import warnings
from itertools import combinations

import numpy as np
from sklearn.ensemble import BaggingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from mlkit.datasets.mat_views import load_scene15
from mlkit.methods.hfss import HFSS


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def ours(views, y, n_rounds, seed):
    est = HFSS(n_rounds=n_rounds, random_state=seed).fit(views, y)
    return est.goodness_[0], est.oob_scores_all_[0], est.oob_scores_[0], est.bestk_[0]


def sklearn_bagging(views, y, n_rounds, seed):
    scores = []
    for X in views.views:
        Z = StandardScaler().fit_transform(X)
        bag = BaggingClassifier(LinearSVC(C=1.0), n_estimators=n_rounds, oob_score=True,
                                random_state=seed).fit(Z, y)
        scores.append(bag.oob_score_)
    return np.array(scores)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=None, help="only the first N problems")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    data = load_scene15()
    views, y = data.inputs, data.y
    pairs = list(combinations(range(len(data.class_names)), 2))[:args.pairs]
    t = {"ours": [0.0, 0.0], "sklearn": [0.0, 0.0]}
    good_ours, good_sk, acc_all, acc_best, bestk = [], [], [], [], []
    warnings.simplefilter("ignore", ConvergenceWarning)
    with threadpool_limits(limits=1, user_api="blas"):
        for p, (a, b) in enumerate(pairs):
            rows = np.flatnonzero((y == a) | (y == b))
            v, yy = views[rows], y[rows]
            (g, all_, best, k), wall, cpu = _timed(lambda: ours(v, yy, args.rounds, args.seed + p))
            t["ours"][0] += wall
            t["ours"][1] += cpu
            sk, wall, cpu = _timed(lambda: sklearn_bagging(v, yy, args.rounds, args.seed + p))
            t["sklearn"][0] += wall
            t["sklearn"][1] += cpu
            good_ours.append(g)
            good_sk.append(sk)
            acc_all.append(all_)
            acc_best.append(best)
            bestk.append(k)
    good_ours, good_sk = np.array(good_ours), np.array(good_sk)
    acc_ours, acc_sk = 100 * good_ours.mean(), 100 * good_sk.mean()
    print(f"Scene-15, {len(pairs)} one-vs-one problems, {len(views.views)} subspaces, "
          f"{args.rounds} rounds ({args.rounds * len(views.views)} weak SVMs per problem)")
    for name, (wall, cpu) in t.items():
        print(f"{name:8s} wall {wall:8.2f} s   cpu {cpu:8.2f} s")
    print("per-subspace OOB accuracy (goodness), mean over problems:")
    for j, n in enumerate(views.names):
        print(f"  {n:22s} ours {100 * good_ours[:, j].mean():6.2f}   "
              f"sklearn {100 * good_sk[:, j].mean():6.2f}")
    print(f"ours, OOB accuracy of the full ensemble {100 * np.mean(acc_all):.2f} "
          f"+- {100 * np.std(acc_all):.2f}; of bestK {100 * np.mean(acc_best):.2f} "
          f"+- {100 * np.std(acc_best):.2f} (mean bestK {np.mean(bestk):.2f})")
    speedup = t["sklearn"][1] / t["ours"][1]
    speedup_wall = t["sklearn"][0] / t["ours"][0]
    print(f"speedup={speedup:.2f} speedup_wall={speedup_wall:.2f} acc_ours={acc_ours:.2f} "
          f"acc_sklearn={acc_sk:.2f} problems={len(pairs)}")


if __name__ == "__main__":
    main()
