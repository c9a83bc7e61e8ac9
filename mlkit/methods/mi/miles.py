"""MILES: multiple-instance learning via embedded instance selection (Chen, Bi & Wang [1]_).

Every bag is embedded by its similarity to every training instance, and a 1-norm SVM on
the embedding selects the few instances that matter (the XVs, Sec. V-B of [2]_).

References
----------
.. [1] Y. Chen, J. Bi, J. Z. Wang. MILES: multiple-instance learning via embedded instance
   selection. IEEE TPAMI 28(12):1931-1947, 2006.
.. [2] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
"""

from numbers import Real

import numpy as np
from scipy.optimize import linprog
from sklearn.utils._param_validation import Interval

from ..._errors import SolverError
from ...kernels import bag_reduce, rbf_kernel, shared_result
from ...registry import METHODS
from ._base import MIClassifierBase

__all__ = ["MILES", "miles_embedding", "fit_l1_svm"]

#: Column generation stops when no column's reduced cost is below -_CG_TOL (HiGHS's default
#: dual feasibility tolerance).
_CG_TOL = 1e-7
#: Columns (and bags) added to the working set per round.
_CG_BATCH = 100
#: Unweighted columns whose reduced cost exceeds this leave the working set (once each), so
#: the LPs stay small; the optimum is unaffected.
_CG_DROP = 0.2


def miles_embedding(X, offsets, Z, gamma, *, shared=False):
    """The MILES bag embedding: the largest similarity of a bag's instances to each z_k.

    .. math:: s(z_k, B_i) = \\max_j \\exp(-\\gamma \\|x_{ij} - z_k\\|^2)

    (the instance-based embedding of [1]_, with gamma = 1 / sigma^2).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_instances, d)
        Instances of the bags, stacked in bag order.
    offsets : ndarray of shape (n_bags + 1,)
    Z : {ndarray, sparse matrix} of shape (n_z, d)
        The instances the bags are compared with (all training instances when fitting).
    gamma : float
    shared : bool, default=False
        Inside :func:`mlkit.kernels.shared_work` (a fold of a grid search), compute the
        embedding once per gamma and the distances once, for every C and mu.

    Returns
    -------
    ndarray of shape (n_bags, n_z)
    """
    if not shared:
        return bag_reduce(rbf_kernel(X, Z, gamma), offsets, "max")
    return shared_result("miles_embedding", lambda: bag_reduce(
        rbf_kernel(X, Z, gamma, shared=True), offsets, "max"), X, offsets, Z, float(gamma))


#: HiGHS settings tried in turn on the restricted LP: the dual simplex without presolve (a
#: vertex, exactly zero weights, fastest on these small dense LPs), then with presolve, then
#: the interior point method with crossover to a vertex, for the rare LP on which the simplex
#: stops with an unknown model status (numerical trouble) or cycles.
_LP_SOLVERS = (("highs-ds", {"presolve": False}), ("highs-ds", {"presolve": True}),
               ("highs-ipm", {"presolve": True}))

#: Iteration cap of each attempt, per row plus column of the LP's matrix. The dual simplex
#: solves these LPs in under 0.4 iterations per row plus column (over the thousands of LPs
#: of a COREL-20 MILES grid search), but without presolve it can cycle on a degenerate one
#: (COREL-20 split 6: uncapped it never ends; with presolve, 158 iterations). The cap,
#: deterministic unlike a time limit, hands such an LP to the next setting and leaves
#: every other LP's solve, hence every recorded result, as it was.
_LP_MAXITER = 20


