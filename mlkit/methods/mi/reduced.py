"""The two naive sparse MI classifiers SparseMI is compared with (Table I-II of [1]_): RS, a
reduced-set approximation of the dense MI-Kernel solution [2]_, and RSVM, a label-mean SVM
over random training instances [3]_.

References
----------
.. [1] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
.. [2] B. Schölkopf, A. J. Smola. Learning with Kernels, Ch. 18 (pre-images and reduced set
   methods). MIT Press, 2002.
.. [3] Y.-J. Lee, O. L. Mangasarian. RSVM: reduced support vector machines. SIAM SDM 2001.
"""

import logging
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.linalg
from scipy.linalg import block_diag
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from ...kernels import bag_reduce, dense_dot, fingerprint, rbf_kernel, squared_norms
from ...registry import METHODS
from .._memo import Memo
from ._base import InstanceExpansionMixin, MIClassifierBase
from ._label_mean import KZ_RIDGE, fit_label_mean_svm
from .mikernel import fit_set_kernel_svm

__all__ = ["RS", "RSVM", "reduced_set", "GreedyReducedSet"]

logger = logging.getLogger(__name__)

#: Relative squared RKHS error below which the reduced set reproduces the expansion (then no
#: further vector can reduce it and the fixed point would divide by ~0).
_EXACT = 1e-12


def _preimage(z, U, alpha, Z, beta, gamma, max_iter, tol, U_norms):
    """Fixed-point search for the point whose kernel function best matches the residual.

    The residual ``r_c(z) = sum_i alpha_ic k(u_i, z) - sum_l beta_lc k(z_l, z)`` is maximised
    in ``sum_c r_c(z)^2``; setting its gradient to zero gives the Gaussian-kernel fixed
    point (Ch. 18 of [2]_, here summed over the binary problems)

    .. math:: z \\leftarrow \\frac{\\sum_i \\omega_i k(p_i, z)\\, p_i}{\\sum_i \\omega_i k(p_i, z)},
              \\qquad \\omega_i = \\sum_c r_c(z)\\, c_{ic}

    over the points p = (u, z_l) with coefficients c = (alpha, -beta); the denominator is
    ``sum_c r_c(z)^2``. Returns the best point visited.

    RS's innermost loop (~30 iterations per vector, 100 vectors per fit): the kernel rows
    are formed by :func:`_kernel_row`, the operations of :func:`mlkit.kernels.rbf_kernel`
    without its per-call checks, and the squared norms of the fixed Z once per search.
    """
    best, best_value = z, -np.inf
    Z_norms = squared_norms(Z)                  # Z is fixed during the search
    scale = np.sqrt(gamma)
    for _ in range(max_iter):
        zz = z @ z
        k_u = _kernel_row(z, U, zz, U_norms, gamma)
        k_z = _kernel_row(z, Z, zz, Z_norms, gamma)
        r = k_u @ alpha - k_z @ beta
        value = r @ r
        if value > best_value:
            best, best_value = z, value
        if not value > 0 or not np.isfinite(value):      # reproduced, or an overflow
            break
        step = (dense_dot(k_u * (alpha @ r), U) - (k_z * (beta @ r)) @ Z) / value
        if not np.isfinite(step).all():
            break
        moved = step - z
        moved = scale * np.sqrt(moved.dot(moved))        # np.linalg.norm's computation
        z = step
        if moved < tol:
            break
    return best


def _kernel_row(z, P, zz, P_norms, gamma):
    """``exp(-gamma ||z - p||^2)`` for every row p of P (dense or sparse), by the operations
    of :func:`mlkit.kernels.rbf_kernel` with precomputed norms (``zz = z @ z``), in the same
    order: the same numbers."""
    D = dense_dot(z[None, :], P.T)
    D *= -2.0
    D += zz
    D += P_norms
    np.maximum(D, 0.0, out=D)
    D *= D.dtype.type(-gamma)
    return np.exp(D, out=D)[0]


