"""SparseMI: a label-mean MI classifier over a few learned expansion vectors (Fu, Lu, Ting &
Zhang, TNNLS 2013 [1]_).

The bag score is the mean of an instance classifier with N_XV free expansion vectors (XVs)
``z_j`` (Eq. (8), (10)-(11) of [1]_),

.. math:: F(X) = \\frac{1}{|X|} \\sum_{x \\in X} \\sum_{j=1}^{N_{XV}} \\beta_j k(x, z_j) + \\rho,

learned by minimising ``g(Z) = min_{beta, rho} Q(beta, rho, Z)`` (Eq. (12)-(17), a primal
2-norm SVM solved with L-BFGS in :mod:`._label_mean`) by gradient descent on Z (Eq. (18),
Algorithm 1). Several classes are one-vs-rest problems sharing Z (Eq. (19)-(20)); sparse
high-dimensional instances use ``z_j = B v_j`` over Q basis vectors (Eq. (22)-(24)), and only
``B^T x`` and ``B^T B`` are ever formed.

References
----------
.. [1] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
"""

import logging
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ...kernels import (bag_mean_matrix, bag_reduce, dense_dot, rbf_kernel, shared_result,
                        squared_distances, squared_norms)
from ...registry import METHODS
from .._memo import memoized_fit
from .._validation import check_bags
from ._base import InstanceExpansionMixin, MIClassifierBase, bag_index
from ._label_mean import KZ_RIDGE, fit_label_mean_svm, fit_linear_svm, single_threaded_blas

__all__ = ["SparseMI"]

logger = logging.getLogger(__name__)


def _rows_dense(X, rows):
    """Rows of a dense or sparse matrix as a dense ndarray (only a few rows)."""
    R = X[rows]
    return R.toarray() if sp.issparse(R) else np.array(R, dtype=float)


def _bag_features(X, offsets, gamma):
    """The bags' mean kernel rows against every instance, ``(n_bags, N)`` (Eq. (8))."""
    N = X.shape[0]
    S = np.empty((len(offsets) - 1, N))
    for start in range(0, N, 2048):               # at most N x 2048 kernel entries at once
        S[:, start:start + 2048] = bag_reduce(
            rbf_kernel(X, X[start:start + 2048], gamma), offsets, "mean")
    return S


def _kmeans_centres(X, k, seed):
    """k k-means centroids of the rows of X (one Lloyd run from k-means++ seeded by seed),
    computed once per :func:`~mlkit.kernels.shared_work` scope: they depend on no grid
    value (gamma, C), so every cell of a grid's fold shares them."""
    return shared_result("kmeans_centres", lambda: np.asarray(
        KMeans(n_clusters=k, n_init=1, random_state=seed).fit(X).cluster_centers_,
        dtype=float), X, int(k), int(seed))


def _gaussian_from_cross(x_norms, cross, z_norms, gamma):
    """exp(-gamma ||x - z||^2) from ``cross = X Z^T`` and the squared norms, the distances
    clipped at 0 as :func:`~mlkit.kernels.squared_distances` clips them."""
    D = cross * -2.0
    D += x_norms[:, None]
    D += z_norms[None, :]
    np.maximum(D, 0.0, out=D)
    D *= -gamma
    return np.exp(D, out=D)


class _DenseGeometry:
    """XVs as free points of input space: the parameters are Z itself, shape (m, d)."""

    def __init__(self, X, gamma):
        self.X, self.gamma = X, gamma
        self.x_norms = squared_norms(X)

    def cross(self, Z):
        """The instances' inner products with the rows of Z (XVs or a direction), ``X Z^T``
        of shape (N, m): linear in Z, so a line search along a direction D takes
        ``X (Z - lambda D)^T = X Z^T - lambda X D^T`` without another product with X."""
        return dense_dot(self.X, Z.T)

    def kernels(self, Z, cross=None):
        """(K_{X,Z} of shape (N, m), K_Z of shape (m, m) without the ridge); ``cross``: a
        precomputed :meth:`cross` of Z."""
        cross = self.cross(Z) if cross is None else cross
        return (_gaussian_from_cross(self.x_norms, cross, squared_norms(Z), self.gamma),
                rbf_kernel(Z, gamma=self.gamma))

    def features(self, Z):
        """The vectors whose differences the gradient combines: (x-side, z-side)."""
        return self.X, Z

    def points(self, Z):
        return Z


