"""The label-mean squared-hinge SVM over fixed expansion vectors, solved in the primal.

For fixed XVs Z this is ``g(Z) = min_{beta, rho} Q(beta, rho, Z)`` of Eq. (12)-(17) of [1]_:
the inner problem of SparseMI and, with random training instances as Z, the whole of RSVM.
Two solvers of the same strictly convex problem: L-BFGS, as in Sec. IV-C of [1]_, and the
finite Newton method of [2]_, [3]_ (exact Newton steps on the active set with an exact line
search), which ends at the optimum to rounding in a few steps.

References
----------
.. [1] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
.. [2] O. Chapelle. Training a support vector machine in the primal. Neural Computation
   19(5):1155-1178, 2007.
.. [3] S. S. Keerthi, D. DeCoste. A modified finite Newton method for fast solution of large
   scale linear SVMs. JMLR 6:341-361, 2005.
"""

import warnings

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import ThreadpoolController

from ._lbfgs import lbfgs

__all__ = ["KZ_RIDGE", "LBFGS_OPTIONS", "NEWTON_MAX_ITER", "SOLVERS", "label_mean_objective",
           "fit_label_mean_svm", "fit_linear_svm"]

#: Added to the diagonal of K_Z so that it is positive definite (footnote 1 of [1]_; the
#: paper says only "a small value").
KZ_RIDGE = 1e-8
#: L-BFGS-B stopping rules, tighter than scipy's defaults (ftol 2.2e-9, gtol 1e-5) so that
#: decision values do not depend on rounding (sparse and dense input agree to ~1e-6).
LBFGS_OPTIONS = {"ftol": 1e-12, "gtol": 1e-8}
#: The inner solvers of :func:`fit_label_mean_svm`.
SOLVERS = ("lbfgs", "newton")
#: Newton steps allowed per problem. Every step lowers Q, and [3]_ proves that the method
#: with exact line searches ends after finitely many; on COREL-20 it takes 2-5 warm-started
#: and up to ~20 from every bag active at C = 1000: the cap only stops a cycle of rounding.
NEWTON_MAX_ITER = 100
#: Armijo's sufficient-decrease constant for Newton's whole step (the usual 1e-4 of
#: Nocedal & Wright, Numerical Optimization, Sec. 3.1)
ARMIJO = 1e-4
#: Linear solves expected per problem and call of the warm-started Newton method (2-4 on
#: COREL-20), the weight of a solve against the once-per-call matrices in choosing a plan
_SOLVES_PER_PROBLEM = 3

_CONTROLLER = []


