"""Model selection on the training data, shared by every paper: cross-validated grids with
the papers' own selection rules, built on scikit-learn's ``GridSearchCV``."""

import numpy as np
from sklearn.base import clone
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from .metrics import mean_average_precision_score

__all__ = ["mean_ap_scorer", "smallest_ratios_reaching", "select_ratios", "select_gamma"]

#: Mean-AP of ``decision_function`` as a scikit-learn scorer
mean_ap_scorer = make_scorer(mean_average_precision_score, response_method="decision_function")


def smallest_ratios_reaching(threshold):
    """A ``GridSearchCV`` refit rule: among the (rd, rf) pairs whose mean CV score reaches
    ``threshold``, the one with the smallest rd * rf, then the smallest rd; when none reaches
    it, the best-scoring pair (spec-mssboost "Protocol": our reading of "the minimal ones")."""

    def rule(cv_results):
        rd = np.array(cv_results["param_rd"], dtype=float)
        rf = np.array(cv_results["param_rf"], dtype=float)
        score = np.asarray(cv_results["mean_test_score"])
        ok = np.flatnonzero(score >= threshold)
        if ok.size == 0:
            return int(np.argmax(score))
        order = np.lexsort((rd[ok], rd[ok] * rf[ok]))
        return int(ok[order[0]])

    return rule


def select_ratios(estimator, baseline, X, Y, *, rd_grid, rf_grid, fraction=0.8, n_folds=2,
                  random_state=0, n_jobs=None):
    """The paper's rd/rf rule (Sec. 6.2.1 of Yan et al. 2007): learn the baseline with all
    data and features, then pick the minimal sampling ratios whose ``estimator`` reaches
    ``fraction`` of the baseline's Mean-AP, all by ``n_folds``-fold CV on (X, Y).

    Returns
    -------
    dict
        ``rd``, ``rf``, ``baseline_map``, ``threshold``, ``reached`` (bool) and ``grid``: a
        list of {rd, rf, mean_ap} for every pair.
    """
    cv = KFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    base = cross_val_score(clone(baseline), X, Y, cv=cv, scoring=mean_ap_scorer,
                           n_jobs=n_jobs, error_score="raise").mean()
    threshold = fraction * base
    search = GridSearchCV(clone(estimator), {"rd": list(rd_grid), "rf": list(rf_grid)},
                          scoring=mean_ap_scorer, cv=cv, n_jobs=n_jobs,
                          refit=smallest_ratios_reaching(threshold), error_score="raise")
    search.fit(X, Y)
    res = search.cv_results_
    best = search.best_index_
    return {
        "rd": float(res["param_rd"][best]), "rf": float(res["param_rf"][best]),
        "baseline_map": float(base), "threshold": float(threshold),
        "reached": bool(res["mean_test_score"][best] >= threshold),
        "grid": [{"rd": float(a), "rf": float(b), "mean_ap": float(s)} for a, b, s in
                 zip(res["param_rd"], res["param_rf"], res["mean_test_score"])],
    }


def select_gamma(estimator, X, Y, *, grid, n_folds=2, random_state=0, n_jobs=None):
    """The RBF width by ``n_folds``-fold CV Mean-AP of ``estimator`` over ``grid`` (the
    paper's "rho is set to 0.05 based on two fold cross validation", Sec. 6.2.1).

    Returns
    -------
    dict
        ``gamma`` (the best) and ``grid``: a list of {gamma, mean_ap}.
    """
    cv = KFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    search = GridSearchCV(clone(estimator), {"gamma": list(grid)}, scoring=mean_ap_scorer,
                          cv=cv, n_jobs=n_jobs, refit=False, error_score="raise")
    search.fit(X, Y)
    res = search.cv_results_
    best = int(np.argmax(res["mean_test_score"]))
    return {"gamma": float(res["param_gamma"][best]),
            "grid": [{"gamma": float(g), "mean_ap": float(s)}
                     for g, s in zip(res["param_gamma"], res["mean_test_score"])]}
