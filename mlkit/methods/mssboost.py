"""Random subspace bagging and (model-shared) subspace boosting for multi-label data [1]_.

``RSBag`` is Algorithm 1 (round-robin random subspace bagging), ``MSSBoost`` is Algorithm 2
(model-shared subspace boosting) and ``NSBoost`` its non-shared counterpart (Sec. 4.1). All
three keep ``F_l(x) = sum_t alpha_l^t h_t(x)`` for every label ``l`` and differ only in how the
next base model ``h_t`` and its weights ``alpha^t`` are chosen.

References
----------
.. [1] R. Yan, J. Tesic, J. R. Smith. Model-shared subspace boosting for multi-label
   classification. KDD 2007, pp. 834-843.
.. [2] F. Bach. Self-concordant analysis for logistic regression. Electronic Journal of
   Statistics 4 (2010), pp. 384-414.
"""

import time
from collections import defaultdict
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy import stats
from scipy.special import expit
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..registry import METHODS
from ._base_models import BOUNDS, KERNEL_DTYPES, fit_subspace_model, make_base_learner
from ._multilabel import MultiLabelClassifier

__all__ = ["RSBag", "NSBoost", "MSSBoost", "newton_step", "joint_loss", "JointLossSearch",
           "chi2_significant", "Chi2Filter", "selection_rows"]

#: Lower bound on the Newton weights w_il (footnote 4 of [1]).
MIN_WEIGHT = 1e-6
#: Elements of one (N x chunk) block when evaluating the joint loss of many candidates.
_LOSS_BLOCK = 1 << 22
#: A candidate is skipped only when its lower bound exceeds the best joint loss found by this
#: fraction of the current loss: far above the rounding of either (about 1e-13 relative), so
#: a skipped candidate's computed loss could never have tied or won.
_PRUNE_RTOL = 1e-9
#: The curvature in the lower bound is shrunk by this fraction: p (1 - p) is computed to
#: about 1e-10 relative wherever it is not floored at ``MIN_WEIGHT``.
_CURVATURE_SLACK = 1e-8


def newton_step(H, W, Z, sample_weight=None):
    """One adaptive Newton step for every candidate and every label at once (Eqn 2 of [1]_).

    .. math:: \\alpha_{kl} = (H_k^T W_l H_k)^{-1} H_k^T Z_l
              = \\frac{\\sum_i h_k(x_i) z_{il}}{\\sum_i w_{il} h_k(x_i)^2}

    Parameters
    ----------
    H : ndarray of shape (N, K)
        Predictions of the K candidate models on the N training examples.
    W : ndarray of shape (N, L)
        Weights w_il = max(p_il (1 - p_il), 1e-6).
    Z : ndarray of shape (N, L)
        Working responses z_il = y*_il - p_il.
    sample_weight : ndarray of shape (N,), default=None
        Weights v_i of the examples in both sums (a weighted subsample standing for the
        training set, see ``selection_subsample``); None is the paper's unweighted sums.

    Returns
    -------
    alpha : ndarray of shape (K, L)
        Zero where a candidate is zero on every example.
    """
    num, den = _newton_terms(H, W, Z, sample_weight)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _newton_terms(H, W, Z, sample_weight=None):
    """H^T Z (minus the gradient) and (H*H)^T W (the curvature) of Eqn 2, shape (K, L) each."""
    if sample_weight is not None:
        Z = Z * sample_weight[:, None]
        W = W * sample_weight[:, None]
    return H.T @ Z, (H * H).T @ W


