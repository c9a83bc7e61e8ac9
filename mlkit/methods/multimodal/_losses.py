"""The smoothed hinge loss and the three block solvers of LM3FE (Luo et al. 2016, Eq. 6-32).

Notation (that of [1]_): ``Xs[v]`` is the (N, D_v) matrix of modality ``v``;
``s[i] = ||x_i||_inf`` of the concatenated input of sample ``i``; ``Y`` is (N, C) in {-1, +1};
``z = sum_v theta_v Xs[v] @ U[v]`` (N, C) the latent features; ``F = z @ W + b`` the task
scores (column c is task c). Every function works on all tasks and all samples at once.

References
----------
.. [1] Y. Luo, Y. Wen, D. Tao, J. Gui, C. Xu. Large margin multi-modal multi-task feature
   extraction for image classification. IEEE Trans. Image Processing 25(1):414-427, 2016.
.. [2] T. Zhou, D. Tao, X. Wu. NESVM: a fast gradient method for support vector machines.
   ICDM 2010.
.. [3] F. Nie, H. Huang, X. Cai, C. Ding. Efficient and robust feature selection via joint
   l2,1-norms minimization. NIPS 2010.
.. [4] N. Guan, D. Tao, Z. Luo, B. Yuan. NeNMF: an optimal gradient method for nonnegative
   matrix factorization. IEEE Trans. Signal Processing 60(6):2882-2898, 2012.
.. [5] A. Beck, M. Teboulle. Fast gradient-based algorithms for constrained total variation
   image denoising and deblurring problems. IEEE Trans. Image Processing 18(11):2419-2434,
   2009 (MFISTA, the monotone FISTA).

Two schemes use these pieces. The authors' released one (``w_step``, ``u_step``,
``theta_step``): Nesterov/OGM sub-solvers stopped at a relative change of 1e-3 or 100
iterations, the L2,1 term re-weighted. The exact one (``w_step_newton``, ``u_step_prox``,
``theta_step_prox``): each block minimised to a certificate (a gradient norm for W, a
gradient-mapping norm for U and theta) by monotone methods, so no block step raises the
objective: the assumption of the monotonicity argument of Sec. IV-C of [1]_.
"""

import numpy as np
import scipy.sparse as sp

from ...kernels import dense_dot, squared_norms

__all__ = ["smoothed_hinge", "hinge", "l21_norm", "reweight_diag", "latent", "scores",
           "objective", "grad_W", "grad_U", "grad_theta", "modality_scores",
           "nesterov", "ogm", "w_step", "u_step", "theta_step",
           "w_task_derivatives", "w_step_newton", "prox_l21", "mfista", "u_step_prox",
           "theta_step_prox", "SUB_TOL", "SUB_MAX_ITER", "EXACT_GTOL", "EXACT_PROX_TOL",
           "EXACT_MAX_ITER"]

#: Relative-change tolerance and iteration cap of every sub-solver (released code of [1]_).
SUB_TOL = 1e-3
SUB_MAX_ITER = 100
#: Floor of a Lipschitz constant (a block with a zero gradient everywhere, e.g. U when W = 0
#: and gamma_B = 0, would otherwise divide 0 by 0).
_MIN_L = 1e-12
#: Exact scheme: the W-step stops when every task's gradient norm is at most EXACT_GTOL;
#: the U- and theta-steps when the gradient mapping ``L ||y - prox(y - grad / L)||`` is at
#: most EXACT_PROX_TOL times the objective's size ``max(1, |F|)``; both after EXACT_MAX_ITER.
EXACT_GTOL = 1e-10
EXACT_PROX_TOL = 1e-9
EXACT_MAX_ITER = {"newton": 100, "prox": 2000}


def spectral_norm_sq(X):
    """``||X||_2^2`` (largest squared singular value) of a dense or sparse matrix."""
    if min(X.shape) <= 300 and not sp.issparse(X):
        return float(np.linalg.norm(X, 2) ** 2)
    from scipy.sparse.linalg import svds
    return float(svds(sp.csr_matrix(X) if sp.issparse(X) else X, k=1,
                      return_singular_vectors=False, random_state=0)[0] ** 2)


def _row_scaled(X, w):
    """``diag(w) X`` (sparse stays sparse)."""
    return sp.csr_matrix(X).multiply(w[:, None]).tocsr() if sp.issparse(X) else X * w[:, None]


def hinge(Y, F):
    """The hinge loss ``max(0, 1 - y f)`` elementwise."""
    return np.maximum(0.0, 1.0 - Y * F)


