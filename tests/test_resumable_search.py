"""The resumable grid search: GridSearchCV's numbers to the bit, and an interrupted search
fits only the folds it had not finished."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_classification
from sklearn.metrics import accuracy_score, balanced_accuracy_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.svm import SVC

from mlkit.experiment import load_records
from mlkit.resumable_search import ResumableGridSearchCV

from .conftest import CONFIGS

FIG4 = CONFIGS / "mssboost" / "fig4.yaml"
GRID = {"C": [0.1, 1.0, 10.0], "gamma": [0.01, 0.1, 1.0]}
SCORER = make_scorer(accuracy_score)


@pytest.fixture
def data():
    return make_classification(n_samples=90, n_features=6, random_state=0)


def _searches(checkpoint, **kw):
    cv = KFold(3, shuffle=True, random_state=4)
    plain = GridSearchCV(SVC(), GRID, cv=cv, scoring=SCORER, error_score="raise")
    ours = ResumableGridSearchCV(SVC(), GRID, cv=cv, scoring=SCORER, checkpoint=checkpoint,
                                 **kw)
    return plain, ours


def _same(plain, ours, X):
    assert ours.best_index_ == plain.best_index_
    assert ours.best_params_ == plain.best_params_
    np.testing.assert_equal(ours.best_score_, plain.best_score_)        # NaN == NaN
    for name in ["mean_test_score", "std_test_score", "rank_test_score",
                 "split0_test_score", "split1_test_score", "split2_test_score"]:
        np.testing.assert_array_equal(ours.cv_results_[name], plain.cv_results_[name])
    assert list(ours.cv_results_["params"]) == list(plain.cv_results_["params"])
    np.testing.assert_array_equal(ours.decision_function(X), plain.decision_function(X))
    np.testing.assert_array_equal(ours.predict(X), plain.predict(X))


def test_its_numbers_are_gridsearchcvs_fresh_and_resumed(tmp_path, data):
    X, y = data
    ckpt = tmp_path / "run.cv-checkpoint"
    plain, ours = _searches(ckpt)
    plain.fit(X, y)
    ours.fit(X, y)
    assert ours.n_resumed_ == 0
    _same(plain, ours, X)
    stored = json.loads(ckpt.read_text())
    assert len(stored["cells"]) == 9 * 3
    resumed = _searches(ckpt)[1].fit(X, y)            # everything read back, nothing fitted
    assert resumed.n_resumed_ == 27
    assert resumed.resumed_fit_s_ == pytest.approx(
        sum(c["fit_s"] for c in stored["cells"].values()))
    _same(plain, resumed, X)


def test_ties_go_to_the_first_candidate_as_in_gridsearchcv(tmp_path, data):
    X, y = data
    grid = {"C": [1.0, 1.0 + 1e-12, 1.0 + 2e-12], "gamma": [0.1]}   # equal scores
    cv = KFold(3, shuffle=True, random_state=0)
    plain = GridSearchCV(SVC(), grid, cv=cv, scoring=SCORER).fit(X, y)
    ours = ResumableGridSearchCV(SVC(), grid, cv=cv, scoring=SCORER,
                                 checkpoint=tmp_path / "c").fit(X, y)
    assert len(set(plain.cv_results_["mean_test_score"])) == 1
    assert ours.best_index_ == plain.best_index_ == 0
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"], [1, 1, 1])


class _Interrupted(Exception):
    pass


class _Counting(ClassifierMixin, BaseEstimator):
    """SVC that counts its fits in the file ``counter`` and fails at the fit whose number
    the file ``fail_at`` holds (files: the same parameters before and after the failure)."""

    def __init__(self, C=1.0, counter=None, fail_at=None):
        self.C, self.counter, self.fail_at = C, counter, fail_at

    def fit(self, X, y):
        n = int(self.counter.read_text()) + 1 if self.counter.exists() else 1
        self.counter.write_text(str(n))
        if self.fail_at is not None and self.fail_at.exists() \
                and n == int(self.fail_at.read_text()):
            raise _Interrupted
        self.svc_ = SVC(C=self.C).fit(X, y)
        self.classes_ = self.svc_.classes_
        return self

    def decision_function(self, X):
        return self.svc_.decision_function(X)

    def predict(self, X):
        return self.svc_.predict(X)


def test_an_interrupted_search_fits_only_the_folds_it_had_not_finished(tmp_path, data):
    X, y = data
    counter, fail_at, ckpt = tmp_path / "fits", tmp_path / "fail_at", tmp_path / "c"
    grid = {"C": [0.1, 1.0, 10.0, 100.0]}                     # 4 x 3 folds + refit = 13
    cv = KFold(3, shuffle=True, random_state=1)

    def search():
        return ResumableGridSearchCV(_Counting(counter=counter, fail_at=fail_at), grid,
                                     cv=cv, scoring=SCORER, checkpoint=ckpt,
                                     checkpoint_key="run-1")

    fail_at.write_text("8")
    with pytest.raises(_Interrupted):
        search().fit(X, y)                                 # 7 folds done, the 8th fails
    counter.unlink()
    fail_at.unlink()
    resumed = search().fit(X, y)
    assert resumed.n_resumed_ == 7
    assert int(counter.read_text()) == 12 - 7 + 1         # the 5 folds left and the refit
    counter.unlink()
    plain = GridSearchCV(_Counting(counter=counter), grid, cv=cv, scoring=SCORER).fit(X, y)
    np.testing.assert_array_equal(resumed.cv_results_["mean_test_score"],
                                  plain.cv_results_["mean_test_score"])
    assert resumed.best_params_ == plain.best_params_


class _SameParamsOtherClass(SVC):
    pass


@pytest.mark.parametrize("change", ["key", "grid", "folds", "estimator", "class", "scorer",
                                    "data", "labels"])
def test_a_checkpoint_of_another_search_is_not_reused(tmp_path, data, change):
    X, y = data
    ckpt = tmp_path / "c"
    ResumableGridSearchCV(SVC(), GRID, cv=KFold(3, shuffle=True, random_state=0),
                          scoring=SCORER, checkpoint=ckpt, checkpoint_key="a").fit(X, y)
    grid = {"C": [0.1, 1.0, 10.0], "gamma": [0.02, 0.1, 1.0]} if change == "grid" else GRID
    cv = KFold(3, shuffle=True, random_state=1 if change == "folds" else 0)
    est = {"estimator": SVC(tol=1e-4), "class": _SameParamsOtherClass()}.get(change, SVC())
    scoring = make_scorer(balanced_accuracy_score) if change == "scorer" else SCORER
    X = X + 1e-9 if change == "data" else X
    y = np.r_[1 - y[:1], y[1:]] if change == "labels" else y
    again = ResumableGridSearchCV(est, grid, cv=cv, scoring=scoring, checkpoint=ckpt,
                                  checkpoint_key="b" if change == "key" else "a").fit(X, y)
    # the folds of the candidates both grids hold are the same fits: a changed grid reuses
    # them (6 candidates x 3 folds); anything else starts afresh
    assert again.n_resumed_ == (6 * 3 if change == "grid" else 0)


@pytest.mark.parametrize("content", ["{truncated", "[]", "null", '{"format": 2}', "MALFORMED"])
def test_a_corrupt_checkpoint_starts_afresh(tmp_path, data, content):
    X, y = data
    ckpt = tmp_path / "c"
    if content == "MALFORMED":              # the right search, a cell without its score
        _searches(ckpt)[1].fit(X, y)
        stored = json.loads(ckpt.read_text())
        del next(iter(stored["cells"].values()))["score"]
        content = json.dumps(stored)
    ckpt.write_text(content)
    plain, ours = _searches(ckpt)
    _same(plain.fit(X, y), ours.fit(X, y), X)
    assert ours.n_resumed_ == 0


class _Typed(ClassifierMixin, BaseEstimator):
    """SVC whose C depends on the type of ``k``: 3 gives C=0.01, the string "3" C=100."""

    def __init__(self, k=3):
        self.k = k

    def fit(self, X, y):
        self.svc_ = SVC(C=100.0 if isinstance(self.k, str) else 0.01).fit(X, y)
        self.classes_ = self.svc_.classes_
        return self

    def predict(self, X):
        return self.svc_.predict(X)


def test_grid_points_that_print_alike_are_kept_apart(tmp_path, data):
    """np.int64(3) and the string "np.int64(3)" print the same in JSON-with-repr; the
    checkpoint names grid points by a hash of their values and types."""
    X, y = data
    grid = {"k": [np.int64(3), "np.int64(3)"]}
    cv = KFold(3, shuffle=True, random_state=0)
    plain = GridSearchCV(_Typed(), grid, cv=cv, scoring=SCORER).fit(X, y)
    ours = ResumableGridSearchCV(_Typed(), grid, cv=cv, scoring=SCORER,
                                 checkpoint=tmp_path / "c").fit(X, y)
    assert ours.n_resumed_ == 0
    assert len(set(plain.cv_results_["mean_test_score"])) == 2
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"],
                                  plain.cv_results_["mean_test_score"])


@pytest.mark.parametrize("scoring", [None, "accuracy", "NAN", "ALL_NAN"])
def test_other_scorers_and_nan_scores_as_gridsearchcv(tmp_path, data, scoring):
    """A scorer by name or the estimator's own; NaN scores ranked below the others (all
    NaN: the first grid point), as GridSearchCV ranks them."""
    X, y = data
    if scoring in ("NAN", "ALL_NAN"):
        bad = {"NAN": {0.1, 10.0}, "ALL_NAN": {0.1, 1.0, 10.0}}[scoring]

        def score(est, X_, y_):
            return np.nan if est.C in bad else accuracy_score(y_, est.predict(X_))
        scoring = score
    cv = KFold(3, shuffle=True, random_state=2)
    plain = GridSearchCV(SVC(), GRID, cv=cv, scoring=scoring).fit(X, y)
    for attempt in range(2):                                 # fresh, then resumed
        ours = ResumableGridSearchCV(SVC(), GRID, cv=cv, scoring=scoring,
                                     checkpoint=tmp_path / "c").fit(X, y)
        assert ours.n_resumed_ == 27 * attempt
        _same(plain, ours, X)


def test_several_scorers_without_a_checkpoint_are_gridsearchcvs_search(data):
    """A dict of scorers (no checkpoint): GridSearchCV's own multi-metric search, every
    metric's fold scores and ranks as GridSearchCV gives them."""
    X, y = data
    cv = KFold(3, shuffle=True, random_state=4)
    scoring = {"acc": SCORER, "bal": make_scorer(balanced_accuracy_score)}
    plain = GridSearchCV(SVC(), GRID, cv=cv, scoring=scoring, refit="bal").fit(X, y)
    ours = ResumableGridSearchCV(SVC(), GRID, cv=cv, scoring=scoring, refit="bal").fit(X, y)
    for name in ("acc", "bal"):
        for stat in ("mean_test", "rank_test", "split0_test", "split2_test"):
            np.testing.assert_array_equal(ours.cv_results_[f"{stat}_{name}"],
                                          plain.cv_results_[f"{stat}_{name}"])
    assert ours.best_params_ == plain.best_params_
    np.testing.assert_array_equal(ours.predict(X), plain.predict(X))


