"""The common contract of every registered method, whatever its input kind, driven by the
registry (a new method is checked the moment it registers itself):

* matrix input (the estimators whose scikit-learn tags say ``two_d_array``: multi-label, and
  HFSS, which takes one matrix as one subspace): scikit-learn's ``check_estimator``; the
  others declare their input kind (a list of bags; several views) through their tags;
* every kind: clone, get/set_params, fit returns self and leaves the parameters alone,
  predict/decision_function shapes, the not-fitted error, pickling, and the same numbers
  from the same ``random_state``.

A method may declare ``_quick_params`` (a dict of constructor parameters) that make these
fits fast; nothing here lists methods by name.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

import mlkit.methods
from mlkit.datasets import Views
from mlkit.registry import METHODS

ENTRIES = METHODS.entries()
FAMILIES = {"multilabel", "multi-instance", "multi-view"}


def _make(entry):
    cls = entry.obj
    return cls(**dict(getattr(cls, "_quick_params", {})))


def _data(family):
    """(X, y, n) of a small problem of the family's input kind."""
    rng = np.random.default_rng(0)
    if family == "multilabel":
        X = rng.normal(size=(120, 3))
        return X, np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int), 120
    if family == "multi-instance":
        y = np.repeat([0, 1], 15)
        bags = []
        for label in y:
            bag = rng.normal(size=(int(rng.integers(2, 5)), 3))
            if label:
                bag[0] += 2.5                       # one witness instance per positive bag
            bags.append(bag)
        return bags, y, 30
    y = np.repeat([0, 1, 2], 20)
    centres = rng.normal(scale=3.0, size=(3, 7))
    X = centres[y] + rng.normal(size=(60, 7))
    return Views([X[:, :4], X[:, 4:]], ["a", "b"]), y, 60


def test_every_registered_method_has_a_known_family():
    unknown = {e.name: e.meta.get("family") for e in ENTRIES
               if e.meta.get("family") not in FAMILIES}
    assert not unknown, f"methods of no known input kind (family=...): {unknown}"


def test_every_registered_method_is_exported_from_mlkit_methods():
    builtin = {e.obj.__name__: e.obj for e in ENTRIES if e.obj.__module__.startswith("mlkit.")}
    for name, cls in builtin.items():
        assert getattr(mlkit.methods, name) is cls
    exported = {n for n in mlkit.methods.__all__
                if isinstance(getattr(mlkit.methods, n), type)
                and hasattr(getattr(mlkit.methods, n), "fit")}
    assert exported == set(builtin), "mlkit.methods.__all__ is out of step with the registry"


def test_the_input_kind_is_declared_in_the_tags():
    for entry in ENTRIES:
        est, family = _make(entry), entry.meta.get("family")
        tags = get_tags(est).input_tags
        if family == "multi-instance":                   # a list of bags
            assert not tags.two_d_array and tags.sparse, entry.name
        elif family == "multilabel":
            assert tags.two_d_array and tags.sparse, entry.name
        else:                                            # several views
            views, y, _ = _data(family)
            matrix = np.hstack(views.views)
            split = clone(est).set_params(view_columns=views.dims)
            assert get_tags(split).input_tags.two_d_array, entry.name
            assert split.fit(matrix, y).view_dims_ == views.dims
            if tags.two_d_array:                         # a matrix without a split: one view
                assert clone(est).fit(matrix, y).view_dims_ == [matrix.shape[1]]
            else:                                        # ... or an error naming the split
                with pytest.raises(ValueError, match="view_columns"):
                    clone(est).fit(matrix, y)


@parametrize_with_checks(
    [_make(e) for e in ENTRIES if get_tags(_make(e)).input_tags.two_d_array],
    # a method may name the checks that cannot hold for it, each with the reason
    expected_failed_checks=lambda est: dict(getattr(est, "_expected_failed_checks", {})))
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_mlkit_contract(entry):
    X, y, n = _data(entry.meta.get("family"))
    est = _make(entry)
    params = est.get_params()
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X, y) is est
    assert est.get_params() == params                      # fit does not touch parameters
    pred = est.predict(X)
    assert len(pred) == n
    if "random_state" in params:
        est.set_params(random_state=3).fit(X, y)
        again = clone(est).fit(X, y)
        np.testing.assert_array_equal(est.predict(X), again.predict(X))
    score = est.decision_function(X) if hasattr(est, "decision_function") else None
    if score is not None:
        assert np.asarray(score).shape[0] == n
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))
    if score is not None:
        np.testing.assert_allclose(restored.decision_function(X), score)
    extras = est.run_record_extras() if hasattr(est, "run_record_extras") else {}
    assert isinstance(extras, dict)
    assert isinstance(getattr(type(est), "numerics_revision", None), int), \
        f"{entry.name}: declare an int numerics_revision (bump it when numbers change)"
