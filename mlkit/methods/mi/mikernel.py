"""MI-Kernel: an SVM on the normalised set kernel (Gärtner et al. 2002 [1]_), the dense
label-mean model of SparseMI [2]_.

References
----------
.. [1] T. Gärtner, P. A. Flach, A. Kowalczyk, A. J. Smola. Multi-instance kernels.
   ICML 2002, pp. 179-186.
.. [2] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
"""

import numpy as np
from sklearn.svm import SVC
from sklearn.utils._param_validation import StrOptions

from ...kernels import bag_reduce, rbf_kernel, set_kernel, shared_result
from ...registry import METHODS
from ._base import InstanceExpansionMixin, MIClassifierBase, bag_index

__all__ = ["MIKernel", "fit_set_kernel_svm"]


def _self_set_kernel(X, offsets, gamma, block=2048):
    """K(X_i, X_i) of the averaged set kernel for every bag, from the diagonal blocks of the
    instance kernel only: runs of whole bags of about ``block`` instances at a time (a larger
    bag alone), never the full (N, N) matrix."""
    n_bags = len(offsets) - 1
    out = np.empty(n_bags)
    first = 0
    while first < n_bags:
        last = first + 1                     # bags [first, last) in this block
        while last < n_bags and offsets[last + 1] - offsets[first] <= block:
            last += 1
        a, b = offsets[first], offsets[last]
        local = offsets[first:last + 1] - a
        out[first:last] = np.diag(set_kernel(rbf_kernel(X[a:b], gamma=gamma), local, local))
        first = last
    return out


def fit_set_kernel_svm(X, offsets, Y, *, gamma, C, normalization="average"):
    """One SVM per column of Y on the averaged set kernel, as instance expansion weights.

    The bag score of the SVM, ``F(X) = sum_i alpha_i y_i K(X_i, X) + b`` with the set kernel
    of :func:`mlkit.kernels.set_kernel`, equals ``1/n sum_q f(x_q)`` for the instance
    function ``f(x) = sum_p a_p k(x_p, x) + b`` with ``a_p = alpha_i y_i / n_i`` for every
    instance p of bag i (the label-mean form, Eq. (3) and (9) of [2]_).

    Parameters
    ----------
    X : {ndarray, CSR matrix} of shape (N, d)
        Training instances (standardised).
    offsets : ndarray of shape (n_bags + 1,)
    Y : ndarray of shape (n_bags, n_problems)
        +-1 labels, one column per binary problem.
    gamma, C : float
    normalization : {"average", "featurespace"}
        "featurespace" divides the averaged kernel by sqrt(K(X_i, X_i) K(X_j, X_j)) (Gärtner
        et al.'s feature-space normalisation); the weights then also carry
        1 / sqrt(K(X_i, X_i)), and a bag's score must be divided by sqrt(K(X, X)).

    Returns
    -------
    coef : ndarray of shape (N, n_problems)
        a_p of every training instance (zero outside support bags).
    intercept : ndarray of shape (n_problems,)
    """
    sizes = np.diff(offsets).astype(float)
    # in a grid search's fold (mlkit.kernels.shared_work): once per gamma, for every C
    gram = shared_result("set_kernel", lambda: set_kernel(
        rbf_kernel(X, gamma=gamma, shared=True), offsets, offsets), X, offsets, float(gamma))
    if normalization == "featurespace":
        norms = np.sqrt(np.diag(gram)).copy()
        gram = gram / np.outer(norms, norms)
        sizes = sizes * norms
    alpha = np.zeros((len(sizes), Y.shape[1]))
    intercept = np.empty(Y.shape[1])
    for c in range(Y.shape[1]):
        svc = SVC(kernel="precomputed", C=C).fit(gram, Y[:, c])
        alpha[svc.support_, c] = svc.dual_coef_[0]
        intercept[c] = svc.intercept_[0]
    return (alpha / sizes[:, None])[bag_index(offsets)], intercept