def smoothed_hinge(Y, F, s, sigma):
    """Nesterov-smoothed hinge loss and its dual variable (Eq. 6-8 of [1]_, as in [2]_).

    .. math:: \\phi_\\sigma(y, f) = \\max_{0 \\le u \\le 1} u (1 - y f)
              - \\frac{\\sigma}{2} \\|x\\|_\\infty u^2,
              \\quad u^* = \\mathrm{median}\\{0, \\frac{1 - y f}{\\sigma \\|x\\|_\\infty}, 1\\}

    Parameters
    ----------
    Y, F : ndarray of shape (N, C)
        Labels in {-1, +1} and scores.
    s : ndarray of shape (N,)
        ``||x_i||_inf`` of each sample's raw concatenated input (positive).
    sigma : float
        The smoothing parameter; ``phi_sigma -> hinge`` as ``sigma -> 0``.

    Returns
    -------
    loss : ndarray of shape (N, C)
    u : ndarray of shape (N, C)
        ``u*``; ``d phi / d f = -u* y``.
    """
    k = (sigma * s)[:, None]
    return _hinge_parts(Y, F, k, 0.5 * k)


def _hinge_parts(Y, F, k, half_k):
    """:func:`smoothed_hinge` with ``k = sigma ||x_i||_inf`` (N, 1) and ``k / 2`` given (the
    sub-solvers compute them once, not at every iteration; the same operations in the same
    order, so the same numbers bit for bit). ``u*`` is clipped to [0, 1] by
    ``minimum(maximum(., 0), 1)``, which is ``np.clip`` without its wrappers: the two differ
    only on -0.0, which ``(1 - y f) / k`` never is (``1 - a`` is +0.0 when ``a = 1``, a
    nonzero ``1 - a`` is at least 2^-53 in size, and ``k = sigma ||x||_inf`` is nowhere near
    large enough for the quotient to underflow to -0.0)."""
    m = 1.0 - Y * F
    u = np.minimum(np.maximum(m / k, 0.0), 1.0)
    loss = u * m - half_k * u * u
    return loss, u


def _row_squares(U):
    """``||u^j||^2`` of every row of ``U``."""
    return np.einsum("ij,ij->i", U, U)


def l21_norm(U, row_squares=None):
    """``||U||_{2,1}``: the sum of the Euclidean norms of the rows (``row_squares``: those
    of ``U`` when already known)."""
    return float(np.sqrt(_row_squares(U) if row_squares is None else row_squares).sum())


def reweight_diag(U, eps):
    """Diagonal of the re-weighting matrix of [3]_: ``D_jj = 1 / (2 sqrt(||u^j||^2 + eps))``.

    ``tr(U^T D U) + ||U_t||_{2,1} / 2`` (D from ``U_t``) majorises ``||U||_{2,1}`` and
    equals it at ``U_t`` (when eps = 0), the argument behind Theorem 3 of [1]_.
    """
    return _reweight_from_squares(_row_squares(U), eps)


def _reweight_from_squares(row_squares, eps):
    return 0.5 / np.sqrt(row_squares + eps)


def modality_scores(Xs, U):
    """``[Xs[v] @ U[v]]`` as dense (N, C) arrays (sparse views stay sparse)."""
    return [dense_dot(X, Uv) for X, Uv in zip(Xs, U)]


def latent(Xs, U, theta):
    """LM3FT features ``z = sum_v theta_v X_v U_v`` (Eq. 4 of [1]_), shape (N, C)."""
    P = modality_scores(Xs, U)
    return sum(t * Pv for t, Pv in zip(theta, P))


def scores(Z, W, b):
    """Task scores ``f_c(x_i) = w_c^T z_i + b_c`` (Eq. 4 of [1]_), shape (N, C)."""
    return Z @ W + b


def objective(Xs, Y, s, U, theta, W, b, *, sigma, gamma_A, gamma_B, gamma_C, per_task=False):
    """The LM3FE objective (Eq. 5 of [1]_ with the smoothed loss).

    .. math:: \\sum_c \\sum_i \\phi_\\sigma(y_{ci}, f_c(x_i)) + \\gamma_A \\|W\\|_F^2
              + \\gamma_B \\sum_v \\|U_v\\|_{2,1} + \\gamma_C \\|\\theta\\|_2^2

    With ``per_task=True`` the W-step's C separate objectives (loss of task c plus
    ``gamma_A ||w_c||^2``) are returned instead, shape (C,).
    """
    F = scores(latent(Xs, U, theta), W, b)
    loss, _ = smoothed_hinge(Y, F, s, sigma)
    if per_task:
        return loss.sum(axis=0) + gamma_A * np.einsum("ij,ij->j", W, W)
    return float(loss.sum() + gamma_A * np.sum(W * W)
                 + gamma_B * sum(l21_norm(Uv) for Uv in U) + gamma_C * np.dot(theta, theta))


def _dloss(Y, F, s, sigma):
    """``d sum(phi) / d F = -u* y`` (N, C)."""
    _, u = smoothed_hinge(Y, F, s, sigma)
    return -u * Y


