"""Speed-ups that keep every number: each is checked against the code it replaced, kept here
as a reference implementation, on seeded small grid searches (the chosen cell, the fold
scores and the test decision values, bit for bit) and on the inner routine itself."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

import mlkit.methods.mi.reduced as reduced
from mlkit.kernels import dense_dot, rbf_kernel, shared_work, squared_norms
from mlkit.methods.mi import RS, miSVM
from mlkit.methods.mi._base import bag_argmax, bag_index
from mlkit.methods.mi.misvm import _best_of_cycle, _svm_objective
from mlkit.resumable_search import ResumableGridSearchCV

from .test_mi_methods import make_mi


# -- reference implementations: the code before the speed-ups ------------------------------
def reference_preimage(z, U, alpha, Z, beta, gamma, max_iter, tol, U_norms):
    """reduced._preimage as it was: every kernel row through rbf_kernel."""
    best, best_value = z, -np.inf
    for _ in range(max_iter):
        zz = np.array([z @ z])
        k_u = rbf_kernel(z[None, :], U, gamma, X_norms=zz, Z_norms=U_norms)[0]
        k_z = rbf_kernel(z[None, :], Z, gamma, X_norms=zz)[0]
        r = k_u @ alpha - k_z @ beta
        value = r @ r
        if value > best_value:
            best, best_value = z, value
        if not value > 0 or not np.isfinite(value):
            break
        step = (dense_dot(k_u * (alpha @ r), U) - (k_z * (beta @ r)) @ Z) / value
        if not np.all(np.isfinite(step)):
            break
        moved = np.sqrt(gamma) * np.linalg.norm(step - z)
        z = step
        if moved < tol:
            break
    return best


def reference_reduced_set(U, alpha, n_vectors, gamma, *, max_iter=100, tol=1e-4):
    """reduced.reduced_set as it was: one loop from no vectors to ``n_vectors``."""
    U_norms = squared_norms(U)
    psi_at_u = rbf_kernel(U, gamma=gamma) @ alpha
    norm2 = float(np.sum(alpha * psi_at_u))
    Z = np.empty((0, U.shape[1]))
    beta = np.empty((0, alpha.shape[1]))
    K_zu = np.empty((0, U.shape[0]))
    errors = []
    for _ in range(n_vectors):
        if errors and errors[-1] <= reduced._EXACT * norm2:
            break
        residual = psi_at_u - K_zu.T @ beta
        start = int(np.argmax(np.sum(residual ** 2, axis=1)))
        z = U[start].toarray().ravel() if sp.issparse(U) else U[start].copy()
        z = reduced._preimage(z, U, alpha, Z, beta, gamma, max_iter, tol, U_norms)
        Z = np.vstack([Z, z])
        K_zu = np.vstack([K_zu, rbf_kernel(z[None, :], U, gamma, Z_norms=U_norms)])
        proj = K_zu @ alpha
        K_zz = rbf_kernel(Z, gamma=gamma)
        beta = reduced._project(K_zz, proj)
        errors.append(max(norm2 - 2 * np.sum(beta * proj) + np.sum(beta * (K_zz @ beta)),
                          0.0))
    return Z, beta, np.asarray(errors)


class ReferenceMiSVM(miSVM):
    """miSVM as it was: scikit-learn's full input validation, ``K[:, sv]`` by fancy
    indexing."""

    def _svm(self, gram, labels):
        svc = SVC(kernel="precomputed", C=self.C).fit(gram, labels)
        return svc.support_, svc.dual_coef_[0], svc.intercept_[0]

    def _fit_binary(self, K, offsets, y):
        pos_inst, pos_offsets = self._positive_part(offsets, y)
        labels = y[bag_index(offsets)].copy()
        seen, svms = {}, []
        for it in range(1, self.max_iter + 1):
            state = labels[pos_inst].tobytes()
            if state in seen:
                self.cycles_.append(len(svms) - seen[state])
                a, b = _best_of_cycle(svms[seen[state]:])
                return a, b, it - 1, True
            seen[state] = len(svms)
            sv, dual, b = self._svm(K, labels)
            a = np.zeros(K.shape[0])
            a[sv] = dual
            Ka = K[:, sv] @ dual
            svms.append((_svm_objective(dual, Ka[sv], labels * (Ka + b), None, self.C), a, b))
            f = Ka[pos_inst] + b
            imputed = np.where(f > 0, 1.0, -1.0)
            no_positive = np.maximum.reduceat(imputed, pos_offsets[:-1]) < 0
            imputed[bag_argmax(f, pos_offsets)[no_positive]] = 1.0
            if np.array_equal(imputed, labels[pos_inst]):
                return a, b, it, True
            labels[pos_inst] = imputed
        return a, b, self.max_iter, False


@pytest.fixture
def reference_rs(monkeypatch):
    """RS as it was: the old fixed point, and every reduced set computed (no sharing)."""
    monkeypatch.setattr(reduced, "_preimage", reference_preimage)
    monkeypatch.setattr(reduced, "_construction",
                        lambda U, alpha, n, gamma, max_iter, tol: reference_reduced_set(
                            U, alpha, n, gamma, max_iter=max_iter, tol=tol))


@pytest.fixture(autouse=True)
def fresh_memos():
    """Each test starts with this process's memos of learned models empty."""
    from mlkit.methods._memo import FITTED

    reduced.CONSTRUCTIONS.clear()
    FITTED.clear()
    yield
    reduced.CONSTRUCTIONS.clear()
    FITTED.clear()


