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
from sklearn.metrics import accuracy_score, make_scorer
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
    assert ours.best_score_ == plain.best_score_
    for name in ["mean_test_score", "std_test_score", "rank_test_score",
                 "split0_test_score", "split2_test_score"]:
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


@pytest.mark.parametrize("change", ["key", "grid", "folds", "estimator"])
def test_a_checkpoint_of_another_search_is_not_reused(tmp_path, data, change):
    X, y = data
    ckpt = tmp_path / "c"
    ResumableGridSearchCV(SVC(), GRID, cv=KFold(3, shuffle=True, random_state=0),
                          scoring=SCORER, checkpoint=ckpt, checkpoint_key="a").fit(X, y)
    other = {"key": dict(checkpoint_key="b"), "grid": {}, "folds": {}, "estimator": {}}[change]
    grid = {"C": [0.1, 1.0, 10.0], "gamma": [0.02, 0.1, 1.0]} if change == "grid" else GRID
    cv = KFold(3, shuffle=True, random_state=1 if change == "folds" else 0)
    est = SVC(tol=1e-4) if change == "estimator" else SVC()
    again = ResumableGridSearchCV(est, grid, cv=cv, scoring=SCORER, checkpoint=ckpt,
                                  **({"checkpoint_key": "a"} | other)).fit(X, y)
    # the folds of the candidates both grids hold are the same fits: a changed grid reuses
    # them (6 candidates x 3 folds); anything else starts afresh
    assert again.n_resumed_ == (6 * 3 if change == "grid" else 0)


def test_a_corrupt_checkpoint_starts_afresh(tmp_path, data):
    X, y = data
    ckpt = tmp_path / "c"
    ckpt.write_text("{truncated")
    plain, ours = _searches(ckpt)
    _same(plain.fit(X, y), ours.fit(X, y), X)
    assert ours.n_resumed_ == 0


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
    deadline = time.time() + 120
    ckpts = []
    while time.time() < deadline:
        ckpts = list(out.glob("runs/*/*/*.cv-checkpoint"))
        if ckpts and len(json.loads(ckpts[0].read_text() or "{}").get("cells", {})) >= 2:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert ckpts, "the run should have been killed inside its grid search"
    assert not list(out.glob("runs/*/*/*.json")), "killed before any record"
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
