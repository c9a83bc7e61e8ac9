"""Benchmark: HFSS Algorithms 1 + 2 against scikit-learn's BaggingClassifier doing the same work.

On one-vs-one problems of Scene-15 (3 subspaces), both sides build ``rounds`` bagged linear
SVMs per subspace and compute what HFSS reports of a binary problem: the out-of-bag (OOB)
goodness of every subspace, bestK (the forward selection of Algorithm 2) and the OOB
accuracy of the full and of the chosen ensemble after each weak SVM (the curves of Figs. 3,
6, 7):

* ours: ``HFSS(n_rounds=rounds)`` on the problem (each bootstrap's distinct rows weighted by
  their draws; everything else from the stored votes);
* scikit-learn, the obvious alternative: per subspace, ``StandardScaler`` then
  ``BaggingClassifier(LinearSVC(C, loss, tol, max_iter), n_estimators=rounds)``; the members'
  decision values on the training samples (``decision_function``) and OOB masks
  (``estimators_samples_``) then give the same figures in numpy (:func:`algorithm_2`, with
  HFSS's vote rule).

Same work on both sides: the same SVM settings (HFSS's defaults: C = 1, squared hinge,
tol 1e-4, 1000 iterations; every weak SVM of Scene-15 has more rows than features, so both
solve liblinear's primal) and the same bootstraps: member i of subspace j's
BaggingClassifier is fitted on HFSS's bootstrap of round i and subspace j (scikit-learn's
``_generate_bagging_indices`` is replaced, for the timed fit, by a function that draws that
bootstrap once and hands it back when scikit-learn re-derives the member's indices).
BaggingClassifier passes the draws as sample weights and liblinear drops the rows of weight
0, so both sides solve the very same liblinear problems: their outputs must agree exactly
(``max_output_diff`` = 0), which checks the comparison itself.

Timing: CPU time (``time.process_time``) in one process, BLAS limited to one thread,
``n_jobs=1`` on both sides. Every problem is fitted once by each side untimed (imports,
caches), then ``repeats`` times by each side, alternating which side goes first; a
problem's time is the median over its repeats. ``hfss_speedup`` is the sum over problems of
scikit-learn's median over the sum of ours; the median and range of the per-problem ratios
are printed beside it.

Where the time goes: both sides solve the very same liblinear problems, so the CPU seconds
of those solves are a floor of either side's time. They are measured in ours, in separate
passes (``repeats`` per problem, median) in which HFSS's liblinear call (``train_wrap``) is
timed, and give ``liblinear_cpu_s``, ``liblinear_share`` (of ours) and ``speedup_ceiling``:
scikit-learn's time over the solves alone, the ratio HFSS would reach if everything but the
liblinear solves cost nothing, i.e. the most any change that keeps the weak SVMs (and so
every output) can give.

Usage::

    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_hfss.py [--quick] [--problems N]

``measure_speedup(quick=False)`` returns the figures as a dict (``scripts/bench_full.py``
imports it). The last line printed is ``key=value`` pairs: ``hfss_speedup``,
``hfss_cpu_s``, ``sklearn_cpu_s`` (sums of the medians), ``ratio_median``, ``ratio_min``,
``ratio_max``, ``max_output_diff``, ``problems``, ``repeats``, ``liblinear_cpu_s``,
``liblinear_share``, ``speedup_ceiling``.

Run time on this machine (2 cores, shared with other work): ``--quick`` (8 problems x 3
repeats) 26 s wall, 20 CPU-s (measured); the default (all 105 problems x 3 repeats) 61 CPU-s
for the two timed sides (16.6 + 44.7, measured) plus the untimed passes that time
liblinear's own solves. The peer, scikit-learn, is a core dependency.
"""

import argparse
import time
import warnings
from contextlib import contextmanager
from itertools import combinations
from unittest import mock

import numpy as np
import sklearn.ensemble._bagging as sk_bagging
from sklearn.ensemble import BaggingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

import mlkit.methods.hfss as hfss_module
from mlkit.datasets.mat_views import load_scene15
from mlkit.methods._sampling import bootstrap, out_of_bag
from mlkit.methods.hfss import HFSS, oob_accuracy

#: (problems, repeats) of the full and the --quick measurement
FULL = (105, 3)
QUICK = (8, 3)


@contextmanager
def hfss_bootstraps(seed, subspace, y01):
    """Inside: BaggingClassifier's member i draws HFSS's bootstrap of round i of ``subspace``
    (``bootstrap(n, default_rng([seed, i, subspace]), y=y01)``), drawn once per member and
    handed back unchanged when scikit-learn re-derives the member's indices for its OOB
    estimate. Members are numbered in the order scikit-learn first asks for their indices
    (its per-member seeds, in order, both times)."""
    drawn = {}

    def indices(random_state, bootstrap_features, bootstrap_samples, n_features, n_samples,
                max_features, max_samples, sample_weight):
        key = int(random_state)
        if key not in drawn:
            rng = np.random.default_rng([seed, len(drawn), subspace])
            drawn[key] = bootstrap(n_samples, rng, y=y01)
        return np.arange(n_features), drawn[key]

    with mock.patch.object(sk_bagging, "_generate_bagging_indices", indices):
        yield


