"""Typed data containers: multi-label, multi-instance and multi-view.

Every container carries its provenance (``source``, and ``synthetic``: True for generated
"-style" data, False for a real collection), so every table and figure can say which it is.
All share the small interface the experiment runner needs: ``len(data)``, ``inputs`` (what
an estimator's ``fit`` takes as X), ``target`` (its y), ``stratify`` and ``subset(indices)``.
"""

import hashlib
from dataclasses import dataclass, field, fields, replace

import numpy as np
import scipy.sparse as sp

__all__ = ["MultiLabelDataset", "MultiInstanceDataset", "MultiViewDataset", "Views",
           "with_test_part"]


class Views:
    """Per-view feature matrices of the same n samples, indexed by rows as one object.

    ``views[rows]`` (an index array, a boolean mask or a slice) is the ``Views`` of those
    samples in every view, so scikit-learn's splitters and ``GridSearchCV`` (which index
    ``X[rows, ...]`` when ``X`` has a ``shape``) split a multi-view input exactly as a matrix.
    Each view stays as given: dense arrays stay dense, scipy.sparse matrices sparse and
    pandas DataFrames DataFrames (rows taken by position).

    This is how several views go through ``cross_val_score``, ``GridSearchCV`` or a
    ``Pipeline``: a plain list ``[X_1, X_2]`` would be split as a list of samples.

    Parameters
    ----------
    views : list of (n, d_v) arrays, DataFrames or sparse matrices
    names : list of str, optional
        One name per view (default "view 1", "view 2", ...).

    Examples
    --------
    >>> import numpy as np
    >>> v = Views([np.zeros((4, 2)), np.ones((4, 3))], names=["colour", "texture"])
    >>> v.shape, v.dims, v[[0, 2]].shape
    ((4, 5), [2, 3], (2, 5))
    """

    def __init__(self, views, names=None):
        views = list(views)
        if not views:
            raise ValueError("Views needs at least one view")
        rows = {X.shape[0] for X in views}
        if len(rows) != 1:
            raise ValueError(f"every view needs the same number of rows (samples); got "
                             f"{[X.shape[0] for X in views]}")
        self.views = views
        self.names = list(names) if names is not None else [f"view {v + 1}"
                                                            for v in range(len(views))]
        if len(self.names) != len(views):
            raise ValueError(f"{len(self.names)} view names for {len(views)} views")

    @property
    def shape(self):
        """(n_samples, total number of features over the views)."""
        return (self.views[0].shape[0], int(sum(X.shape[1] for X in self.views)))

    @property
    def dims(self):
        """The number of features of each view."""
        return [int(X.shape[1]) for X in self.views]

    def __len__(self):
        return self.views[0].shape[0]

    def __getitem__(self, rows):
        if isinstance(rows, tuple):          # X[rows, ...], as sklearn's _safe_indexing asks
            rows = rows[0]
        if isinstance(rows, (int, np.integer)):
            rows = [rows]
        if not isinstance(rows, slice):
            rows = np.asarray(rows)
            if rows.dtype == bool:
                rows = np.flatnonzero(rows)
        # a DataFrame's [] selects columns: its rows are .iloc's
        return Views([X.iloc[rows] if hasattr(X, "iloc") else X[rows] for X in self.views],
                     self.names)

    def __repr__(self):
        return f"Views(n={len(self)}, dims={dict(zip(self.names, self.dims))})"


