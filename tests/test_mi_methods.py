"""The mathematics of the SparseMI baselines (mi-SVM, MI-SVM, MI-Kernel, MILES, RS, RSVM),
the kernel helpers and the bag validation, checked against explicit definitions."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import check_grad, linprog
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf_kernel
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from mlkit.kernels import bag_reduce, rbf_kernel, set_kernel
from mlkit.methods._validation import check_bag_labels, check_bags
from mlkit.methods.mi import MILES, MISVM, RS, RSVM, MIKernel, miSVM
from mlkit.methods.mi._label_mean import label_mean_objective
from mlkit.methods.mi.miles import fit_l1_svm, miles_embedding
from mlkit.methods.mi.mikernel import fit_set_kernel_svm
from mlkit.methods.mi.misvm import group_slack_svm
from mlkit.methods.mi.reduced import _project, reduced_set

from .conftest import CONFIGS

ALL = [miSVM(C=1), MISVM(C=10, qp_tol=1e-6), MIKernel(C=10), MILES(C=10), RS(n_xv=20, C=10),
       RSVM(n_xv=20, C=10, random_state=0)]
IDS = [type(e).__name__ for e in ALL]


def make_mi(n_bags=60, d=4, seed=0, n_classes=2, sparse_zeros=False):
    """Negative instances ~ N(0, I); a bag of class c > 0 holds one instance of a tight
    cluster at 3 e_c (the witness), the rest drawn like negatives."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_bags) % n_classes
    bags = []
    for label in y:
        bag = rng.normal(size=(rng.integers(2, 7), d))
        if label > 0:
            bag[rng.integers(len(bag))] = 3.0 * np.eye(d)[label - 1] + 0.3 * rng.normal(size=d)
        if sparse_zeros:
            bag[np.abs(bag) < 0.5] = 0.0
        bags.append(bag)
    return bags, y


def flat(bags):
    X = np.vstack(bags)
    return X, np.concatenate([[0], np.cumsum([len(b) for b in bags])])


@pytest.fixture(scope="module")
def problem():
    bags, y = make_mi(120, seed=1)
    return bags[:60], y[:60], bags[60:], y[60:]


# -- kernels ---------------------------------------------------------------------------
@pytest.mark.parametrize("sparse_x", [False, True])
@pytest.mark.parametrize("sparse_z", [False, True])
def test_rbf_kernel_matches_sklearn(sparse_x, sparse_z):
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(7, 5)), rng.normal(size=(4, 5))
    X[X < 0], Z[Z < -0.5] = 0, 0
    Xa = sp.csr_matrix(X) if sparse_x else X
    Za = sp.csr_matrix(Z) if sparse_z else Z
    np.testing.assert_allclose(rbf_kernel(Xa, Za, 0.3), sk_rbf_kernel(X, Z, gamma=0.3),
                               rtol=1e-12, atol=1e-14)
    K = rbf_kernel(Xa, gamma=0.3)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_allclose(K, sk_rbf_kernel(X, gamma=0.3), atol=1e-14)


@pytest.mark.parametrize("sparse", [False, True])
def test_set_kernel_is_the_averaged_double_sum(sparse):
    bags_a, _ = make_mi(5, seed=2, sparse_zeros=sparse)
    bags_b, _ = make_mi(4, seed=3, sparse_zeros=sparse)
    (Xa, oa), (Xb, ob) = flat(bags_a), flat(bags_b)
    if sparse:
        Xa, Xb = sp.csr_matrix(Xa), sp.csr_matrix(Xb)
    S = set_kernel(rbf_kernel(Xa, Xb, 0.4), oa, ob)
    expected = np.array([[np.mean([np.exp(-0.4 * np.sum((p - q) ** 2)) for p in A for q in B])
                          for B in bags_b] for A in bags_a])
    np.testing.assert_allclose(S, expected, rtol=1e-12)


def test_bag_reduce_equals_loops():
    A = np.random.default_rng(0).normal(size=(9, 3))
    offsets = np.array([0, 2, 3, 7, 9])
    for how, fn in [("sum", np.sum), ("mean", np.mean), ("max", np.max)]:
        expected = [fn(A[a:b], axis=0) for a, b in zip(offsets[:-1], offsets[1:])]
        np.testing.assert_allclose(bag_reduce(A, offsets, how), expected)
        np.testing.assert_allclose(bag_reduce(A.T, offsets, how, axis=1), np.transpose(expected))


# -- the methods' defining equations ------------------------------------------------------
@pytest.mark.parametrize("cls", [miSVM, MISVM])
def test_label_max_bag_score_is_the_max_instance_score(cls, problem):
    bags, y, test, _ = problem
    model = cls(C=10).fit(bags, y)
    singles = [inst[None, :] for bag in test for inst in bag]
    f = model.decision_function(singles)            # a one-instance bag scores its instance
    np.testing.assert_allclose(model.instance_decision_function(test), f, rtol=1e-10)
    _, offsets = flat(test)
    np.testing.assert_allclose(model.decision_function(test),
                               [f[a:b].max() for a, b in zip(offsets[:-1], offsets[1:])])


