"""The one grid search of the runner (mlkit.runner.grid): the validation-part search is the
resumable ``GridSearchCV``'s cell loop on one predefined fold."""

from types import SimpleNamespace

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, PredefinedSplit

from mlkit.runner.grid import ResumableGridSearchCV, validation_search


def _parts():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 4))
    y = (X[:, 0] + 0.8 * rng.normal(size=90) > 0).astype(int)
    rows = {"train": np.arange(0, 30), "validation": np.arange(30, 60),
            "test": np.arange(60, 90)}
    return X, y, {k: SimpleNamespace(inputs=X[r], target=y[r]) for k, r in rows.items()}


def test_validation_search_scores_as_gridsearchcv_on_a_predefined_split():
    """Every setting's validation accuracy is GridSearchCV's on PredefinedSplit(train ->
    -1, validation -> 0), the choice is its best, and the model is fitted on train only."""
    X, y, part = _parts()
    grid = {"C": [1e-3, 1e-2, 0.1, 1.0, 10.0]}
    est, chosen, val, _, curves = validation_search(
        LogisticRegression(), grid, part["train"], part["validation"], part["test"],
        ["accuracy"], "accuracy")
    fold = PredefinedSplit(np.r_[np.full(30, -1), np.zeros(30, int)])
    for search in (GridSearchCV(LogisticRegression(), grid, cv=fold, scoring="accuracy"),
                   ResumableGridSearchCV(LogisticRegression(), grid, cv=fold,
                                         scoring="accuracy")):
        search.fit(X[:60], y[:60])
        np.testing.assert_array_equal(curves["C"]["validation"],
                                      search.cv_results_["split0_test_score"])
        assert chosen == search.best_params_ and val == search.best_score_
    alone = LogisticRegression(**chosen).fit(part["train"].inputs, part["train"].target)
    np.testing.assert_array_equal(est.coef_, alone.coef_)       # fitted on train only
    test_acc = [np.mean(LogisticRegression(C=c).fit(X[:30], y[:30]).predict(X[60:]) == y[60:])
                for c in grid["C"]]
    np.testing.assert_allclose(curves["C"]["metrics"]["accuracy"], test_acc)
