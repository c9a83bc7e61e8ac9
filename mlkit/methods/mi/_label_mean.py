"""The label-mean squared-hinge SVM over fixed expansion vectors, solved in the primal.

For fixed XVs Z this is ``g(Z) = min_{beta, rho} Q(beta, rho, Z)`` of Eq. (12)-(17) of [1]_:
the inner problem of SparseMI and, with random training instances as Z, the whole of RSVM.

References
----------
.. [1] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
"""

import warnings

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import ThreadpoolController

from ._lbfgs import lbfgs

__all__ = ["KZ_RIDGE", "LBFGS_OPTIONS", "label_mean_objective", "fit_label_mean_svm"]

#: Added to the diagonal of K_Z so that it is positive definite (footnote 1 of [1]_; the
#: paper says only "a small value").
KZ_RIDGE = 1e-8
#: L-BFGS-B stopping rules, tighter than scipy's defaults (ftol 2.2e-9, gtol 1e-5) so that
#: decision values do not depend on rounding (sparse and dense input agree to ~1e-6).
LBFGS_OPTIONS = {"ftol": 1e-12, "gtol": 1e-8}

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


def fit_label_mean_svm(A, Y, K_Z, C, init=None):
    """Minimise Q(beta, rho) with L-BFGS (as in Sec. IV-C of [1]_), one problem per column
    (scipy's L-BFGS-B routine, driven by :func:`._lbfgs.lbfgs`).

    L-BFGS runs in the whitened coordinates ``gamma = L^T beta`` (``K_Z = L L^T``), where
    the regulariser is ``||gamma||^2 / 2`` and the bag features ``A L^{-T}`` are the
    coordinates of the bags' mean embeddings in an orthonormal basis of span{phi(z_j)}
    (norm <= 1). The optimum is the same; the Hessian's condition number drops from that
    of K_Z (up to 1 / ridge) to at most 1 + 2 C n_bags.

    Parameters
    ----------
    A : ndarray of shape (n_bags, n_xv)
    Y : ndarray of shape (n_bags, n_problems)
        +-1 labels.
    K_Z : ndarray of shape (n_xv, n_xv)
        Positive definite (with the ridge).
    C : float
    init : tuple (beta, rho) or None, default=None
        Starting point of L-BFGS (warm start, e.g. the previous solve of SparseMI's outer
        loop); None starts at zero.

    Returns
    -------
    beta : ndarray of shape (n_xv, n_problems)
    rho : ndarray of shape (n_problems,)
    value : ndarray of shape (n_problems,)
        The optimal values g(Z) of the binary problems (Eq. (17)).
    """
    n_xv, n_problems = A.shape[1], Y.shape[1]
    L = scipy.linalg.cholesky(K_Z, lower=True)
    B = scipy.linalg.solve_triangular(L, A.T, lower=True).T          # A L^{-T}
    gamma, rho, value = np.zeros((n_xv, n_problems)), np.zeros(n_problems), np.zeros(n_problems)
    start = np.zeros((n_xv + 1, n_problems))
    if init is not None:
        start[:-1] = L.T @ np.asarray(init[0], dtype=float).reshape(n_xv, n_problems)
        start[-1] = np.asarray(init[1], dtype=float).reshape(n_problems)
    # the products are tiny: threaded BLAS only adds wake-up latency (10-100x here)
    with single_threaded_blas():
        for c in range(n_problems):
            x, value[c], success, message = lbfgs(
                label_mean_objective, start[:, c], (B, Y[:, c], None, C), **LBFGS_OPTIONS)
            if not success:
                warnings.warn(f"label-mean SVM (problem {c}): L-BFGS stopped early: "
                              f"{message}", ConvergenceWarning)
            gamma[:, c], rho[c] = x[:-1], x[-1]
    return scipy.linalg.solve_triangular(L.T, gamma, lower=False), rho, value