@pytest.mark.parametrize("cls", [MIKernel, RS, RSVM])
def test_label_mean_bag_score_is_the_mean_instance_score(cls, problem):
    bags, y, test, _ = problem
    model = cls(C=10).fit(bags, y)
    f = model.decision_function([inst[None, :] for bag in test for inst in bag])
    _, offsets = flat(test)
    np.testing.assert_allclose(model.decision_function(test),
                               [f[a:b].mean() for a, b in zip(offsets[:-1], offsets[1:])])


def test_mikernel_is_an_svm_on_the_set_kernel(problem):
    """Same decision values as scikit-learn's SVC on the set kernel built with loops, and
    n_xv = sum of the sizes of the support bags (Sec. IV-A of Fu et al.)."""
    bags, y, test, _ = problem
    model = MIKernel(C=10, gamma=0.2, standardize=False).fit(bags, y)

    def K(A_bags, B_bags):
        return np.array([[np.mean(np.exp(-0.2 * ((A[:, None] - B[None]) ** 2).sum(-1)))
                          for B in B_bags] for A in A_bags])

    svc = SVC(kernel="precomputed", C=10).fit(K(bags, bags), y)
    np.testing.assert_allclose(model.decision_function(test),
                               svc.decision_function(K(test, bags)), rtol=1e-6, atol=1e-8)
    assert model.n_xv_ == sum(len(bags[i]) for i in svc.support_)


def test_mikernel_featurespace_normalisation_is_gaertners(problem):
    """normalization="featurespace": the SVM on K(X, X') / sqrt(K(X, X) K(X', X')) with the
    summed set kernel, built with loops (the averaged kernel gives the same ratio)."""
    bags, y, test, _ = problem
    model = MIKernel(C=10, gamma=0.2, standardize=False, normalization="featurespace")
    model.fit(bags, y)

    def K(A_bags, B_bags):
        s = lambda A, B: np.sum(np.exp(-0.2 * ((A[:, None] - B[None]) ** 2).sum(-1)))
        return np.array([[s(A, B) / np.sqrt(s(A, A) * s(B, B)) for B in B_bags]
                         for A in A_bags])

    svc = SVC(kernel="precomputed", C=10).fit(K(bags, bags), y)
    np.testing.assert_allclose(model.decision_function(test),
                               svc.decision_function(K(test, bags)), rtol=1e-6, atol=1e-8)
    assert model.n_xv_ == sum(len(bags[i]) for i in svc.support_)
    # not the averaged kernel's model
    plain = MIKernel(C=10, gamma=0.2, standardize=False).fit(bags, y)
    assert not np.allclose(plain.decision_function(test), model.decision_function(test))
    with pytest.raises(ValueError, match="normalization"):
        MIKernel(normalization="sum").fit(bags, y)


def test_miles_embedding_is_its_definition():
    bags, _ = make_mi(6, seed=4)
    Z = np.random.default_rng(5).normal(size=(7, 4))
    expected = np.array([[max(np.exp(-0.5 * np.sum((x - z) ** 2)) for x in bag) for z in Z]
                         for bag in bags])
    X, offsets = flat(bags)
    np.testing.assert_allclose(miles_embedding(X, offsets, Z, 0.5), expected, rtol=1e-12)
    np.testing.assert_allclose(miles_embedding(sp.csr_matrix(X), offsets, Z, 0.5), expected,
                               rtol=1e-12)


def test_miles_is_sparse_linear_on_the_embedding(problem):
    bags, y, test, _ = problem
    model = MILES(C=10, gamma=0.3, standardize=False).fit(bags, y)
    X, offsets = flat(test)
    S = miles_embedding(X, offsets, model.expansion_vectors_, 0.3)
    np.testing.assert_allclose(model.decision_function(test),
                               S @ model.dual_coef_[0] + model.intercept_[0])
    assert np.all(model.dual_coef_ != 0)
    assert 0 < model.n_xv_ < sum(len(b) for b in bags) / 4       # the 1-norm selects few


def _full_l1_svm_lp(S, y, cost_xi):
    """The 1-norm SVM LP on all of S, solved directly by HiGHS, and the primal objective
    of a (w, b) on it: the independent reference for :func:`fit_l1_svm`."""
    m, n = S.shape
    A = np.hstack([-y[:, None] * S, y[:, None] * S, -np.eye(m), -y[:, None]])
    full = linprog(np.r_[np.ones(2 * n), cost_xi, 0.0], A_ub=A, b_ub=-np.ones(m),
                   bounds=[(0, None)] * (2 * n + m) + [(None, None)], method="highs")

    def objective(w, b):
        return np.abs(w).sum() + cost_xi @ np.maximum(0.0, 1.0 - y * (S @ w + b))

    return full, objective