def _search(est, bags, y, grid):
    search = ResumableGridSearchCV(est, grid, cv=StratifiedKFold(3, shuffle=True,
                                                                 random_state=0))
    return search.fit(bags, y)


def _same_search(new, old, test):
    assert new.best_params_ == old.best_params_
    np.testing.assert_array_equal(new.cv_results_["mean_test_score"],
                                  old.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(new.decision_function(test), old.decision_function(test))


@pytest.fixture(scope="module")
def data():
    bags, y = make_mi(90, d=5, seed=3)
    return bags[:60], y[:60], bags[60:], y[60:]


# -- RS --------------------------------------------------------------------------------------
@pytest.mark.parametrize("sparse_u", [False, True])
def test_preimage_is_the_reference_fixed_point(sparse_u):
    rng = np.random.default_rng(0)
    U = rng.normal(size=(40, 6))
    U[np.abs(U) < 0.4] = 0.0
    alpha = rng.normal(size=(40, 2))
    Z, beta = rng.normal(size=(3, 6)), rng.normal(size=(3, 2))
    Us = sp.csr_matrix(U) if sparse_u else U
    norms = squared_norms(Us)
    for start in range(5):
        args = (U[start].copy(), Us, alpha, Z, beta, 0.3, 100, 1e-6, norms)
        np.testing.assert_array_equal(reduced._preimage(*args), reference_preimage(*args))
    # and the whole construction, with no vectors yet (an empty Z) at the start
    new = reduced.reduced_set(Us, alpha, 8, 0.3)
    reduced._preimage, keep = reference_preimage, reduced._preimage
    try:
        old = reduced.reduced_set(Us, alpha, 8, 0.3)
    finally:
        reduced._preimage = keep
    for a, b in zip(new, old):
        np.testing.assert_array_equal(a, b)


def _rs_search(bags, y):
    # C = 100 and 1000 reach the same (hard-margin) MI-Kernel solution on these bags
    return _search(RS(n_xv=6), bags, y, {"gamma": [0.05, 0.2], "C": [1.0, 100.0, 1000.0]})


def test_rs_grid_search_keeps_its_numbers(data, request):
    bags, y, test, _ = data
    new = _rs_search(bags, y)
    # 6 cells x 3 folds and the refit, less the cells whose dense solution is shared
    assert len(reduced.CONSTRUCTIONS) < 6 * 3 + 1
    assert reduced.CONSTRUCTIONS.hits > 0
    request.getfixturevalue("reference_rs")
    old = _rs_search(bags, y)
    _same_search(new, old, test)


def test_rs_shared_reduced_set_is_the_unshared_one(data):
    """A reduced set taken from the worker's memo is the one the fit computes alone."""
    bags, y, test, _ = data
    alone = RS(n_xv=6, C=1000.0, gamma=0.2).fit(bags, y)
    reduced.CONSTRUCTIONS.clear()
    RS(n_xv=6, C=100.0, gamma=0.2).fit(bags, y)
    hits = reduced.CONSTRUCTIONS.hits
    shared = RS(n_xv=6, C=1000.0, gamma=0.2).fit(bags, y)
    assert reduced.CONSTRUCTIONS.hits > hits
    np.testing.assert_array_equal(shared.expansion_vectors_, alone.expansion_vectors_)
    np.testing.assert_array_equal(shared.dual_coef_, alone.dual_coef_)
    assert shared.dual_coef_.flags.writeable


@pytest.mark.parametrize("d, n_u", [(9, 300), (166, 400), (4, 6)])
def test_reduced_set_is_the_reference_construction(d, n_u):
    """The construction, grown in one go or continued in steps (each smaller set read as a
    prefix of a larger one), gives the reference loop's Z, beta and errors bit for bit; with
    n_u = 6 the expansion is reproduced before 12 vectors and the growth stops there."""
    rng = np.random.default_rng(d)
    U = rng.normal(size=(n_u, d))
    alpha = rng.normal(size=(n_u, 2)) * (rng.random((n_u, 1)) < 0.6)
    gamma = 1.0 / d
    construction = reduced.GreedyReducedSet(U, alpha, gamma)
    for n in (3, 8, 12):
        construction.grow(U, alpha, n)
        expected = reference_reduced_set(U, alpha, n, gamma)
        for got in (construction.result(n), reduced.reduced_set(U, alpha, n, gamma)):
            for a, b in zip(got, expected):
                np.testing.assert_array_equal(a, b)
    # a smaller set read back from the grown construction
    for a, b in zip(construction.result(2), reference_reduced_set(U, alpha, 2, gamma)):
        np.testing.assert_array_equal(a, b)
    if n_u == 6:
        assert len(construction.Z) < 12 and construction.exact


@pytest.mark.parametrize("classes", [2, 3])
def test_rs_rows_share_one_construction(classes):
    """RS (3) then RS (8) on the same rows (the rows of a split sharing their seed): the
    second continues the first's constructions, and both equal fits computed alone."""
    bags, y = make_mi(45, d=4, seed=5)
    y = np.arange(45) % classes if classes > 2 else y
    small = RS(n_xv=3, C=10.0, gamma=0.3).fit(bags, y)
    n_built = len(reduced.CONSTRUCTIONS)
    large = RS(n_xv=8, C=10.0, gamma=0.3).fit(bags, y)
    assert len(reduced.CONSTRUCTIONS) == n_built          # continued, not built again
    for n_xv, shared in ((3, small), (8, large)):
        reduced.CONSTRUCTIONS.clear()
        alone = RS(n_xv=n_xv, C=10.0, gamma=0.3).fit(bags, y)
        np.testing.assert_array_equal(shared.expansion_vectors_, alone.expansion_vectors_)
        np.testing.assert_array_equal(shared.dual_coef_, alone.dual_coef_)
        np.testing.assert_array_equal(shared.reconstruction_errors_,
                                      alone.reconstruction_errors_)
        np.testing.assert_array_equal(shared.decision_function(bags),
                                      alone.decision_function(bags))


# -- mi-SVM ----------------------------------------------------------------------------------
def test_misvm_grid_search_keeps_its_numbers(data):
    bags, y, test, _ = data
    grid = {"gamma": [0.05, 0.3], "C": [0.5, 10.0]}
    new = _search(miSVM(), bags, y, grid)
    old = _search(ReferenceMiSVM(), bags, y, grid)
    _same_search(new, old, test)
    y3 = np.arange(len(y)) % 3
    a = miSVM(C=10.0, gamma=0.3).fit(bags, y3)
    b = ReferenceMiSVM(C=10.0, gamma=0.3).fit(bags, y3)
    np.testing.assert_array_equal(a.decision_function(test), b.decision_function(test))
    np.testing.assert_array_equal(a.n_iter_, b.n_iter_)


# -- MI-SVM ----------------------------------------------------------------------------------
def test_misvm_bag_grid_search_keeps_its_numbers(data, monkeypatch):
    """The tiled gather of the bag-slack Gram block against numpy's fancy-indexed copy, on a
    grid search (binary problems: the block gathered from K's rows) and a three-class fit
    (from its column-major copy)."""
    import mlkit.methods.mi.misvm as misvm_module
    from mlkit.methods.mi import MISVM

    def reference_gather(src, idx, out, offset):
        out[offset:, offset:] = src[np.ix_(idx, idx)]

    bags, y, test, _ = data
    grid = {"gamma": [0.05, 0.3], "C": [0.5, 10.0]}
    y3 = np.arange(len(y)) % 3
    new = _search(MISVM(), bags, y, grid)
    new3 = MISVM(C=10.0, gamma=0.3).fit(bags, y3)
    monkeypatch.setattr(misvm_module, "gather_block", reference_gather)
    old = _search(MISVM(), bags, y, grid)
    old3 = MISVM(C=10.0, gamma=0.3).fit(bags, y3)
    _same_search(new, old, test)
    np.testing.assert_array_equal(new3.decision_function(test), old3.decision_function(test))
