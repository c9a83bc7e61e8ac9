"""mi-SVM and MI-SVM: the alternating heuristics of Andrews, Tsochantaridis & Hofmann [1]_.

Both learn an instance classifier ``f(x) = sum_p a_p k(x_p, x) + b`` over the training
instances and score a bag by its largest instance score (label-max, Eq. (6) of [2]_). mi-SVM
imputes the instance labels of the positive bags; MI-SVM picks one witness per positive bag.
The instance kernel matrix is computed once (BLAS; in a grid search's fold once per gamma,
:func:`mlkit.kernels.shared_result`) and every alternation trains an SVM on a precomputed
sub-kernel.

References
----------
.. [1] S. Andrews, I. Tsochantaridis, T. Hofmann. Support vector machines for
   multiple-instance learning. NIPS 15, 2002, pp. 561-568.
.. [2] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions

from ...kernels import bag_reduce, rbf_kernel, shared_result
from ...registry import METHODS
from ._base import InstanceExpansionMixin, MIClassifierBase, bag_argmax, bag_index
from ._smo import gather_block, smo_steps

__all__ = ["miSVM", "MISVM", "group_slack_svm"]


def _bias(K, y, a, group_start, group_of, group_y, C):
    """The bias for the dual solution a: from the free examples (0 < a_i, group below its
    cap: y_i f(x_i) = 1) when there are any, else the primal's best b for fixed w. Each
    group's loss is one hinge in b (``max(0, 1 - min f_i - b)`` for a positive group,
    ``max(0, 1 + max f_i + b)`` for a negative one), so that b is the middle of the
    minimising breakpoints."""
    nz = np.flatnonzero(a)
    fK = K[:, nz] @ (a * y)[nz]
    group_sum = np.add.reduceat(a, group_start[:-1])[group_of]
    free = (a > 1e-8 * C) & (group_sum < C * (1 - 1e-8))
    if free.any():
        return float(np.mean(y[free] - fK[free]))
    hi = np.maximum.reduceat(fK, group_start[:-1])
    lo = np.minimum.reduceat(fK, group_start[:-1])
    knots = np.where(group_y > 0, 1.0 - lo, -1.0 - hi)
    values = (np.maximum(0.0, knots[None, group_y > 0] - knots[:, None]).sum(axis=1)
              + np.maximum(0.0, knots[:, None] - knots[None, group_y < 0]).sum(axis=1))
    best = knots[values <= values.min() + 1e-12 * max(1.0, values.min())]
    return 0.5 * float(best.min() + best.max())


def group_slack_svm(K, y, groups, C, *, alpha0=None, tol=1e-3, max_iter=None,
                    K_columns=None):
    """The SVM whose examples share one slack per group (Andrews et al.'s negative bags).

    Primal: ``min 1/2 ||w||^2 + C sum_g xi_g`` s.t. ``y_i f(x_i) >= 1 - xi_g`` for every
    example i of group g, ``xi_g >= 0`` (a group of one example is the ordinary hinge).
    Dual: ``min 1/2 a^T Q a - 1^T a`` with ``Q = (y y^T) * K``, ``a >= 0``,
    ``sum_{i in g} a_i <= C`` and ``y^T a = 0``. Solved by SMO: every elementary feasible
    direction of this (network-structured) polytope changes two variables, either as in
    libsvm (a_i += y_i t, a_j -= y_j t; a variable may grow only while its group is below
    the cap; j by libsvm's second-order rule) or within one group at its cap (one member
    up, another down, the most violating pair); each step is the exact minimiser along the
    pair's direction.

    Every step touches O(n) numbers in a fixed number of passes, compiled
    (:func:`mlkit.methods.mi._smo.smo_steps`, numba without fastmath: each element by the
    same IEEE operations, in the same order, as the numpy formulation): the scores
    ``-y_i g_i`` are updated in place (``y_i = +-1``, so this is ``g``'s update with its
    sign flipped, exactly), the kernel columns are read from a column-major copy
    (contiguous), the feasibility masks change only in the two updated groups, and the
    within-group pairs are searched over the groups at their cap only.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel between the examples (float64; other types are converted).
    y : ndarray of shape (n,)
        +-1; every group holds one label.
    groups : ndarray of int, shape (n,)
        Group of every example, sorted (groups contiguous).
    C : float
    alpha0 : ndarray of shape (n,), optional
        Warm start; used when feasible (a >= 0, group sums <= C, y^T a = 0).
    tol : float, default=1e-3
        Stop when the largest violation ``(-y_i g_i) - (-y_j g_j)`` over feasible pairs is
        below tol (libsvm's stopping rule and default; g the dual gradient).
    max_iter : int or None, default=None
        SMO steps; None means 100 n + 10000.
    K_columns : ndarray of shape (n, n), optional
        K in column-major order (the same values), when the caller keeps one; else a copy
        is made (each step reads two columns of K).

    Returns
    -------
    alpha : ndarray of shape (n,)
    b : float
    converged : bool
    """
    n = len(y)
    y = np.asarray(y, dtype=float)
    group_start = np.r_[0, np.flatnonzero(np.diff(groups)) + 1, n]
    group_of = np.repeat(np.arange(len(group_start) - 1), np.diff(group_start))
    group_y = y[group_start[:-1]]
    a = np.zeros(n)
    if alpha0 is not None:
        alpha0 = np.asarray(alpha0, dtype=float)
        sums = np.bincount(group_of, alpha0, minlength=len(group_y))
        if (np.all(alpha0 >= 0) and np.all(sums <= C * (1 + 1e-12))
                and abs(alpha0 @ y) <= 1e-10 * max(1.0, C)):
            a = alpha0.copy()
    sums = np.bincount(group_of, a, minlength=len(group_y))
    # K's columns are read from a column-major copy: K[:, idx] gathers contiguous columns
    # (into the same column-major block K[:, idx] would make, so every product is as it was)
    Kc = np.asfortranarray(K if K_columns is None else K_columns, dtype=float)
    nz = np.flatnonzero(a)
    score = -y * (y * (Kc[:, nz] @ (a * y)[nz]) - 1.0)  # -y_i g_i, g = Q a - 1 the gradient
    diag = np.diag(K).astype(float)
    max_iter = 100 * n + 10000 if max_iter is None else max_iter
    eps = 1e-12 * max(1.0, C)
    positive = y > 0
    room = (C - sums)[group_of] > eps                    # the group may grow
    active = a > eps
    grow = np.where(positive, room, active)              # a_i += y_i t is feasible
    shrink = np.where(positive, active, room)            # a_j -= y_j t is feasible
    is_full = C - sums <= eps                            # groups at their cap
    converged = smo_steps(Kc, y, diag, score, a, sums, group_start, group_of, group_y, room,
                          active, grow, shrink, positive, is_full, float(C), float(eps),
                          float(tol), int(max_iter))
    b = _bias(Kc, y, a, group_start, group_of, group_y, C)
    return a, b, converged


def _svm_objective(coef, f_sv, margins, groups, C):
    """Primal value 1/2 ||w||^2 + C sum of hinge losses (the largest in each group, when
    examples share a slack) of an SVM with weights ``coef`` (alpha_i y_i) on its support
    vectors, their scores without bias ``f_sv``, and every example's ``y_i f(x_i)``."""
    hinge = np.maximum(1.0 - margins, 0.0)
    if groups is not None:
        hinge = np.maximum.reduceat(hinge, np.r_[0, np.flatnonzero(np.diff(groups)) + 1])
    return 0.5 * float(coef @ f_sv) + C * float(hinge.sum())


def _best_of_cycle(svms):
    """(weights, bias) of the SVM with the lowest primal value among those of a cycle."""
    best = min(range(len(svms)), key=lambda k: svms[k][0])
    return svms[best][1], svms[best][2]


class _AlternatingSVM(InstanceExpansionMixin, MIClassifierBase):
    """Shared loop: one alternating problem per one-vs-rest column; subclasses implement
    ``_fit_binary(K, offsets, y, **self._per_fit(K, n_problems))`` returning (instance
    weights a, bias b, SVMs trained, converged)."""

    _bag_rule = "max"
    _parameter_constraints = {
        **MIClassifierBase._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def run_record_extras(self):
        """N_XV, the SVMs trained per binary problem (``n_iter``) and the period of every
        cycle the alternation stopped on (``cycles``): how many iterations a set needs."""
        out = super().run_record_extras()
        if hasattr(self, "n_iter_"):
            out.update(n_iter=[int(v) for v in self.n_iter_],
                       cycles=[int(v) for v in self.cycles_])
        return out

    def __init__(self, C=1.0, *, gamma="scale", max_iter=50, standardize=True):
        self.C = C
        self.gamma = gamma
        self.max_iter = max_iter
        self.standardize = standardize

    def _fit(self, X, offsets, Y):
        # distances once per CV fold, the kernel once per gamma (every C of a grid reuses it)
        K = shared_result("rbf_kernel", lambda: rbf_kernel(X, gamma=self.gamma_, shared=True),
                          X, float(self.gamma_))
        coef = np.zeros((X.shape[0], Y.shape[1]))
        intercept = np.empty(Y.shape[1])
        self.n_iter_ = np.empty(Y.shape[1], dtype=int)
        self.cycles_ = []
        shared = self._per_fit(K, Y.shape[1])
        for c in range(Y.shape[1]):
            coef[:, c], intercept[c], self.n_iter_[c], converged = self._fit_binary(
                K, offsets, Y[:, c], **shared)
            if not converged:
                warnings.warn(
                    f"{type(self).__name__} did not converge within max_iter={self.max_iter} "
                    f"alternations (binary problem {c}); increase max_iter",
                    ConvergenceWarning,
                )
        self._set_expansion(X, coef, intercept)

    def _per_fit(self, K, n_problems):
        """Keyword arguments of ``_fit_binary`` computed once per fit (none by default)."""
        return {}

    def _svm(self, gram, labels):
        """A precomputed-kernel SVM; returns (support indices, dual coefficients, bias).
        ``gram`` is a Gaussian kernel (finite by construction), so scikit-learn's check of
        its n^2 entries for NaN and infinity is skipped (``assume_finite``; it changes
        nothing else)."""
        with config_context(assume_finite=True):
            svc = SVC(kernel="precomputed", C=self.C).fit(gram, labels)
        return svc.support_, svc.dual_coef_[0], svc.intercept_[0]

    @staticmethod
    def _positive_part(offsets, y):
        """Instances of the positive bags and their offsets within that subset."""
        sizes = np.diff(offsets)
        pos_inst = np.flatnonzero(y[bag_index(offsets)] > 0)
        pos_offsets = np.concatenate([[0], np.cumsum(sizes[y > 0])])
        return pos_inst, pos_offsets


class miSVM(_AlternatingSVM):
    """mi-SVM: instance-level MI SVM with imputed instance labels (Andrews et al. [1]_).

    Instances of negative bags are negative. Instances of positive bags start with the bag
    label; then, until the imputed labels stop changing (or ``max_iter`` SVMs), an SVM is
    trained on all instances and every positive-bag instance gets ``sign(f(x))``, except
    that in a positive bag with no positive instance the highest-scoring one is made
    positive (the constraint ``sum_{i in I} (y_i + 1) / 2 >= 1`` of [1]_). A bag is scored by
    its largest instance score:

    .. math:: F(X) = \\max_p f(x_p), \\qquad f(x) = \\sum_q a_q k(x_q, x) + b

    (label-max, Eq. (6) of [2]_). The XVs are the support instances.

    Parameters
    ----------
    C : float, default=1.0
        SVM cost.
    gamma : float or "scale", default="scale"
        Width of the Gaussian kernel k(x, z) = exp(-gamma ||x - z||^2); "scale" is 1 / (sum
        of the feature variances of the standardised training instances).
    max_iter : int, default=50
        Maximum number of SVMs trained per binary problem (not stated in [1]_); a
        ``ConvergenceWarning`` is issued when the labels still change. The alternation is
        deterministic, so once it revisits a labelling (witness set for MI-SVM) it cycles
        for ever: this happens when the SVM is so regularised (small gamma * C) that all
        instance scores are ~-1 and the witnesses forced into the positive bags are decided
        by differences of ~1e-4 (COREL-10 at gamma=1e-4, C=0.1: periods 2-25). It then
        stops and keeps the SVM of the cycle with the lowest primal objective.
    standardize : bool, default=True
        Standardise instance features with the training instances' statistics.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    expansion_vectors_ : {ndarray, CSR matrix} of shape (``n_xv_``, n_features)
        The support instances of the final SVMs (standardised).
    dual_coef_ : ndarray of shape (n_problems, ``n_xv_``)
    intercept_ : ndarray of shape (n_problems,)
    support_ : ndarray of shape (``n_xv_``,)
        Indices of the XVs among the training instances.
    n_xv_ : int
        Number of expansion vectors (union over the one-vs-rest problems).
    n_iter_ : ndarray of shape (n_problems,)
        SVMs trained per binary problem.
    cycles_ : list of int
        Period of every cycle the alternation entered (one entry per binary problem that
        stopped on a cycle).
    mean_, scale_ : ndarray of shape (n_features,)
    gamma_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods.mi import miSVM
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(4, 2)) for _ in range(20)]
    >>> for b in bags[1::2]:
    ...     b[0] += 4
    >>> y = np.arange(20) % 2
    >>> miSVM(C=10).fit(bags, y).predict(bags[:4]).tolist()
    [0, 1, 0, 1]
    """

    def _fit_binary(self, K, offsets, y):
        pos_inst, pos_offsets = self._positive_part(offsets, y)
        labels = y[bag_index(offsets)].copy()
        seen, svms = {}, []
        for it in range(1, self.max_iter + 1):
            state = labels[pos_inst].tobytes()
            if state in seen:                   # the deterministic alternation now repeats
                self.cycles_.append(len(svms) - seen[state])
                a, b = _best_of_cycle(svms[seen[state]:])
                return a, b, it - 1, True
            seen[state] = len(svms)
            sv, dual, b = self._svm(K, labels)
            a = np.zeros(K.shape[0])
            a[sv] = dual
            # the support columns gathered by np.take (the array K[:, sv] makes, about
            # twice as fast), then the same product
            Ka = np.take(K, sv, axis=1) @ dual
            svms.append((_svm_objective(dual, Ka[sv], labels * (Ka + b), None, self.C), a, b))
            f = Ka[pos_inst] + b
            imputed = np.where(f > 0, 1.0, -1.0)
            no_positive = np.maximum.reduceat(imputed, pos_offsets[:-1]) < 0
            imputed[bag_argmax(f, pos_offsets)[no_positive]] = 1.0
            if np.array_equal(imputed, labels[pos_inst]):
                return a, b, it, True
            labels[pos_inst] = imputed
        return a, b, self.max_iter, False


class MISVM(_AlternatingSVM):
    """MI-SVM: bag-level MI SVM with one witness instance per positive bag (Andrews et al.
    [1]_).

    The first SVM represents every positive bag by its centroid (in feature space: the
    kernel rows of the bag's instances averaged) and uses all negative-bag instances as
    negatives; after each SVM the witness of a positive bag becomes its highest-scoring
    instance, ``s(I) = argmax_{i in I} f(x_i)``, until the witnesses stop changing (or
    ``max_iter`` SVMs). A bag is scored by its largest instance score:

    .. math:: F(X) = \\max_p f(x_p)

    (label-max, Eq. (6) of [2]_). The XVs are the instances with a non-zero weight: support
    negatives and witnesses (all instances of a bag whose centroid is a support vector when
    the first SVM is the last).

    Every SVM is Andrews et al.'s bag-level QP: one slack per bag, for a negative bag
    shared by all its instances (``f(x_i) <= -1 + xi_I`` for every i in I, i.e. its largest
    score), solved by :func:`group_slack_svm`; ``negative_slack="instance"`` gives every
    negative instance its own slack (an ordinary SVM, libsvm), the common simplification.

    Parameters
    ----------
    C, gamma, max_iter, standardize
        As in :class:`miSVM`.
    negative_slack : {"bag", "instance"}, default="bag"
        One slack per negative bag (Andrews et al. [1]_) or per negative instance.
    qp_tol : float, default=1e-3
        Stopping tolerance of the bag-slack QP (``negative_slack="bag"``): the largest KKT
        violation, as libsvm's ``tol`` (also 1e-3) for the instance form.

    Attributes
    ----------
    As in :class:`miSVM`; ``n_iter_`` counts the SVMs trained per binary problem.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods.mi import MISVM
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(4, 2)) for _ in range(20)]
    >>> for b in bags[1::2]:
    ...     b[0] += 4
    >>> y = np.arange(20) % 2
    >>> MISVM(C=10).fit(bags, y).predict(bags[:4]).tolist()
    [0, 1, 0, 1]
    """

    _parameter_constraints = {
        **_AlternatingSVM._parameter_constraints,
        "negative_slack": [StrOptions({"bag", "instance"})],
        "qp_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, C=1.0, *, gamma="scale", max_iter=50, standardize=True,
                 negative_slack="bag", qp_tol=1e-3):
        super().__init__(C=C, gamma=gamma, max_iter=max_iter, standardize=standardize)
        self.negative_slack = negative_slack
        self.qp_tol = qp_tol

    def _per_fit(self, K, n_problems):
        """K in column-major order when several bag-slack problems gather their Gram
        matrices' negative blocks from it (one transposition per fit, not per problem)."""
        if self.negative_slack == "bag" and n_problems > 1:
            return {"K_columns": np.asfortranarray(K)}
        return {}

    def _fit_binary(self, K, offsets, y, K_columns=None):
        pos_inst, pos_offsets = self._positive_part(offsets, y)
        neg_inst = np.flatnonzero(y[bag_index(offsets)] < 0)
        n_pos = len(pos_offsets) - 1
        labels = np.r_[np.ones(n_pos), -np.ones(len(neg_inst))]
        K_pos = K[pos_inst]
        # the examples: one representative per positive bag, then every negative instance;
        # only the representatives' rows of the Gram matrix change between SVMs.
        # group_slack_svm reads columns: the bag-slack Gram matrix is kept column-major, its
        # negative block copied from K's columns (K_columns, read in order) when the fit
        # keeps them, else from K's rows (the same numbers either way)
        bag_slack = self.negative_slack == "bag"
        if bag_slack:
            gram = np.empty((len(labels), len(labels)), order="F")
            gather_block(K if K_columns is None else K_columns, neg_inst, gram, n_pos)
        else:
            gram = np.empty((len(labels), len(labels)))
            gram[n_pos:, n_pos:] = K[np.ix_(neg_inst, neg_inst)]

        # one slack per negative bag (Andrews et al.) or per negative instance
        groups = np.r_[np.arange(n_pos), n_pos + bag_index(offsets)[neg_inst]]
        warm = [None]

        def fit(rep_rows, rep_block):
            gram[:n_pos, :n_pos] = rep_block
            gram[:n_pos, n_pos:] = rep_rows[:, neg_inst]
            gram[n_pos:, :n_pos] = gram[:n_pos, n_pos:].T
            if not bag_slack:
                sv, coef, b = self._svm(gram, labels)
            else:
                alpha, b, converged = group_slack_svm(gram, labels, groups, self.C,
                                                      alpha0=warm[0], tol=self.qp_tol,
                                                      K_columns=gram)
                if not converged:
                    warnings.warn("MI-SVM: the bag-slack QP stopped at its iteration limit",
                                  ConvergenceWarning)
                warm[0] = alpha
                sv = np.flatnonzero(alpha > 0)
                coef = alpha[sv] * labels[sv]
            f = gram[:, sv] @ coef
            objective = _svm_objective(coef, f[sv], labels * (f + b),
                                       groups if bag_slack else None, self.C)
            return sv, coef, b, objective

        # first SVM: a positive bag is its centroid in feature space, whose kernel rows are
        # the bag's instance rows averaged
        cent = bag_reduce(K_pos, pos_offsets, "mean")
        sv, dual, b, _ = fit(cent, bag_reduce(cent[:, pos_inst], pos_offsets, "mean", axis=1))
        on_pos = sv < n_pos
        bag_weight = np.zeros(n_pos)
        bag_weight[sv[on_pos]] = dual[on_pos] / np.diff(pos_offsets)[sv[on_pos]]
        a = np.zeros(K.shape[0])
        a[pos_inst] = bag_weight[bag_index(pos_offsets)]
        a[neg_inst[sv[~on_pos] - n_pos]] = dual[~on_pos]
        witness = None
        seen, svms = {}, []
        for it in range(1, self.max_iter + 1):
            chosen = pos_inst[bag_argmax(K_pos @ a + b, pos_offsets)]
            if np.array_equal(chosen, witness):
                return a, b, it, True
            if chosen.tobytes() in seen:        # the deterministic alternation now repeats
                start = seen[chosen.tobytes()]
                self.cycles_.append(len(svms) - start)
                a, b = _best_of_cycle(svms[start:])
                return a, b, it, True
            if it == self.max_iter:
                break
            witness = chosen
            seen[witness.tobytes()] = len(svms)
            rep_rows = K[witness]
            sv, dual, b, objective = fit(rep_rows, rep_rows[:, witness])
            a = np.zeros(K.shape[0])
            a[np.r_[witness, neg_inst][sv]] = dual      # witnesses and negatives are distinct
            svms.append((objective, a, b))
        return a, b, self.max_iter, False


METHODS.register("mi-svm", miSVM, summary="mi-SVM: instance-level alternating SVM (Andrews et al. 2002)",
                 family="multi-instance", paper="sparsemi")
METHODS.register("mi-svm-bag", MISVM, summary="MI-SVM: bag-level witness alternating SVM (Andrews et al. 2002)",
                 family="multi-instance", paper="sparsemi")
