"""Shared machinery of the multi-modal feature extraction methods (LM3FE and its baselines).

API choice (one sklearn estimator per table row and percentage)
---------------------------------------------------------------
Every method of Tables I-II of Luo et al. (2016) is one estimator taking a multi-view input
(a :class:`mlkit.datasets.Views`, a list or a dict of per-modality matrices, or one matrix or
pandas DataFrame whose columns form the modalities as the ``view_columns`` parameter declares:
column counts ``[d_1, d_2, ...]``, or a slice / index / column-name list per modality) and a
target that is either a class vector (single-label, one-vs-all tasks) or an (n, L) 0/1 matrix
(multi-label, one task per label). The feature extraction is followed by a *downstream* classifier chosen by
``classifier``: ``"knn"`` (the NUS-WIDE role: ``n_neighbors`` nearest neighbours in Euclidean
distance) or ``"rls"`` (the MIR Flickr role: one ridge regressor per task on +-1 targets with an
intercept, penalty ``rls_alpha``). Selection methods (``*FS``) have a ``percent`` parameter: the
top ``percent``% of *each* modality's features by the method's ranking (at least one per
modality) are concatenated; transformation methods (``*FT``) feed their C-dimensional features.
So a config row ``LM3FS`` at 10% is ``LM3FS(percent=10, classifier="knn")``, a single
estimator with ``fit``/``predict``/``decision_function``.

``decision_function`` returns one column per task: for kNN the mean of the neighbours' +-1
labels, for RLS the ridge predictions. ``predict`` gives the class with the largest score
(single-label) or the 0/1 matrix ``score > 0`` (multi-label).

Every modality is normalised before anything else (the paper normalises features without
saying how): ``normalize="l2"`` scales each sample's vector within each modality to unit
Euclidean norm (stateless, keeps sparse views sparse); ``None`` leaves the data as given.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import normalize as _row_normalize
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ...kernels import dense_dot, squared_distances
from .._memo import Memo
from .._validation import check_bag_labels, check_multilabel_Y, check_multiview_input

__all__ = ["normalize_views", "select_columns", "Downstream", "MultiViewClassifierMixin"]


def normalize_views(Xs, how):
    """Each modality normalised as ``how`` says ("l2": unit rows per modality; None: as is)."""
    if how is None:
        return list(Xs)
    return [_row_normalize(X, norm="l2", axis=1, copy=True) for X in Xs]


def n_selected(dim, percent):
    """Features kept of a modality of dimension ``dim``: ceil(percent% of dim), at least 1."""
    return int(min(dim, max(1, np.ceil(dim * percent / 100.0 - 1e-9))))


def select_columns(Xs, rankings, percent):
    """Concatenate the top ``percent``% columns of each modality by its ranking.

    Returns the matrix (CSR if any modality is sparse) and the kept column indices per view.
    """
    kept = [np.sort(r[:n_selected(X.shape[1], percent)]) for X, r in zip(Xs, rankings)]
    parts = [X[:, k] for X, k in zip(Xs, kept)]
    if any(sp.issparse(P) for P in parts):
        return sp.hstack([sp.csr_matrix(P) for P in parts], format="csr"), kept
    return np.hstack(parts), kept


def concat(Xs):
    """The concatenation of the modalities (CSR if any is sparse)."""
    if any(sp.issparse(X) for X in Xs):
        return sp.hstack([sp.csr_matrix(X) for X in Xs], format="csr")
    return np.hstack(Xs)


class LearnCache(Memo):
    """A small in-process memo of learned feature extractors (a :class:`~mlkit.methods.
    _memo.Memo` of ``size`` entries), keyed by the estimator family, its learning parameters
    and the bytes of the (normalised) training data, so a selection method and its
    transformation form (LM3FS/LM3FT, MTFS/MTFT, ...) fitted on the same labelled samples
    with the same parameters learn once. Values are the fitted attributes; a hit gives
    exactly what a refit would (the learning is deterministic given its ``random_state``)."""

    def __init__(self, size=64):
        super().__init__(max_bytes=float("inf"), size=size)

    @staticmethod
    def key(family, params, Xs, Ypm):
        import hashlib

        h = hashlib.sha1(repr((family, sorted(params.items()))).encode())
        for X in list(Xs) + [Ypm]:
            if sp.issparse(X):
                X = X.tocsr()
                for part in (X.data, X.indices, X.indptr):
                    h.update(np.ascontiguousarray(part).tobytes())
            else:
                h.update(np.ascontiguousarray(X).tobytes())
            h.update(repr(X.shape).encode())
        return h.hexdigest()


LEARNED = LearnCache()


def cached_learn(est, Xs, Ypm, learn, attrs):
    """``learn(Xs, Ypm)`` unless :data:`LEARNED` holds the same learner, parameters (but
    ``est.post_fit_params``, which the learning does not use) and data; either way ``est``
    ends with the learned ``attrs`` (those ``learn`` sets).

    The learner is ``est.learning_family`` (shared by the estimators that learn the same
    thing), or the estimator's class name when it has none."""
    import copy

    family = est.learning_family or type(est).__name__
    # what follows the learning (post_fit_params) is left out of the key
    params = {k: v for k, v in est.get_params().items()
              if k not in getattr(est, "post_fit_params", ())}
    if isinstance(params.get("random_state"), np.random.RandomState) or \
            params.get("random_state", 0) is None:
        learn(Xs, Ypm)                       # not reproducible: never cached
        return
    key = LEARNED.key(family, params, Xs, Ypm)
    hit = LEARNED.get(key)
    if hit is None:
        learn(Xs, Ypm)
        LEARNED.put(key, {a: copy.deepcopy(getattr(est, a)) for a in attrs if hasattr(est, a)})
        return
    for a, v in hit.items():
        setattr(est, a, copy.deepcopy(v))


