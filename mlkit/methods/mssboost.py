"""Random subspace bagging and (model-shared) subspace boosting for multi-label data [1]_.

``RSBag`` is Algorithm 1 (round-robin random subspace bagging), ``MSSBoost`` is Algorithm 2
(model-shared subspace boosting) and ``NSBoost`` its non-shared counterpart (Sec. 4.1). All
three keep ``F_l(x) = sum_t alpha_l^t h_t(x)`` for every label ``l`` and differ only in how the
next base model ``h_t`` and its weights ``alpha^t`` are chosen.

References
----------
.. [1] R. Yan, J. Tesic, J. R. Smith. Model-shared subspace boosting for multi-label
   classification. KDD 2007, pp. 834-843.
"""

import time
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy import stats
from scipy.special import expit
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..registry import METHODS
from ._base_models import BOUNDS, fit_subspace_model, make_base_learner
from ._multilabel import MultiLabelClassifier

__all__ = ["RSBag", "NSBoost", "MSSBoost", "newton_step", "joint_loss", "chi2_significant"]

#: Lower bound on the Newton weights w_il (footnote 4 of [1]).
MIN_WEIGHT = 1e-6
#: Elements of one (N x chunk) block when evaluating the joint loss of many candidates.
_LOSS_BLOCK = 1 << 22


