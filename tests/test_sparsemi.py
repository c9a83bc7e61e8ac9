"""SparseMI (Fu et al., TNNLS 2013): the gradients of Eq. (14)-(15), (18), (20), (24) against
finite differences, the monotone outer loop, its reductions to RSVM (t_max = 0) and to the
dense label-mean model (Z = all instances), sparse input that is never densified, and the
estimator contract."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import check_grad
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from mlkit.kernels import bag_mean_matrix, bag_reduce, rbf_kernel
from mlkit.methods.mi import RSVM, MIKernel, SparseMI
from mlkit.methods.mi import _label_mean, sparsemi
from mlkit.methods.mi._label_mean import KZ_RIDGE, fit_label_mean_svm, label_mean_objective
from mlkit.methods.mi.sparsemi import _BasisGeometry, _DenseGeometry, _objective_gradient
from mlkit.registry import METHODS


def make_mi(n_bags=40, d=3, seed=0, n_classes=2):
    """Negative instances ~ N(0, I); a bag of class c > 0 holds one witness near 3 e_c."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_bags) % n_classes
    bags = []
    for label in y:
        bag = rng.normal(size=(rng.integers(2, 6), d))
        if label > 0:
            bag[rng.integers(len(bag))] = 3.0 * np.eye(d)[label - 1] + 0.3 * rng.normal(size=d)
        bags.append(bag)
    return bags, y


def flat(bags):
    return np.vstack(bags), np.concatenate([[0], np.cumsum([len(b) for b in bags])])


def labels_pm(y):
    classes = np.unique(y)
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def g_and_grad(geometry, params, offsets, Y, C):
    """g(params) = sum_c min Q_c (Eq. (17), (19)) solved tightly, and Eq. (18)/(20)/(24)."""
    K_xz, K_z = geometry.kernels(params)
    A = bag_reduce(K_xz, offsets, "mean")
    beta, rho, values = fit_label_mean_svm(A, Y, K_z + KZ_RIDGE * np.eye(len(K_z)), C)
    grad = _objective_gradient(geometry, params, (K_xz, K_z, offsets, Y), beta, rho, C)
    return values.sum(), grad


def check_outer_gradient(geometry, params, offsets, Y, C, n_dirs=4, seed=0):
    """Directional finite differences of g (central, step h) against <grad, direction>."""
    rng = np.random.default_rng(seed)
    _, grad = g_and_grad(geometry, params, offsets, Y, C)
    h = 1e-5
    for _ in range(n_dirs):
        D = rng.normal(size=params.shape)
        D /= np.linalg.norm(D)
        fd = (g_and_grad(geometry, params + h * D, offsets, Y, C)[0]
              - g_and_grad(geometry, params - h * D, offsets, Y, C)[0]) / (2 * h)
        assert fd == pytest.approx(np.sum(grad * D), rel=1e-3, abs=1e-5 * np.abs(grad).max())


# -- gradients ------------------------------------------------------------------------------
def test_inner_gradient_eq14_15_matches_finite_differences():
    rng = np.random.default_rng(0)
    A = rng.uniform(size=(15, 6))
    Z = rng.normal(size=(6, 3))
    K_z = np.exp(-0.5 * ((Z[:, None] - Z[None]) ** 2).sum(-1)) + KZ_RIDGE * np.eye(6)
    y = np.where(rng.uniform(size=15) > 0.5, 1.0, -1.0)
    for _ in range(3):
        p = rng.normal(size=7)
        err = check_grad(lambda q: label_mean_objective(q, A, y, K_z, 3.0)[0],
                         lambda q: label_mean_objective(q, A, y, K_z, 3.0)[1], p)
        assert err < 1e-6 * (1 + np.linalg.norm(label_mean_objective(p, A, y, K_z, 3.0)[1]))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_outer_gradient_eq18_dense_and_multiclass_sum(n_classes):
    bags, y = make_mi(30, seed=1, n_classes=n_classes)
    X, offsets = flat(bags)
    rng = np.random.default_rng(2)
    Z = X[rng.choice(len(X), 5, replace=False)] + 0.1 * rng.normal(size=(5, X.shape[1]))
    check_outer_gradient(_DenseGeometry(X, 0.4), Z, offsets, labels_pm(y), 2.0)


