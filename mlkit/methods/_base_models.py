"""Subspace base models: a binary learner fitted on a balanced bootstrap and a random
feature subspace, with its output bounded to [-1, 1] (steps 1(b)-(e) of Algorithm 1 of [1]_).

References
----------
.. [1] R. Yan, J. Tesic, J. R. Smith. Model-shared subspace boosting for multi-label
   classification. KDD 2007, pp. 834-843.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from ..kernels import rbf_kernel
from ._sampling import balanced_bootstrap, fit_on_sample, random_subspace

__all__ = ["SubspaceModel", "make_base_learner", "fit_subspace_model", "svm_scores", "BOUNDS",
           "KERNEL_DTYPES"]

#: How a base learner's real-valued score is mapped into [-1, 1]. The paper requires
#: |h(x)| <= 1 (Sec. 2 of Yan et al., KDD 2007) but does not say how an SVM score is bounded.
BOUNDS = {
    "clip": lambda s: np.clip(s, -1.0, 1.0),
    "tanh": np.tanh,
    "sign": lambda s: np.where(s > 0, 1.0, -1.0),
}


def make_base_learner(base_learner, *, gamma, C, random_state):
    """The unfitted binary learner: ``"svm"`` (RBF SVM, K = exp(-gamma ||x - z||^2), the
    paper's rho = gamma), ``"stump"`` (depth-1 decision tree) or a scikit-learn classifier."""
    if base_learner == "svm":
        return SVC(kernel="rbf", gamma=gamma, C=C)
    if base_learner == "stump":
        return DecisionTreeClassifier(max_depth=1, random_state=random_state)
    est = clone(base_learner)
    if "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    return est


def _is_rbf_svc(est):
    return isinstance(est, SVC) and est.kernel == "rbf" and len(est.classes_) == 2


#: Precision of the kernel evaluation of the SVM base models (``kernel_dtype``).
KERNEL_DTYPES = {"float64": np.float64, "float32": np.float32}


def svm_scores(est, X, *, dtype=None):
    """Decision values of a fitted binary SVC: for an RBF kernel,
    f(x) = sum_i dual_i k(x, sv_i) + b with the kernel from one BLAS product (the same numbers
    as ``SVC.decision_function``, without libsvm's per-row loop); otherwise libsvm's own.

    ``dtype=np.float32`` evaluates the kernel and its product with the dual coefficients in
    single precision (about twice as fast; relative rounding ~1e-7 per kernel entry) and
    returns float64; None (the default) is float64 throughout."""
    if not _is_rbf_svc(est):
        return np.asarray(est.decision_function(X), dtype=float).ravel()
    K = rbf_kernel(X, est.support_vectors_, est._gamma, dtype=dtype)
    dual = est.dual_coef_
    dual = dual.toarray() if sp.issparse(dual) else np.asarray(dual)
    scores = K @ dual.ravel().astype(K.dtype, copy=False)
    return scores.astype(float, copy=False) + est.intercept_[0]


@dataclass
class SubspaceModel:
    """A fitted base model h: its learner, the label it was learned for, its feature subset
    and the indices of its bootstrap sample."""

    estimator: object
    label: int
    features: np.ndarray
    samples: np.ndarray
    bound: str = "clip"
    kernel_dtype: str = "float64"

    def raw_score(self, X):
        """The learner's real-valued output on the model's own features (an RBF SVM's kernel
        in ``kernel_dtype`` precision)."""
        Xs = X[:, self.features]
        est = self.estimator
        if hasattr(est, "decision_function"):
            return svm_scores(est, Xs, dtype=KERNEL_DTYPES[self.kernel_dtype])
        # e.g. a stump: P(y=+1 | leaf) mapped to 2p - 1, already in [-1, 1]
        proba = est.predict_proba(Xs)[:, list(est.classes_).index(1)]
        return 2.0 * proba - 1.0

    def predict(self, X):
        """h(x) in [-1, 1] for every row of X."""
        return BOUNDS[self.bound](self.raw_score(X))

    def describe(self):
        """The fitted model as plain numbers: for a stump (a depth-1 tree) its split on the
        original feature index and its output on either side, h(x) = ``left`` if
        x[feature] <= ``threshold`` else ``right``; otherwise its label, feature count and
        number of support vectors. What a run record keeps, so a figure can redraw the
        model without refitting it."""
        tree = getattr(self.estimator, "tree_", None)
        if tree is not None and tree.node_count == 3:
            pos = list(self.estimator.classes_).index(1)
            value = tree.value[:, 0, :] / tree.value[:, 0, :].sum(axis=1, keepdims=True)
            h = BOUNDS[self.bound](2.0 * value[:, pos] - 1.0)
            return {"label": self.label, "feature": int(self.features[tree.feature[0]]),
                    "threshold": float(tree.threshold[0]),
                    "left": float(h[tree.children_left[0]]),
                    "right": float(h[tree.children_right[0]])}
        n_sv = getattr(self.estimator, "support_vectors_", None)
        return {"label": self.label, "features": int(len(self.features)),
                "support_vectors": None if n_sv is None else int(n_sv.shape[0])}

    @property
    def size(self):
        """Model size as the paper counts it: (#support vectors) x (#features); a model
        without support vectors counts as one vector."""
        n_sv = getattr(self.estimator, "support_vectors_", None)
        n_vectors = 1 if n_sv is None else n_sv.shape[0]
        return int(n_vectors * len(self.features))


def fit_subspace_model(X, y_pos, label, *, rd, rf, learner, bound, seed,
                       kernel_dtype="float64"):
    """Learn one base model for ``label`` (steps 1(b)-(e) of Algorithm 1).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (N, M)
    y_pos : ndarray of bool, shape (N,)
        True where the example is positive for ``label``.
    rd, rf : float
        Data and feature sampling ratios: N * rd balanced bootstrap draws, M * rf features.
    learner : estimator
        Unfitted binary learner (cloned here).
    bound : {"clip", "tanh", "sign"}
    seed : int
        Seed of this model's sampling and learner.
    kernel_dtype : {"float64", "float32"}, default="float64"
        Precision of the model's kernel evaluations at scoring time (never of its fit).
    """
    rng = np.random.default_rng(seed)
    n, m = X.shape
    samples = balanced_bootstrap(y_pos, max(2, int(round(n * rd))), rng)
    features = random_subspace(m, rf, rng)
    est = clone(learner)
    if "random_state" in est.get_params():
        est.set_params(random_state=int(seed % (2**31)))
    fit_on_sample(est, X, np.where(y_pos, 1, -1), samples, features)
    return SubspaceModel(est, int(label), features, samples, bound, kernel_dtype)