def _restricted_lp(S, y, cost_xi):
    """The 1-norm SVM LP on a sub-matrix of bags x embedding columns: (w, b, bag duals)."""
    m, n = S.shape
    YS = y[:, None] * S
    cost = np.r_[np.ones(2 * n), cost_xi, 0.0]
    A_ub = np.hstack([-YS, YS, -np.eye(m), -y[:, None]])
    bounds = np.zeros((2 * n + m + 1, 2))
    bounds[:, 1] = np.inf
    bounds[-1, 0] = -np.inf                                    # the bias is free
    for method, options in _LP_SOLVERS:
        res = linprog(cost, A_ub=A_ub, b_ub=-np.ones(m), bounds=bounds, method=method,
                      options={**options, "maxiter": _LP_MAXITER * sum(A_ub.shape)})
        if res.status == 0:
            return res.x[:n] - res.x[n:2 * n], float(res.x[-1]), -res.ineqlin.marginals
    raise SolverError(f"MILES: the 1-norm SVM linear programme failed with every HiGHS "
                       f"solver: {res.message}")


def _most_violated(violation, batch):
    """Indices with violation > _CG_TOL, the largest first, at most ``batch``."""
    new = np.flatnonzero(violation > _CG_TOL)
    return new[np.argsort(-violation[new], kind="stable")[:batch]]


def _initial_bags(S, y, batch):
    """All bags of the smaller class and the ``batch`` bags of the other class whose
    embeddings are most similar to the smaller class's mean embedding."""
    small = 1.0 if np.sum(y > 0) <= np.sum(y < 0) else -1.0
    own, other = np.flatnonzero(y == small), np.flatnonzero(y != small)
    closeness = S[other] @ S[own].mean(axis=0)
    return np.union1d(own, other[np.argsort(-closeness, kind="stable")[:batch]])


def fit_l1_svm(S, y, *, C, mu, batch=_CG_BATCH):
    """The 1-norm SVM of MILES [1]_ as a linear programme.

    .. math:: \\min_{w, b, \\xi} \\sum_k |w_k| + C \\Big(\\mu \\sum_{y_i = 1} \\xi_i
              + (1 - \\mu) \\sum_{y_i = -1} \\xi_i\\Big)
              \\quad \\text{s.t.}\\; y_i (w^T s_i + b) + \\xi_i \\ge 1,\\; \\xi_i \\ge 0

    with w = u - v, u, v >= 0 (the paper's lambda on |w| is 1/C here). The LP is solved
    exactly by row and column generation: HiGHS solves it over a working set of bags and
    embedding columns; bags outside the set that violate their margin (``y_i f_i < 1``)
    and columns with a negative reduced cost (``|sum_i alpha_i y_i s_ik| > 1`` for the bag
    duals alpha) join it until there are none, which certifies the optimum of the full LP
    (the outside bags are feasible with xi_i = 0 and dual alpha_i = 0). The first working
    set holds the smaller class and the most similar bags of the other one; unweighted
    columns with a clearly positive reduced cost leave it (each at most once, so the loop
    ends). Only a few hundred of the bags and of the N columns ever enter the LP. The
    vertex solution (dual simplex) has exactly zero weights for the unselected instances.

    Parameters
    ----------
    S : ndarray of shape (n_bags, n_features)
        Bag embeddings.
    y : ndarray of shape (n_bags,)
        +-1 labels.
    C : float
        Cost of the hinge losses relative to the 1-norm of w.
    mu : float in (0, 1)
        Share of the cost given to the positive bags.
    batch : int, default=100
        Initial number of columns, and most bags / columns added per round.

    Returns
    -------
    w : ndarray of shape (n_features,)
    b : float
    """
    cost_xi = C * np.where(y > 0, mu, 1.0 - mu)
    score = np.abs(S.T @ (cost_xi * y))                    # duals at the all-violated start
    cols = np.sort(np.argsort(-score, kind="stable")[:batch])
    rows = _initial_bags(S, y, batch)
    droppable = np.ones(S.shape[1], dtype=bool)
    while True:
        w_cols, b, alpha = _restricted_lp(S[np.ix_(rows, cols)], y[rows], cost_xi[rows])
        slack = 1.0 - y * (S[:, cols] @ w_cols + b)
        slack[rows] = -np.inf
        reduced = np.abs(S[rows].T @ (alpha * y[rows])) - 1.0
        drop = cols[(w_cols == 0) & (reduced[cols] < -_CG_DROP) & droppable[cols]]
        reduced[cols] = -np.inf
        new_rows, new_cols = _most_violated(slack, batch), _most_violated(reduced, batch)
        if new_rows.size == 0 and new_cols.size == 0:
            break
        droppable[drop] = False                 # each column leaves at most once: finite
        rows = np.union1d(rows, new_rows)
        cols = np.union1d(np.setdiff1d(cols, drop), new_cols)
    w = np.zeros(S.shape[1])
    w[cols] = w_cols
    return w, b


