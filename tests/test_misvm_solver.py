"""MI-SVM's bag-slack QP solver (Andrews et al., NIPS 2002, Sec. 3: one slack per negative
bag): the incremental SMO of :func:`mlkit.methods.mi.misvm.group_slack_svm` against the
per-step recomputing SMO it replaced (the same iterates, bit for bit), its KKT conditions,
and the grid-search sharing of MI-SVM / mi-SVM's instance kernel across C."""

import numpy as np
import pytest

import mlkit.methods.mi.misvm as misvm_module
from mlkit.kernels import shared_work
from mlkit.methods.mi import MISVM, miSVM
from mlkit.methods.mi.misvm import _bias, group_slack_svm

from .test_mi_methods import make_mi


def reference_smo(K, y, groups, C, *, alpha0=None, tol=1e-3, max_iter=None):
    """Andrews et al.'s bag-slack dual by SMO, every step recomputing the scores, the
    feasibility masks and the within-group search over all examples from the gradient (the
    solver as it was before its steps became incremental): the oracle of the tests below."""
    n = len(y)
    y = np.asarray(y, dtype=float)
    group_start = np.r_[0, np.flatnonzero(np.diff(groups)) + 1, n]
    group_of = np.repeat(np.arange(len(group_start) - 1), np.diff(group_start))
    group_y = y[group_start[:-1]]
    a = np.zeros(n)
    if alpha0 is not None:
        alpha0 = np.asarray(alpha0, dtype=float)
        sums = np.bincount(group_of, alpha0, minlength=len(group_y))
        if (np.all(alpha0 >= 0) and np.all(sums <= C * (1 + 1e-12))
                and abs(alpha0 @ y) <= 1e-10 * max(1.0, C)):
            a = alpha0.copy()
    sums = np.bincount(group_of, a, minlength=len(group_y))
    nz = np.flatnonzero(a)
    g = y * (K[:, nz] @ (a * y)[nz]) - 1.0            # gradient of the dual, Q a - 1
    diag = np.diag(K).copy()
    max_iter = 100 * n + 10000 if max_iter is None else max_iter
    eps = 1e-12 * max(1.0, C)
    converged = False
    for _ in range(max_iter):
        score = -y * g
        room = (C - sums)[group_of] > eps                  # the group may grow
        grow = np.where(y > 0, room, a > eps)              # a_i += y_i t is feasible
        shrink = np.where(y > 0, a > eps, room)            # a_j -= y_j t is feasible
        best_viol, pair = -np.inf, None
        if grow.any() and shrink.any():
            i = int(np.flatnonzero(grow)[np.argmax(score[grow])])
            # j by libsvm's second-order rule: the largest decrease (score_i - score_j)^2 / eta
            gap = score[i] - score
            cand = shrink & (gap > 0)
            if cand.any():
                eta = np.maximum(diag[i] + diag - 2.0 * K[:, i], 1e-12)
                j = int(np.flatnonzero(cand)[np.argmax(gap[cand] ** 2 / eta[cand])])
                best_viol, pair = gap[j], (i, j)
            else:
                best_viol = score[i] - score[shrink].min()
        capped = ~room & (a > eps)                          # members that can give way
        if capped.any():
            # within a full group (one label): move mass from the member with the largest
            # -y g ... in libsvm's terms, i = the one that can go in +y direction
            up = np.where(y > 0, ~room, capped)             # a_i += y_i t within the group
            down = np.where(y > 0, capped, ~room)           # a_j -= y_j t within the group
            s_up = np.where(up, score, -np.inf)
            s_down = np.where(down, score, np.inf)
            top = np.maximum.reduceat(s_up, group_start[:-1])
            bottom = np.minimum.reduceat(s_down, group_start[:-1])
            viol = top - bottom
            gbest = int(np.argmax(viol))
            if viol[gbest] > best_viol:
                lo_, hi_ = group_start[gbest], group_start[gbest + 1]
                i = lo_ + int(np.argmax(s_up[lo_:hi_]))
                j = lo_ + int(np.argmin(s_down[lo_:hi_]))
                best_viol, pair = viol[gbest], (i, j)
        if pair is None or best_viol < tol:
            converged = True
            break
        i, j = pair
        Ki, Kj = K[:, i], K[:, j]
        eta = max(diag[i] + diag[j] - 2.0 * Ki[j], 1e-12)
        t = best_viol / eta
        same = group_of[i] == group_of[j]
        # bounds: a_i changes by y_i t, a_j by -y_j t
        for k, sign in ((i, y[i]), (j, -y[j])):
            if sign < 0:
                t = min(t, a[k])
            elif not same:
                t = min(t, C - sums[group_of[k]])
        t = max(t, 0.0)
        a[i] += y[i] * t
        a[j] -= y[j] * t
        np.maximum(a, 0.0, out=a)
        sums[group_of[i]] += y[i] * t if not same else 0.0
        if not same:
            sums[group_of[j]] -= y[j] * t
        g += t * y * (Ki - Kj)
    b = _bias(K, y, a, group_start, group_of, group_y, C)
    return a, b, converged