def grad_W(Z, Y, s, W, b, *, sigma, gamma_A):
    """Gradient of the smoothed objective in ``W`` and ``b`` for all tasks at once (Eq. 12).

    .. math:: \\nabla_{\\tilde w_c} = -\\sum_i u^*_{ci} y_{ci} \\tilde z_i
              + 2 \\gamma_A [w_c; 0]
    """
    G = _dloss(Y, scores(Z, W, b), s, sigma)
    return Z.T @ G + 2.0 * gamma_A * W, G.sum(axis=0)


def grad_U(Xs, Y, s, U, theta, W, b, v, *, sigma, D=None, gamma_B=0.0):
    """Gradient in ``U_v`` of the loss plus the re-weighted L2,1 term (Eq. 21 of [1]_).

    .. math:: -\\theta_v \\sum_c \\sum_i u^*_{ci} y_{ci} x_i^v w_c^T + 2 \\gamma_B D_v U_v

    ``D`` is the diagonal of the re-weighting matrix (None: loss gradient only).
    """
    G = _dloss(Y, scores(latent(Xs, U, theta), W, b), s, sigma)
    g = theta[v] * dense_dot(Xs[v].T, G @ W.T)
    if D is not None:
        g = g + 2.0 * gamma_B * D[:, None] * U[v]
    return g


def grad_theta(P, Y, s, theta, W, b, *, sigma, gamma_C):
    """Gradient in ``theta`` (Eq. 29 of [1]_); ``P[v] = X_v U_v`` (N, C).

    .. math:: -\\sum_c \\sum_i u^*_{ci} y_{ci} a_{ci} + 2 \\gamma_C \\theta,
              \\quad (a_{ci})_v = (x_i^v)^T U_v w_c
    """
    A = np.stack([Pv @ W for Pv in P])               # (V, N, C): (a_ci)_v
    F = np.tensordot(theta, A, axes=1) + b
    G = _dloss(Y, F, s, sigma)
    return np.einsum("vnc,nc->v", A, G) + 2.0 * gamma_C * theta


def _rel_change(F_new, F_old, F_first):
    den = np.abs(F_new - F_first)
    return np.where(den > 0, np.abs(F_new - F_old) / np.where(den > 0, den, 1.0), 0.0)


def nesterov(X1, fun_grad, lipschitz, *, tol=SUB_TOL, max_iter=SUB_MAX_ITER, after_step=None,
             keep_best=True):
    """The Nesterov scheme of the W- and U-steps (Eq. 15-17 and 24-26 of [1]_).

    .. math:: Y_t = X_t - G_t / L_t,\\quad Z_t = X_1 - \\frac{1}{L_t}\\sum_{i \\le t}
              \\frac{i}{2} G_i,\\quad X_{t+1} = \\frac{2}{t+3} Z_t + \\frac{t+1}{t+3} Y_t

    The variable's last axis indexes independent problems (the C tasks of the W-step): the
    objective has one value per problem, and each stops on its own when
    ``|F_{t+1} - F_t| / |F_{t+1} - F_1| <= tol`` (then frozen), all after ``max_iter``.
    A scalar objective makes it one problem. With ``keep_best`` (default) the returned point
    is, per problem, the best iterate seen (the start included), so a step never increases
    its objective (a safeguard of ours); ``keep_best=False`` returns the last iterate, as
    the paper's scheme does.

    Parameters
    ----------
    X1 : ndarray, last axis = problems
    fun_grad : callable X -> (F, G)
        Objective (ndarray (n_problems,) or float) and gradient (like X) at X, from one
        evaluation of the scores.
    lipschitz : callable X -> float or ndarray (n_problems,)
        ``L_t`` at the current point (the U-step's depends on the re-weighting).
    after_step : callable X -> None, optional
        Called with every new iterate before it is evaluated (the U-step refreshes its
        re-weighting there).
    keep_best : bool, default=True
        Return the best iterate seen (True) or the last one (False).

    Returns
    -------
    X : ndarray, the best (or, ``keep_best=False``, the last) iterate
    n_iter : int
    """
    X = X1.copy()
    F1, G = fun_grad(X)
    F1 = np.atleast_1d(np.asarray(F1, dtype=float))
    if F1.size == 1:
        return _nesterov_one(X1, X, F1.item(), G, fun_grad, lipschitz, tol, max_iter,
                             after_step, keep_best)
    best, F_best, F_prev = X.copy(), F1.copy(), F1.copy()
    active = np.ones(F1.shape, dtype=bool)
    acc = np.zeros_like(X)
    t = 0
    for t in range(1, max_iter + 1):
        L = np.asarray(lipschitz(X), dtype=float)
        Yt = X - G / L
        acc += 0.5 * t * G
        X_new = 2.0 / (t + 3) * (X1 - acc / L) + (t + 1.0) / (t + 3) * Yt
        # frozen problems keep their point
        X = X_new if active.all() else np.where(active, X_new, X)
        if after_step is not None:
            after_step(X)
        F, G = fun_grad(X)
        F = np.atleast_1d(np.asarray(F, dtype=float))
        better = active & (F < F_best)
        if better.all():
            best, F_best = X, F
        elif better.any():
            best = np.where(better, X, best)
            F_best = np.where(better, F, F_best)
        active &= _rel_change(F, F_prev, F1) > tol
        F_prev = F
        if not active.any():
            break
    return (best if keep_best else X), t


