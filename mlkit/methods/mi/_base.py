"""Shared machinery of the multi-instance (MI) kernel classifiers.

Every MI classifier here is a kernel expansion over ``n_xv_`` expansion vectors (XVs) ``z_j``
with weights ``dual_coef_`` (one row per binary problem) and a bias ``intercept_``; the
methods differ only in how they learn them and in how instance kernels become a bag score:

* label-mean (MI-Kernel, RS, RSVM): ``F(X) = 1/n sum_p f(x_p)``, Eq. (3) of [1]_;
* label-max (mi-SVM, MI-SVM): ``F(X) = max_p f(x_p)``, Eq. (6) of [1]_;
* MILES: a linear function of the bag embedding ``max_p k(x_p, z_j)``.

with ``f(x) = sum_j dual_coef_[j] k(x, z_j) + intercept_`` and the Gaussian kernel
``k(x, z) = exp(-gamma ||x - z||^2)``. Instances are standardised with statistics of the
training instances (Sec. V-B of [1]_: "normalized to zero mean and unit standard
deviation"); sparse instances are scaled without centring so they stay sparse. The Gaussian
kernel is translation invariant, so centring never changes a kernel value. Several classes
are handled one-vs-rest, and ``predict`` returns the class with the largest score.

References
----------
.. [1] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
   multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
"""

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._record import RecordedModel
from ...kernels import active_work, bag_reduce, rbf_kernel, shared_result
from .._validation import check_bag_labels, check_bags

__all__ = ["MIClassifierBase", "InstanceExpansionMixin", "bag_argmax", "bag_index"]


def bag_index(offsets):
    """The bag of every instance, shape (n_instances,)."""
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def bag_argmax(values, offsets):
    """Index (into ``values``) of the largest value of every bag; the first one on ties."""
    top = np.repeat(np.maximum.reduceat(values, offsets[:-1]), np.diff(offsets))
    hits = np.flatnonzero(values == top)
    _, first = np.unique(bag_index(offsets)[hits], return_index=True)
    return hits[first]


def _feature_moments(X):
    """Per-feature mean and variance of a dense or sparse matrix.

    Two passes for sparse X too: the variance is the mean squared deviation from the mean,
    ``(sum_{stored} (x - mean)^2 + n_zeros * mean^2) / n``, never ``E[x^2] - E[x]^2``, whose
    cancellation leaves ~1e-16 * mean^2 for a constant non-zero column (a scale of ~1e-9
    and standardised values of ~1e7). Never densifies X.
    """
    if not sp.issparse(X):
        return X.mean(axis=0), X.var(axis=0)
    X = sp.csr_matrix(X)
    n, d = X.shape
    cols = X.indices
    mean = np.bincount(cols, weights=X.data, minlength=d) / n
    stored = np.bincount(cols, minlength=d)
    sq = np.bincount(cols, weights=(X.data - mean[cols]) ** 2, minlength=d)
    var = (sq + (n - stored) * mean ** 2) / n
    return mean, var


def _standardized(X, mean, scale):
    """((X - mean) / scale, the shift the XVs need when a sparse X cannot be centred).

    A sparse X is only scaled; its kernel with the (centred) XVs is then taken against
    ``z + mean / scale``, which gives the same distances.
    """
    if not sp.issparse(X):
        return (X - mean) / scale, None
    X = sp.csr_matrix(X @ sp.diags(1.0 / scale))
    return X, (mean / scale if np.any(mean) else None)


