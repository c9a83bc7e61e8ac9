"""scikit-learn's estimator checks over every registered method, and mlkit's own contract."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from mlkit.registry import all_estimators

#: small, fast settings for the common checks, by registered name
SETTINGS = {
    "rsbag": dict(n_estimators=5, base_learner="stump", rd=0.5, rf=1.0, random_state=0),
    "nsboost": dict(n_estimators=5, base_learner="stump", rd=0.5, rf=1.0, random_state=0),
    "mssboost": dict(n_estimators=5, base_learner="stump", rd=0.5, rf=1.0, random_state=0),
    "subspace": dict(base_learner="stump", rd=0.5, rf=1.0, random_state=0),
    "baseline-svm": dict(gamma=0.5),
    "bagging-svm": dict(n_estimators=3, gamma=0.5, random_state=0),
}
MULTILABEL = [(name, cls) for name, cls in all_estimators() if name in SETTINGS]
ESTIMATORS = [cls(**SETTINGS[name]) for name, cls in MULTILABEL]


def test_every_registered_estimator_is_checked():
    from mlkit.registry import METHODS

    families = {e.name: e.meta.get("family") for e in METHODS.entries()}
    assert {n for n, f in families.items() if f == "multilabel"} == set(SETTINGS)

@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name,cls", MULTILABEL)
def test_mlkit_contract(name, cls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    est = cls(**SETTINGS[name])
    params = est.get_params()
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X, Y) is est
    again = clone(est).set_params(**est.get_params()).fit(X, Y)
    np.testing.assert_array_equal(est.decision_function(X), again.decision_function(X))
    assert est.get_params() == params                      # fit does not touch parameters
    assert est.decision_function(X).shape == (120, 2)
