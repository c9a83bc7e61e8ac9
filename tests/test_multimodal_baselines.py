"""Baselines of LM3FE's tables (BSF, CAT, MTFS/MTFT, RFS/RFT, SSMVFS/SSMVFT, TMFS)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import RFE
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from mlkit.datasets._containers import Views
from mlkit.methods.multimodal import (BSF, CAT, LM3FE, LM3FS, LM3FT, MTFS, MTFT, RFS, RFT,
                                      SSMVFS, SSMVFT, TMFS)
from mlkit.methods.multimodal import baselines as B
from mlkit.methods.multimodal._base import Downstream, n_selected
from mlkit.registry import METHODS


def _planted(seed=0, n_per=15, noise=(10, 8)):
    """4 classes; columns 0-2 of "a" mark classes 0-2, columns 0-1 of "b" the two bits of the
    class (each informative column carries its own information); the rest is noise."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(4), n_per)
    N = len(y)
    Ma = 2.0 * np.vstack([np.eye(3), np.zeros(3)])
    Mb = 2.0 * np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    X1 = np.hstack([Ma[y] + rng.normal(scale=0.5, size=(N, 3)), rng.normal(size=(N, noise[0]))])
    X2 = np.hstack([Mb[y] + rng.normal(scale=0.5, size=(N, 2)), rng.normal(size=(N, noise[1]))])
    return Views([X1, X2], ["a", "b"]), y


def _onehot(y):
    return (y[:, None] == np.unique(y)).astype(float)


# ------------------------------------------------------------------ solvers
def test_rfs_iterations_decrease_the_objective():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 12))
    Y = _onehot(rng.integers(0, 3, 30))
    for gamma in [0.1, 1.0, 5.0]:
        W, hist = B.rfs_solve(X, Y, gamma, tol=0, max_iter=40)
        assert np.all(np.diff(hist) <= 1e-9 * hist[0])
        assert hist[-1] < hist[0]
        assert hist[-1] == pytest.approx(B.rfs_objective(X, Y, W, gamma))
    # sparse input: the same iterates
    W2, hist2 = B.rfs_solve(sp.csr_matrix(X), Y, 1.0, tol=0, max_iter=10)
    W1, hist1 = B.rfs_solve(X, Y, 1.0, tol=0, max_iter=10)
    np.testing.assert_allclose(hist1, hist2, rtol=1e-10)


def _subgrad_ok(G, W, lam, tol):
    """Optimality of min f(W) + lam ||W||_{2,1}: grad_j + lam w^j/||w^j|| = 0 on non-zero rows,
    ||grad_j|| <= lam on zero rows."""
    n = np.linalg.norm(W, axis=1)
    nz = n > 1e-6
    r = G[nz] + lam * W[nz] / n[nz, None]
    assert np.abs(r).max() < tol
    assert np.all(np.linalg.norm(G[~nz], axis=1) <= lam + tol)


def test_mtfs_reaches_the_l21_logistic_optimum():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 8))
    Ypm = np.where(X[:, :2] @ rng.normal(size=(2, 3)) + 0.3 * rng.normal(size=(40, 3)) > 0,
                   1.0, -1.0)
    lam = 2.0
    W, b, hist = B.mtfs_solve(X, Ypm, lam, tol=1e-13, max_iter=5000)
    assert np.all(np.diff(hist) <= 1e-9 * hist[0])           # restarted FISTA is monotone
    M = -Ypm * (X @ W + b)
    Gf = -Ypm / (1 + np.exp(-M))
    assert np.abs(Gf.sum(axis=0)).max() < 1e-4                # unpenalised intercept
    _subgrad_ok(X.T @ Gf, W, lam, 1e-3)
    norms = np.linalg.norm(W, axis=1)
    assert set(np.argsort(-norms)[:2]) == {0, 1} and (norms < 1e-6).sum() >= 1