class MIClassifierBase(RecordedModel, ClassifierMixin, BaseEstimator):
    """Validation, standardisation, one-vs-rest labels and prediction for MI classifiers.

    Subclasses implement ``_fit(X, offsets, Y)``, which receives the standardised training
    instances, the bag offsets and the +-1 label matrix (one column per binary problem) and
    sets ``expansion_vectors_``, ``dual_coef_`` and ``intercept_`` (for instance XVs through
    :meth:`_set_expansion`), and ``_bag_scores(K, offsets)``, which turns the kernel between
    test instances and the XVs into bag scores of shape (n_bags, n_problems).
    """

    #: what a run record keeps: the number of expansion vectors (the papers' #XV)
    _recorded_attributes = ("n_xv_",)
    #: 2: stable sparse standardisation, MI-SVM's per-bag slack, cycle stops, RS's ridge
    numerics_revision = 2

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale"})],
        "standardize": ["boolean"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X is a list of bags (scikit-learn has no tag for it): not one 2-D array, so
        # check_estimator skips these estimators, saying which input they need; a bag may
        # be a sparse matrix
        tags.input_tags.two_d_array = False
        tags.input_tags.sparse = True
        return tags

    # -- fitting -------------------------------------------------------------------------
    def fit(self, bags, y):
        """Learn the classifier from labelled bags.

        Parameters
        ----------
        bags : list of array-like or sparse matrices of shape (n_instances_i, n_features)
            The training bags; dense and sparse bags may be mixed.
        y : array-like of shape (n_bags,)
            Bag labels: two classes, or several (handled one-vs-rest).

        Returns
        -------
        self
        """
        self._validate_params()
        X, offsets = self._stacked(bags)
        self.classes_, Y = check_bag_labels(y, len(offsets) - 1, self)
        self.n_features_in_ = X.shape[1]
        X = self._fit_standardizer(X)
        self.gamma_ = self._resolve_gamma(X)
        self._fit(X, offsets, Y)
        self.n_xv_ = int(self.expansion_vectors_.shape[0])
        return self

    def _stacked(self, bags, reset_dim=None):
        """:func:`check_bags` of ``bags``; inside a grid search's fold
        (:func:`mlkit.kernels.shared_work`) once for every grid point fitted or scored on
        the same bags (keyed by their values)."""
        work = active_work()
        if work is None or not isinstance(bags, (list, tuple)):
            return check_bags(bags, self, reset_dim=reset_dim)
        try:
            key = tuple(work.fingerprint(b) for b in bags)
        except (TypeError, ValueError):          # not arrays: check_bags says what is wrong
            return check_bags(bags, self, reset_dim=reset_dim)
        return shared_result("bags", lambda: check_bags(bags, self, reset_dim=reset_dim),
                             key, reset_dim)

    def _fit_standardizer(self, X):
        """Learn ``mean_`` and ``scale_`` on the training instances; return them standardised
        (once per fold of a grid search, see :meth:`_stacked`)."""
        mean, scale, X = shared_result("standardised", lambda: self._standardisation(X), X,
                                       self.standardize)
        self.mean_, self.scale_ = mean.copy(), scale.copy()
        return X

    def _standardisation(self, X):
        """(mean_, scale_, standardised X) of the training instances X."""
        mean, var = _feature_moments(X)
        scale = np.sqrt(var)
        # a column that is constant up to rounding has zero variance: leave it unscaled
        tiny = np.finfo(float).eps * np.maximum(np.abs(mean), np.finfo(float).tiny)
        scale[scale <= 16 * tiny] = 1.0
        if not self.standardize:
            mean, scale = np.zeros_like(mean), np.ones_like(scale)
        mean = np.zeros_like(mean) if sp.issparse(X) else mean
        return mean, scale, _standardized(X, mean, scale)[0]

    def _standardize(self, X):
        """(X - mean_) / scale_, and the shift the XVs need when a sparse X cannot be centred
        (see :func:`_standardized`)."""
        return _standardized(X, self.mean_, self.scale_)

    def _resolve_gamma(self, X):
        """``gamma="scale"``: 1 / sum of the per-feature variances of the standardised training
        instances (1/d for d non-constant standardised features), so a typical pair of
        instances has k = exp(-2); a translation-invariant form of scikit-learn's "scale"."""
        if self.gamma != "scale":
            return float(self.gamma)
        total = float(_feature_moments(X)[1].sum())
        return 1.0 / total if total > 0 else 1.0

    def _set_expansion(self, X, coef, intercept):
        """Keep the instances with a non-zero weight in some binary problem as the XVs.

        Parameters
        ----------
        X : {ndarray, CSR matrix} of shape (N, d)
            Candidate expansion vectors (standardised).
        coef : ndarray of shape (N, n_problems)
        intercept : ndarray of shape (n_problems,)
        """
        rows = np.flatnonzero(np.any(coef != 0, axis=1))
        self.expansion_vectors_ = X[rows]
        self.dual_coef_ = np.ascontiguousarray(coef[rows].T)
        self.intercept_ = np.asarray(intercept, dtype=float)
        self.support_ = rows
        self._hold_training_rows(X)

    def _hold_training_rows(self, X):
        """Inside a :func:`mlkit.kernels.shared_work` scope (a fold of a grid search), keep
        the training instances whose rows ``support_`` are the XVs, so that scoring the
        fold's test bags takes their distances to the XVs from the distances to all training
        instances, computed once per fold for every grid point's model."""
        work = active_work()
        self._shared_rows = None if work is None else work.hold(X)

    def _shared_training_rows(self):
        """The training instances held by :meth:`_hold_training_rows` in the active scope,
        or None."""
        key, work = getattr(self, "_shared_rows", None), active_work()
        return None if key is None or work is None else work.held(key)

    # -- prediction ----------------------------------------------------------------------
    def _prediction_inputs(self, bags):
        """(standardised instances of ``bags``, their offsets, the XVs to take kernels with)."""
        check_is_fitted(self)
        X, offsets = self._stacked(bags, reset_dim=self.n_features_in_)
        X, shift = shared_result("standardised_as", lambda: self._standardize(X), X,
                                 self.mean_, self.scale_)
        Z = self.expansion_vectors_ if shift is None else self.expansion_vectors_ + shift
        return X, offsets, Z

    def _xv_kernel(self, bags):
        """Kernel between the instances of ``bags`` and the XVs, and the bag offsets."""
        X, offsets, Z = self._prediction_inputs(bags)
        train = self._shared_training_rows()
        if train is not None and Z is self.expansion_vectors_:
            return rbf_kernel(X, train, self.gamma_, shared=True, columns=self.support_), offsets
        return rbf_kernel(X, Z, self.gamma_), offsets

    def decision_function(self, bags):
        """Bag scores F(X).

        Parameters
        ----------
        bags : list of array-like or sparse matrices of shape (n_instances_i, n_features)

        Returns
        -------
        ndarray of shape (n_bags,) for two classes (positive means ``classes_[1]``), else
        (n_bags, n_classes) with one one-vs-rest score per class.
        """
        K, offsets = self._xv_kernel(bags)
        F = self._bag_scores(K, offsets)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, bags):
        """The class of every bag: sign of the score, or the class with the largest score."""
        return self.predict_from_scores(self.decision_function(bags))

    def predict_from_scores(self, scores):
        """The classes of bag scores ``scores`` (of :meth:`decision_function`, or of a stage
        of a staged model): ``classes_[1]`` where a 1-D score is > 0, else the class of the
        largest score."""
        F = np.asarray(scores)
        return self.classes_[(F > 0).astype(int) if F.ndim == 1 else F.argmax(axis=1)]