class MIKernel(InstanceExpansionMixin, MIClassifierBase):
    """MI-Kernel: an SVM on the normalised set kernel of the bags [1]_.

    .. math:: K(X, X') = \\frac{1}{n\\,n'} \\sum_{p=1}^{n} \\sum_{q=1}^{n'}
              \\exp(-\\gamma \\|x_p - x'_q\\|^2)

    The averaged normalisation is mlkit's choice (the paper does not state it): with it
    MI-Kernel is "simply the dense version of SparseMI" (Sec. V-B of [2]_), i.e. the
    label-mean model of Eq. (2)-(3) of [2]_ with the hinge loss. ``normalization=
    "featurespace"`` gives Gärtner et al.'s other normalisation,
    K(X, X') / sqrt(K(X, X) K(X', X')) (the same for the summed and the averaged kernel). Its XVs are all instances of the bags with a non-zero dual
    coefficient, ``sum_{i: alpha_i != 0} n_i`` (Sec. IV-A of [2]_), united over the
    one-vs-rest problems.

    Parameters
    ----------
    C : float, default=1.0
        SVM cost.
    gamma : float or "scale", default="scale"
        Width of the Gaussian instance kernel; "scale" is 1 / (sum of the feature variances
        of the standardised training instances).
    standardize : bool, default=True
        Standardise instance features with the training instances' mean and deviation
        (sparse inputs are only scaled).
    normalization : {"average", "featurespace"}, default="average"
        How the set kernel is normalised (not stated in [2]_; see above). With
        "featurespace" a bag's score is no longer the mean of ``instance_decision_function``
        over its instances: the mean (bias excluded) is divided by sqrt(K(X, X)) first, and
        prediction computes the instance kernel within every test bag.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    expansion_vectors_ : {ndarray, CSR matrix} of shape (``n_xv_``, n_features)
        The training instances of the support bags (standardised).
    dual_coef_ : ndarray of shape (n_problems, ``n_xv_``)
        alpha_i y_i / n_i for every instance of support bag i.
    intercept_ : ndarray of shape (n_problems,)
    support_ : ndarray of shape (``n_xv_``,)
        Indices of the XVs among the training instances.
    n_xv_ : int
        Number of expansion vectors.
    mean_, scale_ : ndarray of shape (n_features,)
        Standardisation statistics of the training instances.
    gamma_ : float
        The kernel width used.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.methods.mi import MIKernel
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(4, 2)) + 3 * (i % 2) for i in range(20)]
    >>> y = np.arange(20) % 2
    >>> MIKernel(C=10).fit(bags, y).predict(bags[:4]).tolist()
    [0, 1, 0, 1]
    """

    _bag_rule = "mean"
    #: revision of the "featurespace" normalisation alone (2: its bag self-kernels from the
    #: diagonal blocks, not the full instance kernel; equal up to rounding)
    featurespace_revision = 2

    @classmethod
    def numerics_revision_for(cls, params):
        """``numerics_revision``, and for ``normalization="featurespace"`` that of its own
        computation beside it (the default's records are untouched by its changes)."""
        if params.get("normalization") == "featurespace":
            return f"{cls.numerics_revision}+featurespace-{cls.featurespace_revision}"
        return cls.numerics_revision
    _parameter_constraints = {**MIClassifierBase._parameter_constraints,
                              "normalization": [StrOptions({"average", "featurespace"})]}

    def __init__(self, C=1.0, *, gamma="scale", standardize=True, normalization="average"):
        self.C = C
        self.gamma = gamma
        self.standardize = standardize
        self.normalization = normalization

    def _fit(self, X, offsets, Y):
        coef, intercept = fit_set_kernel_svm(X, offsets, Y, gamma=self.gamma_, C=self.C,
                                             normalization=self.normalization)
        self._set_expansion(X, coef, intercept)

    def decision_function(self, bags):
        """Bag scores F(X); with ``normalization="featurespace"`` the mean instance score
        (without the bias) is divided by sqrt(K(X, X)) before the bias is added."""
        if getattr(self, "normalization", "average") == "average":
            return super().decision_function(bags)
        X, offsets, Z = self._prediction_inputs(bags)
        num = bag_reduce(rbf_kernel(X, Z, self.gamma_), offsets, "mean") @ self.dual_coef_.T
        F = num / np.sqrt(_self_set_kernel(X, offsets, self.gamma_))[:, None] + self.intercept_
        return F[:, 0] if F.shape[1] == 1 else F


METHODS.register("mi-kernel", MIKernel, summary="MI-Kernel: SVM on the normalised set kernel (Gaertner et al. 2002)",
                 family="multi-instance", paper="sparsemi")
