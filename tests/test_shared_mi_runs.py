"""Runs of one split that learn the same multi-instance models are one task, and the task's
memos change no number: SparseMI's fixed-N_XV row sharing the CV row's seed takes every fit
of its grid from the CV row's stage 1, and RS rows with different N_XV continue one greedy
construction. Each record equals the one the run computes alone, with the memos empty."""

import numpy as np
import pytest

import mlkit.methods.mi.reduced as reduced
from mlkit.methods._memo import FITTED, Memo, memoized_fit
from mlkit.methods.mi import RS, SparseMI

_TINY = """paper: sparsemi
artifact: table1
title: tiny
datasets:
  - {name: sparsemi-binary, params: {n_bags_per_class: 20}}
methods:
  - &m {name: mi-kernel, label: MI-Kernel, grid: {gamma: [0.3, 1.0], C: [1.0, 10.0]},
        grid_folds: 3, grid_stratified: true}
  - name: sparsemi
    label: SparseMI
    params: {t_max: 3}
    grid: {n_xv: [3, 5], gamma: [0.3, 1.0], C: [1.0, 10.0]}
    grid_staged: {n_xv: 5}
    grid_folds: 3
    grid_stratified: true
  - {<<: *m, name: rs, label: RS (3), params: {n_xv: 3}, seed_from: RS (6)}
  - {<<: *m, name: sparsemi, label: SparseMI (3), params: {n_xv: 3, t_max: 3}}
  - {<<: *m, name: sparsemi, label: SparseMI (5), params: {n_xv: 5, t_max: 3},
     seed_from: SparseMI}
  - {<<: *m, name: rs, label: RS (6), params: {n_xv: 6}}
protocol: {split: holdout, test_size: 0.5, repeats: 2, seed: 0, stratify: true}
metrics: [accuracy]
"""


@pytest.fixture(autouse=True)
def fresh_memos():
    FITTED.clear()
    reduced.CONSTRUCTIONS.clear()
    yield
    FITTED.clear()
    reduced.CONSTRUCTIONS.clear()


def _spec_and_todo(tmp_path):
    from mlkit.config import load_spec
    from mlkit.datasets import load_dataset
    from mlkit.runner.splits import make_splits

    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(_TINY)
    spec = load_spec(cfg)
    ds = spec.datasets[0]
    data = load_dataset(ds.name, params=ds.params)
    todo = [(ds.display, ds.method_as_run(m), s, None, None)
            for s in make_splits(data, ds.protocol_over(spec.protocol)) for m in spec.methods]
    return spec, data, todo


def test_sparsemi_and_rs_runs_of_a_split_are_one_task(tmp_path):
    from mlkit.runner.backends import _shared_learning_tasks

    _, _, todo = _spec_and_todo(tmp_path)
    tasks = _shared_learning_tasks(todo)
    assert sorted(i for t in tasks for i in t) == list(range(len(todo)))
    named = [[(todo[i][2].repeat, todo[i][1].display) for i in t] for t in tasks]
    assert named == [t for r in (0, 1) for t in (
        [(r, "MI-Kernel")], [(r, "SparseMI"), (r, "SparseMI (3)"), (r, "SparseMI (5)")],
        [(r, "RS (3)"), (r, "RS (6)")])]


def test_a_task_shares_its_fits_and_keeps_every_number(tmp_path):
    from mlkit.registry import METHODS
    from mlkit.runner.backends import _run_task, _shared_learning_tasks
    from mlkit.runner.fit import _fit_and_score

    spec, data, todo = _spec_and_todo(tmp_path)
    tasks = [t for t in _shared_learning_tasks(todo) if len(t) > 1 and todo[t[0]][2].repeat == 0]
    for task in tasks:
        calls = [(i, (data, todo[i][1], todo[i][2], spec.metrics, spec.curves,
                      METHODS.get(todo[i][1].name))) for i in task]
        FITTED.clear()
        reduced.CONSTRUCTIONS.clear()
        hits_before = {}
        done = []
        for i, args in calls:               # one by one, to see each run's memo hits
            hits_before[i] = (FITTED.hits, reduced.CONSTRUCTIONS.hits)
            out, exc = _run_task(_fit_and_score, [(i, args)])
            assert exc is None
            done += out
        names = {i: todo[i][1].display for i in task}
        for i, rec in done:
            if names[i] == "SparseMI (5)":
                # its 2 x 2 grid x 3 folds: all fitted by SparseMI's stage 1 (same seed)
                assert FITTED.hits - hits_before[i][0] >= 12
            if names[i] == "RS (6)":
                assert reduced.CONSTRUCTIONS.hits > hits_before[i][1]
        for i, rec in done:
            FITTED.clear()
            reduced.CONSTRUCTIONS.clear()
            alone = _fit_and_score(*calls[task.index(i)][1])
            for k in ("metrics", "chosen", "grid_scores", "model"):
                assert rec.get(k) == alone.get(k), (names[i], k)