def _nesterov_one(X1, X, F1, G, fun_grad, lipschitz, tol, max_iter, after_step, keep_best):
    """:func:`nesterov` for a single problem (one objective value, e.g. the U-step) from
    ``X`` (a copy of ``X1``) where the objective is ``F1`` and the gradient ``G``: the same
    iterates, stopping test and returned point, with the objective as a Python float (the
    same IEEE operations as on a one-element array, without the per-problem masks)."""
    best, F_best, F_prev = X, F1, F1
    acc = np.zeros_like(X)
    t = 0
    for t in range(1, max_iter + 1):
        L = lipschitz(X)
        Yt = X - G / L
        acc += 0.5 * t * G
        X = 2.0 / (t + 3) * (X1 - acc / L) + (t + 1.0) / (t + 3) * Yt
        if after_step is not None:
            after_step(X)
        F, G = fun_grad(X)
        F = np.asarray(F, dtype=float).item()
        if F < F_best:
            best, F_best = X, F
        den = abs(F - F1)
        if not (abs(F - F_prev) / den if den > 0 else 0.0) > tol:
            break
        F_prev = F
    return (best if keep_best else X), t


def ogm(theta0, grad, fun, L, *, tol=SUB_TOL, max_iter=SUB_MAX_ITER, keep_best=True):
    """Optimal gradient method with projection onto ``theta >= 0`` (Algorithm 2 of [1]_,
    Algorithm 1 of [4]_).

    .. math:: \\theta_{k+1} = \\max(0, Y_k - \\nabla(Y_k)/L),\\quad
              \\alpha_{k+1} = \\frac{1 + \\sqrt{4\\alpha_k^2 + 1}}{2},\\quad
              Y_{k+1} = \\theta_{k+1} + \\frac{\\alpha_k - 1}{\\alpha_{k+1}}
              (\\theta_{k+1} - \\theta_k)

    Returns the best iterate seen (the start included; ``keep_best=False``: the last
    iterate, the paper's scheme) and the number of iterations.
    """
    theta = theta0.copy()
    Yk, alpha = theta.copy(), 1.0
    F1 = F_prev = float(fun(theta))
    best, F_best = theta.copy(), F1
    k = 0
    for k in range(1, max_iter + 1):
        new = np.maximum(0.0, Yk - grad(Yk) / L)
        alpha_new = 0.5 * (1.0 + np.sqrt(4.0 * alpha * alpha + 1.0))
        Yk = new + ((alpha - 1.0) / alpha_new) * (new - theta)
        theta, alpha = new, alpha_new
        F = float(fun(theta))
        if F < F_best:
            best, F_best = theta.copy(), F
        if _rel_change(F, F_prev, F1) <= tol:
            break
        F_prev = F
    return (best if keep_best else theta), k


def w_step(Z, Y, s, W0, b0, *, sigma, gamma_A, tol=SUB_TOL, max_iter=SUB_MAX_ITER,
           lipschitz="code", keep_best=True):
    """The W-step (Eq. 9-17, Theorem 1 of [1]_): C independent problems in ``[w_c; b_c]``,
    solved together (the task axis is the last one) by :func:`nesterov` from ``(W0, b0)``.

    ``L = (N / sigma) max_i (||z_i||^2 + 1) / ||x_i||_inf + 2 gamma_A``: the released code's
    constant with the bias entry of ``z~_i`` included, so it bounds the curvature of the
    objective in ``[w_c; b_c]``. ``lipschitz="spectral"`` uses the tighter valid bound
    ``||diag(s)^-1/2 Z~||_2^2 / sigma + 2 gamma_A`` (the loss Hessian is at most
    ``sum_i z~_i z~_i^T / (sigma s_i)``).
    objective in ``[w_c; b_c]``.
    """
    N, C = Y.shape
    if lipschitz == "spectral":
        Zs = np.hstack([Z, np.ones((N, 1))]) / np.sqrt(s)[:, None]
        L = max(spectral_norm_sq(Zs) / sigma + 2.0 * gamma_A, _MIN_L)
    else:
        L = max(N / sigma * np.max((squared_norms(Z) + 1.0) / s) + 2.0 * gamma_A, _MIN_L)
    Wt0 = np.vstack([W0, b0[None, :]])             # (C + 1, C): column c = [w_c; b_c]

    Zt = np.hstack([Z, np.ones((N, 1))])          # z~_i = [z_i; 1]
    pen = np.ones((C + 1, 1))
    pen[-1] = 0.0                                  # the bias is not penalised
    k = (sigma * s)[:, None]
    half_k = 0.5 * k

    def fun_grad(Wt):
        loss, u = _hinge_parts(Y, Zt @ Wt, k, half_k)
        f = loss.sum(axis=0) + gamma_A * np.einsum("ij,ij->j", Wt[:-1], Wt[:-1])
        return f, -(Zt.T @ (u * Y)) + 2.0 * gamma_A * pen * Wt

    Wt, n = nesterov(Wt0, fun_grad, lambda _: L, tol=tol, max_iter=max_iter,
                     keep_best=keep_best)
    return Wt[:-1], Wt[-1], n


