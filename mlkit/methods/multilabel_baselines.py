"""The non-boosting rows of Table 2 of Yan et al. (KDD 2007): Baseline, Bagging, Subspace.

* :class:`BaselineSVM`: one RBF SVM per label on all training examples and all features;
* :class:`BaggingSVM`: ``n_estimators`` SVMs per label on bootstrap samples, scores averaged;
* :class:`Subspace`: one subspace base model per label (steps 1(b)-(e) of Algorithm 1),
  i.e. :class:`~mlkit.methods.RSBag` with T = L.

References
----------
.. [1] R. Yan, J. Tesic, J. R. Smith. Model-shared subspace boosting for multi-label
   classification. KDD 2007, pp. 834-843.
"""

import time
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from ..registry import METHODS
from ._base_models import svm_scores
from ._multilabel import MultiLabelClassifier
from ._sampling import bootstrap, fit_on_sample
from .mssboost import RSBag

__all__ = ["BaselineSVM", "BaggingSVM", "Subspace"]


def _fit_svc(X, y, samples, gamma, C):
    svc = SVC(kernel="rbf", gamma=gamma, C=C)
    return svc.fit(X, y) if samples is None else fit_on_sample(svc, X, y, samples)


class BaggingSVM(MultiLabelClassifier):
    """``n_estimators`` RBF SVMs per label, each on N draws with replacement; F_l is the mean
    of their decision values (Table 2 of [1]_, "10 bagging models learned via the baseline
    classifier for each label"; the bootstrap size and the combination are not stated: N
    draws and the mean are our choice). A draw missing one class of a rare label is redrawn.

    Parameters
    ----------
    n_estimators : int, default=10
    gamma : float, default=0.05
        rho of K(x, z) = exp(-rho ||x - z||^2) (Sec. 6.2.1 of [1]_).
    C : float, default=1.0
        SVM cost; not stated in the paper.
    n_jobs : int, default=None
        Threads fitting SVMs in parallel (libsvm releases the GIL); never changes results.
    random_state : int, RandomState or None

    Attributes
    ----------
    estimators_ : list of list of SVC
        ``estimators_[l]`` holds label l's SVMs.
    model_size_ : int
        Sum over all SVMs of (#support vectors) x (#features).
    fit_cpu_s_ : float
        CPU seconds of ``fit`` in this process (``time.process_time``; threads included),
        which other processes on a shared machine do not inflate.
    """

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }
    _bootstrap = True
    numerics_revision = 2     # 2: bootstraps by the shared sampling.bootstrap (Generator)

    #: constructor parameters that make the common tests' fits fast
    _quick_params = dict(n_estimators=3, gamma=0.5, random_state=0)

    def __init__(self, n_estimators=10, *, gamma=0.05, C=1.0, n_jobs=None, random_state=None):
        self.n_estimators = n_estimators
        self.gamma = gamma
        self.C = C
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _n_models(self):
        return self.n_estimators

    def fit(self, X, Y):
        """Fit the SVMs of every label (in parallel over labels and bags)."""
        cpu = time.process_time()
        X, Y = self._check_fit_input(X, Y)
        n, n_labels = Y.shape
        # one seed from the sklearn-style random_state, then numpy's Generator
        rng = np.random.default_rng(check_random_state(getattr(self, "random_state", None))
                                    .randint(np.iinfo(np.int32).max))
        jobs = []
        for l in range(n_labels):
            for _ in range(self._n_models()):
                # N draws holding both classes (redrawn for rare labels)
                samples = bootstrap(n, rng, y=Y[:, l]) if self._bootstrap else None
                jobs.append((l, samples))
        fitted = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_fit_svc)(X, Y[:, l], s, self.gamma, self.C) for l, s in jobs)
        self.estimators_ = [[] for _ in range(n_labels)]
        for (l, _), svc in zip(jobs, fitted):
            self.estimators_[l].append(svc)
        self.fit_cpu_s_ = time.process_time() - cpu
        return self

    def decision_function(self, X):
        """F_l(x): the mean decision value of label l's SVMs; (n, L) or (n,) for a 1-D y.

        Scored with the same BLAS kernel product as the subspace models, so prediction
        times compare like with like."""
        X = self._check_X(X)
        F = np.column_stack([np.mean([svm_scores(svc, X) for svc in models], axis=0)
                             for models in self.estimators_])
        return self._shape_scores(F)

    @property
    def n_models_(self):
        """Number of SVMs evaluated at prediction time."""
        return sum(len(models) for models in self.estimators_)

    @property
    def model_size_(self):
        """Sum over all SVMs of (#support vectors) x (#features) (Table 2 of [1]_)."""
        return int(sum(svc.support_vectors_.shape[0] * svc.support_vectors_.shape[1]
                       for models in self.estimators_ for svc in models))

    @property
    def n_support_vectors_(self):
        """Support vectors of every SVM, shape (L, n_estimators)."""
        return np.array([[svc.support_vectors_.shape[0] for svc in models]
                         for models in self.estimators_])

    @property
    def support_fraction_(self):
        """Mean over the SVMs of (#support vectors) / (#distinct training rows it saw): near
        1 means the kernel is too flat or too narrow for the SVM to be sparse."""
        return float(np.mean([svc.support_vectors_.shape[0] / svc.shape_fit_[0]
                              for models in self.estimators_ for svc in models]))

    def run_record_extras(self):
        """Fitted facts for the run record: SVMs, support vectors and model size."""
        return {"n_models": self.n_models_, "model_size": self.model_size_,
                "fit_cpu_s": round(self.fit_cpu_s_, 4),
                "support_vectors": int(self.n_support_vectors_.sum()),
                "support_fraction": round(self.support_fraction_, 4)}


