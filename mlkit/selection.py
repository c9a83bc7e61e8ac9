"""Model selection on the training data, shared by every paper: cross-validated grids with
the papers' own selection rules, every setting scored on the same folds (one job per setting
and fold, through joblib)."""

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone

from .experiment import cv_folds
from .metrics import mean_average_precision_score

__all__ = ["smallest_ratios_reaching", "select_baseline", "select_base_model",
           "select_mssboost_settings"]

def smallest_ratios_reaching(grid, threshold):
    """The paper's rd/rf rule (Sec. 6.2.1, "the minimal ones that can achieve at least 80% of
    the baseline performance on average"; our reading of "minimal"): among the rows of
    ``grid`` ({rd, rf, mean_ap, ...}) whose ``mean_ap`` reaches ``threshold``, the one with
    the smallest rd * rf, then the smallest rd; when none reaches it, the best-scoring row
    (first of equals in the rule's order). Returns (row, reached)."""
    order = sorted(grid, key=lambda g: (g["rd"] * g["rf"], g["rd"]))
    ok = [g for g in order if g["mean_ap"] >= threshold]
    if ok:
        return ok[0], True
    return max(order, key=lambda g: g["mean_ap"]), False


# -- MSSBoost's settings as the paper selects them (Sec. 6.2.1) -----------------------------
def _fold_score(estimator, X, Y, train, test):
    """Mean-AP of ``estimator`` fitted on ``train`` and scored on ``test``, and the fitted
    model's support-vector fraction when it has one (else None)."""
    Y = np.asarray(Y)
    Y = Y[:, None] if Y.ndim == 1 else Y
    # a rare label may have one class only in a fold's training part: it is left out of
    # that fold's fit and Mean-AP (on data where every label has both, nothing changes)
    keep = np.ptp(Y[train], axis=0) > 0
    if not keep.any():
        raise ValueError(f"no label has both classes in the training part of a {len(train)}-"
                         "row CV fold; too few examples for this many folds")
    est = clone(estimator).fit(X[train], Y[train][:, keep])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # labels without test positives
        score = mean_average_precision_score(Y[test][:, keep],
                                             est.decision_function(X[test]))
    return score, getattr(est, "support_fraction_", None)


def _cv_grid(estimator, X, Y, settings, folds, n_jobs):
    """Mean over ``folds`` of the Mean-AP (and support fraction) of ``estimator`` with every
    parameter dict of ``settings``; one job per (setting, fold)."""
    jobs = [(i, train, test) for i in range(len(settings)) for train, test in folds]
    out = Parallel(n_jobs=n_jobs)(
        delayed(_fold_score)(clone(estimator).set_params(**settings[i]), X, Y, train, test)
        for i, train, test in jobs)
    scores = np.array([s for s, _ in out]).reshape(len(settings), len(folds))
    fracs = [f for _, f in out]
    has_frac = all(f is not None for f in fracs)
    fracs = np.array(fracs, dtype=float).reshape(len(settings), len(folds)) if has_frac else None
    rows = []
    for i, params in enumerate(settings):
        row = {**params, "mean_ap": float(scores[i].mean())}
        if has_frac:
            row["sv_fraction"] = float(fracs[i].mean())
        rows.append(row)
    return rows


def _best(rows):
    return max(rows, key=lambda r: r["mean_ap"])     # first of equals: grid order


