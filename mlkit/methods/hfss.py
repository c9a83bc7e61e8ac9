"""Hierarchical feature subset selection (HFSS) for data whose features come in named groups [1]_.

The feature space is the union of homogeneous subspaces S_1..S_k (views, feature groups).
Algorithm 1 of [1]_ bags weak linear SVMs per subspace (a fresh bootstrap for every round i
and subspace j) and scores each subspace by the out-of-bag (OOB) accuracy of its own bagged
ensemble, the *goodness* G(S_j). Algorithm 2 sorts the subspaces by goodness and keeps the
prefix whose joint ensemble (the weak SVMs already trained, no refitting) has the best OOB
accuracy: the "bestK" subspaces. Optionally each subspace is first reduced by PCA keeping 95%
of its variance (step 2 of Algorithm 1, Sec. 5.4). Several classes are handled one-against-one
(Sec. 4), every pair of classes being one binary problem with its own goodness and bestK.

Every OOB figure comes from the stored votes: per binary problem the decision values of the
R x k weak SVMs on the training samples form an (n_samples, n_models) array and its OOB mask
another; ensembles of any subset or prefix of models are cumulative sums of the masked votes.

References
----------
.. [1] Y. Gao and J. Fan. Semantic image classification with hierarchical feature subset
   selection. ACM SIGMM Workshop on Multimedia Information Retrieval (MIR) 2005, pp. 135-142.
"""

import warnings
from functools import lru_cache
from itertools import combinations
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d
from threadpoolctl import ThreadpoolController

from ..registry import METHODS

try:  # the liblinear call at the end of LinearSVC.fit, without its per-call validation
    from sklearn.svm._base import _get_liblinear_solver_type as _solver_type
    from sklearn.svm._liblinear import set_verbosity_wrap as _liblinear_verbosity
    from sklearn.svm._liblinear import train_wrap as _train_wrap
except ImportError:  # pragma: no cover - a future scikit-learn may move them
    _train_wrap = None
#: what LinearSVC(random_state=0) passes to liblinear as its seed, and "no class weights"
_LIBLINEAR_SEED = np.random.RandomState(0).randint(np.iinfo("i").max)
_NO_CLASS_WEIGHT = np.empty(0, dtype=np.float64)
from ._sampling import bootstrap
from ._validation import TrainingDataError, check_multiview_input

__all__ = ["HFSS", "HFSSOneShotSVM", "vote_scores", "oob_accuracy", "fit_weak_svm",
           "best_prefix"]

_SEED_MAX = 2**31 - 1


@lru_cache(maxsize=None)
def _threadpool_controller():
    """The process's BLAS/OpenMP pools, inspected once (``threadpool_limits`` inspects every
    loaded library on each call, about 3 ms: more than a small binary problem's votes)."""
    return ThreadpoolController()


# -- votes -----------------------------------------------------------------------------------
def vote_scores(vote_sum, dec_sum, prior_sign, *, vote="majority", tie_break="decision"):
    """Ensemble scores whose sign is the ensemble's binary decision (> 0: positive class).

    Parameters
    ----------
    vote_sum : ndarray
        Sum of the members' votes sign(f_m(x)) in {-1, +1}.
    dec_sum : ndarray, same shape
        Sum of the members' decision values f_m(x).
    prior_sign : {-1, +1}
        The larger training class (+1: positive), the last resort of a tie.
    vote : {"majority", "decision"}
        "majority" (mlkit's default; the paper states no rule): the majority of the
        members' votes; "decision": the sign of the summed decision values.
    tie_break : {"decision", "prior"}
        How an exact tie of a majority vote is broken: by the sign of the summed decision
        values of the members (then the larger class if that is 0), or by the larger class.

    Returns
    -------
    ndarray
        For "majority", ``vote_sum + t`` with a tie term ``|t| < 1/2``, so the sign follows
        the vote and ties follow the rule; for "decision", ``dec_sum`` (0 -> the prior).
    """
    if vote == "decision":
        return np.where(dec_sum == 0, 0.05 * prior_sign, dec_sum)
    if tie_break == "decision":
        tie = np.where(dec_sum != 0, 0.4 * np.tanh(dec_sum), 0.05 * prior_sign)
    else:
        tie = 0.05 * prior_sign
    return vote_sum + tie