def _problem(seed):
    """A random bag-slack QP: singleton positive groups, then negative bags of 1-7 examples,
    a Gaussian kernel, C over four decades."""
    rng = np.random.default_rng(seed)
    n_pos, sizes = int(rng.integers(1, 15)), rng.integers(1, 8, size=rng.integers(1, 20))
    n = n_pos + int(sizes.sum())
    X = rng.normal(size=(n, 3))
    X[:n_pos] += 1.5 * rng.normal()
    y = np.r_[np.ones(n_pos), -np.ones(n - n_pos)]
    groups = np.r_[np.arange(n_pos), n_pos + np.repeat(np.arange(len(sizes)), sizes)]
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    return D, y, groups, 10 ** rng.uniform(-2, 1), 10 ** rng.uniform(-1, 3)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("tol", [1e-3, 1e-8])
def test_incremental_smo_takes_the_reference_steps(seed, tol):
    """Same (alpha, b, converged), bit for bit, cold and warm-started (a solution of
    another kernel as alpha0, as MI-SVM's witness iterations do), with and without a
    column-major copy of K."""
    D, y, groups, gamma, C = _problem(seed)
    K = np.exp(-gamma * D)
    expected = reference_smo(K, y, groups, C, tol=tol)
    for got in (group_slack_svm(K, y, groups, C, tol=tol),
                group_slack_svm(K, y, groups, C, tol=tol, K_columns=np.asfortranarray(K))):
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1:] == expected[1:]
    K2 = np.exp(-1.3 * gamma * D)
    warm = reference_smo(K2, y, groups, C, alpha0=expected[0], tol=tol)
    got = group_slack_svm(K2, y, groups, C, alpha0=expected[0], tol=tol)
    np.testing.assert_array_equal(got[0], warm[0])
    assert got[1:] == warm[1:]


@pytest.mark.parametrize("seed", range(5))
def test_smo_solution_meets_the_kkt_conditions(seed):
    """The solution is feasible and no feasible pair direction (a_i += y_i t, a_j -= y_j t,
    or a transfer within a capped group) improves the dual by more than a small violation:
    ``max over up-moves of -y g - min over down-moves of -y g`` below 1e-6 at tol=1e-9,
    with g = Q a - 1 recomputed from scratch (the solver stops on the pair its second-order
    rule picks, not on the largest gap, and updates g incrementally: hence the margin); the
    dual value equals the reference solver's."""
    D, y, groups, gamma, C = _problem(100 + seed)
    K = np.exp(-gamma * D)
    tol = 1e-9
    a, b, converged = group_slack_svm(K, y, groups, C, tol=tol)
    assert converged
    sums = np.bincount(groups, a)
    assert np.all(a >= 0) and np.all(sums <= C * (1 + 1e-12)) and abs(a @ y) < 1e-10 * C
    score = -y * (y * (K @ (a * y)) - 1.0)
    eps = 1e-12 * max(1.0, C)
    room = (C - sums)[groups] > eps
    grow = np.where(y > 0, room, a > eps)
    shrink = np.where(y > 0, a > eps, room)
    assert score[grow].max() - score[shrink].min() < 1e-6
    for g in np.flatnonzero(C - sums <= eps):
        members = groups == g
        up = members & ((y > 0) | (a > eps))
        down = members & ((y < 0) | (a > eps))
        assert score[up].max() - score[down].min() < 1e-6
    dual = lambda v: 0.5 * (v * y) @ K @ (v * y) - v.sum()       # noqa: E731
    assert abs(dual(a) - dual(reference_smo(K, y, groups, C, tol=tol)[0])) < 1e-12 * max(1, C)


def test_misvm_fit_is_unchanged_by_the_incremental_solver(monkeypatch):
    """MI-SVM on a three-class problem: the same weights, biases and decision values with the
    reference solver in place of group_slack_svm."""
    bags, y = make_mi(45, seed=4, n_classes=3)
    new = MISVM(C=10.0, gamma=0.3).fit(bags, y)
    monkeypatch.setattr(misvm_module, "group_slack_svm",
                        lambda *args, K_columns=None, **kw: reference_smo(*args, **kw))
    old = MISVM(C=10.0, gamma=0.3).fit(bags, y)
    np.testing.assert_array_equal(new.dual_coef_, old.dual_coef_)
    np.testing.assert_array_equal(new.intercept_, old.intercept_)
    np.testing.assert_array_equal(new.decision_function(bags), old.decision_function(bags))


@pytest.mark.parametrize("cls", [MISVM, miSVM])
def test_instance_kernel_is_computed_once_per_gamma_in_a_fold(cls, monkeypatch):
    """Inside one fold's shared_work scope the instance kernel of a gamma is exponentiated
    once for every C, and the fits equal the unshared ones."""
    bags, y = make_mi(30, seed=5)
    calls = []
    real = misvm_module.rbf_kernel

    def counting(*args, **kw):
        calls.append(kw.get("gamma"))
        return real(*args, **kw)

    monkeypatch.setattr(misvm_module, "rbf_kernel", counting)
    alone = [cls(C=C, gamma=g).fit(bags, y) for g in (0.1, 1.0) for C in (1.0, 10.0)]
    assert len(calls) == 4
    calls.clear()
    with shared_work():
        shared = [cls(C=C, gamma=g).fit(bags, y) for g in (0.1, 1.0) for C in (1.0, 10.0)]
    assert calls == [0.1, 1.0]
    for u, v in zip(alone, shared):
        np.testing.assert_array_equal(u.support_, v.support_)
        np.testing.assert_array_equal(u.dual_coef_, v.dual_coef_)
        np.testing.assert_array_equal(u.intercept_, v.intercept_)
        np.testing.assert_array_equal(u.decision_function(bags), v.decision_function(bags))
