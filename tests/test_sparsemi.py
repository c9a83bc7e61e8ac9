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

from mlkit.kernels import bag_reduce
from mlkit.methods.mi import RSVM, MIKernel, SparseMI
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
    assert SparseMI.numerics_revision == 2
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


def test_svm_initialisation_takes_the_converged_linear_svm():
    """init="svm" ranks instances by |w| of the linear SVM (squared hinge, L2, liblinear's
    regularised bias) on the Eq. (8) bag features: its instances are those of the same
    objective minimised independently (L-BFGS on the primal, to 1e-10), without warnings
    (a ConvergenceWarning is an error here), up to C = 1e4 as in the TST grids."""
    import warnings

    from scipy.optimize import minimize

    from mlkit.kernels import rbf_kernel

    rng = np.random.default_rng(4)
    bags = [rng.normal(size=(rng.integers(4, 9), 5)) + 0.6 * (i % 2) for i in range(60)]
    y = np.where(np.arange(60) % 2 == 1, 1, -1)
    X = np.vstack(bags)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    offsets = np.r_[0, np.cumsum([len(b) for b in bags])]
    S = np.hstack([bag_reduce(rbf_kernel(X, X, 2.0), offsets, "mean"), np.ones((60, 1))])

    def primal(w, C):
        margin = np.maximum(0.0, 1.0 - y * (S @ w))
        return 0.5 * w @ w + C * margin @ margin, w - 2.0 * C * S.T @ (y * margin)

    # C = 1e4: a near hard margin, ~1,400 Newton iterations (above liblinear's default cap)
    for C in (10.0, 100.0, 1e4):
        m = SparseMI(n_xv=10, C=C, gamma=2.0, init="svm", t_max=0, random_state=0)
        m.gamma_ = 2.0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rows = m._svm_instances(X, offsets, y[:, None])
        ref = minimize(primal, np.zeros(S.shape[1]), args=(C,), jac=True, method="L-BFGS-B",
                       options={"maxiter": 100000, "gtol": 1e-10, "ftol": 0.0}).x[:-1]
        np.testing.assert_array_equal(np.sort(rows), np.sort(np.argsort(-np.abs(ref))[:10]))


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
