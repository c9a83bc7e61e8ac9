"""The compiled SMO of MI-SVM's bag-slack QP (Andrews et al., NIPS 2002, Sec. 3: one slack per
negative bag; :func:`mlkit.methods.mi.misvm.group_slack_svm`) against its numpy formulation,
kept here as the oracle (:func:`numpy_group_slack_svm`, the solver as it was before its steps
were compiled): the same (alpha, b, converged), bit for bit, on random problems of every
shape the solver accepts, and the same MI-SVM fit."""

import numpy as np
import pytest

import mlkit.methods.mi.misvm as misvm_module
from mlkit.methods.mi import MISVM
from mlkit.methods.mi._smo import gather_block
from mlkit.methods.mi.misvm import _bias, group_slack_svm

from .test_mi_methods import make_mi


def numpy_group_slack_svm(K, y, groups, C, *, alpha0=None, tol=1e-3, max_iter=None,
                          K_columns=None):
    """REFERENCE (oracle): the bag-slack SMO of group_slack_svm in numpy, every step a fixed
    number of numpy calls over O(n) arrays (mlkit.methods.mi.misvm at bb292403, before the
    steps were compiled, verbatim). Same parameters and returns as group_slack_svm."""
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
    # K's columns are read from a column-major copy: K[:, idx] gathers contiguous columns
    # (into the same column-major block K[:, idx] would make, so every product is as it was)
    Kc = np.asfortranarray(K if K_columns is None else K_columns)
    nz = np.flatnonzero(a)
    score = -y * (y * (Kc[:, nz] @ (a * y)[nz]) - 1.0)  # -y_i g_i, g = Q a - 1 the gradient
    diag = np.diag(K).copy()
    max_iter = 100 * n + 10000 if max_iter is None else max_iter
    eps = 1e-12 * max(1.0, C)
    positive = y > 0
    room = (C - sums)[group_of] > eps                    # the group may grow
    active = a > eps
    grow = np.where(positive, room, active)              # a_i += y_i t is feasible
    shrink = np.where(positive, active, room)            # a_j -= y_j t is feasible
    n_shrink = np.count_nonzero(shrink)
    full = set(np.flatnonzero(C - sums <= eps).tolist())  # groups at their cap
    neg_inf = np.full(n, -np.inf)
    members = None                                       # the full groups' examples
    converged = False
    for _ in range(max_iter):
        best_viol, pair = -np.inf, None
        i = int(np.argmax(np.where(grow, score, -np.inf)))
        if grow[i] and n_shrink:
            # j by libsvm's second-order rule: the largest decrease (score_i - score_j)^2 / eta
            gap = score[i] - score
            cand = shrink & (gap > 0)
            if cand.any():
                Ki = Kc[:, i]
                eta = np.maximum(diag[i] + diag - 2.0 * Ki, 1e-12)
                j = int(np.argmax(np.where(cand, gap ** 2 / eta, neg_inf)))
                best_viol, pair = gap[j], (i, j)
            else:
                best_viol = score[i] - score[shrink].min()
        if full:
            # within a full group (one label): one member up in its +y direction, another
            # down, the most violating pair over the groups at their cap (members of a
            # positive group may all go up, only its nonzero ones down; the reverse in a
            # negative group); the first such group wins ties, as an argmax over all groups
            if members is None:
                members = np.flatnonzero(~room)
                m_start = np.r_[0, np.flatnonzero(np.diff(group_of[members])) + 1]
                m_pos = positive[members]
            s = score[members]
            act = active[members]
            s_up = np.where(m_pos | act, s, -np.inf)
            s_down = np.where(m_pos & ~act, np.inf, s)
            viol = np.maximum.reduceat(s_up, m_start) - np.minimum.reduceat(s_down, m_start)
            k = int(np.argmax(viol))
            if viol[k] > best_viol:
                lo_ = m_start[k]
                hi_ = m_start[k + 1] if k + 1 < len(m_start) else len(members)
                best_viol = viol[k]
                pair = (int(members[lo_ + np.argmax(s_up[lo_:hi_])]),
                        int(members[lo_ + np.argmin(s_down[lo_:hi_])]))
        if pair is None or best_viol < tol:
            converged = True
            break
        i, j = pair
        Ki, Kj = Kc[:, i], Kc[:, j]
        eta = max(diag[i] + diag[j] - 2.0 * Ki[j], 1e-12)
        t = best_viol / eta
        gi, gj = group_of[i], group_of[j]
        same = gi == gj
        # bounds: a_i changes by y_i t, a_j by -y_j t
        for k, sign in ((i, y[i]), (j, -y[j])):
            if sign < 0:
                t = min(t, a[k])
            elif not same:
                t = min(t, C - sums[group_of[k]])
        t = max(t, 0.0)
        a[i] = max(a[i] + y[i] * t, 0.0)
        a[j] = max(a[j] - y[j] * t, 0.0)
        sums[gi] += y[i] * t if not same else 0.0
        if not same:
            sums[gj] -= y[j] * t
        score -= t * (Ki - Kj)              # -y (g + t y (Ki - Kj)), y = +-1
        for k in (i, j):
            active[k] = a[k] > eps
        for gr in ((gi,) if same else (gi, gj)):
            lo_, hi_ = group_start[gr], group_start[gr + 1]
            has_room = (C - sums[gr]) > eps
            room[lo_:hi_] = has_room
            if has_room == (gr in full):      # the group's cap state changed
                members = None
                if has_room:
                    full.discard(gr)
                else:
                    full.add(gr)
            n_shrink -= np.count_nonzero(shrink[lo_:hi_])
            if group_y[gr] > 0:
                grow[lo_:hi_] = has_room
                shrink[lo_:hi_] = active[lo_:hi_]
            else:
                grow[lo_:hi_] = active[lo_:hi_]
                shrink[lo_:hi_] = has_room
            n_shrink += np.count_nonzero(shrink[lo_:hi_])
    b = _bias(Kc, y, a, group_start, group_of, group_y, C)
    return a, b, converged