def _project(K_zz, proj):
    """beta = (K_zz + ridge I)^{-1} proj by Cholesky; the ridge starts at KZ_RIDGE and grows
    tenfold while the matrix is numerically singular (near-duplicate z_l: a fixed point can
    land on an earlier vector)."""
    ridge = KZ_RIDGE
    eye = np.eye(len(K_zz))
    while True:
        K_reg = K_zz + ridge * eye
        try:
            return scipy.linalg.cho_solve(scipy.linalg.cho_factor(K_reg), proj)
        except np.linalg.LinAlgError:
            if ridge >= 1.0:
                raise
            ridge *= 10.0


def reduced_set(U, alpha, n_vectors, gamma, *, max_iter=100, tol=1e-4):
    """Approximate ``Psi_c = sum_i alpha_ic phi(u_i)`` by ``sum_l beta_lc phi(z_l)``.

    Greedy reduced-set construction (Ch. 18 of [2]_) with the XVs shared by all columns:
    each new z starts at the u with the largest squared residual, moves by the fixed point
    of :func:`_preimage`, and after each addition all beta are refitted by projecting Psi
    onto span{phi(z_l)}: ``beta = (K_Z + ridge I)^{-1} K_{Z,U} alpha`` (the ridge grows while
    K_Z is numerically singular, and the squared error is clamped at 0, so near-duplicate
    instances neither stop the fit with "singular matrix" nor give negative errors).

    Parameters
    ----------
    U : {ndarray, sparse matrix} of shape (n_u, d)
        Expansion points of the dense solution.
    alpha : ndarray of shape (n_u, n_problems)
    n_vectors : int
    gamma : float
    max_iter : int, default=100
        Fixed-point iterations per vector.
    tol : float, default=1e-4
        Stop a fixed-point search when z moves less than tol kernel widths
        (``sqrt(gamma) ||dz|| < tol``).

    Returns
    -------
    Z : ndarray of shape (n_z, d)
        n_z = n_vectors, or fewer when Psi is reproduced exactly first.
    beta : ndarray of shape (n_z, n_problems)
    errors : ndarray of shape (n_z,)
        ``sum_c ||Psi_c - sum_l beta_lc phi(z_l)||^2`` after each added vector.
    """
    construction = GreedyReducedSet(U, alpha, gamma, max_iter=max_iter, tol=tol)
    construction.grow(U, alpha, n_vectors)
    return construction.result(n_vectors)


class GreedyReducedSet:
    """The state of :func:`reduced_set`'s greedy construction after each added vector.

    The construction is greedy: its first m vectors, and beta after the m-th, do not depend
    on how many vectors are asked for. So a construction grown to m vectors gives every
    smaller reduced set (:meth:`result`) and is continued, not restarted, for a larger one
    (:meth:`grow`), by the same operations in the same order: RS (10), RS (50) and RS (100)
    of one dense solution cost one RS (100), with the same numbers.

    Parameters
    ----------
    U, alpha, gamma, max_iter, tol
        As :func:`reduced_set`'s; the state keeps neither U nor alpha (:meth:`grow` is
        given them again), only Z, every beta, the errors and ``K_{U,U} alpha``.
    """

    def __init__(self, U, alpha, gamma, *, max_iter=100, tol=1e-4):
        self.gamma, self.max_iter, self.tol = gamma, max_iter, tol
        self.psi_at_u = rbf_kernel(U, gamma=gamma) @ alpha
        self.norm2 = float(np.sum(alpha * self.psi_at_u))
        self.Z = np.empty((0, U.shape[1]))
        self.betas = []                 # beta after each added vector
        self.errors = []

    @property
    def nbytes(self):
        """The bytes of the arrays held (for :class:`mlkit.methods._memo.Memo`)."""
        return (self.psi_at_u.nbytes + self.Z.nbytes + sum(b.nbytes for b in self.betas)
                + 8 * len(self.errors))

    @property
    def exact(self):
        """Whether the expansion is reproduced, so that no further vector is added."""
        return bool(self.errors) and self.errors[-1] <= _EXACT * self.norm2

    def grow(self, U, alpha, n_vectors):
        """Add vectors until there are ``n_vectors`` or Psi is reproduced exactly."""
        if len(self.Z) >= n_vectors or self.exact:
            return self
        gamma, U_norms = self.gamma, squared_norms(U)
        Z = self.Z
        beta = self.betas[-1] if self.betas else np.empty((0, alpha.shape[1]))
        # many small products: threaded BLAS only adds wake-up latency
        with threadpool_limits(limits=1, user_api="blas"):
            # K_{Z,U} row by row, as the construction formed it (each z a fresh array, as
            # the fixed point returned it)
            K_zu = np.vstack([np.empty((0, U.shape[0]))] + [
                rbf_kernel(z.copy()[None, :], U, gamma, Z_norms=U_norms) for z in Z])
            while len(Z) < n_vectors:
                if self.exact:
                    logger.info("reduced set: the expansion is reproduced after %d vectors",
                                len(Z))
                    break
                residual = self.psi_at_u - K_zu.T @ beta
                start = int(np.argmax(np.sum(residual ** 2, axis=1)))
                z = U[start].toarray().ravel() if sp.issparse(U) else U[start].copy()
                z = _preimage(z, U, alpha, Z, beta, gamma, self.max_iter, self.tol, U_norms)
                Z = np.vstack([Z, z])
                K_zu = np.vstack([K_zu, rbf_kernel(z[None, :], U, gamma, Z_norms=U_norms)])
                proj = K_zu @ alpha
                K_zz = rbf_kernel(Z, gamma=gamma)
                beta = _project(K_zz, proj)
                # the squared RKHS error of this expansion (without the ridge); rounding
                # can push the expanded form below 0
                self.errors.append(max(self.norm2 - 2 * np.sum(beta * proj)
                                       + np.sum(beta * (K_zz @ beta)), 0.0))
                self.betas.append(beta)
                self.Z = Z
        return self

    def result(self, n_vectors):
        """(Z, beta, errors) of the reduced set of ``n_vectors`` (fewer when Psi was
        reproduced with fewer), as :func:`reduced_set` returns them."""
        m = min(n_vectors, len(self.Z))
        beta = self.betas[m - 1] if m else np.empty((0, self.psi_at_u.shape[1]))
        return self.Z[:m].copy(), beta.copy(), np.asarray(self.errors[:m])