def test_ssmvfs_decreases_and_reaches_stationarity():
    rng = np.random.default_rng(2)
    dims = [5, 4]
    X = rng.normal(size=(25, 9))
    Y = _onehot(rng.integers(0, 3, 25))
    g1, g2 = 0.5, 0.8
    W, b, hist = B.ssmvfs_solve(X, Y, dims, g1, g2, tol=0, max_iter=300)
    assert np.all(np.diff(hist) <= 1e-9 * hist[0])
    R = X @ W + b - Y
    np.testing.assert_allclose(R.sum(axis=0), 0, atol=1e-8)  # intercept optimal
    G = 2 * X.T @ R
    edges = [0, 5, 9]
    for c in range(3):
        for a, e in zip(edges[:-1], edges[1:]):
            w = W[a:e, c]
            G[a:e, c] += g1 * w / np.linalg.norm(w)
    _subgrad_ok(G, W, g2, 1e-3)
    Ws, bs, _ = B.ssmvfs_solve(sp.csr_matrix(X), Y, dims, g1, g2, tol=0, max_iter=5)
    Wd, bd, _ = B.ssmvfs_solve(X, Y, dims, g1, g2, tol=0, max_iter=5)
    np.testing.assert_allclose(Ws, Wd, atol=1e-10)


def test_tensor_rfe_criterion_is_the_change_of_the_squared_norm():
    rng = np.random.default_rng(3)
    Xd = [rng.normal(size=(10, 4)), rng.normal(size=(10, 3)), rng.normal(size=(10, 2))]
    alive = [np.array([1, 1, 0, 1], bool), np.ones(3, bool), np.ones(2, bool)]
    Ks = [(X * a) @ X.T for X, a in zip(Xd, alive)]
    beta = rng.normal(size=(10, 2))
    crit = B.tensor_rfe_criteria(Xd, Ks, beta @ beta.T, alive)
    norm2 = lambda KK: np.einsum("ic,ij,jc->", beta, np.prod(KK, axis=0), beta)
    for v in range(3):
        for k, j in enumerate(np.flatnonzero(alive[v])):
            Kmin = list(Ks)
            Kmin[v] = Ks[v] - np.outer(Xd[v][:, j], Xd[v][:, j])
            assert crit[v][k] == pytest.approx(norm2(Ks) - norm2(Kmin), rel=1e-9, abs=1e-9)


def test_tmfs_on_one_view_is_linear_svm_rfe():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 7))
    y = np.where(X[:, 0] + 0.5 * X[:, 3] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    rank = B.tmfs_ranking([X], y[:, None], C=1.0, step=1)[0]
    ref = RFE(SVC(kernel="linear", C=1.0), n_features_to_select=1, step=1).fit(X, y)
    np.testing.assert_array_equal(rank, np.argsort(ref.ranking_, kind="stable"))


# ------------------------------------------------------------------ downstream and BSF
def test_downstream_leave_one_out_scores_equal_refits():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(15, 4))
    Ypm = np.where(rng.random((15, 2)) < 0.5, 1.0, -1.0)
    for kind in ["knn", "rls"]:
        d = Downstream(kind, n_neighbors=3, alpha=0.7)
        loo = d.loo_scores(X, Ypm)
        for i in range(15):
            keep = np.arange(15) != i
            ref = Downstream(kind, 3, 0.7).fit(X[keep], Ypm[keep]).scores(X[i:i + 1])
            np.testing.assert_allclose(loo[i], ref[0], atol=1e-8)
    r = Downstream("rls", alpha=0.7).fit(X, Ypm).scores(X)
    np.testing.assert_allclose(r, Ridge(alpha=0.7).fit(X, Ypm).predict(X))


