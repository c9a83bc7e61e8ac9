"""Rules that choose a grid point from a grid search's fold scores.

``argmax`` is scikit-learn's (the best mean CV score, the first such point on ties). The
one-standard-error rule trades accuracy for sparsity: of the points whose mean score is
within one standard error of the best (the best point's fold scores' standard deviation
over sqrt(folds), as in Breiman et al.'s CART and Hastie, Tibshirani & Friedman, Sec. 7.10),
the one with the fewest of a size parameter (e.g. N_XV, the expansion vectors of the MI
classifiers), the best mean among those. Either can be given to ``GridSearchCV`` as its
``refit`` callable (:func:`refit_rule`)."""

import numpy as np

__all__ = ["RULES", "choose", "fold_scores", "refit_rule"]

#: the rules a config may name (``grid_rule``, ``grid_also``)
RULES = ("argmax", "one_se")


def fold_scores(cv_results):
    """The fold scores of every grid point, shape (grid points, folds), from
    ``split<k>_test_score`` in fold order."""
    keys = sorted((k for k in cv_results if k.startswith("split") and k.endswith("_test_score")),
                  key=lambda k: int(k[len("split"):-len("_test_score")]))
    return np.column_stack([np.asarray(cv_results[k], dtype=float) for k in keys])


def choose(cv_results, rule, size_param="n_xv"):
    """Index of the grid point ``rule`` chooses from ``cv_results`` (``GridSearchCV``'s, or
    any mapping with ``params`` and ``split<k>_test_score``).

    Parameters
    ----------
    cv_results : dict
    rule : {"argmax", "one_se"}
    size_param : str, default="n_xv"
        The parameter "one_se" minimises; without it in the grid "one_se" is "argmax".

    Returns
    -------
    int
    """
    if rule not in RULES:
        raise ValueError(f"unknown grid rule {rule!r}; use one of {RULES}")
    scores = fold_scores(cv_results)
    means = scores.mean(axis=1)
    best = int(np.argmax(means))                  # the first best: scikit-learn's choice
    params = list(cv_results["params"])
    if rule == "argmax" or size_param not in params[best]:
        return best
    se = scores[best].std(ddof=1) / np.sqrt(scores.shape[1]) if scores.shape[1] > 1 else 0.0
    near = np.flatnonzero(means >= means[best] - se)
    smallest = min(params[i][size_param] for i in near)
    fewest = [i for i in near if params[i][size_param] == smallest]
    return int(fewest[int(np.argmax(means[fewest]))])


def refit_rule(rule, size_param="n_xv"):
    """``rule`` as a ``GridSearchCV(refit=...)`` callable (cv_results -> best index)."""
    def refit(cv_results):
        return choose(cv_results, rule, size_param)
    refit.__name__ = f"refit_{rule}"
    return refit