class MILES(MIClassifierBase):
    """MILES: bag embedding by instance similarity plus a 1-norm SVM (Chen et al. [1]_).

    Each bag B is mapped to ``s(B) = [s(x_1, B), ..., s(x_N, B)]`` over all N training
    instances, with :func:`miles_embedding`, and a linear classifier with an L1 penalty is
    learned on it by the linear programme of :func:`fit_l1_svm`:

    .. math:: F(B) = \\sum_k w_k \\max_j \\exp(-\\gamma \\|x_{Bj} - x_k\\|^2) + b

    The hinge loss and the exact LP follow the paper; scikit-learn's
    ``LinearSVC(penalty="l1")`` would change the loss to the squared hinge. The XVs are the
    training instances with ``w_k != 0`` (Sec. V-B of [2]_), united over the one-vs-rest
    problems.

    Parameters
    ----------
    C : float, default=1.0
        Cost of the hinge losses relative to ``sum_k |w_k|`` (1 / lambda of [1]_).
    gamma : float or "scale", default="scale"
        1 / sigma^2 of [1]_; "scale" is 1 / (sum of the feature variances of the
        standardised training instances).
    mu : float in (0, 1), default=0.5
        Weight of the positive bags' losses; the negatives get 1 - mu (C1 and C2 of [1]_).
    standardize : bool, default=True
        Standardise instance features with the training instances' statistics.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    expansion_vectors_ : {ndarray, CSR matrix} of shape (``n_xv_``, n_features)
        The selected training instances (standardised).
    dual_coef_ : ndarray of shape (n_problems, ``n_xv_``)
        Their weights w_k.
    intercept_ : ndarray of shape (n_problems,)
    support_ : ndarray of shape (``n_xv_``,)
        Indices of the XVs among the training instances.
    n_xv_ : int
    mean_, scale_ : ndarray of shape (n_features,)
    gamma_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods.mi import MILES
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(4, 2)) for _ in range(20)]
    >>> for b in bags[1::2]:
    ...     b[0] += 4
    >>> y = np.arange(20) % 2
    >>> MILES(C=10).fit(bags, y).predict(bags[:4]).tolist()
    [0, 1, 0, 1]
    """

    _parameter_constraints = {
        **MIClassifierBase._parameter_constraints,
        "mu": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, C=1.0, *, gamma="scale", mu=0.5, standardize=True):
        self.C = C
        self.gamma = gamma
        self.mu = mu
        self.standardize = standardize

    def _fit(self, X, offsets, Y):
        S = miles_embedding(X, offsets, X, self.gamma_, shared=True)
        coef = np.zeros((X.shape[0], Y.shape[1]))
        intercept = np.empty(Y.shape[1])
        for c in range(Y.shape[1]):
            coef[:, c], intercept[c] = fit_l1_svm(S, Y[:, c], C=self.C, mu=self.mu)
        self._set_expansion(X, coef, intercept)

    def _bag_scores(self, K, offsets):
        return bag_reduce(K, offsets, "max") @ self.dual_coef_.T + self.intercept_


METHODS.register("miles", MILES, summary="MILES: instance-similarity embedding + 1-norm SVM (Chen et al. 2006)",
                 family="multi-instance", paper="sparsemi")
