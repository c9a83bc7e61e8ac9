"""The runner's ``labelled`` protocol: few labelled samples per class (or positives and
negatives per label), a validation part of the test part on which grids are chosen, the
rest scored; models fitted on the labelled samples only."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from mlkit._errors import MlkitError
from mlkit.config import DatasetSpec, ExperimentSpec, MethodSpec, ProtocolSpec
from mlkit.datasets._containers import MultiViewDataset
from mlkit.experiment import _fit_and_score_run, _protocol_key, make_splits, run


def _data(counts=(12, 20, 16), seed=0, multilabel=False):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(counts)), counts)
    n = len(y)
    ids = np.arange(n, dtype=float)[:, None]            # column 0 = the row's own index
    views = [np.hstack([ids, rng.normal(size=(n, 2))]), rng.normal(size=(n, 3))]
    if multilabel:
        y = (rng.random((n, 3)) < 0.4).astype(np.int8)
    return MultiViewDataset(name="toy", views=views, view_names=["a", "b"], y=y)


def _protocol(**kw):
    base = dict(split="labelled", test_size=0.5, validation_size=0.2, repeats=3, seed=0,
                n_labelled=3)
    return ProtocolSpec(**{**base, **kw})


def test_counts_exact_stratified_and_disjoint():
    data = _data()
    y = data.y
    for s in make_splits(data, _protocol()):
        train, val, test = s.train, s.validation, s.test
        # exactly n_labelled per class, from the training part only
        np.testing.assert_array_equal(np.bincount(y[train], minlength=3), [3, 3, 3])
        assert not set(train) & set(val) and not set(train) & set(test)
        assert not set(val) & set(test)
        # the test part is half of every class; the validation part 20% of it per class
        part = np.concatenate([val, test])
        np.testing.assert_array_equal(np.bincount(y[part], minlength=3), [6, 10, 8])
        np.testing.assert_array_equal(np.bincount(y[val], minlength=3),
                                      np.round(0.2 * np.array([6, 10, 8])))


def test_deterministic_from_the_seed():
    data = _data()
    a, b = make_splits(data, _protocol()), make_splits(data, _protocol())
    for x, y in zip(a, b):
        for f in ("train", "validation", "test"):
            np.testing.assert_array_equal(getattr(x, f), getattr(y, f))
    c = make_splits(data, _protocol(seed=1))
    assert any(not np.array_equal(x.train, z.train) for x, z in zip(a, c))
    # repeat r does not depend on how many repeats there are
    one = make_splits(data, _protocol(repeats=1))[0]
    np.testing.assert_array_equal(one.train, a[0].train)


def test_multilabel_positives_and_negatives_per_label():
    data = _data((30, 30), multilabel=True)
    for s in make_splits(data, _protocol(n_labelled=4)):
        Y = data.y[s.train]
        assert np.all(Y.sum(axis=0) >= 4) and np.all((1 - Y).sum(axis=0) >= 4)
        assert len(s.train) <= 2 * 4 * 3
        assert not set(s.train) & (set(s.validation) | set(s.test))
        assert len(s.validation) == round(0.2 * (len(s.validation) + len(s.test)))


def test_impossible_request_is_one_line():
    data = _data()
    with pytest.raises(MlkitError) as exc:
        make_splits(data, _protocol(n_labelled=7))     # class 0 has 6 in the training part
    msg = str(exc.value)
    assert "\n" not in msg and "n_labelled=7" in msg and "class 0" in msg
    with pytest.raises(MlkitError, match="needs n_labelled"):
        make_splits(data, ProtocolSpec(split="labelled"))


class _Spy(ClassifierMixin, BaseEstimator):
    """Predicts one class ``a`` for every sample; records the rows it was fitted on."""

    fitted_rows = []
    post_fit_params = ()

    def __init__(self, a=0, b=0):
        self.a, self.b = a, b

    def fit(self, X, y):
        _Spy.fitted_rows.append(X.views[0][:, 0].astype(int).copy())
        self.classes_ = np.unique(y)
        self.n_fit_ = getattr(self, "n_fit_", 0) + 1
        return self

    def predict(self, X):
        return np.full(len(X), self.a if self.b == 0 else (self.a + self.b) % 3)


class _PostSpy(_Spy):
    """``b`` acts only through ``refit_post``: a runner that set ``b`` without calling it
    would predict with the ``b`` of the last full fit."""

    post_fit_params = ("b",)

    def fit(self, X, y):
        super().fit(X, y)
        self.b_used_ = self.b
        return self

    def refit_post(self, X, y):
        self.b_used_ = self.b
        return self

    def predict(self, X):
        return np.full(len(X), self.a if self.b_used_ == 0 else (self.a + self.b_used_) % 3)


def _run_one(cls, grid):
    data = _data(counts=(8, 30, 14))
    split = make_splits(data, _protocol(repeats=1))[0]
    method = MethodSpec(name="cat", label="spy", grid=grid)
    _Spy.fitted_rows = []
    rec = _fit_and_score_run(data, method, split, ["accuracy"], False, cls)
    return data, split, rec


def test_choice_on_validation_fits_on_labelled_rows_only():
    data, split, rec = _run_one(_Spy, {"a": [0, 1, 2]})
    for rows in _Spy.fitted_rows:
        assert set(rows) <= set(split.train)           # never a validation or test label
    # the choice is the class most frequent in the validation part (computed here)
    want = int(np.argmax(np.bincount(data.y[split.validation], minlength=3)))
    assert rec["chosen"] == {"a": want}
    assert rec["metrics"]["accuracy"] == pytest.approx(np.mean(data.y[split.test] == want))
    assert rec["n_train"] == len(split.train) == 9
    assert rec["n_validation"] == len(split.validation)
    curve = rec["grid_curves"]["a"]
    assert curve["values"] == [0, 1, 2]
    for a, acc, val in zip(curve["values"], curve["metrics"]["accuracy"], curve["validation"]):
        assert acc == pytest.approx(np.mean(data.y[split.test] == a))
        assert val == pytest.approx(np.mean(data.y[split.validation] == a))


def test_post_fit_parameters_fit_once_per_other_setting_same_result():
    grid = {"a": [0, 1], "b": [0, 1, 2]}
    _, _, full = _run_one(_Spy, grid)
    n_full = len(_Spy.fitted_rows)
    _, _, post = _run_one(_PostSpy, grid)
    n_post = len(_Spy.fitted_rows)
    assert n_full == 6 and n_post == 2
    assert full["chosen"] == post["chosen"] and full["metrics"] == post["metrics"]
    assert full["grid_curves"] == post["grid_curves"]
    # the spy can tell: without refit_post, a new b changes nothing
    data = _data(counts=(8, 30, 14))
    X = data.inputs
    spy = _PostSpy(a=0, b=0).fit(X, data.y).set_params(b=1)
    assert set(spy.predict(X)) == {0}
    assert set(spy.refit_post(X, data.y).predict(X)) == {1}


def _nan_when_all(monkeypatch, predicted):
    """Validation accuracy is NaN whenever every prediction is one of ``predicted``."""
    import mlkit.runner.grid as E

    real = E._score

    def score(names, target, s, pred):
        out = real(names, target, s, pred)
        if pred is not None and set(np.unique(pred)) <= set(predicted):
            out = {k: float("nan") for k in out}
        return out

    monkeypatch.setattr(E, "_score", score)


def test_a_nan_validation_score_never_wins(monkeypatch):
    _nan_when_all(monkeypatch, {0})                     # the first setting scores NaN
    data, split, rec = _run_one(_Spy, {"a": [0, 1, 2]})
    val = {a: np.mean(data.y[split.validation] == a) for a in (1, 2)}
    assert rec["chosen"] == {"a": max(val, key=val.get)}
    assert np.isnan(rec["grid_curves"]["a"]["validation"][0])


def test_every_setting_nan_is_one_line_naming_method_and_dataset(monkeypatch):
    from mlkit.experiment import _fit_and_score

    _nan_when_all(monkeypatch, {0, 1, 2})
    data = _data(counts=(8, 30, 14))
    split = make_splits(data, _protocol(repeats=1))[0]
    with pytest.raises(MlkitError) as exc:
        _fit_and_score(data, MethodSpec(name="cat", label="spy", grid={"a": [0, 1]}), split,
                       ["accuracy"], False, _Spy)
    msg = str(exc.value)
    assert "\n" not in msg and "spy on toy" in msg and "NaN" in msg


@pytest.mark.parametrize("percent", [150, -5])
def test_bad_post_fit_grid_value_is_one_line_error(percent):
    from mlkit.experiment import _fit_and_score

    data = _data(counts=(8, 30, 14))
    split = make_splits(data, _protocol(repeats=1))[0]
    method = MethodSpec(name="mtfs", label="MTFS", params={"max_iter": 5},
                        grid={"percent": [50, percent]})
    with pytest.raises(MlkitError) as exc:
        _fit_and_score(data, method, split, ["accuracy"], False)
    msg = str(exc.value)
    assert "\n" not in msg and "MTFS on toy" in msg and "percent" in msg and str(percent) in msg


class _ThreadSpy(_Spy):
    """Records the BLAS/OpenMP thread counts seen inside ``fit``."""

    seen = []

    def fit(self, X, y):
        from threadpoolctl import threadpool_info

        _ThreadSpy.seen.append([p["num_threads"] for p in threadpool_info()])
        return super().fit(X, y)


def test_sequential_runs_use_one_blas_thread(tmp_path, monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    import mlkit.runner.loop as E

    if not threadpool_info():
        pytest.skip("no BLAS/OpenMP thread pool loaded")
    real = E.METHODS.get
    monkeypatch.setattr(E.METHODS, "get", lambda n: _ThreadSpy if n == "cat" else real(n))
    data = _data(counts=(8, 30, 14))
    monkeypatch.setattr(E, "load_dataset", lambda *a, **k: data)
    spec = ExperimentSpec(paper="t", artifact="a", metrics=["accuracy"],
                          datasets=[DatasetSpec(name="msrc-v1")],
                          methods=[MethodSpec(name="cat", grid={"a": [0, 1]})],
                          protocol=_protocol(repeats=2))
    _ThreadSpy.seen = []
    with threadpool_limits(limits=2):                  # outside the runs: 2 threads
        assert max(p["num_threads"] for p in threadpool_info()) == 2
        result = run(spec, tmp_path / "out", jobs=1)
        assert max(p["num_threads"] for p in threadpool_info()) == 2   # restored after
    assert result.computed == 2 and len(_ThreadSpy.seen) == 4
    assert all(n == 1 for fit in _ThreadSpy.seen for n in fit), _ThreadSpy.seen
    # threads of the "threading" backend too (the process backends limit their own runs)
    _ThreadSpy.seen = []
    with threadpool_limits(limits=2):
        result = run(spec, tmp_path / "threads", jobs=2, backend="threading")
        assert max(p["num_threads"] for p in threadpool_info()) == 2
    assert result.computed == 2 and len(_ThreadSpy.seen) == 4
    assert all(n == 1 for fit in _ThreadSpy.seen for n in fit), _ThreadSpy.seen


def test_other_protocols_keep_their_run_keys():
    # the labelled fields never enter the key of a holdout/cv/predefined run
    key = _protocol_key(ProtocolSpec(split="cv", n_folds=5))
    assert set(key) == {"split", "test_size", "n_folds", "stratify", "seed"}
    assert {"n_labelled", "validation_size"} <= set(_protocol_key(_protocol()))


def test_when_present_dataset_is_skipped_and_said(tmp_path, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "home"))
    monkeypatch.delenv("MLKIT_DATA_MIRROR", raising=False)
    spec = ExperimentSpec(paper="t", artifact="a", metrics=["accuracy"],
                          datasets=[DatasetSpec(name="nus-animal", when_present=True)],
                          methods=[MethodSpec(name="cat")], protocol=_protocol())
    result = run(spec, tmp_path / "out")
    assert "nus-animal" in result.absent and not result.records
    assert "missing" in result.absent["nus-animal"]
    spec.datasets[0].when_present = False            # never silently: it then fails
    with pytest.raises(MlkitError, match="NUS-WIDE files missing"):
        run(spec, tmp_path / "out")
