"""Random sampling shared by the ensemble methods: balanced bootstraps and random subspaces."""

import numpy as np
from sklearn.svm import SVC

__all__ = ["bootstrap", "out_of_bag", "balanced_bootstrap", "random_subspace",
           "n_subspace_features", "fit_on_sample"]


def bootstrap(n, rng, size=None, *, y=None, max_tries=100):
    """Indices of a bootstrap sample: ``size`` (default ``n``) draws with replacement from
    ``range(n)``, the one sampling routine of every bagged ensemble in mlkit.

    Parameters
    ----------
    n : int
        Number of examples to draw from.
    rng : numpy.random.Generator
    size : int, optional
        Number of draws (default ``n``).
    y : array-like of shape (n,), optional
        Class labels: when given, a sample that misses a class is redrawn (up to
        ``max_tries`` times), so every learner sees every class.
    max_tries : int, default=100

    Returns
    -------
    samples : ndarray of int, shape (size,)

    Examples
    --------
    >>> import numpy as np
    >>> s = bootstrap(5, np.random.default_rng(0))
    >>> s.shape, bool(out_of_bag(s, 5).any())
    ((5,), True)
    """
    size = n if size is None else int(size)
    if y is None:
        return rng.integers(0, n, size)
    y = np.asarray(y)
    n_classes = len(np.unique(y))
    for _ in range(max_tries):
        samples = rng.integers(0, n, size)
        if len(np.unique(y[samples])) == n_classes:
            return samples
    raise ValueError(f"no bootstrap sample of {size} draws in {max_tries} held every one of "
                     f"the {n_classes} classes; a class has too few examples")


def out_of_bag(samples, n):
    """Boolean mask of the examples of ``range(n)`` that ``samples`` never drew."""
    mask = np.ones(n, dtype=bool)
    mask[samples] = False
    return mask


def balanced_bootstrap(positive, n_draws, rng):
    """Indices of a balanced ("asymmetric") bootstrap sample, step 1(b)-(c) of Algorithm 1 [1]_.

    ``n_draws`` examples in total: ``round(n_draws / 2)`` drawn with replacement from the
    positives and the rest from the negatives, so both classes are always present.

    Parameters
    ----------
    positive : ndarray of bool, shape (N,)
    n_draws : int
        Total sample size N * rd (at least 2).
    rng : numpy.random.Generator

    References
    ----------
    .. [1] R. Yan, J. Tesic, J. R. Smith. Model-shared subspace boosting for multi-label
       classification. KDD 2007, pp. 834-843.
    """
    pos = np.flatnonzero(positive)
    neg = np.flatnonzero(~positive)
    n_pos = int(round(n_draws / 2))
    n_neg = max(1, n_draws - n_pos)
    return np.concatenate([rng.choice(pos, max(1, n_pos)), rng.choice(neg, n_neg)])


def n_subspace_features(n_features, rf):
    """M * rf rounded, at least one feature."""
    return max(1, int(round(n_features * rf)))


def random_subspace(n_features, rf, rng):
    """Sorted feature indices of a random subspace of M * rf features, drawn without
    replacement (step 1(d) of Algorithm 1 [1]_; "a random sample from the feature indices")."""
    k = n_subspace_features(n_features, rf)
    return np.sort(rng.choice(n_features, k, replace=False))


def fit_on_sample(estimator, X, y, samples, features=None):
    """Fit ``estimator`` on the rows ``samples`` of ``(X, y)`` (a sample drawn with replacement),
    restricted to the columns ``features`` when given.

    For an SVM the draws are folded into weights: each distinct row enters once with
    ``sample_weight`` = its number of draws. This is the same problem, not an approximation:
    in the dual of an SVM, c identical copies of a point with box 0 <= a_j <= C act only through
    their sum, which ranges over 0 <= sum_j a_j <= cC, i.e. one point with cost cC. The decision
    function is the same (up to the solver's tolerance), each support vector is stored once
    and the kernel the solver works on shrinks by the duplicate rows (about a third of a
    bootstrap of N draws from N). It holds for an SVC whose problem does not depend on the
    rows' multiplicities otherwise: a numeric ``gamma`` (``"scale"`` takes the variance of
    the rows it sees) and no ``class_weight``. Other learners get the duplicated rows as drawn.
    """
    if _weights_equal_duplicates(estimator):
        samples, counts = np.unique(samples, return_counts=True)
        return estimator.fit(_rows(X, samples, features), y[samples],
                             sample_weight=counts.astype(float))
    return estimator.fit(_rows(X, samples, features), y[samples])


def _weights_equal_duplicates(estimator):
    return (isinstance(estimator, SVC) and estimator.class_weight is None
            and not isinstance(estimator.gamma, str))


def _rows(X, samples, features):
    rows = X[samples]
    return rows if features is None else rows[:, features]
