"""The baselines of LM3FE's Tables I-II [1]_: BSF, CAT, MTFS/MTFT, RFS/RFT, SSMVFS/SSMVFT, TMFS.

Each is one scikit-learn estimator on a multi-view input followed by the downstream classifier
(``classifier="knn"`` for the NUS role, ``"rls"`` for the MIR role; see
:mod:`mlkit.methods.multimodal._base`). Selection methods (``*FS``) keep the top ``percent``%
of every modality by the row norms of the modality's block ``W_v`` of a projection learned on
the concatenation ``x = [x^1; ...; x^V]``; transformation methods (``*FT``) use ``W^T x``
(dimension C, the number of tasks).

- BSF: the single best modality (chosen by leave-one-out on the training set, or fixed by
  ``view``); CAT: all modalities concatenated.
- MTFS [2]_ (Eq. 1-2 of [1]_): ``sum_c sum_i log(1 + exp(-y_ci (w_c^T x_i + b_c)))
  + lam ||W||_{2,1}`` (logistic loss, as Obozinski et al.), by FISTA with row-wise
  group soft-thresholding.
- RFS [3]_ (Eq. 3 of [1]_): ``||X W - Y||_{2,1} + gamma ||W||_{2,1}`` with 0/1 targets, by Nie
  et al.'s re-weighting algorithm.
- SSMVFS [4]_, supervised form (R): ``||X W + 1 b^T - Y||_F^2 + gamma1 sum_c sum_v ||w_c^v||_2
  + gamma2 ||W||_{2,1}`` with 0/1 targets, by re-weighting.
- TMFS [5]_: SVM-RFE on the tensor-product kernel ``k(x, x') = prod_v <x^v, x'^v>``, one-vs-all
  with the criteria summed over tasks, ``step`` features eliminated per round.

References
----------
.. [1] Y. Luo et al. Large margin multi-modal multi-task feature extraction for image
   classification. IEEE Trans. Image Processing 25(1):414-427, 2016.
.. [2] G. Obozinski, B. Taskar, M. Jordan. Multi-task feature selection. Tech. report, UC
   Berkeley, 2006.
.. [3] F. Nie, H. Huang, X. Cai, C. Ding. Efficient and robust feature selection via joint
   l2,1-norms minimization. NIPS 2010.
.. [4] H. Wang, F. Nie, H. Huang. Multi-view clustering and feature learning via structured
   sparsity. ICML 2013.
.. [5] B. Cao, L. He, X. Kong, P. S. Yu, Z. Hao, A. B. Ragin. Tensor-based multi-view feature
   selection with applications to brain diseases. ICDM 2014.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds
from sklearn.base import BaseEstimator
from sklearn.metrics import average_precision_score
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval

from ...kernels import dense_dot
from ...registry import METHODS
from ._base import Downstream, MultiViewClassifierMixin, cached_learn, concat, select_columns

__all__ = ["BSF", "CAT", "MTFS", "MTFT", "RFS", "RFT", "SSMVFS", "SSMVFT", "TMFS",
           "mtfs_solve", "rfs_solve", "tensor_rfe_criteria", "ssmvfs_solve", "tmfs_ranking", "rfs_objective",
           "ssmvfs_objective"]

_DOWN = {**MultiViewClassifierMixin._downstream_constraints,
         **MultiViewClassifierMixin._input_constraints}
_PERCENT = {"percent": [Interval(Real, 0, 100, closed="right")]}


def _row_norms(W):
    return np.sqrt(np.einsum("ij,ij->i", W, W))


def _gram(X, weights=None):
    """``X diag(weights) X^T`` as a dense array (sparse X stays sparse until the product)."""
    if weights is None:
        return dense_dot(X, X.T)
    if sp.issparse(X):
        return dense_dot(X.multiply(weights[None, :]).tocsr(), X.T)
    return (X * weights) @ X.T


def _spectral_norm_sq(X):
    if min(X.shape) <= 300 and not sp.issparse(X):
        return float(np.linalg.norm(X, 2) ** 2)
    return float(svds(sp.csr_matrix(X) if sp.issparse(X) else X, k=1,
                      return_singular_vectors=False, random_state=0)[0] ** 2)


# ------------------------------------------------------------------ solvers
def mtfs_solve(X, Ypm, lam, *, tol=1e-6, max_iter=500):
    """MTFS [2]_: L2,1-regularised multi-task logistic regression by FISTA (with restart).

    Returns ``W`` (D, C), ``b`` (C,) and the objective history.
    """
    N, D = X.shape
    C = Ypm.shape[1]
    Lip = 0.25 * (_spectral_norm_sq(X) + N)          # bound on the Hessian in [W; b]

    def smooth(W, b):
        M = -Ypm * (dense_dot(X, W) + b)
        f = np.logaddexp(0.0, M).sum()
        G = -Ypm * np.exp(M - np.logaddexp(0.0, M))   # d/dF = -y sigmoid(-yF)
        return f, dense_dot(X.T, G), G.sum(axis=0)

    def prox(W, t):
        n = _row_norms(W)
        return W * np.maximum(0.0, 1.0 - t / np.where(n > 0, n, 1.0))[:, None]

    W, b = np.zeros((D, C)), np.zeros(C)
    f, gW, gb = smooth(W, b)
    hist = [f + lam * _row_norms(W).sum()]
    Wy, by, tk = W, b, 1.0
    for _ in range(max_iter):
        fy, gW, gb = smooth(Wy, by)
        Wn, bn = prox(Wy - gW / Lip, lam / Lip), by - gb / Lip
        obj = smooth(Wn, bn)[0] + lam * _row_norms(Wn).sum()
        if obj > hist[-1]:                                 # adaptive restart (monotone)
            Wy, by, tk = W, b, 1.0
            fy, gW, gb = smooth(Wy, by)
            Wn, bn = prox(Wy - gW / Lip, lam / Lip), by - gb / Lip
            obj = smooth(Wn, bn)[0] + lam * _row_norms(Wn).sum()
        tn = 0.5 * (1 + np.sqrt(1 + 4 * tk * tk))
        Wy = Wn + (tk - 1) / tn * (Wn - W)
        by = bn + (tk - 1) / tn * (bn - b)
        W, b, tk = Wn, bn, tn
        hist.append(obj)
        if abs(hist[-2] - hist[-1]) <= tol * max(abs(hist[-1]), 1e-12):
            break
    return W, b, hist


def rfs_objective(X, Y, W, gamma):
    """``||X W - Y||_{2,1} + gamma ||W||_{2,1}`` (Eq. 3 of [1]_)."""
    return float(_row_norms(dense_dot(X, W) - Y).sum() + gamma * _row_norms(W).sum())


def rfs_solve(X, Y, gamma, *, tol=1e-6, max_iter=100, eps=1e-12):
    """RFS [3]_ by its re-weighting algorithm: with ``A = [X, gamma I]`` and
    ``U = [W; E / gamma]``, ``min ||U||_{2,1}`` s.t. ``A U = Y``;
    ``U <- D^-1 A^T (A D^-1 A^T)^-1 Y``, ``D_ii = 1 / (2 sqrt(||u^i||^2 + eps))``.
    One iteration costs an (N x N) solve and an N x D x N product.

    Returns ``W`` (D, C) and the history of :func:`rfs_objective`.
    """
    N, D = X.shape
    dW, dE = np.ones(D), np.ones(N)                       # D^-1, started at the identity
    hist = []
    W = None
    for _ in range(max_iter):
        M = _gram(X, dW) + gamma * gamma * np.diag(dE)
        Q = np.linalg.solve(M, Y)                          # (A D^-1 A^T)^-1 Y
        W = dW[:, None] * dense_dot(X.T, Q)
        E = gamma * dE[:, None] * Q                        # E / gamma = dE gamma Q
        hist.append(rfs_objective(X, Y, W, gamma))
        if len(hist) > 1 and abs(hist[-2] - hist[-1]) <= tol * hist[-1]:
            break
        dW = 2.0 * np.sqrt(_row_norms(W) ** 2 + eps)
        dE = 2.0 * np.sqrt(_row_norms(E) ** 2 + eps)
    return W, hist


def ssmvfs_objective(X, Y, W, b, dims, gamma1, gamma2):
    """The supervised SSMVFS objective (R) of the module docstring."""
    R = dense_dot(X, W) + b - Y
    edges = np.concatenate([[0], np.cumsum(dims)])
    group = sum(np.sqrt((W[a:e] ** 2).sum(axis=0)).sum() for a, e in zip(edges[:-1], edges[1:]))
    return float((R * R).sum() + gamma1 * group + gamma2 * _row_norms(W).sum())


def ssmvfs_solve(X, Y, dims, gamma1, gamma2, *, tol=1e-6, max_iter=100, eps=1e-12):
    """SSMVFS [4]_ (supervised, R) by re-weighting: for every task c,
    ``w_c = (Xc^T Xc + Lambda_c)^-1 Xc^T yc`` with ``Lambda_c = gamma1 D^G_c + gamma2 D^R``
    (``D^G_c`` = 1 / (2 ||w_c^v||) on modality v's rows, ``D^R`` = 1 / (2 ||w^j||)), solved in
    its (N x N) dual form; ``Xc``, ``yc`` centred (the intercept is unpenalised).

    Returns ``W`` (D, C), ``b`` (C,) and the objective history.
    """
    N, D = X.shape
    C = Y.shape[1]
    mu = np.asarray(X.mean(axis=0)).ravel()
    ybar = Y.mean(axis=0)
    Yc = Y - ybar
    H = np.eye(N) - 1.0 / N
    view_of = np.repeat(np.arange(len(dims)), dims)
    edges = np.concatenate([[0], np.cumsum(dims)])
    lam_inv = np.ones((D, C))                             # Lambda_c^-1, started at the identity
    hist = []
    W = b = None
    for _ in range(max_iter):
        W = np.empty((D, C))
        for c in range(C):                                # C dual (N x N) solves
            Kc = H @ _gram(X, lam_inv[:, c]) @ H
            alpha = np.linalg.solve(Kc + np.eye(N), Yc[:, c])
            W[:, c] = lam_inv[:, c] * (dense_dot(X.T, alpha[:, None])[:, 0] - mu * alpha.sum())
        b = ybar - mu @ W
        hist.append(ssmvfs_objective(X, Y, W, b, dims, gamma1, gamma2))
        if len(hist) > 1 and abs(hist[-2] - hist[-1]) <= tol * hist[-1]:
            break
        gn = np.stack([np.sqrt((W[a:e] ** 2).sum(axis=0) + eps)
                       for a, e in zip(edges[:-1], edges[1:])])          # (V, C)
        lam = gamma1 * 0.5 / gn[view_of] + gamma2 * 0.5 / np.sqrt(_row_norms(W) ** 2
                                                                  + eps)[:, None]
        lam_inv = 1.0 / lam
    return W, b, hist


def tensor_rfe_criteria(Xd, Ks, BB, alive):
    """SVM-RFE criteria of the alive features of every modality under the tensor-product
    kernel ``K = prod_v K_v`` (``K_v`` the linear kernel of modality v's alive features).

    ``BB = sum_c beta_c beta_c^T``; feature f of modality v gets
    ``x_f^T (BB o prod_{u != v} K_u) x_f = sum_c (||w_c||^2 - ||w_c^{(-f)}||^2)``.
    """
    out = []
    for v, X in enumerate(Xd):
        idx = np.flatnonzero(alive[v])
        M = BB.copy()
        for u in range(len(Xd)):
            if u != v:
                M *= Ks[u]
        Xa = X[:, idx]
        out.append(np.einsum("if,if->f", Xa, M @ Xa))
    return out


def tmfs_ranking(Xs, Ypm, *, C=1.0, step=1):
    """TMFS [5]_: SVM-RFE with the tensor-product kernel ``prod_v X_v X_v^T``, one-vs-all.

    Removing feature f of modality v changes ``||w||^2 = sum_ij beta_i beta_j K_ij`` of task
    c's SVM (``beta = alpha * y``) by ``x_f^T (beta beta^T o K_{-v}) x_f`` (``K_{-v}`` the
    product of the other modalities' kernels); the criteria are summed over the tasks and the
    ``step`` smallest over all modalities are eliminated per round (``step`` an int, or a
    fraction of the remaining features; at least one). The last feature of a modality is kept
    until every modality is down to one (an empty modality would zero the product kernel).

    Returns one ranking per modality (column indices, most important first).
    """
    Xd = [X.toarray() if sp.issparse(X) else np.asarray(X) for X in Xs]
    Ks = [X @ X.T for X in Xd]
    alive = [np.ones(X.shape[1], dtype=bool) for X in Xd]
    removed = [[] for _ in Xd]
    V, T = len(Xd), Ypm.shape[1]
    while sum(a.sum() for a in alive) > 0:
        K = np.prod(Ks, axis=0)
        B = np.zeros((Ypm.shape[0], T))
        for c in range(T):
            svm = SVC(kernel="precomputed", C=C).fit(K, Ypm[:, c])
            B[svm.support_, c] = svm.dual_coef_[0]
        per_view = tensor_rfe_criteria(Xd, Ks, B @ B.T, alive)
        crit, owner = [], []
        for v in range(V):
            idx = np.flatnonzero(alive[v])
            cv = per_view[v]
            if len(idx) == 1 and any(alive[u].sum() > 1 for u in range(V) if u != v):
                cv = np.full(1, np.inf)                   # protect a modality's last feature
            crit.append(cv)
            owner.append(np.column_stack([np.full(len(idx), v), idx]))
        crit, owner = np.concatenate(crit), np.vstack(owner)
        n_left = len(crit)
        k = step if isinstance(step, Integral) else int(np.ceil(step * n_left))
        k = max(1, min(k, n_left, int(np.isfinite(crit).sum()) or n_left))
        for v, j in owner[np.argsort(crit, kind="stable")[:k]]:
            alive[v][j] = False
            removed[v].append(j)
            Ks[v] = Ks[v] - np.outer(Xd[v][:, j], Xd[v][:, j])
    return [np.asarray(r[::-1], dtype=int) for r in removed]


# ------------------------------------------------------------------ estimators
class _MultiViewMethod(MultiViewClassifierMixin, BaseEstimator):
    """Fit = learn the features (``_learn``), then the downstream classifier on them."""

    numerics_revision = 1
    _parameter_constraints = {**_DOWN}
    _learned_attrs = ("coef_", "intercept_", "objective_", "feature_scores_",
                      "feature_ranking_", "view_", "view_scores_", "n_features_selected_")
    post_fit_params = ("percent", "n_neighbors", "rls_alpha")

    def fit(self, views, Y):
        """Fit on a multi-view input and a class vector or a multi-label 0/1 matrix."""
        self._validate_params()
        Xs, Ypm = self._prepare(views, Y)
        # a selection method and its transformation form (same solver, same parameters,
        # same data) learn once: they declare the same learning_family
        cached_learn(self, Xs, Ypm, self._learn, self._learned_attrs)
        return self._fit_downstream(Xs, Ypm)

    def _scores(self, views):
        features = self._features(self._views(views))
        return self.downstream_.scores(features)

    def _set_ranking_from_W(self, W):
        edges = np.concatenate([[0], np.cumsum(self.view_dims_)])
        self.coef_ = W
        self.feature_scores_ = [_row_norms(W[a:e]) for a, e in zip(edges[:-1], edges[1:])]
        self.feature_ranking_ = [np.argsort(-f, kind="stable") for f in self.feature_scores_]

    def _features(self, Xs):
        if self._mode == "select":
            return select_columns(Xs, self.feature_ranking_, self.percent)[0]
        return dense_dot(concat(Xs), self.coef_)


class BSF(_MultiViewMethod):
    """BSF: the downstream classifier on the single best modality ([1]_, Sec. IV).

    Parameters
    ----------
    view : int or None, default=None
        The modality to use; None picks the one with the best leave-one-out score of the
        downstream classifier on the training set (accuracy; mean AP when multi-label). The
        paper does not say how the best modality is picked; a grid over ``view`` with a
        validation set is the alternative.
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        See :mod:`mlkit.methods.multimodal._base` and :class:`LM3FE`.

    Attributes
    ----------
    view_ : int
    view_scores_ : ndarray (V,) or None
        The leave-one-out scores when ``view`` is None.
    """

    _mode = "bsf"
    post_fit_params = ()          # the choice of modality depends on the downstream classifier
    _parameter_constraints = {**_DOWN, "view": [Interval(Integral, 0, None, closed="left"),
                                                None]}

    def __init__(self, *, view=None, classifier="knn", n_neighbors=1, rls_alpha=1.0,
                 normalize="l2", view_columns=None):
        self.view = view
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns

    def _learn(self, Xs, Ypm):
        if self.view is not None:
            if self.view >= len(Xs):
                raise ValueError(f"BSF: view={self.view} but the input has {len(Xs)} views")
            self.view_, self.view_scores_ = self.view, None
            return
        down = Downstream(self.classifier, self.n_neighbors, self.rls_alpha)
        scores = []
        for X in Xs:
            S = down.loo_scores(X, Ypm)
            if self.multilabel_:
                scores.append(average_precision_score(Ypm > 0, S, average="macro"))
            elif Ypm.shape[1] == 1:
                scores.append(np.mean((S[:, 0] > 0) == (Ypm[:, 0] > 0)))
            else:
                scores.append(np.mean(S.argmax(axis=1) == Ypm.argmax(axis=1)))
        self.view_scores_ = np.asarray(scores)
        self.view_ = int(np.argmax(scores))

    def _features(self, Xs):
        return Xs[self.view_]


class CAT(_MultiViewMethod):
    """CAT: the downstream classifier on the concatenation of all (normalised) modalities.

    Parameters
    ----------
    classifier, n_neighbors, rls_alpha
        The downstream classifier, as in :class:`LM3FS`.
    normalize, view_columns
        As in :class:`LM3FE`.
    """

    def __init__(self, *, classifier="knn", n_neighbors=1, rls_alpha=1.0, normalize="l2",
                 view_columns=None):
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns

    def _learn(self, Xs, Ypm):
        self.n_features_selected_ = int(sum(X.shape[1] for X in Xs))

    def _features(self, Xs):
        return concat(Xs)


class _MTFBase(_MultiViewMethod):
    learning_family = "MTFS/MTFT"  # shared by the selection and transformation forms
    _quick_params = {"max_iter": 50}
    _parameter_constraints = {**_DOWN, "lam": [Interval(Real, 0, None, closed="left")],
                              "tol": [Interval(Real, 0, None, closed="left")],
                              "max_iter": [Interval(Integral, 1, None, closed="left")]}

    def _learn(self, Xs, Ypm):
        W, b, hist = mtfs_solve(concat(Xs), Ypm, self.lam, tol=self.tol, max_iter=self.max_iter)
        self.intercept_, self.objective_ = b, hist
        self._set_ranking_from_W(W)


class MTFS(_MTFBase):
    """MTFS: multi-task feature selection [2]_ (Eq. 1-2 of [1]_) + the downstream classifier.

    Parameters
    ----------
    percent : float, default=10.0
    lam : float, default=1.0
        Weight of ``||W||_{2,1}`` (grid lost: tune on {1e-4, ..., 1e2}).
    tol, max_iter : FISTA stopping rule (relative objective change).
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        See :mod:`mlkit.methods.multimodal._base` and :class:`LM3FE`.
    """

    _mode = "select"
    _parameter_constraints = {**_MTFBase._parameter_constraints, **_PERCENT}

    def __init__(self, *, percent=10.0, lam=1.0, tol=1e-6, max_iter=500, classifier="knn",
                 n_neighbors=1, rls_alpha=1.0, normalize="l2", view_columns=None):
        self.percent = percent
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns


class MTFT(_MTFBase):
    """MTFT: MTFS's transformation ``x -> W^T x`` + the downstream classifier (see
    :class:`MTFS` for the parameters, without ``percent``).

    Parameters
    ----------
    lam, tol, max_iter
        As in :class:`MTFS` (which also has ``percent``).
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        As in :class:`MTFS`.
    """

    _mode = "transform"

    def __init__(self, *, lam=1.0, tol=1e-6, max_iter=500, classifier="knn", n_neighbors=1,
                 rls_alpha=1.0, normalize="l2", view_columns=None):
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns


class _RFBase(_MultiViewMethod):
    learning_family = "RFS/RFT"  # shared by the selection and transformation forms
    _parameter_constraints = {**_DOWN, "gamma": [Interval(Real, 0, None, closed="neither")],
                              "tol": [Interval(Real, 0, None, closed="left")],
                              "max_iter": [Interval(Integral, 1, None, closed="left")]}

    def _learn(self, Xs, Ypm):
        W, hist = rfs_solve(concat(Xs), (Ypm > 0).astype(float), self.gamma, tol=self.tol,
                            max_iter=self.max_iter)
        self.objective_ = hist
        self._set_ranking_from_W(W)


class RFS(_RFBase):
    """RFS: robust feature selection by joint L2,1 norms [3]_ (Eq. 3 of [1]_) + the
    downstream classifier.

    Parameters
    ----------
    percent : float, default=10.0
    gamma : float, default=1.0
        Weight of ``||W||_{2,1}`` (grid lost: tune on {1e-4, ..., 1e2}).
    tol, max_iter : re-weighting stopping rule.
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        See :mod:`mlkit.methods.multimodal._base` and :class:`LM3FE`.
    """

    _mode = "select"
    _parameter_constraints = {**_RFBase._parameter_constraints, **_PERCENT}

    def __init__(self, *, percent=10.0, gamma=1.0, tol=1e-6, max_iter=100, classifier="knn",
                 n_neighbors=1, rls_alpha=1.0, normalize="l2", view_columns=None):
        self.percent = percent
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns


class RFT(_RFBase):
    """RFT: RFS's transformation ``x -> W^T x`` + the downstream classifier (see :class:`RFS`
    for the parameters, without ``percent``).

    Parameters
    ----------
    gamma, tol, max_iter
        As in :class:`RFS` (which also has ``percent``).
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        As in :class:`RFS`.
    """

    _mode = "transform"

    def __init__(self, *, gamma=1.0, tol=1e-6, max_iter=100, classifier="knn", n_neighbors=1,
                 rls_alpha=1.0, normalize="l2", view_columns=None):
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns


class _SSMVBase(_MultiViewMethod):
    learning_family = "SSMVFS/SSMVFT"  # shared by the selection and transformation forms
    _quick_params = {"max_iter": 5}
    _parameter_constraints = {**_DOWN, "gamma1": [Interval(Real, 0, None, closed="neither")],
                              "gamma2": [Interval(Real, 0, None, closed="neither")],
                              "tol": [Interval(Real, 0, None, closed="left")],
                              "max_iter": [Interval(Integral, 1, None, closed="left")]}

    def _learn(self, Xs, Ypm):
        W, b, hist = ssmvfs_solve(concat(Xs), (Ypm > 0).astype(float), self.view_dims_,
                                  self.gamma1, self.gamma2, tol=self.tol,
                                  max_iter=self.max_iter)
        self.intercept_, self.objective_ = b, hist
        self._set_ranking_from_W(W)


class SSMVFS(_SSMVBase):
    """SSMVFS: structured-sparsity multi-view feature selection [4]_, supervised form (R) +
    the downstream classifier.

    Parameters
    ----------
    percent : float, default=10.0
    gamma1, gamma2 : float, default=1.0
        Weights of the per-modality-and-task group norm and of ``||W||_{2,1}``.
    tol, max_iter : re-weighting stopping rule.
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        See :mod:`mlkit.methods.multimodal._base` and :class:`LM3FE`.
    """

    _mode = "select"
    _parameter_constraints = {**_SSMVBase._parameter_constraints, **_PERCENT}

    def __init__(self, *, percent=10.0, gamma1=1.0, gamma2=1.0, tol=1e-6, max_iter=100,
                 classifier="knn", n_neighbors=1, rls_alpha=1.0, normalize="l2",
                 view_columns=None):
        self.percent = percent
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.tol = tol
        self.max_iter = max_iter
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns


class SSMVFT(_SSMVBase):
    """SSMVFT: SSMVFS's transformation ``x -> W^T x`` + the downstream classifier (see
    :class:`SSMVFS` for the parameters, without ``percent``).

    Parameters
    ----------
    gamma1, gamma2, tol, max_iter
        As in :class:`SSMVFS` (which also has ``percent``).
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        As in :class:`SSMVFS`.
    """

    _mode = "transform"

    def __init__(self, *, gamma1=1.0, gamma2=1.0, tol=1e-6, max_iter=100, classifier="knn",
                 n_neighbors=1, rls_alpha=1.0, normalize="l2", view_columns=None):
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.tol = tol
        self.max_iter = max_iter
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns


class TMFS(_MultiViewMethod):
    """TMFS: tensor-product multi-view SVM-RFE [5]_ (one-vs-all) + the downstream classifier.

    Parameters
    ----------
    percent : float, default=10.0
    C : float, default=1.0
        The SVMs' penalty (not stated in [1]_).
    step : int or float, default=1
        Features eliminated per round: 1 is the paper's one at a time; an int k removes k, a
        float in (0, 1) that fraction of the remaining features (for large dimensions: each
        round costs C SVM fits on the N x N kernel plus O(N^2 D)).
    classifier, n_neighbors, rls_alpha, normalize, view_columns
        See :mod:`mlkit.methods.multimodal._base` and :class:`LM3FE`.
    """

    _mode = "select"
    _quick_params = {"step": 0.5}
    _parameter_constraints = {**_DOWN, **_PERCENT,
                              "C": [Interval(Real, 0, None, closed="neither")],
                              "step": [Interval(Integral, 1, None, closed="left"),
                                       Interval(Real, 0, 1, closed="neither")]}

    def __init__(self, *, percent=10.0, C=1.0, step=1, classifier="knn", n_neighbors=1,
                 rls_alpha=1.0, normalize="l2", view_columns=None):
        self.percent = percent
        self.C = C
        self.step = step
        self._set_downstream(classifier, n_neighbors, rls_alpha, normalize)
        self.view_columns = view_columns

    def _learn(self, Xs, Ypm):
        self.feature_ranking_ = tmfs_ranking(Xs, Ypm, C=self.C, step=self.step)


_PAPER = "baseline of Luo et al., TIP 2016"
for _name, _cls, _summary in [
        ("bsf", BSF, "BSF: best single modality + kNN/RLS"),
        ("cat", CAT, "CAT: concatenated modalities + kNN/RLS"),
        ("mtfs", MTFS, "MTFS: L2,1 multi-task logistic selection (Obozinski et al. 2006)"),
        ("mtft", MTFT, "MTFT: MTFS projection W^T x (Obozinski et al. 2006)"),
        ("rfs", RFS, "RFS: joint L2,1 robust feature selection (Nie et al. 2010)"),
        ("rft", RFT, "RFT: RFS projection W^T x (Nie et al. 2010)"),
        ("ssmvfs", SSMVFS, "SSMVFS: structured-sparsity multi-view selection (Wang et al. 2013)"),
        ("ssmvft", SSMVFT, "SSMVFT: SSMVFS projection W^T x (Wang et al. 2013)"),
        ("tmfs", TMFS, "TMFS: tensor-product multi-view SVM-RFE (Cao et al. 2014)")]:
    METHODS.register(_name, _cls, summary=f"{_summary}; {_PAPER}", family="multi-view",
                     paper="lm3fe")