def _nearest(D, k):
    """The columns of the ``k`` smallest entries of each row of ``D`` (n, k), ties to the
    lower index: the first ``k`` of a stable argsort; for ``k = 1`` its first column,
    ``argmin`` (the first minimum; the distances are finite, the views being checked)."""
    if k == 1:
        return np.argmin(D, axis=1)[:, None]
    return np.argsort(D, axis=1, kind="stable")[:, :k]


class Downstream:
    """The downstream classifier of Sec. IV of Luo et al. (2016): kNN (NUS) or RLS (MIR).

    Parameters
    ----------
    kind : {"knn", "rls"}
    n_neighbors : int
    alpha : float
        Ridge penalty of RLS.
    """

    def __init__(self, kind, n_neighbors=1, alpha=1.0):
        self.kind, self.n_neighbors, self.alpha = kind, n_neighbors, alpha

    def fit(self, X, Ypm):
        if self.kind == "knn":
            self.X_, self.Y_ = X, Ypm
            return self
        # ridge with an unpenalised intercept, solved exactly in the primal (D <= N) or the
        # dual form on centred data (sparse X is never centred explicitly)
        N, D = X.shape
        mu = np.asarray(X.mean(axis=0)).ravel()
        ybar = Ypm.mean(axis=0)
        Yc = Ypm - ybar
        if D <= N:
            G = dense_dot(X.T, X) - N * np.outer(mu, mu)
            self.coef_ = np.linalg.solve(G + self.alpha * np.eye(D),
                                         dense_dot(X.T, Yc) - np.outer(mu, Yc.sum(axis=0)))
        else:
            H = np.eye(N) - 1.0 / N
            A = np.linalg.solve(H @ dense_dot(X, X.T) @ H + self.alpha * np.eye(N), Yc)
            self.coef_ = dense_dot(X.T, A) - np.outer(mu, A.sum(axis=0))
        self.intercept_ = ybar - mu @ self.coef_
        return self

    def scores(self, X):
        """(n, C) task scores: mean +-1 label of the k nearest neighbours, or ridge output."""
        if self.kind == "knn":
            k = min(self.n_neighbors, self.X_.shape[0])
            nn = _nearest(squared_distances(X, self.X_), k)
            return self.Y_[nn].mean(axis=1)
        return dense_dot(X, self.coef_) + self.intercept_

    def loo_scores(self, X, Ypm):
        """Leave-one-out scores of the training samples (for BSF's choice of modality)."""
        if self.kind == "knn":
            k = min(self.n_neighbors, X.shape[0] - 1)
            D = squared_distances(X)
            np.fill_diagonal(D, np.inf)
            return Ypm[_nearest(D, k)].mean(axis=1)
        # ridge with an unpenalised intercept: hat matrix 11^T/n + Kc (Kc + alpha I)^-1
        n = X.shape[0]
        K = np.asarray((X @ X.T).toarray() if sp.issparse(X) else X @ X.T, dtype=float)
        H = np.eye(n) - 1.0 / n
        Kc = H @ K @ H
        Hat = Kc @ np.linalg.solve(Kc + self.alpha * np.eye(n), np.eye(n)) + 1.0 / n
        fitted = Hat @ Ypm
        h = np.clip(np.diag(Hat), None, 1.0 - 1e-12)[:, None]
        return (fitted - h * Ypm) / (1.0 - h)