def test_memoized_sparsemi_fit_is_the_fit():
    rng = np.random.default_rng(1)
    bags = [rng.normal(size=(4, 3)) + 1.2 * (i % 2) for i in range(30)]
    y = np.arange(30) % 2
    first = SparseMI(n_xv=4, C=10.0, t_max=4, random_state=3, keep_stages=True).fit(bags, y)
    assert len(FITTED) == 1
    again = SparseMI(n_xv=4, C=10.0, t_max=4, random_state=3, keep_stages=True).fit(bags, y)
    assert FITTED.hits == 1
    for name in ("expansion_vectors_", "dual_coef_", "intercept_", "objective_", "n_iter_"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
    for a, b in zip(again.staged_decision_function(bags), first.staged_decision_function(bags)):
        np.testing.assert_array_equal(a, b)
    # a hit is a copy: changing it leaves the memo and the first fit alone
    again.dual_coef_[:] = 0
    third = SparseMI(n_xv=4, C=10.0, t_max=4, random_state=3, keep_stages=True).fit(bags, y)
    np.testing.assert_array_equal(third.dual_coef_, first.dual_coef_)
    # another parameter, other data, or an unseeded fit are not hits
    SparseMI(n_xv=4, C=1.0, t_max=4, random_state=3).fit(bags, y)
    SparseMI(n_xv=4, C=10.0, t_max=4, random_state=3, keep_stages=True).fit(bags, 1 - y)
    n = len(FITTED)
    SparseMI(n_xv=4, C=10.0, t_max=4, random_state=None).fit(bags, y)
    assert len(FITTED) == n and FITTED.hits == 2
    # an evaluation set is recorded per fit: never memoised
    SparseMI(n_xv=4, C=10.0, t_max=4, random_state=3).fit(bags, y, eval_set=(bags, y))
    assert FITTED.hits == 2


def test_a_hit_gives_the_fits_warnings_again():
    import warnings

    class Noisy:
        def __init__(self):
            self.random_state = 0

        def get_params(self, deep=False):
            return {"random_state": self.random_state}

        def fit(self):
            warnings.warn("not converged", RuntimeWarning)
            self.coef_ = np.ones(2)
            return self

    for _ in range(2):
        est = Noisy()
        with pytest.warns(RuntimeWarning, match="not converged"):
            memoized_fit(est, (np.zeros(3),), est.fit)
        np.testing.assert_array_equal(est.coef_, np.ones(2))
    assert FITTED.hits == 1


def test_memo_is_bounded_by_bytes():
    memo = Memo(max_bytes=3 * 800)
    for k in range(5):
        memo.put(k, np.zeros(100))              # 800 bytes each
    assert len(memo) == 3 and memo.held_bytes == 2400
    assert memo.get(0) is None and memo.get(4) is not None
    memo.put("big", np.zeros(1000))             # larger than the memo: not kept
    assert memo.get("big") is None and len(memo) == 3
    memo.get(2)                                 # recently used: kept over 3
    memo.put(5, np.zeros(100))
    assert memo.get(2) is not None and memo.get(3) is None


def test_rs_construction_memo_counts_its_growth():
    rng = np.random.default_rng(0)
    bags = [rng.normal(size=(3, 4)) + 1.5 * (i % 2) for i in range(30)]
    y = np.arange(30) % 2
    RS(n_xv=2, C=10.0, gamma=0.3).fit(bags, y)
    small = reduced.CONSTRUCTIONS.held_bytes
    RS(n_xv=8, C=10.0, gamma=0.3).fit(bags, y)
    assert reduced.CONSTRUCTIONS.held_bytes > small


def test_memo_keys_list_parameters():
    """A list-valued parameter (e.g. SparseMI's init as explicit points) is keyed by its
    values: the same list is a hit, another list is not."""
    rng = np.random.default_rng(2)
    bags = [rng.normal(size=(3, 2)) + 1.5 * (i % 2) for i in range(20)]
    y = np.arange(20) % 2
    start = [[0.0, 0.0], [1.5, 1.5]]
    a = SparseMI(n_xv=2, C=10.0, t_max=2, init=start, random_state=0).fit(bags, y)
    b = SparseMI(n_xv=2, C=10.0, t_max=2, init=[list(p) for p in start],
                 random_state=0).fit(bags, y)
    assert FITTED.hits == 1
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    SparseMI(n_xv=2, C=10.0, t_max=2, init=[[0.0, 0.0], [1.0, 1.0]], random_state=0).fit(bags, y)
    assert FITTED.hits == 1 and len(FITTED) == 2