#: Reduced-set constructions of this worker, by dense solution (:meth:`RS._fit`).
CONSTRUCTIONS = Memo()


def _construction(U, alpha, n_vectors, gamma, max_iter, tol):
    """:func:`reduced_set`'s result, from this worker's construction of the same dense
    solution (its instances ``U`` and weights ``alpha``, by value) when one exists: grown
    further if it has fewer vectors, its prefix if it has more."""
    key = (fingerprint(U), fingerprint(alpha), float(gamma), max_iter, float(tol))
    construction = CONSTRUCTIONS.get(key)
    if construction is None:
        construction = GreedyReducedSet(U, alpha, gamma, max_iter=max_iter, tol=tol)
    construction.grow(U, alpha, n_vectors)
    CONSTRUCTIONS.put(key, construction)       # its bytes counted again as it grows
    return construction.result(n_vectors)


class RS(InstanceExpansionMixin, MIClassifierBase):
    """RS: reduced-set approximation of the MI-Kernel classifier with N_XV free vectors.

    [1]_ describes RS as "fitting the weight vector with a linear combination of reduced
    number of vectors that minimizes the reconstruction error of the classifier" (Sec. II).
    The dense classifier is :class:`MIKernel` (not named in [1]_), whose weight vector is
    ``Psi = sum_p a_p phi(x_p)`` over the instances of its support bags; RS replaces it by

    .. math:: \\min_{\\beta, Z} \\Big\\| \\Psi - \\sum_{j=1}^{N_{XV}} \\beta_j \\phi(z_j)
              \\Big\\|^2

    with free points z_j found greedily by the Gaussian-kernel fixed-point iteration
    (:func:`reduced_set`), and keeps MI-Kernel's bias and label-mean bag score. With several
    classes (one-vs-rest problems) [1]_ does not say how RS is extended; ``reduced_sets``
    chooses: one reduced set of N_XV vectors per problem (each binary classifier
    approximated on its own, as RS is defined for one weight vector), or one set of N_XV
    vectors shared by all problems (approximating all weight vectors jointly, as SparseMI
    shares its XVs).

    Parameters
    ----------
    n_xv : int, default=10
        N_XV, the number of expansion vectors (per one-vs-rest problem with
        ``reduced_sets="per_class"``).
    C : float, default=1.0
        Cost of the MI-Kernel SVM.
    gamma : float or "scale", default="scale"
        Gaussian kernel width; "scale" is 1 / (sum of the feature variances of the
        standardised training instances).
    max_iter : int, default=100
        Fixed-point iterations per vector.
    tol : float, default=1e-4
        Fixed-point stopping tolerance, in kernel widths.
    reduced_sets : {"per_class", "shared"}, default="per_class"
        With more than two classes: one reduced set per one-vs-rest problem, or one set
        shared by all of them (not stated in [1]_). Two classes have a single problem, so
        both give the same model.
    standardize : bool, default=True

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    expansion_vectors_ : ndarray of shape (``n_xv_``, n_features)
        The free points z_j (standardised space); per class, the sets one after another.
    dual_coef_ : ndarray of shape (n_problems, ``n_xv_``)
        With ``reduced_sets="per_class"`` problem c weighs only its own set (zeros
        elsewhere).
    intercept_ : ndarray of shape (n_problems,)
        MI-Kernel's bias.
    n_xv_ : int
        The expansion vectors of one classifier (the paper's #XV): N_XV, fewer only if
        MI-Kernel's solution is reproduced exactly with fewer (the largest set over the
        problems). With per-class sets ``expansion_vectors_`` holds all of them.
    dense_n_xv_ : int
        Number of XVs of the MI-Kernel solution that was approximated.
    reconstruction_errors_ : ndarray of shape (n_sets, N_XV)
        Squared RKHS error of each reduced set after each added vector (non-increasing; a
        set that reproduces its weight vector early keeps its last error).
    mean_, scale_ : ndarray of shape (n_features,)
    gamma_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods.mi import RS
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(4, 2)) + 3 * (i % 2) for i in range(20)]
    >>> y = np.arange(20) % 2
    >>> RS(n_xv=2, C=10).fit(bags, y).predict(bags[:4]).tolist()
    [0, 1, 0, 1]
    """

    _parameter_constraints = {
        **MIClassifierBase._parameter_constraints,
        "n_xv": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "reduced_sets": [StrOptions({"per_class", "shared"})],
    }

    #: 3: one reduced set per one-vs-rest problem by default (``reduced_sets``)
    numerics_revision = 3
    #: the RS runs of one split go to one worker: rows with different N_XV that share
    #: their seed (so their inner folds and dense solutions) build one construction
    learning_family = "RS"

    def __init__(self, n_xv=10, *, C=1.0, gamma="scale", max_iter=100, tol=1e-4,
                 reduced_sets="per_class", standardize=True):
        self.n_xv = n_xv
        self.C = C
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.reduced_sets = reduced_sets
        self.standardize = standardize

    def fit(self, bags, y):
        super().fit(bags, y)
        self.n_xv_ = int(np.count_nonzero(self.dual_coef_, axis=1).max())
        return self

    def _fit(self, X, offsets, Y):
        coef, intercept = fit_set_kernel_svm(X, offsets, Y, gamma=self.gamma_, C=self.C)
        rows = np.flatnonzero(np.any(coef != 0, axis=1))
        self.dense_n_xv_ = len(rows)
        columns = [slice(None)] if self.reduced_sets == "shared" or coef.shape[1] == 1 \
            else [slice(c, c + 1) for c in range(coef.shape[1])]
        Zs, betas, errors = [], [], []
        for col in columns:             # one reduced set per problem, or one for all
            sub = rows[np.any(coef[rows, col] != 0, axis=1)]
            alpha = coef[sub, col]
            # once per dense solution in this worker: grid points with the same one (e.g.
            # C = 100 and 1000 when no bag reaches the cap) and the RS rows of one split
            # with different N_XV (their greedy constructions are prefixes of each other)
            Z, beta, err = _construction(X[sub], alpha, self.n_xv, self.gamma_,
                                         self.max_iter, self.tol)
            Zs.append(Z)
            betas.append(beta)
            errors.append(np.pad(err, (0, self.n_xv - len(err)), mode="edge"))
        self.expansion_vectors_ = np.vstack(Zs)
        # problem c's coefficients on its own set (block diagonal), or on the shared one
        self.dual_coef_ = np.array(
            betas[0].T if len(betas) == 1 else block_diag(*[b.T for b in betas]), order="C")
        self.reconstruction_errors_ = np.vstack(errors)
        self.intercept_ = intercept