class InstanceExpansionMixin:
    """Bag scores from the instance classifier ``f(x) = sum_j beta_j k(x, z_j) + rho``.

    ``_bag_rule`` is ``"mean"`` (label-mean, Eq. (3) of [1]_) or ``"max"`` (label-max,
    Eq. (6) of [1]_).
    """

    _bag_rule = "mean"

    def decision_function(self, bags):
        """Bag scores F(X) (see :meth:`MIClassifierBase.decision_function`). Label-mean
        scores of a model fitted in a grid search's fold take the bags' mean kernel rows
        against all the fold's training instances from the fold's shared work (once per
        gamma, for every C) and keep the XVs' columns: the same numbers."""
        train = self._shared_training_rows() if self._bag_rule == "mean" else None
        if train is None:
            return super().decision_function(bags)
        X, offsets, Z = self._prediction_inputs(bags)
        if Z is not self.expansion_vectors_:
            return super().decision_function(bags)
        A = shared_result("bag_mean_kernel", lambda: bag_reduce(
            rbf_kernel(X, train, self.gamma_, shared=True), offsets, "mean"),
            X, train, offsets, float(self.gamma_))
        F = A[:, self.support_] @ self.dual_coef_.T + self.intercept_
        return F[:, 0] if F.shape[1] == 1 else F

    def _bag_scores(self, K, offsets):
        if self._bag_rule == "mean":            # mean of f over the bag = f of the mean kernel
            return bag_reduce(K, offsets, "mean") @ self.dual_coef_.T + self.intercept_
        return bag_reduce(K @ self.dual_coef_.T + self.intercept_, offsets, "max")

    def instance_decision_function(self, bags):
        """Instance scores f(x) of every instance of ``bags``, in bag order.

        Returns
        -------
        ndarray of shape (n_instances,), or (n_instances, n_classes) with several classes.
        """
        K, _ = self._xv_kernel(bags)
        f = K @ self.dual_coef_.T + self.intercept_
        return f[:, 0] if f.shape[1] == 1 else f