def _other_modalities(Xs, U, theta, v, shape):
    """``sum_{u != v} theta_u X_u U_u``, the scores of the modalities a U_v-step holds
    fixed (zeros with one modality), shape (N, C)."""
    rest = sum(theta[u] * dense_dot(Xs[u], U[u]) for u in range(len(Xs)) if u != v)
    return np.zeros(shape) if np.isscalar(rest) else rest


def _u_curvature(Xv, s, W, tv, sigma, x_norm_sq=None):
    """The U_v-step's spectral Lipschitz bound ``theta_v^2 ||S^-1/2 X_v||_2^2 ||W||_2^2 /
    sigma`` and ``||S^-1/2 X_v||_2^2`` (computed unless given)."""
    if x_norm_sq is None:
        x_norm_sq = spectral_norm_sq(_row_scaled(Xv, 1.0 / np.sqrt(s)))
    return tv * tv / sigma * x_norm_sq * spectral_norm_sq(W), x_norm_sq


def u_step(Xs, Y, s, U, theta, W, b, v, *, sigma, gamma_B, eps=1e-8, tol=SUB_TOL,
           max_iter=SUB_MAX_ITER, lipschitz="code", x_norm_sq=None, keep_best=True):
    """The U-step for modality ``v`` (Algorithm 1, Eq. 18-26, Theorems 2-3 of [1]_).

    Nesterov's scheme on the loss plus the re-weighted L2,1 term ``gamma_B tr(U^T D U)``,
    ``D`` refreshed from every new iterate ([3]_), warm-started from ``U[v]``; the step
    size is ``1 / L_t`` with
    ``L_t = (C N theta_v^2 / sigma) max_{c,i} ||x_i^v||^2 ||w_c||^2 / ||x_i||_inf
    + 2 gamma_B max_j D_jj`` (``lipschitz="spectral"``: the tighter valid
    ``theta_v^2 ||S^-1/2 X_v||_2^2 ||W||_2^2 / sigma``, ``x_norm_sq`` caching the first factor,
    in place of the first term); the stopping test and the returned best iterate use the true
    L2,1 objective. Only ``X_v U_v`` changes, so the other modalities' scores are computed
    once: one iteration costs two (N x D_v x C) products, linear in D_v.

    Returns
    -------
    U_v : ndarray (D_v, C)
    n_iter : int
    """
    N, C = Y.shape
    Xv = Xs[v]
    rest = _other_modalities(Xs, U, theta, v, (N, C))
    tv = theta[v]
    if lipschitz == "spectral":
        # loss Hessian in U_v <= theta_v^2 ||S^-1/2 X_v||_2^2 ||W||_2^2 / sigma
        curv, x_norm_sq = _u_curvature(Xv, s, W, tv, sigma, x_norm_sq)
    else:
        curv = C * N * tv * tv / sigma * np.max(squared_norms(Xv) / s) * np.max(
            np.einsum("ij,ij->j", W, W))
    # D["d"]: the re-weighting of the last iterate; D["rows"]: that iterate and its row
    # squares, which the L2,1 term of the objective at the same iterate reuses
    D = {"d": reweight_diag(U[v], eps), "rows": (None, None)}

    XvT = Xv.T.tocsr() if sp.issparse(Xv) else Xv.T
    # the products of a dense view without dense_dot's checks (the same products)
    dot = dense_dot if sp.issparse(Xv) else np.matmul
    k = (sigma * s)[:, None]
    half_k = 0.5 * k
    WT = W.T

    def fun_grad(Uv):
        loss, u = _hinge_parts(Y, (rest + tv * dot(Xv, Uv)) @ W + b, k, half_k)
        seen, rows = D["rows"]
        f = loss.sum() + gamma_B * l21_norm(Uv, rows if seen is Uv else None)
        return f, (-tv) * dot(XvT, (u * Y) @ WT) + 2.0 * gamma_B * D["d"][:, None] * Uv

    def lipschitz(_):
        return max(curv + 2.0 * gamma_B * D["d"].max(), _MIN_L)

    def refresh(Uv):
        rows = _row_squares(Uv)
        D["d"], D["rows"] = _reweight_from_squares(rows, eps), (Uv, rows)

    return nesterov(U[v], fun_grad, lipschitz, tol=tol, max_iter=max_iter, after_step=refresh,
                    keep_best=keep_best)


