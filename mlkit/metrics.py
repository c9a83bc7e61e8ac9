"""Evaluation metrics: NIST average precision, Mean-AP, Hamming error, accuracy, macro-F1
(Student-t confidence intervals: :mod:`mlkit.stats`, re-exported here).

Naming follows scikit-learn: ``*_score`` is higher-is-better, ``*_error`` lower-is-better.
Every metric takes ``(y_true, y_score)`` where ``y_score`` is what the estimator's
``decision_function`` returns (ranking metrics) or ``predict`` returns (label metrics); the
registry entry says which with ``needs="score"`` or ``needs="predict"``.
"""

import warnings

import numpy as np

from .registry import METRICS
from .stats import mean_confidence_interval  # noqa: F401  (re-exported: moved)

__all__ = [
    "average_precision_score", "mean_average_precision_score", "hamming_error",
    "accuracy_score", "macro_f1_score", "mean_confidence_interval",
]


def _as_positive_mask(y_true):
    y = np.asarray(y_true)
    if y.dtype == bool:
        return y
    return y > 0


def average_precision_score(y_true, y_score):
    """Non-interpolated average precision in the TREC/NIST form, per column.

    .. math:: AP = \\frac{1}{R} \\sum_{j=1}^{n} I_j \\frac{R_j}{j}

    over the ranking of the examples by decreasing ``y_score`` (Yan et al., KDD 2007, Sec. 6.2.1):
    ``R`` is the number of positives, ``I_j`` is 1 when the example at rank ``j`` is positive,
    and ``R_j`` is the number of positives in the top ``j``. Ties are ranked in input order
    (a stable sort), as a run file written in that order would be; on tie-free scores this
    equals :func:`sklearn.metrics.average_precision_score`.

    Parameters
    ----------
    y_true : array of shape (n,) or (n, L)
        Relevance: 1/0, +1/-1 or boolean.
    y_score : array of the same shape
        Ranking scores, higher first.

    Returns
    -------
    float or ndarray of shape (L,)
        AP per column; NaN for a column with no positive example (AP is undefined there).
    """
    pos = _as_positive_mask(y_true)
    score = np.asarray(y_score, dtype=float)
    if pos.shape != score.shape:
        raise ValueError(f"y_true has shape {pos.shape} but y_score has shape {score.shape}")
    one_d = pos.ndim == 1
    pos = pos.reshape(len(pos), -1)
    score = score.reshape(len(score), -1)
    order = np.argsort(-score, axis=0, kind="stable")
    ranked = np.take_along_axis(pos, order, axis=0).astype(float)
    hits = np.cumsum(ranked, axis=0)
    ranks = np.arange(1, len(ranked) + 1, dtype=float)[:, None]
    n_pos = ranked.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = (ranked * hits / ranks).sum(axis=0) / n_pos
    ap[n_pos == 0] = np.nan
    return float(ap[0]) if one_d else ap


def mean_average_precision_score(y_true, y_score):
    """Mean-AP: the mean over labels of :func:`average_precision_score`.

    Labels with no positive example in ``y_true`` are left out of the mean (their AP is
    undefined), with a warning naming how many.
    """
    ap = np.atleast_1d(average_precision_score(y_true, y_score))
    undefined = np.isnan(ap)
    if undefined.all():
        warnings.warn("no label has a positive example; Mean-AP is undefined", UserWarning)
        return float("nan")
    if undefined.any():
        warnings.warn(
            f"{int(undefined.sum())} of {ap.size} labels have no positive example and are "
            "left out of Mean-AP", UserWarning,
        )
    return float(ap[~undefined].mean())


def hamming_error(y_true, y_score):
    """Fraction of (example, label) pairs whose sign is wrong: mean of [sign F_l(x_i) != y_il].

    The error of Fig. 4 of Yan et al. (KDD 2007). ``y_score`` is the decision function,
    thresholded at 0.
    """
    pos = _as_positive_mask(y_true)
    return float(np.mean(pos != (np.asarray(y_score) > 0)))


def accuracy_score(y_true, y_pred):
    """Fraction of examples whose predicted label equals the true one."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has shape {y_true.shape} but y_pred has shape {y_pred.shape}")
    return float(np.mean(y_true == y_pred))


def macro_f1_score(y_true, y_pred):
    """Unweighted mean over classes of F1 = 2 TP / (2 TP + FP + FN).

    Classes are those present in ``y_true`` or ``y_pred``; a class with 2TP+FP+FN = 0 scores 0.
    """
    y_true, y_pred = np.asarray(y_true).ravel(), np.asarray(y_pred).ravel()
    classes, inverse = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    t, p = inverse[: len(y_true)], inverse[len(y_true):]
    k = len(classes)
    tp = np.bincount(t[t == p], minlength=k)
    fp = np.bincount(p, minlength=k) - tp
    fn = np.bincount(t, minlength=k) - tp
    denom = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denom, out=np.zeros(k), where=denom > 0)
    return float(f1.mean())


METRICS.register("mean_ap", mean_average_precision_score, needs="score", greater_is_better=True,
                 label="Mean-AP")
METRICS.register("hamming_error", hamming_error, needs="score", greater_is_better=False,
                 label="error", axis_label="Hamming error")
METRICS.register("accuracy", accuracy_score, needs="predict", greater_is_better=True,
                 label="accuracy")
METRICS.register("macro_f1", macro_f1_score, needs="predict", greater_is_better=True,
                 label="macro-F1")
