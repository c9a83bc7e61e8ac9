"""scikit-learn's estimator checks over every registered method, and mlkit's own contract."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from mlkit.registry import all_estimators

ESTIMATORS = [cls(n_estimators=5, base_learner="stump", rd=0.5, rf=1.0, random_state=0)
              for _, cls in all_estimators()]

@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name,cls", all_estimators())
def test_mlkit_contract(name, cls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    est = cls(n_estimators=4, base_learner="stump", rd=0.3, rf=0.5, random_state=1)
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X, Y) is est
    again = clone(est).set_params(**est.get_params()).fit(X, Y)
    np.testing.assert_array_equal(est.decision_function(X), again.decision_function(X))
    assert est.get_params()["random_state"] == 1           # fit does not touch parameters