def theta_step(P, Y, s, theta, W, b, *, sigma, gamma_C, tol=SUB_TOL, max_iter=SUB_MAX_ITER,
               lipschitz="code", keep_best=True):
    """The theta-step (Eq. 27-32, Algorithm 2 of [1]_): :func:`ogm` from the current theta
    with ``L = (C N / sigma) max_{c,i} ||a_ci||^2 / ||x_i||_inf + 2 gamma_C`` (``lipschitz=
    "spectral"``: ``||S^-1/2 [A_1; ...; A_C]||_2^2 / sigma + 2 gamma_C``, also valid, tighter).

    ``P[v] = X_v U_v`` (N, C) is all the step needs: ``(a_ci)_v = P[v][i] @ w_c``.
    """
    N, C = Y.shape
    A = np.stack([Pv @ W for Pv in P])               # (V, N, C)
    if lipschitz == "spectral":
        As = (A / np.sqrt(s)[None, :, None]).reshape(len(P), -1).T     # (N C, V)
        L = max(spectral_norm_sq(As) / sigma + 2.0 * gamma_C, _MIN_L)
    else:
        L = max(C * N / sigma * np.max(np.einsum("vnc,vnc->nc", A, A) / s[:, None])
                + 2.0 * gamma_C, _MIN_L)

    k = (sigma * s)[:, None]
    half_k = 0.5 * k
    A2 = A.reshape(len(P), N * C)

    def scores_at(th):
        # np.tensordot(th, A, axes=1) + b, by the one product tensordot makes
        return np.dot(th.reshape(1, -1), A2).reshape(N, C) + b

    def fun(th):
        loss, _ = _hinge_parts(Y, scores_at(th), k, half_k)
        return loss.sum() + gamma_C * np.dot(th, th)

    def grad(th):
        _, u = _hinge_parts(Y, scores_at(th), k, half_k)
        return np.einsum("vnc,nc->v", A, -u * Y) + 2.0 * gamma_C * th

    return ogm(theta, grad, fun, L, tol=tol, max_iter=max_iter, keep_best=keep_best)


# ------------------------------------------------------------------ the exact scheme
def _w_parts(Z, Y, s, sigma):
    """``Z~ = [Z, 1]``, the penalty mask (the bias is not penalised) and ``k = sigma s``."""
    N = Z.shape[0]
    Zt = np.hstack([Z, np.ones((N, 1))])
    pen = np.ones((Zt.shape[1], 1))
    pen[-1] = 0.0
    k = (sigma * s)[:, None]
    return Zt, pen, k


def w_task_derivatives(Z, Y, s, Wt, *, sigma, gamma_A, hessian=True):
    """Objective, gradient and Hessian of the C problems of the W-step (Eq. 9-12 of [1]_).

    Column c of ``Wt`` (C + 1, C) is ``[w_c; b_c]``; problem c is
    ``f_c = sum_i phi_sigma(y_ci, z~_i^T w~_c) + gamma_A ||w_c||^2``. The smoothed hinge is
    piecewise quadratic (Eq. 8): its second derivative in f is ``1 / (sigma ||x_i||_inf)``
    where ``0 < u* < 1`` and 0 elsewhere, so
    ``H_c = sum_i [0 < u*_ci < 1] z~_i z~_i^T / (sigma s_i) + 2 gamma_A diag(1, .., 1, 0)``
    (the generalised Hessian; exact away from the kinks ``u* in {0, 1}``).

    Returns
    -------
    f : ndarray (C,)
    g : ndarray (C + 1, C)
    H : ndarray (C, C + 1, C + 1), or None with ``hessian=False``
    """
    Zt, pen, k = _w_parts(Z, Y, s, sigma)
    loss, u = _hinge_parts(Y, Zt @ Wt, k, 0.5 * k)
    f = loss.sum(axis=0) + gamma_A * np.einsum("ij,ij->j", Wt[:-1], Wt[:-1])
    g = -(Zt.T @ (u * Y)) + 2.0 * gamma_A * pen * Wt
    if not hessian:
        return f, g, None
    q = ((u > 0.0) & (u < 1.0)) / k                     # (N, C): phi'' per sample and task
    H = np.einsum("ni,nc,nj->cij", Zt, q, Zt)
    H += 2.0 * gamma_A * np.diag(pen[:, 0])[None]
    return f, g, H