@pytest.mark.parametrize("seed", range(3))
def test_l1_svm_generation_reaches_the_full_lp_optimum(seed):
    """Row/column generation (small batches: many rounds, drops) vs the LP on all of S."""
    rng = np.random.default_rng(seed)
    S = rng.random((120, 300)) ** 4
    y = np.where(S[:, :5].sum(axis=1) + 0.3 * rng.normal(size=120) > 0.5, 1.0, -1.0)
    full, objective = _full_l1_svm_lp(S, y, 3.0 * np.where(y > 0, 0.3, 0.7))
    w, b = fit_l1_svm(S, y, C=3.0, mu=0.3, batch=10)
    assert objective(w, b) == pytest.approx(full.fun, rel=1e-7)
    assert np.count_nonzero(w) <= len(y)          # a vertex: at most one weight per constraint


def test_l1_svm_falls_back_when_the_simplex_gives_up(monkeypatch):
    """A dual-simplex run that ends with an unknown status (HiGHS status 15, seen on a
    COREL split) is retried with other HiGHS solvers; the optimum is the same."""
    import mlkit.methods.mi.miles as miles

    rng = np.random.default_rng(0)
    S = rng.random((60, 80)) ** 4
    y = np.where(S[:, :5].sum(axis=1) > 0.4, 1.0, -1.0)
    w0, b0 = fit_l1_svm(S, y, C=3.0, mu=0.5)
    tried = []

    def flaky(*args, method, options, **kw):
        tried.append((method, options["presolve"]))
        res = linprog(*args, method=method, options=options, **kw)
        if method == "highs-ds" and not options["presolve"]:
            res.status, res.message = 4, "model_status is Unknown"
        return res

    monkeypatch.setattr(miles, "linprog", flaky)
    w, b = fit_l1_svm(S, y, C=3.0, mu=0.5)
    assert tried[:2] == [("highs-ds", False), ("highs-ds", True)]
    obj = lambda w, b: np.abs(w).sum() + 3.0 * 0.5 * np.maximum(0, 1 - y * (S @ w + b)).sum()
    assert obj(w, b) == pytest.approx(obj(w0, b0), rel=1e-7)

    def broken(*args, **kw):
        res = linprog(*args, **kw)
        res.status, res.message = 4, "numerical trouble"
        return res

    monkeypatch.setattr(miles, "linprog", broken)
    from mlkit._errors import SolverError

    with pytest.raises(SolverError, match="every HiGHS solver: numerical trouble"):
        fit_l1_svm(S, y, C=3.0, mu=0.5)


def test_l1_svm_survives_a_cycling_simplex_on_corel20(data_mirror, monkeypatch):
    """COREL-20 split 6, grid point C = 1, gamma = 1 on inner fold 3, the ninth class
    (column 8) vs the rest: one restricted LP makes HiGHS's dual simplex without presolve
    cycle (uncapped, it never ends). Every attempt carries the iteration cap, so that
    attempt stops and the next setting solves the LP; the fit reaches the optimum of the LP
    on all of S."""
    import mlkit.methods.mi.miles as miles
    from mlkit.config import load_spec
    from mlkit.datasets import load_dataset
    from mlkit.experiment import build_estimator, cv_splitter, make_splits

    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    spec = load_spec(CONFIGS / "sparsemi" / "table1.yaml")
    ds = next(d for d in spec.datasets if d.display == "corel20")
    data = load_dataset(ds.name)
    split = make_splits(data, ds.protocol_over(spec.protocol))[5]
    search = build_estimator(ds.method_as_run(next(m for m in spec.methods
                                                     if m.display == "MILES")), split)
    train = data.subset(split.train)
    # the unstratified inner folds this LP was found on (Table I's CV is stratified now)
    folds = cv_splitter(search.cv.n_splits, search.cv.random_state)
    inner = list(folds.split(np.zeros((len(train.target), 1)), train.target))[2][0]
    model = clone(search.estimator).set_params(C=1.0, gamma=1.0)
    seen = {}
    monkeypatch.setattr(MILES, "_fit", lambda self, X, offsets, Y: seen.update(
        X=X, offsets=offsets, Y=Y))
    with pytest.raises(AttributeError):           # no expansion: only _fit's inputs wanted
        model.fit([train.inputs[i] for i in inner], train.target[inner])
    S = miles_embedding(seen["X"], seen["offsets"], seen["X"], model.gamma_)
    y = seen["Y"][:, 8]

    attempts = []

    def recorded(*args, options, **kw):
        assert options["maxiter"] == miles._LP_MAXITER * sum(kw["A_ub"].shape)
        res = linprog(*args, options=options, **kw)
        attempts.append((kw["method"], options["presolve"], res.status))
        return res

    monkeypatch.setattr(miles, "linprog", recorded)
    w, b = fit_l1_svm(S, y, C=1.0, mu=0.5)
    assert ("highs-ds", False, 1) in attempts        # the cycling LP hit the cap ...
    assert attempts[attempts.index(("highs-ds", False, 1)) + 1] == ("highs-ds", True, 0)
    full, objective = _full_l1_svm_lp(S, y, np.full(len(y), 0.5))
    assert objective(w, b) == pytest.approx(full.fun, rel=1e-7)   # ... and it is optimal