class MultiViewClassifierMixin(ClassifierMixin):
    """Target handling shared by every multi-view estimator of this package."""

    _downstream_constraints = {
        "classifier": [StrOptions({"knn", "rls"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "rls_alpha": [Interval(Real, 0, None, closed="neither")],
        "normalize": [StrOptions({"l2"}), None],
    }
    #: how one matrix's columns form the modalities (every estimator of this package)
    _input_constraints = {"view_columns": [list, tuple, dict, None]}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # several views; one 2-D matrix only with a declared split into modalities
        tags.input_tags.two_d_array = getattr(self, "view_columns", None) is not None
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        return tags

    def _input_views(self, views, *, reset=False):
        """The modalities of ``views`` as given (not normalised): any multi-view form, or
        one matrix split by ``view_columns``; on ``reset`` (fit) the input's layout is kept
        (``view_names_``, ``view_dims_``, ``n_features_in_``), otherwise it must match."""
        if not reset:
            check_is_fitted(self)
        return check_multiview_input(views, self, view_columns=self.view_columns,
                                     reset=reset, one_matrix="error")

    def _prepare(self, views, Y):
        """Validate and normalise the views and encode the targets as (N, C) +-1."""
        Xs, names = self._input_views(views, reset=True)
        N = Xs[0].shape[0]
        if Y is None:
            raise ValueError(f"{type(self).__name__} requires Y to be passed, but Y is None")
        Yarr = np.asarray(Y) if not sp.issparse(Y) else Y.toarray()
        if Yarr.ndim == 2 and Yarr.shape[1] > 1:
            Ypm, self._encoding = check_multilabel_Y(Yarr, N, self)
            self.multilabel_ = True
            self.classes_ = np.arange(Ypm.shape[1])
        else:
            self.classes_, Ypm = check_bag_labels(Yarr, N, self)
            self.multilabel_ = False
        return normalize_views(Xs, self.normalize), Ypm

    def _views(self, views):
        return normalize_views(self._input_views(views)[0], self.normalize)

    def _set_downstream(self, classifier, n_neighbors, rls_alpha, normalize="l2"):
        """Store the downstream parameters every estimator of this package takes (as given,
        the scikit-learn convention; validated in ``fit``)."""
        self.classifier = classifier
        self.n_neighbors = n_neighbors
        self.rls_alpha = rls_alpha
        self.normalize = normalize

    #: parameters that change only what follows the costly fit (the runner's validation
    #: search sets them and calls :meth:`refit_post` instead of refitting everything)
    post_fit_params = ("percent", "n_neighbors", "rls_alpha")

    #: the learner whose fitted state this estimator shares with other estimators (a
    #: selection method and its transformation form: ``"LM3FE"`` for LM3FS and LM3FT), or
    #: None when it shares it with none. Estimators of one family fitted with the same
    #: learning parameters on the same data learn once (:func:`cached_learn`, a per-process
    #: memo), and the runner (:func:`mlkit.experiment.run`) makes the runs of one family on
    #: one dataset and split a single task, so that they share it under ``--jobs N`` too.
    learning_family = None

    def refit_post(self, views, Y):
        """Refit only the downstream classifier (after ``set_params`` of ``percent``,
        ``n_neighbors`` or ``rls_alpha``) on the same training data as the last ``fit``.
        The parameters are validated as in ``fit`` (``percent=150`` is an error)."""
        check_is_fitted(self)
        self._validate_params()
        return self._fit_downstream(*self._prepare(views, Y))

    def _fit_downstream(self, Xs, Ypm):
        """Train the downstream classifier on the estimator's features of ``Xs``."""
        self.downstream_ = Downstream(self.classifier, self.n_neighbors, self.rls_alpha).fit(
            self._features(Xs), Ypm)
        return self

    def test_record_extras(self, views, y):
        """Per-class F1 on the test part (single-label; Fig. 5 of Luo et al. 2016)."""
        if self.multilabel_:
            return {}
        pred = self.predict(views)
        y = np.asarray(y)
        tp = np.array([np.sum((pred == c) & (y == c)) for c in self.classes_], float)
        fp = np.array([np.sum((pred == c) & (y != c)) for c in self.classes_], float)
        fn = np.array([np.sum((pred != c) & (y == c)) for c in self.classes_], float)
        den = 2 * tp + fp + fn
        f1 = np.divide(2 * tp, den, out=np.zeros_like(tp), where=den > 0)
        return {"class_f1": f1.tolist(), "classes": [str(c) for c in self.classes_]}

    def predict_from_scores(self, F):
        F = np.asarray(F).reshape(len(F), -1)     # decision_function's (n,) of two classes
        if self.multilabel_:
            out = (F > 0).astype(int)
            return out if self._encoding == "01" else 2 * out - 1
        if F.shape[1] == 1:
            return self.classes_[(F[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    def _format_scores(self, F):
        return F[:, 0] if (not self.multilabel_ and F.shape[1] == 1) else F

    def predict(self, views):
        """Class labels (single-label) or the (n, L) label matrix (multi-label)."""
        return self.predict_from_scores(self._scores(views))

    def decision_function(self, views):
        """Task scores, shape (n, C) ((n,) for two classes)."""
        return self._format_scores(self._scores(views))
