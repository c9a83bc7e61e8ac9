"""The estimators' public API as a user meets it: imports, the input forms of the multi-view
estimators inside scikit-learn's model selection, probabilities, and the errors for training
data an estimator cannot fit."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mlkit.datasets import Views
from mlkit.methods import (BSF, CAT, HFSS, LM3FE, LM3FS, LM3FT, MILES, MISVM, MSSBoost, MTFS,
                           MTFT, RFS, RFT, RS, RSVM, SSMVFS, SSMVFT, TMFS, HFSSOneShotSVM,
                           MIKernel, NSBoost, RSBag, SparseMI, TrainingDataError, miSVM)
from mlkit.methods._validation import check_view_columns
from mlkit.registry import METHODS

MULTI_VIEW = [e for e in METHODS.entries() if e.meta.get("family") == "multi-view"]
CV = StratifiedKFold(3, shuffle=True, random_state=0)


def _make(cls, **params):
    """A fast, seeded instance (the common tests' ``_quick_params``)."""
    est = cls(**{**getattr(cls, "_quick_params", {}), **params})
    if "random_state" in est.get_params() and "random_state" not in params:
        est.set_params(random_state=0)
    return est


def _three_classes(n_per_class=20, d=(4, 3), seed=0):
    """Three separable classes; the columns of view v are a contiguous block."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n_per_class)
    X = 3.0 * rng.normal(size=(3, sum(d)))[y] + rng.normal(size=(len(y), sum(d)))
    return X, y


def _one_line(exc):
    text = str(exc.value)
    assert "\n" not in text, text
    return text


# -- imports ---------------------------------------------------------------------------------
def test_the_estimators_import_from_mlkit_methods():
    classes = [MSSBoost, NSBoost, RSBag, SparseMI, MIKernel, MILES, miSVM, MISVM, RS, RSVM,
               HFSS, HFSSOneShotSVM, LM3FE, LM3FS, LM3FT, BSF, CAT, MTFS, MTFT, RFS, RFT,
               SSMVFS, SSMVFT, TMFS]
    assert all(hasattr(c, "fit") for c in classes)
    assert issubclass(TrainingDataError, ValueError)


def test_importing_mlkit_methods_imports_no_estimator_module():
    code = ("import sys, mlkit.methods; "
            "print(sorted(m for m in sys.modules if m.startswith('mlkit.methods.')), "
            "'sklearn.svm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[] False"


# -- multi-view input forms ------------------------------------------------------------------
@pytest.mark.parametrize("entry", MULTI_VIEW, ids=[e.name for e in MULTI_VIEW])
def test_cross_val_score_gives_the_same_scores_for_every_input_form(entry):
    X, y = _three_classes()
    names = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    views = Views([np.ascontiguousarray(X[:, :4]), np.ascontiguousarray(X[:, 4:])],
                  ["a", "b"])
    est = _make(entry.obj)
    by_views = cross_val_score(est, views, y, cv=CV)
    by_counts = cross_val_score(clone(est).set_params(view_columns=[4, 3]), X, y, cv=CV)
    by_names = cross_val_score(
        clone(est).set_params(view_columns={"a": names[:4], "b": names[4:]}), frame, y,
        cv=CV)
    np.testing.assert_array_equal(by_views, by_counts)
    np.testing.assert_array_equal(by_views, by_names)
    assert by_views.mean() > 0.45            # above chance (1/3) on three separated classes


def test_grid_search_and_pipeline_with_a_declared_split():
    X, y = _three_classes(seed=1)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(7)])
    # the split itself is a parameter: GridSearchCV sets it like any other
    search = GridSearchCV(LM3FS(max_iter=3, sub_max_iter=20, random_state=0),
                          {"view_columns": [[4, 3], [1, 6]], "percent": [50, 100]},
                          cv=CV).fit(X, y)
    assert search.best_params_["view_columns"] in ([4, 3], [1, 6])
    assert search.best_estimator_.view_dims_ == list(search.best_params_["view_columns"])
    # a scaler keeping the DataFrame's columns, then views chosen by column name
    pipe = make_pipeline(StandardScaler().set_output(transform="pandas"),
                         HFSS(n_rounds=5, random_state=0,
                              view_columns={"first": ["f0", "f1", "f2", "f3"],
                                            "rest": slice(4, 7)}))
    grid = GridSearchCV(pipe, {"hfss__C": [0.1, 1.0]}, cv=CV).fit(frame, y)
    model = grid.best_estimator_[-1]
    assert model.view_names_ == ["first", "rest"] and model.view_dims_ == [4, 3]
    assert list(model.feature_names_in_) == list(frame.columns)
    assert grid.score(frame, y) > 0.8
    # several views through a pipeline: Views is indexed by rows like a matrix
    scores = cross_val_score(make_pipeline(CAT()), Views([X[:, :4], X[:, 4:]]), y,
                             cv=KFold(3, shuffle=True, random_state=0))
    assert scores.mean() > 0.8


def test_one_matrix_without_a_split_is_an_error_naming_view_columns():
    X, y = _three_classes()
    for cls in (LM3FE, LM3FS, CAT, TMFS):
        with pytest.raises(ValueError) as exc:
            _make(cls).fit(X, y)
        text = _one_line(exc)
        assert "view_columns" in text and "groups" not in text
    with pytest.raises(ValueError, match="already several views"):
        CAT(view_columns=[4, 3]).fit([X[:, :4], X[:, 4:]], y)
    # HFSS reads a matrix without a split as one subspace
    assert HFSS(n_rounds=3, random_state=0).fit(X, y).view_dims_ == [7]


def test_a_list_of_rows_is_one_matrix_and_a_list_of_matrices_is_views():
    X, y = _three_classes()
    a = HFSS(n_rounds=3, random_state=0).fit(X, y)
    b = HFSS(n_rounds=3, random_state=0).fit(X.tolist(), y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X.tolist()))
    c = HFSS(n_rounds=3, random_state=0).fit([X[:, :4], X[:, 4:]], y)
    assert b.view_dims_ == [7] and c.view_dims_ == [4, 3]


def test_predicting_checks_the_columns_seen_in_fit():
    X, y = _three_classes()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(7)])
    with pytest.raises(ValueError, match="X has 6 features, but CAT is expecting 7"):
        CAT(view_columns=[4, 3]).fit(X, y).predict(X[:, :6])
    est = CAT(view_columns=[4, 3]).fit(frame, y)
    np.testing.assert_array_equal(est.predict(frame), CAT().fit(
        Views([X[:, :4], X[:, 4:]]), y).predict(Views([X[:, :4], X[:, 4:]])))
    with pytest.raises(ValueError, match="feature names"):
        est.predict(frame.rename(columns={"f0": "other"}))
    with pytest.raises(ValueError, match="already several views"):
        est.predict(Views([X[:, :4], X[:, 4:]]))
    with pytest.raises(ValueError, match=r"fitted on views of dimensions \[4, 3\]"):
        CAT().fit(Views([X[:, :4], X[:, 4:]]), y).predict(Views([X[:, :3], X[:, 3:]]))


def test_view_columns_forms_and_their_errors():
    X = np.arange(20.0).reshape(2, 10)
    est = CAT()
    by_counts = check_view_columns(X, [3, 7], est)
    assert by_counts.dims == [3, 7] and by_counts.names == ["view 1", "view 2"]
    np.testing.assert_array_equal(by_counts.views[1], X[:, 3:])
    picked = check_view_columns(X, {"odd": slice(1, 10, 2), "two": [0, 4]}, est)
    assert picked.names == ["odd", "two"] and picked.dims == [5, 2]
    np.testing.assert_array_equal(picked.views[1], X[:, [0, 4]])
    named = check_view_columns(X, {"v": ["c2", "c9"]}, est, [f"c{j}" for j in range(10)])
    np.testing.assert_array_equal(named.views[0], X[:, [2, 9]])
    for spec, match in [([3, 6], "add up to X's columns"),
                        ([3, slice(3, 10)], "mixes column counts"),
                        ([[0, 1], [1, 2]], "shares columns"),
                        ([[0, 12]], "outside 0..9"),
                        ([["c1"]], "no column names"),
                        ({}, "empty"),
                        ([slice(5, 5)], "selects no columns")]:
        with pytest.raises(ValueError, match=match):
            check_view_columns(X, spec, est)
    with pytest.raises(ValueError, match="does not have"):
        check_view_columns(X, [["nope"]], est, [f"c{j}" for j in range(10)])


def test_views_of_dataframes_are_indexed_by_position():
    frame = pd.DataFrame(np.arange(12.0).reshape(4, 3), index=[10, 11, 12, 13])
    v = Views([frame.iloc[:, :1], frame.iloc[:, 1:]])
    np.testing.assert_array_equal(np.asarray(v[[0, 3]].views[1]), [[1.0, 2.0], [10.0, 11.0]])
    assert v[np.array([True, False, False, True])].shape == (2, 3)


def test_multi_instance_estimators_take_a_list_of_bags_in_grid_search():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 15)
    bags = [rng.normal(size=(3, 2)) + 2.0 * label for label in y]
    search = GridSearchCV(MIKernel(), {"C": [0.1, 10.0]}, cv=CV).fit(bags, y)
    assert search.score(bags, y) > 0.9


# -- probabilities ---------------------------------------------------------------------------
def _multilabel(seed=0, n=240):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + 0.5 * X[:, 0] > 0.3, X[:, 2] > 0.8])
    return X, Y.astype(int)


@pytest.mark.parametrize("cls", [MSSBoost, NSBoost])
def test_predict_proba_is_the_sigmoid_of_the_additive_score(cls):
    X, Y = _multilabel()
    model = cls(n_estimators=8, base_learner="stump", rd=0.5, rf=0.5, random_state=0).fit(X, Y)
    P = model.predict_proba(X)
    # F_l(x) = sum_t alpha_l^t h_t(x), rebuilt from the fitted base models
    H = np.column_stack([h.predict(X) for h in model.estimators_])
    F = H @ model.alphas_ + model.init_score_
    np.testing.assert_allclose(model.decision_function(X), F, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(P, 1.0 / (1.0 + np.exp(-F)), rtol=1e-12, atol=0)
    assert P.shape == Y.shape and np.all((P >= 0) & (P <= 1))
    np.testing.assert_array_equal(model.predict(X), (P > 0.5).astype(int))
    # the probabilities are the model whose negative log-likelihood boosting minimised
    # (the joint logistic loss of Eqn 1, after the last round)
    nll = -np.sum(np.log(np.where(Y == 1, P, 1.0 - P)))
    assert nll == pytest.approx(model.train_loss_[-1], rel=1e-10)
    # -1/+1 labels: the same probabilities, predictions in the same encoding
    pm = clone(model).fit(X, 2 * Y - 1)
    np.testing.assert_allclose(pm.predict_proba(X), P, rtol=1e-12)
    np.testing.assert_array_equal(pm.predict(X), np.where(P > 0.5, 1, -1))


def test_predict_proba_of_one_binary_label_has_a_column_per_class():
    X, Y = _multilabel(seed=1)
    y = np.where(Y[:, 0] == 1, "yes", "no")
    model = MSSBoost(n_estimators=6, base_learner="stump", rd=0.5, rf=0.5,
                     random_state=0).fit(X, y)
    P = model.predict_proba(X)
    F = model.decision_function(X)
    assert P.shape == (len(y), 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(P[:, 1], 1.0 / (1.0 + np.exp(-F)), rtol=1e-12)
    np.testing.assert_array_equal(model.classes_[P.argmax(axis=1)], model.predict(X))


def test_bagging_defines_no_probabilities():
    assert not hasattr(RSBag(), "predict_proba")


# -- training data an estimator cannot fit ---------------------------------------------------
def _one_class_data(family):
    rng = np.random.default_rng(0)
    if family == "multilabel":
        X = rng.normal(size=(30, 3))
        return X, np.column_stack([X[:, 0] > 0, np.zeros(30, bool)]).astype(int)
    if family == "multi-instance":
        return [rng.normal(size=(2, 3)) for _ in range(10)], np.ones(10, int)
    X = rng.normal(size=(30, 5))
    return Views([X[:, :2], X[:, 2:]]), np.full(30, 7)


ENTRIES = METHODS.entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_one_class_is_a_training_data_error(entry):
    X, y = _one_class_data(entry.meta["family"])
    with pytest.raises(TrainingDataError) as exc:
        _make(entry.obj).fit(X, y)
    text = _one_line(exc)
    assert "one class" in text and entry.obj.__name__ in text, text
    assert "np.int64" not in text


def test_hfss_on_too_few_samples_says_what_it_needs():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(TrainingDataError) as exc:          # was "All-NaN slice encountered"
        HFSS().fit(X, [0, 1])
    assert "at least 2" in _one_line(exc)
    X, y = _three_classes()
    y = y.copy()
    y[0] = 9                                               # a class with one sample
    with pytest.raises(TrainingDataError, match=r"class 9 has 1 training sample"):
        HFSS(n_rounds=3).fit(X, y)
    # the one-shot SVM needs no out-of-bag samples: two samples are enough
    assert HFSSOneShotSVM().fit(np.array([[0.0, 1.0], [1.0, 0.0]]), [0, 1]).n_iter_ >= 1


def test_hfss_without_any_out_of_bag_sample_says_so():
    X = np.array([[0.0], [0.2], [1.0], [1.2]])
    y = np.array([0, 0, 1, 1])
    outcomes = []
    for seed in range(60):          # one round of 4 draws: about 1 in 11 draws every sample
        try:
            est = HFSS(n_rounds=1, random_state=seed).fit(X, y)
        except TrainingDataError as exc:
            assert "out of bag" in str(exc) and "n_rounds" in str(exc)
            outcomes.append("no OOB")
        else:
            assert np.isfinite(est.oob_score_)
            outcomes.append("fitted")
    assert "no OOB" in outcomes and "fitted" in outcomes
