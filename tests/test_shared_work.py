"""Work shared by the fits of a grid search's fold (mlkit.kernels.shared_work): the same
numbers as unshared calls, computed once per fold."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold

import mlkit.kernels as kernels
from mlkit.kernels import fingerprint, rbf_kernel, shared_result, shared_work
from mlkit.methods.mi import MILES, MIKernel, MISVM, miSVM
from mlkit.resumable_search import ResumableGridSearchCV


@pytest.fixture
def points():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 5)), rng.normal(size=(25, 5))


def test_shared_kernel_is_the_unshared_one_bit_for_bit(points):
    X, Z = points
    with shared_work() as work:
        for gamma in (0.1, 1.0, 3.0):
            np.testing.assert_array_equal(rbf_kernel(X, Z, gamma, shared=True),
                                          rbf_kernel(X, Z, gamma))
            np.testing.assert_array_equal(rbf_kernel(X, gamma=gamma, shared=True),
                                          rbf_kernel(X, gamma=gamma))
    assert (work.misses, work.hits) == (2, 4)          # one distance matrix per pair
    assert work.results == {}                          # released at exit


def test_columns_are_the_kernel_against_those_rows(points):
    X, Z = points
    cols = np.array([3, 0, 7, 7, 20])
    expected = np.exp(-0.5 * ((X[:, None, :] - Z[cols][None]) ** 2).sum(-1))
    np.testing.assert_allclose(rbf_kernel(X, Z, 0.5, columns=cols), expected, rtol=1e-12)
    with shared_work():
        np.testing.assert_allclose(rbf_kernel(X, Z, 0.5, shared=True, columns=cols),
                                   expected, rtol=1e-12)


def test_outside_a_scope_nothing_is_kept(points, monkeypatch):
    X, _ = points
    calls = []
    real = kernels.squared_distances
    monkeypatch.setattr(kernels, "squared_distances",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    rbf_kernel(X, gamma=1.0, shared=True)
    rbf_kernel(X, gamma=2.0, shared=True)
    assert len(calls) == 2
    assert shared_result("x", lambda: 5) == 5


def test_stored_results_are_read_only_and_keyed_by_content(points):
    X, _ = points
    with shared_work() as work:
        A = shared_result("t", lambda: X * 2, X, 1.0)
        with pytest.raises(ValueError):
            A[0, 0] = 1.0
        shared_result("t", lambda: X * 2, X.copy(), 1.0)      # same values: a hit
        shared_result("t", lambda: X * 3, X, 2.0)             # another plain part: a miss
        Y = X.copy()
        Y[0, 0] += 1e-12
        shared_result("t", lambda: Y * 2, Y, 1.0)             # other values: a miss
    assert (work.hits, work.misses) == (1, 3)


def test_fingerprint_sees_values_not_layout():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(6, 4))
    assert fingerprint(A) == fingerprint(np.asfortranarray(A))
    assert fingerprint(A) != fingerprint(A.T)
    assert fingerprint(A) != fingerprint(A.astype(np.float32))
    S = sp.random(6, 4, density=0.5, random_state=0, format="csr")
    assert fingerprint(S) == fingerprint(S.tocoo())
    assert fingerprint(S) != fingerprint(S.toarray())
    B = S.copy()
    B.data[0] += 1.0
    assert fingerprint(S) != fingerprint(B)


def test_scopes_nest_and_the_innermost_is_used(points):
    X, _ = points
    with shared_work() as outer:
        rbf_kernel(X, gamma=1.0, shared=True)
        with shared_work() as inner:
            rbf_kernel(X, gamma=1.0, shared=True)
        rbf_kernel(X, gamma=2.0, shared=True)
    assert (outer.misses, outer.hits, inner.misses) == (1, 1, 1)


def _bags(seed, n=36):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(rng.integers(2, 6), 4)) for _ in range(n)]
    y = np.arange(n) % 3
    for b, c in zip(bags, y):
        b[0, c] += 2.5                       # one witness instance per class
    return bags, y


@pytest.mark.parametrize("est", [MIKernel(), MISVM(), miSVM(), MILES()],
                         ids=lambda e: type(e).__name__)
def test_mi_grid_search_shares_distances_and_keeps_its_numbers(est, monkeypatch):
    bags, y = _bags(0)
    test_bags, _ = _bags(1, 12)
    grid = {"gamma": [0.05, 0.3], "C": [0.5, 5.0]}
    cv = KFold(3, shuffle=True, random_state=2)
    scorer = make_scorer(accuracy_score)
    plain = GridSearchCV(est, grid, cv=cv, scoring=scorer).fit(bags, y)
    calls = []
    real = kernels.squared_distances
    monkeypatch.setattr(kernels, "squared_distances",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    ours = ResumableGridSearchCV(est, grid, cv=cv, scoring=scorer).fit(bags, y)
    n_calls = len(calls)
    for k in range(3):
        np.testing.assert_array_equal(ours.cv_results_[f"split{k}_test_score"],
                                      plain.cv_results_[f"split{k}_test_score"])
    assert ours.best_params_ == plain.best_params_
    np.testing.assert_allclose(ours.decision_function(test_bags),
                               plain.decision_function(test_bags), rtol=1e-12, atol=1e-12)
    # per fold: the training instances' distances once and the test part's to them once,
    # for all 4 grid points; then the refit on all the bags (outside any fold)
    n_grid = 4
    assert n_calls == 3 * 2 + 1 < 3 * 2 * n_grid