def select_baseline(X, Y, *, gamma_grid, C_grid, n_folds=2, random_state=0, n_jobs=None,
                    baseline=None):
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
    n_jobs : int, default=None
        Processes over (setting, fold).
    baseline : estimator, default=None
        :class:`~mlkit.methods.BaselineSVM` when None.

    Returns
    -------
    dict
        ``gamma``, ``C``, ``mean_ap`` (of the best setting) and ``grid``: for every setting
        {gamma, C, mean_ap, sv_fraction}, the Baseline's mean support-vector fraction over
        labels and folds (near 1: the kernel is too flat or too narrow for a sparse SVM).
    """
    from .methods import BaselineSVM

    est = BaselineSVM() if baseline is None else baseline
    settings = [{"gamma": float(g), "C": float(c)} for g in gamma_grid for c in C_grid]
    rows = _cv_grid(est, X, Y, settings, cv_folds(len(Y), n_folds, random_state), n_jobs)
    best = _best(rows)
    return {"gamma": best["gamma"], "C": best["C"], "mean_ap": best["mean_ap"], "grid": rows}


def select_base_model(X, Y, *, rd, rf, gamma_grid, C_grid, n_folds=2, random_state=0,
                      n_jobs=None, estimator=None):
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
    from .methods import Subspace

    est = Subspace(random_state=random_state) if estimator is None else estimator
    est = clone(est).set_params(rd=rd, rf=rf)
    settings = [{"gamma": float(g), "C": float(c)} for g in gamma_grid for c in C_grid]
    rows = _cv_grid(est, X, Y, settings, cv_folds(len(Y), n_folds, random_state), n_jobs)
    best = _best(rows)
    return {"gamma": best["gamma"], "C": best["C"], "mean_ap": best["mean_ap"], "grid": rows}


def select_mssboost_settings(X, Y, *, gamma_grid, C_grid, rd_grid, rf_grid,
                             base_gamma_grid=None, base_C_grid=None, fraction=0.8, n_folds=2,
                             random_state=0, n_jobs=None, exhaustive=True,
                             scored_estimator=None):
    """Every setting of MSSBoost's experiments chosen as Sec. 6.2.1 of Yan et al. (2007) says,
    all by ``n_folds``-fold CV on (X, Y) with the same folds:

    1. the Baseline's rho and C (:func:`select_baseline`) and its CV Mean-AP;
    2. for every (rd, rf) of the grids, the base models' rho and C by CV of the Subspace
       model at (rd, rf) (:func:`select_base_model`);
    3. rd, rf: among the pairs whose scored model reaches ``fraction`` of the Baseline's
       Mean-AP, the smallest rd * rf, then the smallest rd ("the minimal ones that can
       achieve at least 80% of the baseline performance on average"); when none reaches it,
       the best-scoring pair (``reached`` is then False). The scored model is the Subspace
       model itself (``scored_estimator=None``) or ``scored_estimator`` (e.g. the MSSBoost
       ensemble) with the pair's rd, rf and the base models' rho and C of step 2. The paper
       does not say which model it scored; its Table 2 puts Subspace at 71% (TREC) and 79%
       (Consumer) of the Baseline at the ratios it chose, below 80%, and MSSBoost at 102% and
       101%, so its rule cannot have scored Subspace.

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
    """
    base = select_baseline(X, Y, gamma_grid=gamma_grid, C_grid=C_grid, n_folds=n_folds,
                           random_state=random_state, n_jobs=n_jobs)
    threshold = fraction * base["mean_ap"]
    pairs = sorted(((float(rd), float(rf)) for rd in rd_grid for rf in rf_grid),
                   key=lambda p: (p[0] * p[1], p[0]))
    folds = cv_folds(len(Y), n_folds, random_state)
    grid = []
    for rd, rf in pairs:
        sub = select_base_model(X, Y, rd=rd, rf=rf,
                                gamma_grid=gamma_grid if base_gamma_grid is None else base_gamma_grid,
                                C_grid=C_grid if base_C_grid is None else base_C_grid,
                                n_folds=n_folds, random_state=random_state, n_jobs=n_jobs)
        row = {"rd": rd, "rf": rf, "gamma": sub["gamma"], "C": sub["C"],
               "subspace_map": sub["mean_ap"], "mean_ap": sub["mean_ap"]}
        if scored_estimator is not None:
            setting = {"rd": rd, "rf": rf, "gamma": sub["gamma"], "C": sub["C"]}
            row["mean_ap"] = _cv_grid(scored_estimator, X, Y, [setting], folds,
                                      n_jobs)[0]["mean_ap"]
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