def test_rs_approaches_the_dense_mikernel_solution(problem):
    bags, y, test, _ = problem
    dense = MIKernel(C=10).fit(bags, y).decision_function(test)
    gaps = [np.abs(RS(n_xv=n, C=10).fit(bags, y).decision_function(test) - dense).max()
            for n in (1, 4, 16, 64)]
    assert np.all(np.diff(gaps) < 0), gaps
    assert gaps[-1] < 0.05 * np.abs(dense).max()
    errors = RS(n_xv=30, C=10).fit(bags, y).reconstruction_errors_[0]     # one problem
    assert np.all(np.diff(errors) <= 1e-9 * errors[0])        # projection never gets worse


def test_rs_per_class_sets_are_the_binary_reduced_sets(problem):
    """With several classes, reduced_sets="per_class" approximates each one-vs-rest weight
    vector of MI-Kernel by its own N_XV vectors: problem c's scores equal an independent
    reduced set of column c alone; "shared" approximates all columns with one set."""
    bags, y, test, _ = problem
    y3 = np.arange(len(y)) % 3
    model = RS(n_xv=4, C=10).fit(bags, y3)
    dense = MIKernel(C=10).fit(bags, y3)
    X, offsets = np.vstack(bags), np.r_[0, np.cumsum([len(b) for b in bags])]
    Xs = (X - model.mean_) / model.scale_
    coef, _ = fit_set_kernel_svm(Xs, offsets, np.where(y3[:, None] == np.arange(3), 1.0, -1.0),
                                 gamma=model.gamma_, C=10)
    T = (np.vstack(test) - model.mean_) / model.scale_
    t_off = np.r_[0, np.cumsum([len(b) for b in test])]
    scores = model.decision_function(test)
    assert model.n_xv_ == 4 and len(model.expansion_vectors_) == 12
    assert model.reconstruction_errors_.shape == (3, 4)
    for c in range(3):
        rows = np.flatnonzero(coef[:, c])
        Z, beta, _ = reduced_set(Xs[rows], coef[rows, c:c + 1], 4, model.gamma_)
        own = bag_reduce(rbf_kernel(T, Z, model.gamma_), t_off, "mean") @ beta[:, 0]
        np.testing.assert_allclose(scores[:, c], own + dense.intercept_[c], rtol=1e-9,
                                   atol=1e-9)
        assert np.all(model.dual_coef_[c, np.r_[:4 * c, 4 * c + 4:12]] == 0)
    shared = RS(n_xv=4, C=10, reduced_sets="shared").fit(bags, y3)
    assert shared.n_xv_ == 4 and shared.reconstruction_errors_.shape == (1, 4)


def test_rs_on_near_duplicate_instances():
    """Bags drawn from six points (+1e-12 noise): the reduced set approaches MI-Kernel's
    expansion, never with a singular solve or a negative squared error."""
    rng = np.random.default_rng(0)
    points = rng.normal(size=(3, 4))
    bags = [points[rng.integers(3, size=4)] + 1e-12 * rng.normal(size=(4, 4)) + (i % 2)
            for i in range(30)]
    y = np.arange(30) % 2
    for data in (bags, [sp.csr_matrix(b) for b in bags]):
        model = RS(n_xv=10, C=10).fit(data, y)
        errors = model.reconstruction_errors_[0]
        assert np.all(np.isfinite(errors)) and np.all(errors >= 0)
        assert np.all(np.diff(errors) <= 1e-9 * errors[0])
        dense = MIKernel(C=10).fit(data, y)
        np.testing.assert_allclose(model.decision_function(data), dense.decision_function(data),
                                   atol=0.1)
        np.testing.assert_array_equal(model.predict(data), dense.predict(data))
    # identical expansion points: one vector reproduces Psi, the search stops there
    U = np.repeat(points[:1], 8, axis=0)
    alpha = rng.normal(size=(8, 2)) * 1e3
    Z, beta, errors = reduced_set(U, alpha, 6, 1.0)
    assert len(Z) == 1 and 0 <= errors[0] <= 1e-12 * np.sum(alpha.sum(axis=0) ** 2)
    # an indefinite-by-rounding K_zz: the ridge grows until Cholesky succeeds
    K = np.ones((3, 3))
    K[0, 0] -= 1e-7
    b = _project(K, np.ones((3, 1)))
    assert np.all(np.isfinite(b))