def single_threaded_blas():
    """A context limiting BLAS to one thread; the library scan (~10 ms) is done only once,
    since SparseMI's outer loop solves hundreds of small problems."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def label_mean_objective(params, A, y, K_Z, C):
    """Q(beta, rho) and its gradient for one binary problem (Eq. (12), (14)-(16) of [1]_).

    .. math:: Q = \\tfrac12 \\beta^T K_Z \\beta + C \\sum_i \\max(0, 1 - y_i f_i)^2, \\qquad
              f_i = \\tfrac{1}{n_i} 1^T K_{X_i,Z} \\beta + \\rho

    Parameters
    ----------
    params : ndarray of shape (n_xv + 1,)
        beta followed by rho (rho is not regularised).
    A : ndarray of shape (n_bags, n_xv)
        Row i is the mean kernel row of bag i, ``(1/n_i) 1^T K_{X_i,Z}``.
    y : ndarray of shape (n_bags,)
        +-1 labels.
    K_Z : ndarray of shape (n_xv, n_xv) or None
        Gram matrix of the XVs (with the ridge); None is the identity (the whitened
        coordinates of :func:`fit_label_mean_svm`, without an (n_xv, n_xv) product).
    C : float

    Returns
    -------
    value : float
    grad : ndarray of shape (n_xv + 1,)
        dQ/dbeta = K_Z beta + C sum_i l'(y_i, f_i) A_i (Eq. (14)) and
        dQ/drho = C sum_i l'(y_i, f_i) (Eq. (15)), with l' = 2 (f - y) where y f < 1 and 0
        elsewhere (Eq. (16)).
    """
    beta = params[:-1]
    f = A @ beta
    f += params[-1]
    # slack = max(0, 1 - y f); for y = +-1, 2 (f - y) = -2 y (1 - y f) exactly, so
    # l' = -2 y slack (Eq. (16)); "+ 0.0" turns the -0.0 of inactive bags into 0.0. Fewer,
    # in-place operations: this is SparseMI's innermost loop (~10^5 calls per fit)
    slack = y * f
    np.subtract(1.0, slack, out=slack)
    np.maximum(slack, 0.0, out=slack)
    dloss = slack * (-2.0 * y)
    dloss += 0.0
    Kb = beta if K_Z is None else K_Z @ beta
    grad = np.empty(len(params))
    g_beta = A.T @ dloss
    g_beta *= C
    np.add(Kb, g_beta, out=grad[:-1])
    grad[-1] = C * dloss.sum()
    return 0.5 * beta @ Kb + C * slack @ slack, grad


def _whiten(A, K_Z):
    """(L, B): ``K_Z = L L^T`` and the bags' features ``B = A L^{-T}`` in whitened
    coordinates (see :func:`fit_label_mean_svm`)."""
    L = scipy.linalg.cholesky(K_Z, lower=True)
    return L, scipy.linalg.solve_triangular(L, A.T, lower=True).T


def _cholesky(M):
    """The lower Cholesky factor of a symmetric positive definite M (overwritten)."""
    factor, info = scipy.linalg.lapack.dpotrf(M, lower=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"the {len(M)} x {len(M)} system is not positive "
                                    f"definite (leading minor {info})")
    return factor


def _cholesky_solve(M, rhs):
    """M^{-1} rhs for a symmetric positive definite M (overwritten)."""
    return scipy.linalg.lapack.dpotrs(_cholesky(M), rhs, lower=1)[0]


class _ActiveSetSolver:
    """The exact minimiser of Q with the squared loss on a set S of bags and no loss on the
    others, in whitened coordinates (``Q_S = ||w||^2 / 2 + C ||B_S w + rho 1 - y_S||^2``),
    the Newton point of [2]_ for the active set S.

    Four routes to the same point (they agree to rounding). Each solve takes the one of
    fewest flops (n bags, p = N_XV, k = |S|, R the n - k inactive bags) among those whose
    shared matrices the ``plan`` formed, once per call for all problems:

    * ``"primal"`` (p unknowns, ``k p^2 + p^3 / 3``): eliminating rho,
      ``rho = ybar - mu^T w`` with mu, ybar the means of B_S's rows and of y_S, and

      .. math:: (B_c^T B_c + I / 2C)\\, w = B_c^T (y_S - \\bar y),

      B_c the rows of B_S less mu;
    * ``"primal-complement"`` (``(n - k) p^2 + p^3 / 3``, given ``H = Bt^T Bt``, ``n p^2``;
      ``Bt = [B, 1]``): the same point from the stationarity of Q_S in (w, rho) jointly,
      ``(Bt_S^T Bt_S + D / 2C) (w, rho) = Bt_S^T y_S`` (D: 1 on w, 0 on rho), with
      ``Bt_S^T Bt_S = H - Bt_R^T Bt_R``;
    * ``"bags"`` (k unknowns, ``k^3 / 3``, given the Gram matrix ``G = B B^T`` of all bags,
      ``n^2 p``): stationarity gives ``w = B_S^T alpha``, ``alpha = 2C (y_S - f_S)`` and
      ``1^T alpha = 0``, so with ``M = G + I / 2C``

      .. math:: M_{SS}\\, \\alpha + \\rho 1 = y_S, \\qquad 1^T \\alpha = 0,

      solved as ``rho = 1^T u / 1^T v``, ``alpha = u - rho v``, ``u, v = M_SS^{-1} (y_S,
      1)`` (the primal system through the Woodbury identity);
    * ``"bags-complement"`` (``(n - k)^3 / 3 + 4 n^2``, given ``M^{-1}``, ``n^3``): the same
      u, v from the inverse of the whole M, ``M_SS^{-1} r = (M^{-1} r')_S - (M^{-1})_{SR}
      ((M^{-1})_{RR})^{-1} (M^{-1} r')_R``, r' = r padded with zeros on R (the inverse of
      a principal submatrix).

    Parameters
    ----------
    B : ndarray of shape (n_bags, n_xv)
    C : float
    plan : tuple of {"H", "G", "M_inv"}
        The shared matrices to form (M_inv needs G).
    """

    #: the shared matrices each route needs
    ROUTES = {"primal": (), "primal-complement": ("H",), "bags": ("G",),
              "bags-complement": ("G", "M_inv")}
    PLANS = ((), ("H",), ("G",), ("G", "M_inv"), ("H", "G"), ("H", "G", "M_inv"))
    _usable = {}

    def __init__(self, B, C, plan):
        self.B, self.C = B, C
        self.ridge = 0.5 / C
        self.routes = self.usable(plan)
        n, p = B.shape
        self.H = self.G = self.M_inv = None
        if "H" in plan:
            Bt = np.empty((n, p + 1))
            Bt[:, :p], Bt[:, p] = B, 1.0
            self.Bt, self.H = Bt, Bt.T @ Bt
        if "G" in plan:
            self.G = B @ B.T
        if "M_inv" in plan:
            M = self.G.copy()
            M.flat[::n + 1] += self.ridge
            self.M_inv = scipy.linalg.lapack.dpotri(_cholesky(M), lower=1)[0]
            self.M_inv += np.tril(self.M_inv, -1).T           # dpotri fills one triangle

    @classmethod
    def usable(cls, plan):
        """The routes (names, in ROUTES' order; "primal" first) that the matrices of
        ``plan`` allow."""
        if plan not in cls._usable:
            cls._usable[plan] = tuple(r for r, needs in cls.ROUTES.items()
                                      if set(needs) <= set(plan))
        return cls._usable[plan]

    @staticmethod
    def route_flops(n, p, k):
        """Flops of a solve on k active bags by each route."""
        return {"primal": k * p * p + p ** 3 / 3,
                "primal-complement": (n - k) * p * p + p ** 3 / 3,
                "bags": k ** 3 / 3, "bags-complement": (n - k) ** 3 / 3 + 4.0 * n * n}

    @staticmethod
    def shared_flops(n, p):
        """Flops of forming each shared matrix."""
        return {"H": n * p * p, "G": n * n * p, "M_inv": n ** 3}

    @classmethod
    def choose_plan(cls, n, p, n_active, solves):
        """The plan of least total flops for ``solves`` solves of each problem on as many
        active bags as ``n_active`` (one count per problem)."""
        per_problem = [cls.route_flops(n, p, float(k)) for k in n_active]
        shared = cls.shared_flops(n, p)
        return min(cls.PLANS, key=lambda plan: sum(shared[m] for m in plan) + solves * sum(
            min(flops[r] for r in cls.usable(plan)) for flops in per_problem))

    def solve(self, active, y, rho):
        """(w, rho) of the optimum of Q_S, S = ``active`` (boolean mask); with S empty, Q_S
        is ||w||^2 / 2: w = 0 and rho (free) stays the given one."""
        idx = np.flatnonzero(active)
        (n, p), k = self.B.shape, len(idx)
        if k == 0:
            return np.zeros(p), rho
        how = self.routes[0]
        if len(self.routes) > 1:
            flops = self.route_flops(n, p, k)
            how = min(self.routes, key=flops.__getitem__)
        if how == "primal":
            Bs, ys = self.B[idx], y[idx]
            mu, ybar = Bs.mean(axis=0), ys.mean()
            Bs -= mu
            M = Bs.T @ Bs
            M.flat[::p + 1] += self.ridge
            w = _cholesky_solve(M, Bs.T @ (ys - ybar))
            return w, ybar - mu @ w
        if how == "primal-complement":
            out = self.Bt[~active]
            M = self.H - out.T @ out
            M.flat[:p * (p + 2):p + 2] += self.ridge              # D / 2C: not on rho
            x = _cholesky_solve(M, self.Bt[idx].T @ y[idx])
            return x[:p], x[p]
        if how == "bags":
            M = self.G[np.ix_(idx, idx)]
            M.flat[::k + 1] += self.ridge
            u, v = _cholesky_solve(M, np.column_stack([y[idx], np.ones(k)])).T
        else:
            rhs = np.zeros((n, 2))
            rhs[idx, 0], rhs[idx, 1] = y[idx], 1.0
            z = self.M_inv @ rhs
            out = np.flatnonzero(~active)
            if len(out):
                z -= self.M_inv[:, out] @ _cholesky_solve(
                    self.M_inv[np.ix_(out, out)], z[out])
            u, v = z[idx].T
        rho = u.sum() / v.sum()
        alpha = np.zeros(n)
        alpha[idx] = u - rho * v
        return self.B.T @ alpha, rho


def _line_search(margin, slope, wd, dd, C):
    """The exact minimiser over t >= 0 of the piecewise quadratic ([3]_, Sec. 3)

    .. math:: \\phi(t) = \\tfrac12 \\|w + t d\\|^2 + C \\sum_i \\max(0, m_i - t s_i)^2,
              \\qquad \\phi'(t) = w^T d + t \\|d\\|^2 - 2C \\sum_i s_i \\max(0, m_i - t s_i),

    Q along the step d from the current point to a Newton point (``m_i = 1 - y_i f_i``,
    ``s_i = y_i (fbar_i - f_i)``). phi' is continuous, non-decreasing and linear between the
    breakpoints ``m_i / s_i`` where a bag enters or leaves the active set; they are visited
    in order until phi' changes sign. Returns exactly 1.0 when no bag changes side on
    [0, 1): phi is then the quadratic Q_S of the current active set S, whose minimum is the
    Newton point (t = 1); 0.0 when phi'(0) >= 0 (the start is optimal to rounding).

    Parameters
    ----------
    margin, slope : ndarray of shape (n_bags,)
        m and s.
    wd, dd : float
        w^T d and ||d||^2.
    C : float
    """
    active = margin > 0                                       # S, at t = 0
    moves = np.where(active, slope > 0, slope < 0)            # leaves / enters once, at m/s
    times = margin[moves] / slope[moves]
    order = np.argsort(times, kind="stable")
    times, m, s = times[order], margin[moves][order], slope[moves][order]
    sign = np.where(active[moves][order], -1.0, 1.0)          # -1: leaves, +1: enters
    if len(times) == 0 or times[0] >= 1.0:
        return 1.0
    # phi'(t) = c0[k] + c1[k] t on piece k, between breakpoints k - 1 and k
    c0 = np.cumsum(np.r_[wd - 2 * C * (slope[active] @ margin[active]), -2 * C * sign * s * m])
    c1 = np.cumsum(np.r_[dd + 2 * C * (slope[active] @ slope[active]), 2 * C * sign * s * s])
    if c0[0] >= 0:
        return 0.0
    right = np.r_[times, np.inf]
    with np.errstate(invalid="ignore"):
        ends = c0 + c1 * right >= 0                            # phi' >= 0 at the piece's end
    if not ends.any():                                         # rounding: phi' ~ 0 at infinity
        return 1.0
    k = int(np.argmax(ends))
    left = times[k - 1] if k > 0 else 0.0
    if c1[k] <= 0:
        return float(left)
    return float(min(max(-c0[k] / c1[k], left), right[k]))


def _value(w, f, y, C):
    """Q at whitened weights w with bag scores f."""
    slack = np.maximum(0.0, 1.0 - y * f)
    return 0.5 * w @ w + C * slack @ slack


def _newton(solver, y, C, active, rho=0.0, max_iter=NEWTON_MAX_ITER):
    """The finite Newton method of [2]_, [3]_ for one binary problem, in whitened
    coordinates.

    From the Newton point of ``active`` (S_0), repeat: S = the bags with ``y f < 1`` at the
    current point; stop if the current point is the Newton point of S (then Q's gradient,
    ``w + 2C B_S^T (f_S - y_S)`` and ``2C 1^T (f_S - y_S)``, is that of Q_S, zero there: the
    KKT conditions hold); else step towards the Newton point of S, the direction
    ``-H_S^{-1} grad Q``. The whole step is taken when it satisfies Armijo's condition
    (``Q(1) <= Q(0) + ARMIJO Q'(0)``, as in [2]_, which takes full steps), else the exact
    line minimum of [3]_ (:func:`_line_search`): bags that cross the margin together near
    the Newton point (the usual case) then change sides in one step, not one step each.

    Returns (w, rho, f, value, converged, n_steps)."""
    B = solver.B
    w, rho = solver.solve(active, y, rho)
    f = B @ w + rho
    value, newton_point = _value(w, f, y, C), True
    for step in range(1, max_iter + 1):
        now = y * f < 1
        if newton_point and np.array_equal(now, active):
            return w, rho, f, value, True, step
        active = now
        w_bar, rho_bar = solver.solve(active, y, rho)
        f_bar = B @ w_bar + rho_bar
        d, margin, slope = w_bar - w, 1.0 - y * f, y * (f_bar - f)
        wd = w @ d
        descent = wd - 2 * C * slope[active] @ margin[active]             # Q'(0)
        if not descent < 0:                 # no descent left: optimal to rounding
            return w, rho, f, value, True, step
        value_bar = _value(w_bar, f_bar, y, C)
        newton_point = value_bar <= value + ARMIJO * descent
        if newton_point:
            w, rho, f, value = w_bar, rho_bar, f_bar, value_bar
            continue
        t = _line_search(margin, slope, wd, d @ d, C)
        w, rho, f = w + t * d, rho + t * (rho_bar - rho), f + t * (f_bar - f)
        value = _value(w, f, y, C)
    return w, rho, f, value, False, max_iter


def fit_label_mean_svm(A, Y, K_Z, C, init=None, solver="lbfgs", active=None):
    """Minimise Q(beta, rho) of Eq. (12) of [1]_, one binary problem per column of Y.

    Both solvers work in the whitened coordinates ``gamma = L^T beta`` (``K_Z = L L^T``),
    where the regulariser is ``||gamma||^2 / 2`` and the bag features ``B = A L^{-T}`` are
    the coordinates of the bags' mean embeddings in an orthonormal basis of span{phi(z_j)}
    (norm <= 1). The optimum is the same; the Hessian's condition number drops from that of
    K_Z (up to 1 / ridge) to at most 1 + 2 C n_bags.

    * ``"lbfgs"``: L-BFGS, as in Sec. IV-C of [1]_ (scipy's L-BFGS-B routine driven by
      :func:`._lbfgs.lbfgs`, tolerances :data:`LBFGS_OPTIONS`), one problem after another.
    * ``"newton"``: the finite Newton method of [2]_, [3]_ (:func:`_newton`): Newton steps
      on the active set ``{i : y_i f_i < 1}``, each a linear solve; it stops at the point
      its own active set gives back, where the gradient vanishes to rounding (the optimum;
      values ~1e-12 to 1e-9 below L-BFGS's). The problems share B and the matrices of the
      cheapest plan of linear solves (:class:`_ActiveSetSolver`), chosen from the sizes of
      the first active sets.

    Parameters
    ----------
    A : ndarray of shape (n_bags, n_xv)
    Y : ndarray of shape (n_bags, n_problems)
        +-1 labels.
    K_Z : ndarray of shape (n_xv, n_xv)
        Positive definite (with the ridge).
    C : float
    init : tuple (beta, rho) or None, default=None
        Warm start of L-BFGS, e.g. the previous solve of SparseMI's outer loop; None starts
        at zero. Newton, without ``active``, starts from the bags active there
        (``y (A beta + rho) < 1``).
    solver : {"lbfgs", "newton"}, default="lbfgs"
    active : ndarray of shape (n_bags, n_problems) of bool or None, default=None
        Warm start of Newton's method: the active set of its first step, e.g. the bags
        active at the optimum of the previous solve with other XVs (a far better guess
        than ``init`` evaluated on the new A: beta, ``K_Z^{-1}`` times a combination of
        kernel rows, changes much more with Z than the bags' margins do). None: from
        ``init``, or every bag.

    Returns
    -------
    beta : ndarray of shape (n_xv, n_problems)
    rho : ndarray of shape (n_problems,)
    value : ndarray of shape (n_problems,)
        The optimal values g(Z) of the binary problems (Eq. (17)).
    """
    if solver not in SOLVERS:
        raise ValueError(f"fit_label_mean_svm: solver={solver!r}; use one of {SOLVERS}")
    n_xv, n_problems = A.shape[1], Y.shape[1]
    if init is not None:
        init = (np.asarray(init[0], dtype=float).reshape(n_xv, n_problems),
                np.asarray(init[1], dtype=float).reshape(n_problems))
    L, B = _whiten(A, K_Z)
    fit = _fit_newton if solver == "newton" else _fit_lbfgs
    # the products are tiny: threaded BLAS only adds wake-up latency (10-100x here)
    with single_threaded_blas():
        gamma, rho, value = fit(A, B, L, Y, C, init, active)
    return scipy.linalg.solve_triangular(L.T, gamma, lower=False), rho, value


def _fit_lbfgs(A, B, L, Y, C, init, active):
    n_xv, n_problems = B.shape[1], Y.shape[1]
    gamma, rho, value = np.zeros((n_xv, n_problems)), np.zeros(n_problems), np.zeros(n_problems)
    start = np.zeros((n_xv + 1, n_problems))
    if init is not None:
        start[:-1] = L.T @ init[0]
        start[-1] = init[1]
    for c in range(n_problems):
        x, value[c], success, message = lbfgs(
            label_mean_objective, start[:, c], (B, Y[:, c], None, C), **LBFGS_OPTIONS)
        if not success:
            warnings.warn(f"label-mean SVM (problem {c}): L-BFGS stopped early: "
                          f"{message}", ConvergenceWarning)
        gamma[:, c], rho[c] = x[:-1], x[-1]
    return gamma, rho, value


def _fit_newton(A, B, L, Y, C, init, active):
    (n_bags, n_xv), n_problems = B.shape, Y.shape[1]
    rho0 = np.zeros(n_problems) if init is None else init[1]
    if active is None:
        active = np.ones((n_bags, n_problems), dtype=bool) if init is None else \
            Y * (A @ init[0] + init[1]) < 1
    elif active.shape != Y.shape:
        raise ValueError(f"fit_label_mean_svm: active has shape {active.shape}; it needs "
                         f"that of Y, {Y.shape}")
    plan = _ActiveSetSolver.choose_plan(n_bags, n_xv, active.sum(axis=0), _SOLVES_PER_PROBLEM)
    solver = _ActiveSetSolver(B, C, plan)
    gamma, rho, value = np.zeros((n_xv, n_problems)), np.zeros(n_problems), np.zeros(n_problems)
    for c in range(n_problems):
        gamma[:, c], rho[c], _, value[c], converged, _ = _newton(
            solver, Y[:, c], C, active[:, c], rho0[c])
        if not converged:
            warnings.warn(f"label-mean SVM (problem {c}): Newton's method stopped after "
                          f"{NEWTON_MAX_ITER} steps", ConvergenceWarning)
    return gamma, rho, value


def fit_linear_svm(S, Y, C):
    """The linear L2-regularised squared-hinge SVM with an unregularised bias, solved exactly.

    ``min_{w, b} ||w||^2 / 2 + C sum_i max(0, 1 - y_i (s_i^T w + b))^2``, one binary problem
    per column of Y: Q of Eq. (12) of [1]_ with the features ``S`` in place of the bags'
    kernel rows and the identity in place of K_Z (already whitened), minimised by the finite
    Newton method of [2]_, [3]_ (:func:`_newton`) from every example active. With more
    features than examples the linear solves run on the examples' Gram matrix ``S S^T`` (the
    ``"bags"`` routes of :class:`_ActiveSetSolver`), shared by all problems.

    Parameters
    ----------
    S : ndarray of shape (n_examples, n_features)
    Y : ndarray of shape (n_examples, n_problems)
        +-1 labels.
    C : float

    Returns
    -------
    W : ndarray of shape (n_features, n_problems)
    b : ndarray of shape (n_problems,)
    value : ndarray of shape (n_problems,)
        The optimal objective values.
    """
    S = np.ascontiguousarray(S, dtype=float)
    Y = np.asarray(Y, dtype=float)
    with single_threaded_blas():
        return _fit_newton(None, S, None, Y, C, None, None)
