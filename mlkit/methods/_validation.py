"""Input checks shared by every mlkit estimator (the role of sklearn's ``check_array``)."""

import numpy as np
from sklearn.utils.validation import check_array

__all__ = ["check_multilabel_Y"]


def check_multilabel_Y(Y, n_samples, estimator):
    """Validate a multi-label target and return it as a float matrix of +-1.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        0/1 or -1/+1 entries (booleans are read as 0/1).
    n_samples : int
        Number of rows of X, which Y must match.
    estimator : object
        The caller, named in error messages.

    Returns
    -------
    Y_pm : ndarray of shape (n_samples, n_labels), float
        The labels as -1/+1.
    encoding : {"01", "pm1"}
        The input's encoding, used to answer ``predict`` in the same form.
    """
    name = type(estimator).__name__
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError(
            f"{name} expects Y of shape (n_samples, n_labels), got an array of shape {Y.shape}; "
            "reshape a single label with Y.reshape(-1, 1)"
        )
    if Y.shape[0] != n_samples:
        raise ValueError(
            f"{name}: X has {n_samples} samples but Y has {Y.shape[0]} rows"
        )
    if Y.shape[1] == 0:
        raise ValueError(f"{name}: Y has 0 labels; at least one is required")
    Y = check_array(Y, dtype=float, ensure_all_finite=True, input_name="Y")
    values = np.unique(Y)
    if np.isin(values, (0.0, 1.0)).all():
        encoding, Y_pm = "01", 2.0 * Y - 1.0
    elif np.isin(values, (-1.0, 1.0)).all():
        encoding, Y_pm = "pm1", Y.copy()
    else:
        bad = values[~np.isin(values, (-1.0, 0.0, 1.0))]
        shown = bad[:5] if bad.size else values
        raise ValueError(
            f"{name}: Y must hold 0/1 or -1/+1 labels, found the values {shown.tolist()}"
        )
    one_class = np.flatnonzero((Y_pm > 0).all(axis=0) | (Y_pm < 0).all(axis=0))
    if one_class.size:
        raise ValueError(
            f"{name}: label column(s) {one_class[:10].tolist()} have only one class in the "
            "training data; every label needs positive and negative examples"
        )
    return Y_pm, encoding
