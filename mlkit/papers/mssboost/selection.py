"""MSSBoost's settings as Sec. 6.2.1 of Yan et al. (KDD 2007) chooses them, on the runner's
grid search.

Every cross-validated grid here is :class:`mlkit.runner.grid.ResumableGridSearchCV` (the one
grid search of mlkit, ``GridSearchCV``'s numbers) on one set of folds: the Baseline's rho and
C, the base models' rho and C at every sampling-ratio pair, and the scored model at each pair.
What is MSSBoost's own is the rule that picks the ratios, :func:`ratio_rule`: a
``GridSearchCV`` ``refit`` callable ("the minimal ones that can achieve at least 80% of the
baseline performance on average"), applied to the pairs' CV results.
"""

import warnings

import numpy as np
from sklearn.base import clone

from ...metrics import mean_average_precision_score
from ...runner.grid import ResumableGridSearchCV
from ...runner.splits import cv_folds

__all__ = ["ratio_rule", "smallest_ratios_reaching", "mean_ap_scorer", "select_baseline",
           "select_base_model", "select_mssboost_settings"]


def ratio_rule(threshold):
    """The rd/rf rule of Sec. 6.2.1 as a ``GridSearchCV`` ``refit`` callable.

    Given ``cv_results`` (``GridSearchCV``'s, or any mapping with ``params``, each holding
    ``rd`` and ``rf``, and ``mean_test_score``), it returns the index of the candidate with
    the smallest rd * rf, then the smallest rd, among those whose mean score reaches
    ``threshold`` (our reading of "the minimal ones that can achieve at least 80% of the
    baseline performance on average"); when none reaches it, the best-scoring candidate (the
    first of equals in that order).
    """
    def rule(cv_results):
        params = list(cv_results["params"])
        means = np.asarray(cv_results["mean_test_score"], dtype=float)
        order = sorted(range(len(params)),
                       key=lambda i: (params[i]["rd"] * params[i]["rf"], params[i]["rd"]))
        reaching = [i for i in order if means[i] >= threshold]
        return reaching[0] if reaching else max(order, key=lambda i: means[i])

    return rule


def smallest_ratios_reaching(grid, threshold):
    """:func:`ratio_rule` on rows ``grid`` ({rd, rf, mean_ap, ...}): ``(row, reached)``."""
    index = ratio_rule(threshold)({"params": grid,
                                   "mean_test_score": [g["mean_ap"] for g in grid]})
    return grid[index], bool(grid[index]["mean_ap"] >= threshold)


def mean_ap_scorer(estimator, X, Y):
    """Mean-AP of a fitted ``estimator`` on (X, Y), as a scorer; labels without a positive
    in Y are left out of the mean (silently: a CV fold may have none of a rare label)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return mean_average_precision_score(Y, estimator.decision_function(X))


def support_fraction_scorer(estimator, X, Y):
    """The fitted model's support-vector fraction (``support_fraction_``), as a scorer."""
    return float(estimator.support_fraction_)


def _folds(Y, n_folds, random_state):
    """The shuffled CV folds of the selection and the labels it reads: those with both
    classes in the training part of every fold (a rare label may have one class only in
    some fold: it is left out of every fit and Mean-AP of the selection)."""
    folds = cv_folds(len(Y), n_folds, random_state)
    keep = np.all([np.ptp(Y[train], axis=0) > 0 for train, _ in folds], axis=0)
    if not keep.any():
        raise ValueError(f"no label has both classes in the training part of every "
                         f"{n_folds}-fold CV fold; too few examples for this many folds")
    return folds, keep


def _search(estimator, grid, X, Y, folds, scoring=mean_ap_scorer):
    """The fitted grid search (no refit) of ``estimator`` over ``grid`` on ``folds``."""
    return ResumableGridSearchCV(estimator, grid, cv=folds, scoring=scoring,
                                 refit=False).fit(X, Y)


def _grid(gamma_grid, C_grid):
    """The (gamma, C) candidates, gamma outer: one single-point grid each, so that the
    search keeps this order (a dict grid would iterate its keys sorted, C outer), which
    decides ties (the first best) and the order of the rows reported."""
    return [{"gamma": [float(g)], "C": [float(c)]} for g in gamma_grid for c in C_grid]


def _rows(search, metric="score"):
    """{gamma, C, mean_ap} of every candidate of a fitted search, in its order."""
    res = search.cv_results_
    return [{"gamma": params["gamma"], "C": params["C"], "mean_ap": float(m)}
            for params, m in zip(res["params"], res[f"mean_test_{metric}"])]


