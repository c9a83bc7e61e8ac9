"""Input checks shared by every mlkit estimator (the role of sklearn's ``check_array``)."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array

__all__ = ["check_multilabel_Y", "check_bags", "check_bag_labels", "check_views",
           "check_groups"]


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


def _as_bag(bag, b, name):
    """One bag as a 2-D float array or CSR matrix; errors name the bag."""
    if sp.issparse(bag):
        bag = sp.csr_matrix(bag, dtype=float)
    else:
        try:
            bag = np.asarray(bag, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: bag {b} could not be converted to a float array: "
                             f"{exc}") from None
    if bag.ndim != 2:
        raise ValueError(
            f"{name}: bag {b} is an array of shape {bag.shape}; every bag must be a 2-D "
            "(n_instances, n_features) array (use bag.reshape(1, -1) for a one-instance bag)"
        )
    if bag.shape[0] == 0:
        raise ValueError(f"{name}: bag {b} has 0 instances; every bag needs at least one row")
    return bag


def check_bags(bags, estimator, *, reset_dim=None):
    """Validate multi-instance input and return it as one flat instance matrix plus offsets.

    Parameters
    ----------
    bags : list of array-like or sparse matrices
        Bag ``b`` is an (n_b, d) array-like or scipy.sparse matrix whose rows are its
        instances. A list or tuple is required (an ndarray is ambiguous: pass ``list(X)``).
        Dense and sparse bags may be mixed; the result is then CSR.
    estimator : object
        The caller, named in error messages.
    reset_dim : int or None, default=None
        The number of features the bags must have: the fitted ``n_features_in_`` when
        predicting, None when fitting (any dimension, the same for every bag).

    Returns
    -------
    X : ndarray of shape (n_instances, d), float, or CSR matrix
        The instances of all bags stacked in bag order (CSR if any bag is sparse).
    offsets : ndarray of int64, shape (n_bags + 1,)
        Bag ``b`` is ``X[offsets[b]:offsets[b + 1]]``.
    """
    name = type(estimator).__name__
    if not isinstance(bags, (list, tuple)):
        raise TypeError(
            f"{name} expects the bags as a list of (n_instances, n_features) arrays, got "
            f"{type(bags).__name__}; e.g. pass list(arr) for a 3-D array of equal-size bags "
            "or MultiInstanceDataset.bags"
        )
    if len(bags) == 0:
        raise ValueError(f"{name}: got 0 bags; at least one bag is required")
    bags = [_as_bag(bag, b, name) for b, bag in enumerate(bags)]
    dims = np.array([bag.shape[1] for bag in bags])
    if reset_dim is not None and np.any(dims != reset_dim):
        b = int(np.flatnonzero(dims != reset_dim)[0])
        raise ValueError(f"{name}: bag {b} has {dims[b]} features, but {name} was fitted "
                         f"with {reset_dim} features")
    if np.any(dims != dims[0]):
        b = int(np.flatnonzero(dims != dims[0])[0])
        raise ValueError(f"{name}: bag {b} has {dims[b]} features but bag 0 has {dims[0]}; "
                         "every bag must have the same number of features (columns)")
    if dims[0] == 0:
        raise ValueError(f"{name}: the bags have 0 features; at least one is required")
    sizes = np.array([bag.shape[0] for bag in bags], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    if any(sp.issparse(bag) for bag in bags):
        X = sp.vstack([sp.csr_matrix(bag) for bag in bags], format="csr")
        values, rows = X.data, np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    else:
        X = np.concatenate(bags, axis=0)
        values, rows = X, None
    bad = ~np.isfinite(values)
    if bad.any():
        first = np.argwhere(bad)[0]
        row = int(first[0] if rows is None else rows[first[0]])
        b = int(np.searchsorted(offsets, row, side="right") - 1)
        raise ValueError(f"{name}: bag {b} contains NaN or infinity (its instance "
                         f"{row - offsets[b]}); impute or drop those values before fitting")
    return X, offsets


def check_bag_labels(y, n_bags, estimator):
    """Validate bag labels and encode them one-vs-rest as +-1 columns.

    Parameters
    ----------
    y : array-like of shape (n_bags,)
        Class labels of any type: {-1, +1}, {0, 1}, strings, several classes.
    n_bags : int
        Number of bags, which y must match.
    estimator : object
        The caller, named in error messages.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        The sorted distinct labels.
    Y : ndarray of shape (n_bags, 1) or (n_bags, n_classes), float
        With two classes one column, +1 for ``classes[1]`` and -1 for ``classes[0]``;
        otherwise column c is +1 for class c and -1 for the others (one-vs-rest).
    """
    name = type(estimator).__name__
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} expects y of shape (n_bags,), got an array of shape "
                         f"{y.shape}; one label per bag")
    if len(y) != n_bags:
        raise ValueError(f"{name}: got {n_bags} bags but y has {len(y)} labels")
    if y.dtype.kind in "fcO":
        missing = np.asarray(y != y, dtype=bool)   # NaN is the only value unequal to itself
        if missing.any():
            raise ValueError(f"{name}: y contains NaN (bag {int(np.flatnonzero(missing)[0])}); "
                             "every bag needs a label")
    y_type = type_of_target(y, input_name="y")
    if y_type not in ("binary", "multiclass"):
        raise ValueError(f"{name}: unknown label type {y_type!r}; multi-instance "
                         "classification needs discrete class labels per bag")
    classes, idx = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"{name}: y has only one class ({classes[0]!r}); at least 2 classes "
                         "are needed")
    if len(classes) == 2:
        return classes, np.where(idx == 1, 1.0, -1.0)[:, None]
    return classes, np.where(idx[:, None] == np.arange(len(classes)), 1.0, -1.0)


def _as_view(X, v, name, accept_sparse):
    """One view as a 2-D float array or CSR matrix with finite values; errors name the view."""
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError(f"{name}: view {v} is a sparse matrix; this estimator needs dense "
                            "views (use X.toarray())")
        X = sp.csr_matrix(X, dtype=float)
        values = X.data
    else:
        try:
            X = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: view {v} could not be converted to a float array: "
                             f"{exc}") from None
        values = X
    if X.ndim != 2:
        raise ValueError(f"{name}: view {v} is an array of shape {X.shape}; every view must be "
                         "a 2-D (n_samples, n_features) matrix")
    if X.shape[1] == 0:
        raise ValueError(f"{name}: view {v} has 0 features")
    if not np.isfinite(values).all():
        raise ValueError(f"{name}: view {v} contains NaN or infinity; impute or drop those "
                         "values before fitting")
    return X


def check_views(views, estimator, *, fitted_dims=None, accept_sparse=True):
    """Validate multi-view input and return its views and names.

    Parameters
    ----------
    views : Views, list or tuple of matrices, or dict of name -> matrix
        One (n_samples, d_v) array-like or scipy.sparse matrix per view (modality, feature
        group), all with the same rows. A :class:`mlkit.datasets.Views` (what a
        ``MultiViewDataset`` gives as ``inputs``) keeps its view names.
    estimator : object
        The caller, named in error messages.
    fitted_dims : list of int, optional
        The view dimensions seen in ``fit`` (when predicting): the views must match them.
    accept_sparse : bool, default=True
        Whether sparse views are allowed (returned as CSR, never densified).

    Returns
    -------
    Xs : list of ndarray or CSR matrix, float
        The views in order.
    names : list of str
        Their names ("view 1", ... when none were given).
    """
    from ..datasets._containers import Views

    name = type(estimator).__name__
    if isinstance(views, Views):
        mats, names = list(views.views), list(views.names)
    elif isinstance(views, dict):
        names, mats = [str(k) for k in views], list(views.values())
    elif isinstance(views, (list, tuple)):
        mats, names = list(views), [f"view {v + 1}" for v in range(len(views))]
    else:
        raise TypeError(
            f"{name} expects the views as a list or dict of (n_samples, n_features) matrices "
            f"or a mlkit.datasets.Views, got {type(views).__name__}; for one feature matrix "
            "with column groups use check_groups / the estimator's `groups` parameter")
    if not mats:
        raise ValueError(f"{name}: got 0 views; at least one is required")
    Xs = [_as_view(X, v, name, accept_sparse) for v, X in enumerate(mats)]
    rows = [X.shape[0] for X in Xs]
    if len(set(rows)) != 1:
        raise ValueError(f"{name}: the views have different numbers of rows {rows}; every view "
                         "must describe the same samples")
    if rows[0] == 0:
        raise ValueError(f"{name}: the views have 0 samples; at least one is required")
    if fitted_dims is not None:
        dims = [X.shape[1] for X in Xs]
        if list(dims) != list(fitted_dims):
            raise ValueError(f"{name}: views of dimensions {dims}, but {name} was fitted on "
                             f"views of dimensions {list(fitted_dims)}")
    return Xs, names


def check_groups(X, groups, estimator):
    """Split one feature matrix into views by a column-groups description.

    Parameters
    ----------
    X : (n_samples, n_features) array-like or sparse matrix
    groups : dict of name -> column indices or slice, or list of column-index lists
        Every column belongs to at most one group; the groups need not cover all columns.
    estimator : object
        The caller, named in error messages.

    Returns
    -------
    Views
        One view per group, in the order given.
    """
    from ..datasets._containers import Views

    name = type(estimator).__name__
    X = _as_view(X, 0, name, accept_sparse=True)
    d = X.shape[1]
    items = list(groups.items()) if isinstance(groups, dict) else \
        [(f"group {g + 1}", cols) for g, cols in enumerate(groups)]
    if not items:
        raise ValueError(f"{name}: groups is empty; give at least one group of columns")
    seen = np.zeros(d, dtype=bool)
    views, names = [], []
    for gname, cols in items:
        idx = np.arange(d)[cols] if isinstance(cols, slice) else np.asarray(cols, dtype=int)
        if idx.size == 0:
            raise ValueError(f"{name}: group {gname!r} has no columns")
        if idx.min() < 0 or idx.max() >= d:
            raise ValueError(f"{name}: group {gname!r} names columns outside 0..{d - 1}")
        if seen[idx].any():
            raise ValueError(f"{name}: group {gname!r} shares columns with an earlier group")
        seen[idx] = True
        views.append(X[:, idx])
        names.append(str(gname))
    return Views(views, names)