def w_step_newton(Z, Y, s, W0, b0, *, sigma, gamma_A, gtol=EXACT_GTOL,
                  max_iter=EXACT_MAX_ITER["newton"]):
    """The exact W-step: damped Newton on each of the C problems of Eq. 9-12 of [1]_.

    Every task is a convex problem in its C + 1 variables ``[w_c; b_c]``, solved together
    (vectorised over the tasks) from ``(W0, b0)``: the direction solves
    ``(H_c + mu_c I) d = -g_c`` (:func:`w_task_derivatives`; ``mu_c = 1e-10 (1 + tr H_c /
    (C + 1)) + 1e-3 ||g_c||`` keeps it a descent direction where the Hessian is singular and
    vanishes at the optimum), the step is halved until Armijo's condition
    ``f(w + t d) <= f(w) + 1e-4 t g^T d`` holds (a full step that does not raise f is also
    taken: near the optimum the decrease is below the rounding of f). A task stops when
    ``||g_c|| <= gtol``, or when its Newton decrement ``-g^T d`` falls below the rounding
    of f (``1e-13 max(1, |f|)``) or no step decreases it (the returned ``grad_norm`` says
    how close it got). No step raises any task's objective.

    Returns
    -------
    W : ndarray (C, C)
    b : ndarray (C,)
    n_iter : int
        Newton iterations run.
    grad_norm : ndarray (C,)
        ``||g_c||`` at the returned point (the certificate).
    """
    Wt = np.vstack([W0, b0[None, :]]).astype(float)
    kw = dict(sigma=sigma, gamma_A=gamma_A)
    f, g, H = w_task_derivatives(Z, Y, s, Wt, **kw)
    gn = np.linalg.norm(g, axis=0)
    active = gn > gtol
    n = 0
    eye = np.eye(Wt.shape[0])
    for n in range(1, max_iter + 1):
        if not active.any():
            n -= 1
            break
        diag = np.trace(H, axis1=1, axis2=2) / Wt.shape[0]
        mu = 1e-10 * (1.0 + diag) + 1e-3 * gn
        d = -np.linalg.solve(H + mu[:, None, None] * eye, g.T[:, :, None])[:, :, 0].T
        d[:, ~active] = 0.0
        slope = np.einsum("ij,ij->j", g, d)
        # a Newton decrement below the rounding of f: one last full step if it does not
        # raise f, then the task is done
        last = active & (-slope <= 1e-13 * np.maximum(1.0, np.abs(f)))
        step = np.ones_like(f)
        todo = active.copy()
        new = Wt.copy()
        for _ in range(40):
            cand = Wt + step * d
            fc = w_task_derivatives(Z, Y, s, cand, hessian=False, **kw)[0]
            ok = todo & ((fc <= f + 1e-4 * step * slope) | ((step == 1.0) & (fc <= f)))
            new[:, ok] = cand[:, ok]
            todo &= ~ok & ~last
            if not todo.any():
                break
            step = np.where(todo, 0.5 * step, step)
        active &= ~todo & ~last         # no decrease found: at the precision of f
        Wt = new
        f, g, H = w_task_derivatives(Z, Y, s, Wt, **kw)
        gn = np.linalg.norm(g, axis=0)
        active &= gn > gtol
    return Wt[:-1], Wt[-1], n, gn


def prox_l21(U, t):
    """The proximal map of ``t ||.||_{2,1}``: every row shrunk towards 0 by ``t`` in norm,
    ``u^j max(0, 1 - t / ||u^j||)`` (the closed form of
    ``argmin_X ||X - U||_F^2 / 2 + t ||X||_{2,1}``, row by row)."""
    norms = np.sqrt(_row_squares(U))
    scale = np.maximum(0.0, 1.0 - t / np.where(norms > 0, norms, 1.0))
    return U * np.where(norms > 0, scale, 0.0)[:, None]


def mfista(X0, smooth, penalty, prox, L, *, tol=EXACT_PROX_TOL,
           max_iter=EXACT_MAX_ITER["prox"]):
    """Monotone FISTA with backtracking (MFISTA of [5]_) on ``F = f + p`` from ``X0``.

    .. math:: Z_k = \\mathrm{prox}_{p/L_k}(Y_k - \\nabla f(Y_k) / L_k),\\quad
              X_k = \\arg\\min\\{F(Z_k), F(X_{k-1})\\},\\quad
              Y_{k+1} = X_k + \\frac{t_k}{t_{k+1}} (Z_k - X_k)
              + \\frac{t_k - 1}{t_{k+1}} (X_k - X_{k-1})

    with ``t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2``, so F never increases. ``L_k`` starts at
    ``L / 1024`` and is doubled until ``f(Z_k) <= f(Y_k) + <grad f(Y_k), Z_k - Y_k>
    + L_k ||Z_k - Y_k||^2 / 2`` (never beyond ``L``, a Lipschitz constant of ``grad f``,
    where that holds by itself). Stops when the gradient mapping ``L_k ||Y_k - Z_k||`` is
    at most ``tol max(1, |F(X_k)|)`` or after ``max_iter`` iterations.

    Parameters
    ----------
    smooth : callable X -> (f, grad f)
    penalty : callable X -> float
    prox : callable (V, step) -> the proximal map of ``step * penalty`` at V
    L : float
        A Lipschitz constant of ``grad f``.

    Returns
    -------
    X : ndarray
    n_iter : int
    gmap : float
        The last gradient-mapping norm (the certificate).
    """
    L_max = max(float(L), _MIN_L)
    Lk = L_max / 1024.0
    X = np.array(X0, dtype=float)
    fY, gY = smooth(X)
    F = fY + penalty(X)
    Y, t = X, 1.0
    gmap, k = np.inf, 0
    for k in range(1, max_iter + 1):
        while True:
            Zk = prox(Y - gY / Lk, 1.0 / Lk)
            D = Zk - Y
            fZ = smooth(Zk)[0]
            if Lk >= L_max or fZ <= fY + np.sum(gY * D) + 0.5 * Lk * np.sum(D * D):
                break
            Lk = min(2.0 * Lk, L_max)
        gmap = Lk * float(np.sqrt(np.sum(D * D)))
        FZ = fZ + penalty(Zk)
        X_old = X
        if FZ <= F:
            X, F = Zk, FZ
        if gmap <= tol * max(1.0, abs(F)):
            break
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        Y = X + (t / t_new) * (Zk - X) + ((t - 1.0) / t_new) * (X - X_old)
        t = t_new
        fY, gY = smooth(Y)
    return X, k, gmap