class _BasisGeometry:
    """XVs in the span of Q basis vectors, ``z_j = B v_j`` (Sec. IV-E of [1]_): the
    parameters are V of shape (m, Q), and the instances enter only through ``P = X B``
    (rows ``B^T x``, shape (N, Q)) and ``G = B^T B`` (Q, Q); X may stay sparse."""

    def __init__(self, X, basis, gamma):
        self.basis, self.gamma = basis, gamma
        self.P = dense_dot(X, basis.T)
        self.G = dense_dot(basis, basis.T)
        self.x_norms = squared_norms(X)

    def cross(self, V):
        """``x . (B v_j)`` for every instance and row of V, ``P V^T`` of shape (N, m)."""
        return self.P @ V.T

    def kernels(self, V, cross=None):
        cross = self.cross(V) if cross is None else cross
        H = V @ self.G
        zz = np.einsum("ij,ij->i", H, V)
        D_z = zz[:, None] + zz[None, :] - 2.0 * H @ V.T
        np.fill_diagonal(D_z, 0.0)
        return (_gaussian_from_cross(self.x_norms, cross, zz, self.gamma),
                np.exp(-self.gamma * np.maximum(D_z, 0.0)))

    def features(self, V):
        # dk(x, B v)/dv = 2 gamma B^T (x - B v) k = 2 gamma (P_x - G v) k   (Eq. (24))
        return self.P, V @ self.G

    def points(self, V):
        """The XVs in input space, ``V B^T`` as rows (dense, shape (m, d))."""
        return dense_dot(self.basis.T, V.T).T


#: below this share of instances in bags with a non-zero loss derivative, the outer gradient's
#: product with the instances takes only their rows (the others contribute exact zeros)
_ACTIVE_ROWS_SHARE = 0.8


def _objective_gradient(geometry, params, A_args, beta, rho, C, A=None):
    """dg/dparams (Eq. (18), or (24) for the basis form) at the inner optimum (beta, rho),
    summed over the binary problems (Eq. (20)).

    ``A_args`` = (K_XZ, K_Z, offsets, Y); ``A``, the bags' mean kernel rows
    ``bag_reduce(K_XZ, offsets, "mean")`` when the inner solve has them already (the same
    values; None computes them). For problem c with ``l'_i = 2 (f_i - y_i)`` where
    ``y_i f_i < 1`` (Eq. (16)):

    .. math:: \\frac{\\partial g}{\\partial z_j} = \\sum_i \\beta_i\\beta_j 2\\gamma (z_i - z_j)
              k(z_i, z_j) + C \\sum_i l'_i \\beta_j \\frac{1}{n_i} \\sum_p 2\\gamma
              (x_{ip} - z_j) k(x_{ip}, z_j)
    """
    K_xz, K_z, offsets, Y = A_args
    gamma = geometry.gamma
    sizes = np.diff(offsets).astype(float)
    F = (bag_reduce(K_xz, offsets, "mean") if A is None else A) @ beta + rho
    dloss = np.where(Y * F < 1, 2.0 * (F - Y), 0.0)                 # (n_bags, M)
    W1 = (beta @ beta.T) * K_z                                      # sum_c beta_ic beta_jc k_ij
    per_inst = (C * dloss / sizes[:, None])[bag_index(offsets)]     # (N, M)
    Xf, Zf = geometry.features(params)
    # only bags with y_i f_i < 1 (in some problem) have l'_i != 0: the others' instances
    # add exact zeros to the second sum, so their rows are left out of its product
    rows = np.flatnonzero(np.any(per_inst != 0, axis=1))
    if len(rows) < _ACTIVE_ROWS_SHARE * len(per_inst):
        Wx = K_xz[rows] * (per_inst[rows] @ beta.T)                 # (N_active, m)
        Xf = Xf[rows]
    else:
        Wx = K_xz * (per_inst @ beta.T)                             # (N, m)
    grad = W1 @ Zf - W1.sum(axis=1)[:, None] * Zf
    grad += dense_dot(Xf.T, Wx).T - Wx.sum(axis=0)[:, None] * Zf
    return 2.0 * gamma * grad