def _as_matrix(Y):
    Y = np.asarray(Y)
    return Y[:, None] if Y.ndim == 1 else Y


def select_baseline(X, Y, *, gamma_grid, C_grid, n_folds=2, random_state=0, baseline=None,
                    folds=None):
    """The Baseline's rho (``gamma``) and ``C`` by ``n_folds``-fold CV Mean-AP of the Baseline
    itself (Sec. 6.2.1 of Yan et al. 2007: "rho is set to 0.05 based on two fold cross
    validation"; C is not stated, so it is searched alike).

    Parameters
    ----------
    X, Y : training data (Y an (n, L) 0/1 or -1/+1 matrix)
    gamma_grid, C_grid : sequences of float
    n_folds : int, default=2
    random_state : int, default=0
        Seed of the shuffled folds.
    baseline : estimator, default=None
        :class:`~mlkit.methods.BaselineSVM` when None.
    folds : list of (train, test), default=None
        The folds (and the labels read) of :func:`select_mssboost_settings`; None: made here.

    Returns
    -------
    dict
        ``gamma``, ``C``, ``mean_ap`` (of the best setting, the first of equals in grid
        order) and ``grid``: for every setting {gamma, C, mean_ap, sv_fraction}, the
        Baseline's mean support-vector fraction over labels and folds (near 1: the kernel
        is too flat or too narrow for a sparse SVM).
    """
    from ...methods import BaselineSVM

    Y = _as_matrix(Y)
    if folds is None:
        folds, keep = _folds(Y, n_folds, random_state)
        Y = Y[:, keep]
    est = BaselineSVM() if baseline is None else baseline
    # two scores per fold: a dict of scorers is GridSearchCV's own multi-metric search
    search = _search(est, _grid(gamma_grid, C_grid), X, Y, folds,
                     scoring={"mean_ap": mean_ap_scorer, "sv_fraction": support_fraction_scorer})
    res = search.cv_results_
    rows = [{**row, "sv_fraction": float(f)}
            for row, f in zip(_rows(search, "mean_ap"), res["mean_test_sv_fraction"])]
    best = rows[int(np.argmin(res["rank_test_mean_ap"]))]      # GridSearchCV's best
    return {"gamma": best["gamma"], "C": best["C"], "mean_ap": best["mean_ap"], "grid": rows}


def select_base_model(X, Y, *, rd, rf, gamma_grid, C_grid, n_folds=2, random_state=0,
                      estimator=None, folds=None):
    """The base models' rho (``gamma``) and ``C`` by ``n_folds``-fold CV Mean-AP of the base
    model itself: the Subspace model (one subspace SVM per label) at sampling ratios
    ``rd``, ``rf``. A subspace SVM sees M * rf features, so its squared distances are about rf
    times the Baseline's and its best rho is about 1/rf times larger: the Baseline's rho would
    make it nearly flat.

    Returns
    -------
    dict
        ``gamma``, ``C``, ``mean_ap`` (of the best setting) and ``grid``: {gamma, C, mean_ap}
        for every setting.
    """
    from ...methods import Subspace

    Y = _as_matrix(Y)
    if folds is None:
        folds, keep = _folds(Y, n_folds, random_state)
        Y = Y[:, keep]
    est = Subspace(random_state=random_state) if estimator is None else clone(estimator)
    search = _search(est.set_params(rd=rd, rf=rf), _grid(gamma_grid, C_grid), X, Y, folds)
    rows = _rows(search)
    best = rows[search.best_index_]
    return {"gamma": best["gamma"], "C": best["C"], "mean_ap": best["mean_ap"], "grid": rows}


