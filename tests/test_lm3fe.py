"""LM3FE (Luo et al., TIP 2016): the smoothed loss, the three block solvers and the estimator."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV

from mlkit.datasets._containers import Views
from mlkit.methods.multimodal import LM3FE, LM3FS, LM3FT
from mlkit.methods.multimodal import _losses as L


def _problem(seed=0, N=12, dims=(5, 3), C=3):
    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(N, d)) for d in dims]
    Y = np.where(rng.random((N, C)) < 0.4, 1.0, -1.0)
    s = L.inf_norms(Xs)
    U = [rng.normal(size=(d, C)) for d in dims]
    theta = rng.random(len(dims)) + 0.2
    W = rng.normal(size=(C, C))
    b = rng.normal(size=C)
    return Xs, Y, s, U, theta, W, b


def _fd(f, x, h=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        g[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return g


PEN = dict(sigma=0.5, gamma_A=0.3, gamma_B=0.7, gamma_C=0.2)


# ------------------------------------------------------------------ smoothed hinge loss
def test_smoothed_hinge_is_the_max_over_u_and_its_derivative_is_minus_u_y():
    rng = np.random.default_rng(1)
    Y = np.where(rng.random((50, 2)) < 0.5, 1.0, -1.0)
    F = rng.normal(scale=2, size=(50, 2))
    s = rng.random(50) + 0.1
    sigma = 0.7
    loss, u = L.smoothed_hinge(Y, F, s, sigma)
    grid = np.linspace(0, 1, 20001)                           # brute-force max over u in [0, 1]
    m = (1 - Y * F)[..., None]
    brute = (grid * m - 0.5 * sigma * s[:, None, None] * grid ** 2).max(axis=-1)
    np.testing.assert_allclose(loss, brute, atol=1e-7)
    # the three pieces of Eq. 8
    k = (sigma * s)[:, None]
    piece = np.where(Y * F > 1, 0, np.where(Y * F < 1 - k, (1 - Y * F) - k / 2,
                                            (1 - Y * F) ** 2 / (2 * k)))
    np.testing.assert_allclose(loss, piece, atol=1e-12)
    g = _fd(lambda FF: L.smoothed_hinge(Y, FF, s, sigma)[0].sum(), F)
    np.testing.assert_allclose(g, -u * Y, atol=1e-6)


def test_smoothed_hinge_tends_to_the_hinge():
    rng = np.random.default_rng(2)
    Y = np.where(rng.random((40, 3)) < 0.5, 1.0, -1.0)
    F = rng.normal(size=(40, 3))
    s = rng.random(40) + 0.5
    gaps = []
    for sigma in [1.0, 1e-1, 1e-2, 1e-3, 1e-5]:
        gap = L.hinge(Y, F) - L.smoothed_hinge(Y, F, s, sigma)[0]
        assert gap.min() >= -1e-12 and gap.max() <= sigma * s.max() / 2 + 1e-12
        gaps.append(gap.max())
    assert gaps[-1] < 1e-5 and np.all(np.diff(gaps) <= 0)


# ------------------------------------------------------------------ gradients vs finite differences
def test_grad_W_and_b():
    Xs, Y, s, U, theta, W, b = _problem()
    Z = L.latent(Xs, U, theta)
    gW, gb = L.grad_W(Z, Y, s, W, b, sigma=PEN["sigma"], gamma_A=PEN["gamma_A"])
    f = lambda W_: L.objective(Xs, Y, s, U, theta, W_, b, **PEN)
    np.testing.assert_allclose(gW, _fd(f, W), atol=1e-5)
    f = lambda b_: L.objective(Xs, Y, s, U, theta, W, b_, **PEN)
    np.testing.assert_allclose(gb, _fd(f, b), atol=1e-5)


@pytest.mark.parametrize("v", [0, 1])
def test_grad_U_loss_and_reweighted_l21(v):
    Xs, Y, s, U, theta, W, b = _problem()
    pen = dict(PEN, gamma_B=0.0)
    D = L.reweight_diag(U[v], 1e-8)

    def f(Uv):
        UU = list(U)
        UU[v] = Uv
        # the surrogate the U-step descends: loss + gamma_B tr(U^T D U) with D fixed
        return L.objective(Xs, Y, s, UU, theta, W, b, **pen) + 0.7 * np.sum(D[:, None] * Uv ** 2)

    g = L.grad_U(Xs, Y, s, U, theta, W, b, v, sigma=PEN["sigma"], D=D, gamma_B=0.7)
    np.testing.assert_allclose(g, _fd(f, U[v]), atol=1e-5)
    # at U_t the re-weighted gradient is the L2,1 gradient itself
    g_true = _fd(lambda Uv: 0.7 * L.l21_norm(Uv), U[v])
    np.testing.assert_allclose(2 * 0.7 * D[:, None] * U[v], g_true, atol=1e-5)


def test_grad_U_sparse_view_equals_dense():
    Xs, Y, s, U, theta, W, b = _problem()
    Xsp = [sp.csr_matrix(X) for X in Xs]
    a = L.grad_U(Xs, Y, s, U, theta, W, b, 0, sigma=0.5)
    c = L.grad_U(Xsp, Y, s, U, theta, W, b, 0, sigma=0.5)
    np.testing.assert_allclose(a, c, atol=1e-12)


def test_grad_theta():
    Xs, Y, s, U, theta, W, b = _problem()
    P = L.modality_scores(Xs, U)
    g = L.grad_theta(P, Y, s, theta, W, b, sigma=PEN["sigma"], gamma_C=PEN["gamma_C"])
    f = lambda th: L.objective(Xs, Y, s, U, th, W, b, **PEN)
    np.testing.assert_allclose(g, _fd(f, theta), atol=1e-5)


# ------------------------------------------------------------------ the block solvers
def test_w_step_lipschitz_bound_and_optimum():
    Xs, Y, s, U, theta, W, b = _problem(3)
    Z = L.latent(Xs, U, theta)
    sig, gA = 0.5, 0.3
    Lw = len(Y) / sig * np.max((np.sum(Z ** 2, 1) + 1) / s) + 2 * gA
    rng = np.random.default_rng(0)
    for _ in range(20):                                       # L bounds the gradient's variation
        W1, W2 = rng.normal(size=W.shape) * 3, rng.normal(size=W.shape) * 3
        b1, b2 = rng.normal(size=3), rng.normal(size=3)
        g1, h1 = L.grad_W(Z, Y, s, W1, b1, sigma=sig, gamma_A=gA)
        g2, h2 = L.grad_W(Z, Y, s, W2, b2, sigma=sig, gamma_A=gA)
        for c in range(3):                                    # per task
            dg = np.linalg.norm(np.r_[g1[:, c] - g2[:, c], h1[c] - h2[c]])
            dx = np.linalg.norm(np.r_[W1[:, c] - W2[:, c], b1[c] - b2[c]])
            assert dg <= Lw * dx + 1e-9
    Zs = np.hstack([Z, np.ones((len(Y), 1))]) / np.sqrt(s)[:, None]
    Ls = np.linalg.norm(Zs, 2) ** 2 / sig + 2 * gA            # lipschitz="spectral"
    assert Ls <= Lw
    for _ in range(20):
        W1, W2 = rng.normal(size=W.shape) * 0.3, rng.normal(size=W.shape) * 0.3
        g1, h1 = L.grad_W(Z, Y, s, W1, b, sigma=sig, gamma_A=gA)
        g2, h2 = L.grad_W(Z, Y, s, W2, b, sigma=sig, gamma_A=gA)
        for c in range(3):
            assert np.linalg.norm(g1[:, c] - g2[:, c]) <= Ls * np.linalg.norm(W1[:, c] - W2[:, c])
    Wn, bn, _ = L.w_step(Z, Y, s, np.zeros_like(W), np.zeros(3), sigma=sig, gamma_A=gA,
                         tol=0.0, max_iter=3000)
    Wsp, bsp, _ = L.w_step(Z, Y, s, np.zeros_like(W), np.zeros(3), sigma=sig, gamma_A=gA,
                           tol=0.0, max_iter=3000, lipschitz="spectral")

    def f(x):
        Wx, bx = x[:9].reshape(3, 3), x[9:]
        return L.objective(Xs, Y, s, U, theta, Wx, bx, sigma=sig, gamma_A=gA, gamma_B=0,
                           gamma_C=0)

    ref = minimize(f, np.zeros(12), method="L-BFGS-B", options=dict(gtol=1e-10, ftol=1e-14))
    assert f(np.r_[Wn.ravel(), bn]) <= ref.fun + 1e-4 * abs(ref.fun)
    assert f(np.r_[Wsp.ravel(), bsp]) <= ref.fun + 1e-4 * abs(ref.fun)


def test_u_step_never_increases_the_objective_and_reaches_the_optimum():
    Xs, Y, s, U, theta, W, b = _problem(4)
    O = lambda UU: L.objective(Xs, Y, s, UU, theta, W, b, **PEN)
    before = O(U)
    U0, _ = L.u_step(Xs, Y, s, U, theta, W, b, 0, sigma=0.5, gamma_B=0.7)
    assert O([U0, U[1]]) <= before + 1e-12
    Ulong, _ = L.u_step(Xs, Y, s, U, theta, W, b, 0, sigma=0.5, gamma_B=0.7, tol=0.0,
                        max_iter=3000)
    ref = minimize(lambda x: O([x.reshape(U[0].shape), U[1]]), U[0].ravel(), method="Powell",
                   options=dict(xtol=1e-8, ftol=1e-12, maxiter=200000))
    assert O([Ulong, U[1]]) <= ref.fun + 1e-3 * abs(ref.fun)


def test_l21_majoriser_and_reweighting_step():
    rng = np.random.default_rng(5)
    Ut = rng.normal(size=(8, 3))
    Ut[2] = 0.01
    D = L.reweight_diag(Ut, 0.0)
    maj = lambda U: np.sum(D[:, None] * U * U) + L.l21_norm(Ut) / 2
    assert maj(Ut) == pytest.approx(L.l21_norm(Ut))           # tight at U_t
    for _ in range(200):
        U = rng.normal(size=Ut.shape) * rng.random() * 3
        assert L.l21_norm(U) <= maj(U) + 1e-12
    # one re-weighted step on a least-squares problem: argmin ||A U - B||^2 + g tr(U^T D U)
    A, B, g = rng.normal(size=(20, 8)), rng.normal(size=(20, 3)), 2.0
    obj = lambda U: np.sum((A @ U - B) ** 2) + g * L.l21_norm(U)
    U = np.linalg.lstsq(A, B, rcond=None)[0]
    for _ in range(30):                                       # Nie et al.'s re-weighting loop
        D = L.reweight_diag(U, 0.0)
        Unew = np.linalg.solve(A.T @ A + g * np.diag(D), A.T @ B)
        surrogate = lambda V: np.sum((A @ V - B) ** 2) + g * np.sum(D[:, None] * V * V)
        assert surrogate(Unew) <= surrogate(U) + 1e-10      # the step minimises the majoriser
        assert obj(Unew) <= obj(U) + 1e-10                  # hence the true objective
        U = Unew


def test_theta_step_nonnegative_and_matches_bounded_optimum():
    Xs, Y, s, U, theta, W, b = _problem(6, dims=(5, 3, 4))
    U[1] = -U[1] * 3                                          # a modality that hurts: theta_1 -> 0
    P = L.modality_scores(Xs, U)
    th, _ = L.theta_step(P, Y, s, theta, W, b, sigma=0.5, gamma_C=0.2, tol=0.0, max_iter=5000)
    assert np.all(th >= 0)
    f = lambda t: L.objective(Xs, Y, s, U, t, W, b, sigma=0.5, gamma_A=0, gamma_B=0,
                              gamma_C=0.2)
    ref = minimize(f, theta, method="L-BFGS-B", bounds=[(0, None)] * 3,
                   options=dict(gtol=1e-12, ftol=1e-15))
    assert f(th) <= ref.fun + 1e-6 * abs(ref.fun)
    np.testing.assert_allclose(th, ref.x, atol=1e-3)
    short, _ = L.theta_step(P, Y, s, theta, W, b, sigma=0.5, gamma_C=0.2)
    assert np.all(short >= 0) and f(short) <= f(theta) + 1e-12


# ------------------------------------------------------------------ the estimator
def _planted(seed=0, n_per=20, noise=(12, 10), sparse=False):
    """4 classes: the first 3 columns of modality "a" carry bit 1 of the class, the first 2 of
    "b" bit 2 (both modalities are needed); every other column is noise."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(4), n_per)
    N = len(y)
    bit1, bit2 = (y % 2) * 2 - 1.0, (y // 2) * 2 - 1.0
    X1 = np.hstack([bit1[:, None] * [1.5, 1.0, 0.8] + rng.normal(scale=0.6, size=(N, 3)),
                    rng.normal(size=(N, noise[0]))])
    X2 = np.hstack([bit2[:, None] * [1.5, 1.0] + rng.normal(scale=0.6, size=(N, 2)),
                    rng.normal(size=(N, noise[1]))])
    if sparse:
        X1[np.abs(X1) < 0.5] = 0
        X2[np.abs(X2) < 0.5] = 0
    return Views([X1, X2], ["a", "b"]), y


def test_objective_does_not_increase_and_theta_nonnegative():
    views, y = _planted(1)
    m = LM3FE(gamma_A=0.1, gamma_B=0.1, gamma_C=0.1, max_iter=15, random_state=0).fit(views, y)
    O = np.array(m.objective_)
    assert len(O) == m.n_iter_ + 1 and m.n_iter_ >= 2
    assert np.all(np.diff(O) <= 1e-9 * O[0])
    assert O[-1] < O[0]
    assert np.all(m.theta_ >= 0)
    extras = m.run_record_extras()
    assert extras["n_iter"] == m.n_iter_ and len(extras["theta"]) == 2


@pytest.mark.parametrize("kw", [dict(w_restart=True), dict(lipschitz="spectral",
                                                            u_init="centered")])
def test_objective_monotone_with_warm_w_and_multilabel_targets(kw):
    views, y = _planted(2)
    Y = np.column_stack([y == 0, y != 1, y == 2]).astype(int)
    m = LM3FE(max_iter=10, random_state=1, **kw).fit(views, Y)
    assert np.all(np.diff(m.objective_) <= 1e-9 * m.objective_[0])
    assert np.all(m.theta_ >= 0)
    assert m.predict(views).shape == Y.shape and set(np.unique(m.predict(views))) <= {0, 1}


def test_lm3fs_ranks_the_informative_features_first():
    views, y = _planted(3)
    m = LM3FE(gamma_A=0.1, gamma_B=1.0, gamma_C=0.1, max_iter=20, random_state=0).fit(views, y)
    assert set(m.feature_ranking_[0][:3]) == {0, 1, 2}
    assert set(m.feature_ranking_[1][:2]) == {0, 1}
    kept = m.select(20)                                       # ceil(20% of 15) = 3, of 12 = 3
    assert [k.tolist()[:2] for k in kept] == [[0, 1], [0, 1]] and kept[0].tolist() == [0, 1, 2]
    kept = m.select(10)                                       # ceil(10% of 15) = 2, of 12 = 2
    assert [k.tolist() for k in kept] == [[0, 1], [0, 1]]
    sub = m.select(10, views)
    assert sub.dims == [2, 2] and sub.names == ["a", "b"]
    np.testing.assert_array_equal(sub.views[1], views.views[1][:, :2])


def test_sparse_and_dense_views_give_the_same_model():
    views, y = _planted(4, sparse=True)
    spv = Views([sp.csr_matrix(X) for X in views.views], views.names)
    kw = dict(max_iter=5, random_state=0)
    a, c = LM3FE(**kw).fit(views, y), LM3FE(**kw).fit(spv, y)
    np.testing.assert_allclose(a.objective_, c.objective_, rtol=1e-10)
    np.testing.assert_allclose(a.decision_function(views), c.decision_function(spv), atol=1e-8)
    f1 = LM3FS(percent=20, **kw).fit(views, y)
    f2 = LM3FS(percent=20, **kw).fit(spv, y)
    np.testing.assert_array_equal(f1.predict(views), f2.predict(spv))


@pytest.mark.parametrize("cls", [LM3FE, LM3FS, LM3FT])
def test_sklearn_basics(cls):
    views, y = _planted(5)
    est = cls(max_iter=3, random_state=0)
    with pytest.raises(NotFittedError):
        est.predict(views)
    params = est.get_params()
    assert est.fit(views, y) is est and est.get_params() == params
    again = clone(est).fit(views, y)
    np.testing.assert_array_equal(est.decision_function(views), again.decision_function(views))
    assert est.decision_function(views).shape == (len(y), 4)
    assert est.predict(views).shape == y.shape
    with pytest.raises(ValueError, match="fitted on views"):
        est.predict([views.views[0]])


def test_bad_input_messages():
    views, y = _planted(6)
    with pytest.raises(ValueError, match="only one class"):
        LM3FE().fit(views, np.zeros_like(y))
    X0 = views.views[0].copy()
    X0[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LM3FE().fit([X0, views.views[1]], y)
    with pytest.raises(ValueError, match="sigma"):
        LM3FE(sigma=-1).fit(views, y)


def test_lm3fs_lm3ft_classify_planted_data_and_gridsearch_on_views():
    views, y = _planted(7, n_per=24)
    te = np.arange(len(y)) % 4 == 0
    for est in [LM3FS(percent=15, max_iter=10, random_state=0),
                LM3FT(max_iter=10, random_state=0, classifier="rls")]:
        est.fit(views[~te], y[~te])
        assert (est.predict(views[te]) == y[te]).mean() >= 0.9
    gs = GridSearchCV(LM3FS(max_iter=3, random_state=0), {"percent": [5, 50]}, cv=3)
    gs.fit(views, y)
    assert gs.best_params_["percent"] in (5, 50) and gs.predict(views).shape == y.shape


# ------------------------------------------------------------------ safeguards off (keep_best)
def _overshooting_quadratic():
    """f(x) = x^2 per problem with a step 1/L far too long (L = 0.4 < 2): the iterates
    overshoot, so the last one is not the best."""
    seen = []

    def fun_grad(X):
        seen.append(X.copy())
        return X * X, 2.0 * X

    return seen, fun_grad


@pytest.mark.parametrize("keep_best", [True, False])
def test_nesterov_returns_the_last_iterate_without_the_safeguard(keep_best):
    seen, fun_grad = _overshooting_quadratic()
    X, n = L.nesterov(np.array([1.0, -2.0]), fun_grad, lambda _: 0.4, tol=0.0, max_iter=6,
                      keep_best=keep_best)
    F = np.array([x * x for x in seen])                 # (iterates, problems)
    best = np.array(seen)[np.argmin(F, axis=0), [0, 1]]
    assert n == 6 and np.any(F[-1] > F.min(axis=0))     # the safeguard matters here
    np.testing.assert_array_equal(X, best if keep_best else seen[-1])


@pytest.mark.parametrize("keep_best", [True, False])
def test_ogm_returns_the_last_iterate_without_the_safeguard(keep_best):
    f = lambda th: float(np.sum((th - 3.0) ** 2))       # noqa: E731
    g = lambda th: 2.0 * (th - 3.0)                     # noqa: E731
    seen = []
    fun = lambda th: (seen.append(th.copy()), f(th))[1]  # noqa: E731
    th, k = L.ogm(np.array([0.0, 1.0]), g, fun, 0.3, tol=0.0, max_iter=5, keep_best=keep_best)
    F = [f(t) for t in seen]
    assert k == 5 and F[-1] > min(F)
    np.testing.assert_array_equal(th, seen[int(np.argmin(F))] if keep_best else seen[-1])


def test_keep_best_default_is_the_old_scheme_and_false_runs_the_papers():
    views, y = _planted(2)
    kw = dict(max_iter=6, sub_max_iter=15, random_state=0)
    default = LM3FE(**kw).fit(views, y)
    assert LM3FE().keep_best is True
    np.testing.assert_array_equal(default.objective_,
                                  LM3FE(keep_best=True, **kw).fit(views, y).objective_)
    paper = LM3FE(keep_best=False, w_restart=True, **kw).fit(views, y)
    safe = LM3FE(keep_best=True, w_restart=True, **kw).fit(views, y)
    assert not np.array_equal(paper.objective_, safe.objective_)
    assert np.all(np.diff(safe.objective_) <= 1e-9 * safe.objective_[0])
    for est in (LM3FS, LM3FT):
        assert est(keep_best=False).get_params()["keep_best"] is False
    assert np.all(np.isfinite(paper.objective_)) and len(paper.objective_) == 7


# ------------------------------------------------------------------ validation search cost
def test_validation_search_learns_once_per_weight_setting_and_lm3ft_reuses_it(monkeypatch):
    """The runner's validation search over gamma_A x gamma_B x gamma_C x percent learns LM3FE
    once per weight setting (percent is a post-fit parameter: refit_post retrains only the
    kNN), and LM3FT with the same weights on the same labelled samples learns nothing."""
    from types import SimpleNamespace

    from mlkit.experiment import validation_search
    from mlkit.methods.multimodal._base import LEARNED

    views, y = _planted(3, n_per=10)
    idx = np.arange(len(y))
    part = lambda m: SimpleNamespace(inputs=views[m], target=y[m])
    train, val, test = part(idx % 4 == 0), part(idx % 4 == 1), part(idx % 4 >= 2)
    learned = []
    orig = LM3FE._fit_model
    monkeypatch.setattr(LM3FE, "_fit_model",
                        lambda self, Xs, Ypm: (learned.append(
                            (self.gamma_A, self.gamma_B, self.gamma_C)), orig(self, Xs, Ypm))[1])
    LEARNED.clear()
    weights = {"gamma_A": [1e-3, 1e-1], "gamma_B": [1e-3, 1e-1], "gamma_C": [1e-3, 1e-1]}
    est, chosen, _, _, curves = validation_search(
        LM3FS(max_iter=2, sub_max_iter=10, random_state=0), {**weights, "percent": [10, 50, 100]},
        train, val, test, ["accuracy"], "accuracy")
    assert len(learned) == 8 and len(set(learned)) == 8          # not 8 x 3
    assert set(chosen) == {"gamma_A", "gamma_B", "gamma_C", "percent"}
    assert set(curves) == {"gamma_A", "gamma_B", "gamma_C", "percent"}
    # every weight's curve holds, at each value, the setting best on the validation part
    for k in weights:
        i = curves[k]["values"].index(chosen[k])
        assert curves[k]["validation"][i] == max(curves[k]["validation"])
    validation_search(LM3FT(max_iter=2, sub_max_iter=10, random_state=0), weights,
                      train, val, test, ["accuracy"], "accuracy")
    assert len(learned) == 8                                     # all eight reused
    LEARNED.clear()


# ------------------------------------------------------------------ runs sharing LM3FE: one task
_TINY = """paper: lm3fe
artifact: table1
render: lm3fe/table
title: tiny
datasets:
  - {name: multiview-synthetic, label: synth n=4, role: NUS-WIDE, protocol: {n_labelled: 4},
     params: {n_samples: 90, n_classes: 3, view_dims: [6, 5], n_informative: 2}}
methods:
  - {name: bsf, label: BSF, grid: {view: [0, 1]}}
  - {name: mtfs, label: MTFS, params: {max_iter: 30}, grid: {lam: [0.1], percent: [50, 100]}}
  - {name: lm3fs, label: LM3FS, params: {random_state: 0, max_iter: 2, sub_max_iter: 10},
     grid: {gamma_A: [0.001, 0.1], gamma_B: [0.01], percent: [50, 100]}}
  - {name: mtft, label: MTFT, params: {max_iter: 30}, grid: {lam: [0.1]}}
  - {name: lm3ft, label: LM3FT, params: {random_state: 0, max_iter: 2, sub_max_iter: 10},
     grid: {gamma_A: [0.001, 0.1], gamma_B: [0.01]}}
protocol: {split: labelled, test_size: 0.5, validation_size: 0.2, repeats: 2, seed: 0,
           n_labelled: 4}
metrics: [accuracy, macro_f1]
"""


def _tiny_spec(tmp_path):
    from mlkit.config import load_spec

    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(_TINY)
    return load_spec(cfg)


def _todo(spec):
    """The runner's todo list of ``spec`` (dataset label, method, split, key, path)."""
    from mlkit.datasets import load_dataset
    from mlkit.experiment import make_splits

    ds = spec.datasets[0]
    data = load_dataset(ds.name, params=ds.params)
    return [(ds.display, ds.method_as_run(m), s, None, None)
            for s in make_splits(data, ds.protocol_over(spec.protocol)) for m in spec.methods]


def test_runs_sharing_a_learned_model_are_one_task(tmp_path):
    """LM3FS and LM3FT of one split are one task (MTFS and MTFT another), BSF a task of its
    own; every run is in exactly one task and a task keeps the config's order."""
    from mlkit.experiment import _shared_learning_tasks

    todo = _todo(_tiny_spec(tmp_path))
    tasks = _shared_learning_tasks(todo)
    assert sorted(i for t in tasks for i in t) == list(range(len(todo)))
    named = [[(todo[i][2].repeat, todo[i][1].display) for i in t] for t in tasks]
    assert named == [t for r in (0, 1) for t in ([(r, "BSF")], [(r, "MTFS"), (r, "MTFT")],
                                                 [(r, "LM3FS"), (r, "LM3FT")])]
    assert LM3FS.learning_family == LM3FT.learning_family == "LM3FE"
    assert LM3FE.learning_family is None                  # the bare LM3FE caches nothing


def test_one_task_learns_lm3fe_once_per_weight_setting(tmp_path, monkeypatch):
    """A task running LM3FS then LM3FT of one split fits LM3FE once per (gamma_A, gamma_B)
    setting, not twice: LM3FT reuses what LM3FS learned in the same worker."""
    from mlkit.datasets import load_dataset
    from mlkit.experiment import _fit_and_score, _run_task, _shared_learning_tasks
    from mlkit.methods.multimodal._base import LEARNED
    from mlkit.registry import METHODS

    spec = _tiny_spec(tmp_path)
    todo = _todo(spec)
    ds = spec.datasets[0]
    data = load_dataset(ds.name, params=ds.params)
    task = next(t for t in _shared_learning_tasks(todo) if todo[t[0]][1].display == "LM3FS")
    learned = []
    orig = LM3FE._fit_model
    monkeypatch.setattr(LM3FE, "_fit_model", lambda self, Xs, Ypm: (
        learned.append((self.gamma_A, self.gamma_B)), orig(self, Xs, Ypm))[1])
    LEARNED.clear()
    calls = [(i, (data, todo[i][1], todo[i][2], spec.metrics, spec.curves,
                  METHODS.get(todo[i][1].name))) for i in task]
    done, exc = _run_task(_fit_and_score, calls)
    LEARNED.clear()
    assert exc is None and [i for i, _ in done] == task
    assert sorted(learned) == [(0.001, 0.01), (0.1, 0.01)]
    # the task's records are those of the runs done one at a time, each learning afresh
    for i, rec in done:
        alone = _fit_and_score(*calls[task.index(i)][1])
        LEARNED.clear()
        for k in ("metrics", "chosen", "validation", "grid_curves", "model", "test_extras"):
            assert rec[k] == alone[k], k


def test_a_failing_run_of_a_task_keeps_the_runs_finished_before_it():
    from mlkit.experiment import _run_task, _task_records

    def fn(x):
        return 10 // x

    done, exc = _run_task(fn, [(3, (5,)), (4, (0,)), (5, (1,))])
    assert done == [(3, 2)] and isinstance(exc, ZeroDivisionError)
    got = []
    with pytest.raises(ZeroDivisionError):
        for pair in _task_records(iter([([(0, 1)], None), (done, exc), ([(9, 9)], None)])):
            got.append(pair)
    assert got == [(0, 1), (3, 2)]


def test_grouped_parallel_dispatch_gives_the_records_of_the_sequential_one(tmp_path):
    """--jobs 2 (runs sharing LM3FE or MTFS's model packed into one task, in worker
    processes) writes the same records, under the same keys and paths, as --jobs 1."""
    import json

    from mlkit.experiment import run

    spec = _tiny_spec(tmp_path)
    one = run(spec, tmp_path / "one", jobs=1)
    two = run(spec, tmp_path / "two", jobs=2)
    assert one.computed == two.computed == 10

    def content(rec):
        rec = dict(rec)
        rec.pop("timings")                              # seconds differ run to run
        return json.dumps(rec, sort_keys=True)

    files = lambda root: sorted(p.relative_to(root) for p in root.glob("runs/*/*/*.json"))
    assert files(tmp_path / "one") == files(tmp_path / "two")
    assert len(files(tmp_path / "one")) == 10
    for rel in files(tmp_path / "one"):
        a = json.loads((tmp_path / "one" / rel).read_text())
        b = json.loads((tmp_path / "two" / rel).read_text())
        assert content(a) == content(b), rel
    assert [content(r) for r in one.records] == [content(r) for r in two.records]


# ------------------------------------------------------------------ speed-ups leave the numbers
# objective_ and theta_ of LM3FE fits on _planted(5, n_per=8), max_iter=4, computed before the
# sub-solvers were streamlined (one-problem Nesterov on floats, shared row norms, k computed
# once, the theta-step's tensordot as its one product, clip as maximum/minimum)
_BEFORE = {
    "default": ([56.70732803290419, 14.382094969901221, 1.7517657995777942,
                 0.45464129358983785, 0.45355698862992155],
                [0.7812027768169634, 0.7063070911249476]),
    "paper": ([56.72079257825875, 14.769309594553196, 4.732411804315569, 1.7907049064746663,
               1.167569842735641], [0.9057074736578123, 0.7954847196009057]),
    "spectral": ([43.55302585040151, 7.761720295287203, 3.7155861728970416, 3.538649702324444,
                  3.362582638990508], [0.6247778745271356, 0.6190886372652493]),
    "sparse": ([55.611926298813664, 14.336376640063428, 1.3810835440509888,
                0.5052022810628886, 0.5030145726904417], None),
}


@pytest.mark.parametrize("case, kw", [("default", {}),
                                      ("paper", dict(w_restart=True, keep_best=False)),
                                      ("spectral", dict(lipschitz="spectral", gamma_B=0.1)),
                                      ("sparse", {})])
def test_lm3fe_numbers_are_those_before_the_speed_up(case, kw):
    views, y = _planted(5, n_per=8, sparse=case == "sparse")
    m = LM3FE(random_state=0, max_iter=4, **kw).fit(views, y)
    objective, theta = _BEFORE[case]
    np.testing.assert_allclose(m.objective_, objective, rtol=1e-9, atol=0)
    if theta is not None:
        np.testing.assert_allclose(m.theta_, theta, rtol=1e-9, atol=0)


def test_nesterov_one_problem_path_equals_the_per_problem_path():
    """A single problem (the U-step's scalar objective) takes the float path; the same
    problem stacked twice takes the per-problem one: the same stop and the same point,
    near the minimiser of the quadratic."""
    rng = np.random.default_rng(3)
    M = rng.normal(size=(6, 6))
    A = M @ M.T + np.eye(6)
    c = rng.normal(size=(6, 1))
    L_A = float(np.linalg.eigvalsh(A).max())

    def per_column(X):                          # one quadratic per column of X
        AX = A @ X
        return np.einsum("ij,ij->j", X, 0.5 * AX - c), AX - c

    def scalar(X):
        F, G = per_column(X)
        return float(F[0]), G

    for keep_best in (True, False):
        X0 = rng.normal(size=(6, 1))
        one, n_one = L.nesterov(X0, scalar, lambda _: L_A, tol=1e-6, max_iter=500,
                                keep_best=keep_best)
        two, n_two = L.nesterov(np.hstack([X0, X0]), per_column, lambda _: L_A, tol=1e-6,
                                max_iter=500, keep_best=keep_best)
        assert n_one == n_two < 500
        np.testing.assert_allclose(one[:, 0], two[:, 0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(two[:, 0], two[:, 1], rtol=0, atol=0)
        # and it is a minimiser's neighbourhood: most of the gap to the optimum is closed
        f_opt = scalar(np.linalg.solve(A, c))[0]
        assert scalar(one)[0] - f_opt < 1e-2 * (scalar(X0)[0] - f_opt)


def test_nearest_neighbours_are_the_stable_argsort_ties_to_the_lower_index():
    from mlkit.methods.multimodal._base import _nearest

    rng = np.random.default_rng(0)
    D = rng.integers(0, 4, size=(50, 9)).astype(float)     # many ties
    for k in (1, 2, 5):
        np.testing.assert_array_equal(_nearest(D, k), np.argsort(D, axis=1, kind="stable")[:, :k])
