"""LM3FE's exact block-coordinate scheme (``scheme="exact"``): the Newton W-step, the L2,1
proximal map, monotone FISTA for the U- and theta-steps, and the monotone objective of
Sec. IV-C of Luo et al. (TIP 2016) block step by block step, on planted and real data."""

import os
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

from mlkit.methods.multimodal import LM3FE, LM3FT
from mlkit.methods.multimodal import _losses as L
from mlkit.methods.multimodal.lm3fe import block_rises

from .test_lm3fe import _fd, _planted, _problem


def _w_problem(seed=0, N=30, C=3, sigma=0.5):
    Xs, Y, s, U, theta, W, b = _problem(seed, N=N, C=C)
    return L.latent(Xs, U, theta), Y, s, W, b, sigma


def test_w_task_derivatives_gradient_and_hessian_vs_finite_differences():
    Z, Y, s, W, b, sigma = _w_problem(1)
    Wt = np.vstack([W, b]) * 0.3
    kw = dict(sigma=sigma, gamma_A=0.4)
    f, g, H = L.w_task_derivatives(Z, Y, s, Wt, **kw)
    # f is the per-task objective of the estimator's objective (the W-step's C problems)
    np.testing.assert_allclose(f, L.objective([Z], Y, s, [np.eye(3)], np.ones(1), Wt[:-1],
                                              Wt[-1], sigma=sigma, gamma_A=0.4, gamma_B=0,
                                              gamma_C=0, per_task=True))
    np.testing.assert_allclose(g, _fd(lambda X: L.w_task_derivatives(Z, Y, s, X, **kw)[0].sum(),
                                      Wt), atol=1e-6)
    for c in range(3):                       # H_c is the derivative of g_c in [w_c; b_c]
        def gc(x, c=c):
            X = Wt.copy()
            X[:, c] = x
            return L.w_task_derivatives(Z, Y, s, X, hessian=False, **kw)[1][:, c]
        num = np.column_stack([(gc(Wt[:, c] + e) - gc(Wt[:, c] - e)) / 2e-7
                               for e in 1e-7 * np.eye(4)])
        np.testing.assert_allclose(H[c], num, atol=1e-4)
        assert np.all(np.linalg.eigvalsh(H[c]) >= -1e-12)     # convex


@pytest.mark.parametrize("gamma_A", [0.3, 1e-4])
def test_w_step_newton_reaches_the_optimum_of_an_independent_solver(gamma_A):
    Z, Y, s, W, b, sigma = _w_problem(2)
    Wn, bn, n, gn = L.w_step_newton(Z, Y, s, np.zeros_like(W), np.zeros(3), sigma=sigma,
                                    gamma_A=gamma_A)
    assert gn.max() <= 1e-8 and n < 100
    for c in range(3):
        def fc(x, c=c):
            X = np.zeros((4, 3))
            X[:, c] = x
            return L.w_task_derivatives(Z, Y, s, X, sigma=sigma, gamma_A=gamma_A,
                                        hessian=False)[0][c]
        ref = minimize(fc, np.zeros(4), method="BFGS", options=dict(gtol=1e-11))
        mine = fc(np.r_[Wn[:, c], bn[c]])
        assert mine <= ref.fun + 1e-10 * max(1.0, abs(ref.fun))
    # from any start, the same optimum; no task's objective ever above its start
    W0, b0 = np.random.default_rng(0).normal(size=(3, 3)) * 3, np.ones(3)
    f0 = L.w_task_derivatives(Z, Y, s, np.vstack([W0, b0]), sigma=sigma, gamma_A=gamma_A,
                              hessian=False)[0]
    W2, b2, _, _ = L.w_step_newton(Z, Y, s, W0, b0, sigma=sigma, gamma_A=gamma_A)
    f2 = L.w_task_derivatives(Z, Y, s, np.vstack([W2, b2]), sigma=sigma, gamma_A=gamma_A,
                              hessian=False)[0]
    f1 = L.w_task_derivatives(Z, Y, s, np.vstack([Wn, bn]), sigma=sigma, gamma_A=gamma_A,
                              hessian=False)[0]
    assert np.all(f2 <= f0) and np.allclose(f2, f1, rtol=1e-10, atol=1e-10)