def test_bsf_picks_the_informative_view_and_cat_uses_all():
    rng = np.random.default_rng(6)
    y = np.repeat(np.arange(4), 15)
    bits = [(y % 2) * 2.0, (y // 2) * 2.0]                   # each view knows one bit
    views = Views([np.column_stack([b, b]) + rng.normal(scale=0.4, size=(60, 2)) for b in bits])
    noisy = Views([rng.normal(size=(60, 2)), views.views[1]], ["noise", "b"])
    m = BSF().fit(noisy, y // 2)
    assert m.view_ == 1 and m.view_scores_[1] > m.view_scores_[0]
    assert BSF(view=0).fit(noisy, y).view_ == 0
    with pytest.raises(ValueError, match="view=5"):
        BSF(view=5).fit(noisy, y)
    te = np.arange(len(y)) % 3 == 0
    cat = CAT(normalize=None).fit(views[~te], y[~te])
    assert (cat.predict(views[te]) == y[te]).mean() >= 0.85
    bsf = BSF(normalize=None).fit(views[~te], y[~te])
    assert (bsf.predict(views[te]) == y[te]).mean() <= 0.7


# ------------------------------------------------------------------ estimators
SELECTORS = [MTFS(lam=0.5), RFS(gamma=0.3), SSMVFS(gamma1=0.5, gamma2=2.0), TMFS(step=2)]


@pytest.mark.parametrize("est", SELECTORS, ids=lambda e: type(e).__name__)
def test_selection_methods_rank_planted_features_and_keep_percent(est):
    views, y = _planted(0)
    m = clone(est).set_params(percent=20).fit(views, y)
    assert set(m.feature_ranking_[0][:3]) == {0, 1, 2}
    assert set(m.feature_ranking_[1][:2]) == {0, 1}
    assert [sorted(r.tolist()) for r in m.feature_ranking_] == [list(range(13)), list(range(10))]
    assert m._features(views.views).shape == (len(y), n_selected(13, 20) + n_selected(10, 20))


@pytest.mark.parametrize("cls", [MTFT, RFT, SSMVFT])
def test_transformations_are_W_transpose_x(cls):
    views, y = _planted(8)
    m = cls(normalize=None).fit(views, y)
    Z = m._features(views.views)
    np.testing.assert_allclose(Z, np.hstack(views.views) @ m.coef_)
    assert Z.shape == (len(y), 4)


ALL = [BSF(), CAT(), MTFS(), MTFT(), RFS(), RFT(), SSMVFS(), SSMVFT(), TMFS(step=0.3),
       CAT(classifier="rls", rls_alpha=0.1), SSMVFS(classifier="rls", n_neighbors=3)]


@pytest.mark.parametrize("est", ALL, ids=lambda e: type(e).__name__)
def test_sklearn_basics_and_sparse_equals_dense(est):
    views, y = _planted(9, n_per=8)
    with pytest.raises(NotFittedError):
        clone(est).predict(views)
    params = est.get_params()
    a = clone(est).fit(views, y)
    assert est.get_params() == params
    b = clone(est).fit(views, y)
    np.testing.assert_array_equal(a.decision_function(views), b.decision_function(views))
    spv = Views([sp.csr_matrix(X) for X in views.views], views.names)
    c = clone(est).fit(spv, y)
    np.testing.assert_allclose(a.decision_function(views), c.decision_function(spv),
                               atol=1e-6)
    assert a.predict(views).shape == y.shape and a.decision_function(views).shape == (32, 4)
    Y = np.column_stack([y == 0, y >= 2]).astype(int)          # multi-label input
    ml = clone(est).fit(views, Y)
    assert ml.predict(views).shape == (32, 2) and set(np.unique(ml.predict(views))) <= {0, 1}


def test_gridsearch_on_views_and_registration():
    views, y = _planted(10, n_per=9)
    gs = GridSearchCV(RFS(), {"percent": [10, 50], "gamma": [0.1, 1.0]}, cv=3).fit(views, y)
    assert gs.predict(views).shape == y.shape
    names = {e.name: e for e in METHODS.entries() if e.meta.get("paper") == "lm3fe"}
    assert set(names) == {"lm3fe", "lm3fs", "lm3ft", "bsf", "cat", "mtfs", "mtft", "rfs",
                          "rft", "ssmvfs", "ssmvft", "tmfs"}
    assert all(e.meta["family"] == "multi-view" for e in names.values())
    assert all(getattr(e.obj, "numerics_revision", None) == 1 for e in names.values())
    for cls in (LM3FE, LM3FS, LM3FT):
        assert names[cls.__name__.lower()].obj is cls


@pytest.mark.parametrize("bad", [dict(percent=150), dict(percent=-5), dict(n_neighbors=0)])
def test_refit_post_validates_the_parameters_like_fit(bad):
    from sklearn.utils._param_validation import InvalidParameterError

    views, y = _planted(3)
    est = MTFS(max_iter=5).fit(views, y)
    with pytest.raises(InvalidParameterError, match=next(iter(bad))):
        clone(est).set_params(**bad).fit(views, y)
    with pytest.raises(InvalidParameterError, match=next(iter(bad))):
        est.set_params(**bad).refit_post(views, y)
    # a valid value refits only the downstream classifier, as a fresh fit would
    est.set_params(percent=40, n_neighbors=1).refit_post(views, y)
    np.testing.assert_array_equal(est.predict(views),
                                  MTFS(max_iter=5, percent=40).fit(views, y).predict(views))