class SparseMI(InstanceExpansionMixin, MIClassifierBase):
    """SparseMI: label-mean MI classifier with N_XV learned expansion vectors [1]_.

    Minimises over the XVs ``Z`` the optimal value of the primal 2-norm SVM (Eq. (12))

    .. math:: g(Z) = \\min_{\\beta, \\rho} \\tfrac12 \\beta^T K_Z \\beta
              + C \\sum_i \\max(0, 1 - y_i f_i)^2, \\qquad
              f_i = \\tfrac{1}{n_i} 1^T K_{X_i, Z} \\beta + \\rho,

    solving the inner problem with L-BFGS (Eq. (14)-(16), warm-started from the previous
    solve) and Z by gradient descent with the line search of Algorithm 1 (Eq. (18)):
    ``Z' = Z - lambda D``, D the gradient dg/dZ scaled to unit length (``step_direction``);
    any decrease of g is accepted (lambda doubles when the first try succeeds), otherwise
    lambda halves, up to ``s_max`` tries; at most ``t_max`` outer iterations. The initial
    lambda is the mean pairwise distance of the initial XVs (1 with a single XV). With
    several classes the one-vs-rest problems share Z and g is their sum (Eq. (19)-(20)).
    A bag is scored by the mean instance score (Eq. (8)); ``predict`` takes the sign, or the
    class with the largest score.

    Parameters
    ----------
    n_xv : int, default=10
        N_XV, the number of expansion vectors (fixed; the paper's grid is {10, 50, 100, 500,
        1000}).
    C : float, default=1.0
        Cost of the squared hinge losses.
    gamma : float or "scale", default="scale"
        Gaussian kernel width; "scale" is 1 / (sum of the feature variances of the
        standardised training instances).
    init : {"random", "kmeans", "svm"} or array-like of shape (n_xv, n_features), \
            default="random"
        Initial XVs (Fig. 3 of [1]_): random training instances (drawn exactly as
        :class:`RSVM` draws them, so ``t_max=0`` is RSVM); k-means centroids of the training
        instances; or "svm": a linear SVM (cost C) on the label-mean bag features of Eq. (8)
        against all training instances, then the n_xv instances with the largest absolute weight
        (largest over the one-vs-rest problems). With ``n_basis`` set, "random" draws random
        coefficients (see ``basis_coef_init``); the other two project their points onto the
        basis (least squares; the "svm" instances are put into the basis, so exactly).
        An array gives the initial XVs explicitly, in the units of the input features (they
        are standardised like the instances), e.g. the deliberately poor starting points of
        Fig. 2 of [1]_; its number of rows must equal ``n_xv`` (dense form only).
    n_basis : int or None, default=None
        Q. None: the XVs are free points of input space (Eq. (18)). An int: ``z_j = B v_j``
        with Q random training instances as basis vectors (Eq. (22)-(24); the paper uses
        Q = 100 on the sparse TST sets); the instances then enter only through ``B^T x``.
    init_target : {"basis", "xvs"}, default="basis"
        In the basis form, what the "kmeans" and "svm" schemes choose (Sec. V-D of [1]_:
        "100 BVs, ten XVs for sparse ones. The initial coefficients for XVs are generated
        randomly"). "basis": the Q basis vectors are the scheme's (Q k-means centroids of
        the training instances, or the Q instances with the largest absolute SVM weight) and the XV
        coefficients start random as with ``init="random"`` (``basis_coef_init``); "xvs":
        the basis is drawn at random and the scheme places the N_XV initial XVs, projected
        onto it (an earlier reading, kept for comparison). Ignored in the dense form.
    basis_coef_init : {"simplex", "normal"}, default="simplex"
        Distribution of the random initial coefficients v_j in the basis form (not stated in
        [1]_: "randomly generated"). "simplex": uniform on the simplex (a random convex
        combination of the basis vectors); "normal": N(0, 1/Q) entries.
    step_direction : {"unit", "raw"}, default="unit"
        What lambda multiplies in ``Z' = Z - lambda D`` (not stated in [1]_, whose Algorithm 1
        writes ``Z - lambda dg/dZ`` with lambda starting at "the average pairwise distance
        between initial XVs", a length). "unit": the gradient scaled to unit Frobenius norm
        (in input space, also in the basis form), so lambda is the length of the step, as
        its initial value implies. "raw": the gradient itself, literally. The gradient's size
        grows with C and the number of bags (Eq. (18) sums over all of them): the literal
        first step moves the XVs hundreds to thousands of times their spread, 10 halvings
        (s_max) rarely bring it back, and the fit stops after 0-1 iterations on COREL-20 and
        on most TST k-means starts, where the paper's Fig. 4 shows the objective falling
        over its first iterations on these sets.
    s_max : int, default=10
        Line-search tries per outer iteration (paper: 10).
    t_max : int, default=50
        Maximum outer iterations (paper: 50); 0 keeps the initial XVs.
    tol : float, default=1e-6
        Convergence (not defined in [1]_): stop when an accepted step decreases g by less
        than ``tol * |g|`` (relative decrease).
    last_try : {"stop", "continue"}, default="stop"
        What follows a success on the s_max-th line-search try (not stated; Algorithm 1 read
        literally, "until ... s >= s_max", stops): "stop" accepts the step and stops,
        "continue" accepts it and goes on.
    jitter : float, default=1e-3
        When n_xv exceeds the number of training instances (or of k-means clusters) the
        missing XVs are instances drawn with replacement plus Gaussian noise of this
        standard deviation per (standardised) feature, since K_Z needs distinct z_j (not
        stated in [1]_). Basis form: the noise is added to the coefficients.
    random_state : int, RandomState or None, default=None
        Drives the initial XVs, the basis and the jitter.
    standardize : bool, default=True
        Standardise instance features (sparse inputs are only scaled).
    record_path : bool, default=False
        Keep the XVs (input units) after every accepted outer iteration in ``xv_path_`` and
        put them, the final XVs, beta, rho, gamma and the standardiser in the run record
        (:meth:`run_record_extras`), so a figure can draw the trajectories and evaluate the
        recorded model (Fig. 2 of [1]_). Meant for low-dimensional data; it never changes
        the fit.
    keep_stages : bool, default=False
        Keep (XVs or basis coefficients, beta, rho) after every accepted outer iteration in
        memory, so :meth:`staged_decision_function` scores the model of every iteration
        (Fig. 4 of [1]_: test accuracy vs iteration, through the runner's ``curves: true``).
        It never changes the fit; memory grows with ``n_iter_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    expansion_vectors_ : ndarray of shape (n_xv, n_features)
        The learned XVs (standardised space; ``V B^T`` in the basis form).
    dual_coef_ : ndarray of shape (n_problems, n_xv)
        beta.
    intercept_ : ndarray of shape (n_problems,)
        rho.
    basis_ : {ndarray, CSR matrix} of shape (n_basis, n_features)
        The basis vectors B as rows (basis form only).
    basis_coef_ : ndarray of shape (n_xv, n_basis)
        V (basis form only).
    objective_ : list of float
        g(Z) at the initial XVs and after every accepted outer iteration (non-increasing).
    eval_accuracy_ : list of float
        Accuracy on ``eval_set`` at the same points (only when ``eval_set`` is given).
    n_iter_ : int
        Accepted outer iterations.
    stop_reason_ : str
        "t_max", "tol" (also a zero gradient), "line_search" (all s_max tries failed) or
        "last_try".
    xv_path_ : list of ndarray of shape (n_xv, n_features)
        The XVs in input units at the start and after every accepted outer iteration (only
        with ``record_path=True``).
    n_xv_ : int
    mean_, scale_ : ndarray of shape (n_features,)
    gamma_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods.mi import SparseMI
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(4, 2)) + 3 * (i % 2) for i in range(20)]
    >>> y = np.arange(20) % 2
    >>> SparseMI(n_xv=2, C=10, t_max=5, random_state=0).fit(bags, y).predict(bags[:4]).tolist()
    [0, 1, 0, 1]
    """

    #: 2: the step along the unit gradient (``step_direction="unit"``) by default; 3: the
    #: finite Newton method as the inner solver (``inner_solver``)
    numerics_revision = 3
    #: revision of the "svm" initialisation alone (2: its linear SVM is solved in the primal
    #: to convergence; liblinear's dual stopped at 5000 iterations unconverged on TST; 3: in
    #: the basis form, the basis rows its instances replace are drawn at random, not always
    #: the highest-numbered ones; 4: the primal solver's iteration cap raised from 1000 to
    #: ``_SVM_INIT_MAX_ITER``: at C >= 1000 on TST it stopped unconverged, 1000 Newton
    #: iterations short of the 1,500-11,000 that a separable problem's near hard margin needs;
    #: 5: the linear SVM solved exactly by the finite Newton method, its bias unregularised,
    #: where liblinear regularised it as a feature and stopped at a relative gradient of
    #: 1e-6: 83-92 of the 100 chosen instances are the same, at 1/15 of the cost on COREL-20)
    svm_init_revision = 5
    #: solver of the inner problem (:func:`._label_mean.fit_label_mean_svm`): "lbfgs" (the
    #: paper's, Sec. IV-C) or "newton" (the same optimum to rounding, 10-100x cheaper; its
    #: numbers differ in the last digits, so switching it is a numerics revision)
    inner_solver = "newton"
    #: the runs of one split with SparseMI estimators go to one worker, whose memo
    #: (:func:`mlkit.methods._memo.memoized_fit`) fits each setting once on the same rows
    learning_family = "SparseMI"
    _memo_attributes = ("_stages",)
    _quick_params = {"n_xv": 3, "t_max": 3, "random_state": 0}

    _parameter_constraints = {
        **MIClassifierBase._parameter_constraints,
        "n_xv": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"random", "kmeans", "svm"}), "array-like"],
        "n_basis": [Interval(Integral, 1, None, closed="left"), None],
        "init_target": [StrOptions({"basis", "xvs"})],
        "basis_coef_init": [StrOptions({"simplex", "normal"})],
        "step_direction": [StrOptions({"unit", "raw"})],
        "s_max": [Interval(Integral, 1, None, closed="left")],
        "t_max": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "last_try": [StrOptions({"stop", "continue"})],
        "jitter": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "record_path": ["boolean"],
        "keep_stages": ["boolean"],
    }

    def __init__(self, n_xv=10, *, C=1.0, gamma="scale", init="random", n_basis=None,
                 init_target="basis", basis_coef_init="simplex", step_direction="unit",
                 s_max=10, t_max=50,
                 tol=1e-6, last_try="stop", jitter=1e-3, random_state=None, standardize=True,
                 record_path=False, keep_stages=False):
        self.n_xv = n_xv
        self.C = C
        self.gamma = gamma
        self.init = init
        self.n_basis = n_basis
        self.init_target = init_target
        self.basis_coef_init = basis_coef_init
        self.step_direction = step_direction
        self.s_max = s_max
        self.t_max = t_max
        self.tol = tol
        self.last_try = last_try
        self.jitter = jitter
        self.random_state = random_state
        self.standardize = standardize
        self.record_path = record_path
        self.keep_stages = keep_stages

    def fit(self, bags, y, eval_set=None):
        """Learn the XVs and weights from labelled bags.

        Parameters
        ----------
        bags : list of array-like or sparse matrices of shape (n_instances_i, n_features)
        y : array-like of shape (n_bags,)
        eval_set : tuple (bags, y) or None, default=None
            Bags whose accuracy is recorded after every outer iteration in
            ``eval_accuracy_`` (Fig. 4 of [1]_); it never influences the fit.

        Returns
        -------
        self
        """
        if eval_set is None:
            # the runs of one split that fit the same SparseMI on the same rows (a fixed-N_XV
            # row sharing the seed of the CV row's stage 1) fit it once per worker
            self._validate_params()
            X, offsets = self._stacked(bags)
            return memoized_fit(self, (X, offsets, np.asarray(y)),
                                lambda: self._fit_with(bags, y, None))
        return self._fit_with(bags, y, eval_set)

    def _fit_with(self, bags, y, eval_set):
        self._eval_set = eval_set
        try:
            return super().fit(bags, y)
        finally:
            del self._eval_set

    # -- initial XVs -------------------------------------------------------------------------
    def _pad(self, Z, n_missing, rng):
        """Append n_missing jittered copies of rows of Z (drawn with replacement)."""
        if n_missing <= 0:
            return Z
        extra = Z[rng.randint(len(Z), size=n_missing)]
        return np.vstack([Z, extra + self.jitter * rng.normal(size=extra.shape)])

    @classmethod
    def numerics_revision_for(cls, params):
        """The revision of a run with these config parameters: ``numerics_revision``, and
        for ``init="svm"`` that of the SVM initialisation beside it (records of the other
        initialisations are untouched by its changes)."""
        if params.get("init") == "svm":
            return f"{cls.numerics_revision}+svm-init-{cls.svm_init_revision}"
        return cls.numerics_revision

    def _svm_instances(self, X, offsets, Y, k):
        """The k instances with the largest |weight| of a linear SVM on the bag features of
        Eq. (8), ``s(X_i) = 1/n_i sum_p [k(x_ip, x_1) .. k(x_ip, x_N)]`` (computed once per
        gamma in a :func:`~mlkit.kernels.shared_work` scope: every C of a grid's fold reuses
        them)."""
        S = shared_result("svm_bag_features", lambda: _bag_features(X, offsets, self.gamma_),
                          X, offsets, float(self.gamma_))
        # the squared-hinge L2 SVM with an unregularised bias, solved exactly by the finite
        # Newton method (the inner problem's solver, on the bags' Gram matrix S S^T)
        W, _, _ = fit_linear_svm(S, Y, self.C)
        W = W.T
        return np.argsort(-np.abs(W).max(axis=0), kind="stable")[:k]

    def _initial_points(self, X, offsets, Y, rng):
        """Initial XVs in input space (dense, (m, d)) and, for "random"/"svm", their rows."""
        N = X.shape[0]
        if not isinstance(self.init, str):
            Z = np.asarray(self.init, dtype=float)
            if Z.ndim != 2 or Z.shape != (self.n_xv, X.shape[1]):
                raise ValueError(f"SparseMI: init has shape {Z.shape}; explicit initial XVs "
                                 f"need shape (n_xv, n_features) = ({self.n_xv}, {X.shape[1]})")
            if not np.all(np.isfinite(Z)):
                raise ValueError("SparseMI: init contains NaN or infinite values")
            return (Z - self.mean_) / self.scale_, None
        if self.init == "random":
            rows = np.sort(rng.choice(N, size=min(self.n_xv, N), replace=False))
            return self._pad(_rows_dense(X, rows), self.n_xv - N, rng), rows
        if self.init == "svm":
            rows = self._svm_instances(X, offsets, Y, self.n_xv)
            return self._pad(_rows_dense(X, rows), self.n_xv - len(rows), rng), rows
        k = min(self.n_xv, N)
        centres = _kmeans_centres(X, k, rng.randint(2 ** 31 - 1))
        return self._pad(centres.copy(), self.n_xv - k, rng), None

    def _initial_params(self, X, offsets, Y, rng):
        """(geometry, initial parameters: Z, or V in the basis form)."""
        if self.n_basis is None:
            Z, _ = self._initial_points(X, offsets, Y, rng)
            return _DenseGeometry(X, self.gamma_), Z
        if not isinstance(self.init, str):
            raise ValueError("SparseMI: explicit initial XVs (an array init) need the dense "
                             "form (n_basis=None)")
        N, Q = X.shape[0], min(self.n_basis, X.shape[0])
        if Q < self.n_basis:
            warnings.warn(f"SparseMI: n_basis={self.n_basis} exceeds the {N} training "
                          f"instances; all {N} are basis vectors")
        basis_rows = np.sort(rng.choice(N, size=Q, replace=False))
        if self.init == "random" or self.init_target == "basis":
            if self.init == "svm":              # the Q instances the SVM weighs most
                basis = X[np.sort(self._svm_instances(X, offsets, Y, Q))]
            elif self.init == "kmeans":         # Q centroids of the training instances
                basis = _kmeans_centres(X, Q, rng.randint(2 ** 31 - 1)).copy()
            else:
                basis = X[basis_rows]
            if self.basis_coef_init == "simplex":
                V = rng.dirichlet(np.ones(Q), size=self.n_xv)
            else:
                V = rng.normal(scale=1.0 / np.sqrt(Q), size=(self.n_xv, Q))
            self.basis_ = basis
            return _BasisGeometry(X, self.basis_, self.gamma_), V
        points, rows = self._initial_points(X, offsets, Y, rng)
        if rows is not None:                        # svm: its instances join the basis,
            rest = np.setdiff1d(basis_rows, rows)   # in place of random basis rows
            keep = np.sort(rng.permutation(rest)[:max(Q - len(rows), 0)])
            basis_rows = np.r_[rows, keep]
        basis = X[basis_rows]
        self.basis_ = basis
        geometry = _BasisGeometry(X, basis, self.gamma_)
        G = geometry.G
        G = G + KZ_RIDGE * np.trace(G) / len(G) * np.eye(len(G))
        V = np.linalg.solve(G, dense_dot(basis, points.T)).T       # least-squares projection
        return geometry, V

    # -- the optimisation --------------------------------------------------------------------
    def _solve(self, geometry, params, means, Y, warm=None, cross=None):
        """g(params) and the inner optimum: (g, beta, rho, K_XZ, K_Z, A), A the bags' mean
        kernel rows (``means @ K_XZ``, ``means`` the averaging operator of
        :func:`~mlkit.kernels.bag_mean_matrix`); g = inf when K_Z is numerically singular
        (coinciding XVs). ``warm``: (beta, rho, A) of a previous solve, its start (L-BFGS:
        that point; Newton: the bags active there). ``cross``: ``geometry.cross(params)``
        when the caller has it."""
        K_xz, K_z = geometry.kernels(params, cross)
        A = means @ K_xz
        init = active = None
        if warm is not None:
            init = warm[:2]
            if self.inner_solver == "newton":       # the bags active at the warm optimum
                active = Y * (warm[2] @ warm[0] + warm[1]) < 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                beta, rho, values = fit_label_mean_svm(
                    A, Y, K_z + KZ_RIDGE * np.eye(len(K_z)), self.C, init=init,
                    solver=self.inner_solver, active=active)
        except np.linalg.LinAlgError:
            return np.inf, None, None, K_xz, K_z, A
        return float(values.sum()), beta, rho, K_xz, K_z, A

    def _eval_accuracy(self, geometry, params, beta, rho, evaluation):
        if evaluation is None:
            return None
        Xe, off_e, ye, shift = evaluation
        Z = geometry.points(params)
        F = bag_reduce(rbf_kernel(Xe, Z if shift is None else Z + shift, self.gamma_),
                       off_e, "mean") @ beta + rho
        pred = (F[:, 0] > 0).astype(int) if F.shape[1] == 1 else F.argmax(axis=1)
        return float(np.mean(self.classes_[pred] == ye))

    def _prepare_eval(self):
        if getattr(self, "_eval_set", None) is None:
            return None
        bags, y = self._eval_set
        Xe, off_e = check_bags(list(bags), self, reset_dim=self.n_features_in_)
        Xe, shift = self._standardize(Xe)
        ye = np.asarray(y)
        if ye.shape != (len(off_e) - 1,):
            raise ValueError(f"SparseMI: eval_set has {len(off_e) - 1} bags but "
                             f"{ye.shape} labels")
        return Xe, off_e, ye, shift

    def _fit(self, X, offsets, Y):
        rng = check_random_state(self.random_state)
        evaluation = self._prepare_eval()
        geometry, params = self._initial_params(X, offsets, Y, rng)
        means = bag_mean_matrix(offsets)
        with single_threaded_blas():
            cross = geometry.cross(params)
            g, beta, rho, K_xz, K_z, A = self._solve(geometry, params, means, Y, cross=cross)
            if beta is None:
                raise ValueError("SparseMI: the initial expansion vectors are numerically "
                                 "coincident (K_Z is singular); increase jitter or lower n_xv")
            self.objective_ = [g]
            path = [geometry.points(params)] if self.record_path else None
            stages = [(params, beta, rho)] if self.keep_stages else None
            accuracies = [self._eval_accuracy(geometry, params, beta, rho, evaluation)]
            Z0 = geometry.points(params)
            step = float(np.mean(np.sqrt(squared_distances(Z0)[np.triu_indices(len(Z0), 1)])))\
                if len(Z0) > 1 else 1.0
            step = step if step > 0 else 1.0
            self.stop_reason_, t = "t_max", 0
            while t < self.t_max:
                G = _objective_gradient(geometry, params, (K_xz, K_z, offsets, Y), beta, rho,
                                        self.C, A=A)
                if self.step_direction == "unit":
                    norm = float(np.linalg.norm(geometry.points(G)))
                    if not np.isfinite(norm):
                        raise FloatingPointError("SparseMI: the gradient of g is not finite; "
                                                 "lower C or gamma")
                    if norm == 0:                   # a stationary point: no direction
                        self.stop_reason_ = "tol"
                        break
                    G = G / norm
                cross_G = geometry.cross(G)     # every trial's X Z^T from it and X Z^T
                accepted = None
                for s in range(1, self.s_max + 1):
                    trial = params - step * G
                    trial_cross = cross - step * cross_G
                    out = self._solve(geometry, trial, means, Y, warm=(beta, rho, A),
                                      cross=trial_cross)
                    if out[0] < g:
                        accepted = (trial, trial_cross, out)
                        if s == 1:
                            step *= 2.0
                        break
                    step /= 2.0
                if accepted is None:
                    self.stop_reason_ = "line_search"
                    break
                t += 1
                g_old = g
                params, cross, (g, beta, rho, K_xz, K_z, A) = accepted
                self.objective_.append(g)
                if path is not None:
                    path.append(geometry.points(params))
                if stages is not None:
                    stages.append((params, beta, rho))
                accuracies.append(self._eval_accuracy(geometry, params, beta, rho, evaluation))
                if g_old - g < self.tol * abs(g_old):
                    self.stop_reason_ = "tol"
                    break
                if s == self.s_max and self.last_try == "stop":
                    self.stop_reason_ = "last_try"
                    break
        self.n_iter_ = t
        if path is not None:
            self.xv_path_ = [P * self.scale_ + self.mean_ for P in path]
        if stages is not None:
            self._stages = [(geometry.points(p), b.T.copy(), np.asarray(r, dtype=float))
                            for p, b, r in stages] if self.n_basis is None else \
                [(p, b.T.copy(), np.asarray(r, dtype=float)) for p, b, r in stages]
        if evaluation is not None:
            self.eval_accuracy_ = accuracies
        if self.n_basis is not None:
            self.basis_coef_ = params
        self.expansion_vectors_ = geometry.points(params)
        self.dual_coef_ = np.ascontiguousarray(beta.T)
        self.intercept_ = np.asarray(rho, dtype=float)
        logger.info("SparseMI: %d outer iterations (%s), g %.6g -> %.6g", t, self.stop_reason_,
                    self.objective_[0], self.objective_[-1])

    def decision_function(self, bags):
        """Bag scores ``F(X) = 1/|X| sum_x f(x)`` (Eq. (8)), shape (n_bags,) for two classes, else
        (n_bags, n_classes).

        The kernel against N_XV vectors is a small product: single-threaded BLAS avoids the
        thread wake-up latency that otherwise dominates it."""
        with single_threaded_blas():
            return super().decision_function(bags)

    def staged_decision_function(self, bags):
        """Bag scores of the model at the initial XVs and after every accepted outer
        iteration (``keep_stages=True``), each shaped as :meth:`decision_function`'s; the last
        equals it. Fig. 4 of [1]_ (test accuracy vs iteration).

        Yields
        ------
        ndarray of shape (n_bags,) or (n_bags, n_classes)
        """
        check_is_fitted(self)
        if not hasattr(self, "_stages"):
            raise ValueError("SparseMI: staged_decision_function needs keep_stages=True at fit")
        X, offsets, _ = self._prediction_inputs(bags)
        # a sparse X is only scaled: its kernel is taken against z + mean_ / scale_
        shift = self.mean_ / self.scale_ if sp.issparse(X) and np.any(self.mean_) else None
        with single_threaded_blas():
            for params, coef, rho in self._stages:
                Z = params if self.n_basis is None else dense_dot(self.basis_.T, params.T).T
                Z = Z if shift is None else Z + shift
                F = bag_reduce(rbf_kernel(X, Z, self.gamma_), offsets, "mean") @ coef.T + rho
                yield F[:, 0] if F.shape[1] == 1 else F

    def run_record_extras(self):
        """Fitted facts for the run record: N_XV, the objective history, the iterations and
        (with an eval_set) the accuracy history."""
        extras = {"n_xv": int(self.n_xv_), "objective": [float(v) for v in self.objective_],
                  "n_iter": int(self.n_iter_), "stop_reason": self.stop_reason_}
        if hasattr(self, "eval_accuracy_"):
            extras["eval_accuracy"] = [float(v) for v in self.eval_accuracy_]
        if self.record_path:
            # the recorded model in input units: f(x) = sum_j beta_j exp(-gamma ||(x - mean) /
            # scale - (z_j - mean) / scale||^2) + rho, z_j the XVs below
            extras.update(
                xv_path=[P.tolist() for P in self.xv_path_],
                expansion_vectors=self.xv_path_[-1].tolist(),
                dual_coef=self.dual_coef_.tolist(), intercept=self.intercept_.tolist(),
                gamma=float(self.gamma_), mean=np.asarray(self.mean_).tolist(),
                scale=np.asarray(self.scale_).tolist(),
                classes=self.classes_.tolist())
        return extras


METHODS.register("sparsemi", SparseMI,
                 summary="SparseMI: label-mean SVM with N_XV learned expansion vectors (Fu et al. 2013)",
                 family="multi-instance", paper="sparsemi")