def _more_newton_steps(F, y_star, H, alpha, mask, sample_weight, n_steps):
    """``n_steps`` further Newton steps of every (candidate, label) step length alpha_kl on
    label l's own loss sum_i v_i log(1 + exp(-y_il (F_l(x_i) + alpha h_k(x_i)))), each from
    the last (Eqn 2 at F_l + alpha_kl h_k), kept only where it lowers that loss (a Newton
    step on the logistic loss can overshoot). [1]_ takes one step and notes that more
    "bring little advantage" (Sec. 4.2); many steps approach the exact line search. Pairs
    outside ``mask`` stay 0. Costs O(N K L) memory and time per step."""
    v = np.ones(len(F)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    Y = 2.0 * y_star - 1.0
    Hv, H2v = H * v[:, None], H * H * v[:, None]

    def label_loss(a):         # (K, L): sum_i v_i log(1 + exp(-y_il (F_il + a_kl h_ik)))
        margin = Y[:, None, :] * (F[:, None, :] + H[:, :, None] * a[None])
        return np.einsum("n,nkl->kl", v, _softplus(-margin))

    loss = label_loss(alpha)
    for _ in range(n_steps):
        P = expit(F[:, None, :] + H[:, :, None] * alpha[None])              # (N, K, L)
        num = np.einsum("nk,nkl->kl", Hv, y_star[:, None, :] - P)
        den = np.einsum("nk,nkl->kl", H2v, np.maximum(P * (1 - P), MIN_WEIGHT))
        step = np.divide(num, den, out=np.zeros_like(num), where=(den > 0) & mask)
        trial = alpha + step
        trial_loss = label_loss(trial)
        better = trial_loss < loss
        alpha = np.where(better, trial, alpha)
        loss = np.where(better, trial_loss, loss)
    return alpha


def _softplus(x, out=None):
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), overflow-free; ~25% faster than
    ``np.logaddexp(0, x)``. ``out`` may be ``x`` itself."""
    pos = np.maximum(x, 0.0)
    out = np.abs(x, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += pos
    return out


def _row_sums(A, v):
    """sum_i v_i A[r, i] for every row r (plain sums when ``v`` is None). Each row is summed
    on its own (numpy's pairwise sum), so a row's sum never depends on which other rows
    share its block, as ``A @ v`` (BLAS) may in its last bit."""
    return A.sum(axis=1) if v is None else (A * v).sum(axis=1)


def _loss_changes(neg_margin, YT, HT, alpha, kk, ll, base, v):
    """C_l(alpha_kl h_k) - C_l(0) for the pairs (kk[j], ll[j]): the change of label l's term
    of Eqn 1 of [1]_ when F_l moves by alpha_kl h_k, in blocks of at most ``_LOSS_BLOCK``
    elements. ``neg_margin`` (L, N) is -y_il F_l(x_i), ``YT`` (L, N) the labels, ``HT``
    (K, N) the candidates, ``base`` (L,) the current C_l(0)."""
    out = np.empty(kk.size)
    step = max(1, _LOSS_BLOCK // max(1, neg_margin.shape[1]))
    for start in range(0, kk.size, step):
        k, l = kk[start:start + step], ll[start:start + step]
        arg = YT[l]
        arg *= HT[k]
        arg *= -alpha[k, l][:, None]
        arg += neg_margin[l]
        out[start:start + step] = _row_sums(_softplus(arg, out=arg), v) - base[l]
    return out


def joint_loss(F, Y, H, alpha, sample_weight=None):
    """Joint logistic loss after a step, for every candidate (Eqn 1 of [1]_).

    .. math:: C_k = \\sum_{i,l} \\log(1 + \\exp(-y_{il} (F_l(x_i) + \\alpha_{kl} h_k(x_i))))

    Only the (k, l) pairs with a non-zero alpha are evaluated (the others keep the current
    loss of label l), in blocks of at most ``_LOSS_BLOCK`` elements, so NSBoost costs O(NK)
    and MSSBoost O(NKL) without an (N, K, L) array in memory. The work runs on row-major
    transposes (labels and candidates as rows), so every gather is a contiguous copy.
    Boosting selects with :class:`JointLossSearch`, which gives the same numbers for the
    candidates it evaluates and evaluates far fewer.

    Parameters
    ----------
    F : ndarray of shape (N, L)
        Current decision values.
    Y : ndarray of shape (N, L)
        Labels in {-1, +1}.
    H : ndarray of shape (N, K)
    alpha : ndarray of shape (K, L)
    sample_weight : ndarray of shape (N,), default=None
        Weight v_i of each example's terms (see :func:`newton_step`); None is Eqn 1.

    Returns
    -------
    loss : ndarray of shape (K,)
    """
    v = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    neg_margin = np.ascontiguousarray((-Y * F).T)          # (L, N): -y_il F_l(x_i)
    base = _row_sums(_softplus(neg_margin), v)             # (L,) current loss per label
    loss = np.full(H.shape[1], base.sum())
    kk, ll = np.nonzero(alpha)
    if kk.size:
        YT = np.ascontiguousarray(Y.T, dtype=float)
        HT = np.ascontiguousarray(H.T)
        # sequential in (k, l) order: candidate k's loss is base.sum() + its changes, l ascending
        np.add.at(loss, kk, _loss_changes(neg_margin, YT, HT, alpha, kk, ll, base, v))
    return loss


class JointLossSearch:
    """Step 2(a) of Algorithm 2 of [1]_, exactly: the candidate whose Newton step gives the
    smallest joint loss (Eqn 1), over the rounds of one fit (one ``Y``, one weighting).

    The joint loss of candidate k is C_k = sum_l C_l + sum_l D_kl, where C_l is label l's
    current loss and D_kl the change of C_l when F_l moves by alpha_kl h_k (zero where
    alpha_kl = 0). Evaluating every D_kl every round (:func:`joint_loss`) costs O(N K L);
    two exact savings leave a few candidates' changed pairs:

    * **Only what changed.** D_kl depends on F_l, h_k and alpha_kl alone. A round moves F_l
      only for the labels the selected model is weighted for and replaces one candidate, so
      every other D_kl is kept from an earlier round. What changed is found by comparing F,
      H and alpha with the values each kept D_kl was computed from, not assumed.
    * **Candidates that cannot win are skipped.** With phi(a) label l's loss after
      F_l += a h_k, phi''' = sum_i v_i u_i^3 s''(m_i + a u_i), u_i = -y_il h_ik, and the
      logistic loss s(x) = log(1 + e^x) has |s'''| = |s''(1 - 2 sigma)| <= s'', so
      |phi'''| <= R_k phi'' with R_k = max_i |h_ik|: phi''(a) >= phi''(0) e^{-R_k |a|}, and
      integrating twice (Lemma 1 of [2]_)

      .. math:: D_{kl} \\ge -\\alpha_{kl} g_{kl}
                + c_{kl} \\frac{e^{-R_k|\\alpha_{kl}|} + R_k|\\alpha_{kl}| - 1}{R_k^2}

      with g_kl = (H^T Z)_kl = -phi'(0) and c_kl = phi''(0) = sum_i v_i h_ik^2 p_il (1 -
      p_il), at least the Newton curvature (H^2)^T W less its floor, 1e-6 sum_i v_i h_ik^2.
      A candidate's bound is its kept D_kl plus the bounds of its other pairs. Candidates
      are evaluated in increasing order of their bound until the next bound exceeds the
      best loss found (by ``_PRUNE_RTOL`` of the current loss): those left cannot win.

    An evaluated candidate's loss is computed by the operations of :func:`joint_loss`, in
    the same order, so the selected candidate, its loss and ties (the lowest index wins, as
    ``np.argmin``) are those of ``np.argmin(joint_loss(F, Y, H, alpha))``.

    Parameters
    ----------
    Y : ndarray of shape (N, L)
        Labels in {-1, +1}.
    sample_weight : ndarray of shape (N,), default=None
        Weight v_i of each example's terms (see :func:`newton_step`); None is Eqn 1.
    """

    def __init__(self, Y, sample_weight=None):
        self._YT = np.ascontiguousarray(Y.T, dtype=float)
        self._v = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self._F = None

    def argmin(self, F, H, alpha, grad, curvature, candidates=None):
        """The candidate with the smallest joint loss and that loss.

        Parameters
        ----------
        F : ndarray of shape (N, L)
            Current decision values.
        H : ndarray of shape (N, K)
            Predictions of the candidates.
        alpha : ndarray of shape (K, L)
            Each candidate's step (Eqn 2), zero where it is not allowed.
        grad, curvature : ndarray of shape (K, L)
            H^T Z and (H^2)^T W of the Newton step (:func:`newton_step`), with the same
            weights.
        candidates : ndarray of int, default=None
            Compare only these (sorted) candidates; None is all of them.

        Returns
        -------
        k : int
        loss : float
            C_k, the value ``joint_loss`` gives it.
        """
        self._update(F, H, alpha)
        nonzero = alpha != 0
        current = self._base.sum()
        if candidates is None:
            candidates = np.arange(H.shape[1])
        bound = np.where(self._valid, self._change, self._lower_bounds(alpha, grad, curvature))
        bound[~nonzero] = 0.0
        lower = current + bound[candidates].sum(axis=1)
        tol = _PRUNE_RTOL * abs(current)
        best_k, best = -1, np.inf
        for j in np.argsort(lower, kind="stable"):
            if lower[j] > best + tol:
                break
            k = int(candidates[j])
            loss = self._loss(k, alpha, np.flatnonzero(nonzero[k]), current)
            if loss < best or (loss == best and k < best_k):
                best_k, best = k, loss
        return best_k, best

    def _update(self, F, H, alpha):
        """Bring the per-label and per-candidate terms up to F and H; invalidate every kept
        D_kl whose F_l, h_k or alpha_kl changed."""
        n, n_labels = F.shape
        n_cand = H.shape[1]
        if self._F is None or self._F.shape != F.shape or self._H.shape != H.shape:
            self._F, self._H = np.array(F), np.array(H)
            self._HT = np.ascontiguousarray(H.T)
            self._neg_margin = np.empty((n_labels, n))
            self._base = np.empty(n_labels)         # C_l, the current loss of each label
            self._radius = np.empty(n_cand)         # R_k = max_i |h_ik|
            self._sq = np.empty(n_cand)             # sum_i v_i h_ik^2
            self._change = np.zeros((n_cand, n_labels))
            self._alpha = np.zeros((n_cand, n_labels))
            self._valid = np.zeros((n_cand, n_labels), dtype=bool)
            labels, cands = np.arange(n_labels), np.arange(n_cand)
        else:
            labels = np.flatnonzero((F != self._F).any(axis=0))
            cands = np.flatnonzero((H != self._H).any(axis=0))
            self._F[:, labels] = F[:, labels]
            self._H[:, cands] = H[:, cands]
            self._HT[cands] = H[:, cands].T
            self._valid[:, labels] = False
            self._valid[cands] = False
        self._valid &= alpha == self._alpha
        if labels.size:
            margin = -self._YT[labels] * F[:, labels].T
            self._neg_margin[labels] = margin
            self._base[labels] = _row_sums(_softplus(margin), self._v)
        if cands.size:
            h = self._HT[cands]
            self._radius[cands] = np.abs(h).max(axis=1)
            self._sq[cands] = _row_sums(h * h, self._v)

    def _lower_bounds(self, alpha, grad, curvature):
        """The bound on every D_kl (class docstring); meaningful where alpha_kl != 0."""
        radius = self._radius[:, None]
        c = np.maximum(curvature - MIN_WEIGHT * self._sq[:, None], 0.0) * (1 - _CURVATURE_SLACK)
        ra = radius * np.abs(alpha)
        shape = np.divide(np.expm1(-ra) + ra, radius ** 2, out=np.zeros_like(ra),
                          where=radius > 0)
        return -alpha * grad + c * shape

    def _loss(self, k, alpha, labels, current):
        """C_k: the current loss plus candidate k's changes, computing those not kept."""
        todo = labels[~self._valid[k, labels]]
        if todo.size:
            self._change[k, todo] = _loss_changes(
                self._neg_margin, self._YT, self._HT, alpha, np.full(todo.size, k), todo,
                self._base, self._v)
            self._alpha[k, todo] = alpha[k, todo]
            self._valid[k, todo] = True
        loss = current
        for change in self._change[k, labels]:      # as joint_loss's np.add.at: l ascending
            loss += change
        return loss


def chi2_significant(H, Y, p_value=0.025):
    """Which (candidate, label) pairs pass the chi-square filter (Sec. 6.2.1 of [1]_).

    The 2x2 contingency table of sign(h_k(x_i)) against y_il on the training set, Pearson's
    statistic without continuity correction, 1 degree of freedom; a pair is significant when
    its p-value is below ``p_value`` (chi2 >= 5.02 at 0.025). A model that is constant on the
    training set, or a label that is constant, is never significant.

    Returns
    -------
    ndarray of bool, shape (K, L)
    """
    y_pos = (Y > 0).astype(float)
    return _chi2_statistic(H, y_pos, y_pos.sum(axis=0)) >= stats.chi2.isf(p_value, df=1)


def _chi2_statistic(H, y_pos, n_y):
    """Pearson's chi2 of every 2x2 table sign(h_k) x y_l, shape (K, L); 0 when a margin is 0."""
    n = H.shape[0]
    h_pos = (H > 0).astype(float)
    a = h_pos.T @ y_pos                       # h > 0, y > 0
    n_h = h_pos.sum(axis=0)[:, None]          # h > 0
    n_y = n_y[None, :]                        # y > 0
    b, c = n_h - a, n_y - a
    d = n - a - b - c
    den = n_h * (n - n_h) * n_y * (n - n_y)
    return np.divide(n * (a * d - b * c) ** 2, den, out=np.zeros_like(a), where=den > 0)


class Chi2Filter:
    """The chi-square filter of :func:`chi2_significant`, kept up to date one candidate at a
    time: when candidate k is replaced only row k of the (K, L) table changes, so an update
    costs O(N L) instead of the O(N K L) of recomputing the table.

    Parameters
    ----------
    H : ndarray of shape (N, K)
        Predictions of the pool on the training set.
    Y : ndarray of shape (N, L)
        Labels in {-1, +1}.
    p_value : float, default=0.025

    Attributes
    ----------
    significant : ndarray of bool, shape (K, L)
        Equal to ``chi2_significant(H, Y, p_value)`` for the current H.
    """

    def __init__(self, H, Y, p_value=0.025):
        self._y_pos = (Y > 0).astype(float)
        self._n_y = self._y_pos.sum(axis=0)
        self._critical = stats.chi2.isf(p_value, df=1)
        self.significant = _chi2_statistic(H, self._y_pos, self._n_y) >= self._critical

    def update(self, k, h):
        """Candidate k now predicts ``h`` (shape (N,)) on the training set."""
        self.significant[k] = (_chi2_statistic(h[:, None], self._y_pos, self._n_y)[0]
                               >= self._critical)


def selection_rows(Y, fraction, rng, *, min_positives=100):
    """A label-stratified, weighted subsample of the training set (``selection_subsample``).

    Every example is kept with probability ``pi_i``: ``fraction`` for an example that is
    negative for every label, and for a positive of label l at least ``min(1, min_positives /
    n+_l)``, so every positive of a rare label (at most ``min_positives`` positives) is kept
    and every label keeps about ``min_positives`` positives or a ``fraction`` of them. Kept
    examples weigh ``1 / pi_i`` (Horvitz-Thompson), so weighted sums over the subsample are
    unbiased estimates of the sums over the training set in Eqns 1 and 2.

    Returns
    -------
    rows : ndarray of int
    weights : ndarray of float, same length
    """
    pos = Y > 0
    n_pos = np.maximum(pos.sum(axis=0), 1)
    want = np.minimum(1.0, np.maximum(fraction, min_positives / n_pos))      # per label
    pi = np.maximum(fraction, np.where(pos, want[None, :], 0.0).max(axis=1))
    rows = np.flatnonzero(rng.random(len(Y)) < pi)
    return rows, 1.0 / pi[rows]


class _SubspaceEnsemble(MultiLabelClassifier):
    """Shared machinery: validation, base-model learning, staged decision values.

    Subclasses implement ``_build(X, Y, seeds, learner)`` returning the selected base models
    and their (T, L) weight matrix.
    """

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "base_learner": [StrOptions({"svm", "stump"}), HasMethods(["fit"])],
        "rd": [Interval(Real, 0, 1, closed="right")],
        "rf": [Interval(Real, 0, 1, closed="right")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "score_bound": [StrOptions(set(BOUNDS))],
        "kernel_dtype": [StrOptions(set(KERNEL_DTYPES))],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    #: 2: records keep the stump base models (fig3 is redrawn from them)
    numerics_revision = 2

    def __init__(self, n_estimators=100, *, base_learner="svm", rd=0.1, rf=0.1, gamma=0.05,
                 C=1.0, score_bound="clip", kernel_dtype="float64", n_jobs=None,
                 random_state=None):
        self.n_estimators = n_estimators
        self.base_learner = base_learner
        self.rd = rd
        self.rf = rf
        self.gamma = gamma
        self.C = C
        self.score_bound = score_bound
        self.kernel_dtype = kernel_dtype
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- fitting -------------------------------------------------------------------------
    def fit(self, X, Y):
        """Learn the ensemble.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_labels) with 0/1 or -1/+1 entries, or of
            shape (n_samples,) with two classes (a single binary label).

        Returns
        -------
        self
        """
        X, Y = self._check_fit_input(X, Y)
        rng = check_random_state(self.random_state)
        learner = make_base_learner(self.base_learner, gamma=self.gamma, C=self.C,
                                    random_state=None)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self._n_models_learned(Y.shape[1]))
        self.fit_profile_ = defaultdict(float)
        self.fit_profile_cpu_ = defaultdict(float)
        self._clock_start = (time.perf_counter(), time.process_time())
        # the loop's products are small: one BLAS thread avoids OpenBLAS's thread wake-up
        # latency, which dominates them on a busy machine
        with self._profiled("total"), threadpool_limits(limits=1, user_api="blas"):
            self.estimators_, self.alphas_ = self._build(X, Y, seeds, learner)
        self.fit_profile_ = dict(self.fit_profile_)
        self.fit_profile_cpu_ = dict(self.fit_profile_cpu_)
        return self

    @contextmanager
    def _profiled(self, part):
        """Add the block's wall seconds to ``fit_profile_[part]`` and its CPU seconds to
        ``fit_profile_cpu_[part]``."""
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.fit_profile_[part] += time.perf_counter() - wall
            self.fit_profile_cpu_[part] += time.process_time() - cpu

    def run_record_extras(self):
        """Fitted facts for the run record: base models, model size (in all and of each
        selected model, in order: the prediction cost of the first t models), fit-time
        profile."""
        check_is_fitted(self)
        out = {**super().run_record_extras(),
               "model_sizes": [h.size for h in self.estimators_],
               "fit_profile_s": {k: round(v, 4) for k, v in self.fit_profile_.items()},
               "fit_cpu_s": round(self.fit_profile_cpu_["total"], 4)}
        if self.base_learner == "stump":        # small enough to keep: fig3 redraws them
            out["base_models"] = [m.describe() for m in self.estimators_]
        return out

    def _n_models_learned(self, n_labels):
        return self.n_estimators

    def _scoring_input(self, X):
        """X in the kernel precision: cast once, not once per base model."""
        if self.kernel_dtype == "float64" or self.base_learner != "svm":
            return X
        return X.astype(KERNEL_DTYPES[self.kernel_dtype])

    def _fit_models(self, X, Y, labels, seeds, learner):
        """Learn base models for the given labels with the given seeds (in parallel)."""
        kw = dict(rd=self.rd, rf=self.rf, learner=learner, bound=self.score_bound,
                  kernel_dtype=self.kernel_dtype)
        with self._profiled("fit_models"):
            if len(labels) == 1:
                return [fit_subspace_model(X, Y[:, labels[0]] > 0, labels[0], seed=seeds[0],
                                           **kw)]
            return Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(fit_subspace_model)(X, Y[:, lab] > 0, lab, seed=s, **kw)
                for lab, s in zip(labels, seeds))

    def _score_models(self, models, X):
        """h(x) of the given models on the rows of X as columns, shape (N, len(models))."""
        with self._profiled("score_models"):
            if len(models) == 1:
                columns = [models[0].predict(X)]
            else:
                columns = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                    delayed(h.predict)(X) for h in models)
            return np.column_stack(columns)

    # -- prediction ----------------------------------------------------------------------
    def base_predictions(self, X, *, return_times=False):
        """h_t(x) of every selected base model: an array of shape (n_samples, T); with
        ``return_times`` also the seconds each model took (prediction-cost curves)."""
        X = self._scoring_input(self._check_X(X))
        columns, seconds = [], []
        for h in self.estimators_:
            start = time.perf_counter()
            columns.append(h.predict(X))
            seconds.append(time.perf_counter() - start)
        H = np.column_stack(columns)
        return (H, np.array(seconds)) if return_times else H

    def decision_function(self, X):
        """F_l(x) = sum_t alpha_l^t h_t(x): shape (n_samples, n_labels), or (n_samples,) when
        fitted on a single binary label."""
        return self._shape_scores(self.base_predictions(X) @ self.alphas_ + self._offset())

    def _offset(self):
        """F_l before any model: ``init_score_`` of the boosting methods, else 0."""
        return getattr(self, "init_score_", np.zeros(self.n_labels_))

    def staged_decision_function(self, X):
        """Yield F after each of the T base models (learning curves without refitting)."""
        H = self.base_predictions(X)
        F = np.tile(self._offset(), (H.shape[0], 1))
        for t in range(H.shape[1]):
            F = F + H[:, t:t + 1] * self.alphas_[t]
            yield self._shape_scores(F)

    def staged_predict(self, X):
        """Yield the predictions after each base model."""
        for F in self.staged_decision_function(X):
            yield self.predict_from_scores(F)

    @property
    def estimator_labels_(self):
        """The label l(k) each selected base model was learned for, shape (T,)."""
        check_is_fitted(self)
        return np.array([h.label for h in self.estimators_])

    @property
    def estimators_features_(self):
        """The feature subset of each selected base model."""
        check_is_fitted(self)
        return [h.features for h in self.estimators_]

    @property
    def n_models_(self):
        """Number of base models evaluated at prediction time (T)."""
        check_is_fitted(self)
        return len(self.estimators_)

    @property
    def model_size_(self):
        """Sum over the selected models of (#support vectors) x (#features) (Table 2 of [1]_)."""
        check_is_fitted(self)
        return int(sum(h.size for h in self.estimators_))


class RSBag(_SubspaceEnsemble):
    """Round-robin random subspace bagging (Algorithm 1 of [1]_).

    Base model t is learned for label l = (t - 1) mod L on a balanced bootstrap of N * rd
    examples and M * rf random features, and added to F_l with weight 1.

    Parameters
    ----------
    n_estimators : int, default=100
        T, the number of base models in total (over all labels).
    base_learner : {"svm", "stump"} or classifier, default="svm"
        RBF SVM (the paper's real collections), depth-1 decision tree (the synthetic set), or
        any scikit-learn classifier with ``decision_function`` or ``predict_proba``.
    rd : float in (0, 1], default=0.1
        Data sampling ratio: N * rd bootstrap draws per model, half from each class.
    rf : float in (0, 1], default=0.1
        Feature sampling ratio: M * rf features per model, without replacement.
    gamma : float, default=0.05
        RBF width rho of the BASE MODELS' kernel K(x, z) = exp(-rho ||x - z||^2) on their
        M * rf features (the paper's value, Sec. 6.2.1). It is not the Baseline's rho: a
        base model sees a fraction rf of the features, so squared distances shrink about
        by rf and the best rho grows about by 1/rf; choose it by CV of the base model
        itself (:func:`mlkit.papers.mssboost.selection.select_base_model`), the
        Baseline's by CV of :class:`~mlkit.methods.BaselineSVM` (its own ``gamma``).
    C : float, default=1.0
        SVM cost of the base models (not stated in the paper), likewise selected for the
        base model, apart from the Baseline's ``C``.
    score_bound : {"clip", "tanh", "sign"}, default="clip"
        How a base model's score is bounded to [-1, 1]; not stated in the paper.
    kernel_dtype : {"float64", "float32"}, default="float64"
        Precision of the RBF-SVM base models' kernel when they are scored (never when they
        are fitted). "float32" halves the scoring cost; it moves decision values by about
        1e-6 (relative), i.e. numerics, not the algorithm.
    n_jobs : int, default=None
        Threads used to learn and score independent base models (the initial pool of the
        boosting methods); never changes the result.
    random_state : int, RandomState or None
        Seeds of every base model are drawn from it up front.

    Attributes
    ----------
    estimators_ : list of SubspaceModel
        The T base models in order.
    alphas_ : ndarray of shape (T, L)
        One-hot rows: model t votes with weight 1 for its own label.
    classes_ : ndarray of shape (2,)
        The two classes of a 1-D binary y, or the negative and positive values of a
        multi-label Y ([0, 1] or [-1, 1]); predictions are ``classes_[F > 0]``.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods import RSBag
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4)); Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    >>> RSBag(n_estimators=20, base_learner="stump", rd=0.3, rf=0.5, random_state=0).fit(X, Y).alphas_.shape
    (20, 2)
    """

    #: constructor parameters that make the common tests' fits fast
    _quick_params = dict(n_estimators=5, base_learner="stump", rd=0.5, rf=1.0, random_state=0)

    def _n_rounds(self, n_labels):
        return self.n_estimators

    def _n_models_learned(self, n_labels):
        return self._n_rounds(n_labels)

    def _build(self, X, Y, seeds, learner):
        n_labels = Y.shape[1]
        T = self._n_rounds(n_labels)
        labels = np.arange(T) % n_labels
        models = self._fit_models(X, Y, labels, seeds, learner)
        alphas = np.zeros((T, n_labels))
        alphas[np.arange(T), labels] = 1.0
        return models, alphas


class _SubspaceBoosting(_SubspaceEnsemble):
    """Algorithm 2 of [1]_; ``_sharing`` decides whether a model may serve other labels."""

    _sharing = True
    #: Step 2(a)'s evaluator: built once per fit from (Y, sample_weight), its ``argmin``
    #: called every round (scripts/bench_mssboost.py swaps in the evaluation it replaced)
    _loss_search = JointLossSearch

    #: constructor parameters that make the common tests' fits fast
    _quick_params = dict(n_estimators=5, base_learner="stump", rd=0.5, rf=1.0, random_state=0)

    _parameter_constraints = {
        **_SubspaceEnsemble._parameter_constraints,
        "chi2_filter": ["boolean"],
        "chi2_p_value": [Interval(Real, 0, 1, closed="neither")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"zero", "prior"})],
        "selection_subsample": [Interval(Real, 0, 1, closed="right"), None],
        "shortlist": [Interval(Integral, 1, None, closed="left"), None],
        "newton_steps": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_estimators=100, *, base_learner="svm", rd=0.1, rf=0.1, gamma=0.05,
                 C=1.0, score_bound="clip", chi2_filter=False, chi2_p_value=0.025,
                 n_candidates=1, init="zero", selection_subsample=None, shortlist=None,
                 newton_steps=1, kernel_dtype="float64", n_jobs=None, random_state=None):
        super().__init__(n_estimators, base_learner=base_learner, rd=rd, rf=rf, gamma=gamma,
                         C=C, score_bound=score_bound, kernel_dtype=kernel_dtype, n_jobs=n_jobs,
                         random_state=random_state)
        self.chi2_filter = chi2_filter
        self.chi2_p_value = chi2_p_value
        self.n_candidates = n_candidates
        self.init = init
        self.selection_subsample = selection_subsample
        self.shortlist = shortlist
        self.newton_steps = newton_steps

    def predict_proba(self, X):
        """Probability that each label is positive under the logistic model being boosted.

        The joint loss of Eqn 1 of [1]_, :math:`\\sum_{i,l} \\log(1 + e^{-y_{il} F_l(x_i)})
        = -\\sum_{i,l} \\log \\sigma(y_{il} F_l(x_i))`, is the negative log-likelihood of
        independent labels with :math:`P(y_l = +1 \\mid x) = \\sigma(F_l(x)) =
        1 / (1 + e^{-F_l(x)})`, the :math:`p_{il}` of the Newton step (Sec. 4.2 of [1]_).
        So ``predict_proba(X) > 0.5`` exactly where ``predict`` gives the positive class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            :math:`\\sigma(F_l(x))`, column l for label l (multi-label Y); fitted on a 1-D
            binary y, shape (n_samples, 2): the probabilities of ``classes_[0]`` and
            ``classes_[1]``.
        """
        F = self.decision_function(X)
        if F.ndim == 1:                          # a single binary label: both classes
            return np.column_stack([expit(-F), expit(F)])
        return expit(F)

    def _initial_scores(self, Y):
        """F_l before the first round: 0 (Algorithm 2, step 1) or, with ``init="prior"``,
        the training log-odds log(n+_l / n-_l) (the usual start of logistic boosting; not
        in [1]_), so that no early model is spent on each label's bias."""
        if self.init == "zero":
            return np.zeros(Y.shape[1])
        pos = np.clip((Y > 0).mean(axis=0), 0.5 / len(Y), 1 - 0.5 / len(Y))
        return np.log(pos / (1 - pos))

    def _n_models_learned(self, n_labels):
        # K + T models in all; with K = L the paper's L + T (Sec. 4.4)
        return n_labels * self.n_candidates + self.n_estimators

    def _clock(self):
        """(wall, CPU) seconds since ``fit`` started."""
        return (time.perf_counter() - self._clock_start[0],
                time.process_time() - self._clock_start[1])

    def _timed(self, part, fn, *args, **kwargs):
        with self._profiled(part):
            return fn(*args, **kwargs)

    def _build(self, X, Y, seeds, learner):
        n, n_labels = Y.shape
        pool_labels = np.tile(np.arange(n_labels), self.n_candidates)   # l(k)
        n_pool = pool_labels.size
        X_score = self._scoring_input(X)
        pool = self._fit_models(X, Y, pool_labels, seeds[:n_pool], learner)
        # every candidate is scored on the N training examples once, when it is learned,
        # and its column of H is kept until it is selected and replaced
        H = self._score_models(pool, X_score)
        allowed = (np.ones((n_pool, n_labels), dtype=bool) if self._sharing else
                   pool_labels[:, None] == np.arange(n_labels)[None, :])  # l == l(k)
        chi2 = (self._timed("chi2", Chi2Filter, H, Y, self.chi2_p_value)
                if self.chi2_filter else None)
        if self.selection_subsample is None:
            rows = weights = None
        else:   # approximation, off by default: its own random stream, after the seeds
            rows, weights = selection_rows(
                Y, self.selection_subsample, np.random.default_rng([int(seeds[0]), 1]))
            self.selection_rows_ = rows
        search = self._loss_search(Y if rows is None else Y[rows], weights)
        y_star = (Y + 1) / 2
        self.init_score_ = self._initial_scores(Y)
        F = np.tile(self.init_score_, (n, 1))
        models, alphas = [], []
        self.train_loss_ = [float(_softplus(-Y * F).sum())]
        clock = [self._clock()]
        for t in range(self.n_estimators):
            mask = allowed & chi2.significant if chi2 is not None else allowed
            k, alpha_k, loss_k = self._select(F, Y, y_star, H, mask, rows, weights, search)
            F += H[:, k:k + 1] * alpha_k
            models.append(pool[k])
            alphas.append(alpha_k)
            self.train_loss_.append(float(loss_k))
            # step 2(c): a new candidate for the same label replaces the selected one
            pool[k] = self._fit_models(X, Y, [pool_labels[k]], [seeds[n_pool + t]], learner)[0]
            H[:, k] = self._score_models([pool[k]], X_score)[:, 0]
            if chi2 is not None:
                self._timed("chi2", chi2.update, k, H[:, k])
            clock.append(self._clock())
        self.train_loss_ = np.array(self.train_loss_)
        self.fit_time_curve_ = np.array(clock)
        return models, np.array(alphas)

    def _newton(self, F, y_star, H, mask, weights=None):
        """Eqn 2 for every candidate of H and every label, zero outside ``mask``; also its
        gradient term H^T Z and curvature (H^2)^T W (for the Newton decrement and the
        bounds of :class:`JointLossSearch`)."""
        with self._profiled("newton"):
            P = expit(F)
            num, den = _newton_terms(H, np.maximum(P * (1 - P), MIN_WEIGHT), y_star - P,
                                     weights)
            alpha = np.divide(num, den, out=np.zeros_like(num), where=(den > 0) & mask)
            if self.newton_steps > 1:
                alpha = _more_newton_steps(F, y_star, H, alpha, mask, weights,
                                           self.newton_steps - 1)
        return alpha, num, den

    def _select(self, F, Y, y_star, H, mask, rows, weights, search=None):
        """Step 2(a): the candidate k whose Newton step gives the smallest joint loss; returns
        k, its weights alpha_k (L,) and the joint loss after the step.

        Exact (the paper) unless ``selection_subsample`` or ``shortlist`` is set: then the
        candidates are compared on a weighted subsample and/or only the ``shortlist`` with
        the largest Newton decrement sum_l alpha_kl (H^T Z)_kl (the second-order estimate
        of the loss decrease) get their joint loss evaluated. The selected candidate's
        alpha and loss are always computed on the whole training set. ``search`` is the
        fit's :class:`JointLossSearch` (on the subsample's rows and weights), which keeps
        what it computed for the next round; None starts a new one."""
        if rows is None:
            Fs, Ys, ys, Hs = F, Y, y_star, H
        else:
            Fs, Ys, ys, Hs = F[rows], Y[rows], y_star[rows], H[rows]
        alpha, num, den = self._newton(Fs, ys, Hs, mask, weights)
        candidates = None
        if self.shortlist is not None and self.shortlist < H.shape[1]:
            decrement = (alpha * num).sum(axis=1)
            candidates = np.sort(np.argpartition(-decrement, self.shortlist - 1)
                                 [:self.shortlist])
        if search is None:
            search = self._loss_search(Ys, weights)
        k, loss = self._timed("loss", search.argmin, Fs, Hs, alpha, num, den, candidates)
        if rows is None:            # alpha and loss already on the whole training set
            return k, alpha[k], loss
        alpha_k = self._newton(F, y_star, H[:, [k]], mask[[k]])[0][0]
        loss_k = self._timed("loss", joint_loss, F, Y, H[:, [k]], alpha_k[None, :])[0]
        return k, alpha_k, loss_k


class MSSBoost(_SubspaceBoosting):
    """Model-shared subspace boosting (Algorithm 2 of [1]_).

    A pool holds one subspace model per label. At every round each candidate h_k gets, for
    every label l, one adaptive Newton step on the logistic loss (Eqn 2):

    .. math:: \\alpha_{kl} = \\frac{\\sum_i h_k(x_i) z_{il}}{\\sum_i w_{il} h_k(x_i)^2},\\quad
              z_{il} = \\frac{y_{il}+1}{2} - p_{il},\\;
              w_{il} = \\max(p_{il}(1-p_{il}), 10^{-6}),\\; p_{il} = \\sigma(F_l(x_i))

    and the candidate whose step gives the smallest joint loss over all labels (Eqn 1) is added
    to every F_l with its weight alpha_kl, then replaced in the pool by a new model learned for
    the same label. One base model thus serves many labels.

    Parameters
    ----------
    n_estimators : int, default=100
        T, the number of boosting rounds (selected base models). L + T models are learned.
    base_learner, rd, rf, gamma, C, score_bound, kernel_dtype, n_jobs, random_state
        As in :class:`RSBag`; ``gamma`` and ``C`` are the base models' (subspace SVMs'),
        not the Baseline's.
    chi2_filter : bool, default=False
        Zero alpha_kl when sign(h_k) and y_l are not associated by a chi-square test at
        ``chi2_p_value`` (Sec. 6.2.1, used there on the real collections).
    chi2_p_value : float, default=0.025
    n_candidates : int, default=1
        Candidates per label in the pool, K = L * n_candidates. The paper uses K = L and
        notes that "the length of the initial model pool can be larger" (footnote 3).
    init : {"zero", "prior"}, default="zero"
        F_l before the first round: 0 as in Algorithm 2, or the training log-odds of label
        l (not in the paper). From F = 0 the first selected models mostly act as a shared
        negative bias for the rare labels; "prior" leaves them to the labels' signal
        (measured on one 75/25 split, T = 100: corel5k-top39 Mean-AP 0.206 -> 0.221,
        scene 0.791 -> 0.802).
    selection_subsample : float in (0, 1] or None, default=None
        APPROXIMATION, not the paper's algorithm (off by default). Compare the candidates'
        Newton steps and joint losses (Eqns 1-2) on a label-stratified subsample of about
        this fraction of the training set that keeps every positive of labels with at most
        100 positives, weighted by inverse inclusion probabilities
        (:func:`selection_rows`). The selected candidate's weights and the loss are still
        computed on the whole training set.
    shortlist : int or None, default=None
        APPROXIMATION, not the paper's algorithm (off by default). Evaluate the exact joint
        loss (Eqn 1) only for the ``shortlist`` candidates with the largest Newton
        decrement sum_l alpha_kl (H^T Z)_kl, the second-order estimate of their loss
        decrease.
    newton_steps : int, default=1
        Newton steps of every alpha_kl before the joint losses are compared: 1 is the
        paper's single adaptive step (Eqn 2); more iterate it on label l's own loss, each
        step kept only where it lowers that loss, towards the exact line search (Sec. 4.2:
        more steps "bring little advantage"). Not the paper's setting when above 1.

    Attributes
    ----------
    estimators_ : list of SubspaceModel
        The selected base models h_1..h_T in order of selection.
    alphas_ : ndarray of shape (T, L)
        alpha_l^t, the weight of model t in label l's decision function.
    train_loss_ : ndarray of shape (T + 1,)
        Joint logistic loss (Eqn 1) on the training set before and after every round.
    init_score_ : ndarray of shape (L,)
        F_l before the first round (see ``init``).
    fit_profile_ : dict
        Seconds of ``fit`` spent learning base models ("fit_models"), scoring them on the
        training set ("score_models"), in the Newton steps ("newton"), the joint losses
        ("loss") and the chi-square filter ("chi2"), and in all ("total").
    fit_profile_cpu_ : dict
        The same parts in CPU seconds of the process (``time.process_time``), which other
        processes on the machine do not inflate.
    fit_time_curve_ : ndarray of shape (T + 1, 2)
        Wall and CPU seconds since ``fit`` started, once the pool is learned (row 0) and
        after every round: the training cost of the prefix of t models is row t (the
        learning curves' cost axis).

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods import MSSBoost
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4)); Y = np.column_stack([X[:, 0] > 0, X[:, 0] > 0.5]).astype(int)
    >>> model = MSSBoost(n_estimators=5, base_learner="stump", rd=0.3, rf=0.5, random_state=0).fit(X, Y)
    >>> bool(np.all(np.diff(model.train_loss_) <= 1e-9))
    True
    """

    _sharing = True


class NSBoost(_SubspaceBoosting):
    """Non-shared subspace boosting (Sec. 4.1 of [1]_): as :class:`MSSBoost`, but a candidate
    learned for label l(k) may only get a non-zero weight for l(k). The attributes are
    those of :class:`MSSBoost`.

    Parameters
    ----------
    n_estimators, base_learner, rd, rf, gamma, C, score_bound, kernel_dtype
        As in :class:`MSSBoost`.
    chi2_filter, chi2_p_value, n_candidates, init, selection_subsample, shortlist, newton_steps
        As in :class:`MSSBoost`.
    n_jobs, random_state
        As in :class:`MSSBoost`.
    """

    _sharing = False

    #: constructor parameters that make the common tests' fits fast
    _quick_params = dict(n_estimators=5, base_learner="stump", rd=0.5, rf=1.0, random_state=0)


METHODS.register("rsbag", RSBag, summary="round-robin random subspace bagging (Yan et al. 2007, Alg. 1)",
                 family="multilabel", paper="mssboost")
METHODS.register("nsboost", NSBoost, summary="non-shared subspace boosting (Yan et al. 2007, Sec. 4.1)",
                 family="multilabel", paper="mssboost")
METHODS.register("mssboost", MSSBoost, summary="model-shared subspace boosting (Yan et al. 2007, Alg. 2)",
                 family="multilabel", paper="mssboost")