def test_prox_l21_is_the_closed_form_minimiser():
    rng = np.random.default_rng(3)
    U = rng.normal(size=(9, 4))
    U[2] *= 0.05                                             # a row inside the threshold
    t = 0.6
    P = L.prox_l21(U, t)
    norms = np.linalg.norm(U, axis=1)
    for j in range(9):                                        # row by row: the closed form
        expect = 0.0 if norms[j] <= t else (1 - t / norms[j]) * U[j]
        np.testing.assert_allclose(P[j], expect, atol=1e-15)
        ref = minimize(lambda x, j=j: 0.5 * np.sum((x - U[j]) ** 2) + t * np.linalg.norm(x),
                       U[j], method="Powell", options=dict(xtol=1e-10, ftol=1e-14))
        np.testing.assert_allclose(P[j], ref.x, atol=1e-5)
    assert np.all(P[2] == 0)
    np.testing.assert_array_equal(L.prox_l21(np.zeros((3, 2)), 1.0), 0.0)


def test_mfista_is_monotone_and_meets_the_group_lasso_optimality_conditions():
    rng = np.random.default_rng(4)
    A, B, lam = rng.normal(size=(15, 10)), rng.normal(size=(15, 3)), 4.0
    smooth = lambda X: (0.5 * np.sum((A @ X - B) ** 2), A.T @ (A @ X - B))
    seen = []

    def penalty(X):
        return lam * L.l21_norm(X)

    def smooth_seen(X):
        f, g = smooth(X)
        seen.append(f + penalty(X))
        return f, g

    X, n, gmap = L.mfista(np.ones((10, 3)), smooth, penalty,
                          lambda V, st: L.prox_l21(V, lam * st), np.linalg.norm(A, 2) ** 2,
                          tol=1e-12, max_iter=20000)
    assert gmap <= 1e-12 * max(1.0, smooth(X)[0] + penalty(X)) and n < 20000
    # optimality (KKT) of min 0.5 ||A X - B||^2 + lam ||X||_{2,1}, checked independently
    G = A.T @ (A @ X - B)
    rows = np.linalg.norm(X, axis=1)
    assert (rows == 0).any() and (rows > 0).any()
    for j in range(10):
        if rows[j] > 0:
            np.testing.assert_allclose(G[j] + lam * X[j] / rows[j], 0.0, atol=1e-7)
        else:
            assert np.linalg.norm(G[j]) <= lam + 1e-7
    # the returned iterates never raise F
    F = []
    X = np.ones((10, 3))
    for k in (1, 2, 3, 5, 8, 13, 21, 34):
        Xk = L.mfista(X, smooth, penalty, lambda V, st: L.prox_l21(V, lam * st),
                      np.linalg.norm(A, 2) ** 2, tol=0.0, max_iter=k)[0]
        F.append(smooth(Xk)[0] + penalty(Xk))
    assert np.all(np.diff(F) <= 1e-12)


def test_u_and_theta_prox_steps_reach_independent_optima():
    Xs, Y, s, U, theta, W, b = _problem(5, dims=(5, 3, 4))
    pen = dict(sigma=0.5, gamma_A=0.0, gamma_B=0.7, gamma_C=0.2)
    O = lambda UU, th=theta: L.objective(Xs, Y, s, UU, th, W, b, **pen)
    Uv, n, gm = L.u_step_prox(Xs, Y, s, U, theta, W, b, 0, sigma=0.5, gamma_B=0.7, tol=1e-12,
                              max_iter=20000)
    assert O([Uv, U[1], U[2]]) <= O(U)
    ref = minimize(lambda x: O([x.reshape(U[0].shape), U[1], U[2]]), U[0].ravel(),
                   method="Powell", options=dict(xtol=1e-10, ftol=1e-14, maxiter=400000))
    assert O([Uv, U[1], U[2]]) <= ref.fun + 1e-8 * abs(ref.fun)
    U2 = [Uv, U[1], U[2]]
    P = L.modality_scores(Xs, U2)
    th, n, gm = L.theta_step_prox(P, Y, s, theta, W, b, sigma=0.5, gamma_C=0.2, tol=1e-13,
                                  max_iter=20000)
    assert np.all(th >= 0) and O(U2, th) <= O(U2)
    ref = minimize(lambda t: O(U2, t), theta, method="L-BFGS-B", bounds=[(0, None)] * 3,
                   options=dict(gtol=1e-13, ftol=1e-16))
    assert O(U2, th) <= ref.fun + 1e-9 * abs(ref.fun)
    np.testing.assert_allclose(th, ref.x, atol=1e-4)