def _hash_arrays(h, name, value):
    """Feed the arrays within ``value`` (an array, a sparse matrix, Views, or a list/tuple
    /dict of them) to the hash ``h``, each with its name, dtype and shape; other values
    (names, descriptions) are not data and are left out."""
    if isinstance(value, Views):
        value = list(value.views)
    if sp.issparse(value):
        m = value.tocsr(copy=True)          # canonical form of a copy: the data stays as is
        m.sum_duplicates()
        m.sort_indices()
        h.update(f"{name}:sparse{m.shape}".encode())
        for part in (m.data, m.indices, m.indptr):
            _hash_arrays(h, name, part)
    elif isinstance(value, np.ndarray) and value.dtype != object:
        h.update(f"{name}:{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _hash_arrays(h, f"{name}[{i}]", v)
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            _hash_arrays(h, f"{name}[{k}]", value[k])


@dataclass
class _Dataset:
    name: str
    source: str = ""
    synthetic: bool = False
    descr: str = ""
    checksums: dict = field(default_factory=dict)
    splits: dict = field(default_factory=dict)

    @property
    def provenance(self):
        """One line for captions: 'real data: <source>' or 'synthetic (-style) data: <source>'."""
        kind = "synthetic data" if self.synthetic else "real data"
        return f"{self.name} ({kind}: {self.source})" if self.source else f"{self.name} ({kind})"

    def __len__(self):
        return len(self.target)

    def fingerprint(self):
        """SHA-256 (16 hex digits) of every array the dataset holds (features, labels,
        bag offsets, views, predefined splits): what a run record was computed on, so a
        loader that starts returning other data never reuses the records made before."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            h = hashlib.sha256()
            for f in fields(self):
                _hash_arrays(h, f.name, getattr(self, f.name))
            cached = self.__dict__["_fingerprint"] = h.hexdigest()[:16]
        return cached

    @property
    def stratify(self):
        """A 1-D array to stratify splits on, or None."""
        return None


@dataclass
class MultiLabelDataset(_Dataset):
    """Examples X (n, d), dense or scipy.sparse, and a 0/1 label matrix Y (n, L)."""

    X: object = None
    Y: np.ndarray = None
    label_names: list = None
    feature_names: list = None
    feature_groups: dict = None     # group name -> slice of columns

    def __post_init__(self):
        self.Y = np.asarray(self.Y, dtype=np.int8)
        if self.Y.ndim != 2 or self.Y.shape[0] != self.X.shape[0]:
            raise ValueError(f"{self.name}: Y of shape {self.Y.shape} does not match X of shape "
                             f"{self.X.shape}")
        if self.label_names is None:
            self.label_names = [f"label {i + 1}" for i in range(self.Y.shape[1])]

    @property
    def inputs(self):
        return self.X

    @property
    def target(self):
        return self.Y

    @property
    def n_labels(self):
        return self.Y.shape[1]

    def subset(self, idx):
        return replace(self, X=self.X[idx], Y=self.Y[idx], splits={})

    def statistics(self):
        """The counts of Table 1 style summaries."""
        n, d = self.X.shape
        card = float(self.Y.sum(axis=1).mean())
        return {"examples": n, "features": d, "labels": self.n_labels,
                "cardinality": round(card, 3), "density": round(card / self.n_labels, 4)}


@dataclass
class MultiInstanceDataset(_Dataset):
    """Bags of instances: one flat instance matrix (dense or sparse) plus bag offsets.

    Bag ``b`` is ``instances[offsets[b]:offsets[b + 1]]``; per-bag aggregates over instance
    scores are ``np.add.reduceat(scores, offsets[:-1])`` with no Python loop over bags.
    """

    instances: object = None
    offsets: np.ndarray = None
    y: np.ndarray = None
    bag_ids: np.ndarray = None
    instance_labels: np.ndarray = None
    class_names: list = None

    def __post_init__(self):
        self.offsets = np.asarray(self.offsets, dtype=np.int64)
        self.y = np.asarray(self.y)
        if self.offsets[0] != 0 or self.offsets[-1] != self.instances.shape[0]:
            raise ValueError(f"{self.name}: bag offsets do not cover the instance matrix")
        if np.any(np.diff(self.offsets) <= 0):
            empty = int(np.flatnonzero(np.diff(self.offsets) <= 0)[0])
            raise ValueError(f"{self.name}: bag {empty} has 0 instances; every bag needs one")
        if len(self.y) != len(self.offsets) - 1:
            raise ValueError(f"{self.name}: {len(self.y)} labels for {len(self.offsets) - 1} bags")
        if self.bag_ids is None:
            self.bag_ids = np.arange(len(self.y))

    def statistics(self):
        n_inst, d = self.instances.shape
        out = {"bags": len(self.y), "instances": n_inst, "dimension": d}
        classes, counts = np.unique(self.y, return_counts=True)
        names = self.class_names
        out.update({f"bags of class {names[c] if names is not None else c}": int(k)
                    for c, k in zip(classes, counts)})
        if hasattr(self.instances, "nnz"):
            out["density"] = round(self.instances.nnz / max(1, n_inst * d), 5)
        return out

    @property
    def bags(self):
        """The bags as a list of (n_b, d) arrays or sparse matrices (views, no copy when dense)."""
        return [self.instances[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:])]

    @property
    def inputs(self):
        return self.bags

    @property
    def target(self):
        return self.y

    @property
    def stratify(self):
        return self.y

    def subset(self, idx):
        idx = np.asarray(idx)
        sizes = np.diff(self.offsets)[idx]
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        # the instance rows of the chosen bags, in order, without a loop over bags
        rows = np.repeat(self.offsets[idx] - starts, sizes) + np.arange(sizes.sum())
        inst_labels = None if self.instance_labels is None else self.instance_labels[rows]
        return replace(self, instances=self.instances[rows],
                       offsets=np.concatenate([[0], np.cumsum(sizes)]), y=self.y[idx],
                       bag_ids=self.bag_ids[idx], instance_labels=inst_labels, splits={})


@dataclass
class MultiViewDataset(_Dataset):
    """Several feature matrices (views) of the same n examples and one target: a class
    vector y (n,) or a 0/1 label matrix Y (n, L)."""

    views: list = None
    view_names: list = None
    y: np.ndarray = None
    class_names: list = None

    def __post_init__(self):
        self.y = np.asarray(self.y)
        n = len(self.y)
        for v, X in enumerate(self.views):
            if X.shape[0] != n:
                raise ValueError(f"{self.name}: view {v} has {X.shape[0]} rows, the target {n}")
        if self.view_names is None:
            self.view_names = [f"view {v + 1}" for v in range(len(self.views))]

    def statistics(self):
        out = {"examples": len(self.y), "views": len(self.views),
               "view dimensions": [X.shape[1] for X in self.views]}
        if self.y.ndim == 1:
            out["classes"] = int(len(np.unique(self.y)))
        else:
            out["labels"] = int(self.y.shape[1])
        return out

    @property
    def inputs(self):
        """The views as one row-indexable :class:`Views` (what multi-view ``fit`` takes)."""
        return Views(self.views, self.view_names)

    @property
    def target(self):
        return self.y

    @property
    def stratify(self):
        return self.y if self.y.ndim == 1 else None

    def subset(self, idx):
        return replace(self, views=[X[idx] for X in self.views], y=self.y[idx],
                       splits={})


def _stack(a, b):
    return sp.vstack([a, b], format="csr") if sp.issparse(a) or sp.issparse(b) \
        else np.concatenate([a, b], axis=0)


def with_test_part(train, test):
    """One dataset holding ``train`` then ``test``, whose ``splits`` are that predefined
    split (a user's ``{path: ..., test_path: ...}``)."""
    if type(train) is not type(test):
        raise ValueError(f"the test part is a {type(test).__name__}, the training part a "
                         f"{type(train).__name__}")
    n_train, n_test = len(train), len(test)
    if isinstance(train, MultiLabelDataset):
        if train.Y.shape[1] != test.Y.shape[1] or train.X.shape[1] != test.X.shape[1]:
            raise ValueError(f"the test part has {test.X.shape[1]} features and "
                             f"{test.Y.shape[1]} labels, the training part "
                             f"{train.X.shape[1]} and {train.Y.shape[1]}")
        both = replace(train, X=_stack(train.X, test.X), Y=np.vstack([train.Y, test.Y]))
    elif isinstance(train, MultiInstanceDataset):
        if train.instances.shape[1] != test.instances.shape[1]:
            raise ValueError(f"the test part's instances have {test.instances.shape[1]} "
                             f"features, the training part's {train.instances.shape[1]}")
        both = replace(train, instances=_stack(train.instances, test.instances),
                       offsets=np.concatenate([train.offsets,
                                               train.offsets[-1] + test.offsets[1:]]),
                       y=np.concatenate([train.y, test.y]),
                       bag_ids=np.concatenate([np.asarray(train.bag_ids, dtype=object),
                                               np.asarray(test.bag_ids, dtype=object)]),
                       instance_labels=None)
    else:
        if [X.shape[1] for X in train.views] != [X.shape[1] for X in test.views]:
            raise ValueError("the test part's views have other dimensions than the training "
                             "part's")
        both = replace(train, views=[_stack(a, b) for a, b in zip(train.views, test.views)],
                       y=np.concatenate([train.y, test.y], axis=0))
    both.splits = {"train": np.arange(n_train), "test": np.arange(n_train, n_train + n_test)}
    both.source = f"{train.source} (test part: {test.source})" if test.source else train.source
    return both
