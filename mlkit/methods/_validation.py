"""Input checks shared by every mlkit estimator (the role of sklearn's ``check_array``)."""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, validate_data

__all__ = ["TrainingDataError", "check_multilabel_Y", "check_bags", "check_bag_labels",
           "check_views", "check_view_columns", "check_multiview_input"]


class TrainingDataError(ValueError):
    """The training data cannot support the fit: too few samples, or a class (or a label's
    positive or negative side) missing. The message names what the estimator needs."""


def _shown(value):
    """A label as the user wrote it (``0``, ``'cat'``), not numpy's ``np.int64(0)``."""
    return value.item() if isinstance(value, np.generic) else value


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
        raise TrainingDataError(
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
        raise TrainingDataError(f"{name}: y has only one class ({_shown(classes[0])!r}); at "
                                "least 2 classes are needed")
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
        One (n_samples, d_v) array-like, pandas DataFrame or scipy.sparse matrix per view
        (modality, feature group), all with the same rows. A :class:`mlkit.datasets.Views`
        (what a ``MultiViewDataset`` gives as ``inputs``) keeps its view names.
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
    elif isinstance(views, dict) and not sp.issparse(views):
        names, mats = [str(k) for k in views], list(views.values())
    elif isinstance(views, (list, tuple)):
        mats, names = list(views), [f"view {v + 1}" for v in range(len(views))]
    else:
        raise TypeError(
            f"{name} expects the views as a list or dict of (n_samples, n_features) matrices "
            f"or a mlkit.datasets.Views, got {type(views).__name__}; for one feature matrix "
            "whose columns form the views, set the estimator's view_columns parameter")
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


def _ndim(x):
    """The number of dimensions of an array-like without converting it (nested lists: by
    their first element), so a ragged list is not an error here."""
    ndim = getattr(x, "ndim", None)
    if ndim is not None:
        return int(ndim)
    if isinstance(x, (list, tuple)):
        return 1 + (_ndim(x[0]) if len(x) else 0)
    return 0


def is_view_list(X):
    """Whether ``X`` is several views rather than one matrix: a Views, a dict, or a list or
    tuple of 2-D matrices. A list of rows (1-D sequences or numbers) is one matrix, as in
    scikit-learn; a view is always 2-D, so the two never look alike."""
    from ..datasets._containers import Views

    if sp.issparse(X):                       # a DOK matrix is a dict, yet one matrix
        return False
    if isinstance(X, (Views, dict)):
        return True
    return isinstance(X, (list, tuple)) and (len(X) == 0 or _ndim(X[0]) == 2)


def _column_indices(cols, d, feature_names, where):
    """Column indices of one view's selection (a slice, ints, or feature names)."""
    if isinstance(cols, slice):
        return np.arange(d)[cols]
    cols = [cols] if isinstance(cols, str) else list(np.ravel(np.asarray(cols, dtype=object)))
    if any(isinstance(c, str) for c in cols):
        if feature_names is None:
            raise ValueError(f"{where} names columns, but X has no column names (pass a pandas "
                             "DataFrame, or give column indices, counts or slices)")
        index = {str(f): j for j, f in enumerate(feature_names)}
        missing = [c for c in cols if str(c) not in index]
        if missing:
            raise ValueError(f"{where} names columns that X does not have: {missing[:5]}")
        return np.array([index[str(c)] for c in cols], dtype=int)
    if not all(isinstance(c, Integral) and not isinstance(c, bool) for c in cols):
        raise ValueError(f"{where} must be a column count, a slice, or a list of column "
                         f"indices or names, got {cols[:5]}")
    idx = np.asarray(cols, dtype=int)
    if idx.size and (idx.min() < 0 or idx.max() >= d):
        raise ValueError(f"{where} names columns outside 0..{d - 1}")
    return idx


def check_view_columns(X, view_columns, estimator, feature_names=None):
    """Split one feature matrix into views as ``view_columns`` declares.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Already validated (2-D, finite).
    view_columns : list, tuple or dict
        * column counts ``[d_1, d_2, ...]``: the views are consecutive blocks of d_1, d_2, ...
          columns that together are all of X's columns;
        * column selections ``[sel_1, sel_2, ...]``: each a slice, a list of column indices
          or, when X was a pandas DataFrame, of column names; every column belongs to at
          most one view and the views need not cover all columns;
        * a dict name -> count or name -> selection (the same, with view names).
    estimator : object
        The caller, named in error messages.
    feature_names : array-like of str, optional
        X's column names (a DataFrame's), for selections by name.

    Returns
    -------
    Views
        One view per entry, in the order given.
    """
    from ..datasets._containers import Views

    name = type(estimator).__name__
    d = X.shape[1]
    if isinstance(view_columns, dict):
        items = [(str(k), v) for k, v in view_columns.items()]
    else:
        items = [(f"view {v + 1}", cols) for v, cols in enumerate(view_columns)]
    if not items:
        raise ValueError(f"{name}: view_columns is empty; declare at least one view")
    counts = [isinstance(c, Integral) and not isinstance(c, bool) for _, c in items]
    if all(counts):
        sizes = np.array([int(c) for _, c in items])
        if np.any(sizes < 1) or sizes.sum() != d:
            raise ValueError(f"{name}: view_columns gives column counts {sizes.tolist()} "
                             f"(sum {int(sizes.sum())}), but X has {d} columns; the counts "
                             "must be positive and add up to X's columns")
        edges = np.concatenate([[0], np.cumsum(sizes)])
        selections = [np.arange(a, b) for a, b in zip(edges[:-1], edges[1:])]
    elif any(counts):
        raise ValueError(f"{name}: view_columns mixes column counts and column selections; "
                         "give either counts [d_1, d_2, ...] or selections (slices, index "
                         "or name lists)")
    else:
        seen = np.zeros(d, dtype=bool)
        selections = []
        for vname, cols in items:
            idx = _column_indices(cols, d, feature_names, f"{name}: view_columns[{vname!r}]")
            if idx.size == 0:
                raise ValueError(f"{name}: view_columns[{vname!r}] selects no columns")
            if seen[idx].any() or len(np.unique(idx)) != idx.size:
                raise ValueError(f"{name}: view_columns[{vname!r}] repeats a column or shares "
                                 "columns with an earlier view")
            seen[idx] = True
            selections.append(idx)
    return Views([X[:, idx] for idx in selections], [n for n, _ in items])


def check_multiview_input(X, estimator, *, view_columns=None, reset=True,
                          one_matrix="error", accept_sparse=True):
    """The views of a multi-view estimator's input, in any of the forms it accepts.

    * several views: a :class:`mlkit.datasets.Views`, a dict name -> matrix, or a list or
      tuple of (n_samples, d_v) matrices (arrays, DataFrames, sparse), see
      :func:`check_views`;
    * one matrix (ndarray, pandas DataFrame, sparse matrix, list of rows) whose columns
      form the views as the estimator's ``view_columns`` parameter declares
      (:func:`check_view_columns`). It is validated by scikit-learn's ``validate_data``, so
      ``n_features_in_`` and ``feature_names_in_`` (a DataFrame's columns) follow
      scikit-learn's rules; without ``view_columns`` it is one view if ``one_matrix`` is
      ``"one view"``, and an error naming ``view_columns`` if it is ``"error"``.

    Parameters
    ----------
    X : see above
    estimator : object
        The caller; on ``reset`` this sets its ``view_names_``, ``view_dims_`` and
        ``n_features_in_`` (the sum of the view dimensions for several views).
    view_columns : list, tuple, dict or None
        The estimator's declared split of one matrix into views.
    reset : bool, default=True
        True in ``fit``; False when predicting (the input must match what ``fit`` saw).
    one_matrix : {"error", "one view"}
    accept_sparse : bool, default=True

    Returns
    -------
    Xs : list of ndarray or CSR matrix, float
    names : list of str
    """
    name = type(estimator).__name__
    fitted_dims = None if reset else estimator.view_dims_
    if is_view_list(X):
        if view_columns is not None:
            raise ValueError(f"{name}: view_columns={view_columns!r} splits one matrix into "
                             "views, but X is already several views; pass one matrix or set "
                             "view_columns=None")
        Xs, names = check_views(X, estimator, fitted_dims=fitted_dims,
                                accept_sparse=accept_sparse)
        if reset:
            estimator.n_features_in_ = int(sum(V.shape[1] for V in Xs))
            if hasattr(estimator, "feature_names_in_"):
                del estimator.feature_names_in_
    else:
        if view_columns is None and one_matrix == "error":
            shape = getattr(X, "shape", None)
            what = f"one matrix of shape {tuple(shape)}" if shape is not None else \
                f"one {type(X).__name__}"
            raise ValueError(
                f"{name} got {what}; declare how its columns form the views with "
                f"view_columns (e.g. {name}(view_columns=[d_1, d_2]) for consecutive blocks "
                "of d_1 and d_2 columns, or a dict name -> slice), or pass the views as "
                "mlkit.datasets.Views([X_1, X_2])")
        X = validate_data(estimator, X, reset=reset, dtype=float,
                          accept_sparse="csr" if accept_sparse else False)
        if view_columns is None:
            views = [X]
        else:
            views = check_view_columns(X, view_columns, estimator,
                                       getattr(estimator, "feature_names_in_", None))
        Xs, names = check_views(views, estimator, fitted_dims=fitted_dims,
                                accept_sparse=accept_sparse)
    if reset:
        estimator.view_names_ = names
        estimator.view_dims_ = [V.shape[1] for V in Xs]
    return Xs, names