def test_multiclass_g_and_gradient_are_sums_over_classes():
    """Eq. (19)-(20): the shared-Z objective and gradient are sums of the binary ones."""
    bags, y = make_mi(30, seed=3, n_classes=3)
    X, offsets = flat(bags)
    Z = X[:4] + 0.05
    geo, Y = _DenseGeometry(X, 0.3), labels_pm(y)
    g, grad = g_and_grad(geo, Z, offsets, Y, 1.5)
    parts = [g_and_grad(geo, Z, offsets, Y[:, [c]], 1.5) for c in range(3)]
    assert g == pytest.approx(sum(p[0] for p in parts), rel=1e-9)
    np.testing.assert_allclose(grad, sum(p[1] for p in parts), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_outer_gradient_eq24_basis_form_on_sparse_input(n_classes):
    rng = np.random.default_rng(4)
    bags, y = make_mi(30, d=40, seed=5, n_classes=n_classes)
    bags = [sp.csr_matrix(np.where(np.abs(b) > 1.0, b, 0.0)) for b in bags]
    X, offsets = sp.vstack(bags).tocsr(), np.concatenate([[0], np.cumsum([b.shape[0] for b in bags])])
    basis = X[rng.choice(X.shape[0], 8, replace=False)]
    geo = _BasisGeometry(X, basis, 0.05)
    V = rng.dirichlet(np.ones(8), size=4)
    # the basis kernels are those of the points z_j = B v_j
    K_xz, K_z = geo.kernels(V)
    dense = _DenseGeometry(X.toarray(), 0.05)
    K_xz2, K_z2 = dense.kernels(geo.points(V))
    np.testing.assert_allclose(K_xz, K_xz2, atol=1e-12)
    np.testing.assert_allclose(K_z, K_z2, atol=1e-12)
    check_outer_gradient(geo, V, offsets, labels_pm(y), 2.0)
    # chain rule: dg/dV = (dg/dZ) B^T
    _, gV = g_and_grad(geo, V, offsets, labels_pm(y), 2.0)
    _, gZ = g_and_grad(dense, geo.points(V), offsets, labels_pm(y), 2.0)
    np.testing.assert_allclose(gV, (basis @ gZ.T).T, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_outer_gradient_over_active_bags_only(monkeypatch, n_classes):
    """Bags with y_i f_i >= 1 in every problem have l'_i = 0 (Eq. (16)): the gradient taken
    over the other bags' instances alone equals the full sum, and both agree with finite
    differences of g at a C where most bags are inactive."""
    bags, y = make_mi(40, seed=7, n_classes=n_classes)
    X, offsets = flat(bags)
    rng = np.random.default_rng(8)
    Z = X[rng.choice(len(X), 15, replace=False)]
    geo, Y = _DenseGeometry(X, 0.3), labels_pm(y)
    K_xz, K_z = geo.kernels(Z)
    A = bag_reduce(K_xz, offsets, "mean")
    beta, rho, _ = fit_label_mean_svm(A, Y, K_z + KZ_RIDGE * np.eye(len(K_z)), 50.0)
    active = np.any(Y * (A @ beta + rho) < 1, axis=1)
    assert 0 < active.sum() < 0.8 * len(active)          # the restricted path is taken
    args = (geo, Z, (K_xz, K_z, offsets, Y), beta, rho, 50.0)
    restricted = _objective_gradient(*args)
    monkeypatch.setattr(sparsemi, "_ACTIVE_ROWS_SHARE", 0.0)     # always every row
    np.testing.assert_allclose(restricted, _objective_gradient(*args), rtol=1e-12,
                               atol=1e-12 * np.abs(restricted).max())
    monkeypatch.undo()
    check_outer_gradient(geo, Z, offsets, Y, 50.0)


def test_line_search_cross_products_are_linear_in_the_xvs():
    """Trials Z - lambda D take X Z^T - lambda X D^T (dense and basis form): the kernels from
    it equal those computed from the trial points, and the averaging operator S gives the
    bag means of bag_reduce."""
    rng = np.random.default_rng(9)
    bags, y = make_mi(20, d=30, seed=10)
    X, offsets = flat(bags)
    Z, D = rng.normal(size=(5, 30)), rng.normal(size=(5, 30))
    for geo, P, Dp in ((_DenseGeometry(X, 0.05), Z, D),
                       (_BasisGeometry(X, X[:7], 0.05), rng.normal(size=(5, 7)),
                        rng.normal(size=(5, 7)))):
        cross = geo.cross(P) - 0.3 * geo.cross(Dp)
        for a, b in zip(geo.kernels(P - 0.3 * Dp, cross), geo.kernels(P - 0.3 * Dp)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(a, rbf_kernel(geo.points(P - 0.3 * Dp), gamma=0.05),
                                   rtol=1e-10, atol=1e-12)
    K = rng.random((len(X), 4))
    np.testing.assert_allclose(bag_mean_matrix(offsets) @ K, bag_reduce(K, offsets, "mean"),
                               rtol=1e-13)


@pytest.mark.parametrize("init", ["svm", "kmeans"])
def test_sparse_schemes_choose_the_basis_vectors(init):
    """Sec. V-D: in the basis form the "svm" and "kmeans" schemes choose the Q BVs (the top-Q
    instances by |SVM weight| on the bag features of Eq. (8), or Q k-means centroids) and
    the XV coefficients start random; init_target="xvs" keeps a random basis instead."""
    from mlkit.methods.mi._label_mean import fit_linear_svm

    bags, y = make_mi(24, d=6, seed=11)
    model = SparseMI(n_xv=3, n_basis=8, init=init, C=1.0, gamma=0.2, t_max=0,
                     random_state=0).fit(bags, y)
    X, offsets = flat(bags)
    Xs = (X - model.mean_) / model.scale_
    assert model.basis_.shape == (8, 6)
    if init == "svm":
        S = bag_reduce(rbf_kernel(Xs, Xs, 0.2), offsets, "mean")
        w = fit_linear_svm(S, np.where(y == 1, 1.0, -1.0)[:, None], 1.0)[0][:, 0]
        top = np.sort(np.argsort(-np.abs(w), kind="stable")[:8])
        np.testing.assert_allclose(model.basis_, Xs[top], atol=1e-12)
    else:
        # a Lloyd fixed point: every BV is (about) the mean of the instances nearest to it
        nearest = np.argmin(((Xs[:, None, :] - model.basis_[None]) ** 2).sum(-1), axis=1)
        for q in np.unique(nearest):
            np.testing.assert_allclose(model.basis_[q], Xs[nearest == q].mean(0), atol=0.05)
    # the XVs are random convex combinations of the BVs (t_max=0 keeps them)
    coef = model.basis_coef_
    assert np.all(coef >= 0) and np.allclose(coef.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.expansion_vectors_, coef @ model.basis_, atol=1e-12)
    xvs = SparseMI(n_xv=3, n_basis=8, init=init, init_target="xvs", C=1.0, gamma=0.2,
                   t_max=0, random_state=0).fit(bags, y)
    assert not np.allclose(xvs.basis_, model.basis_)


# -- the outer loop -------------------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
def test_objective_never_increases(n_classes):
    bags, y = make_mi(40, seed=6, n_classes=n_classes)
    model = SparseMI(n_xv=4, C=5, t_max=15, tol=0, last_try="continue",
                     random_state=0).fit(bags, y)
    obj = np.asarray(model.objective_)
    assert len(obj) == model.n_iter_ + 1 and model.n_iter_ >= 3
    assert np.all(np.diff(obj) < 0)
    assert obj[-1] < 0.9 * obj[0]
    extras = model.run_record_extras()
    assert extras["n_xv"] == 4 and extras["n_iter"] == model.n_iter_
    assert extras["objective"] == [float(v) for v in obj]


def test_eval_set_accuracy_is_recorded_per_iteration():
    bags, y = make_mi(60, seed=7)
    model = SparseMI(n_xv=3, C=5, t_max=5, random_state=1).fit(
        bags[:30], y[:30], eval_set=(bags[30:], y[30:]))
    assert len(model.eval_accuracy_) == len(model.objective_)
    assert model.eval_accuracy_[-1] == pytest.approx(np.mean(model.predict(bags[30:]) == y[30:]))
    assert "eval_accuracy" in model.run_record_extras()
    assert not hasattr(SparseMI(n_xv=3, t_max=1).fit(bags, y), "eval_accuracy_")


def test_t_max_zero_is_rsvm():
    bags, y = make_mi(50, seed=8)
    test, _ = make_mi(20, seed=9)
    ours = SparseMI(n_xv=7, C=3, gamma=0.3, t_max=0, random_state=5).fit(bags, y)
    rsvm = RSVM(n_xv=7, C=3, gamma=0.3, random_state=5).fit(bags, y)
    np.testing.assert_array_equal(ours.expansion_vectors_, rsvm.expansion_vectors_)
    np.testing.assert_allclose(ours.decision_function(test), rsvm.decision_function(test),
                               rtol=1e-9, atol=1e-12)
    assert ours.objective_ == pytest.approx([rsvm.objective_.sum()])


def test_all_instances_without_optimisation_order_bags_like_mikernel():
    """Z = every training instance, t_max = 0: the dense label-mean model (Sec. V-B), which
    differs from MI-Kernel only in the loss (squared hinge vs hinge)."""
    bags, y = make_mi(40, seed=10)
    test, _ = make_mi(30, seed=11)
    n = sum(len(b) for b in bags)
    ours = SparseMI(n_xv=n, C=10, gamma=0.3, t_max=0, random_state=0).fit(bags, y)
    mik = MIKernel(C=10, gamma=0.3).fit(bags, y)
    a, b = ours.decision_function(test), mik.decision_function(test)
    assert spearmanr(a, b).statistic > 0.95
    confident = np.abs(b) > 0.5
    assert confident.sum() >= 10
    np.testing.assert_array_equal(np.sign(a[confident]), np.sign(b[confident]))


@pytest.mark.parametrize("init", ["random", "kmeans", "svm"])
def test_initialisations(init):
    bags, y = make_mi(40, seed=12)
    model = SparseMI(n_xv=5, C=5, init=init, t_max=3, random_state=0).fit(bags, y)
    assert model.expansion_vectors_.shape == (5, 3)
    assert model.score(bags, y) > 0.8
    if init == "svm":       # t_max = 0 keeps the chosen training instances
        fixed = SparseMI(n_xv=5, C=5, init=init, t_max=0, standardize=False).fit(bags, y)
        X, _ = flat(bags)
        assert all(np.any(np.all(X == z, axis=1)) for z in fixed.expansion_vectors_)


def test_more_xvs_than_instances_are_distinct():
    bags, y = make_mi(6, seed=13)
    n = sum(len(b) for b in bags)
    with np.errstate(all="raise"):
        model = SparseMI(n_xv=n + 5, C=1, t_max=1, random_state=0).fit(bags, y)
    Z = model.expansion_vectors_
    assert len(np.unique(Z.round(12), axis=0)) == n + 5


def test_basis_form_with_sparse_input_matches_dense_input():
    bags, y = make_mi(40, d=6, seed=14)
    bags = [np.where(np.abs(b) > 0.8, b, 0.0) for b in bags]
    sparse = [sp.csr_matrix(b) for b in bags]
    kw = dict(n_xv=3, n_basis=10, C=5, t_max=4, random_state=0)
    a = SparseMI(**kw).fit(sparse, y)
    b = SparseMI(**kw, standardize=False).fit(bags, y)
    c = SparseMI(**kw, standardize=False).fit(sparse, y)
    np.testing.assert_allclose(b.decision_function(bags), c.decision_function(sparse),
                               rtol=1e-6, atol=1e-8)
    assert a.basis_coef_.shape == (3, 10) and sp.issparse(a.basis_)
    assert np.all(np.diff(a.objective_) < 0)


def test_sparse_tst_sized_input_is_never_densified():
    """3000 instances x 66000 features at ~0.03% density: peak memory far below n*d*8 bytes
    (1.6 GB), the basis form only ever forms B^T x (n x Q) and B^T B."""
    rng = np.random.default_rng(0)
    n, d = 3000, 66000
    nnz = 20 * n                                   # ~20 words per passage
    X = sp.csr_matrix((rng.uniform(0.1, 1.0, nnz),
                       (np.repeat(np.arange(n), 20), rng.integers(0, d, nnz))), shape=(n, d))
    sizes = np.full(300, 10)
    offsets = np.r_[0, np.cumsum(sizes)]
    bags = [X[offsets[i]:offsets[i + 1]] for i in range(300)]
    y = np.arange(300) % 2
    tracemalloc.start()
    model = SparseMI(n_xv=10, n_basis=100, C=1, t_max=2, s_max=3, random_state=0).fit(bags, y)
    model.decision_function(bags[:50])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.05 * n * d * 8, peak
    assert model.expansion_vectors_.shape == (10, d)


# -- estimator contract ---------------------------------------------------------------------
def test_estimator_contract_and_determinism():
    bags, y = make_mi(40, seed=15)
    model = SparseMI(n_xv=4, C=2, t_max=3, random_state=3)
    with pytest.raises(NotFittedError):
        clone(model).predict(bags)
    assert clone(model).get_params() == model.get_params()
    a = clone(model).fit(bags, y)
    b = clone(model).fit(bags, y)
    np.testing.assert_array_equal(a.decision_function(bags), b.decision_function(bags))
    c = clone(model).set_params(random_state=4).fit(bags, y)
    assert not np.array_equal(a.expansion_vectors_, c.expansion_vectors_)
    assert SparseMI.numerics_revision == 3 and SparseMI.inner_solver == "newton"
    assert METHODS.peek("sparsemi") is SparseMI
    with pytest.raises(ValueError, match="'t_max' parameter"):
        SparseMI(t_max=-1).fit(bags, y)
    with pytest.raises(ValueError, match="'init' parameter"):
        SparseMI(init="bogus").fit(bags, y)
    with pytest.raises(ValueError):
        SparseMI().fit(bags, np.zeros(len(bags)))
    with pytest.raises(ValueError):
        SparseMI().fit([np.full((2, 3), np.nan)] + bags[1:], y)


def test_multiclass_predicts_argmax():
    bags, y = make_mi(60, seed=16, n_classes=3)
    model = SparseMI(n_xv=6, C=5, t_max=5, random_state=0).fit(bags, y)
    F = model.decision_function(bags)
    assert F.shape == (60, 3) and model.dual_coef_.shape == (3, 6)
    np.testing.assert_array_equal(model.predict(bags), model.classes_[F.argmax(axis=1)])
    assert model.score(bags, y) > 0.8


def test_svm_initialisation_takes_the_exact_linear_svm():
    """init="svm" ranks instances by |w| of the linear SVM (squared hinge, L2, unregularised
    bias) on the Eq. (8) bag features: its instances are those of the same objective
    minimised independently (L-BFGS on the primal, to 1e-10), without warnings (a
    ConvergenceWarning is an error here), up to C = 1e4 as in the TST grids."""
    import warnings

    from scipy.optimize import minimize

    from mlkit.kernels import rbf_kernel

    rng = np.random.default_rng(4)
    bags = [rng.normal(size=(rng.integers(4, 9), 5)) + 0.6 * (i % 2) for i in range(60)]
    y = np.where(np.arange(60) % 2 == 1, 1, -1)
    X = np.vstack(bags)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    offsets = np.r_[0, np.cumsum([len(b) for b in bags])]
    S = bag_reduce(rbf_kernel(X, X, 2.0), offsets, "mean")

    def primal(x, C):
        w, b = x[:-1], x[-1]
        margin = np.maximum(0.0, 1.0 - y * (S @ w + b))
        r = 2.0 * C * y * margin
        return 0.5 * w @ w + C * margin @ margin, np.r_[w - S.T @ r, -r.sum()]

    for C in (10.0, 100.0, 1e4):
        m = SparseMI(n_xv=10, C=C, gamma=2.0, init="svm", t_max=0, random_state=0)
        m.gamma_ = 2.0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rows = m._svm_instances(X, offsets, y[:, None], 10)
        ref = minimize(primal, np.zeros(S.shape[1] + 1), args=(C,), jac=True,
                       method="L-BFGS-B",
                       options={"maxiter": 100000, "gtol": 1e-10, "ftol": 0.0}).x[:-1]
        np.testing.assert_array_equal(np.sort(rows), np.sort(np.argsort(-np.abs(ref))[:10]))


@pytest.mark.parametrize("shape, C", [((40, 200), 0.1), ((40, 200), 1e3), ((150, 30), 10.0),
                                      ((60, 60), 1e6)])
def test_fit_linear_svm_is_the_exact_optimum(shape, C):
    """fit_linear_svm: the gradient of ||w||^2/2 + C sum max(0, 1 - y (s w + b))^2 vanishes
    at its answer (the optimum of a strictly convex problem), its value is the objective
    there, and it is no worse than an independent L-BFGS minimisation; several problems at
    once equal each solved alone (to rounding). Wide (Gram-matrix routes) and tall (primal routes)."""
    from scipy.optimize import minimize

    from mlkit.methods.mi._label_mean import fit_linear_svm

    rng = np.random.default_rng(shape[0] + shape[1])
    S = rng.normal(size=shape)
    Y = np.where(rng.random((shape[0], 3)) < 0.35, 1.0, -1.0)
    Y[:, 0] = np.sign(S[:, 0] + 0.3 * rng.normal(size=shape[0]))
    W, b, value = fit_linear_svm(S, Y, C)
    for c in range(3):
        y = Y[:, c]
        margin = np.maximum(0.0, 1.0 - y * (S @ W[:, c] + b[c]))
        r = 2.0 * C * y * margin
        grad = np.r_[W[:, c] - S.T @ r, -r.sum()]
        scale = 1.0 + C * shape[0]
        assert np.linalg.norm(grad) < 1e-8 * scale
        assert value[c] == pytest.approx(0.5 * W[:, c] @ W[:, c] + C * margin @ margin,
                                         rel=1e-12)

        def primal(x):
            m = np.maximum(0.0, 1.0 - y * (S @ x[:-1] + x[-1]))
            rr = 2.0 * C * y * m
            return 0.5 * x[:-1] @ x[:-1] + C * m @ m, np.r_[x[:-1] - S.T @ rr, -rr.sum()]

        ref = minimize(primal, np.zeros(shape[1] + 1), jac=True, method="L-BFGS-B",
                       options={"maxiter": 50000, "gtol": 1e-12, "ftol": 0.0})
        assert value[c] <= ref.fun * (1 + 1e-9)
        alone = fit_linear_svm(S, Y[:, [c]], C)        # possibly another route: rounding
        np.testing.assert_allclose(alone[0][:, 0], W[:, c], rtol=1e-6,
                                   atol=1e-6 * np.abs(W[:, c]).max())


def test_only_the_svm_initialisation_is_keyed_by_its_own_revision():
    from mlkit.experiment import numerics_revision

    base = SparseMI.numerics_revision
    assert numerics_revision("sparsemi") == base
    assert numerics_revision("sparsemi", {"init": "random", "n_xv": 10}) == base
    assert numerics_revision("sparsemi", {"init": "kmeans"}) == base
    assert numerics_revision("sparsemi", {}) == base
    svm = numerics_revision("sparsemi", {"init": "svm"})
    assert svm != base and str(SparseMI.svm_init_revision) in str(svm)


def test_unit_step_is_a_displacement_of_length_lambda():
    """step_direction="unit": Z' = Z - lambda G / ||G||_F, so every accepted step moves the
    XVs by exactly lambda (lambda0 = their mean pairwise distance, doubled or halved)."""
    bags, y = make_mi(n_bags=60, n_classes=3, seed=3)
    model = SparseMI(n_xv=4, C=100.0, gamma=0.5, t_max=6, random_state=0, standardize=False,
                     record_path=True, last_try="continue").fit(bags, y)
    path = model.xv_path_
    Z0 = path[0]
    lam0 = np.mean([np.linalg.norm(a - b) for i, a in enumerate(Z0) for b in Z0[i + 1:]])
    steps = [np.linalg.norm(b - a) for a, b in zip(path[:-1], path[1:])]
    assert len(steps) == model.n_iter_ >= 3
    powers = np.log2(np.asarray(steps) / lam0)
    np.testing.assert_allclose(powers, np.round(powers), atol=1e-8)


def test_raw_gradient_step_overshoots_where_the_unit_step_descends():
    """The literal Z - lambda dg/dZ (step_direction="raw") with lambda0 a distance: with many
    bags and a large C the gradient is so large that 10 halvings never find a decrease (the
    COREL-20 / TST behaviour); along the unit gradient the same fit descends."""
    bags, y = make_mi(n_bags=200, n_classes=3, seed=4)
    common = dict(n_xv=5, C=1000.0, gamma=0.5, t_max=5, random_state=0)
    raw = SparseMI(step_direction="raw", **common).fit(bags, y)
    unit = SparseMI(**common).fit(bags, y)
    assert raw.n_iter_ <= 1 and raw.stop_reason_ in ("line_search", "last_try")
    assert unit.n_iter_ == 5 and unit.objective_[-1] < raw.objective_[-1]


def test_a_non_finite_gradient_is_an_error_not_convergence(monkeypatch):
    import mlkit.methods.mi.sparsemi as module

    bags, y = make_mi(30, seed=1)
    monkeypatch.setattr(module, "_objective_gradient",
                        lambda *args, **kwargs: np.full((3, 3), np.nan))
    with pytest.raises(FloatingPointError, match="not finite"):
        SparseMI(n_xv=3, C=1.0, t_max=3, random_state=0).fit(bags, y)


# -- the inner solver: the finite Newton method ----------------------------------------------
def inner_problem(n_bags, n_xv, n_classes=3, gamma=0.5, seed=0):
    """A label-mean SVM problem of SparseMI's kind: bags of 2-5 points in 3-D, XVs drawn
    from the instances, one-vs-rest labels (n_bags, n_classes) with the classes shifted
    apart so that the problems are neither trivial nor separable."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n_bags) % n_classes
    bags = [rng.normal(size=(rng.integers(2, 6), 3)) + 1.5 * np.eye(3)[c % 3] * (c > 0)
            for c in labels]
    X, offsets = flat(bags)
    Z = X[rng.choice(len(X), n_xv, replace=len(X) < n_xv)] + 0.05 * rng.normal(size=(n_xv, 3))
    geo = _DenseGeometry(X, gamma)
    K_xz, K_z = geo.kernels(Z)
    A = bag_reduce(K_xz, offsets, "mean")
    Y = np.where(labels[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
    return A, Y, K_z + KZ_RIDGE * np.eye(n_xv)


def whitened_gradient(A, y, K_z, C, beta, rho):
    """Q's gradient (Eq. (14)-(16)) in the whitened coordinates gamma = L^T beta, where it
    is not scaled by K_Z's conditioning: w + 2C B_S^T (f_S - y_S) and 2C 1^T (f_S - y_S)."""
    L, B = _label_mean._whiten(A, K_z)
    return label_mean_objective(np.r_[L.T @ beta, rho], B, y, None, C)[1]


def scipy_optimum(A, y, K_z, C):
    """Q's minimum by scipy's L-BFGS-B run to its limits (whitened coordinates)."""
    from scipy.optimize import minimize

    _, B = _label_mean._whiten(A, K_z)
    res = minimize(label_mean_objective, np.zeros(B.shape[1] + 1), jac=True, method="L-BFGS-B",
                   args=(B, y, None, C),
                   options={"ftol": 0.0, "gtol": 1e-13, "maxiter": 100000, "maxfun": 100000})
    return res.fun


@pytest.mark.parametrize("n_bags,n_xv", [(120, 15), (40, 90)])      # n_bags > / < n_xv
@pytest.mark.parametrize("C", [0.1, 10.0, 1000.0])
def test_newton_reaches_the_optimum_with_the_kkt_conditions(n_bags, n_xv, C):
    A, Y, K_z = inner_problem(n_bags, n_xv, seed=n_xv)
    beta, rho, value = fit_label_mean_svm(A, Y, K_z, C, solver="newton")
    lbfgs = fit_label_mean_svm(A, Y, K_z, C)
    for c in range(Y.shape[1]):
        y = Y[:, c]
        f = A @ beta[:, c] + rho[c]
        # the value returned is Q at the returned point (Eq. (12))
        direct = 0.5 * beta[:, c] @ K_z @ beta[:, c] + C * np.sum(np.maximum(0, 1 - y * f) ** 2)
        assert value[c] == pytest.approx(direct, rel=1e-9)
        # the same minimum as scipy's L-BFGS-B at its tightest, and never above ours
        ref = scipy_optimum(A, y, K_z, C)
        assert value[c] == pytest.approx(ref, rel=1e-9)
        assert value[c] <= lbfgs[2][c] * (1 + 1e-12)
        # KKT: the gradient vanishes to rounding (C n_bags bounds its terms' size)
        grad = whitened_gradient(A, y, K_z, C, beta[:, c], rho[c])
        assert np.abs(grad).max() < 1e-13 * (1 + C * n_bags)
        # and rho is stationary: the slacks of the active bags balance (Eq. (15))
        active = y * f < 1
        assert abs(np.sum((f - y)[active])) < 1e-9 * (1 + active.sum())


@pytest.mark.parametrize("n_bags,n_xv", [(150, 12), (60, 40), (40, 120)])
def test_the_three_routes_of_the_newton_point_agree(n_bags, n_xv):
    """The Newton point of a set S, by the primal system (directly and from the whole
    primal matrix less the inactive bags), the bag-space system and the inverse of the whole
    bag-space matrix, is one point: the minimiser of Q_S, whose gradient
    ``w + 2C B_S^T (f_S - y_S)``, ``2C 1^T (f_S - y_S)`` is zero."""
    A, Y, K_z = inner_problem(n_bags, n_xv, seed=1)
    _, B = _label_mean._whiten(A, K_z)
    rng = np.random.default_rng(2)
    y, C = Y[:, 1], 30.0
    for share in (0.1, 0.5, 0.95):
        S = rng.uniform(size=n_bags) < share
        points = {}
        for route in _label_mean._ActiveSetSolver.ROUTES:
            solver = _label_mean._ActiveSetSolver(B, C, ("H", "G", "M_inv"))
            solver.routes = (route,)                    # force the route
            points[route] = solver.solve(S, y, 0.0)
        for w, rho in points.values():
            r = (B @ w + rho - y)[S]
            grad = np.r_[w + 2 * C * B[S].T @ r, 2 * C * r.sum()]
            assert np.abs(grad).max() < 1e-10 * (1 + C * S.sum())
            np.testing.assert_allclose(w, points["primal"][0], atol=1e-9)
            assert rho == pytest.approx(points["primal"][1], abs=1e-9)


def test_the_plan_takes_the_fewest_flops():
    plan = _label_mean._ActiveSetSolver.choose_plan
    assert plan(600, 10, np.full(20, 100), 3) == ()              # few XVs, few active
    assert plan(600, 50, np.full(20, 590), 3) == ("H",)          # few XVs, few inactive
    assert plan(600, 500, np.full(20, 100), 3) == ("G",)         # small active sets
    assert plan(600, 500, np.full(20, 590), 3) == ("G", "M_inv")  # few inactive bags
    solver = _label_mean._ActiveSetSolver
    assert solver.route_flops(600, 500, 100)["bags"] == pytest.approx(100 ** 3 / 3)
    assert solver.shared_flops(600, 500)["G"] == 600 ** 2 * 500


def test_newton_warm_started_at_the_optimum_returns_it_at_once():
    A, Y, K_z = inner_problem(80, 30, seed=3)
    C = 10.0
    beta, rho, value = fit_label_mean_svm(A, Y, K_z, C, solver="newton")
    L, B = _label_mean._whiten(A, K_z)
    for c in range(Y.shape[1]):
        y = Y[:, c]
        active = y * (A @ beta[:, c] + rho[c]) < 1
        for route in _label_mean._ActiveSetSolver.ROUTES:
            solver = _label_mean._ActiveSetSolver(B, C, ("H", "G", "M_inv"))
            solver.routes = (route,)
            w, r, _, v, converged, steps = _label_mean._newton(solver, y, C, active, 0.0)
            # one solve (the Newton point of the optimum's active set), one check, no step
            assert converged and steps == 1
            assert v == pytest.approx(value[c], rel=1e-12)
            np.testing.assert_allclose(w, L.T @ beta[:, c], atol=1e-9)
    # through the public function, from the optimum's active sets
    warm = fit_label_mean_svm(A, Y, K_z, C, solver="newton", active=Y * (A @ beta + rho) < 1)
    np.testing.assert_allclose(warm[2], value, rtol=1e-12)


def test_newton_on_a_problem_of_one_class():
    """Every bag of one class: w = 0 and rho = +-1 put every bag on the margin at Q = 0,
    the minimum (rho is not unique, any |rho| >= 1 of the right sign is optimal), from any
    start: no bag active, every bag active."""
    A, Y, K_z = inner_problem(50, 20, seed=4)
    Y = np.column_stack([np.ones(50), -np.ones(50), Y[:, 1]])
    for active in (None, np.zeros((50, 3), dtype=bool), np.ones((50, 3), dtype=bool)):
        beta, rho, value = fit_label_mean_svm(A, Y, K_z, 10.0, solver="newton", active=active)
        # zero to rounding (the joint (w, rho) route solves for w = 0 with rounding)
        assert np.abs(beta[:, :2]).max() < 1e-10 and np.all(value[:2] < 1e-20)
        assert rho[0] >= 1 - 1e-12 and rho[1] <= -1 + 1e-12
        assert np.all(Y[:, :2] * (A @ beta[:, :2] + rho[:2]) > 1 - 1e-12)
        assert value[2] > 1


def test_line_search_is_the_exact_minimum_of_q_along_the_step():
    """phi(t) = Q(w + t d, rho + t drho): its derivative (:func:`_line_search`'s phi') agrees
    with finite differences, and the returned t is its minimum on a fine grid."""
    rng = np.random.default_rng(5)
    n, p, C = 60, 8, 3.0
    B = rng.uniform(size=(n, p)) / np.sqrt(p)
    y = np.where(rng.uniform(size=n) > 0.5, 1.0, -1.0)
    for _ in range(5):
        w, d = rng.normal(size=p), rng.normal(size=p)
        rho, drho = rng.normal(), rng.normal()
        f, df = B @ w + rho, B @ d + drho

        def phi(t):
            return _label_mean._value(w + t * d, f + t * df, y, C)

        margin, slope = 1 - y * f, y * df
        wd, dd = w @ d, d @ d
        h = 1e-6
        for t in (0.1, 0.7, 1.3):
            deriv = wd + t * dd - 2 * C * slope @ np.maximum(0, margin - t * slope)
            assert deriv == pytest.approx((phi(t + h) - phi(t - h)) / (2 * h), rel=1e-6, abs=1e-6)
        t = _label_mean._line_search(margin, slope, wd, dd, C)
        grid = np.linspace(0, 5, 20001)
        best = grid[np.argmin([phi(g) for g in grid])]
        assert phi(t) <= phi(best) + 1e-12 * abs(phi(best))
        if 0 < best < 5:
            assert t == pytest.approx(best, abs=5e-4)


def test_line_search_takes_the_newton_point_when_no_bag_changes_side():
    """With every breakpoint beyond t = 1, phi on [0, 1] is the active set's own quadratic,
    minimal at the Newton point: exactly t = 1, where its root -c0 / c1 (the same number
    mathematically) misses 1 by rounding."""
    rng = np.random.default_rng(7)
    C, exact = 1.0, 0
    for _ in range(50):
        margin = rng.uniform(0.5, 1.0, size=6)
        slope = rng.uniform(0.0, 0.4, size=6)         # each leaves at m / s > 1
        dd = rng.uniform(0.5, 2.0)
        wd = 2 * C * slope @ (margin - slope) - dd    # phi'(1) = 0: 1 is the minimum
        root = -(wd - 2 * C * slope @ margin) / (dd + 2 * C * slope @ slope)
        exact += root == 1.0
        assert _label_mean._line_search(margin, slope, wd, dd, C) == 1.0
    assert exact < 50                                 # rounding misses 1 in some


def test_newton_converges_where_whole_newton_steps_cycle():
    """At C = 1e4 from every bag active, whole Newton steps (Chapelle's) raise Q and cycle
    between active sets on some of these problems; with the Armijo test and the exact
    line search as fallback every problem ends at scipy's optimum."""
    C = 1e4
    for seed in range(30, 40):
        A, Y, K_z = inner_problem(100, 20, seed=seed)
        _, B = _label_mean._whiten(A, K_z)
        solver = _label_mean._ActiveSetSolver(B, C, ())
        for c in range(Y.shape[1]):
            *_, value, converged, steps = _label_mean._newton(
                solver, Y[:, c], C, np.ones(100, dtype=bool))
            assert converged and steps <= 30
        assert value == pytest.approx(scipy_optimum(A, Y[:, c], K_z, C), rel=1e-9)


def test_solver_and_active_set_errors():
    A, Y, K_z = inner_problem(30, 10, seed=6)
    with pytest.raises(ValueError, match="solver='bfgs'"):
        fit_label_mean_svm(A, Y, K_z, 1.0, solver="bfgs")
    with pytest.raises(ValueError, match="active has shape"):
        fit_label_mean_svm(A, Y, K_z, 1.0, solver="newton", active=np.ones(30, dtype=bool))


@pytest.mark.parametrize("cls", [SparseMI, RSVM])
def test_newton_inner_solver_in_the_estimators(cls, monkeypatch):
    """With Newton's method inside, RSVM and SparseMI at t_max = 0 reach a lower or equal
    objective than with L-BFGS (the same optimum to ~1e-9), the same predictions, and
    SparseMI's outer loop still never increases g."""
    bags, y = make_mi(60, seed=17, n_classes=3)
    kw = dict(n_xv=8, C=100.0, gamma=0.5, random_state=0)
    if cls is SparseMI:
        kw["t_max"] = 0
    ref = cls(**kw).fit(bags, y)
    monkeypatch.setattr(cls, "inner_solver", "newton")
    new = cls(**kw).fit(bags, y)
    a, b = np.sum(ref.objective_), np.sum(new.objective_)
    assert b <= a * (1 + 1e-12) and b == pytest.approx(a, rel=1e-8)
    np.testing.assert_array_equal(new.predict(bags), ref.predict(bags))
    if cls is SparseMI:
        model = SparseMI(n_xv=4, C=5, t_max=15, tol=0, last_try="continue",
                         random_state=0).fit(bags, y)
        assert model.n_iter_ >= 3 and np.all(np.diff(model.objective_) < 0)


@pytest.mark.parametrize("init, n_basis", [("kmeans", None), ("svm", None), ("kmeans", 8),
                                           ("svm", 8)])
def test_initialisations_are_shared_by_a_folds_grid_cells(init, n_basis):
    """Inside one shared_work scope (a grid search's fold) the k-means centroids are computed
    once for every (gamma, C) and the SVM start's bag features once per gamma; each cell's
    model equals the one fitted alone, outside any scope."""
    from mlkit.kernels import shared_work
    from mlkit.methods._memo import FITTED

    bags, y = make_mi(24, d=6, seed=3)
    cells = [(0.1, 1.0), (0.1, 10.0), (0.5, 1.0)]
    alone = [SparseMI(n_xv=3, n_basis=n_basis, init=init, C=C, gamma=g, t_max=2,
                      random_state=0).fit(bags, y) for g, C in cells]
    FITTED.clear()                      # the fits are computed again, not memo hits
    with shared_work() as work:
        shared = [SparseMI(n_xv=3, n_basis=n_basis, init=init, C=C, gamma=g, t_max=2,
                           random_state=0).fit(bags, y) for g, C in cells]
        tags = [key[0] for key in work.results]
    for a, b in zip(alone, shared):
        np.testing.assert_array_equal(a.expansion_vectors_, b.expansion_vectors_)
        np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    if init == "kmeans":
        assert tags.count("kmeans_centres") == 1
    else:
        assert tags.count("svm_bag_features") == 2           # one per gamma
