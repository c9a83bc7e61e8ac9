"""mlkit.grid_rules: the argmax and one-standard-error rules, against direct computations."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from mlkit.grid_rules import choose, refit_rule
from mlkit.resumable_search import ResumableGridSearchCV


def _results(params, scores):
    scores = np.asarray(scores, dtype=float)
    return {"params": params, **{f"split{k}_test_score": scores[:, k]
                                 for k in range(scores.shape[1])}}


def test_one_se_takes_the_fewest_xvs_within_one_standard_error_of_the_best():
    params = [{"n_xv": n, "C": c} for n in (10, 50, 500) for c in (1, 10)]
    scores = [[.70, .72, .74], [.80, .78, .79],     # n_xv 10: means .72, .79
              [.82, .80, .84], [.83, .81, .82],     # n_xv 50: .82, .82
              [.86, .80, .86], [.84, .84, .85]]     # n_xv 500: .84, .8433 (best)
    res = _results(params, scores)
    best = int(np.argmax(np.mean(scores, axis=1)))
    assert choose(res, "argmax") == best == 5
    se = np.std(scores[5], ddof=1) / np.sqrt(3)                   # 0.00333
    within = [i for i in range(6) if np.mean(scores[i]) >= np.mean(scores[5]) - se]
    assert within == [4, 5]                   # .8233 and .82 are not within .0033
    assert choose(res, "one_se") == 5         # both have 500 XVs: the better mean
    # a noisier best widens the band to the 50-XV points; the better of them wins
    scores[5] = [.90, .78, .86]
    res = _results(params, scores)
    assert choose(res, "argmax") == 5
    assert choose(res, "one_se") == 2         # n_xv 50: .82 (first of the tied means)
    assert choose(_results([{"C": 1}, {"C": 2}], [[.5, .6], [.7, .6]]), "one_se") == 1
    with pytest.raises(ValueError, match="unknown grid rule"):
        choose(res, "median")


def test_refit_rule_drives_both_grid_searches_to_the_same_choice():
    X, y = make_classification(120, random_state=0)
    grid = {"max_depth": [1, 2, 3, 6], "min_samples_leaf": [1, 5]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    tree = DecisionTreeClassifier(random_state=0)
    sk = GridSearchCV(tree, grid, cv=cv, refit=refit_rule("one_se", "max_depth")).fit(X, y)
    ours = ResumableGridSearchCV(tree, grid, cv=cv,
                                 refit=refit_rule("one_se", "max_depth")).fit(X, y)
    assert ours.best_index_ == sk.best_index_ == choose(sk.cv_results_, "one_se", "max_depth")
    assert ours.best_params_ == sk.best_params_
    plain = ResumableGridSearchCV(tree, grid, cv=cv).fit(X, y)
    assert plain.best_index_ == GridSearchCV(tree, grid, cv=cv).fit(X, y).best_index_