def test_what_a_checkpointed_search_cannot_take_is_said(tmp_path, data):
    X, y = data
    search = ResumableGridSearchCV(SVC(), GRID, cv=3, checkpoint=tmp_path / "c")
    with pytest.raises(ValueError, match="takes no fit parameters"):
        search.fit(X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="one scorer"):
        search.set_params(scoring=["accuracy", "f1"]).fit(X, y)
    with pytest.raises(ValueError, match="error_score='raise'"):
        search.set_params(scoring=None, error_score=0.0).fit(X, y)
    assert not (tmp_path / "c").exists()


def test_a_killed_run_resumes_its_grid_search_with_the_same_numbers(tmp_path):
    """Kill `mlkit train` inside a run's grid search; the rerun reads the folds it had
    fitted, its record equals an uninterrupted run's, and no checkpoint is left."""
    sets = ["--set", "protocol.repeats=1", "--set", "methods.RSBag.params.n_estimators=30",
            "--set", "methods.RSBag.grid={rd: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5]}",
            "--set", "methods.RSBag.grid_folds=3",
            "--set", "methods.RSBag.grid_metric=hamming_error"]

    def args(out):
        return [sys.executable, "-m", "mlkit.cli", "-q", "train", "--config", str(FIG4),
                "--out", str(out), *sets]
    out = tmp_path / "killed"
    proc = subprocess.Popen(args(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 300
    cells = 0
    while time.time() < deadline and cells < 2:
        time.sleep(0.02)
        for ckpt in out.glob("runs/*/*/*.cv-checkpoint"):
            try:
                cells = len(json.loads(ckpt.read_text())["cells"])
            except (OSError, ValueError):        # gone: the run has finished
                pass
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert cells >= 2, "the run should have been killed inside its grid search"
    assert not list(out.glob("runs/*/RSBag*/*.json")), "killed before RSBag's record"
    for cmd_out in (out, tmp_path / "whole"):
        done = subprocess.run(args(cmd_out), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert not list(out.glob("runs/*/*/*.cv-checkpoint"))
    resumed, whole = load_records(out), load_records(tmp_path / "whole")
    assert [r["metrics"] for r in resumed] == [r["metrics"] for r in whole]
    assert [r.get("chosen") for r in resumed] == [r.get("chosen") for r in whole]
    [rsbag] = [r for r in resumed if r["method"] == "RSBag"]
    assert rsbag["resumed_folds"] >= 2
    assert all("resumed_folds" not in r for r in whole)


def test_force_leaves_the_checkpoints_of_runs_it_does_not_compute(tmp_path):
    """``--partial --force`` computes nothing and leaves every checkpoint alone, as does
    ``--force`` for the runs it leaves out; a computed run's checkpoint goes."""
    from mlkit.config import load_spec
    from mlkit.experiment import checkpoint_path, planned_runs, run

    spec = load_spec(FIG4, overrides=["protocol.repeats=1",
                                      "methods.RSBag.params.n_estimators=5",
                                      "methods.RSBag.grid={rd: [0.1, 0.3]}",
                                      "methods.RSBag.grid_folds=2",
                                      "methods.RSBag.grid_metric=hamming_error"])
    [ckpt] = [checkpoint_path(p) for _, p in planned_runs(spec, tmp_path) if "RSBag" in str(p)]
    ckpt.parent.mkdir(parents=True)
    ckpt.write_text("{}")
    run(spec, tmp_path, force=True, compute=False)
    assert ckpt.exists()
    run(spec, tmp_path, force=True, only=lambda d, m, s: m != "RSBag")
    assert ckpt.exists()
    done = run(spec, tmp_path, force=True, only=lambda d, m, s: m == "RSBag")
    assert done.computed == 1 and not ckpt.exists()
