"""mi-SVM and MI-SVM: the alternating heuristics of Andrews, Tsochantaridis & Hofmann [1]_.

Both learn an instance classifier ``f(x) = sum_p a_p k(x_p, x) + b`` over the training
instances and score a bag by its largest instance score (label-max, Eq. (6) of [2]_). mi-SVM
imputes the instance labels of the positive bags; MI-SVM picks one witness per positive bag.
The instance kernel matrix is computed once (BLAS) and every alternation trains an SVM on a
precomputed sub-kernel.

References
----------
.. [1] S. Andrews, I. Tsochantaridis, T. Hofmann. Support vector machines for
   multiple-instance learning. NIPS 15, 2002, pp. 561-568.
.. [2] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
"""

import warnings
from numbers import Integral

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval

from ...kernels import bag_reduce, rbf_kernel
from ...registry import METHODS
from ._base import InstanceExpansionMixin, MIClassifierBase, bag_argmax, bag_index

__all__ = ["miSVM", "MISVM"]


class _AlternatingSVM(InstanceExpansionMixin, MIClassifierBase):
    """Shared loop: one alternating problem per one-vs-rest column; subclasses implement
    ``_fit_binary(K, offsets, y)`` returning (instance weights a, bias b, SVMs trained,
    converged)."""

    _bag_rule = "max"
    _parameter_constraints = {
        **MIClassifierBase._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, C=1.0, *, gamma="scale", max_iter=50, standardize=True):
        self.C = C
        self.gamma = gamma
        self.max_iter = max_iter
        self.standardize = standardize

    def _fit(self, X, offsets, Y):
        K = rbf_kernel(X, gamma=self.gamma_)
        coef = np.zeros((X.shape[0], Y.shape[1]))
        intercept = np.empty(Y.shape[1])
        self.n_iter_ = np.empty(Y.shape[1], dtype=int)
        for c in range(Y.shape[1]):
            coef[:, c], intercept[c], self.n_iter_[c], converged = self._fit_binary(
                K, offsets, Y[:, c])
            if not converged:
                warnings.warn(
                    f"{type(self).__name__} did not converge within max_iter={self.max_iter} "
                    f"alternations (binary problem {c}); increase max_iter",
                    ConvergenceWarning,
                )
        self._set_expansion(X, coef, intercept)

    def _svm(self, gram, labels):
        """A precomputed-kernel SVM; returns (support indices, dual coefficients, bias)."""
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
        ``ConvergenceWarning`` is issued when the labels still change.
    standardize : bool, default=True
        Standardise instance features with the training instances' statistics.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    expansion_vectors_ : {ndarray, CSR matrix} of shape (n_xv_, n_features)
        The support instances of the final SVMs (standardised).
    dual_coef_ : ndarray of shape (n_problems, n_xv_)
    intercept_ : ndarray of shape (n_problems,)
    support_ : ndarray of shape (n_xv_,)
        Indices of the XVs among the training instances.
    n_xv_ : int
        Number of expansion vectors (union over the one-vs-rest problems).
    n_iter_ : ndarray of shape (n_problems,)
        SVMs trained per binary problem.
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
        K_pos = K[pos_inst]
        labels = y[bag_index(offsets)].copy()
        for it in range(1, self.max_iter + 1):
            sv, dual, b = self._svm(K, labels)
            a = np.zeros(K.shape[0])
            a[sv] = dual
            f = K_pos @ a + b
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

    Parameters
    ----------
    C, gamma, max_iter, standardize
        As in :class:`miSVM`.

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

    def _fit_binary(self, K, offsets, y):
        pos_inst, pos_offsets = self._positive_part(offsets, y)
        neg_inst = np.flatnonzero(y[bag_index(offsets)] < 0)
        n_pos = len(pos_offsets) - 1
        labels = np.r_[np.ones(n_pos), -np.ones(len(neg_inst))]
        K_pos = K[pos_inst]
        # the examples: one representative per positive bag, then every negative instance;
        # only the representatives' rows of the Gram matrix change between SVMs
        gram = np.empty((len(labels), len(labels)))
        gram[n_pos:, n_pos:] = K[np.ix_(neg_inst, neg_inst)]

        def fit(rep_rows, rep_block):
            gram[:n_pos, :n_pos] = rep_block
            gram[:n_pos, n_pos:] = rep_rows[:, neg_inst]
            gram[n_pos:, :n_pos] = gram[:n_pos, n_pos:].T
            return self._svm(gram, labels)

        # first SVM: a positive bag is its centroid in feature space, whose kernel rows are
        # the bag's instance rows averaged
        cent = bag_reduce(K_pos, pos_offsets, "mean")
        sv, dual, b = fit(cent, bag_reduce(cent[:, pos_inst], pos_offsets, "mean", axis=1))
        on_pos = sv < n_pos
        bag_weight = np.zeros(n_pos)
        bag_weight[sv[on_pos]] = dual[on_pos] / np.diff(pos_offsets)[sv[on_pos]]
        a = np.zeros(K.shape[0])
        a[pos_inst] = bag_weight[bag_index(pos_offsets)]
        a[neg_inst[sv[~on_pos] - n_pos]] = dual[~on_pos]
        witness = None
        for it in range(1, self.max_iter + 1):
            chosen = pos_inst[bag_argmax(K_pos @ a + b, pos_offsets)]
            if np.array_equal(chosen, witness):
                return a, b, it, True
            if it == self.max_iter:
                break
            witness = chosen
            rep_rows = K[witness]
            sv, dual, b = fit(rep_rows, rep_rows[:, witness])
            a = np.zeros(K.shape[0])
            a[np.r_[witness, neg_inst][sv]] = dual      # witnesses and negatives are distinct
        return a, b, self.max_iter, False


METHODS.register("mi-svm", miSVM, summary="mi-SVM: instance-level alternating SVM (Andrews et al. 2002)",
                 family="multi-instance", paper="sparsemi")
METHODS.register("mi-svm-bag", MISVM, summary="MI-SVM: bag-level witness alternating SVM (Andrews et al. 2002)",
                 family="multi-instance", paper="sparsemi")