def fit_hfss(views, y, rounds, random_state):
    """Ours: HFSS's outputs (see :func:`algorithm_2`) and the seed its bootstraps derive from."""
    est = HFSS(n_rounds=rounds, random_state=random_state, n_jobs=1).fit(views, y)
    p = est.problems_[0]
    return {"goodness": p.goodness, "bestk": p.bestk, "oob_curve_all": p.oob_curve_all,
            "oob_curve": p.oob_curve}, p.seed


def fit_bagging(views, y, rounds, seed):
    """scikit-learn: per subspace a BaggingClassifier of LinearSVCs (HFSS's SVM settings) on
    HFSS's bootstraps (``seed``: the problem's bootstrap seed); then HFSS's outputs from its
    members' decision values on the training samples and their OOB masks."""
    est = HFSS()                                  # its default SVM settings and vote rule
    y_pm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    y01 = (y_pm > 0).astype(int)
    svm = LinearSVC(C=est.C, loss=est.loss, tol=est.tol, max_iter=est.max_iter)
    dec, oob = [], []
    for j, X in enumerate(views.views):
        Z = StandardScaler().fit_transform(X)
        with hfss_bootstraps(seed, j, y01):
            bag = BaggingClassifier(svm, n_estimators=rounds, n_jobs=1,
                                    random_state=0).fit(Z, y)
            samples = bag.estimators_samples_
        dec.append(np.column_stack([m.decision_function(Z) for m in bag.estimators_]))
        oob.append(np.column_stack([out_of_bag(s, len(y)) for s in samples]))
    return algorithm_2(np.stack(dec, axis=2), np.stack(oob, axis=2), y_pm, est)


def algorithm_2(dec, oob, y_pm, est):
    """Goodness of every subspace, bestK and the OOB accuracy of the full and the chosen
    ensembles after each member (rounds, subspaces inside), from the members' decision values
    ``dec`` and OOB masks ``oob`` of shape (n_samples, rounds, subspaces), with HFSS's vote
    rule (:func:`mlkit.methods.hfss.oob_accuracy`): what HFSS reports of a binary problem."""
    n, _, k = dec.shape
    prior = 1 if (y_pm > 0).sum() >= (y_pm < 0).sum() else -1
    votes, decs = np.where(oob, np.sign(dec), 0.0), np.where(oob, dec, 0.0)

    def accuracy(v, d, c):
        return oob_accuracy(v, d, c, y_pm, prior, vote=est.vote, tie_break=est.tie_break,
                            no_oob=est.no_oob)

    vs, ds, cnt = votes.sum(axis=1), decs.sum(axis=1), oob.sum(axis=1)
    goodness = accuracy(vs, ds, cnt)
    order = np.argsort(-np.nan_to_num(goodness, nan=-1.0), kind="stable")
    forward = accuracy(*(np.cumsum(a[:, order], axis=1) for a in (vs, ds, cnt)))
    bestk = int(np.nanargmax(forward)) + 1

    def curve(cols):
        return accuracy(*(np.cumsum(a[:, :, cols].reshape(n, -1), axis=1)
                          for a in (votes, decs, oob)))

    return {"goodness": goodness, "bestk": bestk, "oob_curve_all": curve(np.arange(k)),
            "oob_curve": curve(np.sort(order[:bestk]))}


@contextmanager
def timed_liblinear():
    """Inside: HFSS's liblinear calls (``mlkit.methods.hfss._train_wrap``) add their CPU
    seconds to ``spent[0]`` and count themselves in ``spent[1]`` (the yielded list)."""
    spent = [0.0, 0]
    solve = hfss_module._train_wrap

    def timed(*args):
        t0 = time.process_time()
        out = solve(*args)
        spent[0] += time.process_time() - t0
        spent[1] += 1
        return out

    with mock.patch.object(hfss_module, "_train_wrap", timed):
        yield spent