def select_mssboost_settings(X, Y, *, gamma_grid, C_grid, rd_grid, rf_grid,
                             base_gamma_grid=None, base_C_grid=None, fraction=0.8, n_folds=2,
                             random_state=0, exhaustive=True, scored_estimator=None):
    """Every setting of MSSBoost's experiments chosen as Sec. 6.2.1 of Yan et al. (2007) says,
    all by ``n_folds``-fold CV on (X, Y) with the same folds:

    1. the Baseline's rho and C (:func:`select_baseline`) and its CV Mean-AP;
    2. for every (rd, rf) of the grids, the base models' rho and C by CV of the Subspace
       model at (rd, rf) (:func:`select_base_model`);
    3. rd, rf by :func:`ratio_rule` with the threshold ``fraction`` times the Baseline's
       Mean-AP, on the CV Mean-AP of the scored model at every pair ("the minimal ones that
       can achieve at least 80% of the baseline performance on average"); when no pair
       reaches it, the best-scoring pair (``reached`` is then False). The scored model is the
       Subspace model itself (``scored_estimator=None``) or ``scored_estimator`` (e.g. the
       MSSBoost ensemble) with the pair's rd, rf and the base models' rho and C of step 2.
       The paper does not say which model it scored; its Table 2 puts Subspace at 71% (TREC)
       and 79% (Consumer) of the Baseline at the ratios it chose, below 80%, and MSSBoost at
       102% and 101%, so its rule cannot have scored Subspace.

    Parameters
    ----------
    gamma_grid, C_grid : sequences of float
        The Baseline's grids.
    rd_grid, rf_grid : sequences of float
        The ratios searched (the paper does not list its own).
    base_gamma_grid, base_C_grid : sequences of float, default=None
        The base models' grids; None reuses ``gamma_grid`` / ``C_grid``.
    fraction : float, default=0.8
    exhaustive : bool, default=True
        Score every pair (the whole table is returned); False visits the pairs in the rule's
        order and stops at the first that reaches the threshold (same choice, less work).
    scored_estimator : estimator with ``rd``, ``rf``, ``gamma``, ``C`` parameters, default=None
        The model the 80% rule scores (None: the Subspace model).

    Returns
    -------
    dict
        ``baseline_gamma``, ``baseline_C``, ``baseline_map``, ``baseline_sv_fraction``,
        ``baseline_grid`` (see :func:`select_baseline`), ``threshold``, ``rd``, ``rf``,
        ``gamma`` and ``C`` (the base models' at the chosen pair), ``subspace_map`` (the
        Subspace model's CV Mean-AP there), ``scored`` ("Subspace" or the scored
        estimator's class name), ``scored_map`` (its CV Mean-AP there), ``reached`` and
        ``grid``: for every pair scored {rd, rf, gamma, C, subspace_map, mean_ap}, ``mean_ap``
        the scored model's.

    Labels with one class only in the training part of some fold are left out of the whole
    selection.
    """
    Y = _as_matrix(Y)
    folds, keep = _folds(Y, n_folds, random_state)
    Y = Y[:, keep]
    base = select_baseline(X, Y, gamma_grid=gamma_grid, C_grid=C_grid, folds=folds)
    threshold = fraction * base["mean_ap"]
    pairs = [{"rd": float(rd), "rf": float(rf)} for rd in rd_grid for rf in rf_grid]
    visit = [pairs[i] for i in sorted(range(len(pairs)), key=lambda i: (
        pairs[i]["rd"] * pairs[i]["rf"], pairs[i]["rd"]))]          # the rule's order
    grid = []
    for pair in visit:
        sub = select_base_model(
            X, Y, **pair, gamma_grid=gamma_grid if base_gamma_grid is None else base_gamma_grid,
            C_grid=C_grid if base_C_grid is None else base_C_grid, random_state=random_state,
            folds=folds)
        row = {**pair, "gamma": sub["gamma"], "C": sub["C"], "subspace_map": sub["mean_ap"],
               "mean_ap": sub["mean_ap"]}
        if scored_estimator is not None:
            setting = {**pair, "gamma": sub["gamma"], "C": sub["C"]}
            scored = _search(scored_estimator, {k: [v] for k, v in setting.items()}, X, Y,
                             folds)
            row["mean_ap"] = float(scored.cv_results_["mean_test_score"][0])
        grid.append(row)
        if not exhaustive and row["mean_ap"] >= threshold:
            break
    chosen, reached = smallest_ratios_reaching(grid, threshold)
    sv = next(r["sv_fraction"] for r in base["grid"]
              if (r["gamma"], r["C"]) == (base["gamma"], base["C"]))
    return {"baseline_gamma": base["gamma"], "baseline_C": base["C"],
            "baseline_map": base["mean_ap"], "baseline_sv_fraction": sv,
            "baseline_grid": base["grid"], "threshold": threshold,
            "rd": chosen["rd"], "rf": chosen["rf"], "gamma": chosen["gamma"], "C": chosen["C"],
            "subspace_map": chosen["subspace_map"],
            "scored": "Subspace" if scored_estimator is None else type(scored_estimator).__name__,
            "scored_map": chosen["mean_ap"], "reached": reached, "grid": grid}