def test_label_mean_objective_gradient_and_rsvm_optimum(problem):
    """Eq. (14)-(16) are the gradient of Eq. (12), and RSVM stops at a stationary point."""
    bags, y, _, _ = problem
    model = RSVM(n_xv=8, C=5, random_state=0).fit(bags, y)
    X, offsets = flat(bags)
    Xs = (X - model.mean_) / model.scale_
    A = bag_reduce(rbf_kernel(Xs, model.expansion_vectors_, model.gamma_), offsets, "mean")
    K_z = rbf_kernel(model.expansion_vectors_, gamma=model.gamma_) + 1e-8 * np.eye(8)
    yy = np.where(y == 1, 1.0, -1.0)
    args = (A, yy, K_z, 5.0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        p = rng.normal(size=9)
        err = check_grad(lambda q: label_mean_objective(q, *args)[0],
                         lambda q: label_mean_objective(q, *args)[1], p)
        assert err < 1e-5 * (1 + np.linalg.norm(label_mean_objective(p, *args)[1]))
    opt = np.r_[model.dual_coef_[0], model.intercept_[0]]
    assert np.abs(label_mean_objective(opt, *args)[1]).max() < 1e-3
    assert label_mean_objective(opt, *args)[0] == pytest.approx(model.objective_[0])


def test_xv_counts():
    bags, y = make_mi(40, seed=6)
    n_inst = sum(len(b) for b in bags)
    assert RSVM(n_xv=7, random_state=0).fit(bags, y).n_xv_ == 7
    assert RS(n_xv=5).fit(bags, y).n_xv_ == 5
    for model in (miSVM(C=10).fit(bags, y), MISVM(C=10).fit(bags, y)):
        assert model.n_xv_ == np.count_nonzero(np.any(model.dual_coef_ != 0, axis=0))
        assert 0 < model.n_xv_ <= n_inst
    with pytest.warns(UserWarning, match="n_xv=500 exceeds the"):
        assert RSVM(n_xv=500).fit(bags, y).n_xv_ == n_inst


# -- preprocessing and invariances --------------------------------------------------------
def test_standardisation_is_fitted_on_training_instances_only(problem):
    bags, y, test, _ = problem
    model = MIKernel(C=10).fit(bags, y)
    X, _ = flat(bags)
    np.testing.assert_allclose(model.mean_, X.mean(axis=0))
    np.testing.assert_allclose(model.scale_, X.std(axis=0))
    alone = [model.decision_function([b])[0] for b in test[:5]]
    shifted = [b * 100 + 50 for b in test[5:]]         # wildly different test statistics
    np.testing.assert_allclose(model.decision_function(test[:5] + shifted)[:5], alone)
    np.testing.assert_allclose(model.mean_, X.mean(axis=0))


@pytest.mark.parametrize("cls", [MIKernel, MILES])
def test_bag_and_instance_order_do_not_matter(cls, problem):
    bags, y, test, _ = problem
    rng = np.random.default_rng(7)
    perm = rng.permutation(len(bags))
    shuffled = [bags[i][rng.permutation(len(bags[i]))] for i in perm]
    a, b = cls(C=10).fit(bags, y), cls(C=10).fit(shuffled, y[perm])
    test_shuffled = [t[rng.permutation(len(t))] for t in test]
    np.testing.assert_array_equal(a.predict(test), b.predict(test_shuffled))
    # equal up to the solvers' stopping tolerance (libsvm: 1e-3 on the KKT gap)
    np.testing.assert_allclose(a.decision_function(test), b.decision_function(test_shuffled),
                               atol=1e-2)


@pytest.mark.parametrize("model", ALL, ids=IDS)
def test_sparse_input_equals_dense_input(model):
    bags, y = make_mi(60, seed=8, sparse_zeros=True)
    train, test = bags[:40], bags[40:]
    dense = clone(model).fit(train, y[:40])
    sparse = clone(model).fit([sp.csr_matrix(b) for b in train], y[:40])
    assert sp.issparse(sparse.expansion_vectors_) or isinstance(sparse, RS)
    F = dense.decision_function(test)
    np.testing.assert_allclose(sparse.decision_function([sp.csr_matrix(b) for b in test]), F,
                               atol=1e-4)
    # a dense-fitted model on sparse test bags: centring is undone on the XVs instead
    np.testing.assert_allclose(dense.decision_function([sp.csr_matrix(b) for b in test]), F,
                               atol=1e-8)


@pytest.mark.parametrize("constant", [0.1, 3.0, 50.0])
def test_constant_column_standardises_alike_for_csr_and_dense(constant):
    """A constant non-zero column has variance 0 (scale 1), not the E[x^2] - E[x]^2 rounding
    residue (~1e-18, scale ~1e-9, standardised values ~1e7) the sparse path used to give."""
    bags, y = make_mi(60, seed=8, sparse_zeros=True)
    bags = [np.c_[np.zeros(len(b)), b, np.full(len(b), constant), np.zeros(len(b))]
            for b in bags]                          # empty first and last columns too
    train, test = bags[:40], bags[40:]
    for model in (MIKernel(C=10), RSVM(n_xv=10, C=10, random_state=0)):
        dense = clone(model).fit(train, y[:40])
        sparse = clone(model).fit([sp.csr_matrix(b) for b in train], y[:40])
        assert sparse.scale_[-2] == dense.scale_[-2] == 1.0
        np.testing.assert_allclose(sparse.scale_, dense.scale_, rtol=1e-12)
        assert sparse.gamma_ == pytest.approx(dense.gamma_, rel=1e-12)
        tol = 1e-8 if isinstance(model, MIKernel) else 1e-6     # L-BFGS stopping rule
        np.testing.assert_allclose(
            sparse.decision_function([sp.csr_matrix(b) for b in test]),
            dense.decision_function(test), atol=tol)


# -- accuracy ----------------------------------------------------------------------------
@pytest.mark.parametrize("model", ALL, ids=IDS)
def test_beats_chance_on_synthetic_mi(model, problem):
    bags, y, test, y_test = problem
    assert clone(model).fit(bags, y).score(test, y_test) >= 0.85


@pytest.mark.parametrize("model", ALL, ids=IDS)
def test_multiclass_one_vs_rest(model):
    bags, y = make_mi(150, seed=9, n_classes=3)
    names = np.array(["bird", "cat", "dog"])[y]
    fitted = clone(model).fit(bags[:90], names[:90])
    assert fitted.classes_.tolist() == ["bird", "cat", "dog"]
    F = fitted.decision_function(bags[90:])
    assert F.shape == (60, 3) and fitted.dual_coef_.shape[0] == 3
    np.testing.assert_array_equal(fitted.predict(bags[90:]), fitted.classes_[F.argmax(axis=1)])
    assert np.mean(fitted.predict(bags[90:]) == names[90:]) >= 0.75


def load_musk1(mirror):
    """MUSK1 parsed directly: molecule, conformation, f1..f166, class (README sec. 1)."""
    rows = np.loadtxt(mirror / "mi" / "musk1" / "clean1.data", delimiter=",", dtype=str)
    names, X = rows[:, 0], rows[:, 2:-1].astype(float)
    starts = np.flatnonzero(np.r_[True, names[1:] != names[:-1]])
    ends = np.r_[starts[1:], len(names)]
    return [X[a:b] for a, b in zip(starts, ends)], rows[starts, -1].astype(float).astype(int)


def test_every_method_beats_chance_on_musk1(data_mirror):
    bags, y = load_musk1(data_mirror)
    assert len(bags) == 92 and y.sum() == 47
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(y, y))
    for model in ALL:
        acc = np.mean([clone(model).fit([bags[i] for i in tr], y[tr])
                       .score([bags[i] for i in te], y[te]) for tr, te in folds])
        assert acc >= 0.75, (type(model).__name__, acc)     # chance: 47/92 = 0.51


