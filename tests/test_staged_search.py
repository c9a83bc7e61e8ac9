"""mlkit.runner.staged: the two-stage grid search against GridSearchCV on each stage's grid,
its choice under both rules, its resume, and its place in the runner and the config."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from mlkit.grid_rules import choose, refit_rule
from mlkit.runner.staged import StagedGridSearchCV, _results, stage_grids

GRID = {"max_depth": [1, 2, 3, 6], "min_samples_leaf": [1, 5, 20], "criterion": ["gini",
                                                                               "entropy"]}
START = {"max_depth": 2}


def _data():
    X, y = make_classification(150, n_informative=4, random_state=3)
    return X, y, StratifiedKFold(3, shuffle=True, random_state=0)


def test_stage_grids_hold_the_start_and_search_it_afterwards():
    first, second = stage_grids(GRID, START)
    assert first == {**GRID, "max_depth": [2]}
    assert second == {"max_depth": [1, 2, 3, 6]}
    with pytest.raises(ValueError, match="not a grid parameter"):
        stage_grids(GRID, {"n_xv": 10})
    with pytest.raises(ValueError, match="not one of the grid's values"):
        stage_grids(GRID, {"max_depth": 4})


def test_each_stage_is_gridsearchcv_on_its_grid():
    X, y, cv = _data()
    tree = DecisionTreeClassifier(random_state=0)
    ours = StagedGridSearchCV(tree, GRID, start=START, cv=cv).fit(X, y)
    first = GridSearchCV(tree, stage_grids(GRID, START)[0], cv=cv).fit(X, y)
    assert ours.stage1_best_params_ == first.best_params_
    chosen = {k: [v] for k, v in first.best_params_.items() if k != "max_depth"}
    second = GridSearchCV(tree, {**chosen, "max_depth": GRID["max_depth"]}, cv=cv).fit(X, y)
    assert ours.best_params_ == second.best_params_
    assert ours.best_score_ == pytest.approx(second.best_score_, abs=1e-15)
    # every cell once: 6 of stage 1, then 3 more of stage 2 (its start cell is stage 1's)
    assert len(ours.cv_results_["params"]) == 6 + 3 and ours.n_stage2_ == 4
    assert ours.cv_results_["params"][:4] == list(ParameterGrid(
        {**chosen, "max_depth": GRID["max_depth"]}))
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"][:4],
                                  second.cv_results_["mean_test_score"])
    assert ours.best_index_ == int(np.argmax(ours.cv_results_["mean_test_score"]))
    np.testing.assert_array_equal(ours.predict(X), second.predict(X))


def test_a_rule_on_all_cells_chooses_what_it_chooses_among_stage_two():
    """grid_also applies its rule to ``cv_results_`` (both stages): because stage 1's best is
    stage 2's start cell and stage 2 comes first, it must choose among stage 2's cells."""
    rng = np.random.default_rng(0)
    for trial in range(300):
        first = [{"gamma": g, "C": c, "n_xv": 100} for g in (1, 2, 3) for c in (1, 10)]
        s1 = np.round(rng.uniform(.6, .9, (6, 3)), 2)        # rounded: ties happen
        best = int(np.argmax(s1.mean(axis=1)))
        pick = {k: v for k, v in first[best].items() if k != "n_xv"}
        stage2 = [{**pick, "n_xv": n} for n in (10, 50, 100, 500)]
        s2 = np.round(rng.uniform(.55, .95, (4, 3)), 2)
        s2[2] = s1[best]                                     # the shared start cell
        rows2 = [{"params": p, **{f"split{k}_test_score": s[k] for k in range(3)},
                  "mean_test_score": s.mean()} for p, s in zip(stage2, s2)]
        rest = [{"params": p, **{f"split{k}_test_score": s[k] for k in range(3)},
                 "mean_test_score": s.mean()} for i, (p, s) in enumerate(zip(first, s1))
                if i != best]
        union, alone = _results(rows2 + rest), _results(rows2)
        for rule in ("argmax", "one_se"):
            assert choose(union, rule) == choose(alone, rule), (trial, rule)


_FITS = []      # every fit of a _Counting (clone deep-copies parameters: not one of them)


class _Counting(BaseEstimator, ClassifierMixin):
    """A tree that logs its fits in _FITS."""

    def __init__(self, max_depth=1, min_samples_leaf=1, criterion="gini"):
        self.max_depth, self.min_samples_leaf = max_depth, min_samples_leaf
        self.criterion = criterion

    def fit(self, X, y):
        _FITS.append((self.max_depth, self.min_samples_leaf, self.criterion, len(X)))
        self.tree_ = DecisionTreeClassifier(max_depth=self.max_depth, random_state=0,
                                            min_samples_leaf=self.min_samples_leaf,
                                            criterion=self.criterion).fit(X, y)
        self.classes_ = self.tree_.classes_
        return self

    def predict(self, X):
        return self.tree_.predict(X)


def test_fits_each_cell_once_resumes_and_applies_the_rule_in_stage_two(tmp_path):
    X, y, cv = _data()
    log = _FITS
    log.clear()
    est = _Counting()
    path = tmp_path / "run.cv-checkpoint"
    rule = refit_rule("one_se", "max_depth")
    ours = StagedGridSearchCV(est, GRID, start=START, cv=cv, checkpoint=path,
                              refit=rule).fit(X, y)
    fold_fits = [e for e in log if e[3] < len(X)]
    assert len(fold_fits) == (6 + 3) * 3                    # the start cell once per fold
    assert len(log) == 27 + 1                               # and one refit
    stage2 = {k: ours.cv_results_[k][:ours.n_stage2_] for k in ours.cv_results_}
    stage2["params"] = ours.cv_results_["params"][:ours.n_stage2_]
    assert ours.best_index_ == choose(stage2, "one_se", "max_depth")
    log.clear()
    again = StagedGridSearchCV(est, GRID, start=START, cv=cv, checkpoint=path,
                               refit=rule).fit(X, y)
    assert again.n_resumed_ == 27 and len(log) == 1         # only the refit
    assert again.best_params_ == ours.best_params_
    np.testing.assert_array_equal(again.cv_results_["mean_test_score"],
                                  ours.cv_results_["mean_test_score"])


def test_the_runner_builds_it_from_grid_staged_and_keys_it_only_when_set():
    from types import SimpleNamespace

    from mlkit.config import MethodSpec
    from mlkit.experiment import _run_key, build_estimator
    from mlkit.targets import resolve_target, target_spec

    grid = {"n_xv": [10, 100], "C": [1.0, 10.0]}
    staged = MethodSpec(name="sparsemi", grid=grid, grid_staged={"n_xv": 100})
    joint = MethodSpec(name="sparsemi", grid=grid)
    split = SimpleNamespace(seed=3, validation=None, repeat=0, fold=0)
    search = build_estimator(staged, split)
    assert isinstance(search, StagedGridSearchCV) and search.start == {"n_xv": 100}
    assert not isinstance(build_estimator(joint, split), StagedGridSearchCV)
    _, spec = target_spec(resolve_target("sparsemi/fig4"))
    dataset = spec.datasets[0]
    unset = MethodSpec(name="sparsemi", grid=grid, grid_staged={})
    assert _run_key(spec, dataset, joint, split) == _run_key(spec, dataset, unset, split)
    assert _run_key(spec, dataset, joint, split) != _run_key(spec, dataset, staged, split)
    for bad, match in (({"gamma": 1.0}, "not in the grid"),
                       ({"n_xv": 50}, "not one of the grid's values")):
        with pytest.raises(ValueError, match=match):
            MethodSpec(name="sparsemi", grid=grid, grid_staged=bad)


def test_borrowed_search_takes_the_source_choice_then_searches_the_rest():
    from sklearn.ensemble import ExtraTreesClassifier

    from mlkit.runner.staged import BorrowedGridSearchCV

    X, y, cv = _data()
    grid = {"max_depth": [1, 2, 3, 6], "min_samples_leaf": [1, 5, 20]}
    source = ExtraTreesClassifier(n_estimators=5, random_state=0)
    tree = DecisionTreeClassifier(random_state=0)
    ours = BorrowedGridSearchCV(tree, grid, source=source, borrow=["max_depth"],
                                cv=cv).fit(X, y)
    first = GridSearchCV(source, grid, cv=cv).fit(X, y)       # the source's own search
    assert ours.source_best_params_ == first.best_params_
    depth = first.best_params_["max_depth"]
    assert ours.borrowed_params_ == {"max_depth": depth}
    second = GridSearchCV(tree, {**grid, "max_depth": [depth]}, cv=cv).fit(X, y)
    assert ours.best_params_ == second.best_params_ and ours.best_params_["max_depth"] == depth
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"],
                                  second.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(ours.predict(X), second.predict(X))
    with pytest.raises(ValueError, match="must be parameters of the grid"):
        BorrowedGridSearchCV(tree, grid, source=source, borrow=["criterion"],
                             cv=cv).fit(X, y)


def test_the_runner_builds_a_borrowed_search_and_the_config_checks_it(tmp_path):
    from types import SimpleNamespace

    from mlkit._errors import ConfigError
    from mlkit.config import MethodSpec, load_spec
    from mlkit.experiment import build_estimator
    from mlkit.runner.staged import BorrowedGridSearchCV

    grid = {"gamma": [0.1, 1.0], "C": [1.0, 10.0]}
    m = MethodSpec(name="sparsemi", grid=grid,
                   grid_borrow={"method": "mi-kernel", "params": ["gamma"]})
    search = build_estimator(m, SimpleNamespace(seed=3, validation=None))
    assert isinstance(search, BorrowedGridSearchCV) and search.borrow == ["gamma"]
    assert type(search.source).__name__ == "MIKernel"
    with pytest.raises(ValueError, match="not in the grid"):
        MethodSpec(name="sparsemi", grid=grid,
                   grid_borrow={"method": "mi-kernel", "params": ["n_xv"]})
    config = tmp_path / "c.yaml"
    config.write_text(
        "paper: sparsemi\nartifact: x\ndatasets: [{name: musk1}]\nmetrics: [accuracy]\n"
        "methods:\n  - {name: rsvm, grid: {gamma: [0.1], C: [1.0]},\n"
        "     grid_borrow: {method: mi-kernal, params: [gamma]}}\n")
    with pytest.raises(ConfigError, match="mi-kernel"):
        load_spec(config)
