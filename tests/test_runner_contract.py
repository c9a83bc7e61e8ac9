"""The contract between the runner and an estimator (mlkit.runner.contract): its defaults for
a plain scikit-learn estimator, what every registered method that declares a member gives,
and that no other module of the runner probes an estimator."""

import ast
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import mlkit.runner
from mlkit.runner import contract
from mlkit.runner.scoring import _jsonable, _predict

from .test_common import ENTRIES, _data, _make

PROBES = {"hasattr", "getattr"}


def test_a_plain_sklearn_estimator_gets_every_default():
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    est = LogisticRegression().fit(X, y)
    assert contract.numerics_revision(LogisticRegression) == 0
    assert contract.numerics_revision(LogisticRegression, {"C": 1.0}) == 0
    assert contract.learning_family(LogisticRegression) is None
    assert contract.post_fit_params(est) == set()
    assert contract.predict_from_scores(est, est.decision_function(X)) is None
    assert contract.run_record_extras(est) == {}
    assert contract.test_record_extras(est, X, y) is None
    assert contract.staged_decision_function(est, X) is None
    assert contract.stage_predict_seconds(est, X) is None
    score, pred = _predict(est, X)                 # no predict_from_scores: its predict
    np.testing.assert_array_equal(pred, est.predict(X))
    np.testing.assert_allclose(score, est.decision_function(X))


def test_numerics_revision_for_keys_one_setting():
    class Est(LogisticRegression):
        numerics_revision = 2

        @classmethod
        def numerics_revision_for(cls, params):
            return 3 if params.get("C") == 5 else 2

    assert contract.numerics_revision(Est) == 2               # no params: the class's
    assert contract.numerics_revision(Est, {"C": 5}) == 3
    assert contract.numerics_revision(Est, {"C": 1}) == 2


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_every_declared_member_keeps_its_promise(entry):
    """predict_from_scores(decision_function(X)) is predict(X); the extras are dicts that
    survive JSON; every stage's scores have decision_function's shape;
    post_fit_params come with refit_post; numerics revisions are ints."""
    X, y, n = _data(entry.meta.get("family"))
    est = _make(entry).fit(X, y)
    cls = type(est)
    assert isinstance(contract.numerics_revision(cls), int)
    family = contract.learning_family(cls)
    assert family is None or isinstance(family, str)
    post = contract.post_fit_params(est)
    if post:
        assert callable(getattr(est, "refit_post", None)), f"{entry.name}: needs refit_post"
    score = contract.decision_function(est, X)
    labels = None if score is None else contract.predict_from_scores(est, score)
    if labels is not None:
        np.testing.assert_array_equal(labels, est.predict(X))
    json.dumps(_jsonable(contract.run_record_extras(est)))
    extras = contract.test_record_extras(est, X, y)
    if extras is not None:
        json.dumps(_jsonable(extras))
    try:
        staged = contract.staged_decision_function(est, X)
        stages = None if staged is None else list(staged)
    except ValueError:             # SparseMI keeps its stages only when asked (keep_stages)
        stages = None
    if stages:
        assert all(np.asarray(F).shape == np.shape(score) for F in stages)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.meta.get("family") == "multi-view"],
                         ids=lambda e: e.name)
def test_two_class_scores_give_the_predicted_labels(entry):
    """decision_function gives (n,) for two classes; predict_from_scores takes it as is."""
    X, y, _ = _data("multi-view")
    rows = np.flatnonzero(y < 2)
    X, y = X[rows], y[rows]
    est = _make(entry).fit(X, y)
    score = est.decision_function(X)
    labels = contract.predict_from_scores(est, score)
    if labels is not None:
        np.testing.assert_array_equal(labels, est.predict(X))


def test_no_other_runner_module_probes_an_estimator():
    """Outside contract.py, the runner's hasattr/getattr calls read only its own objects
    (a config field, an exception, a hashed value), never an estimator's member."""
    allowed = {("getattr", "method"), ("getattr", "exc"), ("getattr", "value")}
    for path in Path(mlkit.runner.__file__).parent.glob("*.py"):
        if path.name == "contract.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in PROBES:
                first = node.args[0]
                what = first.id if isinstance(first, ast.Name) else ast.dump(first)
                assert (node.func.id, what) in allowed, f"{path.name}: {ast.unparse(node)}"


class _Staged(LogisticRegression):
    """Two stages: the decision values halved, then as they are."""

    def staged_decision_function(self, X):
        F = self.decision_function(X)
        yield 0.5 * F - 1.0
        yield F


class _StagedWithLabels(_Staged):
    def predict_from_scores(self, scores):
        return self.classes_[(np.asarray(scores) > 0).astype(int)]


def test_curves_hold_label_metrics_only_through_predict_from_scores():
    """The runner's curves: score-type metrics from each stage's decision values; the
    label-type ones (accuracy) from predict_from_scores of them, and absent without it."""
    from mlkit.metrics import accuracy_score
    from mlkit.runner.fit import _stage_curves

    X = np.random.default_rng(1).normal(size=(60, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.3).astype(int)
    metrics = ["hamming_error", "accuracy"]
    for cls in (_Staged, _StagedWithLabels):
        est = cls().fit(X, y)
        curves = _stage_curves(est, est.staged_decision_function(X), y, metrics)
        stages = list(est.staged_decision_function(X))
        assert curves["hamming_error"] == [np.mean((F > 0) != (y > 0)) for F in stages]
        if cls is _Staged:
            assert set(curves) == {"hamming_error"}
        else:
            assert curves["accuracy"] == [accuracy_score(y, (F > 0).astype(int))
                                          for F in stages]
            assert curves["accuracy"][-1] == est.score(X, y)
            assert curves["accuracy"][0] != curves["accuracy"][1]