def random_problem(seed):
    """A random bag-slack QP: positive and negative groups interleaved (singletons or bags of
    up to 7 examples, either label possibly absent), an RBF, linear (rank-deficient when n
    exceeds the dimension) or duplicated-rows kernel (eta = 0 pairs), C from 1e-4 to 1e4."""
    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(1, 40))
    bag_prob = rng.uniform()                       # share of groups that are bags
    labels = np.where(rng.uniform(size=n_groups) < rng.uniform(0.05, 0.95), 1.0, -1.0)
    sizes = np.where(rng.uniform(size=n_groups) < bag_prob, rng.integers(2, 8, n_groups), 1)
    groups = np.repeat(np.arange(n_groups), sizes)
    y = np.repeat(labels, sizes)
    n = len(y)
    d = int(rng.integers(1, 6))
    X = rng.normal(size=(n, d)) + 1.5 * rng.normal() * (y > 0)[:, None]
    kind = ("rbf", "linear", "duplicates")[seed % 3]
    if kind == "duplicates":
        X[rng.integers(n, size=n // 3)] = X[rng.integers(n, size=n // 3)]
    if kind == "linear":
        K = X @ X.T
    else:
        D = ((X[:, None] - X[None]) ** 2).sum(-1)
        K = np.exp(-(10 ** rng.uniform(-2, 1)) * D)
    return K, y, groups, float(10 ** rng.uniform(-4, 4)), rng


LIMIT = 2000


def assert_same(got, expected):
    """Bit-identical (alpha, b, converged)."""
    assert np.array_equal(got[0], expected[0])
    assert got[1] == expected[1] or (np.isnan(got[1]) and np.isnan(expected[1]))
    assert got[2] == expected[2]


@pytest.mark.parametrize("seed", range(60))
def test_compiled_smo_equals_the_numpy_smo_bit_for_bit(seed):
    """Same alpha, b and converged flag as the numpy formulation: cold starts at two
    tolerances (one with a column-major copy of K passed in), iteration limits small enough
    to stop early, and warm starts that are feasible (the solution of another kernel, as
    MI-SVM's witness iterations use; the problem's own solution, with groups at their cap
    from the first step) or infeasible (ignored: above the caps, y^T a != 0). At most
    ``LIMIT`` steps per solve (large C with a linear kernel needs far more)."""
    K, y, groups, C, rng = random_problem(seed)
    expected = numpy_group_slack_svm(K, y, groups, C, max_iter=LIMIT)
    assert_same(group_slack_svm(K, y, groups, C, max_iter=LIMIT), expected)
    assert_same(group_slack_svm(K, y, groups, C, tol=1e-8, max_iter=LIMIT,
                                K_columns=np.asfortranarray(K)),
                numpy_group_slack_svm(K, y, groups, C, tol=1e-8, max_iter=LIMIT))
    for max_iter in (0, 1, int(rng.integers(2, 40))):
        assert_same(group_slack_svm(K, y, groups, C, tol=0.0, max_iter=max_iter),
                    numpy_group_slack_svm(K, y, groups, C, tol=0.0, max_iter=max_iter))
    # another kernel on the same examples (a wider RBF of K's distances, or K shrunk to
    # its diagonal's scale), as MI-SVM's next witness set gives
    K2 = K ** 0.7 if np.all(K > 0) else 0.5 * K + 0.5 * np.diag(np.diag(K))
    other = numpy_group_slack_svm(K2, y, groups, C, max_iter=LIMIT)[0]
    for kernel, alpha0 in ((K, other), (K2, expected[0]), (K, expected[0])):
        assert_same(group_slack_svm(kernel, y, groups, C, alpha0=alpha0, tol=1e-6,
                                    max_iter=LIMIT),
                    numpy_group_slack_svm(kernel, y, groups, C, alpha0=alpha0, tol=1e-6,
                                          max_iter=LIMIT))
    above_caps = 2.0 * C * np.bincount(groups)[groups] ** -1.0 * (expected[0] > 0)
    for alpha0 in (above_caps, rng.uniform(size=len(y)) * C):
        assert_same(group_slack_svm(K, y, groups, C, alpha0=alpha0, max_iter=25),
                    numpy_group_slack_svm(K, y, groups, C, alpha0=alpha0, max_iter=25))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_compiled_smo_equals_the_numpy_smo_on_tiny_problems(n):
    """One, two and three examples, every labelling and grouping: no feasible pair (one
    label only), one pair, a group of two at its cap."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 2))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    for bits in range(2 ** n):
        y = np.where([(bits >> k) & 1 for k in range(n)], 1.0, -1.0)
        for groups in {tuple(np.arange(n)), tuple(np.cumsum(np.r_[0, y[1:] != y[:-1]]))}:
            for C in (1e-4, 1.0, 1e4):
                groups_ = np.asarray(groups)
                assert_same(group_slack_svm(K, y, groups_, C),
                            numpy_group_slack_svm(K, y, groups_, C))


def test_random_problems_reach_every_kind_of_step():
    """The random problems above exercise the solver's branches: steps within a group at its
    cap (the two examples changed by a step share a group; replayed step by step through
    max_iter), solutions with free examples (the bias from the KKT equalities) and without
    (the bias from the primal's breakpoints), runs stopped by the iteration limit."""
    within = free = no_free = stopped = 0
    for seed in range(60):
        K, y, groups, C, _ = random_problem(seed)
        previous = np.zeros(len(y))
        for steps in range(1, 40):
            a = group_slack_svm(K, y, groups, C, tol=0.0, max_iter=steps)[0]
            changed = np.flatnonzero(a != previous)
            within += len(changed) == 2 and groups[changed[0]] == groups[changed[1]]
            previous = a
        a = group_slack_svm(K, y, groups, C, tol=1e-8, max_iter=LIMIT)[0]
        eps = 1e-12 * max(1.0, C)
        sums = np.bincount(groups, a)
        has_free = np.any((a > 1e-8 * C) & ((C - sums)[groups] > C * 1e-8))
        free += has_free
        no_free += not has_free
        stopped += not group_slack_svm(K, y, groups, C, tol=0.0, max_iter=3)[2]
    assert within >= 100 and free >= 10 and no_free >= 5 and stopped >= 30


def _fit_both(bags, y, monkeypatch, **params):
    new = MISVM(**params).fit(bags, y)
    with monkeypatch.context() as m:
        m.setattr(misvm_module, "group_slack_svm", numpy_group_slack_svm)
        old = MISVM(**params).fit(bags, y)
    return new, old


@pytest.mark.parametrize("n, m", [(30, 17), (200, 150), (300, 128)])
def test_gather_block_copies_the_kernel_block(n, m):
    """MI-SVM's Gram block from K (row- or column-major) into a column-major Gram matrix
    equals numpy's fancy-indexed copy, and leaves the rest of the matrix alone (one tile,
    several with a partial last one, whole tiles)."""
    rng = np.random.default_rng(0)
    K = rng.normal(size=(n, n))
    idx = np.sort(rng.choice(n, m, replace=False))
    for src in (K, np.asfortranarray(K)):
        out = np.full((m + 3, m + 3), np.pi, order="F")
        gather_block(src, idx, out, 3)
        np.testing.assert_array_equal(out[3:, 3:], K[np.ix_(idx, idx)])
        assert np.all(out[:3] == np.pi) and np.all(out[:, :3] == np.pi)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_misvm_fit_is_unchanged_by_the_compiled_solver(monkeypatch, n_classes):
    """MI-SVM on a two- and a three-class problem (the Gram blocks gathered from K's rows,
    from its column-major copy), warm-started QPs and all: the same weights, biases and
    decision values with the numpy solver in place of the compiled one."""
    bags, y = make_mi(45, seed=4, n_classes=n_classes)
    for C in (0.1, 10.0, 1e3):
        new, old = _fit_both(bags, y, monkeypatch, C=C, gamma=0.3)
        np.testing.assert_array_equal(new.support_, old.support_)
        np.testing.assert_array_equal(new.dual_coef_, old.dual_coef_)
        np.testing.assert_array_equal(new.intercept_, old.intercept_)
        np.testing.assert_array_equal(new.n_iter_, old.n_iter_)
        np.testing.assert_array_equal(new.decision_function(bags), old.decision_function(bags))


def test_misvm_fit_on_musk1_is_unchanged_by_the_compiled_solver(data_mirror, monkeypatch):
    """MI-SVM on 40 MUSK1 bags (Dietterich et al.'s molecules, real features): the same
    coefficients and bias with the numpy solver."""
    from mlkit.datasets import load_dataset

    data = load_dataset("musk1")
    idx = np.random.default_rng(0).permutation(len(data.bags))[:40]
    part = data.subset(idx)
    bags, y = part.inputs, np.asarray(part.target)
    assert len(np.unique(y)) == 2
    for C in (1.0, 100.0):
        new, old = _fit_both(bags, y, monkeypatch, C=C, gamma="scale")
        np.testing.assert_array_equal(new.support_, old.support_)
        np.testing.assert_array_equal(new.dual_coef_, old.dual_coef_)
        np.testing.assert_array_equal(new.intercept_, old.intercept_)