def _cpu(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def _problems(n_problems):
    data = load_scene15()
    views, y = data.inputs, data.y
    pairs = list(combinations(range(len(data.class_names)), 2))
    # spread over the classes when fewer than all problems are timed
    chosen = np.unique(np.linspace(0, len(pairs) - 1, min(n_problems, len(pairs))).round())
    for q in chosen.astype(int):
        a, b = pairs[q]
        rows = np.flatnonzero((y == a) | (y == b))
        yield q, views[rows], y[rows]


def measure_speedup(quick=False, *, problems=None, repeats=None, rounds=50, progress=None):
    """CPU time of HFSS and of the BaggingClassifier alternative on Scene-15 problems.

    Parameters
    ----------
    quick : bool
        ``QUICK`` problems and repeats instead of ``FULL`` (all 105 problems).
    problems, repeats : int, optional
        Override the number of problems (spread over the 105) and repeats.
    rounds : int
        Bagging rounds (weak SVMs per subspace).
    progress : callable, optional
        Called with one line of text per problem.

    Returns
    -------
    dict
        ``hfss_speedup`` (sum of scikit-learn's per-problem median CPU seconds over ours),
        ``hfss_cpu_s``, ``sklearn_cpu_s``, ``ratio_median``, ``ratio_min``, ``ratio_max``,
        ``max_output_diff`` (the largest difference between the two sides' goodness, bestK
        and OOB curves over all problems: 0 when they agree), ``problems``, ``repeats``,
        ``liblinear_cpu_s`` (sum over problems of the median CPU seconds of ours spent in
        liblinear's solves), ``liblinear_share`` (of ``hfss_cpu_s``) and
        ``speedup_ceiling`` (``sklearn_cpu_s / liblinear_cpu_s``, see the module doc).
    """
    n_problems, n_repeats = QUICK if quick else FULL
    n_problems = problems or n_problems
    n_repeats = repeats or n_repeats
    ours, theirs, diffs, solves = [], [], [], []
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        for q, views, y in _problems(n_problems):
            (mine, seed), _ = _cpu(fit_hfss, views, y, rounds, q)        # untimed warm-up
            theirs_out, _ = _cpu(fit_bagging, views, y, rounds, seed)
            t_ours, t_sk = [], []
            for r in range(n_repeats):
                sides = [("ours", fit_hfss, (views, y, rounds, q)),
                         ("sklearn", fit_bagging, (views, y, rounds, seed))]
                for name, fn, args in sides[::1 if r % 2 == 0 else -1]:
                    _, cpu = _cpu(fn, *args)
                    (t_ours if name == "ours" else t_sk).append(cpu)
            t_solve = []
            for _ in range(n_repeats):                # untimed passes: the solves alone
                with timed_liblinear() as spent:
                    fit_hfss(views, y, rounds, q)
                t_solve.append(spent[0])
            ours.append(np.median(t_ours))
            theirs.append(np.median(t_sk))
            solves.append(np.median(t_solve))
            diffs.append(max(float(np.max(np.abs(np.asarray(mine[key], dtype=float)
                                                 - np.asarray(theirs_out[key], dtype=float))))
                             for key in mine))
            if progress is not None:
                progress(f"problem {q:3d}: ours {ours[-1]:.3f} s ({solves[-1]:.3f} s in "
                         f"liblinear), scikit-learn "
                         f"{theirs[-1]:.3f} s ({theirs[-1] / ours[-1]:.2f}x); goodness "
                         f"{np.round(100 * mine['goodness'], 2).tolist()}, bestK "
                         f"{mine['bestk']}; largest output difference {diffs[-1]:.2g}")
    ours, theirs, solves = np.array(ours), np.array(theirs), np.array(solves)
    ratios = theirs / ours
    return {"hfss_speedup": float(theirs.sum() / ours.sum()),
            "hfss_cpu_s": float(ours.sum()), "sklearn_cpu_s": float(theirs.sum()),
            "ratio_median": float(np.median(ratios)), "ratio_min": float(ratios.min()),
            "ratio_max": float(ratios.max()), "max_output_diff": float(np.max(diffs)),
            "problems": len(ours), "repeats": n_repeats,
            "liblinear_cpu_s": float(solves.sum()),
            "liblinear_share": float(solves.sum() / ours.sum()),
            "speedup_ceiling": float(theirs.sum() / solves.sum())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK[0]} problems x {QUICK[1]} repeats "
                             f"(default {FULL[0]} x {FULL[1]})")
    parser.add_argument("--problems", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args(argv)
    for name in ("problems", "repeats", "rounds"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    out = measure_speedup(args.quick, problems=args.problems, repeats=args.repeats,
                          rounds=args.rounds, progress=print)
    print(f"Scene-15, {out['problems']} one-vs-one problems x {out['repeats']} repeats, "
          f"3 subspaces x {args.rounds} rounds; CPU seconds, one BLAS thread")
    print(f"ours {out['hfss_cpu_s']:.2f} s, scikit-learn BaggingClassifier "
          f"{out['sklearn_cpu_s']:.2f} s; per-problem ratio median {out['ratio_median']:.2f} "
          f"[{out['ratio_min']:.2f}, {out['ratio_max']:.2f}]; goodness, bestK and OOB curves "
          f"of the two sides differ by at most {out['max_output_diff']:.2g}")
    print(f"liblinear's solves (the same problems on both sides): {out['liblinear_cpu_s']:.2f} "
          f"s, {100 * out['liblinear_share']:.0f}% of ours; with nothing else, ours would be "
          f"{out['speedup_ceiling']:.2f}x scikit-learn's time at most")
    print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                   for k, v in out.items()))


if __name__ == "__main__":
    main()