class BaselineSVM(BaggingSVM):
    """One RBF SVM per label on all training data and features (Baseline of Table 2 of [1]_).

    Parameters
    ----------
    gamma : float, default=0.05
        The Baseline's own rho, K(x, z) = exp(-rho ||x - z||^2) on all M features; chosen by
        CV of the Baseline (:func:`mlkit.papers.mssboost.selection.select_baseline`), apart
        from the subspace base models' ``gamma`` of Subspace/RSBag/NSBoost/MSSBoost.
    C : float, default=1.0
        The Baseline's own SVM cost (not stated in the paper), selected like ``gamma``.
    n_jobs : int, default=None
        Threads fitting the per-label SVMs.
    """

    _parameter_constraints = {k: v for k, v in BaggingSVM._parameter_constraints.items()
                              if k not in ("n_estimators", "random_state")}
    _bootstrap = False
    numerics_revision = 1     # draws no bootstrap: BaggingSVM's revision 2 changed nothing here

    #: constructor parameters that make the common tests' fits fast
    _quick_params = dict(gamma=0.5)

    def __init__(self, *, gamma=0.05, C=1.0, n_jobs=None):
        self.gamma = gamma
        self.C = C
        self.n_jobs = n_jobs

    def _n_models(self):
        return 1


class Subspace(RSBag):
    """One subspace base model per label: RSBag with T = L (Subspace of Table 2 of [1]_).

    Parameters
    ----------
    base_learner, rd, rf, score_bound, kernel_dtype, n_jobs, random_state
        As in :class:`~mlkit.methods.RSBag` (which also has ``n_estimators``).
    gamma, C
        The subspace SVM's (the base model's), chosen apart from the Baseline's
        (:func:`mlkit.papers.mssboost.selection.select_base_model`).
    """

    _parameter_constraints = {k: v for k, v in RSBag._parameter_constraints.items()
                              if k != "n_estimators"}

    #: constructor parameters that make the common tests' fits fast
    _quick_params = dict(base_learner="stump", rd=0.5, rf=1.0, random_state=0)

    def __init__(self, *, base_learner="svm", rd=0.1, rf=0.1, gamma=0.05, C=1.0,
                 score_bound="clip", kernel_dtype="float64", n_jobs=None,
                 random_state=None):
        self.base_learner = base_learner
        self.rd = rd
        self.rf = rf
        self.gamma = gamma
        self.C = C
        self.score_bound = score_bound
        self.kernel_dtype = kernel_dtype
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _n_rounds(self, n_labels):
        return n_labels


METHODS.register("baseline-svm", BaselineSVM, summary="one RBF SVM per label on all data (Yan et al. 2007, Table 2)",
                 family="multilabel", paper="mssboost")
METHODS.register("bagging-svm", BaggingSVM, summary="10 bagged RBF SVMs per label (Yan et al. 2007, Table 2)",
                 family="multilabel", paper="mssboost")
METHODS.register("subspace", Subspace, summary="one subspace model per label (Yan et al. 2007, Table 2)",
                 family="multilabel", paper="mssboost")