class RSVM(InstanceExpansionMixin, MIClassifierBase):
    """RSVM: the label-mean squared-hinge SVM over N_XV random training instances.

    The XVs are drawn uniformly without replacement from the training instances [3]_ and
    never moved: SparseMI without optimisation (t_max = 0, Sec. V-B of [1]_). For fixed Z
    the weights minimise Eq. (12) of [1]_ with L-BFGS,

    .. math:: \\min_{\\beta, \\rho} \\tfrac12 \\beta^T K_Z \\beta
              + C \\sum_i \\max\\Big(0, 1 - y_i \\big(\\tfrac{1}{n_i} 1^T K_{X_i,Z} \\beta
              + \\rho\\big)\\Big)^2

    and a bag is scored by the mean of its instance scores (Eq. (3)). With several classes
    the one-vs-rest problems share the XVs.

    Parameters
    ----------
    n_xv : int, default=10
        N_XV. If it exceeds the number of training instances, all of them are used (with a
        warning).
    C : float, default=1.0
        Cost of the squared hinge losses.
    gamma : float or "scale", default="scale"
        Gaussian kernel width; "scale" is 1 / (sum of the feature variances of the
        standardised training instances).
    random_state : int, RandomState or None, default=None
        Draws the XVs.
    standardize : bool, default=True

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    expansion_vectors_ : {ndarray, CSR matrix} of shape (``n_xv_``, n_features)
        The drawn training instances (standardised).
    dual_coef_ : ndarray of shape (n_problems, ``n_xv_``)
        beta.
    intercept_ : ndarray of shape (n_problems,)
        rho.
    support_ : ndarray of shape (``n_xv_``,)
        Indices of the XVs among the training instances.
    objective_ : ndarray of shape (n_problems,)
        Optimal value g(Z) of each binary problem (Eq. (17)).
    n_xv_ : int
    mean_, scale_ : ndarray of shape (n_features,)
    gamma_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods.mi import RSVM
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(4, 2)) + 3 * (i % 2) for i in range(20)]
    >>> y = np.arange(20) % 2
    >>> RSVM(n_xv=5, C=10, random_state=0).fit(bags, y).predict(bags[:4]).tolist()
    [0, 1, 0, 1]
    """

    #: solver of the weights (:func:`._label_mean.fit_label_mean_svm`), as SparseMI's
    inner_solver = "newton"
    #: 3: the finite Newton method as the inner solver (``inner_solver``), the same optimum
    #: to rounding, 10-30x cheaper than L-BFGS at C >= 10
    numerics_revision = 3
    _parameter_constraints = {
        **MIClassifierBase._parameter_constraints,
        "n_xv": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_xv=10, *, C=1.0, gamma="scale", random_state=None, standardize=True):
        self.n_xv = n_xv
        self.C = C
        self.gamma = gamma
        self.random_state = random_state
        self.standardize = standardize

    def _fit(self, X, offsets, Y):
        n = X.shape[0]
        if self.n_xv > n:
            warnings.warn(f"RSVM: n_xv={self.n_xv} exceeds the {n} training instances; all "
                          f"{n} are used as expansion vectors")
        rng = check_random_state(self.random_state)
        self.support_ = np.sort(rng.choice(n, size=min(self.n_xv, n), replace=False))
        Z = X[self.support_]
        A = bag_reduce(rbf_kernel(X, Z, self.gamma_), offsets, "mean")
        K_z = rbf_kernel(Z, gamma=self.gamma_) + KZ_RIDGE * np.eye(len(self.support_))
        beta, self.intercept_, self.objective_ = fit_label_mean_svm(
            A, Y, K_z, self.C, solver=self.inner_solver)
        self.expansion_vectors_ = Z
        self.dual_coef_ = np.ascontiguousarray(beta.T)


METHODS.register("rs", RS, summary="RS: reduced-set approximation of MI-Kernel with N_XV vectors (Fu et al. 2013)",
                 family="multi-instance", paper="sparsemi")
METHODS.register("rsvm", RSVM, summary="RSVM: N_XV random instances as expansion vectors (Fu et al. 2013)",
                 family="multi-instance", paper="sparsemi")