def oob_accuracy(vote_sum, dec_sum, count, y_pm, prior_sign, *, vote="majority",
                 tie_break="decision", no_oob="skip"):
    """OOB accuracy of one ensemble per column: the 1 - mean 0-1 loss of G(S) in [1]_.

    Parameters
    ----------
    vote_sum, dec_sum, count : ndarray of shape (n_samples, n_ensembles)
        Per sample and ensemble, the sums of the votes and decision values of the members
        for which the sample is out-of-bag, and the number of those members.
    y_pm : ndarray of shape (n_samples,)
        The labels as -1/+1.
    prior_sign, vote, tie_break
        See :func:`vote_scores`.
    no_oob : {"skip", "error"}
        A sample with no OOB member is left out of the mean ("skip", mlkit's default) or
        counted as an error.

    Returns
    -------
    ndarray of shape (n_ensembles,)
        NaN for an ensemble no sample is out-of-bag of (with ``no_oob="skip"``).
    """
    positive = _votes_positive(vote_sum, dec_sum, prior_sign, vote, tie_break)
    has = count > 0
    correct = (positive == (y_pm > 0)[:, None]) & has
    denom = has.sum(axis=0) if no_oob == "skip" else np.full(has.shape[1], has.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        return correct.sum(axis=0) / np.where(denom > 0, denom, np.nan)


def _votes_positive(vote_sum, dec_sum, prior_sign, vote, tie_break):
    """``vote_scores(...) > 0`` with the tie term computed only where the votes tie.

    A majority score is ``vote_sum + t`` with an integer ``vote_sum`` and ``|t| < 1/2``: where
    ``vote_sum != 0`` its sign is the sign of ``vote_sum``, and where ``vote_sum == 0`` it is
    ``t`` itself, so the decisions are those of :func:`vote_scores`, bit for bit.
    """
    if vote != "majority":
        return vote_scores(vote_sum, dec_sum, prior_sign, vote=vote, tie_break=tie_break) > 0
    positive = vote_sum > 0
    tied = vote_sum == 0
    positive[tied] = vote_scores(vote_sum[tied], dec_sum[tied], prior_sign, vote=vote,
                                 tie_break=tie_break) > 0
    return positive


def best_prefix(curve, ties="shortest"):
    """Algorithm 2, step 5 of [1]_: bestK, the length of the goodness-sorted prefix of
    subspaces whose ensemble has the highest OOB goodness, ``argmax_S G(S_propose)``.

    The paper does not say which prefix wins when several reach the maximum (on nearly
    separable problems most prefixes reach 100% OOB): ``"shortest"`` keeps the first, the
    fewest subspaces (a strict-improvement forward selection); ``"longest"`` keeps the last,
    the most subspaces of the tied ones.

    Parameters
    ----------
    curve : array-like of shape (k_homo,)
        G(S_propose) of the prefixes of length 1..k_homo (NaN: no OOB sample, never chosen).
    ties : {"shortest", "longest"}

    Returns
    -------
    int
        bestK in 1..k_homo (k_homo when every value is NaN).
    """
    curve = np.asarray(curve, dtype=float)
    if np.all(np.isnan(curve)):
        return len(curve)
    # exact ties: every value is a count over the same OOB samples divided by their number
    tied = np.flatnonzero(curve == np.nanmax(curve))
    return int(tied[0] if ties == "shortest" else tied[-1]) + 1


# -- one binary problem ------------------------------------------------------------------------
def fit_weak_svm(X, y_pm, sample_weight, est):
    """One weak linear SVM: the ``(coef, intercept)`` of ``LinearSVC(C, loss, tol, max_iter,
    dual, random_state=0).fit(X, y_pm, sample_weight)``.

    It calls liblinear through scikit-learn's own wrapper (``sklearn.svm._liblinear.
    train_wrap``, the call ``LinearSVC.fit`` ends in) with the arguments ``LinearSVC.fit``
    would pass, skipping its per-fit validation and label encoding (about 1.5 ms a fit, more
    than the solve itself on small problems): X is validated once per problem. A sparse X
    goes to liblinear as the CSR matrix it is (as ``LinearSVC`` passes it). When that private
    API is unavailable, or a sparse X is not a CSR matrix with 32-bit indices and at least
    one stored value, it uses ``LinearSVC`` itself. ``dual`` when there are no more rows
    than features (``LinearSVC``'s "auto" rule, except that at as many rows as features
    "auto" would take the primal), and always for the hinge loss.
    """
    dual = est.loss == "hinge" or X.shape[0] <= X.shape[1]
    sparse = sp.issparse(X)
    if _train_wrap is not None and (not sparse or _liblinear_csr(X)):
        X = X.astype(np.float64, copy=False) if sparse else np.ascontiguousarray(
            X, dtype=np.float64)
        raw, _ = _train_wrap(X, (y_pm > 0).astype(np.float64), sparse,
                             _liblinear_solver(est.loss, dual), est.tol, 1.0, est.C,
                             _NO_CLASS_WEIGHT, est.max_iter, _LIBLINEAR_SEED, 0.1,
                             np.ascontiguousarray(sample_weight, dtype=np.float64))
        return raw[0, :-1], float(raw[0, -1])
    svm = LinearSVC(C=est.C, loss=est.loss, tol=est.tol, max_iter=est.max_iter, dual=dual,
                    random_state=0).fit(X, y_pm, sample_weight=sample_weight)
    return svm.coef_.ravel(), float(svm.intercept_[0])


@lru_cache(maxsize=None)
def _liblinear_solver(loss, dual):
    return _solver_type("ovr", "l2", loss, dual)


def _liblinear_csr(X):
    """Whether liblinear's wrapper takes the sparse X as it is."""
    return (X.format == "csr" and X.nnz > 0 and X.indices.dtype == np.int32
            and X.indptr.dtype == np.int32)


class _Subspace:
    """The fitted transform (PCA then scaling) of one subspace of one binary problem."""

    def __init__(self, X, pca_variance, scaling):
        self.d_in = X.shape[1]
        self.pca = None
        if pca_variance is not None:
            if sp.issparse(X):
                raise TypeError("HFSS: pca_variance needs dense views; got a sparse view "
                                "(use pca_variance=None or X.toarray())")
            if np.ptp(X, axis=0).max() > 0:
                self.pca = PCA(n_components=pca_variance, svd_solver="full").fit(X)
                X = self.pca.transform(X)
        self.scaler = None
        if scaling == "standard":
            self.scaler = StandardScaler(with_mean=not sp.issparse(X)).fit(X)
        self.d_out = X.shape[1]

    def transform(self, X):
        if self.pca is not None:
            X = self.pca.transform(X)
        if self.scaler is not None:
            X = self.scaler.transform(X)
        return X


class _BinaryProblem:
    """Algorithm 1 and 2 of [1]_ on one binary problem (labels -1/+1).

    Attributes
    ----------
    subspaces : list of int
        The subspaces used (indices into the estimator's views).
    coef : dict j -> ndarray (n_rounds, d_j'), intercept : dict j -> ndarray (n_rounds,)
        The weak linear SVMs of subspace j, round by round.
    goodness : ndarray (len(subspaces),)
    order, selected : ndarray of int
        Subspaces by goodness (descending, ties by index) and the chosen ones (ascending).
    """

    def __init__(self, Xs, y_pm, seed, subspaces, est):
        n = len(y_pm)
        R = est.n_rounds
        self.seed = int(seed)
        self.subspaces = list(subspaces)
        self.prior_sign = 1 if (y_pm > 0).sum() >= (y_pm < 0).sum() else -1
        self.transforms, self.coef, self.intercept = {}, {}, {}
        k = len(self.subspaces)
        # per subspace, round and sample (the members' rows contiguous): decision values
        # and OOB masks
        dec = np.empty((k, R, n))
        oob = np.empty((k, R, n), dtype=bool)
        # the classes as int8 codes: bootstrap's check that a draw holds both classes is
        # fastest on small integers (the draws do not depend on the coding)
        y01 = (y_pm > 0).astype(np.int8)
        for jj, j in enumerate(self.subspaces):
            t = _Subspace(Xs[j], est.pca_variance, est.scaling)   # one transform per subspace
            Z = t.transform(Xs[j])
            W = np.empty((R, t.d_out))
            b = np.empty(R)
            # a fresh bootstrap per (i, j), all drawn before the fits (a tight loop)
            draws = np.stack([np.bincount(bootstrap(n, np.random.default_rng([self.seed, i, j]),
                                                    y=y01), minlength=n) for i in range(R)])
            np.equal(draws, 0, out=oob[jj])
            for i, counts in enumerate(draws):
                rows = np.flatnonzero(counts)
                # each distinct row once, weighted by its draws: the same primal problem as
                # the duplicated rows (liblinear's loss is sum_n C w_n xi_n)
                W[i], b[i] = fit_weak_svm(Z[rows], y_pm[rows], counts[rows].astype(float), est)
            dec[jj] = (np.asarray(Z @ W.T) + b).T
            self.transforms[j], self.coef[j], self.intercept[j] = t, W, b
        self.dims_in = np.array([self.transforms[j].d_in for j in self.subspaces])
        self.dims_out = np.array([self.transforms[j].d_out for j in self.subspaces])
        self._select(dec, oob, y_pm, est)

    def _acc(self, vs, ds, cnt, y_pm, est):
        """OOB accuracies of the ensembles whose vote sums etc. are the rows of ``vs``, ``ds``
        and ``cnt`` (shape (n_ensembles, n_samples))."""
        return oob_accuracy(vs.T, ds.T, cnt.T, y_pm, self.prior_sign, vote=est.vote,
                            tie_break=est.tie_break, no_oob=est.no_oob)

    def _select(self, dec, oob, y_pm, est):
        """Algorithms 1 (goodness) and 2 (bestK) and the OOB curves from the members' decision
        values ``dec`` and OOB masks ``oob`` of shape (n_subspaces, n_rounds, n_samples)."""
        votes = np.where(oob, np.sign(dec), 0.0)
        decs = np.where(oob, dec, 0.0)
        # Algorithm 1, step 4-5: the goodness of each subspace's own bagged ensemble (sums
        # over the rounds, added round by round)
        vs, ds, cnt = votes.sum(axis=1), decs.sum(axis=1), oob.sum(axis=1)       # (k, n)
        self.goodness = self._acc(vs, ds, cnt, y_pm, est)
        # Algorithm 2: prefixes of the subspaces sorted by goodness, votes re-used
        self.order = np.argsort(-np.nan_to_num(self.goodness, nan=-1.0), kind="stable")
        self.forward_curve = self._acc(*(np.cumsum(a[self.order], axis=0)
                                         for a in (vs, ds, cnt)), y_pm, est)
        if est.selection == "bestk":
            if np.isnan(self.forward_curve).all():
                raise TrainingDataError(
                    f"{type(est).__name__}: no training sample was out of bag for any weak "
                    f"SVM of a binary problem ({len(y_pm)} samples, n_rounds={est.n_rounds}), so "
                    "the OOB goodness of Algorithm 1 is undefined; give every class more "
                    "samples or raise n_rounds")
            self.bestk = best_prefix(self.forward_curve, est.bestk_ties)
        else:
            self.bestk = len(self.subspaces)
        self.selected = np.sort(self.order[:self.bestk])
        # the bagging process (rounds i, subspaces j inside) of the full and chosen ensembles
        n = len(y_pm)

        def members(a, cols):
            return a[cols].transpose(1, 0, 2).reshape(-1, n)        # (rounds x cols, n)

        def curve(cols):
            oob_m = members(oob, cols)
            # a sample counts from its first OOB member on (the count only matters as > 0)
            first = np.where(oob_m.any(axis=0), oob_m.argmax(axis=0), len(oob_m))
            return self._acc(np.cumsum(members(votes, cols), axis=0),
                             np.cumsum(members(decs, cols), axis=0),
                             np.arange(len(oob_m))[:, None] >= first, y_pm, est)

        self.oob_curve_all = curve(np.arange(len(self.subspaces)))
        self.oob_curve = (self.oob_curve_all if self.bestk == len(self.subspaces)
                          else curve(self.selected))
        self.oob_score_all = float(self.oob_curve_all[-1])
        self.oob_score = float(self.oob_curve[-1])
        self.n_no_oob = int((~oob[self.selected].any(axis=(0, 1))).sum())
        # positions of the selected subspaces in the original index space
        self.selected = np.asarray(self.subspaces)[self.selected]
        self.order = np.asarray(self.subspaces)[self.order]

    def decisions(self, Xs, subspaces):
        """Decision values of the weak SVMs of ``subspaces``: (n, n_rounds, len(subspaces))."""
        return np.stack([np.asarray(self.transforms[j].transform(Xs[j]) @ self.coef[j].T)
                         + self.intercept[j] for j in subspaces], axis=2)

    def staged_scores(self, Xs, est, subspaces=None, by="model"):
        """Ensemble scores after each model ("model") or round ("round"): (n, n_stages)."""
        subspaces = self.selected if subspaces is None else subspaces
        D = self.decisions(Xs, subspaces)
        n = D.shape[0]
        if by == "round":
            vs, ds = np.sign(D).sum(axis=2), D.sum(axis=2)
        else:
            vs, ds = np.sign(D).reshape(n, -1), D.reshape(n, -1)
        return vote_scores(np.cumsum(vs, axis=1), np.cumsum(ds, axis=1), self.prior_sign,
                           vote=est.vote, tie_break=est.tie_break)

    def forward_scores(self, Xs, est):
        """Scores of the full ensembles of each goodness-sorted prefix: (n, n_subspaces)."""
        D = self.decisions(Xs, self.order)
        return vote_scores(np.cumsum(np.sign(D).sum(axis=1), axis=1),
                           np.cumsum(D.sum(axis=1), axis=1), self.prior_sign,
                           vote=est.vote, tie_break=est.tie_break)

    def score_final(self, Xs, est):
        """The chosen ensemble's score, normalised by its number of models: (n,)."""
        return self.staged_scores(Xs, est, by="round")[:, -1] / (est.n_rounds * len(self.selected))


def _fit_problem(Xs, y_pm, seed, subspaces, est):
    if _train_wrap is not None:
        _liblinear_verbosity(0)
    # the views are checked finite once (check_views): no transform re-checks them
    with warnings.catch_warnings(), config_context(assume_finite=True):
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _BinaryProblem(Xs, y_pm, seed, subspaces, est)


def _ovo_decision(scores, pairs, n_classes):
    """One-vs-one voting: votes plus confidences squashed into (-1/3, 1/3) (as scikit-learn's
    OvO), so ties of votes are broken by the summed scores. ``scores`` (n, n_pairs), > 0 for
    the second class of a pair."""
    n = scores.shape[0]
    votes = np.zeros((n, n_classes))
    conf = np.zeros((n, n_classes))
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    pos = scores > 0
    for cls, sign, win in ((a, -1.0, ~pos), (b, 1.0, pos)):
        np.add.at(votes.T, cls, win.T.astype(float))
        np.add.at(conf.T, cls, sign * scores.T)
    return votes + conf / (3 * (np.abs(conf) + 1))


# -- the estimators --------------------------------------------------------------------------
class _GroupedInput:
    """Shared input handling: views (Views/list/dict), or one matrix (array, DataFrame,
    sparse, list of rows) split by ``view_columns``, or one subspace without it."""

    #: the fewest training samples a class may have
    _min_class_size = 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # sparse views are taken as they are, except by the PCA of pca_variance
        tags.input_tags.sparse = getattr(self, "pca_variance", None) is None
        return tags

    def _views(self, X, *, fitted=False):
        return check_multiview_input(X, self, view_columns=self.view_columns,
                                     reset=not fitted, one_matrix="one view")

    def _check_y(self, y, n):
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        if y.ndim != 1 or len(y) != n:
            raise ValueError(f"{name}: y of shape {y.shape} for {n} samples; one class label "
                             "per sample is needed")
        check_classification_targets(y)
        self.classes_, y_idx, counts = np.unique(y, return_inverse=True, return_counts=True)
        if len(self.classes_) < 2:
            raise TrainingDataError(f"{name}: y has only one class "
                                    f"({self.classes_[0].item()!r}); at least 2 classes are "
                                    "needed")
        if counts.min() < self._min_class_size:
            c = int(np.argmin(counts))
            raise TrainingDataError(
                f"{name}: class {self.classes_[c].item()!r} has {counts[c]} training "
                f"sample(s); every class needs at least {self._min_class_size} "
                "(each bootstrap sample holds every class, so a class's only sample is never "
                "out of bag for the OOB goodness)")
        self.pairs_ = list(combinations(range(len(self.classes_)), 2))
        return y_idx

    @staticmethod
    def _pair_data(Xs, y_idx, pair):
        rows = np.flatnonzero((y_idx == pair[0]) | (y_idx == pair[1]))
        return [X[rows] for X in Xs], np.where(y_idx[rows] == pair[1], 1.0, -1.0)

    def _decide(self, scores):
        if len(self.classes_) == 2:
            return scores[:, 0]
        return _ovo_decision(scores, self.pairs_, len(self.classes_))

    def decision_function(self, X):
        """Binary: the ensemble score (> 0 for ``classes_[1]``); several classes: the
        one-vs-one votes plus squashed confidences, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        Xs, _ = self._views(X, fitted=True)
        return self._decide(self._pair_scores(Xs))

    def predict(self, X):
        return self.predict_from_scores(self.decision_function(X))

    def predict_from_scores(self, scores):
        """The labels of decision values ``scores`` (of :meth:`decision_function` or a stage
        of :meth:`staged_decision_function`): binary, ``classes_[1]`` where the score is
        > 0; several classes, the class of the largest score."""
        d = np.asarray(scores)
        return self.classes_[(d > 0).astype(int) if d.ndim == 1 else d.argmax(axis=1)]

    def test_record_extras(self, X, y):
        """What a run record keeps of the test part: every one-vs-one problem's test
        accuracy (None for a problem without test samples)."""
        return {"problem_test": [None if np.isnan(v) else float(v)
                                 for v in self.problem_scores(X, y)]}

    def problem_scores(self, X, y, **kwargs):
        """Accuracy of every one-vs-one problem on the samples of (X, y) of its two classes
        (the per-problem test accuracies the paper averages); NaN for a problem with none.

        Returns
        -------
        ndarray of shape (n_pairs,)
        """
        check_is_fitted(self)
        Xs, _ = self._views(X, fitted=True)
        y = np.asarray(y)
        out = np.full(len(self.pairs_), np.nan)
        for q, ((a, b), p) in enumerate(zip(self.pairs_, self.problems_)):
            rows = np.flatnonzero((y == self.classes_[a]) | (y == self.classes_[b]))
            if rows.size:
                score = self._problem_score(p, [X[rows] for X in Xs], **kwargs)
                out[q] = np.mean((score > 0) == (y[rows] == self.classes_[b]))
        return out


class HFSS(_GroupedInput, ClassifierMixin, BaseEstimator):
    """Hierarchical feature subset selection: bagged weak linear SVMs per homogeneous subspace,
    subspaces ranked by OOB goodness and the best prefix kept (Gao & Fan 2005, Alg. 1-2) [1]_.

    Parameters
    ----------
    n_rounds : int, default=50
        Iter_max of Algorithm 1: every round fits one weak SVM per subspace, so an ensemble
        has ``n_rounds * n_subspaces`` members (450 for the paper's 9 subspaces).
    selection : {"bestk", "all"}, default="bestk"
        "bestk": Algorithm 2 keeps the goodness-sorted prefix of subspaces with the best OOB
        accuracy (ties: ``bestk_ties``); "all": the full ensemble of Algorithm 1 (the
        baseline).
    bestk_ties : {"shortest", "longest"}, default="shortest"
        Not stated in the paper (Alg. 2 writes only argmax): which of several prefixes
        tied at the highest OOB goodness is bestK, the shortest or the longest (see
        :func:`best_prefix`).
    pca_variance : float in (0, 1) or None, default=None
        Optional step 2 of Algorithm 1 (Sec. 5.4): each subspace is projected by PCA keeping
        this fraction of its variance (the paper: 0.95), fitted on each binary problem's
        training part (not stated in the paper; mlkit's choice). Dense views only.
    C : float, default=1.0
        The weak linear SVMs' penalty ("C = 1 for all SVM formulation", Sec. 3).
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        liblinear's loss (the paper names no variant; scikit-learn's LinearSVC default).
    scaling : {"standard", "none"}, default="standard"
        Not stated in the paper: "standard" z-scores each subspace (after PCA) with one
        scaler fitted on the binary problem's training part, shared by its weak SVMs.
    vote : {"majority", "decision"}, default="majority"
        Not stated: the ensembles' vote rule (mlkit's default: majority of the members'
        votes), see :func:`vote_scores`.
    tie_break : {"decision", "prior"}, default="decision"
        Not stated: an exact tie of votes goes to the sign of the summed decision values
        ("decision"; then to the larger class) or directly to the larger training class.
    no_oob : {"skip", "error"}, default="skip"
        Not stated: a training sample with no OOB member is left out of an OOB accuracy
        ("skip", mlkit's default) or counted as an error.
    stages : {"bagging", "forward"}, default="bagging"
        What :meth:`staged_decision_function` yields (the fit does not depend on it):
        "bagging", the chosen ensemble after each weak SVM (binary data) or round (the test
        curves of Figs. 3, 6, 7); "forward", the ensemble of the k best subspaces for
        k = 1..n_subspaces (Algorithm 2's goodness-sorted prefixes: the test curve of Fig. 5).
    subspaces : list of int or str, optional
        Use only these subspaces (indices or view names); a subspace keeps its bootstrap
        seeds, so the ensemble equals the same subspaces' part of a fit on all of them.
    view_columns : list or dict, optional
        When ``X`` is one matrix (array, DataFrame, sparse): how its columns form the
        subspaces: column counts ``[d_1, d_2, ...]`` of consecutive blocks, or one slice /
        index list / DataFrame column-name list per subspace, or a dict name -> either
        (see :func:`mlkit.methods._validation.check_view_columns`). Without it a matrix is
        one subspace; with views (``Views``, list or dict of matrices) it must be None.
    tol, max_iter : float, int, default=1e-4, 1000
        liblinear's stopping tolerance and iteration cap (convergence warnings of the weak
        SVMs are silenced).
    n_jobs : int, optional
        Binary problems fitted in parallel (joblib); results do not depend on it.
    random_state : int, RandomState or None, default=None
        Draws one seed per binary problem; round i of subspace j bootstraps with
        ``numpy.random.default_rng([seed, i, j])``.

    Attributes
    ----------
    classes_ : ndarray
    pairs_ : list of (int, int)
        The one-vs-one problems as class indices (a, b), b the positive class.
    problems_ : list of _BinaryProblem
        The fitted problems (weak SVMs, transforms, per-problem statistics).
    goodness_ : ndarray of shape (n_pairs, n_used_subspaces)
        G(S_j) per problem (Algorithm 1, step 5).
    bestk_ : ndarray of int, shape (n_pairs,)
    selected_ : list of ndarray
        The chosen subspaces of each problem (indices into the views).
    oob_scores_ : ndarray of shape (n_pairs,)
        OOB accuracy of each problem's chosen ensemble; ``oob_scores_all_`` of its full one.
    oob_score_, oob_score_all_ : float
        Their means over problems (the paper's summaries: 93.37% bestK, 87.07% all).
    oob_curve_ : ndarray
        Binary data: OOB accuracy of the chosen ensemble after each weak SVM (Figs. 3, 6, 7);
        several classes: the mean over problems after each round.
    forward_curve_ : ndarray of shape (n_used_subspaces,)
        OOB accuracy of the goodness-sorted prefixes (Fig. 5; mean over problems).
    view_names_, view_dims_ : list
    dims_pca_ : ndarray of shape (n_pairs, n_used_subspaces)
        Subspace dimensions after PCA (Table 2; equal to the input's without PCA).

    References
    ----------
    .. [1] Y. Gao and J. Fan. Semantic image classification with hierarchical feature subset
       selection. ACM MIR 2005, pp. 135-142.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 40)
    >>> views = [rng.normal(size=(80, 2)) + y[:, None], rng.normal(size=(80, 3))]
    >>> clf = HFSS(n_rounds=5, random_state=0).fit(views, y)
    >>> clf.selected_[0].tolist(), clf.predict(views).shape
    ([0], (80,))
    """

    numerics_revision = 1
    _min_class_size = 2
    #: constructor parameters that make the common tests' fits fast
    _quick_params = {"n_rounds": 5, "random_state": 0}
    #: scikit-learn's common checks that cannot hold for HFSS, each with the reason
    _expected_failed_checks = {
        "check_non_transformer_estimators_n_iter":
            "max_iter caps each of the n_rounds x n_subspaces weak liblinear SVMs; HFSS keeps "
            "no single iteration count (n_iter_)"}

    _parameter_constraints = {
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "selection": [StrOptions({"bestk", "all"})],
        "bestk_ties": [StrOptions({"shortest", "longest"})],
        "pca_variance": [Interval(Real, 0, 1, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "loss": [StrOptions({"squared_hinge", "hinge"})],
        "scaling": [StrOptions({"standard", "none"})],
        "vote": [StrOptions({"majority", "decision"})],
        "tie_break": [StrOptions({"decision", "prior"})],
        "no_oob": [StrOptions({"skip", "error"})],
        "stages": [StrOptions({"bagging", "forward"})],
        "subspaces": [list, tuple, None],
        "view_columns": [dict, list, tuple, None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_rounds=50, *, selection="bestk", bestk_ties="shortest",
                 pca_variance=None, C=1.0,
                 loss="squared_hinge", scaling="standard", vote="majority",
                 tie_break="decision", no_oob="skip", stages="bagging", subspaces=None,
                 view_columns=None, tol=1e-4, max_iter=1000, n_jobs=None, random_state=None):
        self.n_rounds = n_rounds
        self.selection = selection
        self.bestk_ties = bestk_ties
        self.pca_variance = pca_variance
        self.C = C
        self.loss = loss
        self.scaling = scaling
        self.vote = vote
        self.tie_break = tie_break
        self.no_oob = no_oob
        self.stages = stages
        self.subspaces = subspaces
        self.view_columns = view_columns
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _used_subspaces(self, names):
        if self.subspaces is None:
            return list(range(len(names)))
        used = []
        for s in self.subspaces:
            if isinstance(s, str):
                if s not in names:
                    raise ValueError(f"HFSS: subspace {s!r} is not a view name; the views are "
                                     f"{names}")
                used.append(names.index(s))
            else:
                if not 0 <= int(s) < len(names):
                    raise ValueError(f"HFSS: subspace {s} is out of range 0..{len(names) - 1}")
                used.append(int(s))
        if not used or len(set(used)) != len(used):
            raise ValueError(f"HFSS: subspaces must name distinct views, got {self.subspaces}")
        return sorted(used)

    def fit(self, X, y):
        """Run Algorithms 1 and 2 on every one-vs-one problem.

        Parameters
        ----------
        X : Views, list or dict of (n_samples, d_j) matrices, or one (n_samples, d) matrix
            (array, DataFrame, sparse), split into subspaces by ``view_columns``
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        Xs, names = self._views(X)
        y_idx = self._check_y(y, Xs[0].shape[0])
        used = self._used_subspaces(names)
        self.subspaces_ = np.array(used)
        rng = check_random_state(self.random_state)
        seeds = rng.randint(0, _SEED_MAX, size=len(self.pairs_))
        # the products are small: one BLAS thread (loky workers limit theirs themselves)
        with _threadpool_controller().limit(limits=1, user_api="blas"):
            self.problems_ = Parallel(n_jobs=self.n_jobs)(
                delayed(_fit_problem)(*self._pair_data(Xs, y_idx, pair), seed, used, self)
                for pair, seed in zip(self.pairs_, seeds))
        P = self.problems_
        self.goodness_ = np.array([p.goodness for p in P])
        self.bestk_ = np.array([p.bestk for p in P])
        self.selected_ = [p.selected for p in P]
        self.oob_scores_ = np.array([p.oob_score for p in P])
        self.oob_scores_all_ = np.array([p.oob_score_all for p in P])
        self.oob_score_ = float(np.mean(self.oob_scores_))
        self.oob_score_all_ = float(np.mean(self.oob_scores_all_))
        self.forward_curves_ = np.array([p.forward_curve for p in P])
        self.forward_curve_ = self.forward_curves_.mean(axis=0)
        self.dims_pca_ = np.array([p.dims_out for p in P])
        if len(P) == 1:
            self.oob_curve_ = P[0].oob_curve
        else:
            self.oob_curve_ = np.mean([p.oob_curve[len(p.selected) - 1::len(p.selected)]
                                       for p in P], axis=0)
        return self

    def _pair_scores(self, Xs):
        return np.column_stack([p.score_final(Xs, self) for p in self.problems_])

    def _problem_score(self, problem, Xs, ensemble="chosen"):
        """``ensemble="chosen"`` (bestK or all, per ``selection``) or "all" (Algorithm 1's
        full ensemble, whatever ``selection`` is)."""
        if ensemble == "all":
            return problem.staged_scores(Xs, self, subspaces=problem.subspaces,
                                         by="round")[:, -1]
        return problem.score_final(Xs, self)

    def staged_decision_function(self, X):
        """Decision values after every stage, as ``stages`` says.

        ``stages="bagging"`` (the green curves of Figs. 3, 6, 7): the chosen ensembles as
        they grow; binary data, after each weak SVM (rounds i, subspaces j inside, as
        ``oob_curve_``); several classes, after each round (one-vs-one decisions).
        ``stages="forward"`` (the green curve of Fig. 5): the ensemble of the k best
        subspaces (all their weak SVMs), k = 1..n_subspaces (Algorithm 2's goodness-sorted
        prefixes, as ``forward_curve_``).

        Yields
        ------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        Xs, _ = self._views(X, fitted=True)
        if self.stages == "forward":
            yield from self._forward_stages(Xs)
            return
        if len(self.classes_) == 2:
            S = self.problems_[0].staged_scores(Xs, self, by="model")
            for s in range(S.shape[1]):
                yield S[:, s]
            return
        S = np.stack([p.staged_scores(Xs, self, by="round") for p in self.problems_], axis=1)
        for r in range(S.shape[2]):
            yield self._decide(S[:, :, r])

    def _forward_stages(self, Xs):
        """Decision values of each goodness-sorted prefix of subspaces, k = 1..n_subspaces."""
        S = np.stack([p.forward_scores(Xs, self) for p in self.problems_], axis=1)
        for k in range(S.shape[2]):
            yield self._decide(S[:, :, k])

    def staged_score(self, X, y):
        """Accuracy on (X, y) after each stage of :meth:`staged_decision_function`."""
        y = np.asarray(y)
        return np.array([np.mean(self.predict_from_scores(d) == y)
                         for d in self.staged_decision_function(X)])

    def forward_score(self, X, y):
        """Accuracy on (X, y) of each goodness-sorted prefix of subspaces (Fig. 5, green)."""
        check_is_fitted(self)
        Xs, _ = self._views(X, fitted=True)
        y = np.asarray(y)
        return np.array([np.mean(self.predict_from_scores(d) == y)
                         for d in self._forward_stages(Xs)])

    def problem_forward_scores(self, X, y):
        """Test accuracy of every goodness-sorted prefix of every one-vs-one problem (the green
        curve of Fig. 5 of [1]_, per problem): row q, column k-1 is the accuracy of problem
        q's ensemble of its k best subspaces on the samples of (X, y) of its two classes;
        NaN for a problem with none.

        Returns
        -------
        ndarray of shape (n_pairs, n_used_subspaces)
        """
        check_is_fitted(self)
        Xs, _ = self._views(X, fitted=True)
        y = np.asarray(y)
        out = np.full((len(self.pairs_), len(self.subspaces_)), np.nan)
        for q, ((a, b), p) in enumerate(zip(self.pairs_, self.problems_)):
            rows = np.flatnonzero((y == self.classes_[a]) | (y == self.classes_[b]))
            if rows.size:
                S = p.forward_scores([X[rows] for X in Xs], self)
                out[q] = np.mean((S > 0) == (y[rows] == self.classes_[b])[:, None], axis=0)
        return out

    def test_record_extras(self, X, y):
        """:meth:`_GroupedInput.test_record_extras` and, per problem, the test accuracy of
        every goodness-sorted prefix (``problem_forward_test``, :meth:`problem_forward_scores`):
        what the regret of the OOB choice of bestK is read from."""
        extra = super().test_record_extras(X, y)
        extra["problem_forward_test"] = [None if np.isnan(row).all() else
                                         [float(v) for v in row]
                                         for row in self.problem_forward_scores(X, y)]
        return extra

    def run_record_extras(self):
        """Per problem: classes, OOB accuracy (chosen / full ensemble), goodness, bestK, the
        chosen subspaces, the goodness order and forward-selection curve (Alg. 2, Fig. 5) and
        the subspace dimensions before/after PCA; ``oob_curve`` (``oob_curve_``) and, for
        binary data, ``oob_curve_all`` (the full ensemble's, Fig. 3): what the figures draw
        beside the runner's test curves."""
        check_is_fitted(self)
        names = [str(c) for c in self.classes_]
        extra = {}
        if len(self.problems_) == 1:
            extra["oob_curve_all"] = [float(v) for v in self.problems_[0].oob_curve_all]
        return {
            "subspaces": [self.view_names_[j] for j in self.subspaces_],
            "dims_before_pca": [self.view_dims_[j] for j in self.subspaces_],
            "oob_score": self.oob_score_,
            "oob_score_all": self.oob_score_all_,
            "oob_curve": [float(v) for v in self.oob_curve_],
            **extra,
            "problems": [{
                "classes": [names[a], names[b]],
                "oob_accuracy": float(p.oob_score),
                "oob_accuracy_all": float(p.oob_score_all),
                "goodness": [float(g) for g in p.goodness],
                "bestk": int(p.bestk),
                "selected": [self.view_names_[j] for j in p.selected],
                "order": [self.view_names_[j] for j in p.order],
                "forward_curve": [float(v) for v in p.forward_curve],
                "dims_after_pca": [int(d) for d in p.dims_out],
                "no_oob_samples": p.n_no_oob,
            } for (a, b), p in zip(self.pairs_, self.problems_)],
        }


class _OneShotProblem:
    def __init__(self, Xs, y_pm, est):
        X = sp.hstack(Xs, format="csr") if any(sp.issparse(X) for X in Xs) else np.hstack(Xs)
        self.transform = _Subspace(X, None, est.scaling)
        svm = LinearSVC(C=est.C, loss=est.loss, tol=est.tol, max_iter=est.max_iter,
                        random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svm.fit(self.transform.transform(X), y_pm)
        self.coef, self.intercept = svm.coef_.ravel(), svm.intercept_[0]
        self.n_iter = int(svm.n_iter_)

    def score(self, Xs):
        X = sp.hstack(Xs, format="csr") if any(sp.issparse(X) for X in Xs) else np.hstack(Xs)
        return np.asarray(self.transform.transform(X) @ self.coef).ravel() + self.intercept


class HFSSOneShotSVM(_GroupedInput, ClassifierMixin, BaseEstimator):
    """The one-shot SVM of Gao & Fan (2005, Sec. 5.5, Table 3) [1]_: one linear SVM (C = 1)
    on all subspaces concatenated, one-against-one for several classes.

    Parameters
    ----------
    C : float, default=1.0
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        The one-shot SVM's kernel is not stated in the paper; linear, as its weak SVMs'
        ("linear-kernel is chosen", Sec. 3).
    scaling : {"standard", "none"}, default="standard"
        z-scores of every feature fitted on each problem's training part (as :class:`HFSS`).
    view_columns : list or dict, optional
        How the columns of one matrix form the subspaces (as :class:`HFSS`; only their
        union is used).
    tol, max_iter : float, int
    n_jobs : int, optional

    Attributes
    ----------
    classes_, pairs_, problems_, view_names_, view_dims_, n_features_in_
        As in :class:`HFSS`.
    n_iter_ : int
        The most liblinear iterations any one-vs-one SVM ran.

    References
    ----------
    .. [1] Y. Gao and J. Fan. ACM MIR 2005.
    """

    numerics_revision = 1

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "loss": [StrOptions({"squared_hinge", "hinge"})],
        "scaling": [StrOptions({"standard", "none"})],
        "view_columns": [dict, list, tuple, None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    }

    def __init__(self, C=1.0, *, loss="squared_hinge", scaling="standard", view_columns=None,
                 tol=1e-4, max_iter=1000, n_jobs=None):
        self.C = C
        self.loss = loss
        self.scaling = scaling
        self.view_columns = view_columns
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Fit one linear SVM per one-vs-one problem on the concatenated subspaces."""
        self._validate_params()
        Xs, names = self._views(X)
        y_idx = self._check_y(y, Xs[0].shape[0])
        self.problems_ = Parallel(n_jobs=self.n_jobs)(
            delayed(_OneShotProblem)(*self._pair_data(Xs, y_idx, pair), self)
            for pair in self.pairs_)
        self.n_iter_ = max(p.n_iter for p in self.problems_)
        return self

    def _pair_scores(self, Xs):
        return np.column_stack([p.score(Xs) for p in self.problems_])

    def _problem_score(self, problem, Xs):
        return problem.score(Xs)


METHODS.register("hfss", HFSS, family="multi-view", paper="hfss",
                 summary="hierarchical feature subset selection: OOB goodness of bagged "
                         "per-subspace linear SVMs + bestK (Gao & Fan, MIR 2005, Alg. 1-2)")
METHODS.register("hfss-svm", HFSSOneShotSVM, family="multi-view", paper="hfss",
                 summary="one-shot linear SVM (C=1) on all subspaces concatenated "
                         "(Gao & Fan, MIR 2005, Sec. 5.5 baseline)")