def u_step_prox(Xs, Y, s, U, theta, W, b, v, *, sigma, gamma_B, x_norm_sq=None,
                tol=EXACT_PROX_TOL, max_iter=EXACT_MAX_ITER["prox"]):
    """The exact U-step for modality ``v``: :func:`mfista` on the loss in ``U_v`` (Eq. 18-21
    of [1]_) plus ``gamma_B ||U_v||_{2,1}`` itself, through its proximal map
    (:func:`prox_l21`; no re-weighting, no ``eps``), warm-started from ``U[v]``.

    Backtracking on the step size up to ``1 / L``, ``L = theta_v^2 ||S^-1/2 X_v||_2^2
    ||W||_2^2 / sigma`` (the loss Hessian in ``U_v`` is at most that; ``x_norm_sq`` caches
    ``||S^-1/2 X_v||_2^2``).

    Returns
    -------
    U_v : ndarray (D_v, C)
    n_iter : int
    gmap : float
    """
    N, C = Y.shape
    Xv = Xs[v]
    rest = _other_modalities(Xs, U, theta, v, (N, C))
    tv = theta[v]
    Lu, x_norm_sq = _u_curvature(Xv, s, W, tv, sigma, x_norm_sq)
    XvT = Xv.T.tocsr() if sp.issparse(Xv) else Xv.T
    dot = dense_dot if sp.issparse(Xv) else np.matmul
    k = (sigma * s)[:, None]
    half_k = 0.5 * k
    WT = W.T

    def smooth(Uv):
        loss, u = _hinge_parts(Y, (rest + tv * dot(Xv, Uv)) @ W + b, k, half_k)
        return loss.sum(), (-tv) * dot(XvT, (u * Y) @ WT)

    return mfista(U[v], smooth, lambda Uv: gamma_B * l21_norm(Uv),
                  lambda V, step: prox_l21(V, gamma_B * step), Lu, tol=tol, max_iter=max_iter)


def theta_step_prox(P, Y, s, theta, W, b, *, sigma, gamma_C, tol=EXACT_PROX_TOL,
                    max_iter=EXACT_MAX_ITER["prox"]):
    """The exact theta-step: :func:`mfista` on the loss in theta plus ``gamma_C ||theta||^2``
    (Eq. 27-29 of [1]_), the projection onto ``theta >= 0`` as the proximal map (Algorithm 2's
    constraint), backtracking up to ``L = ||S^-1/2 [A_1; ...; A_C]||_2^2 / sigma + 2 gamma_C``
    (a valid bound, see :func:`theta_step`), warm-started from ``theta``.

    Returns
    -------
    theta : ndarray (V,)
    n_iter : int
    gmap : float
    """
    N, C = Y.shape
    A = np.stack([Pv @ W for Pv in P])               # (V, N, C)
    As = (A / np.sqrt(s)[None, :, None]).reshape(len(P), -1).T
    Lt = spectral_norm_sq(As) / sigma + 2.0 * gamma_C
    k = (sigma * s)[:, None]
    half_k = 0.5 * k
    A2 = A.reshape(len(P), N * C)

    def smooth(th):
        loss, u = _hinge_parts(Y, np.dot(th.reshape(1, -1), A2).reshape(N, C) + b, k, half_k)
        return (loss.sum() + gamma_C * np.dot(th, th),
                np.einsum("vnc,nc->v", A, -u * Y) + 2.0 * gamma_C * th)

    return mfista(theta, smooth, lambda th: 0.0, lambda V, step: np.maximum(V, 0.0), Lt,
                  tol=tol, max_iter=max_iter)


def inf_norms(Xs):
    """``||x_i||_inf`` of each row of the concatenation of the views, shape (N,)."""
    out = np.zeros(Xs[0].shape[0])
    for X in Xs:
        if sp.issparse(X):
            m = np.asarray(abs(X).max(axis=1).todense()).ravel()
        else:
            m = np.abs(X).max(axis=1)
        out = np.maximum(out, m)
    return out