def test_block_rises_counts_the_rises_of_each_kind_of_block():
    trace = [("start", 10.0), ("W", 8.0), ("U1", 7.0), ("U2", 7.5), ("theta", 7.5),
             ("W", 7.9), ("U1", 7.0), ("U2", 6.0), ("theta", 5.0), ("W", 4.0)]
    r = block_rises(trace)
    assert r["W"] == {"steps": 3, "rises": 1, "max_rise": pytest.approx(0.4 / 8)}
    assert r["U"] == {"steps": 4, "rises": 1, "max_rise": pytest.approx(0.5 / 8)}
    assert r["theta"] == {"steps": 2, "rises": 0, "max_rise": 0.0}


def _assert_no_block_rises(m, rel=1e-9):
    o = np.array([v for _, v in m.block_objective_])
    assert np.all(np.diff(o) <= rel * abs(m.objective_[0])), np.diff(o).max() / o[1]
    assert all(r["rises"] == 0 or r["max_rise"] <= rel
               for r in block_rises(m.block_objective_).values())


@pytest.mark.parametrize("kw", [dict(), dict(u_init="centered", gamma_A=1e-4, gamma_B=1e-4,
                                             gamma_C=1e-4)])
def test_exact_scheme_no_block_step_raises_the_objective_planted(kw):
    views, y = _planted(6)
    m = LM3FE(scheme="exact", max_iter=15, tol=0.0, random_state=0, **kw).fit(views, y)
    _assert_no_block_rises(m)
    assert m.objective_[-1] < m.objective_[0] and np.all(m.theta_ >= 0)
    names = [n for n, _ in m.block_objective_]
    assert names[:6] == ["start", "W", "U1", "U2", "theta", "W"]
    # the released scheme's options do not touch the exact one
    m2 = LM3FE(scheme="exact", max_iter=15, tol=0.0, random_state=0, w_restart=True,
               keep_best=False, lipschitz="spectral", sub_tol=0.5, **kw).fit(views, y)
    np.testing.assert_array_equal(m.objective_, m2.objective_)


def test_released_scheme_is_the_default_and_exact_differs():
    views, y = _planted(7)
    a = LM3FE(max_iter=4, random_state=0).fit(views, y)
    b = LM3FE(scheme="released", max_iter=4, random_state=0).fit(views, y)
    c = LM3FE(scheme="exact", max_iter=4, random_state=0).fit(views, y)
    np.testing.assert_array_equal(a.objective_, b.objective_)
    assert c.objective_ != a.objective_
    assert LM3FT(scheme="exact").get_params()["scheme"] == "exact"
    with pytest.raises(ValueError, match="scheme"):
        LM3FE(scheme="newton").fit(views, y)


def _mirror():
    mirror = os.environ.get("MLKIT_DATA_MIRROR")
    if not mirror or not Path(mirror).is_dir():
        pytest.skip("MLKIT_DATA_MIRROR does not name a folder with the real datasets")


@pytest.mark.parametrize("name", ["msrc-v1", "mfeat", "scene15", "emotions-views"])
def test_exact_scheme_no_block_step_raises_the_objective_on_the_objective_targets_data(name):
    """lm3fe/objective's datasets, through the real loaders: a small seeded draw (4 labelled
    per class or positives per label) and 8 outer iterations at the objective target's
    weights."""
    _mirror()
    from mlkit.registry import DATASETS

    data = DATASETS.get(name)()
    y = np.asarray(data.y)
    rng = np.random.default_rng(0)
    if y.ndim == 1:
        idx = np.concatenate([rng.choice(np.flatnonzero(y == c), 4, replace=False)
                              for c in np.unique(y)])
    else:
        idx = np.unique(np.concatenate([rng.choice(np.flatnonzero(y[:, j] == 1), 4,
                                                   replace=False) for j in range(y.shape[1])]))
    views = [X[idx] for X in data.views]
    m = LM3FE(scheme="exact", max_iter=8, tol=0.0, random_state=0).fit(views, y[idx])
    _assert_no_block_rises(m)
    released = LM3FE(max_iter=8, tol=0.0, w_restart=True, keep_best=False,
                     random_state=0).fit(views, y[idx])
    assert m.objective_[-1] < released.objective_[-1]