# -- estimator contract ------------------------------------------------------------------
@pytest.mark.parametrize("model", ALL, ids=IDS)
def test_estimator_contract(model, problem):
    bags, y, test, _ = problem
    est = clone(model)
    with pytest.raises(NotFittedError):
        est.predict(test)
    copies = [b.copy() for b in bags]
    assert est.fit(bags, y) is est
    assert all(np.array_equal(a, b) for a, b in zip(bags, copies))    # inputs untouched
    again = clone(est).set_params(**est.get_params()).fit(bags, y)
    assert again.get_params() == est.get_params() == model.get_params()
    np.testing.assert_array_equal(est.decision_function(test), again.decision_function(test))


def test_random_state_drives_rsvm():
    bags, y = make_mi(40, seed=10)
    a, b = RSVM(n_xv=5, random_state=3).fit(bags, y), RSVM(n_xv=5, random_state=3).fit(bags, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    c = RSVM(n_xv=5, random_state=4).fit(bags, y)
    assert not np.array_equal(a.support_, c.support_)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bag_slack_qp_matches_a_direct_primal_qp(seed):
    """Andrews et al.'s MI-SVM QP, one slack per negative bag (f(x_i) <= -1 + xi_I for all
    i in I), solved in the dual by group_slack_svm, against SLSQP on the primal (w, b, xi)
    with a linear kernel."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    d = 2
    X = np.vstack([rng.normal(size=(4, d)) + 1.0, rng.normal(size=(9, d)) - 0.5])
    y = np.r_[np.ones(4), -np.ones(9)]
    groups = np.r_[0, 1, 2, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6]     # 4 witnesses, 3 negative bags
    C = 1.0
    alpha, b, converged = group_slack_svm(X @ X.T, y, groups, C, tol=1e-10)
    assert converged
    assert np.all(alpha >= 0) and np.all(np.bincount(groups, alpha) <= C * (1 + 1e-9))
    assert abs(alpha @ y) < 1e-9
    cons = [{"type": "ineq", "fun": lambda p: y * (X @ p[:d] + p[d]) - 1 + p[d + 1:][groups]},
            {"type": "ineq", "fun": lambda p: p[d + 1:]}]
    res = minimize(lambda p: 0.5 * p[:d] @ p[:d] + C * p[d + 1:].sum(), np.zeros(d + 8),
                   constraints=cons, method="SLSQP", options={"ftol": 1e-13, "maxiter": 1000})
    assert res.success
    np.testing.assert_allclose((alpha * y) @ X, res.x[:d], atol=1e-4)
    np.testing.assert_allclose(X @ ((alpha * y) @ X) + b, X @ res.x[:d] + res.x[d], atol=1e-4)
    # the shared slack is looser than one slack per instance: it never costs more
    per_instance = group_slack_svm(X @ X.T, y, np.arange(13), C, tol=1e-10)[0]
    dual = lambda a: a.sum() - 0.5 * (a * y) @ (X @ X.T) @ (a * y)      # noqa: E731
    assert dual(alpha) <= dual(per_instance) + 1e-8


def test_misvm_bag_slack_equals_instance_slack_on_single_instance_negative_bags():
    """With one instance per negative bag both MI-SVM forms are the same QP."""
    rng = np.random.default_rng(3)
    bags = [rng.normal(size=(rng.integers(2, 5), 3)) for _ in range(12)]
    for b in bags:
        b[0] += 3.0
    bags += [rng.normal(size=(1, 3)) for _ in range(14)]
    y = np.r_[np.ones(12), np.zeros(14)].astype(int)
    a = MISVM(C=2, negative_slack="bag", qp_tol=1e-6).fit(bags, y)
    b = MISVM(C=2, negative_slack="instance").fit(bags, y)
    np.testing.assert_allclose(a.decision_function(bags), b.decision_function(bags), atol=2e-3)
    assert a.n_iter_.tolist() == b.n_iter_.tolist()


def test_mi_svm_stops_when_the_alternation_cycles(monkeypatch):
    """The label map is deterministic: a revisited labelling means a cycle, so mi-SVM stops
    there (instead of running to max_iter) with the cycle's lowest-objective SVM."""
    # one positive bag (instances 0, 1), one negative (2); K = I so f = a + b
    replies = {(1.0, 1.0): [0.5, -0.5], (1.0, -1.0): [-0.5, 0.5], (-1.0, 1.0): [0.5, -0.7]}
    trained = []

    def fake_svm(self, K, labels):
        trained.append(tuple(labels[:2]))
        return np.array([0, 1]), np.array(replies[tuple(labels[:2])]), 0.0

    monkeypatch.setattr(miSVM, "_svm", fake_svm)
    model = miSVM(C=1.0, max_iter=50)
    model.cycles_ = []
    a, b, n_iter, converged = model._fit_binary(np.eye(3), np.array([0, 2, 3]),
                                                np.array([1.0, -1.0]))
    # A=(1,1) -> B=(1,-1) -> C=(-1,1) -> B: period 2 after 3 SVMs
    assert trained == [(1, 1), (1, -1), (-1, 1)]
    assert converged and n_iter == 3 and model.cycles_ == [2]
    # objectives 1/2 a.f + C hinge: the cycle member with the lower one is kept
    objectives = {}
    for state in [(1.0, -1.0), (-1.0, 1.0)]:
        coef = np.array(replies[state])
        margins = np.r_[np.array(state) * coef, 0.0]        # the negative instance scores 0
        objectives[state] = 0.5 * coef @ coef + np.maximum(1 - margins, 0).sum()
    best = min(objectives, key=objectives.get)
    np.testing.assert_array_equal(a[:2], replies[best])


def test_alternation_stops_and_warns():
    bags, y = make_mi(60, seed=11)
    model = miSVM(C=10).fit(bags, y)
    assert np.all(model.n_iter_ < model.max_iter)
    with pytest.warns(ConvergenceWarning, match="did not converge within max_iter=1"):
        MISVM(C=10, max_iter=1).fit(bags, y)


def test_bad_parameters_are_rejected():
    bags, y = make_mi(10)
    with pytest.raises(ValueError, match="'C' parameter"):
        MIKernel(C=-1).fit(bags, y)
    with pytest.raises(ValueError, match="'gamma' parameter"):
        MILES(gamma="auto").fit(bags, y)


# -- bad input ---------------------------------------------------------------------------
def test_check_bags_errors():
    est = MIKernel()
    good = [np.ones((2, 5)), np.zeros((1, 3))]
    with pytest.raises(TypeError, match="expects the bags as a list"):
        check_bags(np.ones((2, 3, 3)), est)
    with pytest.raises(ValueError, match="got 0 bags"):
        check_bags([], est)
    bags = [np.ones((2, 3))] * 17 + [np.ones((0, 3))]
    with pytest.raises(ValueError, match="MIKernel: bag 17 has 0 instances; every bag needs "
                                         "at least one row"):
        check_bags(bags, est)
    with pytest.raises(ValueError, match="bag 1 has 4 features but bag 0 has 3"):
        check_bags([np.ones((2, 3)), np.ones((2, 4))], est)
    with pytest.raises(ValueError, match="bag 1 has 3 features, but MIKernel was fitted with 5"):
        check_bags(good, est, reset_dim=5)
    bad = [np.ones((2, 3)), np.ones((2, 3)), np.array([[1.0, np.nan, 0], [0, 0, 0]])]
    with pytest.raises(ValueError, match="bag 2 contains NaN or infinity"):
        check_bags(bad, est)
    with pytest.raises(ValueError, match="bag 1 contains NaN or infinity"):
        check_bags([sp.csr_matrix(np.eye(3)), sp.csr_matrix([[0, np.inf, 0]])], est)
    with pytest.raises(ValueError, match="bag 0 is an array of shape"):
        check_bags([np.ones(3)], est)
    with pytest.raises(ValueError, match="bag 1 could not be converted"):
        check_bags([np.ones((1, 2)), [["a", "b"]]], est)


def test_check_bags_mixes_sparse_and_dense():
    X, offsets = check_bags([np.arange(6.0).reshape(2, 3), sp.csr_matrix(np.eye(3))], MILES())
    assert sp.isspmatrix_csr(X) and offsets.tolist() == [0, 2, 5]
    np.testing.assert_array_equal(X.toarray(), np.vstack([np.arange(6.0).reshape(2, 3),
                                                          np.eye(3)]))


def test_check_bag_labels():
    est = RSVM()
    classes, Y = check_bag_labels([-1, 1, 1, -1], 4, est)
    assert classes.tolist() == [-1, 1] and Y[:, 0].tolist() == [-1, 1, 1, -1]
    classes, Y = check_bag_labels(["b", "a", "c"], 3, est)
    np.testing.assert_array_equal(Y, [[-1, 1, -1], [1, -1, -1], [-1, -1, 1]])
    with pytest.raises(ValueError, match="got 4 bags but y has 3 labels"):
        check_bag_labels([0, 1, 0], 4, est)
    with pytest.raises(ValueError, match=r"y contains NaN \(bag 1\)"):
        check_bag_labels([0.0, np.nan, 1.0], 3, est)
    with pytest.raises(ValueError, match="only one class"):
        check_bag_labels([1, 1], 2, est)
    with pytest.raises(ValueError, match="unknown label type 'continuous'"):
        check_bag_labels([0.5, 1.5, 2.25], 3, est)
    with pytest.raises(ValueError, match="expects y of shape"):
        check_bag_labels(np.ones((3, 2)), 3, est)


def test_predict_checks_the_feature_dimension(problem):
    bags, y, _, _ = problem
    model = MIKernel().fit(bags, y)
    with pytest.raises(ValueError, match="bag 0 has 3 features, but MIKernel was fitted with 4"):
        model.predict([np.ones((2, 3))])


def test_alternating_svms_record_their_iterations_and_cycles():
    bags, y = make_mi(n_bags=30, n_classes=3)
    for cls in (miSVM, MISVM):
        model = cls(C=10).fit(bags, y)
        extras = model.run_record_extras()
        assert extras["n_iter"] == model.n_iter_.tolist() and len(extras["n_iter"]) == 3
        assert extras["cycles"] == list(model.cycles_) and extras["n_xv"] == model.n_xv_
        assert all(1 <= n <= model.max_iter for n in extras["n_iter"])


def test_featurespace_self_kernels_from_diagonal_blocks_only():
    from mlkit.experiment import numerics_revision
    from mlkit.kernels import rbf_kernel, set_kernel
    from mlkit.methods.mi.mikernel import _self_set_kernel

    bags, _ = make_mi(n_bags=25, d=5, seed=2)
    X = np.vstack(bags)
    offsets = np.r_[0, np.cumsum([len(b) for b in bags])]
    full = np.diag(set_kernel(rbf_kernel(X, gamma=0.3), offsets, offsets))
    for block in (1, 7, 10_000):            # one bag per block, a few, all at once
        np.testing.assert_allclose(_self_set_kernel(X, offsets, 0.3, block=block), full,
                                   rtol=1e-12)
        np.testing.assert_allclose(
            _self_set_kernel(sp.csr_matrix(X), offsets, 0.3, block=block), full, rtol=1e-10)
    # only the featurespace records are keyed by its own revision
    assert numerics_revision("mi-kernel", {}) == MIKernel.numerics_revision
    assert "featurespace-2" in str(numerics_revision("mi-kernel",
                                                     {"normalization": "featurespace"}))