def newton_step(H, W, Z):
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

    Returns
    -------
    alpha : ndarray of shape (K, L)
        Zero where a candidate is zero on every example.
    """
    num = H.T @ Z
    den = (H * H).T @ W
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


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


def joint_loss(F, Y, H, alpha):
    """Joint logistic loss after a step, for every candidate (Eqn 1 of [1]_).

    .. math:: C_k = \\sum_{i,l} \\log(1 + \\exp(-y_{il} (F_l(x_i) + \\alpha_{kl} h_k(x_i))))

    Only the (k, l) pairs with a non-zero alpha are evaluated (the others keep the current
    loss of label l), in blocks of at most ``_LOSS_BLOCK`` elements, so NSBoost costs O(NK)
    and MSSBoost O(NKL) without an (N, K, L) array in memory. The work runs on row-major
    transposes (labels and candidates as rows), so every gather is a contiguous copy.

    Parameters
    ----------
    F : ndarray of shape (N, L)
        Current decision values.
    Y : ndarray of shape (N, L)
        Labels in {-1, +1}.
    H : ndarray of shape (N, K)
    alpha : ndarray of shape (K, L)

    Returns
    -------
    loss : ndarray of shape (K,)
    """
    neg_margin = np.ascontiguousarray((-Y * F).T)          # (L, N): -y_il F_l(x_i)
    base = _softplus(neg_margin).sum(axis=1)               # (L,) current loss per label
    loss = np.full(H.shape[1], base.sum())
    kk, ll = np.nonzero(alpha)
    if kk.size == 0:
        return loss
    YT = np.ascontiguousarray(Y.T, dtype=float)
    HT = np.ascontiguousarray(H.T)
    step = max(1, _LOSS_BLOCK // max(1, F.shape[0]))
    for start in range(0, kk.size, step):
        k, l = kk[start:start + step], ll[start:start + step]
        arg = YT[l]
        arg *= HT[k]
        arg *= -alpha[k, l][:, None]
        arg += neg_margin[l]
        np.add.at(loss, k, _softplus(arg, out=arg).sum(axis=1) - base[l])
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
    n = H.shape[0]
    h_pos = (H > 0).astype(float)
    y_pos = (Y > 0).astype(float)
    a = h_pos.T @ y_pos                       # h > 0, y > 0
    n_h = h_pos.sum(axis=0)[:, None]          # h > 0
    n_y = y_pos.sum(axis=0)[None, :]          # y > 0
    b, c = n_h - a, n_y - a
    d = n - a - b - c
    den = n_h * (n - n_h) * n_y * (n - n_y)
    chi2 = np.divide(n * (a * d - b * c) ** 2, den, out=np.zeros_like(a), where=den > 0)
    return chi2 >= stats.chi2.isf(p_value, df=1)


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
        "chi2_filter": ["boolean"],
        "chi2_p_value": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators=100, *, base_learner="svm", rd=0.1, rf=0.1, gamma=0.05,
                 C=1.0, score_bound="clip", chi2_filter=False, chi2_p_value=0.025,
                 n_jobs=None, random_state=None):
        self.n_estimators = n_estimators
        self.base_learner = base_learner
        self.rd = rd
        self.rf = rf
        self.gamma = gamma
        self.C = C
        self.score_bound = score_bound
        self.chi2_filter = chi2_filter
        self.chi2_p_value = chi2_p_value
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
        # the loop's products are small: one BLAS thread avoids OpenBLAS's thread wake-up
        # latency, which dominates them on a busy machine
        with threadpool_limits(limits=1, user_api="blas"):
            self.estimators_, self.alphas_ = self._build(X, Y, seeds, learner)
        return self

    def _n_models_learned(self, n_labels):
        return self.n_estimators

    def _fit_models(self, X, Y, labels, seeds, learner):
        """Learn base models for the given labels with the given seeds (in parallel)."""
        kw = dict(rd=self.rd, rf=self.rf, learner=learner, bound=self.score_bound)
        return Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(fit_subspace_model)(X, Y[:, lab] > 0, lab, seed=s, **kw)
            for lab, s in zip(labels, seeds)
        )

    # -- prediction ----------------------------------------------------------------------
    def base_predictions(self, X, *, return_times=False):
        """h_t(x) of every selected base model: an array of shape (n_samples, T); with
        ``return_times`` also the seconds each model took (prediction-cost curves)."""
        X = self._check_X(X)
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
            yield self._labels_from_scores(F)

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
        RBF width rho of K(x, z) = exp(-rho ||x - z||^2) (the paper's value, Sec. 6.2.1).
    C : float, default=1.0
        SVM cost; not stated in the paper.
    score_bound : {"clip", "tanh", "sign"}, default="clip"
        How a base model's score is bounded to [-1, 1]; not stated in the paper.
    chi2_filter : bool, default=False
        Unused by RSBag (all weights are fixed); kept so the three methods share parameters.
    chi2_p_value : float, default=0.025
        See ``chi2_filter``.
    n_jobs : int, default=None
        Threads used to learn independent base models; never changes the result.
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

    _parameter_constraints = {
        **_SubspaceEnsemble._parameter_constraints,
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"zero", "prior"})],
    }

    def __init__(self, n_estimators=100, *, base_learner="svm", rd=0.1, rf=0.1, gamma=0.05,
                 C=1.0, score_bound="clip", chi2_filter=False, chi2_p_value=0.025,
                 n_candidates=1, init="zero", n_jobs=None, random_state=None):
        super().__init__(n_estimators, base_learner=base_learner, rd=rd, rf=rf, gamma=gamma,
                         C=C, score_bound=score_bound, chi2_filter=chi2_filter,
                         chi2_p_value=chi2_p_value, n_jobs=n_jobs, random_state=random_state)
        self.n_candidates = n_candidates
        self.init = init

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

    def _build(self, X, Y, seeds, learner):
        n, n_labels = Y.shape
        pool_labels = np.tile(np.arange(n_labels), self.n_candidates)   # l(k)
        n_pool = pool_labels.size
        pool = self._fit_models(X, Y, pool_labels, seeds[:n_pool], learner)
        H = np.column_stack([h.predict(X) for h in pool])
        own = pool_labels[:, None] == np.arange(n_labels)[None, :]      # own[k, l]: l == l(k)
        y_star = (Y + 1) / 2
        self.init_score_ = self._initial_scores(Y)
        F = np.tile(self.init_score_, (n, 1))
        models, alphas = [], []
        self.train_loss_ = [float(_softplus(-Y * F).sum())]
        for t in range(self.n_estimators):
            P = expit(F)
            alpha = newton_step(H, np.maximum(P * (1 - P), MIN_WEIGHT), y_star - P)
            if not self._sharing:
                alpha[~own] = 0.0
            if self.chi2_filter:
                alpha[~chi2_significant(H, Y, self.chi2_p_value)] = 0.0
            loss = joint_loss(F, Y, H, alpha)
            k = int(np.argmin(loss))
            F += H[:, k:k + 1] * alpha[k]
            models.append(pool[k])
            alphas.append(alpha[k])
            self.train_loss_.append(float(loss[k]))
            # step 2(c): a new candidate for the same label replaces the selected one
            pool[k] = self._fit_models(X, Y, [pool_labels[k]], [seeds[n_pool + t]], learner)[0]
            H[:, k] = pool[k].predict(X)
        self.train_loss_ = np.array(self.train_loss_)
        return models, np.array(alphas)


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
    base_learner, rd, rf, gamma, C, score_bound, n_jobs, random_state
        As in :class:`RSBag`.
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
    learned for label l(k) may only get a non-zero weight for l(k).

    Parameters and attributes are those of :class:`MSSBoost`.
    """

    _sharing = False


METHODS.register("rsbag", RSBag, summary="round-robin random subspace bagging (Yan et al. 2007, Alg. 1)",
                 family="multilabel", paper="mssboost")
METHODS.register("nsboost", NSBoost, summary="non-shared subspace boosting (Yan et al. 2007, Sec. 4.1)",
                 family="multilabel", paper="mssboost")
METHODS.register("mssboost", MSSBoost, summary="model-shared subspace boosting (Yan et al. 2007, Alg. 2)",
                 family="multilabel", paper="mssboost")
